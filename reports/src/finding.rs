//! Each report's headline ([`Finding`]), written beside it as `finding.json`, from which the
//! results summary ([`crate::summary`]) is assembled.

use elk_app::{AppError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file name of a report's finding.
pub const FILE: &str = "finding.json";

/// One report's answer: the question, what was found (with its numbers), the headline number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The question the report answers.
    pub question: String,
    /// What it found, with numbers and units.
    pub finding: String,
    /// The headline number, with its unit.
    pub number: String,
}

impl Finding {
    /// The finding as a report file.
    pub fn file(&self) -> (String, Vec<u8>) {
        let json = serde_json::to_string_pretty(self).unwrap_or_default();
        (FILE.into(), (json + "\n").into_bytes())
    }

    /// Reads `dir/finding.json`.
    pub fn read(dir: &Path) -> Result<Finding> {
        let path = dir.join(FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| AppError::Io {
            path: path.display().to_string(),
            detail: format!("{e} (run the report that writes it first)"),
        })?;
        serde_json::from_str(&text).map_err(|e| AppError::Results {
            file: path.display().to_string(),
            line: e.line(),
            detail: e.to_string(),
        })
    }
}
