//! The stage-model problem (SPEC §4) as data: the `elk-instance/1` exchange format, built
//! from (graph, chip, cost model) or read from a file. Every method solves an [`Instance`];
//! the simulator judges [`crate::schedule::Schedule`]s against it.

mod build;

pub use build::{build_instance, noc_distribution_bytes_per_s, InstanceOptions, OpRange};

use crate::error::{ModelError, Result};
use serde::{Deserialize, Serialize};

/// The format tag of instance files.
pub const INSTANCE_FORMAT: &str = "elk-instance/1";

/// Which load orders a schedule may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LoadOrder {
    /// `"fixed"` (execution order) or `"free"` (any order).
    Named(NamedOrder),
    /// `{"max_displacement": D}`: each load within D places of its execution rank.
    Displacement {
        /// D.
        max_displacement: u32,
    },
}

/// The named load-order policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NamedOrder {
    /// Loads in execution order.
    Fixed,
    /// Any order.
    Free,
}

impl LoadOrder {
    /// Parses `fixed`, `free` or a displacement bound D.
    pub fn parse(s: &str) -> Result<LoadOrder> {
        match s {
            "fixed" => Ok(LoadOrder::Named(NamedOrder::Fixed)),
            "free" => Ok(LoadOrder::Named(NamedOrder::Free)),
            d => d
                .parse()
                .map(|max_displacement| LoadOrder::Displacement { max_displacement })
                .map_err(|_| {
                    ModelError::Invalid(format!(
                        "load order '{s}': expected fixed, free or a number"
                    ))
                }),
        }
    }
}

/// One execution option of an operator (one cold→hot table entry).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpOption {
    /// Cold footprint while waiting, bytes per core.
    pub cold: u64,
    /// Execution footprint, bytes per core.
    pub hot: u64,
    /// comp + comm (incl. warm-up), cycles: the executing operator's path.
    pub exec_cycles: f64,
    /// NoC busy cycles of the executing operator.
    pub comm_cycles: f64,
    /// ν: NoC cycles per HBM cycle of this option's load (ρ · B_HBM / B_NoC,dist).
    pub noc_per_hbm: f64,
}

/// One operator of the stage model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceOp {
    /// Operator name.
    pub name: String,
    /// H: HBM cycles of its load (0 without HBM data).
    pub hbm_cycles: f64,
    /// Its options.
    pub options: Vec<OpOption>,
    /// FLOPs (optional; lets the simulator report achieved FLOP/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
}

/// The stage model of SPEC §4.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// `elk-instance/1`.
    pub format: String,
    /// What it was built from.
    pub name: String,
    /// SRAM per core in bytes.
    pub sram_bytes: u64,
    /// Clock in Hz (cycles → seconds).
    pub clock_hz: f64,
    /// The load-order policy.
    pub load_order: LoadOrder,
    /// W: every load starts at stage ≥ (its stage) − W, when set.
    pub preload_window: Option<u32>,
    /// Operators in execution order; stage k ≥ 1 executes `ops[k-1]`.
    pub ops: Vec<InstanceOp>,
}

impl Instance {
    /// Parses an instance file's text; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<Instance> {
        let inst: Instance = serde_json::from_str(text).map_err(|e| ModelError::GraphJson {
            file: file.into(),
            detail: e.to_string(),
        })?;
        inst.check(file)?;
        Ok(inst)
    }

    /// Reads an instance file.
    pub fn read(path: &std::path::Path) -> Result<Instance> {
        let text = crate::error::read_file(path)?;
        Instance::from_json(&path.display().to_string(), &text)
    }

    /// The file text (compact JSON; f64 printed shortest-exact, so it round-trips).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    fn check(&self, file: &str) -> Result<()> {
        let bad = |detail: String| ModelError::GraphJson {
            file: file.into(),
            detail,
        };
        if self.format != INSTANCE_FORMAT {
            return Err(bad(format!(
                "format '{}': expected '{INSTANCE_FORMAT}'",
                self.format
            )));
        }
        if !(self.clock_hz.is_finite() && self.clock_hz > 0.0) {
            return Err(bad("clock_hz must be positive".into()));
        }
        for (i, op) in self.ops.iter().enumerate() {
            if op.options.is_empty() {
                return Err(bad(format!("ops[{i}] ({}): no options", op.name)));
            }
            if !(op.hbm_cycles.is_finite() && op.hbm_cycles >= 0.0) {
                return Err(bad(format!(
                    "ops[{i}] ({}): hbm_cycles must be ≥ 0",
                    op.name
                )));
            }
            for (o, opt) in op.options.iter().enumerate() {
                let ok = [opt.exec_cycles, opt.comm_cycles, opt.noc_per_hbm]
                    .iter()
                    .all(|v| v.is_finite() && *v >= 0.0);
                if !ok {
                    return Err(bad(format!(
                        "ops[{i}] ({}) options[{o}]: cycles and noc_per_hbm must be finite and ≥ 0",
                        op.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// Milliseconds of `cycles` at this instance's clock.
    pub fn ms(&self, cycles: f64) -> f64 {
        cycles / self.clock_hz * 1e3
    }

    /// The repeating layer structure of the operators, detected from their loads and options
    /// (instances carry no layer annotations).
    pub fn layers(&self) -> crate::graph::LayerStructure {
        let mut interned = std::collections::HashMap::new();
        let sigs: Vec<usize> = self
            .ops
            .iter()
            .map(|op| {
                let key: Vec<u64> = std::iter::once(op.hbm_cycles.to_bits())
                    .chain(op.options.iter().flat_map(|o| {
                        [
                            o.cold,
                            o.hot,
                            o.exec_cycles.to_bits(),
                            o.comm_cycles.to_bits(),
                            o.noc_per_hbm.to_bits(),
                        ]
                    }))
                    .collect();
                let next = interned.len();
                *interned.entry(key).or_insert(next)
            })
            .collect();
        crate::graph::detect_period(&sigs)
    }

    /// Operators with HBM data (`hbm_cycles > 0`), in execution order.
    pub fn loads(&self) -> Vec<usize> {
        (0..self.ops.len())
            .filter(|&j| self.ops[j].hbm_cycles > 0.0)
            .collect()
    }
}
