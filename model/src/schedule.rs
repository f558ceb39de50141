//! A solution of the stage model (SPEC §4.1): the `elk-schedule/1` exchange format, and the
//! helper heuristics use to turn decisions into load work.

mod fill;

pub use fill::{fill_load_work, FillError};

use crate::error::{ModelError, Result};
use serde::{Deserialize, Serialize};

/// The format tag of schedule files.
pub const SCHEDULE_FORMAT: &str = "elk-schedule/1";

/// How good the method claims the schedule is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Proven optimal.
    Optimal,
    /// Feasible, with a proven bound.
    Feasible,
    /// From a heuristic.
    Heuristic,
}

/// One entry of the sparse load work: `[op, stage, cycles]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Work(pub usize, pub usize, pub f64);

impl Work {
    /// The operator whose data is loaded.
    pub fn op(&self) -> usize {
        self.0
    }
    /// The stage it is loaded in (0 = prologue, k ≥ 1 while `ops[k-1]` executes).
    pub fn stage(&self) -> usize {
        self.1
    }
    /// HBM cycles of work.
    pub fn cycles(&self) -> f64 {
        self.2
    }
}

/// A schedule of an instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// `elk-schedule/1`.
    pub format: String,
    /// The instance's name (or hash).
    pub instance: String,
    /// The method that produced it.
    pub method: String,
    /// Option index per operator.
    pub options: Vec<usize>,
    /// Operators with HBM data, in load order.
    pub load_order: Vec<usize>,
    /// Sparse load work.
    pub load_work: Vec<Work>,
    /// The method's own claim of the makespan (the simulator's is authoritative).
    pub makespan_cycles: f64,
    /// The method's claim.
    pub status: Status,
    /// A proven lower bound, if the method has one.
    pub lower_bound_cycles: Option<f64>,
}

impl Schedule {
    /// Parses a schedule file's text; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<Schedule> {
        let s: Schedule = serde_json::from_str(text).map_err(|e| ModelError::GraphJson {
            file: file.into(),
            detail: e.to_string(),
        })?;
        if s.format != SCHEDULE_FORMAT {
            return Err(ModelError::GraphJson {
                file: file.into(),
                detail: format!("format '{}': expected '{SCHEDULE_FORMAT}'", s.format),
            });
        }
        Ok(s)
    }

    /// Reads a schedule file.
    pub fn read(path: &std::path::Path) -> Result<Schedule> {
        let text = crate::error::read_file(path)?;
        Schedule::from_json(&path.display().to_string(), &text)
    }

    /// The file text (compact JSON, shortest-exact f64: round-trips byte for byte).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
