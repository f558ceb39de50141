//! The exact solver's settings ([`ExactSettings`]: the flags of `solve --exact` and `gap`)
//! and what a gap or exact solve tells as it runs ([`GapStep`]).

use crate::bound::BoundCache;
use elk_solver::milp::Linearisation;
use elk_solver::segments::CoupledLp;
use elk_solver::{
    Backend, Exact, ExactEvent, ExactOptions, WholeModelBound, WholeModelSearch, WorkerCommand,
};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;
use std::time::Duration;

/// Why a work budget must be positive, as every refusal of one says it.
pub const WORK_LIMIT_POSITIVE: &str =
    "must be a positive whole number of work units (branch-and-bound nodes, window MILPs)";

/// Seconds after the time limit before the worker is killed.
pub const WORKER_GRACE: Duration = Duration::from_millis(1000);

/// The exact solver's settings: the flags of `solve --exact` and `gap`, as their `--json`
/// prints them in `config`.
#[derive(Clone, Debug, Serialize)]
pub struct ExactSettings {
    /// The backend (`--backend`).
    pub backend: Backend,
    /// Seconds the backend may run (`--time-limit`); a worker is killed [`WORKER_GRACE`]
    /// after.
    pub time_limit_s: f64,
    /// The MILP's memory-row linearisation (`--linearisation`).
    pub linearisation: Linearisation,
    /// Warm-start from the best heuristic (not `--no-warm-start`).
    pub warm_start: bool,
    /// Compute the LP-relaxation bound (not `--no-lp-bound`).
    pub lp_bound: bool,
    /// A model too large for the backend: its bound (`--whole-model-bound`).
    pub whole_model_bound: WholeModelBound,
    /// A model too large for the backend: improve the warm start by the window search (not
    /// `--no-window-search`).
    pub window_search: bool,
    /// Where the coupled segment LP's bound is read and kept (the CLI's, beside its plan
    /// cache; `None`: solved every time).
    #[serde(skip)]
    pub bound_cache: Option<BoundCache>,
    /// A deterministic budget in solver work (`--work-limit`; [`elk_solver::Work`]): the
    /// same command gives the same result, the time limit being only a hard stop on top.
    /// Absent from `--json`'s `config` when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_limit: Option<u64>,
}

impl ExactSettings {
    /// The MILP with the defaults (big-M rows, LP bound, warm start, the segment LP bound and
    /// the window search) within `seconds`: `gap`'s defaults with `--time-limit seconds`, and
    /// the one-layer solve of `compare --layer-exact`.
    pub fn milp_within(seconds: f64) -> ExactSettings {
        ExactSettings {
            backend: Backend::Milp,
            time_limit_s: seconds,
            linearisation: Linearisation::BigM,
            warm_start: true,
            lp_bound: true,
            whole_model_bound: WholeModelBound::Lp,
            window_search: true,
            bound_cache: None,
            work_limit: None,
        }
    }

    /// These settings with the work budget `work_limit` (`None`: none).
    pub fn with_work_limit(self, work_limit: Option<u64>) -> ExactSettings {
        ExactSettings { work_limit, ..self }
    }

    /// The time limit is a positive number of seconds and the backend is in this build (the
    /// Python wheel has no z3); the message names the CLI's flag.
    pub fn check(&self) -> Result<(), String> {
        if !(self.time_limit_s.is_finite() && self.time_limit_s > 0.0) {
            return Err(format!(
                "--time-limit {}: must be a positive number of seconds",
                self.time_limit_s
            ));
        }
        if let Some(why) = self.backend.missing() {
            return Err(format!("--backend {}: {why}", self.backend.name()));
        }
        match self.work_limit {
            Some(0) => Err(format!("--work-limit 0: {}", WORK_LIMIT_POSITIVE)),
            Some(_) if self.backend == Backend::Smt => Err(elk_solver::NO_SMT_BUDGET.into()),
            Some(_) if self.whole_model_bound == WholeModelBound::Milp => Err(
                "--work-limit with --whole-model-bound milp: the segment MILPs have no work budget (only a time limit); use --whole-model-bound lp".into(),
            ),
            _ => Ok(()),
        }
    }

    /// The exact method these settings describe, warm-started from `warm`, given the coupled
    /// segment LP's bound `coupled` and the stage relaxation's `stage`, run in `worker`
    /// (`None`: in this process).
    pub(super) fn method(
        &self,
        warm: Option<Schedule>,
        (coupled, stage): (CoupledLp, Option<Cycles>),
        worker: Option<WorkerCommand>,
    ) -> Exact {
        Exact {
            options: ExactOptions {
                backend: self.backend,
                linearisation: self.linearisation,
                time_limit: None,
                warm_start: warm,
                lp_bound: self.lp_bound,
                whole_model: self.whole_model_bound,
                whole_model_search: if self.window_search {
                    WholeModelSearch::Window
                } else {
                    WholeModelSearch::Off
                },
                coupled,
                stage,
                work_limit: self.work_limit,
            },
            worker,
        }
    }
}

/// What a gap or exact solve is doing, for a progress display.
#[derive(Debug)]
pub enum GapStep<'a> {
    /// Heuristic `k` of `n` starts.
    Heuristic {
        /// 1-based.
        k: usize,
        /// How many.
        n: usize,
        /// Its name.
        name: &'a str,
    },
    /// The exact backend (`label`: backend and limit) is starting (its worker, if any).
    Starting {
        /// `exact milp (limit 60 s)`.
        label: &'a str,
    },
    /// The exact solve (or the coupled segment LP before it) reported `event`.
    Exact {
        /// As in [`GapStep::Starting`], or the coupled LP's.
        label: &'a str,
        /// What it reported.
        event: &'a ExactEvent,
    },
    /// Something the user should know that changes no result (the bound cache could not be
    /// written), in one line.
    Warning {
        /// The line.
        message: &'a str,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_limit_must_be_positive() {
        assert!(ExactSettings::milp_within(1.0).check().is_ok());
        let err = ExactSettings::milp_within(0.0).check().unwrap_err();
        assert_eq!(err, "--time-limit 0: must be a positive number of seconds");
        assert!(ExactSettings::milp_within(f64::NAN).check().is_err());
    }

    #[test]
    fn a_work_limit_must_be_positive_and_counted() {
        let with = |n| ExactSettings::milp_within(1.0).with_work_limit(Some(n));
        assert!(with(1).check().is_ok());
        let err = with(0).check().unwrap_err();
        assert!(
            err.starts_with("--work-limit 0: must be a positive"),
            "{err}"
        );
        let milp_bound = ExactSettings {
            whole_model_bound: WholeModelBound::Milp,
            ..with(5)
        };
        assert!(milp_bound.check().unwrap_err().contains("segment MILPs"));
    }
}
