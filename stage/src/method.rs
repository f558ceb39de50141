//! The one trait every method implements — heuristic or exact — and what it returns.
//!
//! Results are values, not errors: a method that finds no schedule says so in its
//! [`Outcome`] (`Unknown` with a reason; `Infeasible` only with a proof). `Err` is for real
//! failures, typed by whose fault they are ([`MethodError`]): bad input (exit code 2), a
//! crashed backend or a bug of the method (exit code 1).

use crate::instance::Instance;
use crate::schedule::{Schedule, Status};
use crate::units::Cycles;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a method may spend.
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget {
    /// Wall-clock limit. Exact methods honour it (hard, through a worker process, when they
    /// are given one); the heuristics run to completion in well under a second per instance
    /// and ignore it.
    pub time_limit: Option<Duration>,
}

impl Budget {
    /// A budget of `seconds` of wall-clock time.
    pub fn seconds(seconds: f64) -> Budget {
        Budget {
            time_limit: Some(Duration::from_secs_f64(seconds)),
        }
    }
}

/// Why a method stopped: one vocabulary for every method, heuristic or exact (the exact
/// report's `stop` field serializes it in snake_case).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It ran to completion (a heuristic's pass, or an exact proof of optimality or
    /// infeasibility).
    #[default]
    Completed,
    /// The time limit was reached (the backend's own limit).
    TimeLimit,
    /// The work budget (`--work-limit`: branch-and-bound nodes, window MILPs) was used up
    /// first: unlike a time limit, where it stops does not depend on the machine's speed.
    WorkLimit,
    /// The method declined to run (the instance is too large for it); what it reports is
    /// what it was given (a warm start) and the bounds it could compute without solving.
    NotAttempted,
    /// The process running it overran its hard time limit and was killed; what it reports
    /// is what it had told before the kill.
    Killed,
    /// The warm start already met a lower bound known before any model was built (roofline
    /// or LP relaxation): optimal, with no backend run.
    WarmStartMeetsBound,
    /// The LP relaxation's options, their loads queued and re-timed, make a schedule that
    /// meets its bound: optimal, with no backend run.
    LpOptionsMeetBound,
    /// The instance was too large for the exact model, so the window search improved the
    /// warm start instead (its own stop and the makespans before and after are reported
    /// beside).
    WindowSearch,
}

impl StopReason {
    /// The stop was forced by a time limit (the backend's own, or a kill at the hard one).
    pub fn time_limited(self) -> bool {
        matches!(self, StopReason::TimeLimit | StopReason::Killed)
    }
}

/// What a method proved or found, without the schedule: [`Outcome`]'s variants as a value
/// (serialized in lowercase, as the exact report's `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Proven optimal.
    Optimal,
    /// A schedule, optimality not proven.
    Feasible,
    /// Proven: no schedule exists.
    Infeasible,
    /// No schedule and nothing proven.
    Unknown,
}

impl Verdict {
    /// The solve proved its result: an optimum, or that no schedule exists.
    pub fn proven(self) -> bool {
        matches!(self, Verdict::Optimal | Verdict::Infeasible)
    }

    /// The status a schedule from this verdict carries: optimal only when proven.
    pub fn schedule_status(self) -> Status {
        if self == Verdict::Optimal {
            Status::Optimal
        } else {
            Status::Feasible
        }
    }
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
        /// A proven lower bound on the makespan.
        bound: Option<Cycles>,
    },
    /// Proven: no schedule exists (only exact methods can say this).
    Infeasible {
        /// Why (the operator or stage that cannot fit, or the backend that proved it).
        reason: String,
    },
    /// No schedule found, and nothing proven (a heuristic that failed, or a time limit).
    Unknown {
        /// Why nothing was found.
        reason: String,
    },
}

impl Outcome {
    /// Its verdict, without the schedule.
    pub fn verdict(&self) -> Verdict {
        match self {
            Outcome::Optimal(_) => Verdict::Optimal,
            Outcome::Feasible { .. } => Verdict::Feasible,
            Outcome::Infeasible { .. } => Verdict::Infeasible,
            Outcome::Unknown { .. } => Verdict::Unknown,
        }
    }

    /// The schedule, if there is one.
    pub fn schedule(&self) -> Option<&Schedule> {
        match self {
            Outcome::Optimal(s) | Outcome::Feasible { schedule: s, .. } => Some(s),
            _ => None,
        }
    }

    /// A heuristic's result: its schedule, or `Unknown` with the reason it found none.
    pub fn heuristic(found: Result<Schedule, String>) -> Outcome {
        match found {
            Ok(schedule) => Outcome::Feasible {
                schedule,
                bound: None,
            },
            Err(reason) => Outcome::Unknown { reason },
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
    /// One line per fact worth reporting (for people; tests assert on typed fields).
    pub notes: Vec<String>,
}

impl Solved {
    /// A completed run with no notes.
    pub fn completed(outcome: Outcome) -> Solved {
        Solved {
            outcome,
            stop: StopReason::Completed,
            notes: Vec::new(),
        }
    }
}

/// A method failed: whose fault, and what happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MethodError {
    /// The input cannot be scheduled by this method as given (the user can fix it).
    #[error("{method}: {}", crate::error::one_line(.detail))]
    Input {
        /// The method.
        method: String,
        /// What is wrong with the input.
        detail: String,
    },
    /// A solver backend crashed, was killed without an answer, or answered nonsense.
    #[error("{method}: backend failed: {}", crate::error::one_line(.detail))]
    Backend {
        /// The method.
        method: String,
        /// What the backend did.
        detail: String,
    },
    /// The method broke its own contract (an invalid schedule, a fill that failed): a bug.
    #[error("{method}: internal error (a bug, please report): {}", crate::error::one_line(.detail))]
    Internal {
        /// The method.
        method: String,
        /// What went wrong.
        detail: String,
    },
}

impl MethodError {
    /// The CLI's exit code: 2 for bad input, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            MethodError::Input { .. } => 2,
            _ => 1,
        }
    }

    /// An internal error of `method`.
    pub fn internal(method: &str, detail: impl std::fmt::Display) -> MethodError {
        MethodError::Internal {
            method: method.into(),
            detail: detail.to_string(),
        }
    }
}

/// A scheduling method: a heuristic, an exact solver, or a variant of either.
pub trait Method: Sync {
    /// The name used on the command line, in schedule files and in reports.
    fn name(&self) -> &str;
    /// Schedules an instance.
    fn schedule(&self, inst: &Instance, budget: &Budget) -> Result<Solved, MethodError>;
}
