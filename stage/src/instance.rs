//! The stage-model problem (SPEC §4) as data: the `elk-instance/1` exchange format, built
//! from (graph, chip, cost model) by `elk-model`, with [`Instance::builder`], or read from a
//! file. Every method solves an [`Instance`]; the simulator judges
//! [`crate::schedule::Schedule`]s against it.

mod builder;
mod file;
mod noc_row;
pub mod parallel;

pub use builder::InstanceBuilder;
pub use file::{label, ChipRef, InstanceFile};
pub use noc_row::NocRow;
pub use parallel::{Member, MemberCycles, ParallelSet, INSTANCE_FORMAT_PARALLEL};

use crate::error::{Result, StageError};
use crate::period::{detect_period, LayerStructure};
use crate::units::{Bytes, Cycles, OpId, Stage};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
                    StageError::Invalid(format!(
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
    pub cold: Bytes,
    /// Execution footprint, bytes per core.
    pub hot: Bytes,
    /// comp + comm (incl. warm-up): the executing operator's path.
    pub exec_cycles: Cycles,
    /// NoC busy cycles of the executing operator.
    pub comm_cycles: Cycles,
    /// ν: NoC cycles per HBM cycle of this option's load (ρ · B_HBM / B_NoC,dist).
    pub noc_per_hbm: f64,
    /// A parallel set's option: the cores of each member's group, in member order
    /// (docs/core-groups.md); absent for every other operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<u64>>,
    /// A parallel set's option: each member's cycles on its group and the dispatch and
    /// combine (docs/core-groups.md §CG-2.4), which the detailed replay runs region by
    /// region; absent for every other operator, and in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<MemberCycles>,
}

/// One operator of the stage model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceOp {
    /// Operator name.
    pub name: String,
    /// H: HBM cycles of its load (0 without HBM data).
    pub hbm_cycles: Cycles,
    /// Its options. Shared: the instances of one model's steps or cuts clone their operators
    /// by the thousand (`elk-opt moe` builds several per routing step), and an operator's
    /// options depend on its shape and the chip only. Change one with [`Arc::make_mut`].
    #[serde(with = "shared_options")]
    pub options: Arc<Vec<OpOption>>,
    /// FLOPs (optional; lets the simulator report achieved FLOP/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
    /// This operator's own preload window W_j: its load starts no earlier than W_j stages
    /// before the stage it runs in, on top of the instance's W. For loads that can start only
    /// once something is known at run time: an MoE expert fetched on demand waits for its
    /// layer's router (docs/moe.md). Relative to the operator, so a cut instance keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preload_window: Option<u32>,
    /// A parallel set: independent chains of graph operators, each on its own group of
    /// cores (docs/core-groups.md); absent for an ordinary operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelSet>,
}

impl InstanceOp {
    /// Its options to change: its own copy if another instance shares them.
    pub fn options_mut(&mut self) -> &mut Vec<OpOption> {
        Arc::make_mut(&mut self.options)
    }
}

/// The stage model of SPEC §4.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// `elk-instance/1`.
    pub format: String,
    /// What it was built from.
    pub name: String,
    /// SRAM per core.
    pub sram_bytes: Bytes,
    /// Clock in Hz (cycles → seconds).
    pub clock_hz: f64,
    /// The load-order policy.
    pub load_order: LoadOrder,
    /// W: every load starts at stage ≥ (its stage) − W, when set.
    pub preload_window: Option<u32>,
    /// The NoC row of its stage durations (absent: SPEC §4's).
    #[serde(default, skip_serializing_if = "NocRow::is_spec")]
    pub noc_row: NocRow,
    /// Operators in execution order; [`Stage::of_op`] is the stage each executes in.
    pub ops: Vec<InstanceOp>,
}

impl Instance {
    /// Parses an instance file's text; `file` names it in errors. The chip the file
    /// records, if any, is checked and dropped ([`InstanceFile`] keeps it).
    pub fn from_json(file: &str, text: &str) -> Result<Instance> {
        InstanceFile::from_json(file, text).map(|f| f.instance)
    }

    /// Reads an instance file.
    pub fn read(path: &std::path::Path) -> Result<Instance> {
        let text = crate::error::read_file(path)?;
        Instance::from_json(&path.display().to_string(), &text)
    }

    /// The file text (compact JSON; f64 printed shortest-exact, so it round-trips).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| StageError::Json {
            file: self.name.clone(),
            detail: format!("cannot encode: {e}"),
        })
    }

    /// The instance's identity: `fnv1a64:…` over its compact JSON without the `name` (and
    /// without the chip a file may record), so renaming an instance keeps its hash and any
    /// change to the stage model (SRAM, clock, policy, window, an operator's H or options)
    /// changes it. Schedules written by the CLI carry it (`instance_hash`).
    pub fn content_hash(&self) -> String {
        /// Every field but the name, in file order.
        #[derive(Serialize)]
        struct Content<'a> {
            format: &'a str,
            sram_bytes: Bytes,
            clock_hz: f64,
            load_order: LoadOrder,
            preload_window: Option<u32>,
            #[serde(skip_serializing_if = "NocRow::is_spec")]
            noc_row: NocRow,
            ops: &'a [InstanceOp],
        }
        let Instance {
            format,
            name: _,
            sram_bytes,
            clock_hz,
            load_order,
            preload_window,
            noc_row,
            ops,
        } = self;
        crate::hash::of_json(&Content {
            format,
            sram_bytes: *sram_bytes,
            clock_hz: *clock_hz,
            load_order: *load_order,
            preload_window: *preload_window,
            noc_row: *noc_row,
            ops,
        })
    }

    /// A builder that checks the instance at `build()` (the rules `from_json` checks).
    pub fn builder(name: &str, sram: Bytes, clock_hz: f64) -> InstanceBuilder {
        InstanceBuilder::new(name, sram, clock_hz)
    }

    /// Checks the rules a file must meet; `file` names it in errors.
    pub fn check(&self, file: &str) -> Result<()> {
        let bad = |detail: String| StageError::Rule {
            file: file.into(),
            what: "instance",
            detail,
        };
        let sets = self.ops.iter().any(|op| op.parallel.is_some());
        match self.format.as_str() {
            INSTANCE_FORMAT if sets => {
                return Err(bad(format!(
                    "format '{INSTANCE_FORMAT}' has no parallel sets: an instance with them is '{INSTANCE_FORMAT_PARALLEL}'"
                )))
            }
            INSTANCE_FORMAT | INSTANCE_FORMAT_PARALLEL => {}
            other => {
                return Err(bad(format!(
                    "format '{other}': expected '{INSTANCE_FORMAT}' or '{INSTANCE_FORMAT_PARALLEL}'"
                )))
            }
        }
        if !(self.clock_hz.is_finite() && self.clock_hz > 0.0) {
            return Err(bad("clock_hz must be positive".into()));
        }
        if sets {
            if let Some(why) = parallel::duplicate(&self.ops) {
                return Err(bad(why));
            }
        }
        if self.preload_window == Some(0) {
            if let Some((i, op)) = self
                .ops
                .iter()
                .enumerate()
                .find(|(_, op)| op.hbm_cycles > Cycles::ZERO)
            {
                return Err(bad(format!(
                    "preload_window 0 leaves every load no stage (ops[{i}] ({}) is one): a load \
                     works in the stages before its operator's, so W must be 1 or more",
                    op.name
                )));
            }
        }
        for (i, op) in self.ops.iter().enumerate() {
            if op.options.is_empty() {
                return Err(bad(format!("ops[{i}] ({}): no options", op.name)));
            }
            if !(op.hbm_cycles.is_finite() && op.hbm_cycles >= Cycles::ZERO) {
                return Err(bad(format!(
                    "ops[{i}] ({}): hbm_cycles must be ≥ 0",
                    op.name
                )));
            }
            if op.preload_window == Some(0) && op.hbm_cycles > Cycles::ZERO {
                return Err(bad(format!(
                    "ops[{i}] ({}): preload_window 0 leaves its load no stage",
                    op.name
                )));
            }
            if let Some(why) = parallel::violation(i, op) {
                return Err(bad(why));
            }
            for (o, opt) in op.options.iter().enumerate() {
                let ok = [
                    opt.exec_cycles.get(),
                    opt.comm_cycles.get(),
                    opt.noc_per_hbm,
                ]
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
    pub fn ms(&self, cycles: Cycles) -> f64 {
        cycles.ms(self.clock_hz)
    }

    /// The operator `j`.
    #[inline]
    pub fn op(&self, j: OpId) -> &InstanceOp {
        &self.ops[j.index()]
    }

    /// Operator ids in execution order.
    pub fn op_ids(&self) -> impl Iterator<Item = OpId> {
        (0..self.ops.len()).map(OpId)
    }

    /// Operator `j` has HBM data to load (H > 0).
    #[inline]
    pub fn is_load(&self, j: OpId) -> bool {
        self.op(j).hbm_cycles > Cycles::ZERO
    }

    /// The earliest stage in which load `j` may work: the preload window W lets it start no
    /// earlier than W stages before the stage its operator runs in (the prologue without a
    /// window); the operator's own window W_j (a load released at run time) likewise. The
    /// one statement of both rules; the oracles (`validate`, the brute force) keep their own
    /// deliberate copies.
    #[inline]
    pub fn window_start(&self, j: OpId) -> Stage {
        let runs_in = Stage::of_op(j).index();
        let from = |w: Option<u32>| w.map_or(0, |w| runs_in.saturating_sub(w as usize));
        Stage(from(self.preload_window).max(from(self.op(j).preload_window)))
    }

    /// The repeating layer structure of the operators, detected from their loads and options
    /// (instances carry no layer annotations).
    pub fn layers(&self) -> LayerStructure {
        detect_period(&self.op_classes())
    }

    /// Per operator, the index of its class: operators with identical loads and options (what
    /// identical plan tables give) share one, numbered in order of first appearance.
    pub fn op_classes(&self) -> Vec<usize> {
        let mut interned = std::collections::HashMap::new();
        self.ops
            .iter()
            .map(|op| {
                let key: Vec<u64> = std::iter::once(op.hbm_cycles.get().to_bits())
                    .chain(op.options.iter().flat_map(|o| {
                        [
                            o.cold.get(),
                            o.hot.get(),
                            o.exec_cycles.get().to_bits(),
                            o.comm_cycles.get().to_bits(),
                            o.noc_per_hbm.to_bits(),
                        ]
                    }))
                    .collect();
                let next = interned.len();
                *interned.entry(key).or_insert(next)
            })
            .collect()
    }

    /// [`Instance::loads`] as bare indices, for engines that index their own per-operator
    /// tables (MILP columns, SMT constants).
    pub fn load_indices(&self) -> Vec<usize> {
        self.loads().into_iter().map(OpId::index).collect()
    }

    /// Operators with HBM data (`hbm_cycles > 0`), in execution order.
    pub fn loads(&self) -> Vec<OpId> {
        self.op_ids().filter(|&j| self.is_load(j)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst() -> Instance {
        Instance::builder("t", Bytes(10), 1e9)
            .op("a", Cycles(5.0), vec![OpOption::new(1, 2, 10.0, 0.5, 0.25)])
            .op("b", Cycles(0.0), vec![OpOption::new(0, 3, 7.0, 0.0, 0.0)])
            .build()
            .unwrap()
    }

    #[test]
    fn a_window_of_zero_is_refused_where_it_leaves_a_load_no_stage() {
        let check = |change: fn(&mut Instance)| {
            let mut i = inst();
            change(&mut i);
            i.check("w.json").err().map(|e| e.to_string())
        };
        let whole = check(|i| i.preload_window = Some(0)).unwrap();
        assert!(
            whole.contains("w.json")
                && whole
                    .contains("preload_window 0 leaves every load no stage (ops[0] (a) is one)"),
            "{whole}"
        );
        let own = check(|i| i.ops[0].preload_window = Some(0)).unwrap();
        assert!(
            own.contains("ops[0] (a): preload_window 0 leaves its load no stage"),
            "{own}"
        );
        // Without a load a window of 0 costs nothing; 1 leaves the load its stage before.
        assert_eq!(check(|i| i.ops[1].preload_window = Some(0)), None);
        assert_eq!(check(|i| i.preload_window = Some(1)), None);
    }

    #[test]
    fn the_content_hash_is_fixed_by_the_content_and_not_the_name() {
        let i = inst();
        // Pinned (and checked by hand over the JSON without the name): the hash is part of the
        // file format, so it may not drift between builds.
        assert_eq!(i.content_hash(), "fnv1a64:3f9632759e373a0a");
        let mut renamed = i.clone();
        renamed.name = "another name".into();
        assert_eq!(renamed.content_hash(), i.content_hash());
        let reread = Instance::from_json("t", &i.to_json().unwrap()).unwrap();
        assert_eq!(reread.content_hash(), i.content_hash());
        let changes: [fn(&mut Instance); 6] = [
            |i| i.sram_bytes = Bytes(11),
            |i| i.clock_hz = 2e9,
            |i| i.load_order = LoadOrder::Named(NamedOrder::Free),
            |i| i.preload_window = Some(1),
            |i| i.ops[0].hbm_cycles = Cycles(5.5),
            |i| i.ops[1].options_mut()[0].hot = Bytes(4),
        ];
        for change in changes {
            let mut other = i.clone();
            change(&mut other);
            assert_ne!(other.content_hash(), i.content_hash(), "{other:?}");
        }
    }
}

/// (De)serialises [`InstanceOp::options`] as the plain list it is in a file.
mod shared_options {
    use super::OpOption;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(options: &Arc<Vec<OpOption>>, s: S) -> Result<S::Ok, S::Error> {
        options.as_slice().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Vec<OpOption>>, D::Error> {
        Vec::<OpOption>::deserialize(d).map(Arc::new)
    }
}
