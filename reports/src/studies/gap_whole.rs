//! The gap study's whole-model part, a report of its own (`study gap-whole`): Llama2-13B and
//! Llama2-70B (decode B32 KV2048, ipu-pod4, free load order) at HBM 4, 8, 12 and 16 TB/s, each
//! method's certified gap to the best lower bound, from the points
//! `elk_app::studies::gap_whole` computes.

use super::budget::budget_paragraph;
use crate::finding::Finding;
use crate::plot::{facets, Figure, Marks, Panel, Series, Style};
use crate::report::{Files, Header};
use elk_app::studies::gap_whole::{method_names, points, Point, BUDGET, MODELS, SEARCH};
use elk_app::studies::OnStep;
use elk_app::Result;

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("no schedule".into(), |v| format!("{v:.digits$}"))
}

/// A gap as the text shows it: a schedule that meets the bound can come out a few 1e-12 %
/// below it (the simulator's sums and the bound's in another order), which would print as
/// "-0.00"; within 1e-9 % it is 0. A larger negative gap stays, and shows a defect.
fn shown(gap_pct: f64) -> f64 {
    if gap_pct.abs() < 1e-9 {
        0.0
    } else {
        gap_pct
    }
}

/// A point as the text names it: "llama2-70b @ 12 TB/s".
fn label(p: &Point) -> String {
    format!("{} @ {:.0} TB/s", p.model, p.hbm_tbps)
}

/// The window MILPs a point used of its budget ("12 of 40"; "cut by time" when the time
/// stopped it first).
fn windows(p: &Point) -> String {
    match p.work {
        Some(w) => format!(
            "{} of {}{}",
            w.used.map_or("?".into(), |u| u.to_string()),
            w.limit,
            if w.cut_by_time { ", cut by time" } else { "" }
        ),
        None => "-".into(),
    }
}

/// One point's headline: ("model @ X TB/s", Elk-Full's gap ≤ %, the best schedule's gap ≤ %).
pub type Headline = (String, f64, f64);

/// The section's Markdown, its plot, and each point's [`Headline`] for the finding.
pub fn section(points: &[Point], style: &Style) -> Result<(String, Figure, Vec<Headline>)> {
    let names = method_names();
    let full = names.iter().position(|n| *n == "elk-full").unwrap_or(0);
    let labels: Vec<String> = points.iter().map(label).collect();
    let cut: Vec<&str> = points
        .iter()
        .zip(&labels)
        .filter(|(p, _)| p.work.is_some_and(|w| w.cut_by_time))
        .map(|(_, l)| l.as_str())
        .collect();
    let mut md = format!(
        "\n## Whole models: certified gaps against HBM bandwidth\n\n\
         Decode B32 KV2048 on ipu-pod4, free load order, HBM overridden. Bound = the best of the \
         roofline bounds (Σ H, Σ min exec, prefix) and the segment relaxation (layers as \
         segments: the better of one LP over the distinct layers with the work moved across \
         layer boundaries balanced per NoC-per-HBM ratio, and the same LPs with that balance \
         priced, the price searched on their slopes; run to their end; proofs in docs/exact.md \"Whole models\" and \"The coupled relaxation\"). \
         The {SEARCH} column is the whole-model optimizer (docs/exact.md \"The window search\"): \
         from the best of the other columns. A gap ≤ x % \
         is certified: the optimum lies between the bound and the best schedule.\n\n{}\
         | model | HBM TB/s | {} | best ms | bound ms | roofline ms | segment ms | windows | heuristics s | bound + search s |\n|---|---|{}---|---|---|---|---|---|---|\n",
        budget_paragraph("gap-whole", BUDGET, &cut),
        names.join(" | "),
        "---|".repeat(names.len())
    );
    let mut headline = Vec::new();
    for p in points {
        let gaps: Vec<String> = (0..names.len())
            .map(|m| match (p.makespan_ms[m], p.gap_pct(m)) {
                (Some(t), Some(g)) => format!("{t:.4} (≤ {:.2} %)", shown(g)),
                _ => "no schedule".into(),
            })
            .collect();
        md.push_str(&format!(
            "| {} | {:.0} | {} | {} | {:.4} | {:.4} | {} | {} | {:.1} | {:.1} |\n",
            p.model,
            p.hbm_tbps,
            gaps.join(" | "),
            cell(p.best_ms(), 4),
            p.bound_ms,
            p.roofline_ms,
            cell(p.segment_ms, 4),
            windows(p),
            p.heuristics_s,
            p.bound_s
        ));
        if let (Some(g), Some(best)) = (p.gap_pct(full), p.best_ms()) {
            let best_gap = 100.0 * (best - p.bound_ms) / p.bound_ms;
            headline.push((label(p), shown(g), shown(best_gap)));
        }
    }
    md.push_str(
        "\nCells: makespan ms (certified gap ≤ %).\n\n![whole-model gaps](whole-model-gaps.svg)\n",
    );
    // A panel per model, Elk-Full and the best schedule in each, gap against HBM: in one
    // chart the two models' best schedules lay their markers on each other near 0 %.
    let panels: Vec<Panel> = MODELS
        .iter()
        .map(|&model| {
            let of: Vec<&Point> = points.iter().filter(|p| p.model == model).collect();
            let best_gap = |p: &Point| {
                p.best_ms()
                    .map(|b| shown(100.0 * (b - p.bound_ms) / p.bound_ms))
            };
            Panel {
                title: model.into(),
                series: vec![
                    Series {
                        name: "elk-full".into(),
                        points: of.iter().map(|p| (p.hbm_tbps, p.gap_pct(full))).collect(),
                    },
                    Series {
                        name: "best schedule".into(),
                        points: of.iter().map(|p| (p.hbm_tbps, best_gap(p))).collect(),
                    },
                ],
                marks: Marks::default(),
            }
        })
        .collect();
    let svg = facets(
        "Certified gap ≤ % vs HBM bandwidth (decode B32 KV2048, ipu-pod4)",
        "HBM bandwidth (TB/s)",
        "certified gap to the optimum, at most (%)",
        &panels,
        style,
    )?;
    Ok((md, svg, headline))
}

/// `study gap-whole`: the section alone, as its own report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let points = points(BUDGET, header.plan_cache.as_ref(), progress)?;
    let (section_md, figure, headline) = section(&points, &header.style)?;
    let [svg, csv] = figure.files("whole-model-gaps");
    let mut md = header.markdown("Study: certified gaps on whole models");
    md.push_str("The whole-model part of the gap study (`elk-opt study gap` covers sub-instances with proven optima).\n");
    md.push_str(&section_md);
    let worst = headline
        .iter()
        .map(|h| h.2)
        .fold(f64::NEG_INFINITY, f64::max);
    let listed: Vec<String> = headline
        .iter()
        .map(|(point, full, best)| format!("{point}: elk-full ≤ {full:.2} %, best ≤ {best:.2} %"))
        .collect();
    let finding = Finding {
        question: "How far from optimal are schedules of whole models? (certified gap)".into(),
        finding: format!(
            "Against the best of the roofline and segment-relaxation bounds: {}.",
            listed.join("; ")
        ),
        number: format!("best schedule within {worst:.2} % of optimal at every point"),
    };
    Ok(vec![
        ("README.md".into(), md.into_bytes()),
        svg,
        csv,
        finding.file(),
    ])
}
