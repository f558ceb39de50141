//! Study `hbm-emulation`: the paper emulated HBM as one core broadcasting; real chips have C
//! distributed controllers. Each method's schedule is replayed by the detailed simulator with
//! the single broadcasting controller and with C ∈ {2, 4, 8, 16} controllers, on an
//! all-to-all chip (ipu-pod4) and a mesh (sn40l-like, 40 × 26).

use super::{OnStep, Steps};
use crate::error::Result;
use crate::finding::Finding;
use crate::plot::{lines, Series};
use crate::report::{Files, Header};
use elk_heuristics::by_name;
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::zoo::{self, ZooParams};
use elk_sim::detailed::{controller_cores, simulate_detailed, DetailedConfig, HbmLayout};
use elk_stage::instance::{LoadOrder, NamedOrder};
use elk_stage::method::Budget;

const COUNTS: [usize; 4] = [2, 4, 8, 16];

/// Runs the study, each detailed simulation a step of `progress`.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let mut md =
        header.markdown("Study: HBM emulation — one broadcasting core vs distributed controllers");
    md.push_str("Each schedule (planned on the stage model) is replayed in continuous time by the detailed simulator (max-min fair links, controllers at the chip edges, ρ copies per byte, loads paced to the schedule's plan: docs/detailed.md). 'single' is the paper's emulation: one controller at core 0 with the full HBM bandwidth, multicasting. Latencies in ms; 'max link %' is the hottest link or port group's utilisation.\n\n");
    let mut files = Vec::new();
    let setups = [
        ("llama2-13b", 32u64, 2048u64, "ipu-pod4"),
        ("llama2-7b", 8, 512, "sn40l-like"),
    ];
    let mut headline: Vec<(String, f64, f64, f64)> = Vec::new();
    let methods = ["basic", "elk-full"];
    let per_method = 1 + COUNTS.len();
    let steps = Steps::new(setups.len() * methods.len() * per_method, progress);
    for (n, (model, batch, kv, chip_name)) in setups.iter().enumerate() {
        steps.starting(&format!("{model} on {chip_name}: plan tables"));
        let chip = ChipSpec::preset(chip_name)?;
        let mut params = ZooParams::new(Mode::Decode, *batch, *kv);
        params.layers = Some(2);
        let graph = zoo::build(model, &params)?;
        let opts = InstanceOptions {
            load_order: LoadOrder::Named(NamedOrder::Free),
            plan_cache: header.plan_cache.clone(),
            ..InstanceOptions::default()
        };
        let inst = build_instance(&graph, &chip, &opts)?;
        md.push_str(&format!(
            "## {model} (2 layers) decode B{batch} KV{kv} on {chip_name} ({:?})\n\n| method | analytic | single | {} | max link % single | max link % C=16 |\n|---|---|---|{}---|---|\n",
            chip.noc.topology,
            COUNTS.map(|c| format!("C={c}")).join(" | "),
            "---|".repeat(COUNTS.len())
        ));
        let mut series = Vec::new();
        for name in methods {
            let what = format!("{model} on {chip_name}: {name}");
            steps.starting(&format!("{what}, schedule"));
            let Some(s) = by_name(name)
                .and_then(|m| m.schedule(&inst, &Budget::default()).ok())
                .and_then(|x| x.outcome.schedule().cloned())
            else {
                steps.skipped(per_method, &format!("{what}: no schedule"));
                continue;
            };
            let base = DetailedConfig::from_chip(&chip);
            steps.starting(&format!("{what}, detailed, single broadcast"));
            let single = simulate_detailed(
                &inst,
                &s,
                &chip,
                &DetailedConfig {
                    layout: HbmLayout::SingleBroadcast(0),
                    ..base.clone()
                },
            )?;
            steps.finished(&format!("{what}, single broadcast done"));
            let mut row = format!(
                "| {name} | {:.4} | {:.4} |",
                inst.ms(elk_sim::evaluate(&inst, &s).makespan_cycles),
                single.makespan_ms
            );
            let mut points = Vec::new();
            let mut last_max = 0.0;
            let mut last_ms = f64::NAN;
            for c in COUNTS {
                let cfg = DetailedConfig {
                    layout: HbmLayout::Distributed(controller_cores(&chip, c)),
                    ..base.clone()
                };
                steps.starting(&format!("{what}, detailed, C = {c}"));
                let r = simulate_detailed(&inst, &s, &chip, &cfg)?;
                steps.finished(&format!("{what}, C = {c} done"));
                row.push_str(&format!(" {:.4} |", r.makespan_ms));
                points.push((c as f64, Some(r.makespan_ms)));
                last_ms = r.makespan_ms;
                last_max = r.hottest_links.first().map_or(0.0, |l| l.utilisation);
            }
            let single_max = single.hottest_links.first().map_or(0.0, |l| l.utilisation);
            row.push_str(&format!(
                " {:.1} | {:.1} |\n",
                100.0 * single_max,
                100.0 * last_max
            ));
            md.push_str(&row);
            if name == "elk-full" {
                headline.push((
                    format!("{model} (2 layers) on {chip_name}"),
                    inst.ms(elk_sim::evaluate(&inst, &s).makespan_cycles),
                    single.makespan_ms,
                    last_ms,
                ));
            }
            series.push(Series {
                name: format!("{name}, C distributed"),
                points,
            });
            series.push(Series {
                name: format!("{name}, single broadcast"),
                points: COUNTS
                    .iter()
                    .map(|&c| (c as f64, Some(single.makespan_ms)))
                    .collect(),
            });
        }
        let stem = format!("emulation-{n}");
        let file = format!("{stem}.svg");
        let figure = lines(
            &format!(
                "{model} (2 layers) decode B{batch} KV{kv} on {chip_name}, HBM {} TB/s",
                chip.hbm.bandwidth_bytes_per_s / 1e12
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
