//! Study `hbm-emulation`'s report: the paper emulated HBM as one core broadcasting; real chips
//! have C distributed controllers. From the replays `elk_app::studies::hbm_emulation` runs
//! (single broadcasting controller and C ∈ {2, 4, 8, 16} distributed ones, on an all-to-all
//! chip and a mesh), a table and a figure per setup, and the finding.

use crate::finding::Finding;
use crate::plot::{lines, Series};
use crate::report::{Files, Header};
use elk_app::studies::hbm_emulation::{Setup, COUNTS};
use elk_app::studies::OnStep;
use elk_app::Result;

/// Runs the study, each detailed simulation a step of `progress`, and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let setups = elk_app::studies::hbm_emulation::run(header.plan_cache.as_ref(), progress)?;
    write(header, &setups)
}

/// The report of the study's setups.
fn write(header: &Header, setups: &[Setup]) -> Result<Files> {
    let mut md =
        header.markdown("Study: HBM emulation — one broadcasting core vs distributed controllers");
    md.push_str("Each schedule (planned on the stage model) is replayed in continuous time by the detailed simulator (max-min fair links, controllers at the chip edges, ρ copies per byte, loads paced to the schedule's plan: docs/detailed.md). 'single' is the paper's emulation: one controller at core 0 with the full HBM bandwidth, multicasting. Latencies in ms; 'max link %' is the hottest link or port group's utilisation.\n\n");
    let mut files = Vec::new();
    let mut headline: Vec<(String, f64, f64, f64)> = Vec::new();
    for (n, setup) in setups.iter().enumerate() {
        let Setup {
            model,
            batch,
            kv,
            chip: chip_name,
            ..
        } = setup;
        md.push_str(&format!(
            "## {model} (2 layers) decode B{batch} KV{kv} on {chip_name} ({:?})\n\n| method | analytic | single | {} | max link % single | max link % C=16 |\n|---|---|---|{}---|---|\n",
            setup.topology,
            COUNTS.map(|c| format!("C={c}")).join(" | "),
            "---|".repeat(COUNTS.len())
        ));
        let mut series = Vec::new();
        for r in &setup.replays {
            let mut row = format!(
                "| {} | {:.4} | {:.4} |",
                r.method, r.analytic_ms, r.single_ms
            );
            for ms in &r.distributed_ms {
                row.push_str(&format!(" {ms:.4} |"));
            }
            row.push_str(&format!(
                " {:.1} | {:.1} |\n",
                100.0 * r.single_max_link,
                100.0 * r.distributed_max_link
            ));
            md.push_str(&row);
            if r.method == "elk-full" {
                headline.push((
                    format!("{model} (2 layers) on {chip_name}"),
                    r.analytic_ms,
                    r.single_ms,
                    r.distributed_ms.last().copied().unwrap_or(f64::NAN),
                ));
            }
            series.push(Series {
                name: format!("{}, C distributed", r.method),
                points: COUNTS
                    .iter()
                    .zip(&r.distributed_ms)
                    .map(|(&c, &ms)| (c as f64, Some(ms)))
                    .collect(),
            });
            series.push(Series {
                name: format!("{}, single broadcast", r.method),
                points: COUNTS
                    .iter()
                    .map(|&c| (c as f64, Some(r.single_ms)))
                    .collect(),
            });
        }
        let stem = format!("emulation-{n}");
        let file = format!("{stem}.svg");
        let figure = lines(
            &format!(
                "{model} (2 layers) decode B{batch} KV{kv} on {chip_name}, HBM {} TB/s",
                setup.hbm_tbps
            ),
            "HBM controllers C",
            "latency (ms, detailed simulator)",
            &series,
            &header.style,
        )?;
        files.extend(figure.files(&stem));
        md.push_str(&format!("\n![{model} on {chip_name}]({file})\n\n"));
    }
    files.insert(0, ("README.md".into(), md.into_bytes()));
    let c = COUNTS[COUNTS.len() - 1];
    let parts: Vec<String> = headline
        .iter()
        .map(|(setup, analytic, single, many)| {
            format!("{setup}: Elk-Full {single:.4} ms with a single broadcasting controller vs {many:.4} ms with {c} distributed ones (stage model {analytic:.4} ms)")
        })
        .collect();
    let worst = headline
        .iter()
        .map(|(s, _, single, many)| (single / many, s))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    files.push(
        Finding {
            question: "Does the single-core HBM emulation matter?".into(),
            finding: format!("{}.", parts.join("; ")),
            number: worst.map_or("-".into(), |(r, s)| format!("{r:.1}× ({s})")),
        }
        .file(),
    );
    Ok(files)
}
