//! The exact solver as a [`Method`], like every heuristic: [`Exact`] runs a backend (in this
//! process, or in a worker process killed at the hard limit) within the budget's time limit,
//! and reports its verdict as an [`Outcome`](elk_stage::method::Outcome).

use crate::exact::event::quiet;
use crate::exact::solve::solve;
use crate::exact::worker::solve_supervised_with;
use crate::exact::{ExactEvent, ExactOptions, ExactReport};
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
    /// The exact method with these options, run in this process (no hard limit: the
    /// backends' own limits are all there is).
    pub fn in_process(options: ExactOptions) -> Exact {
        Exact {
            options,
            worker: None,
        }
    }

    /// The whole report (bounds, model size, phases) within `budget`.
    pub fn report(&self, inst: &Instance, budget: &Budget) -> Result<ExactReport, MethodError> {
        self.report_with(inst, budget, &quiet)
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
            None => solve(inst, &options, progress),
            Some(w) => {
                let mut cmd = Command::new(&w.program);
                cmd.args(&w.args);
                solve_supervised_with(&mut cmd, inst, &options, w.grace, progress)
                    .map(|done| done.into_report(inst, &options))
            }
        };
        result.map_err(|e| e.for_method(self.name()))
    }
}

impl Method for Exact {
    fn name(&self) -> &str {
        self.options.backend.method_name()
    }

    fn schedule(&self, inst: &Instance, budget: &Budget) -> Result<Solved, MethodError> {
        Ok(self.report(inst, budget)?.solved())
    }
}
