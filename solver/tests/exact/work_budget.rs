//! Under a work budget (`--work-limit`) a report says whether the time stopped it first:
//! only then is it not reproducible.

use crate::solve_exact;
use elk_solver::ExactOptions;
use elk_stage::corpus::{random_instance, RandomSpec};
use elk_stage::method::Verdict;
use std::time::Duration;

#[test]
fn an_instance_proven_infeasible_under_a_budget_is_not_cut_by_time() {
    // Seed 11 of the gap study's random instances has no schedule: its LP relaxation is
    // infeasible too. That is a fact of the instance, not a time limit, so the result is
    // reproducible (it was once reported as cut by time, and the study marked it so).
    let inst = random_instance(11, &RandomSpec::study());
    let r = solve_exact(
        &inst,
        &ExactOptions {
            lp_bound: true,
            work_limit: Some(100),
            time_limit: Some(Duration::from_secs(60)),
            ..ExactOptions::default()
        },
    )
    .unwrap();
    assert_eq!(r.status, Verdict::Infeasible, "{:?}", r.notes);
    let work = r.work.unwrap();
    assert!(!work.cut_by_time, "{work:?} {:?}", r.notes);
    assert!(
        r.notes
            .iter()
            .all(|n| !n.text.contains("not solved within its time share")),
        "{:?}",
        r.notes
    );
}
