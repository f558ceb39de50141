//! A decode step is never faster at a larger batch (issue 45, item 1): on a sample of zoo
//! models and chip presets, the best judged schedule's makespan over every heuristic does not
//! fall as the batch doubles from 1 to 64. Under the artifact's whole-chip floor it did:
//! Mistral-7B on ipu-pod4 took 12.3 ms at batch 1 and 4.3 ms at 32 (docs/plans.md, "Why a
//! decode step was faster at a larger batch").

use elk_app::compare::all_heuristics;
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{ZooModel, ZooParams};
use std::path::Path;

/// The best judged makespan (cycles) of one layer of `model` at `batch` on `chip`, or `None`
/// when no plan fits.
fn best_makespan(model: &str, chip: &ChipSpec, batch: u64) -> Option<f64> {
    let mut params = ZooParams::new(Mode::Decode, batch, 2048);
    params.layers = Some(1);
    let graph = ZooModel::load(model).unwrap().build(&params).unwrap();
    let opts = InstanceOptions {
        plan_cache: Some(PlanCache::at(
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("batch-monotone-plans"),
        )),
        ..InstanceOptions::default()
    };
    let inst = match build_instance(&graph, chip, &opts) {
        Ok(inst) => inst,
        Err(elk_model::ModelError::NoPlanFits { .. }) => return None,
        Err(e) => panic!("{model} B{batch} on {}: {e}", chip.name),
    };
    let (rows, _) = all_heuristics(&inst, &|_, _, _| {}).unwrap();
    rows.iter()
        .filter_map(|r| r.makespan_cycles)
        .map(|c| c.get())
        .min_by(f64::total_cmp)
}

#[test]
fn a_decode_step_is_never_faster_at_a_larger_batch() {
    let sample = [
        ("mistral-7b", "ipu-pod4"),
        ("llama2-7b", "ipu-mk2"),
        ("mixtral-8x7b", "ipu-pod4"),
        ("qwen3-30b-a3b", "ipu-mk2"),
        ("olmoe-1b-7b", "tt-blackhole-like"),
        ("opt-1.3b", "ipu-pod4"),
    ];
    let mut pairs = 0;
    for (model, chip) in sample {
        let chip = ChipSpec::preset(chip).unwrap();
        let mut last: Option<(u64, f64)> = None;
        for batch in [1u64, 2, 4, 8, 16, 32, 64] {
            let Some(t) = best_makespan(model, &chip, batch) else {
                continue;
            };
            if let Some((b, before)) = last {
                assert!(
                    t >= before,
                    "{model} on {}: batch {batch} takes {t:.0} cycles, batch {b} {before:.0}",
                    chip.name
                );
                pairs += 1;
            }
            last = Some((batch, t));
        }
    }
    // Most points build (the largest batches may not fit a small chip's SRAM).
    assert!(pairs >= 30, "only {pairs} batch pairs compared");
}
