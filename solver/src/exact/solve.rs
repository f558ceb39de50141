//! One exact solve held as a state type, [`Solve`], as `heuristics/src/timeline.rs` holds
//! Elk's: what is known so far (bounds, the best schedule, notes, timed phases) and one
//! method per step of SPEC §5's road — the LP relaxation, the warm start against the known
//! bound, the fixed-order restriction, the backend — ending in [`Solve::finish`]
//! (`finish.rs`). Models too large for the backend take the whole-model road instead
//! (`whole_model.rs`).

use crate::error::{Result, SolverError};
use crate::exact::backend::{self, judge, Allowance, BackendResult, Cut};
use crate::exact::options::max_size;
use crate::exact::{too_large, Backend, Bounds, ExactEvent, ExactOptions, ExactReport, Phase};
use crate::exact::{Note, NoteAbout};
use crate::milp::{lp_relaxation, LpMiss};
use crate::tolerance::meets_bound;
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::{StopReason, Verdict};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use highs_watch::MipProgress;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// How often a MILP's moving bound is told at most ([`Solve::milp_watch`]).
const MILP_TELL_EVERY: Duration = Duration::from_millis(250);

/// Solves `inst` in this process (the backends' own time limits only): what
/// [`crate::Exact`] runs, here or in a worker process killed at a hard limit.
pub(crate) fn solve(
    inst: &Instance,
    opts: &ExactOptions,
    progress: &dyn Fn(&ExactEvent),
) -> Result<ExactReport> {
    if opts.work_limit.is_some() && opts.backend == Backend::Smt && !too_large(inst, opts.backend) {
        return Err(SolverError::Input(NO_SMT_BUDGET.into()));
    }
    let mut run = Solve::start(inst, opts, progress)?;
    if too_large(inst, opts.backend) {
        return run.whole_model();
    }
    // A warm start that already meets the roofline (or a bound the caller gave) needs no LP.
    let lp_options = if opts.lp_bound && !run.warm_start_meets_bound() {
        run.lp_relaxation()?
    } else {
        None
    };
    if run.warm_start_meets_bound() {
        // Nothing a backend finds can beat it: `finish` promotes the warm start to optimal.
        return run
            .finish(BackendResult::nothing())
            .map(|r| r.stopped(StopReason::WarmStartMeetsBound));
    }
    if let Some(options) = lp_options {
        if run.queue_lp_options(options)? {
            return run
                .finish(BackendResult::nothing())
                .map(|r| r.stopped(StopReason::LpOptionsMeetBound));
        }
    }
    if opts.backend == Backend::Milp && inst.load_order != LoadOrder::Named(NamedOrder::Fixed) {
        if let Some(done) = run.fixed_order_first()? {
            return run.finish(done);
        }
    }
    let result = run.backend()?;
    run.finish(result)
}

/// Why `--work-limit` is refused with the SMT backend: z3 has no work budget here yet (its
/// `rlimit` would be one; docs/exact.md, "Reproducible certificates").
pub const NO_SMT_BUDGET: &str = "--work-limit with --backend smt: the SMT backend has no work budget yet (only the MILP's branch-and-bound nodes and the window search's MILPs are counted); use --backend milp";

/// The note that names the coupled segment relaxation's bound (given or solved): the same
/// words either way, so a bound read from a cache prints what solving it would.
pub(crate) fn coupled_note(inst: &Instance, coupled: Cycles) -> Note {
    Note::about(
        NoteAbout::SegmentRelaxation,
        format!(
            "segment relaxation coupled by ν (one LP, the prices' constraints kept): {:.4} ms",
            inst.ms(coupled)
        ),
    )
}

/// What a solve has gathered so far.
pub(crate) struct Solve<'a> {
    pub(super) inst: &'a Instance,
    pub(super) opts: &'a ExactOptions,
    /// Told of each phase as it starts.
    pub(super) on: &'a dyn Fn(&ExactEvent),
    pub(super) started: Instant,
    pub(super) bounds: Bounds,
    /// The best valid schedule known before the backend's own (and its makespan).
    pub(super) warm: Option<(Schedule, f64)>,
    /// `warm` is the schedule the caller gave (not one this solve found: the fixed-order
    /// restriction's, the LP relaxation's options queued).
    pub(super) warm_given: bool,
    pub(super) notes: Vec<Note>,
    pub(super) phases: Vec<Phase>,
    /// Work units used so far ([`crate::exact::Work`]).
    pub(super) work_used: u64,
    /// A time limit cut some phase short (under a work budget: the result is not
    /// reproducible).
    pub(super) time_cut: bool,
    /// The work budget's simplex-iteration cap stopped a MILP (its root, typically).
    pub(super) iterations_capped: bool,
    /// The makespan of the last [`ExactEvent::Incumbent`] told (the warm start's at first).
    told: Cell<f64>,
}

impl<'a> Solve<'a> {
    /// A solve of `inst` that starts now: the warm start judged by the simulator (an invalid
    /// one is the caller's error) and the roofline bounds.
    pub(super) fn start(
        inst: &'a Instance,
        opts: &'a ExactOptions,
        on: &'a dyn Fn(&ExactEvent),
    ) -> Result<Solve<'a>> {
        let started = Instant::now();
        let warm = match &opts.warm_start {
            Some(s) => {
                let t = judge(inst, s)
                    .map_err(|v| SolverError::Input(format!("warm start ({}): {v}", s.method)))?;
                Some((s.clone(), t))
            }
            None => None,
        };
        Ok(Solve::new(inst, opts, on, started, warm))
    }

    /// A solve with this state (the tests build one around a given warm start).
    pub(super) fn new(
        inst: &'a Instance,
        opts: &'a ExactOptions,
        on: &'a dyn Fn(&ExactEvent),
        started: Instant,
        warm: Option<(Schedule, f64)>,
    ) -> Solve<'a> {
        Solve {
            inst,
            opts,
            on,
            started,
            bounds: Bounds {
                segment_cycles: opts.coupled.known(),
                stage_cycles: opts.stage,
                ..Bounds::roofline(inst)
            },
            told: Cell::new(warm.as_ref().map_or(f64::INFINITY, |w| w.1)),
            warm_given: warm.is_some(),
            warm,
            notes: opts
                .coupled
                .known()
                .map(|c| coupled_note(inst, c))
                .into_iter()
                .collect(),
            phases: Vec::new(),
            work_used: 0,
            time_cut: false,
            iterations_capped: false,
        }
    }

    /// Tells the callback of `s` (makespan `t`, judged) when it beats every schedule told.
    pub(super) fn offer(&self, s: &Schedule, t: Cycles) {
        if t.get() < self.told.get() {
            self.told.set(t.get());
            (self.on)(&ExactEvent::Incumbent {
                schedule: Box::new(s.clone()),
                bound: self.bound(),
                elapsed_s: self.started.elapsed().as_secs_f64(),
            });
        }
    }

    /// The share of what is left of the time limit a phase gets: `share` of it, or all of it
    /// under a work budget, where work splits the phases and time is only a hard stop.
    pub(super) fn time_share(&self, share: f64) -> Option<Duration> {
        let left = self.remaining();
        match self.opts.work_limit {
            Some(_) => left,
            None => left.map(|l| l.mul_f64(share)),
        }
    }

    /// The work units left of the budget (`None`: no budget).
    pub(super) fn work_left(&self) -> Option<u64> {
        self.opts
            .work_limit
            .map(|l| crate::exact::work::left(l, self.work_used))
    }

    /// What is left of the time limit.
    pub(super) fn remaining(&self) -> Option<Duration> {
        self.opts
            .time_limit
            .map(|l| l.saturating_sub(self.started.elapsed()))
    }

    /// The best schedule's makespan so far.
    pub(super) fn incumbent(&self) -> Option<Cycles> {
        self.warm.as_ref().map(|w| Cycles(w.1))
    }

    /// The best lower bound so far.
    pub(super) fn bound(&self) -> Cycles {
        let b = &self.bounds;
        [b.lp_cycles, b.segment_cycles, b.stage_cycles]
            .into_iter()
            .flatten()
            .fold(b.roofline_best(), Cycles::max)
    }

    /// Tells the callback that `what` starts (and of the incumbent, when it is new).
    pub(super) fn phase(&self, what: &str) {
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

    /// What tells the callback HiGHS's progress in the MILP phase `what`: its incumbent
    /// against the solve's best, its dual bound against the solve's, as they move: a new
    /// incumbent at once, a moved bound at most every [`MILP_TELL_EVERY`] (HiGHS's bound may
    /// move at every node, and a worker sends each event down its pipe).
    fn milp_watch(&self, what: &str) -> impl Fn(&MipProgress) + 'a {
        let (on, started, what) = (self.on, self.started, what.to_string());
        let (incumbent, bound) = (self.incumbent(), self.bound());
        let last: Cell<Option<(Instant, u64)>> = Cell::new(None);
        move |p: &MipProgress| {
            let theirs = |x: f64| x.is_finite().then_some(Cycles(x));
            let told = last.get();
            let new_incumbent = told.is_none_or(|(_, b)| b != p.primal_bound.to_bits());
            if !new_incumbent && told.is_some_and(|(t, _)| t.elapsed() < MILP_TELL_EVERY) {
                return;
            }
            last.set(Some((Instant::now(), p.primal_bound.to_bits())));
            on(&ExactEvent::Milp {
                what: what.clone(),
                incumbent: [incumbent, theirs(p.primal_bound)]
                    .into_iter()
                    .flatten()
                    .reduce(Cycles::min),
                bound: theirs(p.dual_bound).map_or(bound, |b| bound.max(b)),
                nodes: u64::try_from(p.nodes).unwrap_or(0),
                elapsed_s: started.elapsed().as_secs_f64(),
            });
        }
    }

    /// The LP relaxation's bound, with a quarter of the time limit (under a work budget, all
    /// of it: one LP is the same work on every machine, and only the hard stop may cut it),
    /// and the options it weighs most (`None` when it was not solved).
    fn lp_relaxation(&mut self) -> Result<Option<Vec<usize>>> {
        self.phase("LP relaxation");
        let lp_limit = match self.opts.work_limit {
            Some(_) => self.opts.time_limit,
            None => self.opts.time_limit.map(|l| l / 4),
        };
        match lp_relaxation(self.inst, self.opts.linearisation, lp_limit)? {
            Ok(r) => {
                self.bounds.lp_cycles = Some(Cycles(r.optimum));
                return Ok(Some(r.options));
            }
            Err(LpMiss::Stopped) => {
                self.time_cut = true;
                self.notes.push(Note::general(
                    "LP relaxation not solved within its time share",
                ))
            }
            // Infeasible (so is every schedule: the backend says so) or unbounded; either
            // way the same on every machine, and no bound.
            Err(LpMiss::NoOptimum) => {}
        }
        Ok(None)
    }

    /// The warm start meets the bound known before any model is built.
    pub(super) fn warm_start_meets_bound(&self) -> bool {
        self.warm
            .as_ref()
            .is_some_and(|w| meets_bound(Cycles(w.1), self.bound()))
    }

    /// Solves the fixed-order restriction first (its schedules are valid under any order
    /// policy) with 40% of the time: a strong incumbent for the full model — the free-order
    /// MILP finds good schedules slowly — and, when it meets the known lower bound, the
    /// optimum outright. Returns the final result in that case; otherwise improves the warm
    /// start.
    fn fixed_order_first(&mut self) -> Result<Option<BackendResult>> {
        let known_bound = self.bound().get();
        self.phase("fixed-order MILP");
        let mut fixed = self.inst.clone();
        fixed.load_order = LoadOrder::Named(NamedOrder::Fixed);
        let allowance = Allowance {
            time: self.time_share(0.4),
            // 40 % of the budget, at least one node; what it leaves goes to the MILP.
            work: self.work_left().map(|w| (w * 2 / 5).max(1)),
        };
        let valid_warm = self
            .warm
            .as_ref()
            .filter(|(s, _)| elk_sim::validate(&fixed, s).is_empty())
            .map(|w| w.0.clone());
        let watch = self.milp_watch("fixed-order MILP");
        let restricted = backend::milp_backend(
            &fixed,
            self.opts,
            allowance,
            valid_warm.as_ref(),
            &mut self.phases,
            &watch,
        )?;
        self.work_used += restricted.work;
        self.time_cut |= restricted.cut == Some(Cut::Time);
        self.iterations_capped |= restricted.cut == Some(Cut::Iterations);
        let Some(mut s) = restricted.schedule else {
            self.notes
                .push(Note::general("fixed-order restriction: no schedule"));
            return Ok(None);
        };
        let t = judge(self.inst, &s).map_err(|detail| SolverError::Rejected {
            backend: "milp",
            detail,
        })?;
        self.notes.push(Note::general(format!(
            "fixed-order restriction: {t:.1} cycles ({})",
            match restricted.cut {
                _ if restricted.status == Verdict::Optimal => "optimal for fixed order",
                Some(Cut::Work) => "its share of the work budget",
                Some(Cut::Iterations) => "its share of the work budget's simplex iterations",
                _ => "time limit",
            }
        )));
        if self.warm.as_ref().is_none_or(|(_, wt)| t < *wt) {
            s.method = Backend::Milp.method_name().into();
            self.warm = Some((s.clone(), t));
            self.warm_given = false;
        }
        if t <= known_bound * (1.0 + crate::milp::REL_GAP) {
            self.notes.push(Note::general(
                "the fixed-order optimum meets the lower bound: optimal for the free order too",
            ));
            return Ok(Some(BackendResult {
                status: Verdict::Optimal,
                schedule: Some(s),
                objective: restricted.objective,
                bound: Some(known_bound),
                model: restricted.model,
                work: 0,
                cut: None,
            }));
        }
        Ok(None)
    }

    /// The backend on the whole instance, from the best schedule so far, with what is left of
    /// the time limit and of the work budget (none left: it does not run, and the solve
    /// stops on work).
    fn backend(&mut self) -> Result<BackendResult> {
        if self.work_left() == Some(0) {
            return Ok(BackendResult {
                cut: Some(Cut::Work),
                ..BackendResult::nothing()
            });
        }
        self.phase(self.opts.backend.phase());
        let warm = self.warm.as_ref().map(|w| w.0.clone());
        let allowance = Allowance {
            time: self.remaining(),
            work: self.work_left(),
        };
        let watch = self.milp_watch(self.opts.backend.phase());
        let result = backend::run(
            self.inst,
            self.opts,
            allowance,
            warm.as_ref(),
            &mut self.phases,
            &watch,
        )?;
        self.work_used += result.work;
        self.time_cut |= result.cut == Some(Cut::Time);
        self.iterations_capped |= result.cut == Some(Cut::Iterations);
        Ok(result)
    }

    /// The note that says why no model is built (`whole_model.rs` goes on from there).
    pub(super) fn too_large_note(&mut self) {
        let (size, max) = (
            crate::milp::estimated_size(self.inst),
            max_size(self.opts.backend),
        );
        self.notes.push(Note::general(format!(
            "model too large to attempt (≈ {size} rows and columns, limit {max}): cut it to fewer operators or set a preload window (--layers/--ops and --window on a built instance; for an instance file, its `preload_window`, or rebuild it with `elk-opt instance … --layers A..B --window W -o FILE`); reporting the best schedule given and the best bound that needs no model (roofline, segment relaxation)"
        )));
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::exact::event::quiet;
    use elk_stage::instance::OpOption;
    use elk_stage::units::Bytes;

    /// Two operators; the second's load fits under the first.
    pub(in crate::exact) fn two_ops() -> Instance {
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

    /// The optimum of `inst` and its judged makespan.
    pub(in crate::exact) fn optimum(inst: &Instance) -> (Schedule, f64) {
        let r = solve(inst, &ExactOptions::default(), &quiet).unwrap();
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
        let watched = solve(&inst, &opts, &|e| events.borrow_mut().push(e.clone())).unwrap();
        let plain = solve(&inst, &opts, &quiet).unwrap();
        assert_eq!(watched.makespan_cycles, plain.makespan_cycles);
        assert_eq!(watched.lower_bound_cycles, plain.lower_bound_cycles);
        assert_eq!(watched.status, plain.status);
        assert_eq!(watched.notes, plain.notes);
        let phases: Vec<String> = events
            .into_inner()
            .into_iter()
            .filter_map(|e| match e {
                ExactEvent::Phase {
                    what,
                    incumbent,
                    bound,
                    ..
                } => {
                    // What is known at a phase's start is never better than the end result.
                    assert!(bound <= plain.lower_bound_cycles, "{what}: bound {bound:?}");
                    assert!(incumbent.is_none(), "{what}: no warm start was given");
                    Some(what)
                }
                // HiGHS's progress inside a phase: never past the end result either.
                ExactEvent::Milp {
                    what,
                    incumbent,
                    bound,
                    ..
                } => {
                    let tolerance = 1.0 + crate::milp::REL_GAP;
                    assert!(
                        bound.get() <= plain.lower_bound_cycles.get() * tolerance,
                        "{what}"
                    );
                    let best = plain.makespan_cycles.map_or(0.0, Cycles::get);
                    assert!(
                        incumbent.is_none_or(|t| t.get() * tolerance >= best),
                        "{what}"
                    );
                    None
                }
                other => panic!("no segment relaxation on two operators: {other:?}"),
            })
            .collect();
        // The LP relaxation's options, queued, meet its bound here: no MILP is built.
        assert_eq!(phases, ["LP relaxation", "LP relaxation's options, queued"]);
        assert_eq!(plain.stop, StopReason::LpOptionsMeetBound);
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
}
