//! One entry point for the exact methods: run a backend, judge its schedule with the
//! simulator, combine its bound with the LP relaxation and the roofline bounds, and never
//! return anything worse than the warm start.

use crate::bounds::{roofline, Roofline};
use crate::error::{Result, SolverError};
use crate::extract::to_schedule;
use crate::lns::{improve, LnsOptions, LnsStep, LnsStop, LnsSummary};
use crate::milp::{lp_bound, run_milp, Linearisation, MilpConfig, MilpStatus};
use crate::segments::{segment_bound_with, SegmentOptions, SegmentStep};
use crate::smt::{run_smt, SmtConfig, SmtStatus};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::{Outcome, Solved, StopReason};
use elk_stage::schedule::{Schedule, Status};
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Which exact encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// HiGHS MILP.
    #[default]
    Milp,
    /// z3 SMT.
    #[cfg_attr(feature = "clap", value(help = "z3 SMT (tiny instances)"))]
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
    /// Wall-clock time the backend may run (its own limit; [`crate::worker`] enforces a
    /// hard one).
    pub time_limit: Option<Duration>,
    /// A schedule to start from; the result is never worse.
    pub warm_start: Option<Schedule>,
    /// Also solve the LP relaxation for a bound (with a quarter of the time limit).
    #[serde(default)]
    pub lp_bound: bool,
    /// How a model too large for the backend is bounded beyond the roofline.
    #[serde(default)]
    pub whole_model: WholeModelBound,
    /// Whether the warm start of a model too large for the backend is improved by the
    /// window search ([`crate::lns`]).
    #[serde(default)]
    pub whole_model_search: WholeModelSearch,
}

/// What improves the schedule of a model too large for the exact backends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WholeModelSearch {
    /// The window search of [`crate::lns`], from the warm start, with the time the bound
    /// leaves.
    #[default]
    Window,
    /// Nothing: the warm start is returned as it is.
    Off,
}

/// The bound computed when the instance is too large for the exact backends: the segment
/// relaxation of [`crate::segments`], each segment solved as an LP or a MILP (dual bound).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum WholeModelBound {
    /// Segment LP relaxations (fast).
    #[default]
    #[cfg_attr(feature = "clap", value(help = "Segment LP relaxations"))]
    Lp,
    /// Segment MILPs, their dual bounds (tighter, slower).
    #[cfg_attr(feature = "clap", value(help = "Segment MILP dual bounds"))]
    Milp,
    /// The roofline only.
    #[cfg_attr(feature = "clap", value(help = "Roofline only"))]
    Off,
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

impl ExactStatus {
    /// The status a schedule from this verdict carries: optimal only when proven.
    pub fn schedule_status(self) -> Status {
        if self == ExactStatus::Optimal {
            Status::Optimal
        } else {
            Status::Feasible
        }
    }
}

/// Why the solve stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExactStop {
    /// The backend finished: a proof of optimality or infeasibility.
    #[default]
    Completed,
    /// The backend stopped at its own time limit.
    TimeLimit,
    /// The worker overran the hard limit and was killed.
    Killed,
    /// The model was too large to build; nothing was solved (see the notes for how to cut
    /// the instance).
    NotAttempted,
    /// The warm start already met a lower bound known before any model was built (roofline
    /// or LP relaxation): optimal, with no backend run.
    WarmStartMeetsBound,
    /// The model was too large to build, so the window search ([`crate::lns`]) improved the
    /// warm start instead: its own stop reason and the makespans before and after are in
    /// [`ExactReport::search`].
    WindowSearch,
}

/// The lower bounds computed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Bounds {
    /// Σ H.
    pub hbm_cycles: Cycles,
    /// Σ min exec.
    pub exec_cycles: Cycles,
    /// The prefix roofline bound.
    pub prefix_cycles: Cycles,
    /// The LP relaxation's optimum, when solved.
    pub lp_cycles: Option<Cycles>,
    /// The backend's proven bound (MILP dual bound; the optimum when proven).
    pub backend_cycles: Option<Cycles>,
    /// The segment relaxation's bound (whole models too large for the backend).
    #[serde(default)]
    pub segment_cycles: Option<Cycles>,
}

impl Bounds {
    /// The roofline bounds alone (what is known without solving anything).
    pub fn roofline(inst: &Instance) -> Bounds {
        let roof: Roofline = roofline(inst);
        Bounds {
            hbm_cycles: roof.hbm_cycles,
            exec_cycles: roof.exec_cycles,
            prefix_cycles: roof.prefix_cycles,
            ..Bounds::default()
        }
    }

    /// The strongest roofline bound.
    pub fn roofline_best(&self) -> Cycles {
        self.prefix_cycles
            .max(self.hbm_cycles)
            .max(self.exec_cycles)
    }
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
    /// Why it stopped.
    #[serde(default)]
    pub stop: ExactStop,
    /// The schedule (judged by the simulator).
    pub schedule: Option<Schedule>,
    /// The simulator's makespan of `schedule`.
    pub makespan_cycles: Option<Cycles>,
    /// The backend's own objective (equals the makespan up to 1e-6 relative).
    pub objective_cycles: Option<Cycles>,
    /// The best certified lower bound.
    pub lower_bound_cycles: Cycles,
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
    /// What the window search did (models too large for the backend).
    #[serde(default)]
    pub search: Option<LnsSummary>,
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
pub fn gap_pct(t: Cycles, bound: Cycles) -> Option<f64> {
    (bound > Cycles::ZERO).then(|| 100.0 * ((t - bound) / bound))
}

/// Relative tolerance within which a makespan meets a proven lower bound and is therefore
/// optimal (whichever method found it). HiGHS is run with a relative gap of 1e-9.
pub const MEETS_BOUND: f64 = 1e-9;

/// `t` meets the proven lower bound `bound`: the schedule is optimal.
pub fn meets_bound(t: Cycles, bound: Cycles) -> bool {
    t <= bound * (1.0 + MEETS_BOUND)
}

/// What an exact solve is doing, reported as it happens to the callback of
/// [`solve_exact_with`] (and across the worker's pipe, see [`crate::worker`]): the CLI draws
/// it on stderr. Nothing is computed from it, so a solve with or without a callback gives the
/// same report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExactEvent {
    /// A phase starts ("LP relaxation", "fixed-order MILP", "MILP (HiGHS)", "SMT (z3)",
    /// "segment relaxation"), with what is known when it does.
    Phase {
        /// What runs now.
        what: String,
        /// The best schedule's makespan so far (the warm start or a restriction's).
        incumbent: Option<Cycles>,
        /// The best proven lower bound so far.
        bound: Cycles,
        /// Wall-clock seconds since the solve started.
        elapsed_s: f64,
    },
    /// A better schedule than any told before (the warm start is not told): what a worker
    /// killed at its hard limit still reports (`crate::worker`). Valid and judged: its
    /// makespan is the simulator's.
    Incumbent {
        /// The schedule.
        schedule: Box<Schedule>,
        /// The best proven lower bound so far.
        bound: Cycles,
        /// Wall-clock seconds since the solve started.
        elapsed_s: f64,
    },
    /// The segment relaxation is about to solve a segment problem.
    Segment {
        /// Where its price search is.
        step: SegmentStep,
        /// The best schedule's makespan so far.
        incumbent: Option<Cycles>,
        /// The best proven lower bound so far (the roofline, or the best price's bound).
        bound: Cycles,
    },
}

impl ExactEvent {
    /// One line for a progress display, times in ms of `inst`: e.g. (whole Llama2-13B)
    /// "segment relaxation: μ = 0.254 (price 3 of ≤ 7), segment problem 2/3, 4 s · incumbent
    /// 6.7264 ms, bound 6.6974 ms, gap ≤ 0.43 %".
    pub fn describe(&self, inst: &Instance) -> String {
        let (head, incumbent, bound) = match self {
            ExactEvent::Phase {
                what,
                incumbent,
                bound,
                ..
            } => (what.clone(), *incumbent, *bound),
            ExactEvent::Incumbent {
                schedule,
                bound,
                elapsed_s,
            } => (
                format!("new incumbent at {elapsed_s:.0} s"),
                Some(schedule.makespan_cycles),
                *bound,
            ),
            ExactEvent::Segment {
                step,
                incumbent,
                bound,
            } => (
                format!(
                    "segment relaxation: μ = {:.3} (price {} of ≤ {}), segment problem {}/{}, {:.0} s",
                    step.price,
                    step.price_index,
                    step.max_prices,
                    step.problem,
                    step.problems,
                    step.elapsed_s
                ),
                *incumbent,
                *bound,
            ),
        };
        let known = match incumbent {
            Some(t) => format!(
                "incumbent {:.4} ms, bound {:.4} ms{}",
                inst.ms(t),
                inst.ms(bound),
                gap_pct(t, bound).map_or(String::new(), |g| format!(", gap ≤ {g:.2} %"))
            ),
            None => format!("no schedule yet, bound {:.4} ms", inst.ms(bound)),
        };
        format!("{head} · {known}")
    }
}

/// A progress callback that does nothing ([`solve_exact`]).
fn quiet(_: &ExactEvent) {}

/// What a backend returned, in common terms.
struct BackendResult {
    status: ExactStatus,
    schedule: Option<Schedule>,
    objective: Option<f64>,
    bound: Option<f64>,
    model: ModelStats,
}

impl BackendResult {
    /// No backend ran: no schedule, no bound, no model.
    fn nothing() -> BackendResult {
        BackendResult {
            status: ExactStatus::Unknown,
            schedule: None,
            objective: None,
            bound: None,
            model: ModelStats::default(),
        }
    }
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
    elk_sim::judged_makespan(inst, s)
        .map(Cycles::get)
        .map_err(|v| v.to_string())
}

/// What a solve has gathered so far.
struct Progress<'a> {
    /// Told of each phase as it starts.
    on: &'a dyn Fn(&ExactEvent),
    started: Instant,
    limit: Option<Duration>,
    bounds: Bounds,
    /// The best valid schedule known before the backend's own (and its makespan).
    warm: Option<(Schedule, f64)>,
    notes: Vec<String>,
    phases: Vec<Phase>,
    /// The makespan of the last [`ExactEvent::Incumbent`] told (the warm start's at first).
    told: std::cell::Cell<f64>,
}

impl<'a> Progress<'a> {
    fn new(
        on: &'a dyn Fn(&ExactEvent),
        started: Instant,
        limit: Option<Duration>,
        bounds: Bounds,
        warm: Option<(Schedule, f64)>,
    ) -> Progress<'a> {
        Progress {
            on,
            started,
            limit,
            bounds,
            told: std::cell::Cell::new(warm.as_ref().map_or(f64::INFINITY, |w| w.1)),
            warm,
            notes: Vec::new(),
            phases: Vec::new(),
        }
    }

    /// Tells the callback of `s` (makespan `t`, judged) when it beats every schedule told.
    fn offer(&self, s: &Schedule, t: Cycles) {
        if t.get() < self.told.get() {
            self.told.set(t.get());
            (self.on)(&ExactEvent::Incumbent {
                schedule: Box::new(s.clone()),
                bound: self.bound(),
                elapsed_s: self.started.elapsed().as_secs_f64(),
            });
        }
    }

    fn remaining(&self) -> Option<Duration> {
        self.limit.map(|l| l.saturating_sub(self.started.elapsed()))
    }

    /// The best schedule's makespan so far.
    fn incumbent(&self) -> Option<Cycles> {
        self.warm.as_ref().map(|w| Cycles(w.1))
    }

    /// The best lower bound so far.
    fn bound(&self) -> Cycles {
        let b = &self.bounds;
        [b.lp_cycles, b.segment_cycles]
            .into_iter()
            .flatten()
            .fold(b.roofline_best(), Cycles::max)
    }

    /// Tells the callback that `what` starts (and of the incumbent, when it is new).
    fn phase(&self, what: &str) {
        if let Some((s, t)) = &self.warm {
            self.offer(s, Cycles(*t));
        }
        (self.on)(&ExactEvent::Phase {
            what: what.into(),
            incumbent: self.incumbent(),
            bound: self.bound(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
        });
    }
}

/// Solves `inst` exactly in this process (backend time limits only; see
/// [`crate::worker`] for a hard limit).
pub fn solve_exact(inst: &Instance, opts: &ExactOptions) -> Result<ExactReport> {
    solve_exact_with(inst, opts, &quiet)
}

/// [`solve_exact`], telling `progress` of each phase and each segment problem as it starts
/// (the report is the same: the callback only watches).
pub fn solve_exact_with(
    inst: &Instance,
    opts: &ExactOptions,
    progress: &dyn Fn(&ExactEvent),
) -> Result<ExactReport> {
    let started = Instant::now();
    let limit = opts.time_limit;
    let warm = match &opts.warm_start {
        Some(s) => {
            let t = judge(inst, s)
                .map_err(|v| SolverError::Input(format!("warm start ({}): {v}", s.method)))?;
            Some((s.clone(), t))
        }
        None => None,
    };
    let bounds = Bounds::roofline(inst);
    let roof_best = bounds.roofline_best().get();
    let mut run = Progress::new(progress, started, limit, bounds, warm);
    let (size, max) = (crate::milp::estimated_size(inst), max_size(opts.backend));
    if size > max {
        run.notes.push(format!(
            "model too large to attempt (≈ {size} rows and columns, limit {max}): cut the instance with --layers/--ops or set a preload window (--window); reporting the best schedule given and the best bound that needs no model (roofline, segment relaxation)"
        ));
        let searching = opts.whole_model_search == WholeModelSearch::Window && run.warm.is_some();
        whole_model_bound(inst, opts, &mut run, if searching { 0.5 } else { 0.9 })?;
        let search = if searching {
            window_search(inst, &mut run)?
        } else {
            None
        };
        return finish(inst, opts, run, BackendResult::nothing()).map(|mut r| {
            // Something ran when the window search did: the stop says so, never "not
            // attempted".
            // The schedule is the warm start's only when the search improved nothing.
            r.from_warm_start = search
                .as_ref()
                .is_none_or(|s| s.makespan_cycles >= s.input_cycles);
            r.stop = if search.is_some() {
                ExactStop::WindowSearch
            } else {
                ExactStop::NotAttempted
            };
            r.search = search;
            r
        });
    }
    if opts.lp_bound {
        run.phase("LP relaxation");
        let lp_limit = limit.map(|l| l / 4);
        match lp_bound(inst, opts.linearisation, lp_limit)? {
            Some((v, _)) => run.bounds.lp_cycles = Some(Cycles(v)),
            None => run
                .notes
                .push("LP relaxation not solved within its time share".into()),
        }
    }
    let known_bound = roof_best.max(run.bounds.lp_cycles.map_or(0.0, Cycles::get));
    if run
        .warm
        .as_ref()
        .is_some_and(|w| meets_bound(Cycles(w.1), Cycles(known_bound)))
    {
        // Nothing a backend finds can beat it: `finish` promotes the warm start to optimal.
        return finish(inst, opts, run, BackendResult::nothing()).map(|mut r| {
            r.stop = ExactStop::WarmStartMeetsBound;
            r
        });
    }
    if opts.backend == Backend::Milp && inst.load_order != LoadOrder::Named(NamedOrder::Fixed) {
        if let Some(done) = fixed_order_first(inst, opts, known_bound, &mut run)? {
            return finish(inst, opts, run, done);
        }
    }
    let result = match opts.backend {
        Backend::Milp => {
            run.phase("MILP (HiGHS)");
            let warm = run.warm.as_ref().map(|w| w.0.clone());
            let remaining = run.remaining();
            milp_backend(inst, opts, remaining, warm.as_ref(), &mut run.phases)?
        }
        Backend::Smt => {
            run.phase("SMT (z3)");
            smt_backend(inst, run.remaining())?
        }
    };
    finish(inst, opts, run, result)
}

/// The largest model `backend` is given (rows and columns, as
/// [`crate::milp::estimated_size`] counts them): z3 is far slower per constraint than HiGHS,
/// so it gets a tenth.
fn max_size(backend: Backend) -> usize {
    match backend {
        Backend::Milp => crate::milp::MAX_SIZE,
        Backend::Smt => crate::milp::MAX_SIZE / 10,
    }
}

/// `inst` is too large for `backend`: an exact solve bounds it by the segment relaxation and
/// improves its warm start by the window search instead.
pub fn too_large(inst: &Instance, backend: Backend) -> bool {
    crate::milp::estimated_size(inst) > max_size(backend)
}

/// Each price whose bound beat every earlier one: a note without times ("segment relaxation
/// bound by price: μ = 0 7.1340 ms, μ = 0.345 7.2410 ms") and, for `--timings`, a phase per
/// step whose seconds are those since the search started (notes stay byte-stable).
fn improvements(inst: &Instance, prices: &[crate::segments::PricedBound]) -> (String, Vec<Phase>) {
    let mut best = f64::NEG_INFINITY;
    let better: Vec<&crate::segments::PricedBound> = prices
        .iter()
        .filter(|p| {
            let better = p.bound_cycles > best;
            best = best.max(p.bound_cycles);
            better
        })
        .collect();
    let ms = |p: &crate::segments::PricedBound| inst.ms(Cycles(p.bound_cycles));
    let steps: Vec<String> = better
        .iter()
        .map(|p| format!("μ = {:.3} {:.4} ms", p.price, ms(p)))
        .collect();
    let phases = better
        .iter()
        .map(|p| Phase {
            what: format!(
                "segment relaxation reached {:.4} ms (μ = {:.3}) after",
                ms(p),
                p.price
            ),
            seconds: p.at_s,
        })
        .collect();
    (
        format!("segment relaxation bound by price: {}", steps.join(", ")),
        phases,
    )
}

/// The segment relaxation's bound for an instance too large for the backend, with what is
/// left of the time limit (60 s without one), recorded in `run.bounds` with a note.
fn whole_model_bound(
    inst: &Instance,
    opts: &ExactOptions,
    run: &mut Progress<'_>,
    share: f64,
) -> Result<()> {
    if opts.whole_model == WholeModelBound::Off {
        return Ok(());
    }
    // `share` of what is left: at most 0.9, leaving a tenth for the report, so a hard-limit
    // kill never loses the bound; half when the window search follows.
    let time_limit = run
        .remaining()
        .map_or(Duration::from_secs(60), |r| r.mul_f64(share));
    let seg_opts = SegmentOptions {
        lp_only: opts.whole_model == WholeModelBound::Lp,
        time_limit,
        ..SegmentOptions::default()
    };
    run.phase("segment relaxation");
    let (on, incumbent, roof) = (run.on, run.incumbent(), run.bound());
    let on_step = |step: &SegmentStep| {
        on(&ExactEvent::Segment {
            step: *step,
            incumbent,
            bound: step.best_bound.map_or(roof, |b| b.max(roof)),
        });
    };
    match segment_bound_with(inst, &seg_opts, &on_step)? {
        Some(b) => {
            run.notes.push(format!(
                "segment relaxation: {} segments of {} layer(s), {} distinct, {} each, best price μ = {:.3}",
                b.segments,
                b.layers_per_segment,
                b.distinct,
                if b.lp_only { "LP" } else { "MILP dual bound" },
                b.price
            ));
            let (note, steps) = improvements(inst, &b.prices);
            run.notes.push(note);
            run.phases.push(Phase {
                what: "segment relaxation".into(),
                seconds: b.seconds,
            });
            run.phases.extend(steps);
            run.bounds.segment_cycles = Some(Cycles(b.bound_cycles));
        }
        None if inst.layers().layers < 2 => run.notes.push(
            "segment relaxation: not applicable (no repeated layers to cut the chain at)".into(),
        ),
        None => run.notes.push(format!(
            "segment relaxation: no price solved within its share of the time limit ({}); raise --time-limit",
            if share < 0.9 { "half of it" } else { "nine tenths" }
        )),
    }
    Ok(())
}

/// The window search ([`crate::lns`]) from the best schedule so far, with nine tenths of
/// what is left of the limit (60 s without one); an improvement replaces `run.warm`.
fn window_search(inst: &Instance, run: &mut Progress<'_>) -> Result<Option<LnsSummary>> {
    let Some((input, _)) = run.warm.clone() else {
        return Ok(None);
    };
    let opts = LnsOptions {
        time_limit: run
            .remaining()
            .map_or(Duration::from_secs(60), |r| r.mul_f64(0.9)),
        lower_bound: Some(run.bound()),
        ..LnsOptions::default()
    };
    run.phase("window search");
    let (on, bound, started) = (run.on, run.bound(), run.started);
    let on_step = |step: &LnsStep| {
        run.offer(step.schedule, step.incumbent);
        on(&ExactEvent::Phase {
            what: format!(
                "window search: sweep {}, window {}/{} (operators {}..{}, loads may start {} stages earlier)",
                step.sweep,
                step.window,
                step.windows,
                step.ops.start,
                step.ops.end,
                step.earlier_stages
            ),
            incumbent: Some(step.incumbent),
            bound,
            elapsed_s: started.elapsed().as_secs_f64(),
        });
    };
    let found = improve(inst, &input, &opts, &on_step)?;
    let s = &found.summary;
    run.phases.push(Phase {
        what: "window search".into(),
        seconds: s.seconds,
    });
    // No wall-clock times in notes (the report's `search` has them).
    run.notes.push(format!(
        "window search ({}): {:.4} → {:.4} ms in {} window MILPs ({} proven within their node limit), {} sweep(s), {} improvement(s)",
        match s.stop {
            LnsStop::Converged => "converged",
            LnsStop::TimeLimit => "time limit",
            LnsStop::MeetsBound => "meets the bound",
        },
        inst.ms(s.input_cycles),
        inst.ms(s.makespan_cycles),
        s.windows_solved,
        s.windows_optimal,
        s.sweeps,
        s.improvements.len()
    ));
    for r in &s.disagreements {
        run.notes.push(format!("BUG: window search: {r}"));
    }
    for r in &s.rejected {
        run.notes.push(format!(
            "BUG: the simulator rejected a window search result: {r}"
        ));
    }
    if s.makespan_cycles.get() < run.warm.as_ref().map_or(f64::INFINITY, |w| w.1) {
        run.warm = Some((found.schedule, s.makespan_cycles.get()));
    }
    Ok(Some(found.summary))
}

/// Solves the fixed-order restriction first (its schedules are valid under any order
/// policy) with 40% of the time: a strong incumbent for the full model — the free-order
/// MILP finds good schedules slowly — and, when it meets the known lower bound, the optimum
/// outright. Returns the final result in that case; otherwise improves `run.warm`.
fn fixed_order_first(
    inst: &Instance,
    opts: &ExactOptions,
    known_bound: f64,
    run: &mut Progress<'_>,
) -> Result<Option<BackendResult>> {
    run.phase("fixed-order MILP");
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

/// The relative difference between a backend's objective and the simulator's makespan that
/// solver tolerances explain (HiGHS's feasibility tolerances are 1e-7 per row on rows of
/// ~1e6 cycles); above it the mismatch is reported as a bug.
pub const OBJECTIVE_TOLERANCE: f64 = 1e-5;

/// A line for whoever debugs the solver: printed on stderr when `ELK_OPT_DEBUG` is set.
fn debug_log(line: &str) {
    if std::env::var_os("ELK_OPT_DEBUG").is_some() {
        eprintln!("debug: {line}");
    }
}

/// Judges the backend's schedule, keeps the warm start when it is better, and assembles the
/// report with the best bound.
fn finish(
    inst: &Instance,
    opts: &ExactOptions,
    run: Progress<'_>,
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
    let roof_best = bounds.roofline_best().get();
    bounds.backend_cycles = result.bound.map(Cycles);
    let mut status = result.status;
    // Why it stopped is the backend's verdict, fixed before any promotion below: a solve cut
    // off by its limit whose schedule meets the bound is optimal, but it did stop at the limit.
    let stop = match result.status {
        ExactStatus::Optimal | ExactStatus::Infeasible => ExactStop::Completed,
        _ => ExactStop::TimeLimit,
    };
    let mut schedule = None;
    let mut makespan = None;
    if let Some(s) = result.schedule {
        let t = judge(inst, &s).map_err(|detail| SolverError::Rejected {
            backend: opts.backend.name(),
            detail,
        })?;
        if let Some(obj) = result.objective {
            let rel = (t - obj).abs() / obj.abs().max(1.0);
            let line = format!(
                "backend objective {obj:.4} cycles vs simulator {t:.4} (relative {rel:.2e})"
            );
            if rel > OBJECTIVE_TOLERANCE {
                notes.push(format!("BUG: {line}"));
                // The backend's proof is about its objective, not this schedule: no optimum is
                // claimed from it (its dual bound still stands).
                if status == ExactStatus::Optimal {
                    status = ExactStatus::Feasible;
                }
            } else if rel > 0.0 {
                debug_log(&line);
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
        let within_tolerance = makespan.is_some_and(|t| t - wt <= OBJECTIVE_TOLERANCE * t);
        if status == ExactStatus::Optimal && within_tolerance && makespan.is_some_and(|t| wt < t) {
            // The backend's optimum and the warm start differ by HiGHS's tolerances: the
            // optimum stands, and the (simulated) faster schedule is the one returned.
            debug_log(&format!(
                "warm start ({}) is {:.3e} cycles faster than the backend's optimum: within tolerance",
                ws.method,
                makespan.unwrap_or(0.0) - wt
            ));
            schedule = Some(ws);
            makespan = Some(wt);
            from_warm_start = true;
        } else if makespan.is_none_or(|t| wt < t) {
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
        (bounds.lp_cycles.map(Cycles::get), "LP relaxation"),
        (bounds.segment_cycles.map(Cycles::get), "segment relaxation"),
        (
            bounds.backend_cycles.map(Cycles::get),
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
    // A schedule that meets a proven lower bound is optimal, whichever backend (or the warm
    // start) found it and whether or not the backend finished its proof.
    if status == ExactStatus::Feasible
        && makespan.is_some_and(|t| meets_bound(Cycles(t), Cycles(lower)))
    {
        notes.push(format!("the makespan meets the {source} bound: optimal"));
        status = ExactStatus::Optimal;
    }
    // A proven optimum is its own bound (the dual bound may sit a tolerance below it).
    if status == ExactStatus::Optimal {
        if let Some(t) = makespan {
            lower = t;
            source = "optimum".into();
        }
    }
    let (makespan, lower) = (makespan.map(Cycles), Cycles(lower));
    let gap = makespan.and_then(|t| gap_pct(t, lower));
    if let Some(s) = schedule.as_mut() {
        s.lower_bound_cycles = Some(lower);
        s.status = status.schedule_status();
    }
    Ok(ExactReport {
        backend: opts.backend,
        status,
        stop,
        schedule,
        makespan_cycles: makespan,
        objective_cycles: result.objective.map(Cycles),
        lower_bound_cycles: lower,
        bound_source: source,
        bounds,
        gap_pct: gap,
        solve_s: started.elapsed().as_secs_f64(),
        model: result.model,
        from_warm_start,
        notes,
        phases,
        search: None,
    })
}

impl ExactReport {
    /// What is known without solving: `warm` (if any) judged by the simulator, and the
    /// roofline bound. Used when the worker is killed.
    pub fn without_solving(
        inst: &Instance,
        backend: Backend,
        warm: Option<Schedule>,
        stop: ExactStop,
        seconds: f64,
    ) -> ExactReport {
        let bounds = Bounds::roofline(inst);
        let lower = bounds.roofline_best();
        let makespan = warm
            .as_ref()
            .and_then(|s| elk_sim::judged_makespan(inst, s).ok());
        let mut status = if makespan.is_some() {
            ExactStatus::Feasible
        } else {
            ExactStatus::Unknown
        };
        if makespan.is_some_and(|t| meets_bound(t, lower)) {
            status = ExactStatus::Optimal;
        }
        let what = match stop {
            ExactStop::Killed if too_large(inst, backend) => format!(
                "the worker overran its time limit and was killed in the whole-model search (segment relaxation, window search; the model is too large for the {} backend)",
                backend.name()
            ),
            ExactStop::Killed => format!(
                "the {} backend overran its time limit and was killed",
                backend.name()
            ),
            _ => format!("the {} backend was not run", backend.name()),
        };
        ExactReport {
            backend,
            status,
            stop,
            from_warm_start: makespan.is_some(),
            schedule: warm.filter(|_| makespan.is_some()).map(|mut s| {
                s.lower_bound_cycles = Some(lower);
                s.status = status.schedule_status();
                s
            }),
            makespan_cycles: makespan,
            objective_cycles: None,
            lower_bound_cycles: lower,
            bound_source: "roofline".into(),
            bounds,
            gap_pct: makespan.and_then(|t| gap_pct(t, lower)),
            solve_s: seconds,
            model: ModelStats::default(),
            notes: vec![what],
            phases: if stop == ExactStop::Killed {
                vec![Phase {
                    what: "killed worker".into(),
                    seconds,
                }]
            } else {
                Vec::new()
            },
            search: None,
        }
    }

    /// The report of a worker killed at its hard limit: the better of the warm start and the
    /// last incumbent its progress told (each judged again here; one the simulator rejects
    /// is not used), and the best of the roofline and the bounds it told.
    pub fn after_kill(
        inst: &Instance,
        backend: Backend,
        warm: Option<Schedule>,
        told: crate::worker::Told,
        seconds: f64,
    ) -> ExactReport {
        let judged = |s: &Schedule| elk_sim::judged_makespan(inst, s).ok();
        let warm_t = warm.as_ref().and_then(judged);
        let found = told
            .incumbent
            .and_then(|s| judged(&s).map(|t| (s, t)))
            .filter(|(_, t)| warm_t.is_none_or(|w| *t < w));
        let from_progress = found.is_some();
        let start = found.map(|(s, _)| *s).or(warm);
        let mut report =
            ExactReport::without_solving(inst, backend, start, ExactStop::Killed, seconds);
        if from_progress {
            report.from_warm_start = false;
            report
                .notes
                .push("the schedule is the last incumbent the worker told before the kill".into());
        }
        if let Some(b) = told.bound.filter(|b| *b > report.lower_bound_cycles) {
            report.lower_bound_cycles = b;
            report.bound_source = "the best bound the worker told before the kill".into();
            report.gap_pct = report.makespan_cycles.and_then(|t| gap_pct(t, b));
            if report.makespan_cycles.is_some_and(|t| meets_bound(t, b)) {
                report.status = ExactStatus::Optimal;
            }
            let status = report.status;
            if let Some(s) = report.schedule.as_mut() {
                s.lower_bound_cycles = Some(b);
                s.status = status.schedule_status();
            }
        }
        report
    }

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
            _ => Outcome::Unknown {
                reason: match self.stop {
                    ExactStop::NotAttempted => "model too large to attempt".into(),
                    _ => format!("{}: no schedule within the time limit", self.backend.name()),
                },
            },
        };
        let stop = match self.stop {
            ExactStop::Completed => StopReason::Completed,
            ExactStop::TimeLimit | ExactStop::Killed => StopReason::TimeLimit,
            ExactStop::NotAttempted => StopReason::NotAttempted,
            ExactStop::WarmStartMeetsBound => StopReason::Completed,
            ExactStop::WindowSearch => match self.search.as_ref().map(|s| s.stop) {
                Some(LnsStop::TimeLimit) => StopReason::TimeLimit,
                _ => StopReason::Completed,
            },
        };
        let mut notes = self.notes.clone();
        notes.push(format!(
            "lower bound {} ({})",
            self.lower_bound_cycles, self.bound_source
        ));
        Solved {
            outcome,
            stop,
            notes,
        }
    }

    /// The reference every heuristic's gap is measured against: the proven optimum, or the
    /// best lower bound. `certified_optimum` says which. Either way the gap is certified (an
    /// upper bound on the true gap when the reference is a bound).
    pub fn gap_reference(&self) -> GapReference {
        match (self.status, self.makespan_cycles) {
            (ExactStatus::Optimal, Some(t)) => GapReference {
                cycles: t,
                optimum: true,
            },
            _ => GapReference {
                cycles: self.lower_bound_cycles,
                optimum: false,
            },
        }
    }
}

/// What gaps are measured against.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GapReference {
    /// The proven optimum or the lower bound.
    pub cycles: Cycles,
    /// It is the optimum (else a lower bound: gaps are upper bounds on the true gaps).
    pub optimum: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use elk_stage::instance::OpOption;
    use elk_stage::units::Bytes;

    /// Two operators; the second's load fits under the first.
    fn two_ops() -> Instance {
        Instance::builder("tolerance", Bytes(100), 1e9)
            .op(
                "a",
                Cycles(50.0),
                vec![OpOption::new(10, 40, 80.0, 0.0, 0.0)],
            )
            .op(
                "b",
                Cycles(50.0),
                vec![OpOption::new(10, 20, 90.0, 0.0, 0.0)],
            )
            .build()
            .unwrap()
    }

    fn progress(warm: Option<(Schedule, f64)>) -> Progress<'static> {
        Progress::new(&quiet, Instant::now(), None, Bounds::default(), warm)
    }

    fn optimum(inst: &Instance) -> (Schedule, f64) {
        let r = solve_exact(inst, &ExactOptions::default()).unwrap();
        let s = r.schedule.unwrap();
        let t = judge(inst, &s).unwrap();
        (s, t)
    }

    #[test]
    fn progress_names_each_phase_in_order_and_changes_nothing() {
        let mut inst = two_ops();
        inst.load_order = LoadOrder::Named(NamedOrder::Free);
        let opts = ExactOptions {
            lp_bound: true,
            ..ExactOptions::default()
        };
        let events = std::cell::RefCell::new(Vec::new());
        let watched =
            solve_exact_with(&inst, &opts, &|e| events.borrow_mut().push(e.clone())).unwrap();
        let plain = solve_exact(&inst, &opts).unwrap();
        assert_eq!(watched.makespan_cycles, plain.makespan_cycles);
        assert_eq!(watched.lower_bound_cycles, plain.lower_bound_cycles);
        assert_eq!(watched.status, plain.status);
        assert_eq!(watched.notes, plain.notes);
        let phases: Vec<String> = events
            .into_inner()
            .into_iter()
            .map(|e| match e {
                ExactEvent::Phase {
                    what,
                    incumbent,
                    bound,
                    ..
                } => {
                    // What is known at a phase's start is never better than the end result.
                    assert!(bound <= plain.lower_bound_cycles, "{what}: bound {bound:?}");
                    assert!(incumbent.is_none(), "{what}: no warm start was given");
                    what
                }
                other => panic!("no segment relaxation on two operators: {other:?}"),
            })
            .collect();
        // The fixed-order restriction meets the LP bound here: the free-order MILP never runs.
        assert_eq!(phases, ["LP relaxation", "fixed-order MILP"]);
        let line = ExactEvent::Phase {
            what: "MILP (HiGHS)".into(),
            incumbent: Some(Cycles(2e6)),
            bound: Cycles(1.6e6),
            elapsed_s: 1.0,
        }
        .describe(&inst);
        assert_eq!(
            line,
            "MILP (HiGHS) · incumbent 2.0000 ms, bound 1.6000 ms, gap ≤ 25.00 %"
        );
    }

    #[test]
    fn an_objective_within_solver_tolerance_is_no_bug() {
        let inst = two_ops();
        let (s, t) = optimum(&inst);
        for (rel, bug) in [(2e-6, false), (1e-3, true)] {
            let result = BackendResult {
                status: ExactStatus::Optimal,
                schedule: Some(s.clone()),
                objective: Some(t * (1.0 + rel)),
                bound: Some(t),
                model: ModelStats::default(),
            };
            let r = finish(&inst, &ExactOptions::default(), progress(None), result).unwrap();
            assert_eq!(
                r.notes.iter().any(|n| n.starts_with("BUG")),
                bug,
                "relative {rel}: {:?}",
                r.notes
            );
            assert_eq!(r.status, ExactStatus::Optimal);
        }
    }

    #[test]
    fn a_warm_start_faster_by_a_tolerance_leaves_the_optimum_optimal() {
        let inst = two_ops();
        let (s, t) = optimum(&inst);
        // The backend's schedule claims to be 1e-6 slower than the warm start (HiGHS's
        // tolerances): the proof stands.
        let mut slower = s.clone();
        slower.method = "exact-milp".into();
        let result = BackendResult {
            status: ExactStatus::Optimal,
            schedule: Some(slower),
            objective: Some(t),
            bound: Some(t),
            model: ModelStats::default(),
        };
        let warm = Some((s, t * (1.0 - 1e-6)));
        let r = finish(&inst, &ExactOptions::default(), progress(warm), result).unwrap();
        assert_eq!(r.status, ExactStatus::Optimal, "{:?}", r.notes);
        assert!(
            r.notes.iter().all(|n| !n.contains("beats")),
            "{:?}",
            r.notes
        );
        assert!(r.from_warm_start);
    }
}
