//! Study `hbm-emulation`: the paper emulated HBM as one core broadcasting; real chips have C
//! distributed controllers. Each method's schedule is replayed by the detailed simulator with
//! the single broadcasting controller and with C ∈ {2, 4, 8, 16} controllers, on an
//! all-to-all chip (ipu-pod4) and a mesh (sn40l-like, 40 × 26). This is its run, one
//! [`Setup`] per (model, chip); its report is `elk_reports::studies::hbm_emulation`.

use super::{OnStep, Steps};
use crate::Result;
use elk_heuristics::by_name;
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::{ChipSpec, Topology};
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{self, ZooParams};
use elk_sim::detailed::{controller_cores, simulate_detailed, DetailedConfig, HbmLayout};
use elk_stage::instance::{LoadOrder, NamedOrder};
use elk_stage::method::Budget;

/// The numbers of distributed controllers C.
pub const COUNTS: [usize; 4] = [2, 4, 8, 16];

/// The methods replayed.
pub const METHODS: [&str; 2] = ["basic", "elk-full"];

/// The setups: (zoo model, batch, KV length, chip preset), two layers decoded.
const SETUPS: [(&str, u64, u64, &str); 2] = [
    ("llama2-13b", 32, 2048, "ipu-pod4"),
    ("llama2-7b", 8, 512, "sn40l-like"),
];

/// One (model, chip) and its methods' replays.
pub struct Setup {
    /// The zoo model (two layers of it).
    pub model: &'static str,
    /// The batch.
    pub batch: u64,
    /// The KV length.
    pub kv: u64,
    /// The chip preset.
    pub chip: &'static str,
    /// Its topology.
    pub topology: Topology,
    /// Its HBM bandwidth, TB/s.
    pub hbm_tbps: f64,
    /// The replays of each method of [`METHODS`] that has a schedule, in that order.
    pub replays: Vec<Replays>,
}

/// One method's schedule, on the stage model and replayed.
pub struct Replays {
    /// The method.
    pub method: &'static str,
    /// The stage model's makespan, ms.
    pub analytic_ms: f64,
    /// The replay with one broadcasting controller (the paper's emulation), ms.
    pub single_ms: f64,
    /// The replays with C distributed controllers, per C of [`COUNTS`], ms.
    pub distributed_ms: Vec<f64>,
    /// The hottest link's (or port group's) utilisation in the single replay, 0–1.
    pub single_max_link: f64,
    /// The same with the most controllers (the last of [`COUNTS`]).
    pub distributed_max_link: f64,
}

/// Runs the study, each detailed simulation a step of `progress`; instances are planned
/// through `plans`.
pub fn run(plans: Option<&PlanCache>, progress: &OnStep<'_>) -> Result<Vec<Setup>> {
    let per_method = 1 + COUNTS.len();
    let steps = Steps::new(SETUPS.len() * METHODS.len() * per_method, progress);
    let mut setups = Vec::new();
    for (model, batch, kv, chip_name) in SETUPS {
        steps.starting(&format!("{model} on {chip_name}: plan tables"));
        let chip = ChipSpec::preset(chip_name)?;
        let mut params = ZooParams::new(Mode::Decode, batch, kv);
        params.layers = Some(2);
        let graph = zoo::build(model, &params)?;
        let opts = InstanceOptions {
            load_order: LoadOrder::Named(NamedOrder::Free),
            plan_cache: plans.cloned(),
            ..InstanceOptions::default()
        };
        let inst = build_instance(&graph, &chip, &opts)?;
        let mut replays = Vec::new();
        for name in METHODS {
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
            let mut distributed_ms = Vec::new();
            let mut last_max = 0.0;
            for c in COUNTS {
                let cfg = DetailedConfig {
                    layout: HbmLayout::Distributed(controller_cores(&chip, c)),
                    ..base.clone()
                };
                steps.starting(&format!("{what}, detailed, C = {c}"));
                let r = simulate_detailed(&inst, &s, &chip, &cfg)?;
                steps.finished(&format!("{what}, C = {c} done"));
                distributed_ms.push(r.makespan_ms);
                last_max = r.hottest_links.first().map_or(0.0, |l| l.utilisation);
            }
            replays.push(Replays {
                method: name,
                analytic_ms: inst.ms(elk_sim::evaluate(&inst, &s).makespan_cycles),
                single_ms: single.makespan_ms,
                distributed_ms,
                single_max_link: single.hottest_links.first().map_or(0.0, |l| l.utilisation),
                distributed_max_link: last_max,
            });
        }
        setups.push(Setup {
            model,
            batch,
            kv,
            chip: chip_name,
            topology: chip.noc.topology,
            hbm_tbps: chip.hbm.bandwidth_bytes_per_s / 1e12,
            replays,
        });
    }
    Ok(setups)
}
