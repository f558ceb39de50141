//! The supervisor kills a worker that ignores its time limit.

use super::corpus::random_instance;
use elk_solver::worker::{solve_supervised, Supervised};
use elk_solver::ExactOptions;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn a_worker_that_overruns_is_killed() {
    let inst = random_instance(1, 3, 2);
    let opts = ExactOptions {
        time_limit_s: Some(0.3),
        ..ExactOptions::default()
    };
    // `sleep` never answers: it stands for a backend stuck past its own limit.
    let mut worker = Command::new("sleep");
    worker.arg("30");
    let started = Instant::now();
    let outcome = solve_supervised(&mut worker, &inst, &opts, Duration::from_millis(200)).unwrap();
    let took = started.elapsed().as_secs_f64();
    match outcome {
        Supervised::Killed { after_s } => assert!((0.4..5.0).contains(&after_s), "{after_s}"),
        other => panic!("expected a kill, got {other:?}"),
    }
    assert!(took < 5.0, "{took}");
}
