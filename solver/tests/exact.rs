//! Integration tests of elk-solver: the MILP, the SMT model and a brute-force enumerator agree
//! on random tiny instances and on real operator ranges; the simulator agrees with the
//! solvers' objectives; no heuristic beats a proven optimum; bounds stay below it; the
//! re-timing LP never worsens a schedule and leaves an optimum optimal.
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

#[path = "exact/brute.rs"]
mod brute;
#[path = "exact/cross_check.rs"]
mod cross_check;
#[path = "exact/meets_bound.rs"]
mod meets_bound;
#[path = "exact/parallel_sets.rs"]
mod parallel_sets;
#[path = "exact/phased.rs"]
mod phased;
#[path = "exact/queue.rs"]
mod queue;
#[path = "exact/real_ops.rs"]
mod real_ops;
#[path = "exact/released.rs"]
mod released;
#[path = "exact/retime.rs"]
mod retime;
#[path = "exact/segments.rs"]
mod segments;
#[path = "exact/stage.rs"]
mod stage;
#[path = "exact/supervisor.rs"]
mod supervisor;
#[path = "exact/warm_start.rs"]
mod warm_start;
#[path = "exact/window_search.rs"]
mod window_search;
#[path = "exact/work_budget.rs"]
mod work_budget;

use elk_solver::{Exact, ExactOptions, ExactReport};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, MethodError};

/// An exact solve in this process, with the options' time limit: the way in every caller
/// takes ([`Exact`]).
fn solve_exact(inst: &Instance, opts: &ExactOptions) -> Result<ExactReport, MethodError> {
    let budget = Budget {
        time_limit: opts.time_limit,
    };
    Exact::in_process(opts.clone()).report(inst, &budget)
}
