//! The last step of every exact solve, [`Solve::finish`]: judge the backend's schedule with
//! the simulator (an objective the simulator disagrees with is a bug, reported), keep the
//! warm start when it is better, take the best bound, promote a schedule that meets it to
//! optimal, and assemble the report.

use crate::bounds::BoundSource;
use crate::error::{Result, SolverError};
use crate::exact::backend::{judge, BackendResult, Cut};
use crate::exact::solve::Solve;
use crate::exact::{gap_pct, Backend, Bounds, ExactReport};
use crate::exact::{Note, NoteAbout, Work, WorkUnit};
use crate::tolerance::{meets_bound, OBJECTIVE_TOLERANCE};
use elk_stage::method::{StopReason, Verdict};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

/// A line for whoever debugs the solver: printed on stderr when `ELK_OPT_DEBUG` is set.
fn debug_log(line: &str) {
    if std::env::var_os("ELK_OPT_DEBUG").is_some() {
        eprintln!("debug: {line}");
    }
}

/// The schedule a solve returns, as it is settled step by step.
struct Settled {
    status: Verdict,
    schedule: Option<Schedule>,
    makespan: Option<f64>,
    from_warm_start: bool,
}

impl Solve<'_> {
    /// Judges the backend's schedule, keeps the warm start when it is better, and assembles
    /// the report with the best bound.
    pub(super) fn finish(self, result: BackendResult) -> Result<ExactReport> {
        let backend = self.opts.backend;
        let mut bounds = self.bounds.clone();
        bounds.backend_cycles = result.bound.map(Cycles);
        // Why it stopped is the backend's verdict, fixed before any promotion below: a solve
        // cut off by its limit whose schedule meets the bound is optimal, but it did stop at
        // the limit.
        let stop = match (result.status, result.cut) {
            (Verdict::Optimal | Verdict::Infeasible, _) => StopReason::Completed,
            (_, Some(Cut::Work | Cut::Iterations)) => StopReason::WorkLimit,
            _ => StopReason::TimeLimit,
        };
        let work = self.work(WorkUnit::Nodes);
        let (objective, model) = (result.objective, result.model);
        let mut notes = self.notes.clone();
        let mut settled = self.judge_backend(result, &mut notes)?;
        self.keep_better_warm_start(&mut settled, &mut notes)?;
        let (lower, source) = best_bound(&bounds, backend, &mut settled, &mut notes);
        let (makespan, lower) = (settled.makespan.map(Cycles), Cycles(lower));
        let status = settled.status;
        let mut schedule = settled.schedule;
        if let Some(s) = schedule.as_mut() {
            s.lower_bound_cycles = Some(lower);
            s.status = status.schedule_status();
        }
        Ok(ExactReport {
            backend,
            status,
            stop,
            schedule,
            makespan_cycles: makespan,
            objective_cycles: objective.map(Cycles),
            lower_bound_cycles: lower,
            bound_source: source,
            bounds,
            gap_pct: makespan.and_then(|t| gap_pct(t, lower)),
            solve_s: self.started.elapsed().as_secs_f64(),
            model,
            from_warm_start: settled.from_warm_start,
            notes,
            phases: self.phases,
            search: None,
            work,
        })
    }

    /// The work budget's account so far, counted in `unit` (`None`: no budget).
    pub(super) fn work(&self, unit: WorkUnit) -> Option<Work> {
        self.opts.work_limit.map(|limit| Work {
            limit,
            used: Some(self.work_used),
            unit,
            cut_by_time: self.time_cut,
            iterations_capped: self.iterations_capped,
        })
    }

    /// The backend's schedule judged by the simulator. An objective the simulator disagrees
    /// with beyond solver tolerances is a bug, noted, and the backend's proof no longer makes
    /// the schedule optimal (its dual bound still stands).
    fn judge_backend(&self, result: BackendResult, notes: &mut Vec<Note>) -> Result<Settled> {
        let mut settled = Settled {
            status: result.status,
            schedule: None,
            makespan: None,
            from_warm_start: false,
        };
        let Some(s) = result.schedule else {
            return Ok(settled);
        };
        let t = judge(self.inst, &s).map_err(|detail| SolverError::Rejected {
            backend: self.opts.backend.name(),
            detail,
        })?;
        if let Some(obj) = result.objective {
            let rel = (t - obj).abs() / obj.abs().max(1.0);
            let line = format!(
                "backend objective {obj:.4} cycles vs simulator {t:.4} (relative {rel:.2e})"
            );
            if rel > OBJECTIVE_TOLERANCE {
                notes.push(Note::about(NoteAbout::Bug, format!("BUG: {line}")));
                if settled.status == Verdict::Optimal {
                    settled.status = Verdict::Feasible;
                }
            } else if rel > 0.0 {
                debug_log(&line);
            }
        }
        settled.schedule = Some(s);
        settled.makespan = Some(t);
        Ok(settled)
    }

    /// Returns the warm start instead of the backend's schedule when it is faster. A backend
    /// that proved infeasibility despite a valid warm start is an error.
    fn keep_better_warm_start(&self, settled: &mut Settled, notes: &mut Vec<Note>) -> Result<()> {
        let Some((ws, wt)) = &self.warm else {
            return Ok(());
        };
        let (ws, wt) = (ws.clone(), *wt);
        if settled.status == Verdict::Infeasible {
            return Err(SolverError::Backend {
                backend: self.opts.backend.name(),
                detail: "proved infeasible although the warm start is a valid schedule".into(),
            });
        }
        let makespan = settled.makespan;
        let within_tolerance = makespan.is_some_and(|t| t - wt <= OBJECTIVE_TOLERANCE * t);
        if settled.status == Verdict::Optimal
            && within_tolerance
            && makespan.is_some_and(|t| wt < t)
        {
            // The backend's optimum and the warm start differ by HiGHS's tolerances: the
            // optimum stands, and the (simulated) faster schedule is the one returned.
            debug_log(&format!(
                "warm start ({}) is {:.3e} cycles faster than the backend's optimum: within tolerance",
                ws.method,
                makespan.unwrap_or(0.0) - wt
            ));
        } else if makespan.is_none_or(|t| wt < t) {
            if settled.status == Verdict::Optimal {
                notes.push(Note::general(format!(
                    "warm start ({}) beats the 'optimal' schedule by {:.3e} cycles",
                    ws.method,
                    makespan.unwrap_or(0.0) - wt
                )));
                settled.status = Verdict::Feasible;
            }
            if settled.status == Verdict::Unknown {
                settled.status = Verdict::Feasible;
            }
        } else {
            return Ok(());
        }
        settled.schedule = Some(ws);
        settled.makespan = Some(wt);
        settled.from_warm_start = self.warm_given;
        Ok(())
    }
}

/// The best lower bound and its name; a schedule that meets it is promoted to optimal
/// (whichever backend, or the warm start, found it, and whether or not the backend finished
/// its proof), and a proven optimum is its own bound (the dual bound may sit a tolerance
/// below it).
fn best_bound(
    bounds: &Bounds,
    backend: Backend,
    settled: &mut Settled,
    notes: &mut Vec<Note>,
) -> (f64, BoundSource) {
    let (lower, mut source) = bounds.best(backend);
    let mut lower = lower.get();
    if settled.status == Verdict::Feasible
        && settled
            .makespan
            .is_some_and(|t| meets_bound(Cycles(t), Cycles(lower)))
    {
        notes.push(Note::general(format!(
            "the makespan meets the {source} bound: optimal"
        )));
        settled.status = Verdict::Optimal;
    }
    if settled.status == Verdict::Optimal {
        if let Some(t) = settled.makespan {
            lower = t;
            source = BoundSource::Optimum;
        }
    }
    (lower, source)
}

#[cfg(test)]
mod tests {
    use crate::exact::backend::BackendResult;
    use crate::exact::event::quiet;
    use crate::exact::solve::tests::{optimum, two_ops};
    use crate::exact::solve::Solve;
    use crate::exact::{ExactOptions, ModelStats, NoteAbout};
    use elk_stage::method::Verdict;
    use std::time::Instant;

    #[test]
    fn an_objective_within_solver_tolerance_is_no_bug() {
        let inst = two_ops();
        let (s, t) = optimum(&inst);
        let opts = ExactOptions::default();
        for (rel, bug) in [(2e-6, false), (1e-3, true)] {
            let result = BackendResult {
                status: Verdict::Optimal,
                schedule: Some(s.clone()),
                objective: Some(t * (1.0 + rel)),
                bound: Some(t),
                model: ModelStats::default(),
                work: 0,
                cut: None,
            };
            let run = Solve::new(&inst, &opts, &quiet, Instant::now(), None);
            let r = run.finish(result).unwrap();
            assert_eq!(
                r.notes.iter().any(|n| n.about == NoteAbout::Bug),
                bug,
                "relative {rel}: {:?}",
                r.notes
            );
            assert_eq!(r.status, Verdict::Optimal);
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
            status: Verdict::Optimal,
            schedule: Some(slower),
            objective: Some(t),
            bound: Some(t),
            model: ModelStats::default(),
            work: 0,
            cut: None,
        };
        let opts = ExactOptions::default();
        let warm = Some((s, t * (1.0 - 1e-6)));
        let run = Solve::new(&inst, &opts, &quiet, Instant::now(), warm);
        let r = run.finish(result).unwrap();
        assert_eq!(r.status, Verdict::Optimal, "{:?}", r.notes);
        assert!(
            r.notes.iter().all(|n| !n.text.contains("beats")),
            "{:?}",
            r.notes
        );
        assert!(r.from_warm_start);
    }
}
