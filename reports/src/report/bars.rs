//! `bars` reports (Fig 17): latency per configuration and method, grouped by model, beside
//! Elk's ideal and the certified bound; the same cells as % of Ideal.

use super::dims::{Dim, Dims};
use super::header::Files;
use super::series::{bound_name, cell_context, method_series, unreachable_ideal, MethodSeries};
use super::values::{
    headline_method, labels, methods_of, ms, result_of, shared, value_or_why, why_absent,
};
use crate::finding::Finding;
use crate::plot::{bars_marked, Absent, Marks, Series, Style};
use elk_app::cell::CellResult;
use elk_app::Result;

/// Results in groups of one model each (in order of first appearance) when models vary:
/// the rows, and the groups as (model, count). One model: the rows as they are, no groups.
fn by_model<'a>(results: &[&'a CellResult]) -> (Vec<&'a CellResult>, Vec<(String, usize)>) {
    if !Dims::of(results).varies(Dim::Model) {
        return (results.to_vec(), Vec::new());
    }
    let mut models: Vec<&str> = Vec::new();
    for r in results {
        if !models.contains(&r.cell.model.as_str()) {
            models.push(&r.cell.model);
        }
    }
    let mut rows = Vec::new();
    let mut groups = Vec::new();
    for m in models {
        let of: Vec<&CellResult> = results
            .iter()
            .filter(|r| r.cell.model == m)
            .copied()
            .collect();
        groups.push((m.to_string(), of.len()));
        rows.extend(of);
    }
    (rows, groups)
}

pub(super) fn latency_bars(
    results: &[&CellResult],
    paper: bool,
    md: &mut String,
    files: &mut Files,
    style: &Style,
) -> Result<Finding> {
    let methods = methods_of(results);
    md.push_str("## Latency (ms)\n\n| configuration |");
    for m in &methods {
        md.push_str(&format!(" {m} |"));
    }
    md.push_str(" ideal |");
    for m in &methods {
        md.push_str(&format!(" {m} % of Ideal |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(2 * methods.len() + 1));
    md.push('\n');
    // % of Ideal is each method's own: Ideal over its makespan, whatever the other methods did.
    let pct = |r: &CellResult, m: &str| ms(r, m).zip(r.ideal_ms).map(|(t, i)| 100.0 * i / t);
    let (grouped, groups) = by_model(results);
    let results = &grouped[..];
    let names = labels(results);
    Dims::refuse_duplicates("bars", &names)?;
    for (r, name) in results.iter().zip(&names) {
        md.push_str(&format!("| {name} |"));
        for m in &methods {
            md.push_str(&format!(" {} |", value_or_why(r, m, |x| x.makespan_ms, 4)));
        }
        let ideal = match r.ideal_ms {
            Some(i) => format!("{i:.4}"),
            None if r.does_not_fit => "does not fit".into(),
            None => "no figure".into(),
        };
        md.push_str(&format!(" {ideal} |"));
        for m in &methods {
            let cell = match pct(r, m) {
                Some(p) => format!("{p:.1}"),
                None if r.ideal_ms.is_none() && ms(r, m).is_some() => "no Ideal figure".into(),
                None => why_absent(r, result_of(r, m)).into(),
            };
            md.push_str(&format!(" {cell} |"));
        }
        md.push('\n');
    }
    // Means over one common subset (every method has a schedule and the cell an Ideal), so
    // they compare; each method's mean over its own cells is printed apart, labelled so.
    let (common, excluded): (Vec<_>, Vec<_>) = results
        .iter()
        .zip(&names)
        .partition(|(r, _)| methods.iter().all(|m| pct(r, m).is_some()));
    let common: Vec<&CellResult> = common.into_iter().map(|(r, _)| *r).collect();
    let mean_over = |rows: &[&CellResult], m: &str| -> Option<(f64, usize)> {
        let v: Vec<f64> = rows.iter().filter_map(|r| pct(r, m)).collect();
        (!v.is_empty()).then(|| (v.iter().sum::<f64>() / v.len() as f64, v.len()))
    };
    let common_means: Vec<String> = methods
        .iter()
        .filter_map(|m| mean_over(&common, m).map(|(p, _)| format!("{m} {p:.1} %")))
        .collect();
    let why_out: Vec<String> = excluded
        .iter()
        .map(|(r, name)| {
            let missing: Vec<String> = methods
                .iter()
                .filter(|m| ms(r, m).is_none())
                .map(|m| format!("{m}: {}", why_absent(r, result_of(r, m))))
                .collect();
            let why = if r.does_not_fit {
                "does not fit".to_string()
            } else if missing.is_empty() {
                "no Ideal figure".to_string()
            } else {
                missing.join(", ")
            };
            format!("{name} ({why})")
        })
        .collect();
    let subset = format!(
        "the {} of {} configurations where every method has a schedule",
        common.len(),
        results.len()
    );
    md.push_str(&format!("\nMean % of Ideal over {subset}: "));
    if common_means.is_empty() {
        md.push_str("none (no configuration where every method has a schedule)");
    } else {
        md.push_str(&common_means.join(", "));
    }
    if paper {
        md.push_str(" (Elk's paper: Elk reaches 94 % of its Ideal on average, in SPEC §4's NoC row; these makespans are judged in the phased row, docs/detailed.md).");
    } else {
        md.push('.');
    }
    if !why_out.is_empty() {
        md.push_str(&format!(" Excluded: {}.", why_out.join("; ")));
    }
    let own: Vec<String> = methods
        .iter()
        .filter_map(|m| mean_over(results, m).map(|(p, n)| format!("{m} {p:.1} % ({n} cells)")))
        .collect();
    md.push_str(&format!(
        "\n\nEach method's mean over the configurations it schedules (different cells per method, so not comparable across methods): {}.\n\n",
        own.join(", ")
    ));
    let headline =
        headline_method(&methods).and_then(|m| mean_over(&common, m).map(|(p, _)| (m, p)));
    let finding = Finding {
        question: "how close is each method to Elk's Ideal?".into(),
        finding: format!(
            "Mean % of Ideal over {subset}: {}{}.{}",
            if common_means.is_empty() {
                "none".to_string()
            } else {
                common_means.join(", ")
            },
            if paper {
                " (Elk's paper: 94 % for Elk, in SPEC §4's NoC row; these are judged in the phased row, docs/detailed.md)"
            } else {
                ""
            },
            if excluded.is_empty() {
                String::new()
            } else {
                format!(
                    " {} configurations are left out: a method has no schedule there, or the configuration does not fit the chip (listed in the report).",
                    excluded.len()
                )
            }
        ),
        number: headline.map_or("-".into(), |(m, p)| {
            format!("{p:.1} % ({m}, {} configurations)", common.len())
        }),
    };
    // In the figures, a model's configurations are one group, labelled by the model.
    let dims = Dims::of(results);
    let short: Vec<String> = if groups.is_empty() {
        names.clone()
    } else {
        results
            .iter()
            .map(|r| dims.label(&r.cell, &[Dim::Model]))
            .collect()
    };
    let MethodSeries {
        series,
        mut marks,
        ideal,
    } = method_series(&methods, results, |i, _| i as f64, |m| m.makespan_ms, true);
    marks.groups = groups.clone();
    let suffix = unreachable_ideal(results, (&mut marks, ideal), &|i| names[i].clone(), md);
    let svg = bars_marked(
        &format!("Latency per configuration{}{suffix}", shared(results, &[])),
        &short,
        &series,
        "latency (ms)",
        &marks,
        style,
    )?;
    files.extend(svg.files("latency"));
    // The same cells as % of Ideal: the figure's question, on one scale for every model.
    let mut pct_marks = Marks {
        groups,
        context: cell_context(results),
        ..Marks::default()
    };
    let pct_series: Vec<Series> = methods
        .iter()
        .enumerate()
        .map(|(s, m)| Series {
            name: m.clone(),
            points: results
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let p = pct(r, m);
                    if p.is_none() {
                        let label = match ms(r, m) {
                            Some(_) => "no Ideal figure",
                            None => why_absent(r, result_of(r, m)),
                        };
                        pct_marks.absent.push(Absent {
                            series: s,
                            point: i,
                            label: label.into(),
                        });
                    }
                    (i as f64, p)
                })
                .collect(),
        })
        .collect();
    let svg = bars_marked(
        &format!("% of Ideal per configuration{}", shared(results, &[])),
        &short,
        &pct_series,
        "% of Ideal (Ideal's latency / the method's)",
        &pct_marks,
        style,
    )?;
    files.extend(svg.files("pct_of_ideal"));
    md.push_str("![latency](latency.svg)\n\n![% of Ideal](pct_of_ideal.svg)\n\nIn the figures, \"×\" on the axis marks a method without a schedule (the footnote under the plot says where and why: \"no schedule\" when the heuristic finds none, \"infeasible\" when none exists, \"does not fit\" when no plan of an operator fits the chip's SRAM); in the latency figure Elk's ideal is the black outlined bar (a figure, not a bound)");
    if bound_name(results).is_some() {
        md.push_str(" and the certified lower bound the grey rule across each configuration's bars (no schedule is faster)");
    }
    md.push_str(".\n");
    Ok(finding)
}
