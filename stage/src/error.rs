//! The one error type of `elk-stage`: reading and checking instance and schedule files.

use std::path::PathBuf;

/// Errors raised while reading, parsing or building stage-model values.
///
/// Every variant names where the problem is (file, operator, field), so the CLI can print it
/// as one line. All of them are bad input (exit code 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StageError {
    /// A file could not be read.
    #[error("{path}: cannot read: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying I/O error (not a `source`: the message already says it, and the
        /// CLI prints one line).
        error: std::io::Error,
    },
    /// An instance or schedule file is malformed or breaks a rule of its format.
    #[error("{file}: malformed JSON: {}", one_line(.detail))]
    Json {
        /// The file (or what was being built, for a builder).
        file: String,
        /// What was wrong, with the position, operator or field.
        detail: String,
    },
    /// A schedule was built for another instance (its `instance_hash` differs).
    #[error("{}", one_line(.0))]
    WrongInstance(String),
    /// A value is out of range or does not apply (a load-order policy that does not parse…).
    #[error("{}", one_line(.0))]
    Invalid(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, StageError>;

/// `s` with line breaks and other control characters escaped, so an error that quotes its
/// input (a field name, an operator type) still prints as one line.
pub fn one_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '\n' => vec!['\\', 'n'],
            '\r' => vec!['\\', 'r'],
            '\t' => vec![' '],
            c if c.is_control() => format!("\\u{{{:x}}}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect()
}

/// Reads a whole text file, naming it in the error.
pub fn read_file(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|error| StageError::Io {
        path: path.to_path_buf(),
        error,
    })
}
