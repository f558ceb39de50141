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
    /// [`Instance::content_hash`] of the instance it was built for (optional: files without
    /// it still read; the CLI writes it into every schedule and `simulate` checks it first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_hash: Option<String>,
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
            instance_hash: None,
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
            return Err(StageError::Rule {
                file: file.into(),
                what: "schedule",
                detail: format!("format '{}': expected '{SCHEDULE_FORMAT}'", s.format),
            });
        }
        if let Some(h) = s
            .instance_hash
            .as_deref()
            .filter(|h| !crate::hash::is_well_formed(h))
        {
            return Err(StageError::Rule {
                file: file.into(),
                what: "schedule",
                detail: format!(
                    "instance_hash '{h}': expected {}<16 hex digits>",
                    crate::hash::PREFIX
                ),
            });
        }
        Ok(s)
    }

    /// Records `inst` as the instance this schedule is for: its name and its
    /// [`Instance::content_hash`].
    pub fn stamp(&mut self, inst: &Instance) {
        self.instance = inst.name.clone();
        self.instance_hash = Some(inst.content_hash());
    }

    /// Checks that the schedule was built for `inst`, when it says which instance it was
    /// built for by hash (a schedule without `instance_hash` passes: old files predate it).
    pub fn check_instance(&self, inst: &Instance) -> Result<()> {
        let Some(built_for) = &self.instance_hash else {
            return Ok(());
        };
        let this = inst.content_hash();
        if *built_for == this {
            return Ok(());
        }
        Err(StageError::WrongInstance(format!(
            "schedule was built for instance {built_for} ({}), this instance is {this} ({})",
            self.instance, inst.name
        )))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instance::OpOption;
    use crate::units::Bytes;

    fn inst(sram: u64) -> Instance {
        Instance::builder("t", Bytes(sram), 1e9)
            .op("a", Cycles(5.0), vec![OpOption::new(1, 2, 10.0, 0.0, 0.0)])
            .build()
            .unwrap()
    }

    fn schedule(inst: &Instance) -> Schedule {
        let work = vec![Work {
            op: OpId(0),
            stage: Stage(0),
            cycles: Cycles(5.0),
        }];
        Schedule::new(inst, "m", vec![0], vec![OpId(0)], work, Cycles(15.0))
    }

    #[test]
    fn the_instance_hash_round_trips_and_old_files_still_read() {
        let i = inst(10);
        let mut s = schedule(&i);
        let old = s.to_json().unwrap();
        assert!(!old.contains("instance_hash"));
        assert_eq!(Schedule::from_json("s", &old).unwrap(), s);
        s.stamp(&i);
        let text = s.to_json().unwrap();
        assert!(text.contains(&format!(r#""instance_hash":"{}""#, i.content_hash())));
        assert_eq!(Schedule::from_json("s", &text).unwrap(), s);
        let typo = text.replace("instance_hash", "instance_hsh");
        let err = Schedule::from_json("s", &typo).unwrap_err().to_string();
        assert!(err.contains("unknown field `instance_hsh`"), "{err}");
        let bad = text.replace(&i.content_hash(), "fnv1a64:12");
        let err = Schedule::from_json("s.json", &bad).unwrap_err().to_string();
        assert_eq!(
            err,
            "s.json: invalid schedule: instance_hash 'fnv1a64:12': expected fnv1a64:<16 hex digits>"
        );
    }

    #[test]
    fn a_schedule_is_checked_against_the_instance_it_was_built_for() {
        let (i, other) = (inst(10), inst(20));
        let mut s = schedule(&i);
        assert!(
            s.check_instance(&other).is_ok(),
            "no hash, nothing to check"
        );
        s.stamp(&i);
        assert!(s.check_instance(&i).is_ok());
        let mut renamed = i.clone();
        renamed.name = "renamed".into();
        assert!(
            s.check_instance(&renamed).is_ok(),
            "the name is not content"
        );
        let err = s.check_instance(&other).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "schedule was built for instance {} (t), this instance is {} (t)",
                i.content_hash(),
                other.content_hash()
            )
        );
    }
}
