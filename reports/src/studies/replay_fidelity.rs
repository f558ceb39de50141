//! Study `replay-fidelity`'s report: is the stage model's makespan achievable on the chip?
//! From the replays `elk_app::studies::replay_fidelity` runs (every Fig-17 method's schedule
//! on every Fig-17 cell, paced and greedy, beside the stage model with SPEC §4's NoC row and
//! with the phased one), a summary table, every schedule's row, a figure and the finding.

use crate::finding::Finding;
use crate::plot::{bars, Series};
use crate::report::{Files, Header};
use elk_app::studies::replay_fidelity::{Fidelity, Row, METHODS};
use elk_app::studies::{summary, OnStep};
use elk_app::Result;

/// 100·(a/b − 1): how far `a` is above `b`, in % of `b`.
fn pct(a: f64, b: f64) -> f64 {
    100.0 * (a / b - 1.0)
}

/// Runs the study over the Fig-17 grid, each (cell, method) a step of `progress`, and writes
/// its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let fidelity = elk_app::studies::replay_fidelity::run(header.plan_cache.as_ref(), progress)?;
    write(header, &fidelity)
}

/// The report of the study's replays.
fn write(header: &Header, fidelity: &Fidelity) -> Result<Files> {
    let rows = &fidelity.rows;
    let mut files = Vec::new();
    let mut md = header.markdown("Study: is the stage model's makespan achievable?");
    md.push_str(&intro(fidelity.cells));
    md.push_str(&summary_table(rows));
    md.push_str(&full_table(rows));
    if !fidelity.skipped.is_empty() {
        md.push_str(&format!(
            "\nNot replayed: {}.\n",
            fidelity.skipped.join("; ")
        ));
    }
    // Every Fig-17 cell is on the chip's own HBM: the title names it.
    let hbm = fidelity
        .hbm_tbps
        .map_or(String::new(), |tbps| format!("HBM {tbps} TB/s, the chip's"));
    let figure = figure(rows, &hbm, header)?;
    files.extend(figure.files("fidelity"));
    md.push_str("\n![paced replay against the two analytic models](fidelity.svg)\n");
    files.insert(0, ("README.md".into(), md.into_bytes()));
    files.push(finding(rows).file());
    Ok(files)
}

fn intro(cells: usize) -> String {
    format!(
        "Each Fig-17 method's schedule on each of the {cells} Fig-17 cells (decode on ipu-pod4, \
         all-to-all, 16 HBM controllers) is replayed in continuous time by the detailed simulator \
         (`elk-opt simulate --detailed`; docs/detailed.md), with **paced** loads (the DMA sends \
         each stage's planned work and waits for the next stage) and with **greedy** ones (as \
         fast as HBM and links allow). The replays are set beside the stage model with **SPEC \
         §4**'s NoC row and with the **phased** one, which knows that an operator computes \
         before it shifts and that loads move at most the compute phase's length of HBM work \
         beside it (`elk_sim::phased`). The phased row is the judge of every built instance: the \
         methods scheduled against it. Δ = 100·(replay − model)/model.\n\n"
    )
}

/// Median and max of the three deviations, per method and overall.
fn summary_table(rows: &[Row]) -> String {
    let mut md = String::from(
        "| methods | schedules | paced vs SPEC §4: median / max Δ % | paced vs phased: median / max \\|Δ\\| % | greedy vs SPEC §4: median / max Δ % |\n|---|---|---|---|---|\n",
    );
    let groups: Vec<(&str, Vec<&Row>)> = METHODS
        .iter()
        .map(|&m| (m, rows.iter().filter(|r| r.method == m).collect()))
        .chain([("all", rows.iter().collect())])
        .collect();
    for (name, group) in groups {
        let stat = |f: &dyn Fn(&Row) -> f64| {
            let v: Vec<f64> = group.iter().map(|r| f(r)).collect();
            let (median, _, max) = summary(&v);
            format!("{median:.2} / {max:.2}")
        };
        md.push_str(&format!(
            "| {name} | {} | {} | {} | {} |\n",
            group.len(),
            stat(&|r| pct(r.paced_ms, r.spec_ms)),
            stat(&|r| pct(r.paced_ms, r.phased_ms).abs()),
            stat(&|r| pct(r.greedy_ms, r.spec_ms)),
        ));
    }
    md.push('\n');
    md
}

fn full_table(rows: &[Row]) -> String {
    let mut md = String::from(
        "| configuration | method | SPEC §4 ms | phased ms | paced replay ms | greedy replay ms | paced vs SPEC §4 Δ % | paced vs phased Δ % | greedy vs SPEC §4 Δ % |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:+.2} | {:+.2} | {:+.2} |\n",
            r.config,
            r.method,
            r.spec_ms,
            r.phased_ms,
            r.paced_ms,
            r.greedy_ms,
            pct(r.paced_ms, r.spec_ms),
            pct(r.paced_ms, r.phased_ms),
            pct(r.greedy_ms, r.spec_ms),
        ));
    }
    md
}

/// Elk-Full's three deviations per configuration.
fn figure(rows: &[Row], hbm: &str, header: &Header) -> Result<crate::plot::Figure> {
    let full: Vec<&Row> = rows.iter().filter(|r| r.method == "elk-full").collect();
    let categories: Vec<String> = full.iter().map(|r| r.config.clone()).collect();
    let series = |name: &str, f: &dyn Fn(&Row) -> f64| Series {
        name: name.into(),
        points: full
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64, Some(f(r))))
            .collect(),
    };
    bars(
        &format!(
            "Elk-Full on the Fig-17 grid (decode on ipu-pod4, {hbm}): detailed replay vs \
             analytic makespan"
        ),
        &categories,
        &[
            series("greedy replay vs SPEC §4 model", &|r| {
                pct(r.greedy_ms, r.spec_ms)
            }),
            series("paced replay vs SPEC §4 model", &|r| {
                pct(r.paced_ms, r.spec_ms)
            }),
            series("paced replay vs phased model", &|r| {
                pct(r.paced_ms, r.phased_ms)
            }),
        ],
        "replay − model (% of the model)",
        &header.style,
    )
}

fn finding(rows: &[Row]) -> Finding {
    let worst = |f: &dyn Fn(&Row) -> f64| rows.iter().map(f).fold(0.0f64, f64::max);
    let stage = worst(&|r| pct(r.paced_ms, r.spec_ms).abs());
    let phased = worst(&|r| pct(r.paced_ms, r.phased_ms).abs());
    let greedy = worst(&|r| pct(r.greedy_ms, r.spec_ms).abs());
    Finding {
        question: "Is the stage model's makespan achievable on the chip?".into(),
        finding: format!(
            "Over {} schedules (Fig-17 grid, 4 methods), paced replays differ from the stage \
             model with SPEC §4's NoC row by up to {stage:.2} % (greedy: {greedy:.2} %) and from \
             the phased stage model, the judge, by up to {phased:.2} %: SPEC §4's NoC row is \
             optimistic where a stage's loads need the links during its shifts.",
            rows.len()
        ),
        number: format!("{stage:.2} % / {phased:.2} %"),
    }
}
