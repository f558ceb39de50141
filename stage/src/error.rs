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
    /// An instance or schedule file is not JSON of its format's shape (syntax, a missing or
    /// unknown field, a wrong type).
    #[error("{file}: malformed JSON: {}", one_line(.detail))]
    Json {
        /// The file (or what was being built, for a builder).
        file: String,
        /// What was wrong, with the position or field.
        detail: String,
    },
    /// An instance or schedule file is well-formed JSON that breaks a rule of its format (a
    /// format tag, a negative cycle count, overlapping groups…).
    #[error("{file}: invalid {what}: {}", one_line(.detail))]
    Rule {
        /// The file (or what was being built, for a builder).
        file: String,
        /// `instance` or `schedule`.
        what: &'static str,
        /// Which rule, where: the operator, option or field.
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

/// A file that could not be written atomically: which file, what failed (`cannot write`
/// the temporary file, `cannot replace` the target with it), and the I/O error.
#[derive(Debug, thiserror::Error)]
#[error("{}: {what}", .path.display())]
pub struct WriteError {
    /// The temporary file (writing failed) or the target (the rename failed).
    pub path: std::path::PathBuf,
    /// `cannot write` or `cannot replace`.
    pub what: &'static str,
    /// The underlying error.
    #[source]
    pub error: std::io::Error,
}

/// Writes `contents` to `path` atomically: a temporary file in the same directory, then a
/// rename, so an interrupted or failed run never leaves a half-written file or clobbers a
/// good one (the CLI's output files and the Python package's `save`).
pub fn write_atomic(
    path: &std::path::Path,
    contents: &[u8],
) -> std::result::Result<(), WriteError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, contents).map_err(|error| WriteError {
        path: tmp.clone(),
        what: "cannot write",
        error,
    })?;
    std::fs::rename(&tmp, path).map_err(|error| {
        let _ = std::fs::remove_file(&tmp);
        WriteError {
            path: path.to_path_buf(),
            what: "cannot replace",
            error,
        }
    })
}
