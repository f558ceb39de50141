//! Properties on random instances: schedules from the fill helper always validate (when
//! memory allows), the makespan respects both roofline bounds, and evaluation does not depend
//! on the order of the load-work entries.

use elk_sim::{evaluate, validate};
use elk_stage::corpus::{strategy, Orders, RandomSpec};
use elk_stage::schedule::{fill_load_work, Schedule};
use elk_stage::units::{Cycles, Stage};
use proptest::prelude::*;

/// The shared corpus with 1–6 operators, up to 3 options, every load-order policy and
/// preload windows, and SRAM so ample that memory never binds here (a stage holds at most
/// 6 cold footprints of < 40 B and a hot one of < 100 B).
fn spec() -> RandomSpec {
    RandomSpec {
        ops: (1, 6),
        max_options: 3,
        sram_slack: (10_000, 10_000),
        orders: Orders::Drawn,
        window: true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn filled_schedules_validate_and_respect_the_bounds(inst in strategy(spec()), picks in prop::collection::vec(0usize..4, 7), starts in prop::collection::vec(0usize..7, 7), seed in 0u64..1000) {
        let n = inst.ops.len();
        let options: Vec<usize> = (0..n).map(|i| picks[i] % inst.ops[i].options.len()).collect();
        // Loads in execution order (allowed by every policy), each asked to start no later
        // than the stage before its operator runs.
        let loads = inst.loads();
        let start: Vec<Stage> = loads.iter().enumerate().map(|(p, &j)| Stage(starts[p] % Stage::of_op(j).index())).collect();
        let work = fill_load_work(&inst, &options, &loads, &start).unwrap();
        let s = Schedule::new(&inst, "fill", options, loads, work, Cycles::ZERO);
        prop_assert_eq!(validate(&inst, &s), vec![]);
        let e = evaluate(&inst, &s);
        let sum_h: Cycles = inst.ops.iter().map(|o| o.hbm_cycles).sum();
        let sum_min_exec: Cycles = inst.ops.iter().map(|o| o.options.iter().map(|x| x.exec_cycles).fold(Cycles(f64::INFINITY), Cycles::min)).sum();
        prop_assert!(e.makespan_cycles >= sum_h * (1.0 - 1e-12));
        prop_assert!(e.makespan_cycles >= sum_min_exec * (1.0 - 1e-12));
        let parts = e.breakdown.execute_only + e.breakdown.preload_only + e.breakdown.overlapped + e.breakdown.noc_bound;
        prop_assert!((parts - e.makespan_cycles).abs() <= e.makespan_cycles.max(Cycles(1.0)) * 1e-9);
        // Shuffle the load work (deterministically from the seed): evaluation is identical.
        let mut shuffled = s.clone();
        let len = shuffled.load_work.len();
        for i in 0..len {
            let j = ((seed as usize).wrapping_mul(31).wrapping_add(i * 17)) % len;
            shuffled.load_work.swap(i, j);
        }
        prop_assert_eq!(evaluate(&inst, &shuffled), e);
    }
}
