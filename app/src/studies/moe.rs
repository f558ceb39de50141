//! Study `moe`: how does static (inductive, ahead-of-time) preloading cope with run-time
//! expert choice, and would a hybrid of precomputed plans and a run-time choice close the gap?
//! (docs/moe.md.)
//!
//! Mixtral-8x7B (8 experts, top-2) and Qwen3-30B-A3B (128 fine-grained experts, top-8),
//! decode at batches 1, 8 and 64, under uniform and Zipf-skewed routing, on ipu-pod4 and
//! ipu-mk2. Every policy is scheduled per sampled step (the best judged heuristic) and set
//! against the oracle, which knows the step's routing, and the step's certified bound. One
//! figure per model and chip, one panel per routing: each policy's mean makespan with the
//! steps' p50 to p99, the bound as a band. This is its run, one [`Run`] per configuration;
//! its report is `elk_reports::studies::moe`.

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
pub const MODELS: [&str; 2] = ["mixtral-8x7b", "qwen3-30b-a3b"];
/// The chips.
pub const CHIPS: [&str; 2] = ["ipu-pod4", "ipu-mk2"];
/// The batches.
pub const BATCHES: [u64; 3] = [1, 8, 64];
/// The routings.
pub const ROUTINGS: [&str; 2] = ["uniform", "zipf:1.2"];
/// Steps per configuration (seed 1): enough for the mean within about 1 % here (the
/// per-step spread is in the JSON of `elk-opt moe`), few enough for `make reports`. At
/// batch 64 nearly every expert has tokens in every step, so 4 steps say as much.
pub fn steps_for(batch: u64) -> usize {
    if batch >= 64 {
        4
    } else {
        10
    }
}
/// The KV length.
pub const KV: u64 = 2048;

/// One configuration's run.
pub struct Run {
    /// The model, of [`MODELS`].
    pub model: &'static str,
    /// The chip, of [`CHIPS`].
    pub chip: &'static str,
    /// The routing, of [`ROUTINGS`].
    pub routing: &'static str,
    /// The batch, of [`BATCHES`].
    pub batch: u64,
    /// What the policies did (with parallel sets: its `expert_parallel`).
    pub report: MoeReport,
}

/// The policies of a model with top-k routing: load-all, on-demand, the hybrid with k and 2k
/// predicted experts per layer, and the oracle.
fn policies(top_k: u64) -> Vec<Policy> {
    vec![
        Policy::LoadAll,
        Policy::OnDemand,
        Policy::Predicted(top_k as usize),
        Policy::Predicted(2 * top_k as usize),
        Policy::Oracle,
    ]
}

/// Runs the study, each configuration a step of `progress`; instances are planned through
/// `plans`.
pub fn run(plans: Option<&PlanCache>, progress: &OnStep<'_>) -> Result<Vec<Run>> {
    let total = MODELS.len() * CHIPS.len() * ROUTINGS.len() * BATCHES.len();
    let steps = Steps::new(total, progress);
    let mut cells = Vec::with_capacity(total);
    for model_name in MODELS {
        let model = zoo::find(model_name)?;
        let top_k = model.moe().map_or(1, |m| m.top_k);
        for chip_name in CHIPS {
            let chip = ChipSpec::preset(chip_name)?;
            for routing in ROUTINGS {
                for batch in BATCHES {
                    let what = format!("{model_name} on {chip_name}, {routing}, B{batch}");
                    steps.starting(&what);
                    let spec = MoeSpec {
                        params: ZooParams::new(Mode::Decode, batch, KV),
                        chip: chip.clone(),
                        opts: InstanceOptions {
                            plan_cache: plans.cloned(),
                            load_order: elk_stage::instance::LoadOrder::Named(
                                elk_stage::instance::NamedOrder::Free,
                            ),
                            // Every step with and without parallel sets.
                            parallel: true,
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
                        routing,
                        batch,
                        report,
                    });
                }
            }
        }
    }
    Ok(cells)
}
