//! The detailed simulator (SPEC §6): replays an `elk-schedule/1` in continuous time on a
//! concrete chip — NoC links or ports with bandwidths, HBM controllers at cores, link
//! bandwidth shared max-min fairly between the executing operator's shifts and the loads'
//! distribution — and reports the realized makespan, utilisation of every link and
//! controller, and SRAM overflows in time.
//!
//! Execution: operator i starts when i−1 has finished and its own load has completed; it
//! computes for `exec − comm` cycles, then shifts `comm` cycles' worth of bytes (at the full
//! injection rate) as a ring rotation, sharing links with any load in flight. Loads run one
//! at a time in the schedule's load order, each no earlier than the stage the schedule
//! starts it in; a load is C flows, one per controller, each carrying 1/C of the bytes
//! through the controller's port (B_HBM/C) and ρ copies over the NoC. Rates are recomputed
//! at every flow arrival and departure; events are processed in (time, sequence) order, so a
//! replay is deterministic. By default the loads are paced to the schedule's plan
//! ([`pacing`]); `LoadPolicy::Greedy` sends them as fast as HBM and links allow.

mod fabric;
pub mod fair;
mod flows;
pub mod pacing;
mod regions;
mod replay;
pub mod traffic;

pub use elk_model::chip::network;
pub use network::{controller_cores, HbmLayout, Network};
pub use pacing::LoadPolicy;
pub use regions::{RegionBox, SetLayout};

use crate::trace::{NoTrace, TraceSink};
use elk_model::build::noc_distribution_bytes_per_s;
use elk_model::chip::ChipSpec;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;

/// What to simulate beyond the chip spec.
#[derive(Clone, Debug, PartialEq)]
pub struct DetailedConfig {
    /// Controller placement and delivery.
    pub layout: HbmLayout,
    /// ρ per unit of ν: B_NoC,dist / B_HBM of the chip the instance was built for (ν = ρ ·
    /// B_HBM / B_NoC,dist), so a schedule can be replayed on a variant of that chip.
    pub rho_per_nu: f64,
    /// How loads are sent: paced to the schedule's plan, or greedily.
    pub loads: LoadPolicy,
}

impl DetailedConfig {
    /// The chip's own controllers (count and placement from its spec).
    pub fn from_chip(chip: &ChipSpec) -> DetailedConfig {
        let c = chip.hbm.controllers.max(1) as usize;
        let cores = controller_cores(chip, c);
        let layout = match chip.hbm.placement {
            elk_model::chip::Placement::SingleCore => HbmLayout::SingleBroadcast(cores[0]),
            _ => HbmLayout::Distributed(cores),
        };
        DetailedConfig {
            layout,
            rho_per_nu: noc_distribution_bytes_per_s(chip) / chip.hbm.bandwidth_bytes_per_s,
            loads: LoadPolicy::default(),
        }
    }
}

/// Where the time went, cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DetailedBreakdown {
    /// Operators computing.
    pub compute: f64,
    /// Operators shifting (their NoC phases, slowed by load traffic).
    pub shift: f64,
    /// Waiting for a load before an operator could start.
    pub load_wait: f64,
}

/// One resource's utilisation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkUse {
    /// Its name: `(x,y)+x`, `core k injection`, ….
    pub name: String,
    /// Bytes carried / (capacity × makespan).
    pub utilisation: f64,
}

/// An SRAM overflow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overflow {
    /// When, cycles.
    pub time_cycles: f64,
    /// The operator executing (or about to).
    pub op: String,
    /// Bytes per core in use.
    pub used: u64,
    /// SRAM per core.
    pub sram: u64,
}

/// The detailed simulator's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetailedReport {
    /// Realized makespan.
    pub makespan_cycles: Cycles,
    /// … in milliseconds.
    pub makespan_ms: f64,
    /// Time breakdown.
    pub breakdown: DetailedBreakdown,
    /// Mean NoC link (or port) utilisation.
    pub link_utilisation_mean: f64,
    /// The hottest NoC links, up to 10, hottest first.
    pub hottest_links: Vec<LinkUse>,
    /// Utilisation of each HBM controller's port.
    pub controller_utilisation: Vec<f64>,
    /// Start time of each operator's execution (the prologue ends at `op_start[0]`).
    pub op_start_cycles: Vec<Cycles>,
    /// End time of each operator's execution (`Stage::of_op(j)` ends at `op_end[j]`).
    pub op_end_cycles: Vec<Cycles>,
    /// The first SRAM overflow, if any.
    pub overflow: Option<Overflow>,
    /// Where the parallel sets' groups ran, per allocation (docs/core-groups.md §CG-7);
    /// empty without sets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_regions: Vec<SetLayout>,
    /// Events: operator starts, compute ends, flow arrivals and departures.
    pub events: u64,
    /// Steps of the simulation loop (simultaneous events share a step; rates are
    /// recomputed at most once per step).
    pub steps: u64,
}

/// One stage, analytic against detailed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageDiff {
    /// The stage (0 = prologue).
    pub stage: usize,
    /// Its duration in the stage model.
    pub analytic_cycles: Cycles,
    /// Its duration in the replay: stage 0 ends when operator 0 starts, stage k ≥ 1 when
    /// the operator it executes ends.
    pub detailed_cycles: Cycles,
}

/// Per-stage durations of the analytic evaluation beside the detailed replay's.
pub fn stage_diff(analytic: &crate::Evaluation, report: &DetailedReport) -> Vec<StageDiff> {
    let mut prev = Cycles::ZERO;
    analytic
        .stages
        .iter()
        .enumerate()
        .map(|(k, st)| {
            let end = match elk_stage::units::Stage(k).executing() {
                None => report.op_start_cycles.first().copied().unwrap_or_default(),
                Some(op) => report.op_end_cycles[op.index()],
            };
            let d = StageDiff {
                stage: k,
                analytic_cycles: st.cycles,
                detailed_cycles: (end - prev).max(Cycles::ZERO),
            };
            prev = end.max(prev);
            d
        })
        .collect()
}

/// Why a replay could not finish.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("detailed simulation: {0}")]
pub struct DetailedError(pub String);

/// Replays `s` (a valid schedule of `inst`) on `chip`.
pub fn simulate_detailed(
    inst: &Instance,
    s: &Schedule,
    chip: &ChipSpec,
    cfg: &DetailedConfig,
) -> Result<DetailedReport, DetailedError> {
    simulate_detailed_with(inst, s, chip, cfg, &mut NoTrace)
}

/// [`simulate_detailed`] with a trace: compute and shift phases per operator, each load
/// overall and per controller.
pub fn simulate_detailed_with(
    inst: &Instance,
    s: &Schedule,
    chip: &ChipSpec,
    cfg: &DetailedConfig,
    sink: &mut dyn TraceSink,
) -> Result<DetailedReport, DetailedError> {
    if let Some(why) = groups_beyond(inst, s, chip) {
        return Err(DetailedError(why));
    }
    replay::Replay::new(inst, s, chip, cfg, sink)?.run()
}

/// Why `s` cannot be replayed on `chip` as its parallel sets ask: a set built for more
/// cores than the chip has, or a chosen option whose groups take more (the instance file's
/// own rules check them against the set's `chip_cores`, its word; the replay knows the chip).
fn groups_beyond(inst: &Instance, s: &Schedule, chip: &ChipSpec) -> Option<String> {
    inst.ops.iter().zip(&s.options).enumerate().find_map(|(j, (op, &o))| {
        let set = op.parallel.as_ref()?;
        let taken: u64 = op
            .options
            .get(o)?
            .groups
            .iter()
            .flatten()
            .fold(0u64, |a, &g| a.saturating_add(g));
        let claimed = set.chip_cores.max(taken);
        (claimed > chip.cores).then(|| {
            format!(
                "ops[{j}] ({}): its parallel set is built for {} cores (options[{o}] takes {taken}), \
                 more than {}'s {}: replay it on the chip it was built for (--chip)",
                op.name, set.chip_cores, chip.name, chip.cores
            )
        })
    })
}
