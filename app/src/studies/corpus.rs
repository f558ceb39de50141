//! The instances the studies share: operator windows cut from real zoo models (several
//! batch / KV / HBM settings), small enough to solve exactly, and seeded random instances.

use elk_model::build::{build_instance, InstanceOptions, OpRange};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{self, ZooParams};
use elk_stage::corpus::{random_instance, RandomSpec};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};

/// Operator windows per (model, setting): (start, len) within the first layer.
const WINDOWS: [(usize, usize); 2] = [(0, 16), (16, 16)];

/// Real sub-instances: models × settings × windows, free load order.
pub fn real(plans: Option<&PlanCache>) -> elk_model::Result<Vec<Instance>> {
    let models = [
        "llama2-7b",
        "llama2-13b",
        "opt-1.3b",
        "gemma2-27b",
        "bert-base",
    ];
    // (batch, kv, HBM TB/s)
    let settings = [(8u64, 512u64, 4.0f64), (32, 2048, 16.0)];
    let mut out = Vec::new();
    for model in models {
        for &(batch, kv, tbps) in &settings {
            let mut params = ZooParams::new(Mode::Decode, batch, kv);
            params.layers = Some(1);
            let graph = zoo::build(model, &params)?;
            let mut chip = ChipSpec::preset("ipu-pod4")?;
            chip.hbm.bandwidth_bytes_per_s = tbps * 1e12;
            for &(start, len) in &WINDOWS {
                let end = (start + len).min(graph.ops.len());
                if end <= start + 2 {
                    continue;
                }
                let opts = InstanceOptions {
                    range: OpRange::Ops(start..end),
                    load_order: LoadOrder::Named(NamedOrder::Free),
                    plan_cache: plans.cloned(),
                    ..InstanceOptions::default()
                };
                let mut inst = build_instance(&graph, &chip, &opts)?;
                inst.name = format!("{model} B{batch} KV{kv} {tbps} TB/s ops {start}..{end}");
                out.push(inst);
            }
        }
    }
    Ok(out)
}

/// Whole first layers (several HBM-heavy blocks each, so preload orders matter), free order.
pub fn layers(plans: Option<&PlanCache>) -> elk_model::Result<Vec<Instance>> {
    let mut out = Vec::new();
    for model in ["llama2-7b", "llama2-13b"] {
        for &(batch, kv, tbps) in &[(8u64, 512u64, 4.0f64), (32, 2048, 16.0)] {
            let mut params = ZooParams::new(Mode::Decode, batch, kv);
            params.layers = Some(2);
            let graph = zoo::build(model, &params)?;
            let mut chip = ChipSpec::preset("ipu-pod4")?;
            chip.hbm.bandwidth_bytes_per_s = tbps * 1e12;
            let opts = InstanceOptions {
                range: OpRange::Layers(0..1),
                load_order: LoadOrder::Named(NamedOrder::Free),
                plan_cache: plans.cloned(),
                ..InstanceOptions::default()
            };
            let mut inst = build_instance(&graph, &chip, &opts)?;
            inst.name = format!("{model} B{batch} KV{kv} {tbps} TB/s layer 0");
            out.push(inst);
        }
    }
    Ok(out)
}

/// Random instances: the shared corpus's study spec (6–10 operators, 1–4 options, tight
/// SRAM, free order), seeds 0..count.
pub fn random(count: u64) -> Vec<Instance> {
    (0..count)
        .map(|seed| random_instance(seed, &RandomSpec::study()))
        .collect()
}
