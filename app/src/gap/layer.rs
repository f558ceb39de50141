//! `compare --layer-exact`'s section: one layer of the model solved exactly within a time
//! limit, and every heuristic's gap there ([`LayerSection`]).

use super::report::{gap_report, GapReport};
use super::settings::{ExactSettings, GapStep};
use super::union::gap_union;
use elk_solver::WorkerCommand;
use elk_stage::instance::Instance;
use elk_stage::method::MethodError;
use serde::Serialize;

/// The layer `compare --layer-exact` cuts: layer 0 is the first transformer layer (the zoo's
/// and the importer's layer structure puts the embeddings in a prologue before it).
pub const LAYER: usize = 0;

/// `compare --layer-exact SECONDS`'s section as `--json` prints it: one layer of the model
/// (as `--layers 0..1` cuts it) solved exactly by the MILP within SECONDS, and every
/// heuristic's gap there.
#[derive(Serialize)]
pub struct LayerSection {
    /// The layer cut (`--layers 0..1`).
    pub layer: usize,
    /// Its operators.
    pub operators: usize,
    /// The MILP's time limit.
    pub time_limit_s: f64,
    /// `--work-limit`: the MILP's budget in branch-and-bound nodes (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_limit: Option<u64>,
    /// The exact solve's status in words.
    pub status: String,
    /// The proven optimum, or the best proven lower bound when `gap.reference` says so.
    pub reference_ms: f64,
    /// Wall-clock seconds of the exact solve (`null` with `--no-timings`).
    pub solve_s: Option<f64>,
    /// What `gap --layers 0..1 --time-limit SECONDS --json` prints for this layer.
    pub gap: GapReport,
}

/// The section of [`LAYER`], already cut from the model (`layer`): [`gap_report`] with the
/// MILP's defaults within `seconds` and, given one, the work budget `work_limit`.
pub fn layer_section(
    layer: &Instance,
    seconds: f64,
    work_limit: Option<u64>,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<LayerSection, MethodError> {
    let settings = ExactSettings::milp_within(seconds).with_work_limit(work_limit);
    let gap = gap_report(layer, &settings, no_timings, worker, progress)?;
    Ok(section_of(layer, &settings, gap))
}

/// [`layer_section`] with `--expert-parallel`: the layer cut from the instance with parallel
/// sets (`layer`) and from the one without (`without`), their union ([`gap_union`]: each row
/// the faster, the lower reference; docs/core-groups.md, CG-5). `progress` is told which
/// instance (`true`: with sets) each step is of.
pub fn layer_section_union(
    layer: &Instance,
    without: &Instance,
    seconds: f64,
    work_limit: Option<u64>,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(bool, GapStep<'_>),
) -> Result<LayerSection, MethodError> {
    let settings = ExactSettings::milp_within(seconds).with_work_limit(work_limit);
    let gap = gap_union(layer, without, &settings, no_timings, worker, progress)?;
    Ok(section_of(layer, &settings, gap))
}

/// The section of `gap`, the report of `layer` (or of the union it is the sets' side of)
/// solved with `settings`.
fn section_of(layer: &Instance, settings: &ExactSettings, gap: GapReport) -> LayerSection {
    LayerSection {
        layer: LAYER,
        operators: layer.ops.len(),
        time_limit_s: settings.time_limit_s,
        work_limit: settings.work_limit,
        status: gap.status(),
        reference_ms: layer.ms(gap.reference_cycles),
        solve_s: gap.exact.solve_s,
        gap,
    }
}
