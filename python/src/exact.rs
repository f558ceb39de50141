//! `elk-opt gap` and `elk-opt solve --exact`: [`elk_app::gap`], the computation the CLI
//! runs, with the exact backend in a worker process as the CLI's (so the time limit is
//! hard): the CLI starts its own executable's `exact-worker`, this module the Python
//! interpreter running [`exact_worker`].

use crate::errors::Failure;
use elk_app::gap::{GapStep, WORKER_GRACE};
use elk_app::request::{keys, ExactKeys, ExactRequest, InstanceInput};
use elk_solver::{Backend, WorkerCommand};
use elk_stage::instance::Instance;
use pyo3::prelude::*;
use std::cell::Cell;
use std::path::PathBuf;

/// The request of `gap` or `solve --exact` on `input`: the exact keywords given
/// (`ExactKeys` as JSON), checked as the CLI checks its flags; `union`: the instance without
/// parallel sets is solved too.
pub fn exact_request(
    input: &InstanceInput,
    keys_json: &str,
    no_timings: bool,
    union: bool,
) -> Result<ExactRequest, Failure> {
    let exact = keys::parse::<ExactKeys>("exact", keys_json).and_then(|k| k.settings())?;
    Ok(ExactRequest {
        input: input.clone(),
        // Solved every time: the Python package keeps no bound cache (the bits are the
        // same as the CLI's cached ones).
        exact,
        output: None,
        no_timings,
        union,
    })
}

/// Every exact backend: its name, the library it runs, and why this build lacks it (`None`:
/// it has it). The wheel has no z3 ([`Backend::missing`]).
#[pyfunction]
pub fn backends() -> Vec<(&'static str, &'static str, Option<&'static str>)> {
    Backend::ALL
        .iter()
        .map(|b| (b.name(), b.solver(), b.missing()))
        .collect()
}

/// `python -c "…exact_worker()"`: the worker process of the exact backend, killed
/// [`WORKER_GRACE`] after its time limit.
pub fn python_worker(python: PathBuf) -> WorkerCommand {
    WorkerCommand {
        program: python,
        args: vec![
            "-c".into(),
            "from elk_opt import _native; _native.exact_worker()".into(),
        ],
        grace: WORKER_GRACE,
    }
}

/// The CLI's hidden `exact-worker`: one exact solve read from stdin, its progress on stderr,
/// its report on stdout. What the worker process of [`python_worker`] runs.
#[pyfunction]
pub fn exact_worker(py: Python<'_>) -> PyResult<()> {
    py.detach(|| -> Result<(), Failure> {
        let mut out = std::io::stdout();
        elk_solver::worker::serve(std::io::stdin(), &mut out)
            .map_err(|e| Failure::runtime(e.to_string()))?;
        // The CLI's worker flushes when its `main` returns; this one returns to Python, which
        // exits without flushing Rust's buffer: a short report would be lost.
        std::io::Write::flush(&mut out)
            .map_err(|e| Failure::runtime(format!("solver worker: writing the response: {e}")))
    })?;
    Ok(())
}

/// A progress callback for the gap's steps: `progress(k, n, name)` with the heuristics as
/// steps 1..n−1 and the exact solve as step n (its events as the name), then `(n + 1, n,
/// "")` from [`StepsTold::done`]. With two instances (`--expert-parallel`: the one with
/// parallel sets, then the one without) the second's steps follow the first's, n counts
/// both, and each name says which instance it is about.
pub struct StepsTold<'a> {
    progress: Option<&'a Py<PyAny>>,
    insts: Vec<&'a Instance>,
    heuristics: Cell<usize>,
}

impl<'a> StepsTold<'a> {
    /// Tells `progress` (if any) about the steps on `insts` (one, or the two of a union).
    pub fn new(progress: Option<&'a Py<PyAny>>, insts: Vec<&'a Instance>) -> StepsTold<'a> {
        StepsTold {
            progress,
            insts,
            heuristics: Cell::new(0),
        }
    }

    /// One step on the only instance.
    pub fn tell(&self, step: GapStep<'_>) {
        self.tell_on(0, step)
    }

    /// One step on instance `run` (0: the first).
    pub fn tell_on(&self, run: usize, step: GapStep<'_>) {
        if let GapStep::Heuristic { n, .. } = step {
            self.heuristics.set(n);
        }
        let per = self.heuristics.get() + 1;
        let total = per * self.insts.len();
        let (base, exact) = (run * per, run * per + per);
        let prefix = match (self.insts.len(), run) {
            (1, _) => "",
            (_, 0) => "with parallel sets: ",
            _ => "without parallel sets: ",
        };
        let inst = self.insts[run.min(self.insts.len() - 1)];
        let say = |k: usize, name: &str| {
            crate::objects::report_progress(self.progress, k, total, &format!("{prefix}{name}"))
        };
        match step {
            GapStep::Heuristic { k, name, .. } => say(base + k, name),
            GapStep::Starting { label } => say(exact, label),
            GapStep::Exact { label, event } => {
                say(exact, &format!("{label}: {}", event.describe(inst)))
            }
            GapStep::Warning { message } => say(exact, &format!("warning: {message}")),
        }
    }

    /// The end.
    pub fn done(&self) {
        let n = (self.heuristics.get() + 1) * self.insts.len();
        crate::objects::report_progress(self.progress, n + 1, n, "");
    }
}
