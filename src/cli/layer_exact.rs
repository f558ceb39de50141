//! `compare --layer-exact SECONDS`, the main job's second section: one layer cut from the
//! same model (as `--layers 0..1` cuts it: layer 0, embeddings and head left out), solved
//! exactly by the MILP within SECONDS, and every heuristic's gap there to the proven
//! optimum, or to the best proven bound when the time limit stops the solve. It is
//! `gap --layers 0..1 --time-limit SECONDS` on the instance the whole model's run already
//! has, without planning the layer again.

use super::exact::{gap_report, print_gap, ExactFlags, GapReport};
use super::instance_source::Loaded;
use elk_model::build::{cut_instance, OpRange};
use elk_stage::instance::Instance;
use serde::Serialize;

/// The layer cut: layer 0 is the first transformer layer (the zoo's and the importer's
/// layer structure puts the embeddings in a prologue before it).
const LAYER: usize = 0;

/// The layer section as `--json` prints it.
#[derive(Serialize)]
pub(super) struct LayerSection {
    /// The layer cut (`--layers 0..1`).
    layer: usize,
    operators: usize,
    time_limit_s: f64,
    /// The exact solve's status in words.
    status: String,
    /// The proven optimum, or the best proven lower bound when `gap.reference` says so.
    reference_ms: f64,
    /// Wall-clock seconds of the exact solve (`null` with `--no-timings`).
    solve_s: Option<f64>,
    /// What `gap --layers 0..1 --time-limit SECONDS --json` prints for this layer.
    gap: GapReport,
}

/// Cuts the layer out of `loaded` (a whole model built from its graph), solves it and
/// returns the layer's instance with the section.
pub(super) fn solve(
    loaded: &Loaded,
    seconds: f64,
    no_timings: bool,
) -> anyhow::Result<(Instance, LayerSection)> {
    let Some(graph) = &loaded.graph else {
        return super::flags::Usage::err(
            "--layer-exact cuts a layer from the model's graph: give --model, --import or \
             --onnx, not --instance (or run `gap` on a cut instance)",
        );
    };
    let layer = cut_instance(&loaded.instance, graph, &OpRange::Layers(LAYER..LAYER + 1))?;
    let gap = gap_report(&layer, &ExactFlags::milp_within(seconds), no_timings)?;
    let section = LayerSection {
        layer: LAYER,
        operators: layer.ops.len(),
        time_limit_s: seconds,
        status: gap.status(),
        reference_ms: layer.ms(gap.reference_cycles()),
        solve_s: gap.solve_s(),
        gap,
    };
    Ok((layer, section))
}

/// Prints the section after the whole-model table.
pub(super) fn print(layer: &Instance, s: &LayerSection) {
    let proven = s.gap.reference_is_optimum();
    println!();
    println!(
        "one layer of the same model, {} (as `elk-opt gap --layers {LAYER}..{} --time-limit {}`): {}, {} operators",
        if proven {
            "solved exactly"
        } else {
            "not proven within the time limit"
        },
        LAYER + 1,
        s.time_limit_s,
        layer.name,
        s.operators
    );
    println!(
        "exact MILP (1 HiGHS thread, limit {} s{}): {}{}",
        s.time_limit_s,
        s.gap
            .warm_start()
            .map_or(String::new(), |w| format!(", warm start {w}")),
        s.status,
        s.solve_s.map_or(String::new(), |t| format!(", {t:.1} s"))
    );
    if !proven {
        println!(
            "a look within {} s, not a proof: the gaps below are certified upper bounds (against the layer's lower bound), not distances to its optimum; more seconds (`--layer-exact S`, or `gap --layers {LAYER}..{} --time-limit S`) give HiGHS the time to prove it: the main job's layer is proven optimal in 20–35 s with S = 60 on 2 cores (docs/exact.md)",
            s.time_limit_s,
            LAYER + 1,
        );
    }
    print_gap(layer, &s.gap, "--layer-exact");
}
