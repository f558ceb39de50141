//! A warm start changes how fast the MILP proves its optimum, never which optimum it reports.
//! HiGHS 1.16 can return its starting solution while reporting the true optimum's objective
//! (layered seed 25 below: "optimal" 851.75 from Basic's start, a lower bound above the true
//! optimum 777.75); `milp::run_milp` detects it and solves again without the start.

use super::segments::layered;
use crate::solve_exact;
use elk_solver::{ExactOptions, NoteAbout};
use elk_stage::method::Budget;
use elk_stage::method::Verdict;

#[test]
fn a_warm_started_milp_reports_the_same_optimum_as_a_cold_one() {
    let mut checked = 0;
    for seed in 0..40 {
        let inst = layered(seed);
        let name = &inst.name;
        let basic = elk_heuristics::by_name("basic").unwrap();
        let solved = basic.schedule(&inst, &Budget::default()).unwrap();
        let Some(start) = solved.outcome.schedule().cloned() else {
            continue;
        };
        let cold = solve_exact(&inst, &ExactOptions::default()).unwrap();
        let warm = solve_exact(
            &inst,
            &ExactOptions {
                warm_start: Some(start),
                ..ExactOptions::default()
            },
        )
        .unwrap();
        assert_eq!(cold.status, Verdict::Optimal, "{name}");
        assert_eq!(warm.status, Verdict::Optimal, "{name}: {:?}", warm.notes);
        let (c, w) = (cold.makespan_cycles.unwrap(), warm.makespan_cycles.unwrap());
        assert!(
            (c.get() - w.get()).abs() <= 1e-6 * c.get(),
            "{name}: warm-started optimum {w} vs cold {c}"
        );
        assert!(
            warm.notes.iter().all(|n| n.about != NoteAbout::Bug),
            "{name}: {:?}",
            warm.notes
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} checked");
}
