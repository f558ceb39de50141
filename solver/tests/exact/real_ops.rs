//! Real operator ranges cut from the zoo: MILP = SMT, simulator = objective, heuristics ≥
//! optimum.

use crate::solve_exact;
use elk_model::build::{build_instance, InstanceOptions, OpRange};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::zoo;
use elk_solver::{Backend, ExactOptions};
use elk_stage::instance::{LoadOrder, NamedOrder};
use elk_stage::method::Verdict;

#[test]
fn milp_and_smt_agree_on_real_operator_ranges() {
    let chip = ChipSpec::load("ipu-pod4").unwrap();
    let mut params = zoo::ZooParams::new(Mode::Decode, 32, 2048);
    params.layers = Some(1);
    let graph = zoo::build("llama2-13b", &params).unwrap();
    for (range, order) in [
        (0..6, NamedOrder::Fixed),
        (5..11, NamedOrder::Free),
        (24..30, NamedOrder::Free),
    ] {
        let opts = InstanceOptions {
            range: OpRange::Ops(range.clone()),
            load_order: LoadOrder::Named(order),
            ..InstanceOptions::default()
        };
        let inst = build_instance(&graph, &chip, &opts).unwrap();
        let solve = |backend| {
            solve_exact(
                &inst,
                &ExactOptions {
                    backend,
                    ..ExactOptions::default()
                },
            )
            .unwrap()
        };
        let (milp, smt) = (solve(Backend::Milp), solve(Backend::Smt));
        assert_eq!(milp.status, Verdict::Optimal, "{range:?}");
        assert_eq!(smt.status, Verdict::Optimal, "{range:?}");
        let (a, b) = (milp.makespan_cycles.unwrap(), smt.makespan_cycles.unwrap());
        assert!((a - b).abs() <= a * 1e-6, "{range:?}: MILP {a} vs SMT {b}");
        let obj = milp.objective_cycles.unwrap();
        assert!(
            (a - obj).abs() <= a * 1e-6,
            "{range:?}: simulator {a} vs MILP objective {obj}"
        );
    }
}
