//! A solution of the stage model (SPEC §4.1): the `elk-schedule/1` exchange format, and the
//! helper heuristics use to turn decisions into load work.

mod fill;

pub use fill::{fill_load_work, FillError};

use crate::error::{Result, StageError};
use crate::instance::Instance;
use crate::units::{Cycles, OpId, Stage};
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

/// One entry of the sparse load work: `cycles` of operator `op`'s load done in `stage`.
/// In files it is the array `[op, stage, cycles]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "(OpId, Stage, Cycles)", into = "(OpId, Stage, Cycles)")]
pub struct Work {
    /// The operator whose data is loaded.
    pub op: OpId,
    /// The stage it is loaded in.
    pub stage: Stage,
    /// HBM cycles of work.
    pub cycles: Cycles,
}

impl From<(OpId, Stage, Cycles)> for Work {
    fn from((op, stage, cycles): (OpId, Stage, Cycles)) -> Work {
        Work { op, stage, cycles }
    }
}

impl From<Work> for (OpId, Stage, Cycles) {
    fn from(w: Work) -> (OpId, Stage, Cycles) {
        (w.op, w.stage, w.cycles)
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
    pub load_order: Vec<OpId>,
    /// Sparse load work.
    pub load_work: Vec<Work>,
    /// The method's own claim of the makespan (the simulator's is authoritative).
    pub makespan_cycles: Cycles,
    /// The method's claim.
    pub status: Status,
    /// A proven lower bound, if the method has one.
    pub lower_bound_cycles: Option<Cycles>,
}

impl Schedule {
    /// A heuristic's schedule of `inst` (no bound): the method's decisions and its own claim
    /// of the makespan. Set `status` and `lower_bound_cycles` for exact methods.
    pub fn new(
        inst: &Instance,
        method: &str,
        options: Vec<usize>,
        load_order: Vec<OpId>,
        load_work: Vec<Work>,
        makespan: Cycles,
    ) -> Schedule {
        Schedule {
            format: SCHEDULE_FORMAT.into(),
            instance: inst.name.clone(),
            method: method.into(),
            options,
            load_order,
            load_work,
            makespan_cycles: makespan,
            status: Status::Heuristic,
            lower_bound_cycles: None,
        }
    }

    /// Parses a schedule file's text; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<Schedule> {
        let s: Schedule = serde_json::from_str(text).map_err(|e| StageError::Json {
            file: file.into(),
            detail: e.to_string(),
        })?;
        if s.format != SCHEDULE_FORMAT {
            return Err(StageError::Json {
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
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| StageError::Json {
            file: self.instance.clone(),
            detail: format!("cannot encode the schedule: {e}"),
        })
    }
}
