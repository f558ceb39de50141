//! Study `order-pruning`: Elk-Full tries only block permutations with displacement ≤ 4 (at
//! most 128 orders). How much does that leave on the table? Against the exact free-order
//! optimum, and against every block permutation where their number is small enough. This is
//! its run, one [`Row`] per layer; its report is `elk_reports::studies::order_pruning`.

use super::budget::ExactBudget;
use super::{corpus, OnStep, Steps};
use crate::Result;
use elk_heuristics::orders::OrderSearch;
use elk_heuristics::{ElkDyn, ElkFull};
use elk_stage::instance::Instance;
use elk_stage::method::Method;
use rayon::prelude::*;

/// The budget of each layer's exact solve.
pub const BUDGET: ExactBudget = ExactBudget {
    work: 5_000,
    unit: elk_solver::WorkUnit::Nodes,
    seconds: 120.0,
};

/// Block orders enumerated exhaustively up to this many.
pub const EXHAUSTIVE: usize = 40_321;

fn makespan(inst: &Instance, m: &dyn Method) -> Result<Option<f64>> {
    Ok(elk_heuristics::judged(inst, m)?.map(|j| j.1.get()))
}

/// One layer's makespans, cycles.
pub struct Row {
    /// The instance's name.
    pub name: String,
    /// Elk-Dyn's (execution order only).
    pub dyn_t: Option<f64>,
    /// Elk-Full's, as the artifact runs it (pruned block orders).
    pub full: Option<f64>,
    /// The best of every block order (None: more than the exhaustive limit).
    pub exhaustive: Option<f64>,
    /// The number of distinct block orders (up to the exhaustive limit).
    pub orders: usize,
    /// The free-order optimum, when proven.
    pub optimum: Option<f64>,
    /// The certified lower bound.
    pub bound: f64,
    /// The time stopped the exact solve before its work budget ([`BUDGET`]): this row
    /// depends on the machine's speed.
    pub cut_by_time: bool,
}

/// A layer's row: its heuristics, beside `exact`, its exact solve.
fn evaluate(inst: &Instance, steps: &Steps<'_>, exact: super::gap::Row) -> Result<Row> {
    steps.starting(&format!("{}: every block order", inst.name));
    let full = ElkFull::default();
    let all = ElkFull {
        search: OrderSearch {
            max_displacement: inst.ops.len(),
            max_orders: EXHAUSTIVE,
        },
        ..full
    };
    let (orders, _) = all.orders(inst);
    let exhaustive = if orders.len() < EXHAUSTIVE {
        makespan(inst, &all)?
    } else {
        None
    };
    Ok(Row {
        name: inst.name.clone(),
        dyn_t: makespan(inst, &ElkDyn::default())?,
        full: makespan(inst, &full)?,
        exhaustive,
        orders: orders.len(),
        optimum: exact.exact.filter(|_| exact.optimal),
        bound: exact.bound,
        cut_by_time: exact.cut_by_time(),
    })
}

/// Runs the study, each layer a step of `progress`; the layers are planned through `plans`.
pub fn run(plans: Option<&elk_model::plan::PlanCache>, progress: &OnStep<'_>) -> Result<Vec<Row>> {
    Steps::new(0, progress).starting("building the layers (plan tables)");
    let insts = corpus::layers(plans)?;
    let steps = Steps::new(insts.len(), progress);
    // The exact solves first, side by side as in the gap study: one HiGHS thread each, so on
    // 2 cores two at a time, each with a core and nothing else running (the limits are per
    // solve); each is warm-started as in the gap study (the best heuristic or re-timed
    // schedule). Then the heuristics one layer at a time (rayon parallelises the block
    // orders).
    let exact: Vec<super::gap::Row> = insts
        .par_iter()
        .map(|inst| {
            steps.starting(&format!("{}: exact ({})", inst.name, BUDGET.describe()));
            super::gap::evaluate(inst, BUDGET)
        })
        .collect::<Result<_>>()?;
    let rows: Vec<Row> = insts
        .iter()
        .zip(exact)
        .map(|(inst, exact)| {
            let row = evaluate(inst, &steps, exact);
            steps.finished(&format!("{} done", inst.name));
            row
        })
        .collect::<Result<_>>()?;
    Ok(rows)
}
