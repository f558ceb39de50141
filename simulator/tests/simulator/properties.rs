//! Properties on random instances: schedules from the fill helper always validate (when
//! memory allows), the makespan respects both roofline bounds, and evaluation does not depend
//! on the order of the load-work entries.

use elk_model::instance::{Instance, InstanceOp, LoadOrder, NamedOrder, OpOption};
use elk_model::schedule::{fill_load_work, Schedule, Status};
use elk_sim::{evaluate, validate};
use proptest::prelude::*;

fn option() -> impl Strategy<Value = OpOption> {
    (1u64..50, 0u64..50, 1.0f64..500.0, 0.0f64..1.0, 0.0f64..2.0).prop_map(
        |(cold, extra, exec, comm_frac, nu)| OpOption {
            cold,
            hot: cold + extra,
            exec_cycles: exec,
            comm_cycles: exec * comm_frac,
            noc_per_hbm: nu,
        },
    )
}

fn instance() -> impl Strategy<Value = Instance> {
    prop::collection::vec(
        (
            prop::option::of(1.0f64..400.0),
            prop::collection::vec(option(), 1..4),
        ),
        1..7,
    )
    .prop_map(|ops| Instance {
        format: "elk-instance/1".into(),
        name: "random".into(),
        sram_bytes: 10_000, // ample: memory never binds here
        clock_hz: 1e9,
        load_order: LoadOrder::Named(NamedOrder::Fixed),
        preload_window: None,
        ops: ops
            .into_iter()
            .enumerate()
            .map(|(i, (h, options))| InstanceOp {
                name: format!("op{i}"),
                hbm_cycles: h.unwrap_or(0.0),
                options,
                flops: None,
            })
            .collect(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn filled_schedules_validate_and_respect_the_bounds(inst in instance(), picks in prop::collection::vec(0usize..4, 7), starts in prop::collection::vec(0usize..7, 7), seed in 0u64..1000) {
        let n = inst.ops.len();
        let options: Vec<usize> = (0..n).map(|i| picks[i] % inst.ops[i].options.len()).collect();
        let loads = inst.loads();
        let start: Vec<usize> = loads.iter().enumerate().map(|(p, &j)| starts[p] % (j + 1)).collect();
        let work = fill_load_work(&inst, &options, &loads, &start).unwrap();
        let s = Schedule { format: "elk-schedule/1".into(), instance: "random".into(), method: "fill".into(), options, load_order: loads, load_work: work, makespan_cycles: 0.0, status: Status::Heuristic, lower_bound_cycles: None };
        prop_assert_eq!(validate(&inst, &s), vec![]);
        let e = evaluate(&inst, &s);
        let sum_h: f64 = inst.ops.iter().map(|o| o.hbm_cycles).sum();
        let sum_min_exec: f64 = inst.ops.iter().map(|o| o.options.iter().map(|x| x.exec_cycles).fold(f64::INFINITY, f64::min)).sum();
        prop_assert!(e.makespan_cycles >= sum_h * (1.0 - 1e-12));
        prop_assert!(e.makespan_cycles >= sum_min_exec * (1.0 - 1e-12));
        let parts = e.breakdown.execute_only + e.breakdown.preload_only + e.breakdown.overlapped + e.breakdown.noc_bound;
        prop_assert!((parts - e.makespan_cycles).abs() <= 1e-9 * e.makespan_cycles.max(1.0));
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
