//! Parallel sets (docs/core-groups.md) are operators like any other to the exact models and
//! the bounds: on real sets cut from Mixtral-8x7B, MILP = SMT = brute force, every bound lies
//! below the optimum and no heuristic beats it.

use super::cross_check::check;
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::zoo;
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};

#[test]
fn sets_cut_from_a_moe_layer_are_solved_exactly_and_bounded() {
    let chip = ChipSpec::load("ipu-pod4").unwrap();
    let mut params = zoo::ZooParams::new(Mode::Decode, 1, 2048);
    params.layers = Some(1);
    let graph = zoo::build("mixtral-8x7b", &params).unwrap();
    let opts = InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        parallel: true,
        ..InstanceOptions::default()
    };
    let whole = build_instance(&graph, &chip, &opts).unwrap();
    let sets: Vec<usize> = (0..whole.ops.len())
        .filter(|&j| whole.ops[j].parallel.is_some())
        .collect();
    assert_eq!(sets.len(), 2, "the Q/K/V set and the experts' set");
    // Four operators each: the set with the three after it (the brute force's limit).
    let mut checked = 0;
    for &k in &sets {
        let inst = Instance {
            name: format!("{}, ops {k}..{}", whole.name, k + 4),
            ops: whole.ops[k..(k + 4).min(whole.ops.len())].to_vec(),
            ..whole.clone()
        };
        assert!(
            inst.ops[0].options.len() > 1,
            "the set has allocations to choose"
        );
        if check(&inst, true).is_some() {
            checked += 1;
        }
    }
    assert_eq!(checked, 2, "both cuts have an optimum");
}
