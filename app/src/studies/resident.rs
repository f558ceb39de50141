//! Study `resident`: which experts of a DeepSeek-class model should stay in SRAM across decode
//! steps, how many pay off, and how far the choice is from an oracle that knows the routing?
//! (docs/moe.md, "Resident experts".)
//!
//! DeepSeek-V2-Lite and DeepSeek-V3 decode at batches 1, 8 and 64 (V3 under its own
//! group-limited routing, V2-Lite, which has no groups, under Zipf-skewed routing), on
//! ipu-pod4 and on the same chip with four times its SRAM per core (a chip whose SRAM holds a
//! sizeable share of a layer's experts). Policies: load-all,
//! on-demand, predicted-k, resident-auto and the oracle, each scheduled per sampled step (the
//! best judged heuristic) and set against the oracle and the step's certified bound.
//! resident-auto's calibration is the curve of "how many resident experts pay off". This is
//! its run, one [`Run`] per configuration; its report is `elk_reports::studies::resident`.

use super::{OnStep, Steps};
use crate::moe::{run_with_bound, MoeReport, MoeSpec, StepBound};
use crate::Result;
use elk_model::build::InstanceOptions;
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::load_policy::Policy;
use elk_model::plan::PlanCache;
use elk_model::routing::Routing;
use elk_model::zoo::{self, ZooParams};

/// The models.
pub const MODELS: [&str; 2] = ["deepseek-v2-lite", "deepseek-v3"];
/// The chips: ipu-pod4, and ipu-pod4 with [`SRAM_SCALE`] times its SRAM per core.
pub const CHIPS: [&str; 2] = ["ipu-pod4", BIG_SRAM];
/// The chip with more SRAM: a hypothetical ipu-pod4 whose cores have [`SRAM_SCALE`] times
/// the SRAM (2.5 MB each, 15 GB in all).
pub const BIG_SRAM: &str = "ipu-pod4-sram4x";
/// How much more SRAM per core [`BIG_SRAM`] has.
pub const SRAM_SCALE: u64 = 4;
/// The batches.
pub const BATCHES: [u64; 3] = [1, 8, 64];
/// The routing of a model whose router limits tokens to groups of experts (DeepSeek-V3):
/// its own group-limited routing (docs/moe.md).
pub const GROUPED: &str = "grouped";
/// The routing of a model without groups (DeepSeek-V2-Lite routes greedily over all 64):
/// the same skewed popularities without groups.
pub const UNGROUPED: &str = "zipf:1.2";

/// The routing of `model`: [`GROUPED`] where its router has groups, else [`UNGROUPED`].
pub fn routing_for(model: &elk_model::zoo::ZooModel) -> &'static str {
    match model.moe().and_then(|m| m.groups) {
        Some(_) => GROUPED,
        None => UNGROUPED,
    }
}
/// The KV length.
pub const KV: u64 = 2048;

/// Steps per configuration (seed 1); at batch 64 fewer, as in study `moe`.
pub fn steps_for(batch: u64) -> usize {
    if batch >= 64 {
        4
    } else {
        10
    }
}

/// One configuration's run.
pub struct Run {
    /// The model, of [`MODELS`].
    pub model: &'static str,
    /// The chip, of [`CHIPS`].
    pub chip: &'static str,
    /// The batch, of [`BATCHES`].
    pub batch: u64,
    /// The routing ([`routing_for`] the model).
    pub routing: &'static str,
    /// What the policies did (resident-auto's set and calibration in `resident`).
    pub report: MoeReport,
}

/// The chip named `name`, of [`CHIPS`].
pub fn chip(name: &str) -> Result<ChipSpec> {
    if name != BIG_SRAM {
        return Ok(ChipSpec::preset(name)?);
    }
    let mut chip = ChipSpec::preset("ipu-pod4")?;
    chip.sram_bytes_per_core *= SRAM_SCALE;
    chip.name = BIG_SRAM.into();
    chip.description = format!(
        "ipu-pod4 with {SRAM_SCALE}× the SRAM per core (hypothetical: a chip whose SRAM holds \
         a sizeable share of a layer's experts)"
    );
    Ok(chip)
}

/// The policies of a model with top-k routing.
fn policies(top_k: u64) -> Vec<Policy> {
    vec![
        Policy::LoadAll,
        Policy::OnDemand,
        Policy::Predicted(top_k as usize),
        Policy::ResidentAuto,
        Policy::Oracle,
    ]
}

/// Runs the study, each configuration a step of `progress`; instances are planned through
/// `plans`.
pub fn run(plans: Option<&PlanCache>, progress: &OnStep<'_>) -> Result<Vec<Run>> {
    let total = MODELS.len() * CHIPS.len() * BATCHES.len();
    let steps = Steps::new(total, progress);
    let mut cells = Vec::with_capacity(total);
    for model_name in MODELS {
        let model = zoo::find(model_name)?;
        let top_k = model.moe().map_or(1, |m| m.top_k);
        let routing = routing_for(model);
        for chip_name in CHIPS {
            let chip = chip(chip_name)?;
            for batch in BATCHES {
                let what = format!("{model_name} on {chip_name}, B{batch}");
                steps.starting(&what);
                let spec = MoeSpec {
                    params: ZooParams::new(Mode::Decode, batch, KV),
                    chip: chip.clone(),
                    opts: InstanceOptions {
                        plan_cache: plans.cloned(),
                        load_order: elk_stage::instance::LoadOrder::Named(
                            elk_stage::instance::NamedOrder::Free,
                        ),
                        ..InstanceOptions::default()
                    },
                    routing: Routing::parse(routing)?,
                    steps: steps_for(batch),
                    seed: 1,
                    policies: policies(top_k),
                    methods: crate::moe::DEFAULT_METHODS.map(String::from).to_vec(),
                };
                let report = run_with_bound(model, &spec, StepBound::Strongest, &|_| {})?;
                steps.finished(&what);
                cells.push(Run {
                    model: model_name,
                    chip: chip_name,
                    batch,
                    routing,
                    report,
                });
            }
        }
    }
    Ok(cells)
}
