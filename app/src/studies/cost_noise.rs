//! Study `cost-noise`: plans made with wrong costs. Every option's compute and communication
//! cycles are perturbed by a seeded uniform factor in [1 − p, 1 + p] (p = 10 %, 20 %), each
//! method plans on the perturbed instance, and its schedule is evaluated on the true costs;
//! degradation = 100·(T_true(noisy plan) − T_true(true plan)) / T_true(true plan). This is
//! its run, one [`NoiseRow`] per (model, method); its report is
//! `elk_reports::studies::cost_noise`.

use super::{OnStep, Steps};
use crate::cell::cell_instance;
use crate::grid::Cell;
use crate::Result;
use elk_heuristics::by_name;
use elk_model::plan::PlanCache;
use elk_stage::corpus::Rng;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;
use rayon::prelude::*;

/// The faithful methods, and the greedy Elk-Full variant (its finer plans: is it more
/// fragile?).
pub const METHODS: [&str; 5] = ["basic", "static", "elk-dyn", "elk-full", "elk-full-greedy"];
/// The noise levels p: each cost is perturbed by a factor in [1 − p, 1 + p].
pub const LEVELS: [f64; 2] = [0.10, 0.20];
/// Seeds per noise level.
pub const SEEDS: u64 = 3;
/// The models: (zoo name, batch, KV length), decode on ipu-pod4.
pub const SETUPS: [(&str, u64, u64); 2] = [("llama2-7b", 8, 512), ("llama2-13b", 32, 2048)];

/// One (model, method): its plan on the true costs, and what noise costs it.
pub struct NoiseRow {
    /// The model, as [`SETUPS`] names it.
    pub model: &'static str,
    /// Its batch.
    pub batch: u64,
    /// Its KV length.
    pub kv: u64,
    /// The method's index in [`METHODS`].
    pub method: usize,
    /// The makespan of its plan on the true costs, ms.
    pub true_ms: f64,
    /// Per level of [`LEVELS`], the degradation of each seed's plan that has a schedule, % of
    /// `true_ms`, in seed order.
    pub degradation_pct: Vec<Vec<f64>>,
}

fn perturbed(inst: &Instance, p: f64, seed: u64) -> Instance {
    let mut rng = Rng::new(seed);
    let mut noisy = inst.clone();
    for op in &mut noisy.ops {
        for o in op.options_mut() {
            let comp =
                (o.exec_cycles - o.comm_cycles).max(Cycles::ZERO) * rng.uniform(1.0 - p, 1.0 + p);
            o.comm_cycles *= rng.uniform(1.0 - p, 1.0 + p);
            o.exec_cycles = comp + o.comm_cycles;
        }
    }
    noisy
}

fn true_makespan(inst: &Instance, planned_on: &Instance, m: &str) -> Result<Option<f64>> {
    let Some(method) = by_name(m) else {
        return Ok(None);
    };
    let Some((s, _)) = elk_heuristics::judged(planned_on, method.as_ref())? else {
        return Ok(None);
    };
    // Same options, loads and bytes: valid on the true instance too; judged there.
    Ok(elk_sim::judged_makespan(inst, &s).ok().map(Cycles::get))
}

/// Runs the study, each plan (true costs, or one noise level and seed) a step of `progress`;
/// instances are planned through `plans`. A method without a schedule on the true costs has
/// no row.
pub fn run(plans: Option<&PlanCache>, progress: &OnStep<'_>) -> Result<Vec<NoiseRow>> {
    let per_method = 1 + LEVELS.len() * SEEDS as usize;
    let steps = Steps::new(SETUPS.len() * METHODS.len() * per_method, progress);
    let mut rows = Vec::new();
    for (model, batch, kv) in SETUPS {
        steps.starting(&format!("{model}: plan tables"));
        let cell = Cell::decode(model, batch, kv);
        let inst = cell_instance(&cell, plans)?;
        for (mi, m) in METHODS.iter().enumerate() {
            steps.starting(&format!("{model}: {m}, true costs"));
            let base = true_makespan(&inst, &inst, m)?;
            steps.finished(&format!("{model}: {m}, true costs done"));
            let Some(base) = base else {
                steps.skipped(per_method - 1, &format!("{model}: {m}: no schedule"));
                continue;
            };
            // Every (level, seed) plan at once (each is independent; collected in order).
            let runs: Vec<(usize, u64)> = (0..LEVELS.len())
                .flat_map(|li| (0..SEEDS).map(move |seed| (li, seed)))
                .collect();
            let noisy: Vec<Option<f64>> = runs
                .par_iter()
                .map(|&(li, seed)| {
                    let p = LEVELS[li];
                    let what =
                        format!("{model}: {m}, ±{:.0} % noise, seed {}", 100.0 * p, seed + 1);
                    steps.starting(&what);
                    let t = true_makespan(&inst, &perturbed(&inst, p, seed + 1), m);
                    steps.finished(&format!("{what} done"));
                    t
                })
                .collect::<Result<_>>()?;
            let degradation_pct = (0..LEVELS.len())
                .map(|li| {
                    runs.iter()
                        .zip(&noisy)
                        .filter(|((l, _), _)| *l == li)
                        .filter_map(|(_, t)| t.map(|t| 100.0 * (t - base) / base))
                        .collect()
                })
                .collect();
            rows.push(NoiseRow {
                model,
                batch,
                kv,
                method: mi,
                true_ms: inst.ms(Cycles(base)),
                degradation_pct,
            });
        }
    }
    Ok(rows)
}
