//! Study `cost-noise`: plans made with wrong costs. Every option's compute and communication
//! cycles are perturbed by a seeded uniform factor in [1 − p, 1 + p] (p = 10 %, 20 %), each
//! method plans on the perturbed instance, and its schedule is evaluated on the true costs;
//! degradation = 100·(T_true(noisy plan) − T_true(true plan)) / T_true(true plan).

use super::{summary, OnStep, Steps};
use crate::cell::cell_instance;
use crate::error::Result;
use crate::finding::Finding;
use crate::grid::Cell;
use crate::plot::{bars_marked, Absent, Marks, Series, Spread};
use crate::report::{Files, Header};
use elk_heuristics::by_name;
use elk_stage::corpus::Rng;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;
use rayon::prelude::*;

/// The faithful methods, and the greedy Elk-Full variant (its finer plans: is it more
/// fragile?).
const METHODS: [&str; 5] = ["basic", "static", "elk-dyn", "elk-full", "elk-full-greedy"];
const LEVELS: [f64; 2] = [0.10, 0.20];
const SEEDS: u64 = 3;

fn perturbed(inst: &Instance, p: f64, seed: u64) -> Instance {
    let mut rng = Rng::new(seed);
    let mut noisy = inst.clone();
    for op in &mut noisy.ops {
        for o in &mut op.options {
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

/// Runs the study, each plan (true costs, or one noise level and seed) a step of `progress`.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let mut md = header
        .markdown("Study: cost-model error — plan with perturbed costs, run on the true ones");
    md.push_str(&format!("Models: llama2-7b decode B8 KV512 and llama2-13b decode B32 KV2048 on ipu-pod4 (free load order); {SEEDS} seeds per noise level. Degradation in % of the makespan planned with the true costs.\n\n| model | method | true plan ms | ±10 % mean / max degradation % | ±20 % mean / max degradation % |\n|---|---|---|---|---|\n"));
    let mut by_level: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); METHODS.len()]; LEVELS.len()];
    let setups = [("llama2-7b", 8u64, 512u64), ("llama2-13b", 32, 2048)];
    let per_method = 1 + LEVELS.len() * SEEDS as usize;
    let steps = Steps::new(setups.len() * METHODS.len() * per_method, progress);
    for (model, batch, kv) in setups {
        steps.starting(&format!("{model}: plan tables"));
        let cell = Cell::decode(model, batch, kv);
        let inst = cell_instance(&cell, header.plan_cache.as_ref())?;
        for (mi, m) in METHODS.iter().enumerate() {
            steps.starting(&format!("{model}: {m}, true costs"));
            let base = true_makespan(&inst, &inst, m)?;
            steps.finished(&format!("{model}: {m}, true costs done"));
            let Some(base) = base else {
                steps.skipped(per_method - 1, &format!("{model}: {m}: no schedule"));
                continue;
            };
            let mut row = format!(
                "| {model} B{batch} KV{kv} | {m} | {:.4} |",
                inst.ms(Cycles(base))
            );
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
            for (li, level) in by_level.iter_mut().enumerate() {
                let d: Vec<f64> = runs
                    .iter()
                    .zip(&noisy)
                    .filter(|((l, _), _)| *l == li)
                    .filter_map(|(_, t)| t.map(|t| 100.0 * (t - base) / base))
                    .collect();
                let mean = d.iter().sum::<f64>() / d.len().max(1) as f64;
                let max = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                row.push_str(&format!(" {mean:.2} / {max:.2} |"));
                level[mi].extend(d);
            }
            md.push_str(&row);
            md.push('\n');
        }
    }
    md.push_str("\nA negative degradation means the noisy plan happened to run faster on the true costs: the heuristics are not optimal, so noise can help as well as hurt.\n");
    let categories: Vec<String> = METHODS.iter().map(|s| s.to_string()).collect();
    let series: Vec<Series> = LEVELS
        .iter()
        .enumerate()
        .map(|(li, p)| Series {
            name: format!("±{:.0} % noise: median, min–max", 100.0 * p),
            points: by_level[li]
                .iter()
                .enumerate()
                .map(|(i, d)| (i as f64, (!d.is_empty()).then(|| summary(d).0)))
                .collect(),
        })
        .collect();
    // The spread over seeds and models behind each median: a noise study shows it. A
    // method without a schedule has no samples: an "×".
    let mut marks = Marks::default();
    for (li, per_method) in by_level.iter().enumerate() {
        for (mi, d) in per_method.iter().enumerate() {
            if d.is_empty() {
                marks.absent.push(Absent {
                    series: li,
                    point: mi,
                    label: "no schedule".into(),
                });
            } else {
                marks.spread.push(Spread {
                    series: li,
                    point: mi,
                    lo: d.iter().copied().fold(f64::INFINITY, f64::min),
                    hi: d.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                });
            }
        }
    }
    let [svg, csv] = bars_marked(
        &format!(
            "Degradation from cost noise ({SEEDS} seeds per level; llama2-7b B8 KV512 and llama2-13b B32 KV2048 decode on ipu-pod4)"
        ),
        &categories,
        &series,
        "degradation (% of true-cost plan)",
        &marks,
        &header.style,
    )?
    .files("noise");
    md.push_str("\n![noise](noise.svg)\n");
    let mean = |d: &[f64]| d.iter().sum::<f64>() / d.len().max(1) as f64;
    let max = |d: &[f64]| d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let levels: Vec<String> = LEVELS
        .iter()
        .enumerate()
        .map(|(li, p)| {
            let per: Vec<String> = METHODS
                .iter()
                .zip(&by_level[li])
                .map(|(m, d)| format!("{m} {:.1} % (max {:.1} %)", mean(d), max(d)))
                .collect();
            format!(
                "±{:.0} % noise costs on average {}",
                100.0 * p,
                per.join(", ")
            )
        })
        .collect();
    let worst = METHODS
        .iter()
        .zip(&by_level[LEVELS.len() - 1])
        .map(|(m, d)| (max(d), m))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let finding = Finding {
        question: "How sensitive are the methods to cost-model error?".into(),
        finding: format!(
            "Planned on perturbed costs, run on the true ones (2 models × {SEEDS} seeds): {}.",
            levels.join("; ")
        ),
        number: worst.map_or("-".into(), |(x, m)| format!("up to {x:.1} % ({m})")),
    };
    Ok(vec![
        ("README.md".into(), md.into_bytes()),
        svg,
        csv,
        finding.file(),
    ])
}
