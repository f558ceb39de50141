//! Study `ablation`: what each stage of Elk buys. As the artifact runs it: Elk-Full against
//! Elk-Dyn (no order permutation), Elk-Dyn without the NoC penalty π in its plan rule, and
//! with the preload depth capped at 1, 2 and 4 operators; then the paper's greedy cost-aware
//! allocator (`elk-dyn-greedy`, which the artifact never runs) with and without its
//! cold-layout trades (off: every operator keeps the fastest option that fits when it runs).
//! This is its run ([`Ablation`]); its report is `elk_reports::studies::ablation`.

use super::{OnStep, Steps};
use crate::cell::cell_instance;
use crate::grid::Cell;
use crate::Result;
use elk_heuristics::{by_name, ElkDyn, ElkDynGreedy};
use elk_model::plan::PlanCache;
use elk_stage::instance::Instance;
use elk_stage::method::Method;
use elk_stage::units::Cycles;

/// The variants, each a configured method run through the same trait as every other.
fn methods() -> Vec<(&'static str, Box<dyn Method>)> {
    let dyn_with = |cost_aware, max_depth| -> Box<dyn Method> {
        Box::new(ElkDynGreedy {
            cost_aware,
            max_depth,
        })
    };
    let named = |n: &str| by_name(n).expect("a registered heuristic");
    let faithful =
        |penalty, max_depth| -> Box<dyn Method> { Box::new(ElkDyn { penalty, max_depth }) };
    vec![
        ("elk-full", named("elk-full")),
        ("elk-dyn", named("elk-dyn")),
        ("elk-dyn, no π", faithful(false, None)),
        ("elk-dyn, depth ≤ 1", faithful(true, Some(1))),
        ("elk-dyn, depth ≤ 2", faithful(true, Some(2))),
        ("elk-dyn, depth ≤ 4", faithful(true, Some(4))),
        ("elk-dyn-greedy", dyn_with(true, None)),
        ("elk-dyn-greedy, no trades", dyn_with(false, None)),
    ]
}

/// The variants' labels, Elk-Full first (the reference of the others).
pub fn variants() -> Vec<&'static str> {
    methods().into_iter().map(|(label, _)| label).collect()
}

fn makespan(inst: &Instance, variant: &str) -> Result<Option<Cycles>> {
    let Some((_, m)) = methods().into_iter().find(|(label, _)| *label == variant) else {
        return Ok(None);
    };
    Ok(elk_heuristics::judged(inst, m.as_ref())?.map(|j| j.1))
}

/// The models, decode B32 KV2048 on ipu-pod4 (16 TB/s).
pub const MODELS: [&str; 3] = ["llama2-13b", "gemma2-27b", "llama2-70b"];

/// What the study measured.
pub struct Ablation {
    /// The variants, as [`variants`] lists them.
    pub variants: Vec<&'static str>,
    /// Per model of [`MODELS`], each variant's latency in ms (None: no schedule).
    pub times_ms: Vec<Vec<Option<f64>>>,
}

/// Runs the study, each (model, variant) a step of `progress`; instances are planned through
/// `plans`.
pub fn run(plans: Option<&PlanCache>, progress: &OnStep<'_>) -> Result<Ablation> {
    let vs = variants();
    let steps = Steps::new(MODELS.len() * vs.len(), progress);
    let mut times_ms = Vec::new();
    for model in MODELS {
        steps.starting(&format!("{model}: plan tables"));
        let cell = Cell::decode(model, 32, 2048);
        let inst = cell_instance(&cell, plans)?;
        let times: Vec<Option<f64>> = vs
            .iter()
            .map(|v| {
                steps.starting(&format!("{model}: {v}"));
                let t = makespan(&inst, v)?.map(|t| inst.ms(t));
                steps.finished(&format!("{model}: {v} done"));
                Ok(t)
            })
            .collect::<Result<_>>()?;
        times_ms.push(times);
    }
    Ok(Ablation {
        variants: vs,
        times_ms,
    })
}
