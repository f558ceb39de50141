//! The one error type of elk-solver: real failures only (a crashed backend, a schedule the
//! simulator rejects); "no schedule found" and "infeasible" are results, not errors.

/// Why an exact method failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SolverError {
    /// The backend reported an error.
    #[error("{backend}: {detail}")]
    Backend {
        /// `milp` or `smt`.
        backend: &'static str,
        /// What it said.
        detail: String,
    },
    /// The backend's solution is not a valid schedule: a bug in an encoding.
    #[error("{backend}: solution rejected by the simulator (an encoding bug): {detail}")]
    Rejected {
        /// `milp` or `smt`.
        backend: &'static str,
        /// The first violation.
        detail: String,
    },
    /// The solver worker process failed.
    #[error("solver worker: {0}")]
    Worker(String),
    /// Bad input (a warm start that is not a schedule of the instance, …).
    #[error("{0}")]
    Input(String),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, SolverError>;

impl SolverError {
    /// As the error of the method `method`, typed by whose fault it is: bad input, a bug of
    /// an encoding (a rejected schedule), or a failed backend or worker.
    pub fn for_method(self, method: &str) -> elk_stage::method::MethodError {
        use elk_stage::method::MethodError;
        let method = method.to_string();
        match self {
            SolverError::Input(detail) => MethodError::Input { method, detail },
            SolverError::Rejected { .. } => MethodError::Internal {
                method,
                detail: self.to_string(),
            },
            other => MethodError::Backend {
                method,
                detail: other.to_string(),
            },
        }
    }
}
