//! The instance of a request: a model on a chip, cut to a range and built with the stage
//! model's choices.

use super::chip::{ChipRequest, ChosenChip, DramReaders, KeysInOrder};
use super::error::{RequestError, Result};
use super::model::{GraphConfig, ModelRequest, RunShape};
use super::notice::Notice;
use elk_model::build::{build_instance_with_stats, InstanceOptions, OpRange};
use elk_model::graph::Graph;
use elk_model::plan::{CacheStats, PlanCache};
use elk_stage::instance::{Instance, InstanceFile, LoadOrder, NamedOrder, NocRow};
use serde::Serialize;

/// An instance to build: every input `compare`, `gap`, `solve` and `instance` take besides
/// their own flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstanceRequest {
    /// The model.
    pub model: ModelRequest,
    /// The run it is built for.
    pub shape: RunShape,
    /// The chip.
    pub chip: ChipRequest,
    /// The part of the graph kept.
    pub cut: Cut,
    /// The stage-model choices.
    pub choices: StageChoices,
}

/// `--layers A..B` or `--ops A..B`, half-open (neither: the whole graph).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cut {
    /// Layers A to B−1 (`0..1` is layer 0).
    pub layers: Option<String>,
    /// Operators A to B−1.
    pub ops: Option<String>,
}

impl Cut {
    /// The operators kept; both cuts at once are refused.
    pub fn range(&self) -> Result<OpRange> {
        Ok(match (self.layers.as_deref(), self.ops.as_deref()) {
            (Some(_), Some(_)) => {
                return Err(RequestError::refused(
                    "--layers and --ops both cut the graph: give one",
                ))
            }
            (Some(l), None) => OpRange::Layers(OpRange::parse_range(l)?),
            (None, Some(o)) => OpRange::Ops(OpRange::parse_range(o)?),
            (None, None) => OpRange::All,
        })
    }
}

/// Why a preload window must be at least 1 stage, as every refusal of one says it.
pub const WINDOW_AT_LEAST_ONE: &str = "must be 1 or more (stages): a load works in the stages \
     before its operator's, so a window of 0 leaves it none";

/// The stage-model choices an instance is built with: load order, preload window, NoC row
/// and parallel sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageChoices {
    /// `--load-order`: free (Elk-Full may permute), fixed, or a maximum displacement.
    pub load_order: LoadOrder,
    /// `--window W`: every load starts at most W stages before its operator.
    pub window: Option<u32>,
    /// `--noc-row`: phased or SPEC §4's.
    pub noc_row: NocRow,
    /// `--expert-parallel`: parallel sets (docs/core-groups.md).
    pub expert_parallel: bool,
}

impl StageChoices {
    /// Refuses a preload window of 0 (`--window 0`, `window=0`): it leaves no load a stage.
    pub fn validate(&self) -> Result<()> {
        match self.window {
            Some(0) => Err(RequestError::refused(format!(
                "--window 0: {WINDOW_AT_LEAST_ONE}"
            ))),
            _ => Ok(()),
        }
    }
}

impl Default for StageChoices {
    /// Free load order, no window, the phased NoC row, no parallel sets.
    fn default() -> Self {
        StageChoices {
            load_order: LoadOrder::Named(NamedOrder::Free),
            window: None,
            noc_row: NocRow::Phased,
            expert_parallel: false,
        }
    }
}

/// A built instance with what it was built from.
#[derive(Debug)]
pub struct BuiltInstance {
    /// The instance, named with the chip's label.
    pub instance: Instance,
    /// The chip it was built for.
    pub chip: ChosenChip,
    /// The graph it was built from (the whole graph, before the cut).
    pub graph: Graph,
    /// What the plan cache served.
    pub cache: CacheStats,
}

impl BuiltInstance {
    /// The instance file: the instance with the record of its chip.
    pub fn file(&self) -> InstanceFile {
        InstanceFile {
            instance: self.instance.clone(),
            chip: Some(self.chip.record.clone()),
        }
    }
}

impl InstanceRequest {
    /// The same request without parallel sets: the other side of an `--expert-parallel`
    /// union (docs/core-groups.md, CG-5).
    pub fn without_sets(&self) -> InstanceRequest {
        let mut plain = self.clone();
        plain.choices.expert_parallel = false;
        plain
    }

    /// Resolves the chip, the cut and the graph (in that order, so a bad chip or range is
    /// refused before a model is built), then plans every operator: `notice` hears the
    /// warnings and the planning step.
    pub fn build(
        &self,
        plan_cache: Option<PlanCache>,
        notice: &mut dyn Notice,
    ) -> Result<BuiltInstance> {
        let chip = self.chip.resolve(notice)?;
        self.build_on(chip, plan_cache, notice)
    }

    /// [`InstanceRequest::build`] on `chip`, already resolved from the request's (one count
    /// of [`ChipRequest::each_reader_count`]).
    pub fn build_on(
        &self,
        chip: ChosenChip,
        plan_cache: Option<PlanCache>,
        notice: &mut dyn Notice,
    ) -> Result<BuiltInstance> {
        let range = self.cut.range()?;
        let graph = self.model.load_on(&self.shape, Some(&chip.spec), notice)?;
        notice.planning(&format!(
            "plan tables for {} on {}",
            graph.name,
            chip.label()
        ));
        let (instance, cache) = build_on(&graph, &chip, range, self.choices, plan_cache)?;
        notice.planned();
        Ok(BuiltInstance {
            instance,
            chip,
            graph,
            cache,
        })
    }

    /// The inputs as `--json` prints them in `config`.
    pub fn config(&self) -> InstanceConfig {
        InstanceConfig {
            graph: self.model.config(&self.shape),
            chip: self.chip.given.clone(),
            chip_keys: KeysInOrder(self.chip.keys.clone()),
            hbm_tbps: self.chip.hbm_tbps,
            dram_readers: self.chip.dram_readers.and_then(DramReaders::count),
            load_order: self.choices.load_order,
            layers: self.cut.layers.clone(),
            ops: self.cut.ops.clone(),
            preload_window_stages: self.choices.window,
            noc_row: self.choices.noc_row,
            expert_parallel: self.choices.expert_parallel,
        }
    }
}

/// The instance of `graph`'s operators in `range` on `chip`, named with the chip's label, and
/// what the plan cache served.
pub fn build_on(
    graph: &Graph,
    chip: &ChosenChip,
    range: OpRange,
    choices: StageChoices,
    plan_cache: Option<PlanCache>,
) -> Result<(Instance, CacheStats)> {
    let opts = InstanceOptions {
        range,
        load_order: choices.load_order,
        preload_window: choices.window,
        plan_cache,
        noc_row: choices.noc_row,
        parallel: choices.expert_parallel,
    };
    Ok(build_instance_with_stats(graph, &chip.named(), &opts)?)
}

/// What an instance is built from, as `--json` prints it in `config`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct InstanceConfig {
    #[serde(flatten)]
    graph: GraphConfig,
    /// `--chip`, as given.
    chip: String,
    /// The chip keys set besides the file's (Python's `Chip(**keys)`), in the order given;
    /// left out when none is.
    #[serde(skip_serializing_if = "KeysInOrder::is_empty")]
    chip_keys: KeysInOrder,
    /// `--hbm-tbps` (`null`: the chip's own bandwidth).
    hbm_tbps: Option<f64>,
    /// `--dram-readers K` (left out when not given, and with `auto`: each count's is in
    /// the results' `dram_reader_counts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    dram_readers: Option<u64>,
    load_order: LoadOrder,
    /// `--layers A..B` (half-open).
    layers: Option<String>,
    /// `--ops A..B` (half-open).
    ops: Option<String>,
    /// `--window W`.
    preload_window_stages: Option<u32>,
    /// `--noc-row`.
    noc_row: NocRow,
    /// `--expert-parallel`.
    expert_parallel: bool,
}
