//! The gap study's whole-model part, a study of its own (`study gap-whole`; ≈ 60 min on 2
//! cores, against ≈ 5 for the rest of `study gap`): Llama2-13B and
//! Llama2-70B (decode B32 KV2048, ipu-pod4, free load order) at HBM 4, 8, 12 and 16 TB/s.
//! Every heuristic and Elk-Full re-timed are judged by the simulator; the certified lower
//! bound is the best of the roofline bounds and the segment relaxation (LPs run to their end,
//! then the window search within a budget of window MILPs per point; docs/exact.md "Whole
//! models"), so each gap is an upper bound on the
//! true gap to the optimum. This is its run, one [`Point`] per (model, HBM); its report is
//! `elk_reports::studies::gap_whole`.

use super::budget::ExactBudget;
use super::gap::METHODS;
use super::{OnStep, Steps};
use crate::cell::cell_instance;
use crate::grid::Cell;
use crate::Result;
use elk_model::plan::PlanCache;
use elk_solver::{Exact, ExactOptions, Retimed, WholeModelBound, Work, WorkUnit};
use elk_stage::instance::Instance;
use elk_stage::method::Budget;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use std::time::Instant;

/// The models of the section.
pub const MODELS: [&str; 2] = ["llama2-13b", "llama2-70b"];
/// HBM bandwidths, TB/s.
pub const HBM_TBPS: [f64; 4] = [4.0, 8.0, 12.0, 16.0];
/// The budget per (model, HBM) point: window MILPs of the window search, after the segment
/// relaxation's LPs (run to their end), with a hard time stop on top.
pub const BUDGET: ExactBudget = ExactBudget {
    work: WINDOWS,
    unit: WorkUnit::Windows,
    seconds: 2_400.0,
};

/// Window MILPs per point ([`BUDGET`]).
const WINDOWS: u64 = 40;
/// The re-timed method shown beside the heuristics.
pub const RETIMED: &str = "elk-full+retime";
/// The whole-model optimizer's column: the window search from the best of the others.
pub const SEARCH: &str = elk_solver::lns::LNS_METHOD;

/// One (model, HBM) point.
pub struct Point {
    /// Zoo model.
    pub model: &'static str,
    /// HBM bandwidth, TB/s.
    pub hbm_tbps: f64,
    /// Makespan of each method (ms): [`METHODS`], [`RETIMED`], then [`SEARCH`]; None: no
    /// schedule.
    pub makespan_ms: Vec<Option<f64>>,
    /// The certified lower bound, ms.
    pub bound_ms: f64,
    /// The roofline bound alone, ms.
    pub roofline_ms: f64,
    /// The segment relaxation's bound, ms (None: no price solved in time).
    pub segment_ms: Option<f64>,
    /// Wall-clock seconds: instance and heuristics, then the bound and the window search.
    pub heuristics_s: f64,
    /// See `heuristics_s`.
    pub bound_s: f64,
    /// The work budget and what the point used of it.
    pub work: Option<Work>,
}

impl Point {
    /// The best schedule's makespan, ms.
    pub fn best_ms(&self) -> Option<f64> {
        self.makespan_ms.iter().flatten().copied().reduce(f64::min)
    }

    /// Certified gap ≤ % of method `m`.
    pub fn gap_pct(&self, m: usize) -> Option<f64> {
        self.makespan_ms[m].map(|t| 100.0 * (t - self.bound_ms) / self.bound_ms)
    }
}

/// The method names of a point's columns.
pub fn method_names() -> Vec<&'static str> {
    METHODS.iter().copied().chain([RETIMED, SEARCH]).collect()
}

/// Judges every method on `inst`: makespans (cycles) and the best schedule. `starting(k, n,
/// name)` is called before method `k` of `n` runs.
fn judge_all(
    inst: &Instance,
    starting: &dyn Fn(usize, usize, &str),
) -> Result<(Vec<Option<Cycles>>, Option<Schedule>)> {
    let n = METHODS.len() + 1;
    let mut makespans = Vec::new();
    let mut best: Option<(f64, Schedule)> = None;
    let mut keep = |judged: Option<(Schedule, Cycles)>| {
        let t = judged.as_ref().map(|j| j.1);
        if let Some((s, c)) = judged {
            if best.as_ref().is_none_or(|b| c.get() < b.0) {
                best = Some((c.get(), s));
            }
        }
        makespans.push(t);
    };
    for (k, m) in METHODS.into_iter().enumerate() {
        starting(k + 1, n, m);
        let judged = match elk_heuristics::by_name(m) {
            Some(m) => elk_heuristics::judged(inst, m.as_ref())?,
            None => None,
        };
        keep(judged);
    }
    starting(n, n, RETIMED);
    let retimed = elk_heuristics::by_name("elk-full")
        .map(|m| Retimed::new(m).without_timings())
        .map(|m| elk_heuristics::judged(inst, &m))
        .transpose()?
        .flatten();
    keep(retimed);
    Ok((makespans, best.map(|b| b.1)))
}

/// Evaluates one point, telling `steps` what it does.
pub fn point(
    model: &'static str,
    hbm_tbps: f64,
    budget: ExactBudget,
    (steps, plans): (&Steps<'_>, Option<&PlanCache>),
) -> Result<Point> {
    let start = Instant::now();
    let label = format!("{model} @ {hbm_tbps:.0} TB/s");
    steps.starting(&format!("{label}: plan tables"));
    let mut cell = Cell::decode(model, 32, 2048);
    cell.hbm_tbps = Some(hbm_tbps);
    let inst = cell_instance(&cell, plans)?;
    let (cycles, best) = judge_all(&inst, &|k, n, m| {
        steps.starting(&format!("{label}: heuristic {k}/{n}: {m}"));
    })?;
    let heuristics_s = start.elapsed().as_secs_f64();
    let r = Exact::in_process(ExactOptions {
        warm_start: best,
        whole_model: WholeModelBound::Lp,
        work_limit: Some(budget.work),
        ..ExactOptions::default()
    })
    .report_with(&inst, &Budget::seconds(budget.seconds), &|e| {
        steps.starting(&format!("{label}: {}", e.describe(&inst)))
    })?;
    let roofline = elk_solver::bounds::roofline(&inst).best();
    let searched = r.search.as_ref().map(|s| s.makespan_cycles);
    Ok(Point {
        model,
        hbm_tbps,
        makespan_ms: cycles
            .iter()
            .chain([&searched])
            .map(|c| c.map(|c| inst.ms(c)))
            .collect(),
        bound_ms: inst.ms(Cycles(r.lower_bound_cycles.get().max(roofline.get()))),
        roofline_ms: inst.ms(roofline),
        segment_ms: r.bounds.segment_cycles.map(|c| inst.ms(c)),
        heuristics_s,
        bound_s: start.elapsed().as_secs_f64() - heuristics_s,
        work: r.work,
    })
}

/// Every point, in [`MODELS`] × [`HBM_TBPS`] order; `progress` hears of each step.
pub fn points(
    budget: ExactBudget,
    plans: Option<&PlanCache>,
    progress: &OnStep<'_>,
) -> Result<Vec<Point>> {
    let steps = Steps::new(MODELS.len() * HBM_TBPS.len(), progress);
    let mut all = Vec::new();
    for model in MODELS {
        for hbm in HBM_TBPS {
            all.push(point(model, hbm, budget, (&steps, plans))?);
            steps.finished(&format!("{model} @ {hbm:.0} TB/s done"));
        }
    }
    Ok(all)
}
