//! The one trait every method implements — heuristic or exact — and what it returns.
//!
//! Results are values, not errors: a method that finds no schedule says so in its
//! [`Outcome`]; `Err` is for real failures (bad input, a crashed backend).

use crate::error::Result;
use crate::instance::Instance;
use crate::schedule::Schedule;
use std::time::Duration;

/// What a method may spend.
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget {
    /// Wall-clock limit.
    pub time_limit: Option<Duration>,
}

/// Why a method stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// It ran to completion.
    Completed,
    /// The time limit was reached.
    TimeLimit,
}

/// A method's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A schedule proven optimal.
    Optimal(Schedule),
    /// A schedule, with a proven lower bound when the method has one.
    Feasible {
        /// The schedule.
        schedule: Schedule,
        /// A proven lower bound on the makespan, cycles.
        bound: Option<f64>,
    },
    /// Proven: no schedule exists.
    Infeasible {
        /// Why (the operator or stage that cannot fit).
        reason: String,
    },
    /// No schedule found and nothing proven.
    Unknown,
}

impl Outcome {
    /// The schedule, if there is one.
    pub fn schedule(&self) -> Option<&Schedule> {
        match self {
            Outcome::Optimal(s) | Outcome::Feasible { schedule: s, .. } => Some(s),
            _ => None,
        }
    }
}

/// A method's result with its stop reason and notes for the report (orders tried, splits…).
#[derive(Clone, Debug, PartialEq)]
pub struct Solved {
    /// The result.
    pub outcome: Outcome,
    /// Why it stopped.
    pub stop: StopReason,
    /// One line per fact worth reporting.
    pub notes: Vec<String>,
}

/// A scheduling method.
pub trait Method: Sync {
    /// The name used on the command line and in schedule files.
    fn name(&self) -> &'static str;
    /// Schedules an instance.
    fn schedule(&self, inst: &Instance, budget: &Budget) -> Result<Solved>;
}
