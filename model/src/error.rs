//! The one error type of `elk-model`: every variant names where the problem is.

use std::path::PathBuf;

/// Errors raised while building, importing or reading models and chip specifications.
///
/// Every variant carries what locates the problem (file, entry id, key, operator), so the CLI
/// can print it as one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The reference-graph JSON is not the expected list of `[id, expr, op_type, inputs]`.
    #[error("{file}: malformed graph JSON: {detail}")]
    GraphJson {
        /// The file.
        file: String,
        /// What was wrong, with the position or entry index.
        detail: String,
    },
    /// One entry of a reference graph cannot be imported.
    #[error("{file}: entry id {id} ({op_type}): {detail}")]
    Entry {
        /// The file.
        file: String,
        /// The entry's node id.
        id: i64,
        /// The entry's op type.
        op_type: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A chip specification (TOML) is invalid.
    #[error("{file}: {detail}")]
    Chip {
        /// The file (or `preset NAME`).
        file: String,
        /// The key and what was expected.
        detail: String,
    },
    /// A name (model, chip, mode) is not known.
    #[error("unknown {what} '{name}'; known: {known}")]
    Unknown {
        /// What kind of name.
        what: &'static str,
        /// The name given.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// A parameter is out of range or does not apply.
    #[error("{0}")]
    Invalid(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, ModelError>;

/// Reads a whole text file, naming it in the error.
pub fn read_file(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    })
}
