//! Study `ablation`: what each stage of Elk buys. Elk-Full against Elk-Dyn (no order
//! permutation), both as the artifact runs them; then the paper's greedy cost-aware allocator
//! (`elk-dyn-greedy`, which the artifact never runs) with and without its cold-layout trades
//! (off: every operator keeps the fastest option that fits when it runs) and with the preload
//! depth capped at 1, 2 and 4 operators.

use crate::cell::cell_instance;
use crate::error::Result;
use crate::grid::Cell;
use crate::plot::{bars, Series};
use crate::report::{Files, Header};
use elk_heuristics::{by_name, ElkDynGreedy};
use elk_stage::instance::Instance;
use elk_stage::method::Method;
use elk_stage::units::Cycles;

/// The variants, each a configured method run through the same trait as every other.
fn methods() -> Vec<(&'static str, Box<dyn Method>)> {
    let dyn_with = |cost_aware, max_depth| -> Box<dyn Method> {
        Box::new(ElkDynGreedy {
            cost_aware,
            max_depth,
        })
    };
    let named = |n: &str| by_name(n).expect("a registered heuristic");
    vec![
        ("elk-full", named("elk-full")),
        ("elk-dyn", named("elk-dyn")),
        ("elk-dyn-greedy", dyn_with(true, None)),
        ("greedy, no trades", dyn_with(false, None)),
        ("greedy, depth ≤ 1", dyn_with(true, Some(1))),
        ("greedy, depth ≤ 2", dyn_with(true, Some(2))),
        ("greedy, depth ≤ 4", dyn_with(true, Some(4))),
    ]
}

fn variants() -> Vec<&'static str> {
    methods().into_iter().map(|(label, _)| label).collect()
}

fn makespan(inst: &Instance, variant: &str) -> Result<Option<Cycles>> {
    let Some((_, m)) = methods().into_iter().find(|(label, _)| *label == variant) else {
        return Ok(None);
    };
    Ok(elk_heuristics::judged(inst, m.as_ref())?.map(|j| j.1))
}

/// Runs the study.
pub fn run(header: &Header) -> Result<Files> {
    let mut md = header.markdown("Study: ablation of Elk's components");
    md.push_str("Decode B32 KV2048 on ipu-pod4 (16 TB/s), free load order, full models. Latency in ms (simulator) and in % above Elk-Full.\n\n| model |");
    let vs = variants();
    for v in &vs {
        md.push_str(&format!(" {v} |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(vs.len()));
    md.push('\n');
    let models = ["llama2-13b", "gemma2-27b", "llama2-70b"];
    let mut series: Vec<Series> = vs
        .iter()
        .map(|v| Series {
            name: v.to_string(),
            points: Vec::new(),
        })
        .collect();
    for (mi, model) in models.iter().enumerate() {
        let cell = Cell::decode(model, 32, 2048);
        let inst = cell_instance(&cell)?;
        let times: Vec<Option<f64>> = vs
            .iter()
            .map(|v| Ok(makespan(&inst, v)?.map(|t| inst.ms(t))))
            .collect::<Result<_>>()?;
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
    let svg = bars("Ablation of Elk", &categories, &series, "latency (ms)")?;
    md.push_str("\n![ablation](ablation.svg)\n");
    Ok(vec![("README.md".into(), md), ("ablation.svg".into(), svg)])
}
