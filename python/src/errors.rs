//! The CLI's exit codes as Python exceptions: what the CLI exits 2 for (bad input: unknown
//! names, malformed files, bad values) raises `ValueError`, what it exits 1 for raises
//! `elk_opt.SolverError`; the message is the CLI's one line, without its `error: `.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

pyo3::create_exception!(
    elk_opt,
    SolverError,
    PyRuntimeError,
    "A run failed (a solver backend, an I/O error, a method that broke its contract): what \
     the CLI exits 1 for."
);

/// A failure, classified as the CLI classifies it.
#[derive(Debug)]
pub enum Failure {
    /// Bad input (the CLI's exit code 2).
    Input(String),
    /// Anything else (exit code 1).
    Runtime(String),
}

/// The error and its sources on one line, as the CLI prints `{err:#}`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    elk_model::error::one_line(&text)
}

impl Failure {
    /// A bad-input failure with this message.
    pub fn input(msg: impl Into<String>) -> Failure {
        Failure::Input(elk_model::error::one_line(&msg.into()))
    }

    /// A runtime failure with this message.
    pub fn runtime(msg: impl Into<String>) -> Failure {
        Failure::Runtime(elk_model::error::one_line(&msg.into()))
    }
}

impl From<elk_model::ModelError> for Failure {
    fn from(e: elk_model::ModelError) -> Failure {
        Failure::Input(chain(&e))
    }
}

impl From<elk_app::request::RequestError> for Failure {
    fn from(e: elk_app::request::RequestError) -> Failure {
        Failure::Input(chain(&e))
    }
}

impl From<elk_stage::StageError> for Failure {
    fn from(e: elk_stage::StageError) -> Failure {
        Failure::Input(chain(&e))
    }
}

impl From<elk_stage::method::MethodError> for Failure {
    fn from(e: elk_stage::method::MethodError) -> Failure {
        if e.exit_code() == 2 {
            Failure::Input(chain(&e))
        } else {
            Failure::Runtime(chain(&e))
        }
    }
}

impl From<elk_app::AppError> for Failure {
    fn from(e: elk_app::AppError) -> Failure {
        use elk_app::AppError as R;
        // As the CLI's exit codes: a wrapped error is classified as it is on its own.
        match e {
            R::Method(m) => Failure::from(m),
            R::Grid { .. }
            | R::NoGrid { .. }
            | R::Results { .. }
            | R::Refused { .. }
            | R::Request(_)
            | R::Model(_)
            | R::Stage(_) => Failure::Input(chain(&e)),
            _ => Failure::Runtime(chain(&e)),
        }
    }
}

impl From<elk_sim::detailed::DetailedError> for Failure {
    fn from(e: elk_sim::detailed::DetailedError) -> Failure {
        Failure::Runtime(chain(&e))
    }
}

impl From<serde_json::Error> for Failure {
    fn from(e: serde_json::Error) -> Failure {
        Failure::Runtime(format!("cannot encode the result as JSON: {e}"))
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Input(m) => PyValueError::new_err(m),
            Failure::Runtime(m) => SolverError::new_err(m),
        }
    }
}
