//! Queue re-timing: new load starts for a schedule's options, with the loads served one after
//! another in execution order, chosen by one small LP over the whole model.
//!
//! Re-timing ([`crate::retime()`]) keeps each load's start stage (it may only move later), so a
//! heuristic that starts its loads late leaves the HBM idle where it was cheap to use. This
//! module chooses the starts. Serve the loads in execution order as a single queue: load j
//! occupies the interval [S_j, S_j + H_j) of the cumulative HBM work, S_j the sum of H of the
//! loads before it. A schedule is then fixed by C_k, the cumulative work done by the end of
//! stage k: stage k does W_k = C_k − C_{k−1}, the part of the queue between C_{k−1} and C_k.
//! Every rule of SPEC §4 is then a bound on C:
//!
//! - deadline: load j is done before its operator runs: C_j ≥ S_j + H_j (stage j + 1 runs
//!   operator j, 0-based);
//! - memory: the loads resident in stage k are those not yet run that the queue has reached,
//!   a run of consecutive loads from the first one after operator k − 1. So C_k ≤ S_q, q the
//!   first load of that run whose cold bytes no longer fit beside the executing operator's
//!   hot bytes;
//! - preload window: no work for j before its window start w_j: C_{w_j − 1} ≤ S_j;
//! - load order: the queue is the execution order, allowed by every order rule (fixed,
//!   displacement-bounded, free), and a queue obeys the order rule (a load starts only once
//!   every load before it has finished, apart from the stage they share).
//!
//! The stage rows are those of re-timing with W_k for `Σ_j w[j][k]` and one ν per stage for
//! the loads' own: that is the only approximation (exact when every load in the stage has
//! the same ν, as almost all of an LLM's do with the options elk-full picks). The first LP
//! uses the H-weighted mean ν; each further one the ν mix its predecessor put in each stage.
//! Each result is re-timed exactly (its starts kept) and judged by the simulator; the best is
//! returned, or the input when none is faster. docs/exact.md, "Queue re-timing", has the
//! measurements.

use crate::error::{Result, SolverError};
use crate::retime::{clean_work, retime};
use elk_stage::instance::{Instance, NocRow};
use elk_stage::schedule::Schedule;
use elk_stage::units::{Cycles, OpId, Stage};
use highs::{HighsModelStatus, RowProblem, Sense};
use std::time::{Duration, Instant};

/// LPs solved by default: the mean ν, then this many refinements by the previous LP's ν
/// mix.
pub const REFINEMENTS: usize = 3;

/// A cumulative work within this fraction of the total of a queue boundary is that boundary
/// (the LP's feasibility tolerance must not start a load that does not fit).
const SNAP: f64 = 1e-9;

/// What [`requeue`] did.
#[derive(Clone, Debug)]
pub struct QueueReport {
    /// The best queue schedule, re-timed, or the input when none was faster. Always valid.
    pub schedule: Schedule,
    /// The simulator's makespan of the input.
    pub input_cycles: Cycles,
    /// The simulator's makespan of `schedule`.
    pub makespan_cycles: Cycles,
    /// LPs solved.
    pub lps: usize,
    /// Starting points for a search, each re-timed and judged: the mean-ν LP's schedule,
    /// then the best refinement's (when it differs). The best of all is `schedule`.
    pub seeds: Vec<(Schedule, Cycles)>,
    /// Queue schedules the simulator rejected (a bug: reported, never kept).
    pub rejected: Vec<String>,
    /// Why no queue LP ran at all (`None`: they ran, to the end or to the time limit).
    pub not_run: Option<NoQueue>,
}

/// Why a queue run solved no LP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoQueue {
    /// The instance has no loads.
    NoLoads,
    /// With the given options, SRAM or a preload window leaves some load no stage: no queue
    /// schedule exists.
    Unfit,
}

impl QueueReport {
    /// The schedule is better than the input.
    pub fn improved(&self) -> bool {
        self.makespan_cycles < self.input_cycles
    }

    /// No queue schedule came out because the time ran out (none was rejected and the LPs
    /// were not ruled out before they ran).
    pub fn out_of_time(&self) -> bool {
        self.rejected.is_empty() && self.not_run.is_none()
    }

    /// Why no queue schedule came out, in words (for a report whose input had none of its
    /// own, as [`queue_for_options`] gives).
    pub fn why_none(&self) -> String {
        match (self.rejected.first(), self.not_run) {
            (Some(v), _) => format!("the simulator rejected every queue ({v})"),
            (None, Some(NoQueue::NoLoads)) => "there are no loads to queue".into(),
            (None, Some(NoQueue::Unfit)) => {
                "SRAM or a preload window leaves some load no stage to work in".into()
            }
            (None, None) => "no queue LP finished in time".into(),
        }
    }
}

fn backend(detail: impl std::fmt::Display) -> SolverError {
    SolverError::Backend {
        backend: "queue re-timing",
        detail: detail.to_string(),
    }
}

/// The queue of `s`'s loads in execution order, with the bounds on C that its rules give.
struct Queue {
    /// Load operators in queue (execution) order.
    loads: Vec<usize>,
    /// S_j per operator (0 for operators without a load).
    start: Vec<f64>,
    /// Σ H.
    total: f64,
    /// Bounds on C_k, stages 0..=n.
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl Queue {
    fn of(inst: &Instance, s: &Schedule) -> Queue {
        let n = inst.ops.len();
        let loads = inst.load_indices();
        let h = |j: usize| inst.ops[j].hbm_cycles.get();
        let mut start = vec![0.0; n];
        let mut total = 0.0;
        for &j in &loads {
            start[j] = total;
            total += h(j);
        }
        let mut lower = vec![0.0f64; n + 1];
        let mut upper = vec![total; n + 1];
        for &j in &loads {
            lower[j] = lower[j].max(start[j] + h(j));
            let w = inst.window_start(OpId(j)).index();
            if w > 0 {
                upper[w - 1] = upper[w - 1].min(start[j]);
            }
        }
        lower[n] = total;
        // Loads j ≥ k are resident in stage k once reached (stage k runs operator k − 1).
        let option = |i: usize| &inst.ops[i].options[s.options[i]];
        let sram = inst.sram_bytes.get();
        let mut first = 0; // index into `loads` of the first load with operator ≥ k
        for (k, up) in upper.iter_mut().enumerate() {
            while first < loads.len() && loads[first] < k {
                first += 1;
            }
            let hot = Stage(k)
                .executing()
                .map_or(0, |i| option(i.index()).hot.get());
            let mut used = hot;
            for &j in &loads[first..] {
                used += option(j).cold.get();
                if used > sram {
                    *up = up.min(start[j]);
                    break;
                }
            }
        }
        Queue {
            loads,
            start,
            total,
            lower,
            upper,
        }
    }

    /// The queue boundaries (S_j of each load, and the total), ascending.
    fn boundaries(&self) -> Vec<f64> {
        let mut b: Vec<f64> = self.loads.iter().map(|&j| self.start[j]).collect();
        b.push(self.total);
        b
    }

    /// The load work of cumulative work `c` (stages 0..=n): (operator, stage, cycles).
    fn work(&self, inst: &Instance, c: &[f64]) -> Vec<(usize, usize, f64)> {
        let mut pieces = Vec::new();
        let mut q = 0; // first load not finished before the stage
        let mut before = 0.0;
        for (k, &after) in c.iter().enumerate() {
            while q < self.loads.len() {
                let j = self.loads[q];
                let (from, to) = (self.start[j], self.start[j] + inst.ops[j].hbm_cycles.get());
                let piece = to.min(after) - from.max(before);
                if piece > 0.0 {
                    pieces.push((j, k, piece));
                }
                if to <= after {
                    q += 1;
                } else {
                    break;
                }
            }
            before = after;
        }
        pieces.sort_by_key(|&(j, k, _)| (j, k));
        pieces
    }
}

/// One stage's ν per stage from `work`'s mix (H-weighted), `mean` where a stage has none.
fn stage_nu(inst: &Instance, s: &Schedule, work: &[(usize, usize, f64)], mean: f64) -> Vec<f64> {
    let n = inst.ops.len();
    let mut hbm = vec![0.0; n + 1];
    let mut noc = vec![0.0; n + 1];
    for &(j, k, v) in work {
        hbm[k] += v;
        noc[k] += v * inst.ops[j].options[s.options[j]].noc_per_hbm;
    }
    (0..=n)
        .map(|k| if hbm[k] > 0.0 { noc[k] / hbm[k] } else { mean })
        .collect()
}

/// Solves the queue LP with ν per stage `nu`; returns C (stages 0..=n) or None at the limit.
fn solve(
    inst: &Instance,
    s: &Schedule,
    queue: &Queue,
    nu: &[f64],
    time_limit: Duration,
) -> Result<Option<Vec<f64>>> {
    let n = inst.ops.len();
    let option = |i: usize| &inst.ops[i].options[s.options[i]];
    let mut pb = RowProblem::default();
    let c: Vec<_> = (0..=n)
        .map(|k| pb.add_column(0.0, queue.lower[k]..=queue.upper[k].max(queue.lower[k])))
        .collect();
    for k in 0..=n {
        let executing = Stage(k).executing().map(|i| option(i.index()));
        let (exec, comm) =
            executing.map_or((0.0, 0.0), |o| (o.exec_cycles.get(), o.comm_cycles.get()));
        let d = pb.add_column(1.0, exec.max(comm)..);
        // W_k = C_k − C_{k−1} as (column, coefficient) pairs.
        let w: Vec<(highs::Col, f64)> = if k == 0 {
            vec![(c[0], 1.0)]
        } else {
            vec![(c[k], 1.0), (c[k - 1], -1.0)]
        };
        if k > 0 {
            pb.add_row(0.0.., w.clone());
        }
        let scaled = |f: f64| w.iter().map(move |&(col, a)| (col, a * f));
        pb.add_row(0.0.., std::iter::once((d, 1.0)).chain(scaled(-1.0)));
        let v = nu[k];
        match executing.filter(|_| inst.noc_row == NocRow::Phased) {
            Some(o) => {
                // d − ν·W + ν·y ≥ exec, y ≤ W, y ≤ comp, ν·y ≤ comp (elk_sim::phased).
                let comp = (o.exec_cycles - o.comm_cycles).get().max(0.0);
                let cap = if v > 0.0 { comp.min(comp / v) } else { comp };
                let y = pb.add_column(0.0, 0.0..=cap);
                pb.add_row(0.0.., scaled(1.0).chain([(y, -1.0)]));
                pb.add_row(
                    exec..,
                    std::iter::once((d, 1.0)).chain(scaled(-v)).chain([(y, v)]),
                );
            }
            None if v > 0.0 => {
                pb.add_row(comm.., std::iter::once((d, 1.0)).chain(scaled(-v)));
            }
            None => {}
        }
    }
    let mut model = pb
        .try_optimise(Sense::Minimise)
        .map_err(|e| backend(format!("building the LP: {e:?}")))?;
    model.make_quiet();
    model
        .try_set_option("time_limit", time_limit.as_secs_f64().max(0.01))
        .and_then(|_| model.try_set_option("threads", 1))
        .and_then(|_| model.try_set_option("random_seed", 0))
        .map_err(|e| backend(format!("options: {e:?}")))?;
    let solved = model
        .try_solve()
        .map_err(|e| backend(format!("solve: {e:?}")))?;
    match solved.status() {
        HighsModelStatus::Optimal => {}
        HighsModelStatus::ReachedTimeLimit
        | HighsModelStatus::ReachedIterationLimit
        | HighsModelStatus::ReachedInterrupt => return Ok(None),
        other => {
            return Err(backend(format!(
                "HiGHS ended with status {other:?} (the queue of a valid schedule is feasible)"
            )))
        }
    }
    // The C columns were added first.
    let cum = solved.get_solution().columns()[..=n].to_vec();
    Ok(Some(snap(queue, cum)))
}

/// C made exact where the LP left it within tolerance of a queue boundary, clamped to its
/// bounds and made non-decreasing.
fn snap(queue: &Queue, mut c: Vec<f64>) -> Vec<f64> {
    let bounds = queue.boundaries();
    let tol = SNAP * queue.total.max(1.0);
    let mut prev = 0.0f64;
    for (k, v) in c.iter_mut().enumerate() {
        let i = bounds.partition_point(|&b| b < *v);
        for b in [i.checked_sub(1), Some(i)].into_iter().flatten() {
            if let Some(&b) = bounds.get(b) {
                if (b - *v).abs() <= tol {
                    *v = b;
                }
            }
        }
        *v = v
            .clamp(queue.lower[k], queue.upper[k].max(queue.lower[k]))
            .max(prev);
        prev = *v;
    }
    c
}

/// New load starts for `s`'s options by the queue LP (module docs), each result re-timed and
/// judged; the best, or `s` when none is faster. `method` names the output schedule.
/// Errors: `s` is not valid (`Input`), HiGHS failed (`Backend`).
pub fn requeue(
    inst: &Instance,
    s: &Schedule,
    method: &str,
    refinements: usize,
    time_limit: Duration,
) -> Result<QueueReport> {
    let input_cycles = elk_sim::judged_makespan(inst, s).map_err(|v| {
        SolverError::Input(format!(
            "queue re-timing: the input schedule is invalid: {v}"
        ))
    })?;
    run(inst, s, input_cycles, method, refinements, time_limit)
}

/// Queue schedules for `options` (one per operator) as [`requeue`] builds them, without an
/// input schedule: `schedule` is the best of them (`makespan_cycles` infinite and `seeds`
/// empty when none was valid).
pub fn queue_for_options(
    inst: &Instance,
    options: Vec<usize>,
    method: &str,
    refinements: usize,
    time_limit: Duration,
) -> Result<QueueReport> {
    let s = Schedule::new(inst, method, options, Vec::new(), Vec::new(), Cycles(0.0));
    run(
        inst,
        &s,
        Cycles(f64::INFINITY),
        method,
        refinements,
        time_limit,
    )
}

/// [`requeue`] once the input's makespan is known.
fn run(
    inst: &Instance,
    s: &Schedule,
    input_cycles: Cycles,
    method: &str,
    refinements: usize,
    time_limit: Duration,
) -> Result<QueueReport> {
    let started = Instant::now();
    let left = || time_limit.saturating_sub(started.elapsed());
    let mut best = s.clone();
    best.method = method.into();
    best.makespan_cycles = input_cycles;
    let mut report = QueueReport {
        schedule: best,
        input_cycles,
        makespan_cycles: input_cycles,
        lps: 0,
        seeds: Vec::new(),
        rejected: Vec::new(),
        not_run: None,
    };
    let queue = Queue::of(inst, s);
    if queue.loads.is_empty() {
        report.not_run = Some(NoQueue::NoLoads);
        return Ok(report);
    }
    if queue.lower.iter().zip(&queue.upper).any(|(l, u)| l > u) {
        report.not_run = Some(NoQueue::Unfit);
        return Ok(report);
    }
    let h = |j: usize| inst.ops[j].hbm_cycles.get();
    let mean = queue
        .loads
        .iter()
        .map(|&j| h(j) * inst.ops[j].options[s.options[j]].noc_per_hbm)
        .sum::<f64>()
        / queue.total.max(f64::MIN_POSITIVE);
    let mut nu = vec![mean; inst.ops.len() + 1];
    for _ in 0..=refinements {
        if left().is_zero() {
            break;
        }
        let Some(c) = solve(inst, s, &queue, &nu, left())? else {
            break;
        };
        report.lps += 1;
        let pieces = queue.work(inst, &c);
        nu = stage_nu(inst, s, &pieces, mean);
        let order = queue.loads.iter().map(|&j| OpId(j)).collect();
        let work = clean_work(inst, pieces);
        let candidate = Schedule::new(inst, method, s.options.clone(), order, work, Cycles(0.0));
        if let Err(v) = elk_sim::judged_makespan(inst, &candidate) {
            report.rejected.push(v.to_string());
            continue;
        }
        let timed = retime(inst, &candidate, method, Some(left()))?;
        let t = timed.makespan_cycles;
        if t.get() < report.makespan_cycles.get() * (1.0 - 1e-9) {
            report.makespan_cycles = t;
            report.schedule = timed.schedule.clone();
        }
        match report.seeds.get_mut(1) {
            Some(refined) if t.get() >= refined.1.get() => {}
            Some(refined) => *refined = (timed.schedule, t),
            None => report.seeds.push((timed.schedule, t)),
        }
    }
    Ok(report)
}
