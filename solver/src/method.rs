//! The exact solver as a [`Method`], like every heuristic: [`Exact`] runs a backend (in this
//! process, or in a worker process killed at the hard limit) within the budget's time limit,
//! and reports its verdict as an [`Outcome`](elk_stage::method::Outcome).

use crate::error::SolverError;
use crate::exact::{solve_exact_with, ExactEvent, ExactOptions, ExactReport};
use crate::worker::solve_supervised_with;
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Solved};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// A program that runs [`crate::worker::serve`] (the `elk-opt` binary's hidden
/// `exact-worker` subcommand).
#[derive(Clone, Debug)]
pub struct WorkerCommand {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// How long after the time limit the worker is killed.
    pub grace: Duration,
}

/// An exact method: the backend and its settings, and where it runs.
#[derive(Clone, Debug, Default)]
pub struct Exact {
    /// Backend, linearisation, warm start, LP bound (the time limit comes from the budget).
    pub options: ExactOptions,
    /// Run in this worker process with a hard limit (`None`: in this process, where the
    /// backend's own limit is all there is; HiGHS can overrun it by seconds).
    pub worker: Option<WorkerCommand>,
}

impl Exact {
    /// The whole report (bounds, model size, phases) within `budget`.
    pub fn report(&self, inst: &Instance, budget: &Budget) -> Result<ExactReport, MethodError> {
        self.report_with(inst, budget, &|_| {})
    }

    /// [`Exact::report`], telling `progress` what the solve is doing as it happens (from the
    /// worker too): see [`ExactEvent`].
    pub fn report_with(
        &self,
        inst: &Instance,
        budget: &Budget,
        progress: &dyn Fn(&ExactEvent),
    ) -> Result<ExactReport, MethodError> {
        let mut options = self.options.clone();
        options.time_limit = budget.time_limit;
        let result = match &self.worker {
            None => solve_exact_with(inst, &options, progress),
            Some(w) => {
                let mut cmd = Command::new(&w.program);
                cmd.args(&w.args);
                solve_supervised_with(&mut cmd, inst, &options, w.grace, progress)
                    .map(|done| done.into_report(inst, &options))
            }
        };
        result.map_err(|e| self.error(e))
    }

    fn error(&self, e: SolverError) -> MethodError {
        let method = self.name().to_string();
        match e {
            SolverError::Input(detail) => MethodError::Input { method, detail },
            SolverError::Rejected { .. } => MethodError::Internal {
                method,
                detail: e.to_string(),
            },
            other => MethodError::Backend {
                method,
                detail: other.to_string(),
            },
        }
    }
}

impl Method for Exact {
    fn name(&self) -> &str {
        match self.options.backend {
            crate::Backend::Milp => "exact-milp",
            crate::Backend::Smt => "exact-smt",
        }
    }

    fn schedule(&self, inst: &Instance, budget: &Budget) -> Result<Solved, MethodError> {
        Ok(self.report(inst, budget)?.solved())
    }
}
