//! One entry point for the exact methods: run a backend, judge its schedule with the
//! simulator, combine its bound with the LP relaxation and the roofline bounds, and never
//! return anything worse than the warm start.

use crate::bounds::{roofline, Roofline};
use crate::error::{Result, SolverError};
use crate::extract::to_schedule;
use crate::milp::{lp_bound, run_milp, Linearisation, MilpConfig, MilpStatus};
use crate::smt::{run_smt, SmtConfig, SmtStatus};
use elk_model::instance::{Instance, LoadOrder, NamedOrder};
use elk_model::method::{Budget, Method, Outcome, Solved, StopReason};
use elk_model::schedule::{Schedule, Status};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Which exact encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// HiGHS MILP.
    #[default]
    Milp,
    /// z3 SMT.
    Smt,
}

impl Backend {
    /// `milp` or `smt`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Milp => "milp",
            Backend::Smt => "smt",
        }
    }
}

/// How to solve.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactOptions {
    /// The encoding.
    pub backend: Backend,
    /// MILP memory-row linearisation.
    #[serde(default)]
    pub linearisation: Linearisation,
    /// Seconds the backend may run (its own limit; [`crate::worker`] enforces a hard one).
    pub time_limit_s: Option<f64>,
    /// A schedule to start from; the result is never worse.
    pub warm_start: Option<Schedule>,
    /// Also solve the LP relaxation for a bound (with a quarter of the time limit).
    #[serde(default)]
    pub lp_bound: bool,
}

/// The verdict of an exact solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExactStatus {
    /// Proven optimal.
    Optimal,
    /// A schedule with a certified bound, optimality not proven.
    Feasible,
    /// Proven: no schedule exists.
    Infeasible,
    /// No schedule and nothing proven.
    Unknown,
}

/// The lower bounds computed, cycles.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Bounds {
    /// Σ H.
    pub hbm_cycles: f64,
    /// Σ min exec.
    pub exec_cycles: f64,
    /// The prefix roofline bound.
    pub prefix_cycles: f64,
    /// The LP relaxation's optimum, when solved.
    pub lp_cycles: Option<f64>,
    /// The backend's proven bound (MILP dual bound; the optimum when proven).
    pub backend_cycles: Option<f64>,
}

/// Model size in the backend's terms.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct ModelStats {
    /// Variables (MILP columns; SMT constants).
    pub variables: usize,
    /// Binary / Boolean variables (SMT: Booleans + integers).
    pub binaries: usize,
    /// Constraints (MILP rows; SMT assertions).
    pub constraints: usize,
    /// Options kept after Pareto pruning (MILP), of all options.
    pub options_kept: Option<(usize, usize)>,
}

/// Everything an exact solve reports.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExactReport {
    /// The backend.
    pub backend: Backend,
    /// The verdict.
    pub status: ExactStatus,
    /// The schedule (judged by the simulator).
    pub schedule: Option<Schedule>,
    /// The simulator's makespan of `schedule`, cycles.
    pub makespan_cycles: Option<f64>,
    /// The backend's own objective, cycles (equals the makespan up to 1e-6 relative).
    pub objective_cycles: Option<f64>,
    /// The best certified lower bound, cycles.
    pub lower_bound_cycles: f64,
    /// Which bound that is.
    pub bound_source: String,
    /// All bounds computed.
    pub bounds: Bounds,
    /// 100·(makespan − bound)/bound.
    pub gap_pct: Option<f64>,
    /// Wall-clock seconds, whole solve.
    pub solve_s: f64,
    /// Model size.
    pub model: ModelStats,
    /// The schedule returned is the warm start (the backend found nothing better).
    pub from_warm_start: bool,
    /// Facts worth reporting (no wall-clock times: those are in `phases`).
    pub notes: Vec<String>,
    /// Wall-clock seconds of each phase.
    pub phases: Vec<Phase>,
}

/// A timed phase of a solve.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Phase {
    /// What ran.
    pub what: String,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// 100·(t − bound)/bound.
pub fn gap_pct(t: f64, bound: f64) -> Option<f64> {
    (bound > 0.0).then(|| 100.0 * (t - bound) / bound)
}

/// What a backend returned, in common terms.
struct BackendResult {
    status: ExactStatus,
    schedule: Option<Schedule>,
    objective: Option<f64>,
    bound: Option<f64>,
    model: ModelStats,
}

fn milp_backend(
    inst: &Instance,
    opts: &ExactOptions,
    limit: Option<Duration>,
    warm_start: Option<&Schedule>,
    phases: &mut Vec<Phase>,
) -> Result<BackendResult> {
    let run = run_milp(
        inst,
        &MilpConfig {
            linearisation: opts.linearisation,
            time_limit: limit,
            warm_start: warm_start.cloned(),
        },
    )?;
    let what = if inst.load_order == LoadOrder::Named(NamedOrder::Fixed) {
        "fixed-order MILP"
    } else {
        "MILP"
    };
    phases.push(Phase {
        what: format!("{what}: build"),
        seconds: run.build_s,
    });
    phases.push(Phase {
        what: format!("{what}: HiGHS"),
        seconds: run.solve_s,
    });
    let status = verdict(
        run.status == MilpStatus::Optimal,
        run.status == MilpStatus::Infeasible,
        run.solution.is_some(),
    );
    let model = ModelStats {
        variables: run.size.variables,
        binaries: run.size.binaries,
        constraints: run.size.constraints,
        options_kept: Some(run.options_kept),
    };
    Ok(assemble(
        inst,
        "exact-milp",
        status,
        run.solution.as_ref(),
        run.objective,
        run.dual_bound,
        model,
    ))
}

/// The common verdict of a backend that proved optimality, proved infeasibility, or stopped
/// at its limit with or without a solution.
fn verdict(optimal: bool, infeasible: bool, has_solution: bool) -> ExactStatus {
    match (optimal, infeasible, has_solution) {
        (true, _, _) => ExactStatus::Optimal,
        (_, true, _) => ExactStatus::Infeasible,
        (_, _, true) => ExactStatus::Feasible,
        _ => ExactStatus::Unknown,
    }
}

/// A backend's solution as a schedule (not yet judged) and its result.
fn assemble(
    inst: &Instance,
    method: &str,
    status: ExactStatus,
    solution: Option<&crate::extract::RawSolution>,
    objective: Option<f64>,
    bound: Option<f64>,
    model: ModelStats,
) -> BackendResult {
    let st = if status == ExactStatus::Optimal {
        Status::Optimal
    } else {
        Status::Feasible
    };
    let schedule =
        solution.map(|raw| to_schedule(inst, raw, method, objective.unwrap_or(0.0), st, bound));
    BackendResult {
        status,
        schedule,
        objective,
        bound,
        model,
    }
}

fn smt_backend(inst: &Instance, limit: Option<Duration>) -> Result<BackendResult> {
    let run = run_smt(inst, &SmtConfig { time_limit: limit })?;
    let status = verdict(
        run.status == SmtStatus::Optimal,
        run.status == SmtStatus::Infeasible,
        run.solution.is_some(),
    );
    let model = ModelStats {
        variables: run.size.bools + run.size.ints + run.size.reals,
        binaries: run.size.bools + run.size.ints,
        constraints: run.size.assertions,
        options_kept: None,
    };
    let bound = (run.proven_below > 0.0).then_some(run.proven_below);
    Ok(assemble(
        inst,
        "exact-smt",
        status,
        run.solution.as_ref(),
        run.objective,
        bound,
        model,
    ))
}

/// The simulator's makespan of a schedule, or the first violation.
fn judge(inst: &Instance, s: &Schedule) -> std::result::Result<f64, String> {
    match elk_sim::validate(inst, s).first() {
        Some(v) => Err(v.to_string()),
        None => Ok(elk_sim::evaluate(inst, s).makespan_cycles),
    }
}

/// What a solve has gathered so far.
struct Progress {
    started: Instant,
    limit: Option<Duration>,
    bounds: Bounds,
    /// The best valid schedule known before the backend's own (and its makespan).
    warm: Option<(Schedule, f64)>,
    notes: Vec<String>,
    phases: Vec<Phase>,
}

impl Progress {
    fn remaining(&self) -> Option<Duration> {
        self.limit.map(|l| l.saturating_sub(self.started.elapsed()))
    }
}

/// Solves `inst` exactly in this process (backend time limits only; see
/// [`crate::worker`] for a hard limit).
pub fn solve_exact(inst: &Instance, opts: &ExactOptions) -> Result<ExactReport> {
    let started = Instant::now();
    let limit = opts.time_limit_s.map(Duration::from_secs_f64);
    let warm = match &opts.warm_start {
        Some(s) => {
            let t = judge(inst, s).map_err(|v| {
                SolverError::Model(elk_model::ModelError::Invalid(format!(
                    "warm start ({}): {v}",
                    s.method
                )))
            })?;
            Some((s.clone(), t))
        }
        None => None,
    };
    let roof: Roofline = roofline(inst);
    let mut run = Progress {
        started,
        limit,
        bounds: Bounds {
            hbm_cycles: roof.hbm_cycles,
            exec_cycles: roof.exec_cycles,
            prefix_cycles: roof.prefix_cycles,
            ..Bounds::default()
        },
        warm,
        notes: Vec::new(),
        phases: Vec::new(),
    };
    let size = crate::milp::estimated_size(inst);
    // z3 is far slower per constraint than HiGHS: it gets a tenth of the size.
    let max = match opts.backend {
        Backend::Milp => crate::milp::MAX_SIZE,
        Backend::Smt => crate::milp::MAX_SIZE / 10,
    };
    if size > max {
        run.notes.push(format!(
            "model too large to attempt (≈ {size} rows and columns, limit {max}): cut the instance with --layers/--ops or set a preload window (--window); reporting the best schedule given and the roofline bound"
        ));
        let nothing = BackendResult {
            status: ExactStatus::Unknown,
            schedule: None,
            objective: None,
            bound: None,
            model: ModelStats::default(),
        };
        return finish(inst, opts, run, nothing);
    }
    if opts.lp_bound {
        let lp_limit = limit.map(|l| l / 4);
        match lp_bound(inst, opts.linearisation, lp_limit)? {
            Some((v, _)) => run.bounds.lp_cycles = Some(v),
            None => run
                .notes
                .push("LP relaxation not solved within its time share".into()),
        }
    }
    let known_bound = roof.best().max(run.bounds.lp_cycles.unwrap_or(0.0));
    if opts.backend == Backend::Milp && inst.load_order != LoadOrder::Named(NamedOrder::Fixed) {
        if let Some(done) = fixed_order_first(inst, opts, known_bound, &mut run)? {
            return finish(inst, opts, run, done);
        }
    }
    let result = match opts.backend {
        Backend::Milp => {
            let warm = run.warm.as_ref().map(|w| w.0.clone());
            let remaining = run.remaining();
            milp_backend(inst, opts, remaining, warm.as_ref(), &mut run.phases)?
        }
        Backend::Smt => smt_backend(inst, run.remaining())?,
    };
    finish(inst, opts, run, result)
}

/// Solves the fixed-order restriction first (its schedules are valid under any order
/// policy) with 40% of the time: a strong incumbent for the full model — the free-order
/// MILP finds good schedules slowly — and, when it meets the known lower bound, the optimum
/// outright. Returns the final result in that case; otherwise improves `run.warm`.
fn fixed_order_first(
    inst: &Instance,
    opts: &ExactOptions,
    known_bound: f64,
    run: &mut Progress,
) -> Result<Option<BackendResult>> {
    let mut fixed = inst.clone();
    fixed.load_order = LoadOrder::Named(NamedOrder::Fixed);
    let share = run.remaining().map(|r| r.mul_f64(0.4));
    let valid_warm = run
        .warm
        .as_ref()
        .filter(|(s, _)| elk_sim::validate(&fixed, s).is_empty())
        .map(|w| w.0.clone());
    let restricted = milp_backend(&fixed, opts, share, valid_warm.as_ref(), &mut run.phases)?;
    let Some(mut s) = restricted.schedule else {
        run.notes
            .push("fixed-order restriction: no schedule".into());
        return Ok(None);
    };
    let t = judge(inst, &s).map_err(|detail| SolverError::Rejected {
        backend: "milp",
        detail,
    })?;
    run.notes.push(format!(
        "fixed-order restriction: {t:.1} cycles ({})",
        if restricted.status == ExactStatus::Optimal {
            "optimal for fixed order"
        } else {
            "time limit"
        }
    ));
    if run.warm.as_ref().is_none_or(|(_, wt)| t < *wt) {
        s.method = "exact-milp".into();
        run.warm = Some((s.clone(), t));
    }
    if t <= known_bound * (1.0 + crate::milp::REL_GAP) {
        run.notes.push(
            "the fixed-order optimum meets the lower bound: optimal for the free order too".into(),
        );
        return Ok(Some(BackendResult {
            status: ExactStatus::Optimal,
            schedule: Some(s),
            objective: restricted.objective,
            bound: Some(known_bound),
            model: restricted.model,
        }));
    }
    Ok(None)
}

/// Judges the backend's schedule, keeps the warm start when it is better, and assembles the
/// report with the best bound.
fn finish(
    inst: &Instance,
    opts: &ExactOptions,
    run: Progress,
    result: BackendResult,
) -> Result<ExactReport> {
    let Progress {
        started,
        mut bounds,
        warm,
        mut notes,
        phases,
        ..
    } = run;
    let roof_best = bounds
        .prefix_cycles
        .max(bounds.hbm_cycles)
        .max(bounds.exec_cycles);
    bounds.backend_cycles = result.bound;
    let mut status = result.status;
    let mut schedule = None;
    let mut makespan = None;
    if let Some(s) = result.schedule {
        let t = judge(inst, &s).map_err(|detail| SolverError::Rejected {
            backend: opts.backend.name(),
            detail,
        })?;
        if let Some(obj) = result.objective {
            let rel = (t - obj).abs() / obj.abs().max(1.0);
            if rel > 1e-6 {
                notes.push(format!(
                    "BUG: backend objective {obj:.4} cycles vs simulator {t:.4} (relative {rel:.2e})"
                ));
            }
        }
        schedule = Some(s);
        makespan = Some(t);
    }
    let mut from_warm_start = false;
    if let Some((ws, wt)) = warm {
        if status == ExactStatus::Infeasible {
            return Err(SolverError::Backend {
                backend: opts.backend.name(),
                detail: "proved infeasible although the warm start is a valid schedule".into(),
            });
        }
        if makespan.is_none_or(|t| wt < t) {
            if status == ExactStatus::Optimal {
                notes.push(format!(
                    "warm start ({}) beats the 'optimal' schedule by {:.3e} cycles",
                    ws.method,
                    makespan.unwrap_or(0.0) - wt
                ));
                status = ExactStatus::Feasible;
            }
            if status == ExactStatus::Unknown {
                status = ExactStatus::Feasible;
            }
            schedule = Some(ws);
            makespan = Some(wt);
            from_warm_start = true;
        }
    }
    let (mut lower, mut source) = (roof_best, "roofline".to_string());
    for (v, name) in [
        (bounds.lp_cycles, "LP relaxation"),
        (
            bounds.backend_cycles,
            match opts.backend {
                Backend::Milp => "MILP dual bound",
                Backend::Smt => "SMT unsat bound",
            },
        ),
    ] {
        if let Some(v) = v.filter(|&v| v > lower) {
            lower = v;
            source = name.into();
        }
    }
    // A proven optimum is its own bound (the dual bound may sit a tolerance below it).
    if status == ExactStatus::Optimal {
        if let Some(t) = makespan {
            // Proven within the backend's gap (1e-9 relative): the optimum is the bound.
            lower = t;
            source = "optimum".into();
        }
    }
    let gap = makespan.and_then(|t| gap_pct(t, lower));
    if let Some(s) = schedule.as_mut() {
        s.lower_bound_cycles = Some(lower);
        s.status = if status == ExactStatus::Optimal {
            Status::Optimal
        } else {
            Status::Feasible
        };
    }
    Ok(ExactReport {
        backend: opts.backend,
        status,
        schedule,
        makespan_cycles: makespan,
        objective_cycles: result.objective,
        lower_bound_cycles: lower,
        bound_source: source,
        bounds,
        gap_pct: gap,
        solve_s: started.elapsed().as_secs_f64(),
        model: result.model,
        from_warm_start,
        notes,
        phases,
    })
}

/// An exact backend as a [`Method`] (in-process; the budget's limit is the backend's own).
#[derive(Clone, Copy, Debug, Default)]
pub struct Exact {
    /// The encoding.
    pub backend: Backend,
}

impl Method for Exact {
    fn name(&self) -> &'static str {
        match self.backend {
            Backend::Milp => "exact-milp",
            Backend::Smt => "exact-smt",
        }
    }

    fn schedule(&self, inst: &Instance, budget: &Budget) -> elk_model::Result<Solved> {
        let opts = ExactOptions {
            backend: self.backend,
            time_limit_s: budget.time_limit.map(|d| d.as_secs_f64()),
            ..ExactOptions::default()
        };
        let report =
            solve_exact(inst, &opts).map_err(|e| elk_model::ModelError::Invalid(e.to_string()))?;
        Ok(report.solved())
    }
}

impl ExactReport {
    /// As a method result.
    pub fn solved(&self) -> Solved {
        let outcome = match (&self.status, &self.schedule) {
            (ExactStatus::Optimal, Some(s)) => Outcome::Optimal(s.clone()),
            (ExactStatus::Infeasible, _) => Outcome::Infeasible {
                reason: format!("{} proved that no schedule fits", self.backend.name()),
            },
            (_, Some(s)) => Outcome::Feasible {
                schedule: s.clone(),
                bound: Some(self.lower_bound_cycles),
            },
            _ => Outcome::Unknown,
        };
        let stop = match self.status {
            ExactStatus::Optimal | ExactStatus::Infeasible => StopReason::Completed,
            _ => StopReason::TimeLimit,
        };
        let mut notes = self.notes.clone();
        notes.push(format!(
            "lower bound {:.1} cycles ({})",
            self.lower_bound_cycles, self.bound_source
        ));
        Solved {
            outcome,
            stop,
            notes,
        }
    }
}
