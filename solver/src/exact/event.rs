//! What an exact solve tells as it happens: a phase starts, a better schedule is found, a
//! segment problem is about to be solved. The CLI draws these on stderr; a worker process
//! sends them across its pipe ([`crate::worker`]), and a killed worker's report is made of
//! the last it told.

use crate::exact::gap_pct;
use crate::segments::SegmentStep;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};

/// What an exact solve is doing, reported as it happens to the callback of
/// [`Exact::report_with`](crate::Exact::report_with) (and across the worker's pipe, see [`crate::worker`]): the CLI draws
/// it on stderr. Nothing is computed from it, so a solve with or without a callback gives the
/// same report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExactEvent {
    /// A phase starts ("LP relaxation", "fixed-order MILP", "MILP (HiGHS)", "SMT (z3)",
    /// "segment relaxation"), with what is known when it does.
    Phase {
        /// What runs now.
        what: String,
        /// The best schedule's makespan so far (the warm start or a restriction's).
        incumbent: Option<Cycles>,
        /// The best proven lower bound so far.
        bound: Cycles,
        /// Wall-clock seconds since the solve started.
        elapsed_s: f64,
    },
    /// A better schedule than any told before (the warm start is not told): what a worker
    /// killed at its hard limit still reports (`crate::worker`). Valid and judged: its
    /// makespan is the simulator's.
    Incumbent {
        /// The schedule.
        schedule: Box<Schedule>,
        /// The best proven lower bound so far.
        bound: Cycles,
        /// Wall-clock seconds since the solve started.
        elapsed_s: f64,
    },
    /// HiGHS's branch and bound moved inside a MILP phase: its incumbent or its bound
    /// changed. The incumbent is the MILP's objective, not yet a judged schedule (the
    /// simulator judges the phase's result when it ends); the bound is proven.
    Milp {
        /// The phase ("MILP (HiGHS)", "fixed-order MILP").
        what: String,
        /// The best makespan known: the phase's incumbent or HiGHS's, the smaller.
        incumbent: Option<Cycles>,
        /// The best proven bound: the solve's or HiGHS's dual bound, the larger.
        bound: Cycles,
        /// Branch-and-bound nodes of this MILP so far.
        nodes: u64,
        /// Wall-clock seconds since the solve started.
        elapsed_s: f64,
    },
    /// The segment relaxation is about to solve a segment problem.
    Segment {
        /// Where its price search is.
        step: SegmentStep,
        /// The best schedule's makespan so far.
        incumbent: Option<Cycles>,
        /// The best proven lower bound so far (the roofline, or the best price's bound).
        bound: Cycles,
    },
}

impl ExactEvent {
    /// One line for a progress display, times in ms of `inst`: e.g. (whole Llama2-13B)
    /// "segment relaxation: μ = 0.254 (price 3 of ≤ 7), segment problem 2/3, 4 s · incumbent
    /// 6.7264 ms, bound 6.6974 ms, gap ≤ 0.43 %".
    pub fn describe(&self, inst: &Instance) -> String {
        let (head, incumbent, bound) = match self {
            ExactEvent::Phase {
                what,
                incumbent,
                bound,
                ..
            } => (what.clone(), *incumbent, *bound),
            ExactEvent::Incumbent {
                schedule,
                bound,
                elapsed_s,
            } => (
                format!("new incumbent at {elapsed_s:.0} s"),
                Some(schedule.makespan_cycles),
                *bound,
            ),
            ExactEvent::Milp {
                what,
                incumbent,
                bound,
                nodes,
                elapsed_s: _,
            } => (
                format!("{what}, {nodes} nodes"),
                *incumbent,
                *bound,
            ),
            ExactEvent::Segment {
                step,
                incumbent,
                bound,
            } => (
                format!(
                    "segment relaxation: μ = {:.3} (price {} of ≤ {}), segment problem {}/{}, {:.0} s",
                    step.price,
                    step.price_index,
                    step.max_prices,
                    step.problem,
                    step.problems,
                    step.elapsed_s
                ),
                *incumbent,
                *bound,
            ),
        };
        let known = match incumbent {
            Some(t) => format!(
                "incumbent {:.4} ms, bound {:.4} ms{}",
                inst.ms(t),
                inst.ms(bound),
                gap_pct(t, bound).map_or(String::new(), |g| format!(", gap ≤ {g:.2} %"))
            ),
            None => format!("no schedule yet, bound {:.4} ms", inst.ms(bound)),
        };
        format!("{head} · {known}")
    }
}

/// A progress callback that does nothing.
pub(crate) fn quiet(_: &ExactEvent) {}
