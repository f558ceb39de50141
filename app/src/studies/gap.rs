//! Study `gap`'s run: Basic, Static, Elk-Dyn, Elk-Full and the greedy variants, and the exact
//! optimum (proven by the MILP), on real sub-instances and random instances ([`corpus`]): one
//! [`Row`] per instance. The `ideal` study reads the same rows; `order-pruning` solves its
//! layers with [`evaluate`]. Whole models are [`super::gap_whole`], a study of its own.

use super::budget::ExactBudget;
use super::{corpus, OnStep, Steps};
use crate::Result;
use elk_solver::milp::{lp_bound, Linearisation};
use elk_solver::{retime, Exact, ExactOptions, Work, WorkUnit, RETIME_SUFFIX};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Verdict};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use rayon::prelude::*;

/// The heuristics compared.
pub const METHODS: [&str; 6] = [
    "basic",
    "static",
    "elk-dyn",
    "elk-full",
    "elk-dyn-greedy",
    "elk-full-greedy",
];

/// Elk-Full's index in [`METHODS`] (the faithful one: the headline).
pub const FULL: usize = 3;

/// The exact solve's budget per instance of the corpus (`gap` and `ideal`).
pub const BUDGET: ExactBudget = ExactBudget {
    work: 5_000,
    unit: WorkUnit::Nodes,
    seconds: 60.0,
};

/// The heuristics (indexes in [`METHODS`]) whose schedules are also re-timed by the LP of
/// [`elk_solver::retime`] for the warm start: Elk-Dyn and Elk-Full, as `gap` does.
const RETIMED: [usize; 2] = [2, FULL];

/// One instance's outcome.
pub struct Row {
    /// Instance name.
    pub name: String,
    /// Operators.
    pub ops: usize,
    /// Makespan of each heuristic (cycles), in [`METHODS`] order.
    pub heuristic: Vec<Option<f64>>,
    /// Their schedules (for explanations).
    pub schedules: Vec<Option<elk_stage::schedule::Schedule>>,
    /// The optimum (or best known) and whether it is proven.
    pub exact: Option<f64>,
    /// Proven optimal.
    pub optimal: bool,
    /// Proven to have no schedule at all.
    pub infeasible: bool,
    /// The certified lower bound.
    pub bound: f64,
    /// The exact schedule.
    pub exact_schedule: Option<elk_stage::schedule::Schedule>,
    /// Elk's Ideal figure, cycles.
    pub ideal: f64,
    /// LP relaxation, cycles.
    pub lp: Option<f64>,
    /// The work budget and what the solve used of it.
    pub work: Option<Work>,
}

impl Row {
    /// The time limit stopped the exact solve before its work budget did: this row depends on
    /// the machine's speed.
    pub fn cut_by_time(&self) -> bool {
        self.work.is_some_and(|w| w.cut_by_time)
    }
}

/// Heuristics and the exact solve (within `budget`) on one instance.
pub fn evaluate(inst: &Instance, budget: ExactBudget) -> Result<Row> {
    let mut heuristic = Vec::new();
    let mut schedules = Vec::new();
    for m in METHODS {
        let judged = match elk_heuristics::by_name(m) {
            Some(m) => elk_heuristics::judged(inst, m.as_ref())?,
            None => None,
        };
        heuristic.push(judged.as_ref().map(|j| j.1.get()));
        schedules.push(judged.map(|j| j.0));
    }
    // The warm start as `gap` picked it before `stage-lp+queue` joined its rows: the best
    // heuristic schedule or LP re-timing of one (the study keeps its own method list).
    let mut candidates: Vec<(f64, Schedule)> = heuristic
        .iter()
        .zip(&schedules)
        .filter_map(|(t, s)| t.zip(s.clone()))
        .collect();
    for k in RETIMED {
        if let Some(s) = &schedules[k] {
            let r = retime(inst, s, &format!("{}{RETIME_SUFFIX}", METHODS[k]), None)?;
            candidates.push((r.makespan_cycles.get(), r.schedule));
        }
    }
    let warm = candidates
        .into_iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, s)| s);
    let r = Exact::in_process(ExactOptions {
        warm_start: warm,
        lp_bound: true,
        work_limit: Some(budget.work),
        ..ExactOptions::default()
    })
    .report(inst, &Budget::seconds(budget.seconds))?;
    Ok(Row {
        name: inst.name.clone(),
        ops: inst.ops.len(),
        heuristic,
        schedules,
        exact: r.makespan_cycles.map(Cycles::get),
        optimal: r.status == Verdict::Optimal,
        infeasible: r.status == Verdict::Infeasible,
        bound: r.lower_bound_cycles.get(),
        exact_schedule: r.schedule.clone(),
        ideal: elk_heuristics::ideal(inst)
            .cycles
            .map_or(f64::NAN, Cycles::get),
        // A warm start that meets the roofline skips the solve's LP relaxation; the ideal
        // study compares Ideal with the LP on every instance, so it is solved here then.
        lp: match r.bounds.lp_cycles {
            Some(lp) => Some(lp.get()),
            None => lp_bound(inst, Linearisation::default(), None)?
                .ok()
                .map(|(v, _)| v),
        },
        work: r.work,
    })
}

/// The corpus evaluated (real windows and random instances), in corpus order; `progress`
/// hears of each instance as it finishes.
pub fn corpus_rows(
    budget: ExactBudget,
    plans: Option<&elk_model::plan::PlanCache>,
    progress: &OnStep<'_>,
) -> Result<Vec<Row>> {
    Steps::new(0, progress).starting("building the corpus (plan tables)");
    let mut all = corpus::real(plans)?;
    all.extend(corpus::random(20));
    let steps = Steps::new(all.len(), progress);
    steps.starting("heuristics and exact solves");
    all.par_iter()
        .map(|inst| {
            let row = evaluate(inst, budget);
            steps.finished(&format!("done: {}", inst.name));
            row
        })
        .collect()
}

/// The study's rows: the corpus evaluated with [`BUDGET`] per exact solve, in corpus order.
pub fn run(plans: Option<&elk_model::plan::PlanCache>, progress: &OnStep<'_>) -> Result<Vec<Row>> {
    corpus_rows(BUDGET, plans, progress)
}

/// Whether an instance is one of the corpus' random ones (named `random seed N`).
pub fn is_random(name: &str) -> bool {
    name.starts_with("random seed ")
}
