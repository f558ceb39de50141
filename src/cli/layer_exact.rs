//! `compare --layer-exact SECONDS`, the main job's second section: one layer cut from the
//! same model (as `--layers 0..1` cuts it: layer 0, embeddings and head left out), solved
//! exactly by the MILP within SECONDS, and every heuristic's gap there to the proven
//! optimum, or to the best proven bound when the time limit stops the solve. It is
//! `gap --layers 0..1 --time-limit SECONDS` on the instance the whole model's run already
//! has, without planning the layer again. [`elk_app::compare::run`] computes the section, for
//! the CLI and Python's `compare(layer_exact=…)` alike; this file prints it. With
//! `--expert-parallel` it is the union of the layer with and without parallel sets, as
//! `gap --expert-parallel` takes it.

use super::exact::print_gap;
use elk_app::gap::{LayerSection, LAYER};
use elk_solver::WholeModelBound;
use elk_stage::instance::Instance;

/// Prints the section after the whole-model table (whose rows are `whole`), and why the two
/// name different best heuristics when they do.
pub(super) fn print(layer: &Instance, s: &LayerSection, whole: &[elk_app::compare::Row]) {
    let proven = s.gap.reference_is_optimum();
    let budget = s
        .work_limit
        .map_or(String::new(), |n| format!(" --work-limit {n}"));
    println!();
    println!(
        "one layer of the same model, {} (as `elk-opt gap --layers {LAYER}..{} --time-limit {}{budget}`): {}, {} operators",
        if proven {
            "solved exactly"
        } else if s.work_limit.is_some() {
            "not proven within the limits"
        } else {
            "not proven within the time limit"
        },
        LAYER + 1,
        s.time_limit_s,
        layer.name,
        s.operators
    );
    println!(
        "exact solve (MILP, 1 HiGHS thread, limit {} s{}{}): {}{}",
        s.time_limit_s,
        s.work_limit.map_or(String::new(), |n| format!(
            ", at most {n} branch-and-bound node{}",
            if n == 1 { "" } else { "s" }
        )),
        s.gap
            .exact
            .warm_start
            .as_deref()
            .map_or(String::new(), |w| format!(", warm start {w}")),
        s.status,
        s.solve_s.map_or(String::new(), |t| format!(", {t:.1} s"))
    );
    if !proven {
        println!(
            "not a proof: the gaps below are certified upper bounds (against the layer's lower bound), not distances to its optimum; more seconds (`--layer-exact S`, or `gap --layers {LAYER}..{} --time-limit S`) or a larger `--work-limit` give HiGHS the time to prove it (docs/exact.md)",
            LAYER + 1,
        );
    }
    // The layer's solve has `milp_within`'s settings: the segment LP (nothing to cut here).
    print_gap(layer, &s.gap, "--layer-exact", WholeModelBound::Lp);
    if let Some(u) = &s.gap.union {
        let limit = format!("--layer-exact {}", s.time_limit_s);
        super::exact::print_union(layer, u, &limit, false);
    }
    if let Some(why) = elk_app::layer_ranking::note(whole, &s.gap.rows) {
        println!("{why}");
    }
}
