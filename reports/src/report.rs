//! Results → a Markdown report with SVG plots, one layout per figure type (SPEC §7):
//! `bars` (Fig 17: latency per configuration and method), `breakdown` (Fig 18/20: where the
//! time goes, utilisation, TFLOP/s), `vs-hbm` / `vs-noc` / `vs-cores` (Fig 19/21/22/23:
//! latency against the swept quantity) and `training` (Fig 24: TFLOP/s against compute speed).
//! Numbers are printed and plotted exactly as measured.
//!
//! Every grid dimension that varies is shown (`report::dims`): in row and category labels, as
//! groups of bars (one per model), as one line figure per combination of everything but the
//! swept quantity (one panel per chip), and what does not vary is in the titles. Results the
//! report cannot show so (two cells under one label, a swept quantity the grid does not
//! sweep) are refused with the reason.

mod dims;

use crate::cell::{CellResult, MethodResult, MethodStatus};
use crate::error::{ReportError, Result};
use crate::finding::Finding;
use crate::grid::Cell;
use crate::plot::{bars_marked, lines_marked, Absent, Marks, Series, Style};
use dims::{coupled, Dim, Dims};

/// Where a report came from (printed at its top), and how its figures are drawn.
#[derive(Clone, Debug)]
pub struct Header {
    /// The command that made it.
    pub command: String,
    /// Its inputs (files, presets).
    pub inputs: String,
    /// The date (YYYY-MM-DD).
    pub date: String,
    /// The figures' size and font (not printed).
    pub style: Style,
}

impl Header {
    /// The Markdown lines.
    pub fn markdown(&self, title: &str) -> String {
        format!(
            "# {title}\n\n- command: `{}`\n- inputs: {}\n- date: {}\n\n",
            self.command, self.inputs, self.date
        )
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A report: its files (name → contents: text, or a PNG figure), `README.md` first.
pub type Files = Vec<(String, Vec<u8>)>;

/// Row and category labels of `rows`: every dimension that varies among them.
fn labels(rows: &[&CellResult]) -> Vec<String> {
    let dims = Dims::of(rows);
    rows.iter().map(|r| dims.label(&r.cell, &[])).collect()
}

/// A cell's full name (every dimension but the defaults), for lists of failed cells.
fn label(c: &Cell) -> String {
    Dims::of(&[]).constant(c, &[])
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn methods_of(results: &[&CellResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in results {
        for m in &r.methods {
            if !names.contains(&m.method) {
                names.push(m.method.clone());
            }
        }
    }
    names
}

fn result_of<'a>(r: &'a CellResult, method: &str) -> Option<&'a MethodResult> {
    r.methods.iter().find(|m| m.method == method)
}

fn ms(r: &CellResult, method: &str) -> Option<f64> {
    result_of(r, method).and_then(|m| m.makespan_ms)
}

/// Why a method has no value in a cell, in a few words: printed in its table cell and beside
/// its "×" in a figure, so a missing value never reads as 0 or as a plotting failure.
fn why_absent(r: &CellResult, method: Option<&MethodResult>) -> &'static str {
    if r.does_not_fit {
        return "does not fit";
    }
    match method {
        None => "not run",
        Some(m) if m.makespan_ms.is_some() => "not measured",
        Some(m) => match m.status {
            Some(MethodStatus::Infeasible) => "infeasible",
            Some(MethodStatus::Scheduled) => "not evaluated",
            Some(MethodStatus::NoSchedule) | None => "no schedule",
        },
    }
}

/// A table cell: the value, or why there is none.
fn value_or_why(
    r: &CellResult,
    method: &str,
    value: impl Fn(&MethodResult) -> Option<f64>,
    digits: usize,
) -> String {
    let m = result_of(r, method);
    match m.and_then(&value) {
        Some(v) => format!("{v:.digits$}"),
        None => why_absent(r, m).into(),
    }
}

/// Where Ideal is out of reach among `rows` (a NoC-bound chip): a note on each such Ideal
/// point for the figure's CSV, a line in the README naming the points (`at(i)`), and the
/// suffix for the figure's title ("" when Ideal is reachable everywhere).
fn unreachable_ideal(
    rows: &[&CellResult],
    marks: &mut Marks,
    at: &dyn Fn(usize) -> String,
    md: &mut String,
) -> String {
    let unreachable: Vec<(usize, &str)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.ideal_unreachable.as_deref().map(|w| (i, w)))
        .collect();
    let (Some((_, why)), Some(ideal)) = (unreachable.first(), marks.reference) else {
        return String::new();
    };
    let points: Vec<String> = unreachable.iter().map(|(i, _)| at(*i)).collect();
    md.push_str(&format!(
        "\n{why}; at {}, Ideal is no target.\n",
        points.join(", ")
    ));
    for (i, why) in &unreachable {
        marks.point_notes.push((ideal, *i, why.to_string()));
    }
    if unreachable.len() == rows.len() {
        " (Ideal unreachable: NoC-bound)".into()
    } else {
        format!(
            " (Ideal unreachable at {} of {} points: NoC-bound)",
            unreachable.len(),
            rows.len()
        )
    }
}

/// Every grid dimension of each of `rows` as a CSV column (the chip included), so a figure's
/// data says which cell each point is, whatever the figure's title and panels show.
fn cell_context(rows: &[&CellResult]) -> Vec<(String, Vec<String>)> {
    dims::csv_dims(rows)
        .iter()
        .map(|d| {
            (
                d.column().to_string(),
                rows.iter().map(|r| d.raw(&r.cell)).collect(),
            )
        })
        .collect()
}

/// One series per method over `rows` (point `i` at `x(i, row)`), and an [`Absent`] for each
/// row where a method has no value; then, with `ideal`, Elk's Ideal as the reference series.
fn method_series(
    methods: &[String],
    rows: &[&CellResult],
    x: impl Fn(usize, &CellResult) -> f64,
    value: impl Fn(&MethodResult) -> Option<f64>,
    ideal: bool,
) -> (Vec<Series>, Marks) {
    let mut marks = Marks {
        context: cell_context(rows),
        ..Marks::default()
    };
    let mut series = Vec::new();
    for (s, name) in methods.iter().enumerate() {
        let mut points = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let m = result_of(r, name);
            let v = m.and_then(&value);
            if v.is_none() {
                marks.absent.push(Absent {
                    series: s,
                    point: i,
                    label: why_absent(r, m).into(),
                });
            }
            points.push((x(i, r), v));
        }
        series.push(Series {
            name: name.clone(),
            points,
        });
    }
    // Routed MoE cells have no Ideal (docs/moe.md): no series of crosses for them.
    if ideal && rows.iter().any(|r| r.ideal_ms.is_some()) {
        let s = series.len();
        let mut points = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            if r.ideal_ms.is_none() {
                let label = if r.does_not_fit {
                    "does not fit"
                } else {
                    "no Ideal figure"
                };
                marks.absent.push(Absent {
                    series: s,
                    point: i,
                    label: label.into(),
                });
            }
            points.push((x(i, r), r.ideal_ms));
        }
        series.push(Series {
            name: "ideal".into(),
            points,
        });
        marks.reference = Some(s);
    }
    (series, marks)
}

/// What the modes of a training figure's cells compute, one sentence each.
fn training_modes(rows: &[&CellResult]) -> String {
    let mut modes: Vec<&str> = rows.iter().map(|r| r.cell.mode.as_str()).collect();
    modes.sort_unstable();
    modes.dedup();
    let mut s = String::new();
    for m in modes {
        s.push_str(match m {
            "forward-batch" => {
                "Mode forward-batch: the forward pass of a training batch alone (no backward \
                 pass, no optimizer update), which is what the reference artifact's Fig 24 \
                 calls training.\n\n"
            }
            "training" => {
                "Mode training: the whole step (forward, backward with two gradient MatMuls \
                 per MatMul, Adam update with its state in HBM; docs/training.md).\n\n"
            }
            _ => "",
        });
    }
    s
}

/// What every row shares, for a figure's title: " (decode KV4096 on ipu-pod4, HBM 16 TB/s)".
fn shared(rows: &[&CellResult], skip: &[Dim]) -> String {
    let c = rows
        .first()
        .map(|r| Dims::of(rows).constant(&r.cell, skip))
        .unwrap_or_default();
    if c.is_empty() {
        String::new()
    } else {
        format!(": {c}")
    }
}

/// Whether `results` are exactly the cells of preset `name` (the paper's grid), so the
/// paper's figures may be quoted beside them.
fn is_preset(results: &[CellResult], name: &str) -> bool {
    let Some(grid) =
        crate::grid::preset(name).and_then(|t| crate::grid::Grid::from_toml(name, t).ok())
    else {
        return false;
    };
    let mut want: Vec<String> = grid.cells().iter().map(Cell::key).collect();
    let mut have: Vec<String> = results.iter().map(|r| r.cell.key()).collect();
    want.sort();
    have.sort();
    want == have
}

/// Builds the report for results of one grid.
pub fn report(results: &[CellResult], title: &str, header: &Header) -> Result<Files> {
    let figure = results.first().map_or("bars", |r| r.figure.as_str());
    if let Some(other) = results.iter().find(|r| r.figure != figure) {
        return Err(ReportError::Refused {
            figure: figure.into(),
            detail: format!(
                "the results mix figure types '{figure}' and '{}' (results of different grids); \
                 report each grid's results apart",
                other.figure
            ),
        });
    }
    let mut md = header.markdown(title);
    let mut files: Files = Vec::new();
    let errors: Vec<&CellResult> = results.iter().filter(|r| r.error.is_some()).collect();
    let ok: Vec<CellResult> = results
        .iter()
        .filter(|r| r.error.is_none())
        .cloned()
        .collect();
    // Tables and figures show every cell with a result, and the configurations that do not
    // fit the chip (a result too, marked as such); failed cells are listed below.
    let shown: Vec<&CellResult> = results
        .iter()
        .filter(|r| r.error.is_none() || r.does_not_fit)
        .collect();
    md.push_str(&format!(
        "{} cells ({} with results). Latencies are the simulator's makespans in ms; Ideal is Elk's figure (not a schedule, not a bound).\n\n",
        results.len(),
        ok.len()
    ));
    if figure == "training" {
        md.push_str(&training_modes(&shown));
    }
    let mut finding = match figure {
        "breakdown" => breakdown(&shown, &mut md, &mut files, &header.style)?,
        "vs-hbm" | "vs-noc" | "vs-cores" | "training" => {
            sweep_lines(figure, &shown, &mut md, &mut files, &header.style)?
        }
        _ => latency_bars(
            &shown,
            is_preset(results, "fig17"),
            &mut md,
            &mut files,
            &header.style,
        )?,
    };
    finding.question = format!("{title}: {}", finding.question);
    if !errors.is_empty() {
        finding.finding.push_str(&format!(
            " {} of {} cells have no result (listed in the report).",
            errors.len(),
            results.len()
        ));
    }
    files.push(finding.file());
    certified_gaps(&shown, &mut md, &mut files);
    if !errors.is_empty() {
        md.push_str("\n## Cells without results\n\n| cell | why |\n|---|---|\n");
        for r in errors {
            md.push_str(&format!(
                "| {} | {} |\n",
                label(&r.cell),
                r.error.as_deref().unwrap_or("").replace('|', "/")
            ));
        }
    }
    let unscheduled: Vec<_> = ok
        .iter()
        .flat_map(|r| r.methods.iter().map(move |m| (r, m)))
        .filter(|(_, m)| m.makespan_ms.is_none())
        .collect();
    if !unscheduled.is_empty() {
        md.push_str("\n## Methods without a schedule\n\n| cell | method | status | why |\n|---|---|---|---|\n");
        for (r, m) in unscheduled {
            let status = match m.status {
                Some(MethodStatus::Infeasible) => "infeasible (proven)",
                Some(MethodStatus::NoSchedule) => "no schedule found",
                Some(MethodStatus::Scheduled) => "scheduled, not evaluated",
                None => "no schedule (not recorded why)",
            };
            md.push_str(&format!(
                "| {} | {} | {status} | {} |\n",
                label(&r.cell),
                m.method,
                m.reason.as_deref().unwrap_or("").replace('|', "/")
            ));
        }
    }
    files.insert(0, ("README.md".into(), md.into_bytes()));
    crate::plot::relink(&mut files);
    Ok(files)
}

/// Grids with `bound = true`: each cell's certified bound and every method's gap to it, as a
/// table and as `gaps.csv` (one row per cell and method, every grid dimension a column).
fn certified_gaps(rows: &[&CellResult], md: &mut String, files: &mut Files) {
    let bounded: Vec<&CellResult> = rows.iter().copied().filter(|r| r.bound.is_some()).collect();
    if bounded.is_empty() {
        return;
    }
    let methods = methods_of(&bounded);
    md.push_str("\n## Certified gaps\n\nEach method's gap ≤ % to the cell's certified lower bound (the segment relaxation's LP bound, or the roofline's where it is stronger; docs/exact.md): at least that close to the optimum. Data: [gaps.csv](gaps.csv).\n\n| configuration | bound ms | bound |");
    for m in &methods {
        md.push_str(&format!(" {m} gap ≤ % |"));
    }
    md.push_str(&format!(
        "\n|---|---|---|{}\n",
        "---|".repeat(methods.len())
    ));
    let names = labels(&bounded);
    let mut csv = String::new();
    let csv_dims = dims::csv_dims(&bounded);
    let columns: Vec<&str> = csv_dims.iter().map(|d| d.column()).collect();
    csv.push_str(&columns.join(","));
    csv.push_str(",method,makespan_ms,bound_ms,bound_source,gap_le_pct\n");
    for (r, name) in bounded.iter().zip(&names) {
        let Some(b) = &r.bound else { continue };
        md.push_str(&format!("| {name} | {:.4} | {} |", b.bound_ms, b.source));
        for m in &methods {
            md.push_str(&format!(" {} |", value_or_why(r, m, |x| x.gap_le_pct, 2)));
        }
        md.push('\n');
        let dims: Vec<String> = csv_dims
            .iter()
            .map(|d| crate::plot::csv_field(&d.raw(&r.cell)))
            .collect();
        for m in &r.methods {
            csv.push_str(&format!(
                "{},{},{},{},{},{}\n",
                dims.join(","),
                crate::plot::csv_field(&m.method),
                m.makespan_ms.map_or(String::new(), |v| v.to_string()),
                b.bound_ms,
                crate::plot::csv_field(&b.source),
                m.gap_le_pct.map_or(String::new(), |v| v.to_string()),
            ));
        }
    }
    files.push(("gaps.csv".into(), csv.into_bytes()));
}

/// The method a headline quotes: Elk-Full when the grid ran it, else the last method.
fn headline_method(methods: &[String]) -> Option<&String> {
    methods
        .iter()
        .find(|m| m.as_str() == "elk-full")
        .or(methods.last())
}

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

fn latency_bars(
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
    let (series, mut marks) =
        method_series(&methods, results, |i, _| i as f64, |m| m.makespan_ms, true);
    marks.groups = groups.clone();
    let suffix = unreachable_ideal(results, &mut marks, &|i| names[i].clone(), md);
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
    md.push_str("![latency](latency.svg)\n\n![% of Ideal](pct_of_ideal.svg)\n\nIn the figures, \"×\" on the axis marks a method without a schedule (the footnote under the plot says where and why: \"no schedule\" when the heuristic finds none, \"infeasible\" when none exists, \"does not fit\" when no plan of an operator fits the chip's SRAM); in the latency figure Ideal is the black outlined bar.\n");
    Ok(finding)
}

fn breakdown(
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
            let total = b.map(|b| b.preload_only + b.overlapped + b.execute_only + b.noc_bound);
            let pct = |f: fn(&elk_sim::Breakdown) -> elk_stage::Cycles| {
                b.zip(total)
                    .map(|(b, tot)| 100.0 * f(&b).get() / tot.get().max(f64::MIN_POSITIVE))
            };
            md.push_str(&format!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                fmt(r.cell.hbm_tbps, 1),
                m.method,
                value_or_why(r, &m.method, |x| x.makespan_ms, 4),
                fmt(pct(|b| b.preload_only), 1),
                fmt(pct(|b| b.overlapped), 1),
                fmt(pct(|b| b.execute_only), 1),
                fmt(pct(|b| b.noc_bound), 1),
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
            (|m: &crate::cell::MethodResult| m.hbm_util.map(|u| 100.0 * u))
                as fn(&crate::cell::MethodResult) -> Option<f64>,
        ),
        ("NoC utilisation (%)", "noc_util", |m| {
            m.noc_util.map(|u| 100.0 * u)
        }),
    ] {
        let (series, marks) = method_series(&methods, results, |i, _| i as f64, f, false);
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

/// The swept quantity of a line figure and its axis description.
fn x_of(figure: &str, c: &Cell) -> (f64, &'static str) {
    match figure {
        "vs-noc" => (c.noc_scale, "NoC bandwidth (× the chip's)"),
        "vs-cores" => (c.cores.map_or(f64::NAN, |n| n as f64), "cores"),
        "training" => (c.compute_scale, "compute speed (× the chip's)"),
        _ => (c.hbm_tbps.unwrap_or(f64::NAN), "HBM bandwidth (TB/s)"),
    }
}

/// The grid dimension a line figure sweeps.
fn x_dim(figure: &str) -> Dim {
    match figure {
        "vs-noc" => Dim::Noc,
        "vs-cores" => Dim::Cores,
        "training" => Dim::Compute,
        _ => Dim::Hbm,
    }
}

/// One line figure per combination of everything but the swept quantity (and what moves
/// with it, as HBM with the core count in Fig 23): (title, rows), in the grid's order. A
/// grid of two chips draws two panels, never one line through both chips' points. Refused:
/// a cell without the swept quantity, or two cells at one x in one panel.
fn panels<'a>(
    figure: &str,
    results: &[&'a CellResult],
) -> Result<Vec<(String, Vec<&'a CellResult>)>> {
    let x = x_dim(figure);
    if let Some(r) = results.iter().find(|r| x_of(figure, &r.cell).0.is_nan()) {
        return Err(ReportError::Refused {
            figure: figure.into(),
            detail: format!(
                "'{figure}' plots against {}, which cell {} ({}) does not set; \
                 give the grid a list for it, or use figure = \"bars\"",
                x_of(figure, &r.cell).1,
                r.cell.index,
                label(&r.cell)
            ),
        });
    }
    let dims = Dims::of(results);
    let mut skip = vec![x];
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
            .map(|r| x_of(figure, &r.cell).0.to_string())
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

fn sweep_lines(
    figure: &str,
    results: &[&CellResult],
    md: &mut String,
    files: &mut Files,
    style: &Style,
) -> Result<Finding> {
    let methods = methods_of(results);
    let groups = panels(figure, results)?;
    let training = figure == "training";
    let y_desc = if training {
        "throughput (TFLOP/s)"
    } else {
        "latency (ms)"
    };
    let of = |m: &MethodResult| if training { m.tflops } else { m.makespan_ms };
    let value = |r: &CellResult, m: &str| result_of(r, m).and_then(of);
    for (n, (group, rows)) in groups.iter().enumerate() {
        let x_desc = rows.first().map_or("", |r| x_of(figure, &r.cell).1);
        md.push_str(&format!("## {group}\n\n| {x_desc} |"));
        let unit = if training { "TFLOP/s" } else { "ms" };
        for m in &methods {
            md.push_str(&format!(" {m} {unit} |"));
        }
        // Routed MoE cells have no Ideal figure (docs/moe.md): no column of "no figure".
        let with_ideal = !training && rows.iter().any(|r| r.ideal_ms.is_some() || r.does_not_fit);
        if with_ideal {
            md.push_str(" ideal ms |");
        }
        md.push_str(&format!(
            "\n|---|{}\n",
            "---|".repeat(methods.len() + usize::from(with_ideal))
        ));
        for r in rows {
            md.push_str(&format!("| {} |", x_of(figure, &r.cell).0));
            for m in &methods {
                md.push_str(&format!(" {} |", value_or_why(r, m, of, 4)));
            }
            if with_ideal {
                let ideal = match r.ideal_ms {
                    Some(i) => format!("{i:.4}"),
                    None if r.does_not_fit => "does not fit".into(),
                    None => "no figure".into(),
                };
                md.push_str(&format!(" {ideal} |"));
            }
            md.push('\n');
        }
        let (series, mut marks) = method_series(
            &methods,
            rows,
            |_, r| x_of(figure, &r.cell).0,
            of,
            !training,
        );
        let suffix = unreachable_ideal(
            rows,
            &mut marks,
            &|i| format!("{x_desc} = {}", x_of(figure, &rows[i].cell).0),
            md,
        );
        let title = format!("{group}{suffix}");
        let stem = format!("{figure}-{n}");
        let drawn = lines_marked(&title, x_desc, y_desc, &series, &marks, style)?;
        files.extend(drawn.files(&stem));
        md.push_str(&format!("\n![{group}]({stem}.svg)\n\n"));
    }
    // Headline: the quoted method (and Ideal) from the first to the last swept value.
    let unit = if training { "TFLOP/s" } else { "ms" };
    let Some(name) = headline_method(&methods) else {
        return Ok(Finding {
            question: format!("{y_desc} against the swept quantity"),
            finding: "no results".into(),
            number: "-".into(),
        });
    };
    let mut parts = Vec::new();
    let mut number = "-".to_string();
    for (group, rows) in &groups {
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            continue;
        };
        let (x0, x1) = (x_of(figure, &first.cell), x_of(figure, &last.cell));
        let (v0, v1) = (value(first, name), value(last, name));
        let mut part = format!(
            "{group}: {name} {} → {} {unit} from {} to {} ({})",
            fmt(v0, 2),
            fmt(v1, 2),
            x0.0,
            x1.0,
            x0.1
        );
        if !training {
            part.push_str(&format!(
                "; ideal {} → {}",
                fmt(first.ideal_ms, 2),
                fmt(last.ideal_ms, 2)
            ));
        }
        if number == "-" {
            if let Some((a, b)) = v0.zip(v1).filter(|(_, b)| *b > 0.0) {
                number = format!("{:.1}× ({group})", if training { b / a } else { a / b });
            }
        }
        parts.push(part);
    }
    Ok(Finding {
        question: format!("how does {name}'s {y_desc} change with the swept quantity?"),
        finding: format!("{}.", parts.join(". ")),
        number,
    })
}
