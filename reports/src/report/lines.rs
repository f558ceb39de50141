//! Line reports (`vs-hbm`, `vs-noc`, `vs-cores`: Fig 19/21/22/23; `training`: Fig 24): each
//! method against the swept quantity, one figure per combination of everything else, beside
//! Elk's ideal and the certified bound; MoE cells one panel per routing.

use super::dims::{coupled, Dim, Dims};
use super::header::Files;
use super::series::{bound_name, method_series, unreachable_ideal, MethodSeries};
use super::values::{fmt, headline_method, label, methods_of, result_of, value_or_why};
use crate::finding::Finding;
use crate::plot::{facets, lines_marked, Panel, Style};
use elk_app::cell::{CellResult, MethodResult};
use elk_app::grid::{Cell, FigureKind};
use elk_app::{AppError, Result};

/// The swept quantity of a line figure in cell `c` (NaN when the cell does not set it) and
/// its axis description.
fn x_of(kind: FigureKind, c: &Cell) -> (f64, &'static str) {
    match kind {
        FigureKind::VsNoc => (c.noc_scale, "NoC bandwidth (× the chip's)"),
        FigureKind::VsCores => (c.cores.map_or(f64::NAN, |n| n as f64), "cores"),
        FigureKind::Training => (c.compute_scale, "compute speed (× the chip's)"),
        FigureKind::VsHbm | FigureKind::Bars | FigureKind::Breakdown => {
            (c.hbm_tbps.unwrap_or(f64::NAN), "HBM bandwidth (TB/s)")
        }
    }
}

/// The grid dimension a line figure sweeps.
fn x_dim(kind: FigureKind) -> Dim {
    match kind {
        FigureKind::VsNoc => Dim::Noc,
        FigureKind::VsCores => Dim::Cores,
        FigureKind::Training => Dim::Compute,
        FigureKind::VsHbm | FigureKind::Bars | FigureKind::Breakdown => Dim::Hbm,
    }
}

/// One line figure per combination of everything but the swept quantity (and what moves
/// with it, as HBM with the core count in Fig 23; and the routing of MoE cells, a panel of
/// the figure each): (title, rows), in the grid's order. A grid of two chips draws two
/// figures, never one line through both chips' points. Refused: a cell without the swept
/// quantity, or two cells at one x in one panel.
fn figures<'a>(
    kind: FigureKind,
    results: &[&'a CellResult],
) -> Result<Vec<(String, Vec<&'a CellResult>)>> {
    let figure = kind.name();
    let x = x_dim(kind);
    if let Some(r) = results.iter().find(|r| x_of(kind, &r.cell).0.is_nan()) {
        return Err(AppError::Refused {
            figure: figure.into(),
            detail: format!(
                "'{figure}' plots against {}, which cell {} ({}) does not set; \
                 give the grid a list for it, or use figure = \"bars\"",
                x_of(kind, &r.cell).1,
                r.cell.index,
                label(&r.cell)
            ),
        });
    }
    let dims = Dims::of(results);
    // MoE cells: one figure holds every routing, one panel each (`facets_by_routing`).
    let routed = results.iter().any(|r| r.cell.routing.is_some());
    let mut skip = vec![x];
    if routed {
        skip.push(Dim::Routing);
    }
    let mut moves = Vec::new();
    for d in [Dim::Hbm, Dim::Noc, Dim::Compute, Dim::Cores] {
        if d != x && dims.varies(d) && dims.varies(x) && coupled(results, x, d) {
            skip.push(d);
            moves.push(d);
        }
    }
    let mut out: Vec<(String, Vec<&CellResult>)> = Vec::new();
    for r in results {
        let key = dims.label(&r.cell, &skip);
        match out.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(*r),
            None => out.push((key, vec![*r])),
        }
    }
    let mut titled = Vec::new();
    for (key, rows) in out {
        let xs: Vec<String> = rows
            .iter()
            .map(|r| format!("{:?} {}", r.cell.routing, x_of(kind, &r.cell).0))
            .collect();
        Dims::refuse_duplicates(&format!("{figure}, panel {key}"), &xs)?;
        let mut skip_title = skip.clone();
        skip_title.push(Dim::Model);
        let mut title = key;
        let rest = rows
            .first()
            .map(|r| dims.constant(&r.cell, &skip_title))
            .unwrap_or_default();
        if !rest.is_empty() {
            title.push_str(&format!(" ({rest})"));
        }
        for d in &moves {
            title.push_str(
                &format!(", {d:?} moves with {x:?}")
                    .to_lowercase()
                    .replace("hbm", "HBM"),
            );
        }
        titled.push((title, rows));
    }
    Ok(titled)
}

/// The rows of one figure by routing, in the grid's order: one panel each.
fn by_routing<'a>(rows: &[&'a CellResult]) -> Vec<(String, Vec<&'a CellResult>)> {
    let mut out: Vec<(String, Vec<&CellResult>)> = Vec::new();
    for r in rows {
        let routing = super::dims::Dim::Routing.value(&r.cell);
        match out.iter_mut().find(|g| g.0 == routing) {
            Some(g) => g.1.push(*r),
            None => out.push((routing, vec![*r])),
        }
    }
    out
}

/// One panel per routing of MoE cells `rows` (in the grid's order), titled by it: each
/// method (a load policy) a series of `of` against `x`, as [`method_series`] draws them
/// (with `latency`: whiskers, the oracle as reference, the certified bound and its band).
pub(crate) fn routing_panels(
    methods: &[String],
    rows: &[&CellResult],
    x: impl Fn(usize, &CellResult) -> f64 + Copy,
    of: impl Fn(&MethodResult) -> Option<f64> + Copy,
    latency: bool,
) -> Vec<Panel> {
    // One legend name for the bound in every panel, of all their points' sources: the panels
    // must have the same series, and one routing's steps may have other bounds than
    // another's (the stage relaxation on some steps, the roofline on others).
    let shared = bound_name(rows);
    by_routing(rows)
        .into_iter()
        .map(|(title, rows)| {
            let mut m = method_series(methods, &rows, x, of, latency);
            if let (Some(s), Some(name)) = (m.marks.bound, &shared) {
                m.series[s].name = name.clone();
            }
            Panel {
                title,
                series: m.series,
                marks: m.marks,
            }
        })
        .collect()
}

/// The value a line figure plots: throughput for `training`, else the makespan.
fn plotted(training: bool) -> impl Fn(&MethodResult) -> Option<f64> + Copy {
    move |m: &MethodResult| if training { m.tflops } else { m.makespan_ms }
}

/// One figure's table: a row per cell (its routing first, for MoE cells), a column per
/// method, then Elk's ideal (cells that have it) and the certified bound (cells that have
/// one).
fn table(kind: FigureKind, methods: &[String], rows: &[&CellResult], md: &mut String) {
    let training = kind == FigureKind::Training;
    let of = plotted(training);
    let routed = rows.iter().any(|r| r.cell.routing.is_some());
    let x_desc = rows.first().map_or("", |r| x_of(kind, &r.cell).1);
    let unit = match (training, routed) {
        (true, _) => "TFLOP/s",
        (false, true) => "mean ms",
        (false, false) => "ms",
    };
    let mut head: Vec<String> = Vec::new();
    if routed {
        head.push("routing".into());
    }
    head.push(x_desc.into());
    head.extend(methods.iter().map(|m| format!("{m} {unit}")));
    // Routed MoE cells have no Ideal figure (docs/moe.md): no column of "no figure".
    let with_ideal = !training && rows.iter().any(|r| r.ideal_ms.is_some() || r.does_not_fit);
    if with_ideal {
        head.push("ideal ms (not a bound)".into());
    }
    let with_bound = !training && rows.iter().any(|r| r.bound.is_some());
    if with_bound {
        head.push(format!("certified bound {unit}"));
    }
    md.push_str(&format!(
        "| {} |\n|{}\n",
        head.join(" | "),
        "---|".repeat(head.len())
    ));
    for r in rows {
        let mut cols: Vec<String> = Vec::new();
        if routed {
            cols.push(r.cell.routing.clone().unwrap_or_default());
        }
        cols.push(x_of(kind, &r.cell).0.to_string());
        cols.extend(methods.iter().map(|m| value_or_why(r, m, of, 4)));
        let missing = |what: &str| {
            if r.does_not_fit {
                "does not fit".to_string()
            } else {
                format!("no {what}")
            }
        };
        if with_ideal {
            cols.push(
                r.ideal_ms
                    .map_or_else(|| missing("figure"), |i| format!("{i:.4}")),
            );
        }
        if with_bound {
            cols.push(
                r.bound
                    .as_ref()
                    .map_or_else(|| missing("bound"), |b| format!("{:.4}", b.bound_ms)),
            );
        }
        md.push_str(&format!("| {} |\n", cols.join(" | ")));
    }
}

pub(super) fn sweep_lines(
    kind: FigureKind,
    results: &[&CellResult],
    md: &mut String,
    files: &mut Files,
    style: &Style,
) -> Result<Finding> {
    let methods = methods_of(results);
    let groups = figures(kind, results)?;
    let training = kind == FigureKind::Training;
    let y_desc = if training {
        "throughput (TFLOP/s)"
    } else {
        "latency (ms)"
    };
    let of = plotted(training);
    let x = |_: usize, r: &CellResult| x_of(kind, &r.cell).0;
    for (n, (group, rows)) in groups.iter().enumerate() {
        let x_desc = rows.first().map_or("", |r| x_of(kind, &r.cell).1);
        md.push_str(&format!("## {group}\n\n"));
        table(kind, &methods, rows, md);
        let stem = format!("{}-{n}", kind.name());
        let drawn = if rows.iter().any(|r| r.cell.routing.is_some()) {
            let panels = routing_panels(&methods, rows, x, of, !training);
            facets(group, x_desc, y_desc, &panels, style)?
        } else {
            let MethodSeries {
                series,
                mut marks,
                ideal,
            } = method_series(&methods, rows, x, of, !training);
            let suffix = unreachable_ideal(
                rows,
                (&mut marks, ideal),
                &|i| format!("{x_desc} = {}", x_of(kind, &rows[i].cell).0),
                md,
            );
            let title = format!("{group}{suffix}");
            lines_marked(&title, x_desc, y_desc, &series, &marks, style)?
        };
        files.extend(drawn.files(&stem));
        md.push_str(&format!("\n![{group}]({stem}.svg)\n\n"));
    }
    Ok(finding(kind, &methods, &groups))
}

/// The headline of a line report: the quoted method (and Elk's ideal, and the certified
/// bound) from the first to the last swept value of each figure; its number the quoted
/// method's largest certified gap when the cells have a bound, else its change over the
/// first figure's sweep in percent.
fn finding(kind: FigureKind, methods: &[String], groups: &[(String, Vec<&CellResult>)]) -> Finding {
    let training = kind == FigureKind::Training;
    let (y_desc, unit) = if training {
        ("throughput (TFLOP/s)", "TFLOP/s")
    } else {
        ("latency (ms)", "ms")
    };
    let Some(name) = headline_method(methods) else {
        return Finding {
            question: format!("{y_desc} against the swept quantity"),
            finding: "no results".into(),
            number: "-".into(),
        };
    };
    let value = |r: &CellResult| result_of(r, name).and_then(plotted(training));
    let mut parts = Vec::new();
    let mut change = None;
    for (group, rows) in groups {
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            continue;
        };
        let (x0, x1) = (x_of(kind, &first.cell), x_of(kind, &last.cell));
        let (v0, v1) = (value(first), value(last));
        let mut part = format!(
            "{group}: {name} {} → {} {unit} from {} to {} ({})",
            fmt(v0, 2),
            fmt(v1, 2),
            x0.0,
            x1.0,
            x0.1
        );
        if !training && first.ideal_ms.is_some() {
            part.push_str(&format!(
                "; Elk's ideal (not a bound) {} → {}",
                fmt(first.ideal_ms, 2),
                fmt(last.ideal_ms, 2)
            ));
        }
        let bound = |r: &CellResult| r.bound.as_ref().map(|b| b.bound_ms);
        if !training && first.bound.is_some() {
            part.push_str(&format!(
                "; certified lower bound {} → {}",
                fmt(bound(first), 2),
                fmt(bound(last), 2)
            ));
        }
        if change.is_none() && first.cell != last.cell {
            if let Some((a, b)) = v0.zip(v1).filter(|(a, _)| *a > 0.0) {
                change = Some(format!(
                    "{:+.1} % {} ({name}, {} → {} {unit} from {} to {}, {}; {group})",
                    100.0 * (b - a) / a,
                    if training { "throughput" } else { "latency" },
                    fmt(v0, 2),
                    fmt(v1, 2),
                    x0.0,
                    x1.0,
                    x0.1
                ));
            }
        }
        parts.push(part);
    }
    let gaps: Vec<f64> = groups
        .iter()
        .flat_map(|(_, rows)| rows.iter())
        .filter_map(|r| result_of(r, name).and_then(|m| m.gap_le_pct))
        .collect();
    let number = match gaps.iter().copied().reduce(f64::max) {
        Some(g) if !training => format!(
            "≤ {g:.2} % ({name}'s largest certified gap to the optimum, over {} cells)",
            gaps.len()
        ),
        _ => change.unwrap_or_else(|| "-".into()),
    };
    Finding {
        question: format!("how does {name}'s {y_desc} change with the swept quantity?"),
        finding: format!("{}.", parts.join(". ")),
        number,
    }
}
