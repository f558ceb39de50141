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

mod bars;
mod breakdown;
mod dims;
mod expert_parallel;
mod gaps;
mod header;
mod lines;
mod series;
pub(crate) use series::sources_named;
mod values;

pub use header::{today, Files, Header};
pub(crate) use lines::routing_panels;
pub use series::IDEAL;

use elk_app::cell::{CellResult, MethodStatus};
use elk_app::grid::{Cell, FigureKind};
use elk_app::{AppError, Result};
use values::label;

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

/// Whether `results` are exactly the cells of preset `name` (the paper's grid), so the
/// paper's figures may be quoted beside them.
fn is_preset(results: &[CellResult], name: &str) -> bool {
    let Some(grid) =
        elk_app::grid::preset(name).and_then(|t| elk_app::grid::Grid::from_toml(name, t).ok())
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
        return Err(AppError::Refused {
            figure: figure.into(),
            detail: format!(
                "the results mix figure types '{figure}' and '{}' (results of different grids); \
                 report each grid's results apart",
                other.figure
            ),
        });
    }
    // A results file of a figure type this version does not know is drawn as bars.
    let kind = FigureKind::parse(figure).unwrap_or(FigureKind::Bars);
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
    let latency = !matches!(kind, FigureKind::Training | FigureKind::Breakdown);
    if latency && shown.iter().any(|r| r.bound.is_some()) {
        md.push_str("The latency figures draw each cell's certified lower bound in grey: no schedule of that cell is faster, so a method's distance to it bounds its distance to the optimum (the \"Certified gaps\" table below). Elk's ideal lies below the methods too, but is no bound.\n\n");
    }
    if shown.iter().any(|r| r.cell.routing.is_some()) {
        md.push_str("MoE cells (with a routing) run the load policies over sampled routing steps: each value is the mean over the steps, the whiskers span their p50 to p99, and the oracle (it knows each step's routing) is the black dashed reference; a certified bound is the steps' mean, its grey band their lowest to highest (docs/moe.md).\n\n");
    }
    if kind == FigureKind::Training {
        md.push_str(&training_modes(&shown));
    }
    let mut finding = match kind {
        FigureKind::Breakdown => breakdown::breakdown(&shown, &mut md, &mut files, &header.style)?,
        FigureKind::VsHbm | FigureKind::VsNoc | FigureKind::VsCores | FigureKind::Training => {
            lines::sweep_lines(kind, &shown, &mut md, &mut files, &header.style)?
        }
        FigureKind::Bars => bars::latency_bars(
            &shown,
            is_preset(results, "fig17"),
            &mut md,
            &mut files,
            &header.style,
        )?,
    };
    if let Some(sets) = expert_parallel::section(&shown, &mut md) {
        finding = sets;
    }
    finding.question = format!("{title}: {}", finding.question);
    if !errors.is_empty() {
        finding.finding.push_str(&format!(
            " {} of {} cells have no result (listed in the report).",
            errors.len(),
            results.len()
        ));
    }
    files.push(finding.file());
    gaps::certified_gaps(&shown, &mut md, &mut files);
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
