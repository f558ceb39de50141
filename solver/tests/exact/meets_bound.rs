//! A schedule whose makespan meets a proven lower bound is optimal, whichever backend (or
//! warm start, or killed worker) produced it; and [`Exact`] through the [`Method`] trait says
//! so with [`Outcome::Optimal`].

use crate::solve_exact;
use elk_solver::worker::Supervised;
use elk_solver::{meets_bound, Backend, Bounds, Exact, ExactOptions, ExactReport};
use elk_stage::instance::{Instance, OpOption};
use elk_stage::method::{Budget, Method, Outcome, StopReason, Verdict};
use elk_stage::schedule::Status;
use elk_stage::units::{Bytes, Cycles};

/// The crate-doc example: a loads in the prologue (50), b loads under a (50 ≤ 80) and runs
/// its fast option: 50 + 80 + 60 = 190, which is also the roofline prefix bound.
fn doc_example() -> Instance {
    Instance::builder("doc", Bytes(100), 1e9)
        .op(
            "a",
            Cycles(50.0),
            vec![OpOption::new(10, 40, 80.0, 0.0, 0.0)],
        )
        .op(
            "b",
            Cycles(50.0),
            vec![
                OpOption::new(10, 20, 90.0, 0.0, 0.0),
                OpOption::new(30, 60, 60.0, 0.0, 0.0),
            ],
        )
        .build()
        .unwrap()
}

/// Three operators whose optimum meets the roofline bound: a's load in the prologue (50),
/// b's under a (50 ≤ 80, cold 30 beside hot 40), c's under b (40 ≤ 60, cold 10 beside hot
/// 60): 50 + 80 + 60 + 70 = 260 = H_a + Σ min exec.
fn three_ops() -> Instance {
    Instance::builder("three ops meeting the roofline", Bytes(100), 1e9)
        .op(
            "a",
            Cycles(50.0),
            vec![OpOption::new(10, 40, 80.0, 0.0, 0.0)],
        )
        .op(
            "b",
            Cycles(50.0),
            vec![
                OpOption::new(10, 20, 90.0, 0.0, 0.0),
                OpOption::new(30, 60, 60.0, 0.0, 0.0),
            ],
        )
        .op(
            "c",
            Cycles(40.0),
            vec![OpOption::new(10, 20, 70.0, 0.0, 0.0)],
        )
        .build()
        .unwrap()
}

/// The report's verdict is an optimum of `t`, met by its lower bound.
fn assert_report_optimal(r: &ExactReport, t: Cycles, what: &str) {
    assert_eq!(r.status, Verdict::Optimal, "{what}: {:?}", r.notes);
    let makespan = r.makespan_cycles.unwrap();
    assert!(
        (makespan - t).abs() <= t * 1e-9,
        "{what}: makespan {makespan} vs {t}"
    );
    assert!(
        meets_bound(makespan, r.lower_bound_cycles),
        "{what}: makespan {makespan} vs bound {}",
        r.lower_bound_cycles
    );
    assert!(r.gap_pct.unwrap() <= 1e-7, "{what}: gap {:?} %", r.gap_pct);
    assert!(matches!(r.solved().outcome, Outcome::Optimal(_)), "{what}");
}

/// [`assert_report_optimal`], and the schedule carries the verdict and the bound.
fn assert_optimal(r: &ExactReport, t: Cycles, what: &str) {
    assert_report_optimal(r, t, what);
    let s = r.schedule.as_ref().unwrap();
    assert_eq!(s.status, Status::Optimal, "{what}");
    assert_eq!(s.lower_bound_cycles, Some(r.lower_bound_cycles), "{what}");
}

#[test]
fn an_smt_schedule_that_meets_its_bound_is_optimal() {
    let inst = three_ops();
    let t = Cycles(260.0);
    // The bound is the roofline's: known before any backend runs.
    assert_eq!(Bounds::roofline(&inst).roofline_best(), t);
    let smt = |warm_start| ExactOptions {
        backend: Backend::Smt,
        warm_start,
        ..ExactOptions::default()
    };
    assert_optimal(&solve_exact(&inst, &smt(None)).unwrap(), t, "SMT");
    // With an optimal warm start: whether or not it beats the bisection's last schedule by
    // a rounding, the result meets the bound and is optimal (it used to come back Feasible
    // with a gap of 0 %).
    let (warm, wt) = elk_heuristics::best(&inst).unwrap().unwrap();
    assert_eq!(wt, t, "a heuristic finds the optimum of this instance");
    let opts = smt(Some(warm));
    assert_optimal(&solve_exact(&inst, &opts).unwrap(), t, "SMT, warm-started");
    // A killed worker leaves the warm start; it meets the roofline bound, so it is optimal.
    let killed = Supervised::Killed {
        after_s: 1.0,
        told: Default::default(),
    }
    .into_report(&inst, &opts);
    assert_eq!(killed.stop, StopReason::Killed);
    assert!(killed.from_warm_start);
    // The schedule handed back says so too (status optimal, the bound attached).
    assert_optimal(&killed, t, "killed worker");
}

#[test]
fn exact_through_the_method_trait_is_optimal_on_the_doc_example() {
    let inst = doc_example();
    let t = Cycles(190.0);
    for backend in [Backend::Milp, Backend::Smt] {
        let exact = Exact {
            options: ExactOptions {
                backend,
                ..ExactOptions::default()
            },
            worker: None,
        };
        let m: &dyn Method = &exact;
        let solved = m.schedule(&inst, &Budget::seconds(10.0)).unwrap();
        assert_eq!(solved.stop, StopReason::Completed, "{}", m.name());
        let Outcome::Optimal(s) = &solved.outcome else {
            panic!("{}: {:?}", m.name(), solved.outcome)
        };
        assert_eq!(s.method, m.name());
        assert_eq!(s.status, Status::Optimal, "{}", m.name());
        let judged = elk_sim::judged_makespan(&inst, s).unwrap();
        assert!((judged - t).abs() <= t * 1e-9, "{}: {judged}", m.name());
        // The run-and-judge path every caller uses agrees.
        let run = elk_sim::run_judged(&inst, m, &Budget::seconds(10.0)).unwrap();
        assert!(
            matches!(run.solved.outcome, Outcome::Optimal(_)),
            "{}",
            m.name()
        );
        assert!(
            (run.makespan().unwrap() - t).abs() <= t * 1e-9,
            "{}",
            m.name()
        );
    }
}

#[test]
fn a_warm_start_that_meets_the_roofline_is_optimal_without_a_model() {
    let inst = three_ops();
    let t = Cycles(260.0);
    let (warm, wt) = elk_heuristics::best(&inst).unwrap().unwrap();
    assert_eq!(wt, t, "a heuristic finds the optimum of this instance");
    for backend in [Backend::Milp, Backend::Smt] {
        let what = format!("{backend:?}, warm start at the roofline");
        let opts = ExactOptions {
            backend,
            warm_start: Some(warm.clone()),
            ..ExactOptions::default()
        };
        let r = solve_exact(&inst, &opts).unwrap();
        assert_optimal(&r, t, &what);
        assert_eq!(r.stop, StopReason::WarmStartMeetsBound, "{what}");
        assert!(r.from_warm_start, "{what}");
        // No backend ran: no model, no backend phase, no backend bound.
        assert_eq!(r.model.variables, 0, "{what}");
        assert!(r.bounds.backend_cycles.is_none(), "{what}");
        assert!(
            r.phases
                .iter()
                .all(|p| !p.what.contains("MILP") && !p.what.contains("SMT")),
            "{what}: {:?}",
            r.phases.iter().map(|p| &p.what).collect::<Vec<_>>()
        );
        // Without the warm start the backend runs and proves the same optimum.
        let cold = solve_exact(
            &inst,
            &ExactOptions {
                backend,
                ..ExactOptions::default()
            },
        )
        .unwrap();
        assert_optimal(&cold, t, &format!("{backend:?}, cold"));
        assert_eq!(cold.stop, StopReason::Completed, "{backend:?}, cold");
    }
}
