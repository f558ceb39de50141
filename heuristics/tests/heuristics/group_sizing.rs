//! Issue 46: every heuristic sizes a parallel set's groups by work; `elk-full-groups`
//! searches them (docs/core-groups.md §CG-2.6).

use elk_heuristics::{all_names, by_name, runs_on, sizing, NAMES, VARIANTS};
use elk_stage::corpus::{one_set, random_instance, RandomSpec};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method};
use elk_stage::units::Cycles;

/// The groups `m` runs the set on, and its makespan (judged).
fn picks(inst: &Instance, m: &dyn Method) -> (Vec<u64>, Cycles) {
    let (s, t) = elk_heuristics::judged(inst, m)
        .unwrap()
        .unwrap_or_else(|| panic!("{} found no schedule", m.name()));
    (inst.ops[1].options[s.options[1]].groups.clone().unwrap(), t)
}

#[test]
fn every_heuristic_sizes_groups_by_work_and_the_named_variant_searches() {
    let inst = one_set(vec![vec![1, 3], vec![1, 1]]);
    for name in NAMES.iter().chain(&VARIANTS) {
        let m = by_name(name).unwrap();
        // The faster of the by-work options, mapped back to the instance's option index.
        assert_eq!(picks(&inst, m.as_ref()).0, [1, 3], "{name}");
    }
    let (full, t_full) = picks(&inst, by_name("elk-full").unwrap().as_ref());
    let (search, t_search) = picks(&inst, by_name("elk-full-groups").unwrap().as_ref());
    assert_eq!((full, search), (vec![1, 3], vec![2, 2]));
    assert!(t_search < t_full, "{t_search} vs {t_full}");
    // A set whose file names no by-work allocation (written before them): every option is a
    // choice, for Elk too.
    let old = one_set(Vec::new());
    assert_eq!(picks(&old, by_name("elk-full").unwrap().as_ref()).0, [2, 2]);
}

#[test]
fn the_instance_elk_sees_keeps_the_by_work_options_and_their_indices() {
    let inst = one_set(vec![vec![1, 1]]);
    let (view, kept) = sizing::by_work_instance(&inst).unwrap();
    assert_eq!(kept, [vec![0], vec![2], vec![0]]);
    assert_eq!(*view.ops[1].options, [inst.ops[1].options[2].clone()]);
    assert_eq!(view.ops[0], inst.ops[0]);
    // Nothing to restrict: every option by work, or an instance without sets.
    assert!(sizing::by_work_instance(&one_set(vec![vec![2, 2], vec![1, 3], vec![1, 1]])).is_none());
    let plain = random_instance(3, &RandomSpec::tiny(6, 3));
    assert!(sizing::by_work_instance(&plain).is_none());
}

#[test]
fn without_sets_the_searching_variant_is_elk_full_and_is_not_listed() {
    for seed in 0..4 {
        let inst = random_instance(seed, &RandomSpec::tiny(8, 3));
        let run = |name: &str| {
            by_name(name)
                .unwrap()
                .schedule(&inst, &Budget::default())
                .unwrap()
                .outcome
                .schedule()
                .cloned()
        };
        let (full, search) = (run("elk-full"), run("elk-full-groups"));
        match (full, search) {
            (Some(a), Some(mut b)) => {
                b.method = a.method.clone();
                assert_eq!(a, b, "seed {seed}");
            }
            (a, b) => assert_eq!(a.is_none(), b.is_none(), "seed {seed}"),
        }
        assert!(!runs_on("elk-full-groups", &inst));
        assert!(all_names()
            .filter(|n| *n != "elk-full-groups")
            .all(|n| runs_on(n, &inst)));
    }
    assert!(runs_on("elk-full-groups", &one_set(vec![vec![1, 3]])));
}
