//! The supervisor kills a worker that ignores its time limit.
//!
//! The wall-clock bounds are generous on purpose (a loaded 2-core CI box can be slow to
//! schedule the supervisor): they only have to tell "killed near the deadline" from "waited
//! for the worker to exit by itself", which takes [`SLEEP_S`] seconds.

use crate::solve_exact;
use elk_solver::worker::{solve_supervised, Supervised, PROGRESS};
use elk_solver::{Exact, ExactEvent, ExactOptions, WorkerCommand};
use elk_stage::corpus::{random_instance, RandomSpec};
use elk_stage::method::{Budget, Method, Outcome, StopReason, Verdict};
use std::process::Command;
use std::time::{Duration, Instant};

/// The backend's own time limit.
const LIMIT: Duration = Duration::from_millis(300);
/// How long after the limit the worker is killed.
const GRACE: Duration = Duration::from_millis(200);
/// How long the stand-in worker (`sleep`) would run if nobody killed it.
const SLEEP_S: &str = "120";

/// The kill deadline (limit + grace), three times over, plus ten seconds of scheduling slack:
/// far below the worker's natural end, far above the deadline.
fn generous() -> f64 {
    3.0 * (LIMIT + GRACE).as_secs_f64() + 10.0
}

#[test]
fn a_worker_that_overruns_is_killed() {
    let inst = random_instance(1, &RandomSpec::tiny(3, 2));
    let opts = ExactOptions {
        time_limit: Some(LIMIT),
        ..ExactOptions::default()
    };
    // `sleep` never answers: it stands for a backend stuck past its own limit.
    let mut worker = Command::new("sleep");
    worker.arg(SLEEP_S);
    let started = Instant::now();
    let outcome = solve_supervised(&mut worker, &inst, &opts, GRACE).unwrap();
    let took = started.elapsed().as_secs_f64();
    let deadline = (LIMIT + GRACE).as_secs_f64();
    let after = match &outcome {
        Supervised::Killed { after_s, .. } => *after_s,
        other => panic!("expected a kill, got {other:?}"),
    };
    assert!(
        after >= deadline * 0.8 && after < generous(),
        "killed after {after} s (deadline {deadline} s)"
    );
    assert!(took < generous(), "returned after {took} s");
    // A killed worker leaves what is known without solving: here no warm start, so no
    // schedule, and the roofline bound.
    let report = outcome.into_report(&inst, &opts);
    assert_eq!(report.stop, StopReason::Killed);
    assert_eq!(report.status, Verdict::Unknown);
    assert!(report.schedule.is_none());
    assert_eq!(
        report.lower_bound_cycles,
        elk_solver::Bounds::roofline(&inst).roofline_best()
    );
}

#[test]
fn exact_with_a_worker_that_overruns_reports_the_time_limit() {
    let inst = random_instance(1, &RandomSpec::tiny(3, 2));
    let exact = Exact {
        options: ExactOptions::default(),
        worker: Some(WorkerCommand {
            program: "sleep".into(),
            args: vec![SLEEP_S.into()],
            grace: GRACE,
        }),
    };
    let started = Instant::now();
    let solved = exact
        .schedule(
            &inst,
            &Budget {
                time_limit: Some(LIMIT),
            },
        )
        .unwrap();
    let took = started.elapsed().as_secs_f64();
    assert!(took < generous(), "returned after {took} s");
    assert_eq!(solved.stop, StopReason::Killed);
    assert!(
        matches!(solved.outcome, Outcome::Unknown { .. }),
        "{:?}",
        solved.outcome
    );
}

/// A stand-in worker that tells `events` as progress lines, then hangs past its limit.
fn telling_worker(events: &[ExactEvent]) -> Command {
    let lines: String = events
        .iter()
        .map(|e| format!("{PROGRESS}{}\n", serde_json::to_string(e).unwrap()))
        .collect();
    let mut worker = Command::new("sh");
    worker
        .args([
            "-c",
            "printf '%s' \"$EVENTS\" >&2; sleep \"$1\"",
            "sh",
            SLEEP_S,
        ])
        .env("EVENTS", lines);
    worker
}

#[test]
fn a_killed_worker_keeps_the_incumbent_and_bound_it_told() {
    let inst = random_instance(3, &RandomSpec::tiny(5, 2));
    let optimum = solve_exact(&inst, &ExactOptions::default()).unwrap();
    assert_eq!(optimum.status, Verdict::Optimal);
    let opt = optimum.makespan_cycles.unwrap();
    // A valid schedule worse than the optimum stands for the search's incumbent, and the
    // optimum for a proven bound (a valid one: no schedule is faster).
    let basic = elk_heuristics::by_name("basic").unwrap();
    let (incumbent, t) = elk_heuristics::judged(&inst, basic.as_ref())
        .unwrap()
        .unwrap();
    assert!(t > opt, "basic is not optimal here: {t} vs {opt}");
    let mut broken = incumbent.clone();
    broken.options[0] = 999;
    let tell = |s: &elk_stage::schedule::Schedule| ExactEvent::Incumbent {
        schedule: Box::new(s.clone()),
        bound: opt,
        elapsed_s: 0.1,
    };
    let opts = ExactOptions {
        time_limit: Some(LIMIT),
        ..ExactOptions::default()
    };
    let outcome = solve_supervised(
        &mut telling_worker(&[tell(&incumbent)]),
        &inst,
        &opts,
        GRACE,
    )
    .unwrap();
    assert!(matches!(outcome, Supervised::Killed { .. }), "{outcome:?}");
    let report = outcome.into_report(&inst, &opts);
    assert_eq!(report.stop, StopReason::Killed);
    assert_eq!(report.status, Verdict::Feasible);
    assert!(!report.from_warm_start);
    assert_eq!(
        report.makespan_cycles,
        Some(t),
        "the incumbent told, judged again"
    );
    assert_eq!(report.lower_bound_cycles, opt, "the bound told");
    let gap = report.gap_pct.unwrap();
    assert!(
        (gap - 100.0 * (t.get() / opt.get() - 1.0)).abs() < 1e-9,
        "{gap}"
    );
    // An incumbent the simulator rejects is not used: nothing else is known, so no schedule.
    let outcome =
        solve_supervised(&mut telling_worker(&[tell(&broken)]), &inst, &opts, GRACE).unwrap();
    let report = outcome.into_report(&inst, &opts);
    assert!(report.schedule.is_none(), "{:?}", report.schedule);
    assert_eq!(report.status, Verdict::Unknown);
}
