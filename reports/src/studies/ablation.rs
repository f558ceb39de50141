//! Study `ablation`: what each stage of Elk buys. As the artifact runs it: Elk-Full against
//! Elk-Dyn (no order permutation), Elk-Dyn without the NoC penalty π in its plan rule, and
//! with the preload depth capped at 1, 2 and 4 operators; then the paper's greedy cost-aware
//! allocator (`elk-dyn-greedy`, which the artifact never runs) with and without its
//! cold-layout trades (off: every operator keeps the fastest option that fits when it runs).

use super::{OnStep, Steps};
use crate::cell::cell_instance;
use crate::error::Result;
use crate::finding::Finding;
use crate::grid::Cell;
use crate::plot::{bars, Series};
use crate::report::{Files, Header};
use elk_heuristics::{by_name, ElkDyn, ElkDynGreedy};
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

fn variants() -> Vec<&'static str> {
    methods().into_iter().map(|(label, _)| label).collect()
}

fn makespan(inst: &Instance, variant: &str) -> Result<Option<Cycles>> {
    let Some((_, m)) = methods().into_iter().find(|(label, _)| *label == variant) else {
        return Ok(None);
    };
    Ok(elk_heuristics::judged(inst, m.as_ref())?.map(|j| j.1))
}

/// Runs the study, each (model, variant) a step of `progress`.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let mut md = header.markdown("Study: ablation of Elk's components");
    md.push_str("Decode B32 KV2048 on ipu-pod4 (16 TB/s), free load order, full models. Latency in ms (simulator) and in % above Elk-Full.\n\n| model |");
    let vs = variants();
    for v in &vs {
        md.push_str(&format!(" {v} |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(vs.len()));
    md.push('\n');
    let models = ["llama2-13b", "gemma2-27b", "llama2-70b"];
    let steps = Steps::new(models.len() * vs.len(), progress);
    let mut series: Vec<Series> = vs
        .iter()
        .map(|v| Series {
            name: v.to_string(),
            points: Vec::new(),
        })
        .collect();
    for (mi, model) in models.iter().enumerate() {
        steps.starting(&format!("{model}: plan tables"));
        let cell = Cell::decode(model, 32, 2048);
        let inst = cell_instance(&cell, header.plan_cache.as_ref())?;
        let times: Vec<Option<f64>> = vs
            .iter()
            .map(|v| {
                steps.starting(&format!("{model}: {v}"));
                let t = makespan(&inst, v)?.map(|t| inst.ms(t));
                steps.finished(&format!("{model}: {v} done"));
                Ok(t)
            })
            .collect::<Result<_>>()?;
        let full = times[0];
        md.push_str(&format!("| {model} |"));
        for (k, t) in times.iter().enumerate() {
            let pct = t.zip(full).map(|(t, f)| 100.0 * (t - f) / f);
            md.push_str(&match (t, pct) {
                (Some(t), Some(p)) if k > 0 => format!(" {t:.4} (+{p:.2} %) |"),
                (Some(t), _) => format!(" {t:.4} |"),
                _ => " - |".into(),
            });
            series[k].points.push((mi as f64, *t));
        }
        md.push('\n');
    }
    let categories: Vec<String> = models.iter().map(|s| s.to_string()).collect();
    let [svg, csv] = bars(
        "Ablation of Elk (decode B32 KV2048 on ipu-pod4, HBM 16 TB/s)",
        &categories,
        &series,
        "latency (ms)",
        &header.style,
    )?
    .files("ablation");
    md.push_str("\n![ablation](ablation.svg)\n");
    // Headline: each variant's mean cost over Elk-Full, in %.
    let costs: Vec<String> = vs
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(k, v)| {
            let pcts: Vec<f64> = series[0]
                .points
                .iter()
                .zip(&series[k].points)
                .filter_map(|(f, t)| f.1.zip(t.1).map(|(f, t)| 100.0 * (t - f) / f))
                .collect();
            (!pcts.is_empty()).then(|| {
                let mean = pcts.iter().sum::<f64>() / pcts.len() as f64;
                format!("{v} {mean:+.2} %")
            })
        })
        .collect();
    let finding = Finding {
        question: "What does each part of Elk buy?".into(),
        finding: format!(
            "Mean latency relative to Elk-Full over {} (decode B32 KV2048, 16 TB/s): {}.",
            models.join(", "),
            costs.join(", ")
        ),
        number: costs.first().cloned().unwrap_or_else(|| "-".into()),
    };
    Ok(vec![
        ("README.md".into(), md.into_bytes()),
        svg,
        csv,
        finding.file(),
    ])
}
