//! `elk-opt simulate --detailed`: replay the schedule on a concrete chip (topology, HBM
//! controllers, link contention), optionally beside the analytic stage model.

use clap::{Args, ValueEnum};
use elk_model::chip::{ChipOverrides, ChipSpec, Placement, Topology};
use elk_sim::detailed::{simulate_detailed_with, DetailedConfig, DetailedReport};
use elk_sim::trace::{ChromeTrace, NoTrace, TraceSink};
use elk_sim::Evaluation;
use elk_stage::instance::{ChipRef, Instance};
use elk_stage::schedule::Schedule;
use serde::Serialize;
use std::path::PathBuf;

/// Topology override.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyName {
    /// Every core reaches every other in one hop.
    AllToAll,
    /// 2-D mesh (needs --width, --height unless the chip has them).
    Mesh,
    /// 2-D torus.
    Torus,
}

impl TopologyName {
    /// The chip's topology.
    pub fn topology(self) -> Topology {
        match self {
            TopologyName::AllToAll => Topology::AllToAll,
            TopologyName::Mesh => Topology::Mesh,
            TopologyName::Torus => Topology::Torus,
        }
    }
}

/// Controller placement override.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementName {
    /// Spread along the mesh edges (evenly over core ids for all-to-all).
    Edges,
    /// One controller at core 0 broadcasting: the Elk paper's emulation.
    SingleCore,
}

/// Flags of the detailed simulator.
#[derive(Args, Debug, Clone)]
pub struct DetailedFlags {
    /// Replay in continuous time on the chip (links, controllers, contention).
    #[arg(long)]
    pub detailed: bool,
    /// Chip preset or TOML file the instance was built for (the replay's chip, before the
    /// overrides below). Default: the chip the instance file records (else ipu-pod4, with a
    /// warning); a warning when it is not the recorded chip.
    #[arg(long, requires = "detailed")]
    chip: Option<String>,
    /// Override the chip's HBM bandwidth, TB/s (decimal), as `--hbm-tbps` did when the
    /// instance was built (the recorded override is applied without it).
    #[arg(long, requires = "detailed")]
    hbm_tbps: Option<f64>,
    /// Override the chip's topology.
    #[arg(long, value_enum, requires = "detailed")]
    topology: Option<TopologyName>,
    /// Mesh/torus width in cores.
    #[arg(long, requires = "detailed")]
    width: Option<u64>,
    /// Mesh/torus height in cores.
    #[arg(long, requires = "detailed")]
    height: Option<u64>,
    /// Number of HBM controllers.
    #[arg(long, requires = "detailed")]
    hbm_controllers: Option<u64>,
    /// Controller placement.
    #[arg(long, value_enum, requires = "detailed")]
    placement: Option<PlacementName>,
    /// Also print the analytic makespan and the per-stage differences.
    #[arg(long, requires = "detailed")]
    compare: bool,
}

/// `simulate --detailed --json`: the replay's flags in `config`.
#[derive(Serialize, Debug)]
pub struct ReplayConfig {
    detailed: bool,
    chip: Option<String>,
    hbm_tbps: Option<f64>,
    topology: Option<TopologyName>,
    width_cores: Option<u64>,
    height_cores: Option<u64>,
    hbm_controllers: Option<u64>,
    placement: Option<PlacementName>,
    compare: bool,
}

/// The chip replayed on, named.
#[derive(Serialize)]
struct ChipJson {
    /// With the HBM override, as headers print it (`ipu-pod4 @ 8 TB/s HBM`).
    name: String,
    topology: Topology,
    width_cores: Option<u64>,
    height_cores: Option<u64>,
    hbm_controllers: u64,
    placement: Placement,
}

/// The detailed replay as `--json` prints it: a unit on every number, one named object per
/// controller.
#[derive(Serialize)]
struct ReportJson {
    makespan_cycles: elk_stage::units::Cycles,
    makespan_ms: f64,
    breakdown: BreakdownJson,
    link_util_mean_pct: f64,
    hottest_links: Vec<LinkJson>,
    controllers: Vec<ControllerJson>,
    op_start_cycles: Vec<elk_stage::units::Cycles>,
    op_end_cycles: Vec<elk_stage::units::Cycles>,
    overflow: Option<OverflowJson>,
    events: u64,
    steps: u64,
}

/// Where the time went.
#[derive(Serialize)]
struct BreakdownJson {
    compute_cycles: f64,
    shift_cycles: f64,
    load_wait_cycles: f64,
}

/// One NoC link (or port).
#[derive(Serialize)]
struct LinkJson {
    name: String,
    util_pct: f64,
}

/// One HBM controller's port.
#[derive(Serialize)]
struct ControllerJson {
    index: usize,
    util_pct: f64,
}

/// The first SRAM overflow.
#[derive(Serialize)]
struct OverflowJson {
    time_cycles: f64,
    op: String,
    used_bytes_per_core: u64,
    sram_bytes_per_core: u64,
}

impl From<&DetailedReport> for ReportJson {
    fn from(r: &DetailedReport) -> ReportJson {
        ReportJson {
            makespan_cycles: r.makespan_cycles,
            makespan_ms: r.makespan_ms,
            breakdown: BreakdownJson {
                compute_cycles: r.breakdown.compute,
                shift_cycles: r.breakdown.shift,
                load_wait_cycles: r.breakdown.load_wait,
            },
            link_util_mean_pct: 100.0 * r.link_utilisation_mean,
            hottest_links: r
                .hottest_links
                .iter()
                .map(|l| LinkJson {
                    name: l.name.clone(),
                    util_pct: 100.0 * l.utilisation,
                })
                .collect(),
            controllers: r
                .controller_utilisation
                .iter()
                .enumerate()
                .map(|(index, u)| ControllerJson {
                    index,
                    util_pct: 100.0 * u,
                })
                .collect(),
            op_start_cycles: r.op_start_cycles.clone(),
            op_end_cycles: r.op_end_cycles.clone(),
            overflow: r.overflow.as_ref().map(|o| OverflowJson {
                time_cycles: o.time_cycles,
                op: o.op.clone(),
                used_bytes_per_core: o.used,
                sram_bytes_per_core: o.sram,
            }),
            events: r.events,
            steps: r.steps,
        }
    }
}

/// One stage compared.
#[derive(Serialize)]
struct DetailedOutput<'a> {
    instance: &'a str,
    method: &'a str,
    #[serde(skip)]
    chip: String,
    #[serde(rename = "chip")]
    chip_json: ChipJson,
    #[serde(skip)]
    report: DetailedReport,
    #[serde(flatten)]
    report_json: ReportJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    analytic_makespan_cycles: Option<elk_stage::units::Cycles>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stages: Option<Vec<elk_sim::detailed::StageDiff>>,
}

impl DetailedFlags {
    /// The flags as `--json` prints them in `config`.
    pub fn config(&self) -> ReplayConfig {
        ReplayConfig {
            detailed: self.detailed,
            chip: self.chip.clone(),
            hbm_tbps: self.hbm_tbps,
            topology: self.topology,
            width_cores: self.width,
            height_cores: self.height,
            hbm_controllers: self.hbm_controllers,
            placement: self.placement,
            compare: self.compare,
        }
    }

    /// The chip with the overrides applied (validated like a TOML file), and the chip as
    /// given (the one the instance was built for).
    fn chip(&self, recorded: Option<&ChipRef>) -> anyhow::Result<(ChipSpec, ChipSpec)> {
        let base =
            super::chip_choice::for_replay(self.chip.as_deref(), self.hbm_tbps, recorded)?.named();
        let overrides = ChipOverrides {
            file: "(--chip with overrides)".into(),
            topology: self.topology.map(TopologyName::topology),
            width: self.width,
            height: self.height,
            controllers: self.hbm_controllers,
            placement: self.placement.map(|p| match p {
                PlacementName::Edges => Placement::Edges,
                PlacementName::SingleCore => Placement::SingleCore,
            }),
            ..ChipOverrides::default()
        };
        let chip = base.clone().with_overrides(&overrides)?;
        Ok((chip, base))
    }

    /// Runs the replay and prints it; `analytic` is the stage model's verdict, `recorded`
    /// the chip the instance file names; `json`: as JSON with these inputs in `config`.
    pub fn run<C: Serialize>(
        &self,
        inst: &Instance,
        recorded: Option<&ChipRef>,
        sched: &Schedule,
        analytic: &Evaluation,
        trace: Option<&PathBuf>,
        json: Option<&C>,
    ) -> anyhow::Result<()> {
        let (chip, base) = self.chip(recorded)?;
        let mut cfg = DetailedConfig::from_chip(&chip);
        // ν in the instance was computed on the chip as given, before any override.
        cfg.rho_per_nu = DetailedConfig::from_chip(&base).rho_per_nu;
        let mut chrome = ChromeTrace::new(inst.clock_hz);
        let sink: &mut dyn TraceSink = if trace.is_some() {
            &mut chrome
        } else {
            &mut NoTrace
        };
        let report = simulate_detailed_with(inst, sched, &chip, &cfg, sink)?;
        if let Some(path) = trace {
            super::output::write_atomic(path, &chrome.to_json())?;
        }
        let stages = self
            .compare
            .then(|| elk_sim::detailed::stage_diff(analytic, &report));
        let out = DetailedOutput {
            instance: &inst.name,
            method: &sched.method,
            chip: format!(
                "{} ({:?}{}, {} HBM controllers, {:?})",
                chip.name,
                chip.noc.topology,
                match (chip.noc.width, chip.noc.height) {
                    (Some(w), Some(h)) => format!(" {w}x{h}"),
                    _ => String::new(),
                },
                chip.hbm.controllers,
                chip.hbm.placement
            ),
            chip_json: ChipJson {
                name: chip.name.clone(),
                topology: chip.noc.topology,
                width_cores: chip.noc.width,
                height_cores: chip.noc.height,
                hbm_controllers: chip.hbm.controllers,
                placement: chip.hbm.placement,
            },
            analytic_makespan_cycles: self.compare.then_some(analytic.makespan_cycles),
            report_json: ReportJson::from(&report),
            report,
            stages,
        };
        if let Some(config) = json {
            return super::print_json("simulate-detailed", config, &out);
        }
        print_human(inst, &out);
        Ok(())
    }
}

fn print_human(inst: &Instance, out: &DetailedOutput) {
    let r = &out.report;
    println!(
        "{} — schedule by {}, detailed replay on {}",
        out.instance, out.method, out.chip
    );
    println!(
        "makespan:        {} = {:.6} ms (detailed)",
        r.makespan_cycles, r.makespan_ms
    );
    if let Some(a) = out.analytic_makespan_cycles {
        println!(
            "analytic:        {a} = {:.6} ms ({:+.2}% detailed vs analytic)",
            inst.ms(a),
            100.0 * ((r.makespan_cycles - a) / a)
        );
    }
    let pct = |x: f64| 100.0 * x / r.makespan_cycles.get().max(f64::MIN_POSITIVE);
    let b = &r.breakdown;
    println!(
        "time breakdown:  compute {:.1}%, shifts {:.1}%, waiting for loads {:.1}%",
        pct(b.compute),
        pct(b.shift),
        pct(b.load_wait)
    );
    println!(
        "NoC links:       mean utilisation {:.2}%; hottest: {}",
        100.0 * r.link_utilisation_mean,
        r.hottest_links
            .iter()
            .take(3)
            .map(|l| format!("{} {:.1}%", l.name, 100.0 * l.utilisation))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "HBM controllers: utilisation {}",
        r.controller_utilisation
            .iter()
            .map(|u| format!("{:.1}%", 100.0 * u))
            .collect::<Vec<_>>()
            .join(" ")
    );
    match &r.overflow {
        Some(o) => println!(
            "SRAM overflow:   at {:.1} cycles ({}): {} B per core, SRAM {} B",
            o.time_cycles, o.op, o.used, o.sram
        ),
        None => println!("SRAM:            no overflow"),
    }
    if let Some(stages) = &out.stages {
        let differing: Vec<&elk_sim::detailed::StageDiff> = stages
            .iter()
            .filter(|d| {
                (d.detailed_cycles - d.analytic_cycles).abs().get()
                    > 1e-6 * d.analytic_cycles.get().max(1.0)
            })
            .collect();
        println!("stages differing: {} of {}", differing.len(), stages.len());
        for d in differing.iter().take(20) {
            println!(
                "  stage {:>4}: analytic {:>12.1}  detailed {:>12.1} cycles",
                d.stage, d.analytic_cycles, d.detailed_cycles
            );
        }
    }
    println!("events: {} in {} steps", r.events, r.steps);
}
