//! Why a request is refused.

/// A request that cannot be resolved: every variant is bad input (the CLI exits 2, Python
/// raises `ValueError`), and its message is one line naming what and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A value or a combination of values the request refuses, with why
    /// (`--dtype applies to a zoo model (--model); …`).
    #[error("{0}")]
    Refused(String),
    /// A model, graph file or chip that cannot be read or built.
    #[error(transparent)]
    Model(#[from] elk_model::ModelError),
    /// A range, load order or instance file the stage model refuses.
    #[error(transparent)]
    Stage(#[from] elk_stage::StageError),
}

impl RequestError {
    /// A refusal with this message, made one line.
    pub fn refused(msg: impl Into<String>) -> RequestError {
        RequestError::Refused(elk_stage::error::one_line(&msg.into()))
    }
}

/// A request's result.
pub type Result<T> = std::result::Result<T, RequestError>;
