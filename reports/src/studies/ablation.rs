//! Study `ablation`'s report: what each stage of Elk buys (the variants of
//! `elk_app::studies::ablation`, Elk-Full against each), as a table of latencies, a bar figure
//! and the finding: each variant's mean cost over Elk-Full.

use crate::finding::Finding;
use crate::plot::{bars, Series};
use crate::report::{Files, Header};
use elk_app::studies::ablation::{Ablation, MODELS};
use elk_app::studies::OnStep;
use elk_app::Result;

/// Runs the study, each (model, variant) a step of `progress`, and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let ablation = elk_app::studies::ablation::run(header.plan_cache.as_ref(), progress)?;
    write(header, &ablation)
}

/// The report of the study's results.
fn write(header: &Header, ablation: &Ablation) -> Result<Files> {
    let mut md = header.markdown("Study: ablation of Elk's components");
    md.push_str("Decode B32 KV2048 on ipu-pod4 (16 TB/s), free load order, full models. Latency in ms (simulator) and in % above Elk-Full.\n\n| model |");
    let vs = &ablation.variants;
    for v in vs {
        md.push_str(&format!(" {v} |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(vs.len()));
    md.push('\n');
    let models = MODELS;
    let mut series: Vec<Series> = vs
        .iter()
        .map(|v| Series {
            name: v.to_string(),
            points: Vec::new(),
        })
        .collect();
    for (mi, (model, times)) in models.iter().zip(&ablation.times_ms).enumerate() {
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
