//! `elk-opt simulate --detailed`: replay the schedule on a concrete chip (topology, HBM
//! controllers, link contention), optionally beside the analytic stage model.

use clap::Args;
use elk_model::chip::{ChipOverrides, ChipSpec, Placement, Topology};
use elk_sim::detailed::{
    simulate_detailed, simulate_detailed_with, DetailedConfig, DetailedReport, LoadPolicy,
};
use elk_sim::trace::{ChromeTrace, NoTrace, TraceSink};
use elk_sim::Evaluation;
use elk_stage::instance::{ChipRef, Instance, NocRow};
use elk_stage::schedule::Schedule;
use serde::Serialize;
use std::path::PathBuf;

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
    #[arg(long, requires = "detailed", allow_negative_numbers = true)]
    hbm_tbps: Option<f64>,
    /// Override the chip's topology.
    #[arg(long, value_enum, requires = "detailed")]
    topology: Option<Topology>,
    /// Mesh/torus width in cores.
    #[arg(long, requires = "detailed", value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    width: Option<u64>,
    /// Mesh/torus height in cores.
    #[arg(long, requires = "detailed", value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    height: Option<u64>,
    /// Number of HBM controllers (at most one per core).
    #[arg(long, requires = "detailed", value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    hbm_controllers: Option<u64>,
    /// Controller placement.
    #[arg(long, value_enum, requires = "detailed")]
    placement: Option<Placement>,
    /// How the replay's DMA sends loads: paced to the schedule's planned work per stage, or
    /// greedily (as fast as HBM and links allow).
    #[arg(long, value_enum, default_value = "paced", requires = "detailed")]
    loads: LoadPolicy,
    /// Also print the analytic makespan, the other load policy's makespan and the per-stage
    /// differences.
    #[arg(long, requires = "detailed")]
    compare: bool,
}

/// `simulate --detailed --json`: the replay's flags in `config`.
#[derive(Serialize, Debug)]
pub struct ReplayConfig {
    detailed: bool,
    chip: Option<String>,
    hbm_tbps: Option<f64>,
    topology: Option<Topology>,
    width_cores: Option<u64>,
    height_cores: Option<u64>,
    hbm_controllers: Option<u64>,
    placement: Option<Placement>,
    loads: LoadPolicy,
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
    /// Where the parallel sets' groups ran (docs/core-groups.md §CG-7); absent without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    set_regions: Vec<elk_sim::detailed::SetLayout>,
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
            set_regions: r.set_regions.clone(),
            events: r.events,
            steps: r.steps,
        }
    }
}

/// The replay's makespan under the DMA policy not chosen.
#[derive(Serialize)]
struct OtherPolicy {
    loads: LoadPolicy,
    makespan_cycles: elk_stage::units::Cycles,
    makespan_ms: f64,
}

/// The replay, as printed.
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
    /// The DMA policy replayed.
    loads: LoadPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    analytic_makespan_cycles: Option<elk_stage::units::Cycles>,
    /// With `--compare`: the stage model with the phased NoC row (elk_sim::phased).
    #[serde(skip_serializing_if = "Option::is_none")]
    phased_makespan_cycles: Option<elk_stage::units::Cycles>,
    /// With `--compare`: the stage model with SPEC §4's NoC row.
    #[serde(skip_serializing_if = "Option::is_none")]
    spec_makespan_cycles: Option<elk_stage::units::Cycles>,
    /// With `--compare`: the same replay with the other DMA policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    other_loads: Option<OtherPolicy>,
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
            loads: self.loads,
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
            topology: self.topology,
            width: self.width,
            height: self.height,
            controllers: self.hbm_controllers,
            placement: self.placement,
            ..ChipOverrides::default()
        };
        let chip = base.clone().with_overrides(&overrides)?;
        // Each controller attaches to a core; more would only multiply the replay's resources
        // (100 000 controllers on ipu-pod4 took 18 GB before anything was reported).
        if let Some(n) = self.hbm_controllers.filter(|&n| n > chip.cores) {
            return super::flags::Usage::err(format!(
                "--hbm-controllers {n}: at most one per core ({} has {} cores)",
                chip.name, chip.cores
            ));
        }
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
        cfg.loads = self.loads;
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
        let other_loads = if self.compare {
            let other = match self.loads {
                LoadPolicy::Paced => LoadPolicy::Greedy,
                LoadPolicy::Greedy => LoadPolicy::Paced,
            };
            let cfg = DetailedConfig {
                loads: other,
                ..cfg.clone()
            };
            let r = simulate_detailed(inst, sched, &chip, &cfg)?;
            Some(OtherPolicy {
                loads: other,
                makespan_cycles: r.makespan_cycles,
                makespan_ms: r.makespan_ms,
            })
        } else {
            None
        };
        let (spec, phased) = elk_sim::phased::both_rows(inst, sched, analytic.makespan_cycles);
        let other_row = match inst.noc_row {
            NocRow::Phased => (NocRow::Spec, spec),
            NocRow::Spec => (NocRow::Phased, phased),
        };
        if let Some(w) = disagreement(&report, analytic, other_row, self.loads) {
            eprintln!("warning: {w}");
        }
        let out = DetailedOutput {
            instance: &inst.name,
            method: &sched.method,
            chip: format!(
                "{} ({}{}, {} HBM controllers at the {} placement)",
                chip.name,
                super::json::value_name(chip.noc.topology),
                match (chip.noc.width, chip.noc.height) {
                    (Some(w), Some(h)) => format!(" {w}x{h}"),
                    _ => String::new(),
                },
                chip.hbm.controllers,
                super::json::value_name(chip.hbm.placement)
            ),
            chip_json: ChipJson {
                name: chip.name.clone(),
                topology: chip.noc.topology,
                width_cores: chip.noc.width,
                height_cores: chip.noc.height,
                hbm_controllers: chip.hbm.controllers,
                placement: chip.hbm.placement,
            },
            loads: self.loads,
            analytic_makespan_cycles: self.compare.then_some(analytic.makespan_cycles),
            phased_makespan_cycles: self.compare.then_some(phased),
            spec_makespan_cycles: self.compare.then_some(spec),
            other_loads,
            report_json: ReportJson::from(&report),
            report,
            stages,
        };
        if let Some(config) = json {
            return super::json::print_json("simulate-detailed", config, &out);
        }
        print_human(inst, &out);
        Ok(())
    }
}

/// How far a replay may differ from the stage model before it is pointed out.
const DISAGREEMENT: f64 = 0.05;

/// A warning when the replay's makespan differs from the stage model's by more than
/// [`DISAGREEMENT`], naming where the replay's extra (or missing) time went and the hottest
/// links.
fn disagreement(
    r: &DetailedReport,
    analytic: &Evaluation,
    (other_row, other): (NocRow, elk_stage::units::Cycles),
    loads: LoadPolicy,
) -> Option<String> {
    let a = analytic.makespan_cycles.get();
    let d = r.makespan_cycles.get();
    if a <= 0.0 || (d - a).abs() <= DISAGREEMENT * a {
        return None;
    }
    let b = &r.breakdown;
    let dominant = if b.shift >= b.load_wait {
        "the NoC: operators' shifts share links with loads"
    } else {
        "HBM delivery: operators wait for their loads"
    };
    let hottest = r
        .hottest_links
        .iter()
        .take(3)
        .map(|l| format!("{} {:.1} %", l.name, 100.0 * l.utilisation))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "the detailed replay ({} loads) takes {:+.2} % against the stage model's makespan \
         ({:+.2} % against the {} NoC row's); dominant: {dominant} \
         (compute {:.1} %, shifts {:.1} %, waiting for loads {:.1} % of the replay); hottest \
         links: {hottest}",
        loads.name(),
        100.0 * (d / a - 1.0),
        100.0 * (d / other.get().max(f64::MIN_POSITIVE) - 1.0),
        row_label(other_row),
        100.0 * b.compute / d,
        100.0 * b.shift / d,
        100.0 * b.load_wait / d,
    ))
}

/// A NoC row as the output names it.
fn row_label(row: NocRow) -> &'static str {
    match row {
        NocRow::Phased => "phased",
        NocRow::Spec => "SPEC §4",
    }
}

/// One line per allocation of the parallel sets' groups (up to three, then how many more):
/// how many sets ran on it, how its groups were laid out and the first regions' boxes.
fn print_set_regions(layouts: &[elk_sim::detailed::SetLayout]) {
    for (k, l) in layouts.iter().enumerate().take(3) {
        let boxes: Vec<String> = l
            .regions
            .iter()
            .zip(&l.groups_cores)
            .take(4)
            .map(|(b, g)| match l.packing {
                "core ranges" => format!("{g} cores from core {}", b.x),
                _ => format!(
                    "{g} cores in {}×{} at ({},{})",
                    b.width_cores, b.height_cores, b.x, b.y
                ),
            })
            .collect();
        let more = l.regions.len().saturating_sub(boxes.len());
        println!(
            "{} {} set(s) on {} groups as {}: {}{}",
            if k == 0 {
                "set regions:    "
            } else {
                "                "
            },
            l.sets,
            l.groups_cores.len(),
            l.packing,
            boxes.join(", "),
            if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            }
        );
    }
    if layouts.len() > 3 {
        println!(
            "                 and {} more allocations",
            layouts.len() - 3
        );
    }
}

fn print_human(inst: &Instance, out: &DetailedOutput) {
    let r = &out.report;
    println!(
        "{} — schedule by {}, detailed replay on {}, {} loads",
        out.instance,
        out.method,
        out.chip,
        out.loads.name()
    );
    println!(
        "makespan:        {} = {:.6} ms (detailed)",
        r.makespan_cycles, r.makespan_ms
    );
    if let Some(a) = out.analytic_makespan_cycles {
        println!(
            "analytic:        {a} = {:.6} ms ({:+.2}% detailed vs analytic; the {} NoC row)",
            inst.ms(a),
            100.0 * ((r.makespan_cycles - a) / a),
            row_label(inst.noc_row)
        );
        let other = match inst.noc_row {
            NocRow::Phased => out.spec_makespan_cycles.map(|c| (NocRow::Spec, c)),
            NocRow::Spec => out.phased_makespan_cycles.map(|c| (NocRow::Phased, c)),
        };
        if let Some((row, p)) = other {
            println!(
                "{:<17}{p} = {:.6} ms ({:+.2}% vs analytic; detailed {:+.2}% vs it)",
                format!("{} row:", row_label(row)),
                inst.ms(p),
                100.0 * ((p - a) / a),
                100.0 * ((r.makespan_cycles - p) / p)
            );
        }
        if let Some(o) = &out.other_loads {
            println!(
                "{:<17}{} = {:.6} ms ({:+.2}% vs analytic)",
                format!("{} loads:", o.loads.name()),
                o.makespan_cycles,
                o.makespan_ms,
                100.0 * ((o.makespan_cycles - a) / a)
            );
        }
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
    print_set_regions(&r.set_regions);
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
            let op = elk_stage::units::Stage(d.stage)
                .executing()
                .map_or("(prologue)", |o| inst.ops[o.index()].name.as_str());
            println!(
                "  stage {:>4} {op:<24}: analytic {:>12.1}  detailed {:>12.1} ({:+.2} %)",
                d.stage,
                d.analytic_cycles,
                d.detailed_cycles,
                100.0 * (d.detailed_cycles.get() / d.analytic_cycles.get().max(1e-9) - 1.0)
            );
        }
    }
    println!("events: {} in {} steps", r.events, r.steps);
}
