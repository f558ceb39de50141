//! `breakdown` reports (Fig 18/20): where the time goes, utilisation and throughput per
//! configuration and method.

use super::dims::{Dim, Dims};
use super::header::Files;
use super::series::{method_series, MethodSeries};
use super::values::{fmt, headline_method, label, labels, methods_of, shared, value_or_why};
use crate::finding::Finding;
use crate::plot::{bars_marked, Style};
use elk_app::cell::{BreakdownCycles, CellResult, MethodResult};
use elk_app::Result;

pub(super) fn breakdown(
    results: &[&CellResult],
    md: &mut String,
    files: &mut Files,
    style: &Style,
) -> Result<Finding> {
    md.push_str("## Breakdown, utilisation, throughput\n\n| configuration | HBM TB/s | method | latency ms | preload-only % | overlapped % | execute-only % | NoC-bound % | HBM util % | NoC util % | TFLOP/s |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    let dims = Dims::of(results);
    let names: Vec<String> = results
        .iter()
        .map(|r| dims.label(&r.cell, &[Dim::Hbm]))
        .collect();
    for (r, name) in results.iter().zip(&names) {
        for m in &r.methods {
            let b = m.breakdown;
            let total = b.map(|b| b.total());
            let pct = |f: fn(&BreakdownCycles) -> elk_stage::Cycles| {
                b.zip(total)
                    .map(|(b, tot)| 100.0 * f(&b).get() / tot.get().max(f64::MIN_POSITIVE))
            };
            md.push_str(&format!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                fmt(r.cell.hbm_tbps, 1),
                m.method,
                value_or_why(r, &m.method, |x| x.makespan_ms, 4),
                fmt(pct(|b| b.preload_only_cycles), 1),
                fmt(pct(|b| b.overlapped_cycles), 1),
                fmt(pct(|b| b.execute_only_cycles), 1),
                fmt(pct(|b| b.noc_bound_cycles), 1),
                fmt(m.hbm_util.map(|u| 100.0 * u), 1),
                fmt(m.noc_util.map(|u| 100.0 * u), 1),
                fmt(m.tflops, 2)
            ));
        }
    }
    let methods = methods_of(results);
    let categories = labels(results);
    Dims::refuse_duplicates("breakdown", &categories)?;
    for (what, stem, f) in [
        (
            "HBM utilisation (%)",
            "hbm_util",
            (|m: &MethodResult| m.hbm_util.map(|u| 100.0 * u)) as fn(&MethodResult) -> Option<f64>,
        ),
        ("NoC utilisation (%)", "noc_util", |m| {
            m.noc_util.map(|u| 100.0 * u)
        }),
    ] {
        let MethodSeries { series, marks, .. } =
            method_series(&methods, results, |i, _| i as f64, f, false);
        let title = format!("{what}{}", shared(results, &[]));
        let figure = bars_marked(&title, &categories, &series, what, &marks, style)?;
        files.extend(figure.files(stem));
        md.push_str(&format!("\n![{what}]({stem}.svg)\n"));
    }
    let util: Vec<String> = headline_method(&methods)
        .map(|name| {
            results
                .iter()
                .filter_map(|r| {
                    let m = r.methods.iter().find(|m| &m.method == name)?;
                    Some(format!(
                        "{}: {name} HBM {} % / NoC {} %",
                        label(&r.cell),
                        fmt(m.hbm_util.map(|u| 100.0 * u), 1),
                        fmt(m.noc_util.map(|u| 100.0 * u), 1)
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Finding {
        question: "where does the time go?".into(),
        finding: util.join("; "),
        number: format!("{} cells", results.len()),
    })
}
