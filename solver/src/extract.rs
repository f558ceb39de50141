//! From a backend's raw values to an `elk-schedule/1`: drop numerical dust, make every load
//! add up to its H exactly, and name a load order the schedule satisfies. Shared by the MILP
//! and SMT backends (it reads values; it encodes nothing).

use elk_stage::instance::Instance;
use elk_stage::schedule::{Schedule, Status, Work};
use elk_stage::units::{Cycles, OpId, Stage};

/// How the load order is read off a solution.
#[derive(Clone, Debug, PartialEq)]
pub enum OrderHint {
    /// Execution order (the instance's order is fixed).
    Execution,
    /// The backend's own order (displacement-bounded instances).
    Given(Vec<usize>),
    /// Sorted by (start, last stage, operator): valid whenever any pairwise-consistent order
    /// exists, which is what a free-order model guarantees.
    Intervals,
}

/// A backend's solution before clean-up.
#[derive(Clone, Debug)]
pub struct RawSolution {
    /// Option index per operator (indices into the instance's options).
    pub options: Vec<usize>,
    /// Load work `(op, stage, cycles)` as the backend reported it (any order, dust included).
    pub work: Vec<(usize, usize, f64)>,
    /// The load order.
    pub order: OrderHint,
}

/// Work below this fraction of a load's H is solver tolerance, not a decision.
const DUST: f64 = 1e-6;

/// Cleans the work and builds the schedule (not yet judged: the caller validates it).
pub fn to_schedule(
    inst: &Instance,
    raw: &RawSolution,
    method: &str,
    claim: Cycles,
    status: Status,
    bound: Option<Cycles>,
) -> Schedule {
    let n = inst.ops.len();
    let mut per_load: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &(j, k, c) in &raw.work {
        let h = inst.ops[j].hbm_cycles.get();
        if h > 0.0 && c > DUST * h.max(1.0) {
            per_load[j].push((k, c));
        }
    }
    let mut work = Vec::new();
    let mut interval = vec![(usize::MAX, 0usize); n];
    for (j, entries) in per_load.iter_mut().enumerate() {
        entries.sort_by_key(|e| e.0);
        // Merge duplicates of a stage (a backend may report work per option group).
        let mut merged: Vec<(usize, f64)> = Vec::new();
        for &(k, c) in entries.iter() {
            match merged.last_mut() {
                Some(last) if last.0 == k => last.1 += c,
                _ => merged.push((k, c)),
            }
        }
        let total: f64 = merged.iter().map(|e| e.1).sum();
        if total <= 0.0 {
            continue;
        }
        let scale = inst.ops[j].hbm_cycles.get() / total;
        for &(k, c) in &merged {
            work.push(Work {
                op: OpId(j),
                stage: Stage(k),
                cycles: Cycles(c * scale),
            });
        }
        interval[j] = (merged[0].0, merged[merged.len() - 1].0);
    }
    let loads = inst.loads();
    let load_order = match &raw.order {
        OrderHint::Execution => loads,
        OrderHint::Given(order) => order.iter().copied().map(OpId).collect(),
        OrderHint::Intervals => {
            let mut order = loads;
            order.sort_by_key(|&j| (interval[j.index()].0, interval[j.index()].1, j));
            order
        }
    };
    let mut s = Schedule::new(inst, method, raw.options.clone(), load_order, work, claim);
    s.status = status;
    s.lower_bound_cycles = bound;
    s
}
