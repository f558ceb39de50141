//! Loads released at run time (operators' own preload windows, as MoE load policies make
//! them) through every method the solver adds to the heuristics: on random instances of the
//! shared corpus with released loads, the judge accepts the re-timed variant of every
//! heuristic, the queue re-timing and window search from each heuristic's schedule, and the
//! exact solve warm-started from the best heuristic — the route `solve --exact` takes, which
//! the greedy Elk-Dyn's early loads broke (issue 45). A fixed list of seeds checks that the
//! corpus does release loads that the methods then schedule, so the property is not vacuous.

use crate::solve_exact;
use elk_heuristics::{by_name, NAMES, VARIANTS};
use elk_solver::lns::{improve_from_starts, LnsOptions};
use elk_solver::{requeue, ExactOptions, Retimed};
use elk_stage::corpus::{released_instance, Orders, RandomSpec};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Verdict};
use elk_stage::schedule::Schedule;
use proptest::prelude::*;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

/// 3–7 operators, up to 3 options, tight SRAM, every load-order policy, instance windows too:
/// small enough for the exact solve to finish.
fn spec() -> RandomSpec {
    RandomSpec {
        ops: (3, 7),
        max_options: 3,
        sram_slack: (0, 70),
        orders: Orders::Drawn,
        window: true,
    }
}

/// `s`'s makespan by the judge, or the violation it finds, naming `what`.
fn judged(inst: &Instance, s: &Schedule, what: &str) -> Result<(), TestCaseError> {
    elk_sim::judged_makespan(inst, s)
        .map(|_| ())
        .map_err(|v| TestCaseError::fail(format!("{what} on {}: {v}", inst.name)))
}

/// Runs every solver method on `inst` and checks each schedule with the judge; returns how
/// many heuristic schedules were there to start from.
fn all_methods_valid(inst: &Instance) -> Result<usize, TestCaseError> {
    let budget = Budget {
        time_limit: Some(LIMIT),
    };
    let mut starts = 0;
    for name in NAMES.iter().chain(&VARIANTS) {
        let heuristic = by_name(name).expect("registered");
        let retimed = Retimed::new(by_name(name).expect("registered")).without_timings();
        let run = elk_sim::run_judged(inst, &retimed, &budget)
            .map_err(|e| TestCaseError::fail(format!("{} on {}: {e}", inst.name, name)))?;
        let Some(s) = elk_sim::run_judged(inst, heuristic.as_ref(), &budget)
            .map_err(|e| TestCaseError::fail(format!("{name} on {}: {e}", inst.name)))?
            .solved
            .outcome
            .schedule()
            .cloned()
        else {
            prop_assert!(run.solved.outcome.schedule().is_none());
            continue;
        };
        starts += 1;
        let q = requeue(inst, &s, "queue", 3, LIMIT)
            .map_err(|e| TestCaseError::fail(format!("queue from {name} on {}: {e}", inst.name)))?;
        prop_assert!(
            q.rejected.is_empty(),
            "queue from {name} on {}: {:?}",
            inst.name,
            q.rejected
        );
        judged(inst, &q.schedule, &format!("queue re-timing from {name}"))?;
        for (seed, _) in &q.seeds {
            judged(inst, seed, &format!("a queue seed from {name}"))?;
        }
        let opts = LnsOptions {
            time_limit: LIMIT,
            ..LnsOptions::default()
        };
        let lns = improve_from_starts(inst, &s, None, &opts, &|_| {}).map_err(|e| {
            TestCaseError::fail(format!("window search from {name} on {}: {e}", inst.name))
        })?;
        let summary = &lns.summary;
        prop_assert!(
            summary.rejected.is_empty(),
            "window search from {name} on {}: {:?}",
            inst.name,
            summary.rejected
        );
        judged(inst, &lns.schedule, &format!("window search from {name}"))?;
    }
    let warm = elk_heuristics::best(inst)
        .map_err(|e| TestCaseError::fail(format!("warm start on {}: {e}", inst.name)))?
        .map(|(s, _)| s);
    let exact = solve_exact(
        inst,
        &ExactOptions {
            warm_start: warm,
            time_limit: Some(LIMIT),
            ..ExactOptions::default()
        },
    )
    .map_err(|e| TestCaseError::fail(format!("warm-started exact on {}: {e}", inst.name)))?;
    if let Some(s) = &exact.schedule {
        judged(inst, s, "the warm-started exact solve")?;
    } else {
        prop_assert!(exact.status != Verdict::Optimal, "{}", inst.name);
    }
    Ok(starts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn every_solver_method_obeys_released_loads(seed in any::<u64>()) {
        all_methods_valid(&released_instance(seed, &spec()))?;
    }
}

#[test]
fn the_released_corpus_gives_the_solver_methods_schedules_to_work_on() {
    let (mut released, mut starts) = (0, 0);
    for seed in 0..8 {
        let inst = released_instance(seed, &spec());
        released += inst
            .ops
            .iter()
            .filter(|op| op.preload_window.is_some())
            .count();
        starts += all_methods_valid(&inst).unwrap();
    }
    eprintln!("{released} released loads, {starts} heuristic schedules over 8 instances");
    assert!(released >= 8, "{released}");
    assert!(starts >= 8 * 8 / 2, "{starts}");
}
