//! On random instances with binding SRAM, every schedule a method returns validates, and
//! every makespan is at least the roofline bounds.

use elk_heuristics::{Basic, ElkDyn, ElkFull, StaticSplit};
use elk_model::instance::{Instance, InstanceOp, LoadOrder, NamedOrder, OpOption};
use elk_model::method::{Budget, Method};
use proptest::prelude::*;

fn instance() -> impl Strategy<Value = Instance> {
    let option = (
        1u64..30_000,
        0u64..40_000,
        10.0f64..5_000.0,
        0.0f64..1.0,
        0.0f64..2.0,
    )
        .prop_map(|(cold, extra, exec, frac, nu)| OpOption {
            cold,
            hot: cold + extra,
            exec_cycles: exec,
            comm_cycles: exec * frac,
            noc_per_hbm: nu,
        });
    let op = (
        prop::option::of(1.0f64..5_000.0),
        prop::collection::vec(option, 1..5),
    );
    (prop::collection::vec(op, 1..10), 40_000u64..120_000).prop_map(|(ops, sram)| Instance {
        format: "elk-instance/1".into(),
        name: "random".into(),
        sram_bytes: sram,
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
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn schedules_validate(inst in instance()) {
        let sum_h: f64 = inst.ops.iter().map(|o| o.hbm_cycles).sum();
        let full = ElkFull::default();
        for m in [&Basic as &dyn Method, &StaticSplit, &ElkDyn, &full] {
            let solved = m.schedule(&inst, &Budget::default()).unwrap();
            if let Some(s) = solved.outcome.schedule() {
                prop_assert_eq!(elk_sim::validate(&inst, s), vec![], "{}", m.name());
                prop_assert!(s.makespan_cycles >= sum_h * (1.0 - 1e-12));
            }
        }
    }
}
