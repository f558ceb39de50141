//! The window search (`elk_solver::lns`) on layered random chains with proven optima: every
//! schedule it returns is valid, its makespan is the simulator's, it is never worse than its
//! input and never better than the optimum; it improves the weakest heuristic on most chains
//! and reaches the optimum on some, so a search that returned its input would fail.

use super::segments::{layered, optimum};
use elk_solver::lns::{improve, LnsOptions};
use elk_stage::instance::Instance;
use elk_stage::method::Budget;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use std::time::Duration;

/// The search's result from `input`, checked: nothing rejected, no window objective off the
/// simulator, a valid schedule whose makespan is the one reported.
fn search(inst: &Instance, input: &Schedule, window_ops: Option<usize>) -> Cycles {
    let name = &inst.name;
    let opts = LnsOptions {
        window_ops,
        time_limit: Duration::from_secs(30),
        ..LnsOptions::default()
    };
    let r = improve(inst, input, &opts, &|_| {}).unwrap();
    let s = &r.summary;
    assert!(s.rejected.is_empty(), "{name}: {:?}", s.rejected);
    assert!(s.disagreements.is_empty(), "{name}: {:?}", s.disagreements);
    let t = elk_sim::judged_makespan(inst, &r.schedule)
        .unwrap_or_else(|v| panic!("{name}: the search returned an invalid schedule: {v}"));
    assert_eq!(
        t, s.makespan_cycles,
        "{name}: reported vs simulated makespan"
    );
    assert_eq!(
        s.input_cycles,
        elk_sim::judged_makespan(inst, input).unwrap(),
        "{name}"
    );
    t
}

/// A chain with its proven optimum and Basic's schedule (None: infeasible, or Basic fails).
fn with_input(inst: Instance) -> Option<(Instance, Cycles, Schedule)> {
    let opt = optimum(&inst)?;
    let basic = elk_heuristics::by_name("basic").unwrap();
    let solved = basic.schedule(&inst, &Budget::default()).unwrap();
    let input = solved.outcome.schedule()?.clone();
    Some((inst, opt, input))
}

#[test]
fn window_search_results_are_valid_and_between_the_input_and_the_optimum() {
    let (mut checked, mut improved, mut optimal) = (0, 0, 0);
    for seed in 0..40 {
        let Some((inst, opt, input)) = with_input(layered(seed)) else {
            continue;
        };
        let (name, input) = (&inst.name, &input);
        checked += 1;
        let input_t = elk_sim::judged_makespan(&inst, input).unwrap();
        for window_ops in [None, Some(2)] {
            let t = search(&inst, input, window_ops);
            assert!(t <= input_t, "{name}: {t} worse than the input {input_t}");
            assert!(
                t.get() >= opt.get() * (1.0 - 1e-9),
                "{name}: {t} below the proven optimum {opt}"
            );
            if window_ops.is_none() {
                improved += usize::from(t.get() < input_t.get() * (1.0 - 1e-9));
                optimal += usize::from(t.get() <= opt.get() * (1.0 + 1e-9));
            }
        }
    }
    assert!(checked >= 30, "only {checked} chains checked");
    assert!(
        improved * 2 >= checked,
        "improved only {improved} of {checked}"
    );
    assert!(optimal >= 1, "reached no optimum in {checked}");
    eprintln!("window search: {checked} chains, {improved} improved, {optimal} optimal");
}

#[test]
fn the_window_models_encode_the_phased_row() {
    // The same chains with `"noc_row": "phased"`: the window MILPs' objectives must agree with
    // the (phased) simulator — a window model with SPEC §4's rows would claim less than the
    // simulator gives and show up in `disagreements` — and stay between input and optimum.
    let (mut checked, mut improved) = (0, 0);
    for seed in 0..16 {
        let phased = Instance {
            noc_row: elk_stage::instance::NocRow::Phased,
            ..layered(seed)
        };
        let Some((inst, opt, input)) = with_input(phased) else {
            continue;
        };
        let (name, input) = (&inst.name, &input);
        checked += 1;
        let input_t = elk_sim::judged_makespan(&inst, input).unwrap();
        let t = search(&inst, input, None);
        assert!(
            t <= input_t && t.get() >= opt.get() * (1.0 - 1e-9),
            "{name}: {t}, input {input_t}, optimum {opt}"
        );
        improved += usize::from(t.get() < input_t.get() * (1.0 - 1e-9));
    }
    assert!(checked >= 10, "only {checked} chains checked");
    assert!(
        improved * 2 >= checked,
        "improved only {improved} of {checked}"
    );
    eprintln!("window search, phased row: {checked} chains, {improved} improved");
}
