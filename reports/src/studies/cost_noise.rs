//! Study `cost-noise`'s report: plans made with wrong costs. Every option's compute and
//! communication cycles are perturbed by a seeded uniform factor in [1 − p, 1 + p] (p = 10 %,
//! 20 %), each method plans on the perturbed instance, and its schedule is evaluated on the
//! true costs; from the rows `elk_app::studies::cost_noise` computes, a table of each
//! method's degradation, a figure of its spread, and the finding.

use crate::finding::Finding;
use crate::plot::{bars_marked, Absent, Marks, Series, Spread};
use crate::report::{Files, Header};
use elk_app::studies::cost_noise::{NoiseRow, LEVELS, METHODS, SEEDS};
use elk_app::studies::{summary, OnStep};
use elk_app::Result;

/// Runs the study, each plan (true costs, or one noise level and seed) a step of `progress`,
/// and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let rows = elk_app::studies::cost_noise::run(header.plan_cache.as_ref(), progress)?;
    write(header, &rows)
}

/// The report of the study's rows.
fn write(header: &Header, rows: &[NoiseRow]) -> Result<Files> {
    let mut md = header
        .markdown("Study: cost-model error — plan with perturbed costs, run on the true ones");
    md.push_str(&format!("Models: llama2-7b decode B8 KV512 and llama2-13b decode B32 KV2048 on ipu-pod4 (free load order); {SEEDS} seeds per noise level. Degradation in % of the makespan planned with the true costs.\n\n| model | method | true plan ms | ±10 % mean / max degradation % | ±20 % mean / max degradation % |\n|---|---|---|---|---|\n"));
    let mut by_level: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); METHODS.len()]; LEVELS.len()];
    for r in rows {
        let mut row = format!(
            "| {} B{} KV{} | {} | {:.4} |",
            r.model, r.batch, r.kv, METHODS[r.method], r.true_ms
        );
        for (level, d) in by_level.iter_mut().zip(&r.degradation_pct) {
            let mean = d.iter().sum::<f64>() / d.len().max(1) as f64;
            let max = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            row.push_str(&format!(" {mean:.2} / {max:.2} |"));
            level[r.method].extend(d);
        }
        md.push_str(&row);
        md.push('\n');
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
