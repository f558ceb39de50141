//! The backends in common terms: run HiGHS or z3 on an instance, turn what it returns into
//! a verdict, a schedule (not yet judged), its objective, its bound and the model's size.
//! A new backend is one function here, one [`Backend`] variant and its names in
//! [`super::options`].

use crate::error::Result;
#[cfg(not(feature = "smt"))]
use crate::error::SolverError;
use crate::exact::{Backend, ExactOptions, ModelStats, Phase};
use crate::extract::to_schedule;
use crate::milp::{run_milp_watched, MilpConfig, MilpStatus};
#[cfg(feature = "smt")]
use crate::smt::{run_smt, SmtConfig, SmtStatus};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::Verdict;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use highs_watch::MipProgress;
use std::time::Duration;

/// What a backend returned, in common terms.
pub(crate) struct BackendResult {
    pub(crate) status: Verdict,
    pub(crate) schedule: Option<Schedule>,
    pub(crate) objective: Option<f64>,
    pub(crate) bound: Option<f64>,
    pub(crate) model: ModelStats,
    /// Work units used ([`crate::exact::Work`]: branch-and-bound nodes).
    pub(crate) work: u64,
    /// Why it stopped short of a proof: its time limit or its work budget (`None`: it
    /// proved optimality or infeasibility, or did not run).
    pub(crate) cut: Option<Cut>,
}

/// What stopped a backend before it proved anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Its time limit.
    Time,
    /// Its work budget: the nodes.
    Work,
    /// Its work budget: the simplex-iteration cap that comes with the nodes
    /// ([`crate::milp::LP_ITERATIONS_PER_NODE`]), which bounds the MILP's root too.
    Iterations,
}

impl BackendResult {
    /// No backend ran: no schedule, no bound, no model.
    pub(crate) fn nothing() -> BackendResult {
        BackendResult {
            status: Verdict::Unknown,
            schedule: None,
            objective: None,
            bound: None,
            model: ModelStats::default(),
            work: 0,
            cut: None,
        }
    }
}

/// What a backend may spend: wall-clock time and, under `--work-limit`, work units
/// ([`crate::exact::Work`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Allowance {
    pub(crate) time: Option<Duration>,
    pub(crate) work: Option<u64>,
}

/// Runs the options' backend on `inst` within `allowance`, from `warm_start` where the
/// backend takes one (HiGHS does; z3 does not), recording its phases.
pub(crate) fn run(
    inst: &Instance,
    opts: &ExactOptions,
    allowance: Allowance,
    warm_start: Option<&Schedule>,
    phases: &mut Vec<Phase>,
    on: &dyn Fn(&MipProgress),
) -> Result<BackendResult> {
    match opts.backend {
        Backend::Milp => milp_backend(inst, opts, allowance, warm_start, phases, on),
        Backend::Smt => smt_backend(inst, allowance.time),
    }
}

pub(crate) fn milp_backend(
    inst: &Instance,
    opts: &ExactOptions,
    allowance: Allowance,
    warm_start: Option<&Schedule>,
    phases: &mut Vec<Phase>,
    on: &dyn Fn(&MipProgress),
) -> Result<BackendResult> {
    let run = run_milp_watched(
        inst,
        &MilpConfig {
            linearisation: opts.linearisation,
            time_limit: allowance.time,
            warm_start: warm_start.cloned(),
            max_nodes: allowance.work,
        },
        on,
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
    let mut result = assemble(
        inst,
        Backend::Milp.method_name(),
        status,
        run.solution.as_ref(),
        run.objective,
        run.dual_bound,
        model,
    );
    result.work = run.nodes;
    result.cut = match run.status {
        MilpStatus::TimeLimit => Some(Cut::Time),
        MilpStatus::WorkLimit if run.iterations_capped => Some(Cut::Iterations),
        MilpStatus::WorkLimit => Some(Cut::Work),
        MilpStatus::Optimal | MilpStatus::Infeasible => None,
    };
    Ok(result)
}

/// The common verdict of a backend that proved optimality, proved infeasibility, or stopped
/// at its limit with or without a solution.
fn verdict(optimal: bool, infeasible: bool, has_solution: bool) -> Verdict {
    match (optimal, infeasible, has_solution) {
        (true, _, _) => Verdict::Optimal,
        (_, true, _) => Verdict::Infeasible,
        (_, _, true) => Verdict::Feasible,
        _ => Verdict::Unknown,
    }
}

/// A backend's solution as a schedule (not yet judged) and its result.
fn assemble(
    inst: &Instance,
    method: &str,
    status: Verdict,
    solution: Option<&crate::extract::RawSolution>,
    objective: Option<f64>,
    bound: Option<f64>,
    model: ModelStats,
) -> BackendResult {
    let st = status.schedule_status();
    let schedule = solution.map(|raw| {
        let claim = Cycles(objective.unwrap_or(0.0));
        to_schedule(inst, raw, method, claim, st, bound.map(Cycles))
    });
    BackendResult {
        status,
        schedule,
        objective,
        bound,
        model,
        work: 0,
        cut: None,
    }
}

/// A build without z3 refuses the SMT backend, saying why ([`Backend::missing`]).
#[cfg(not(feature = "smt"))]
fn smt_backend(_: &Instance, _: Option<Duration>) -> Result<BackendResult> {
    let why = Backend::Smt.missing().unwrap_or_default();
    Err(SolverError::Input(format!("backend 'smt': {why}")))
}

#[cfg(feature = "smt")]
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
    let mut result = assemble(
        inst,
        Backend::Smt.method_name(),
        status,
        run.solution.as_ref(),
        run.objective,
        bound,
        model,
    );
    result.cut = (run.status == SmtStatus::TimeLimit).then_some(Cut::Time);
    Ok(result)
}

/// The simulator's makespan of a schedule, or the first violation.
pub(crate) fn judge(inst: &Instance, s: &Schedule) -> std::result::Result<f64, String> {
    elk_sim::judged_makespan(inst, s)
        .map(Cycles::get)
        .map_err(|v| v.to_string())
}
