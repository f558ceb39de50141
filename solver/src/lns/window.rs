//! One neighbourhood of the window search: the re-timing LP of [`crate::retime()`] over the
//! whole model, with the options of a window of consecutive operators set free (binaries).
//!
//! Kept from the incumbent: the load order, every option outside the window, and each load's
//! start stage as the earliest it may work ([`LoadSpans`](crate::retime::LoadSpans)). Free:
//! the window's options and every load's work within its span. The model, for window
//! operators i with candidate options o (the Pareto-kept ones plus the incumbent's):
//!
//! - `x[i][o]` ∈ {0,1}, Σ_o x = 1; stage i + 1 has `d ≥ Σ exec_o x`, `d ≥ Σ comm_o x + Σ ν w`;
//! - a window load's work is split by the ν of its options, each part at most
//!   H·(Σ of that ν's x), so the NoC term stays linear;
//! - memory rows for every stage where a window operator runs or a window load is resident
//!   (from its input start to its own stage): hot and cold bytes linear in x, everything
//!   else a constant. Every other stage's memory is the input's or less: no load starts
//!   earlier than in the input and no option outside the window changes.
//!
//! The incumbent is a feasible point (it is passed as HiGHS's starting solution), so the
//! optimum is never worse; the simulator judges the result before it is kept.
//!
//! The model is built in `window/build.rs`, one method per family of columns and rows; this
//! file solves it and reads the schedule back.

mod build;

pub(crate) use build::build;

use crate::error::{Result, SolverError};
use crate::milp::reports_its_columns;
use crate::retime::clean_work;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use highs::{Col, HighsModelStatus, RowProblem, Sense};

/// Work below this fraction of its load's H in a window MILP's solution is integrality
/// tolerance (HiGHS's `mip_feasibility_tolerance` is 1e-6), not a decision.
const MIP_DUST: f64 = 1e-5;

/// A window model, ready to solve.
pub(crate) struct WindowModel {
    problem: RowProblem,
    /// The incumbent as a column vector (HiGHS's starting solution).
    warm: Vec<f64>,
    /// Per window operator: (operator, [(option, column)]).
    x: Vec<(usize, Vec<(usize, Col)>)>,
    /// Per load-work column: (operator, stage).
    w: Vec<(usize, usize, Col)>,
    /// The first columns are the n + 1 stage durations.
    durations: usize,
    /// Model size: columns, of which binary, rows.
    pub columns: usize,
    pub binaries: usize,
    pub rows: usize,
}

/// What solving a window gave.
pub(crate) struct WindowResult {
    /// The solution as a schedule (not yet judged), if HiGHS has one better than the start.
    pub schedule: Option<Schedule>,
    /// HiGHS proved the window's optimum.
    pub optimal: bool,
}

impl WindowModel {
    /// One HiGHS run, from the incumbent when `warm`.
    fn run(&self, warm: bool, time_limit: f64, max_nodes: i32) -> Result<highs::SolvedModel> {
        let backend = |detail: String| SolverError::Backend {
            backend: "window search",
            detail,
        };
        let mut model = self
            .problem
            .clone()
            .try_optimise(Sense::Minimise)
            .map_err(|e| backend(format!("building the model: {e:?}")))?;
        model.make_quiet();
        let options: [(&str, f64); 3] = [
            ("time_limit", time_limit.max(0.01)),
            ("mip_rel_gap", 1e-6),
            ("mip_abs_gap", 1e-6),
        ];
        for (key, v) in options {
            model
                .try_set_option(key, v)
                .map_err(|e| backend(format!("option {key}: {e:?}")))?;
        }
        model
            .try_set_option("threads", 1)
            .and_then(|_| model.try_set_option("random_seed", 0))
            .and_then(|_| model.try_set_option("mip_max_nodes", max_nodes))
            .map_err(|e| backend(format!("options: {e:?}")))?;
        if warm {
            model
                .try_set_solution(Some(&self.warm), None, None, None)
                .map_err(|e| backend(format!("starting solution: {e:?}")))?;
        }
        model
            .try_solve()
            .map_err(|e| backend(format!("solve: {e:?}")))
    }

    /// Σ d of a solution: the makespan its columns claim.
    fn claimed(&self, values: &[f64]) -> f64 {
        values[..self.durations].iter().sum()
    }

    /// Solves within `time_limit` seconds and at most `max_nodes` branch-and-bound nodes
    /// (the node limit makes the result independent of the machine's speed), on one thread.
    ///
    /// HiGHS (1.16, through the `highs` crate) can report an optimum below the solution it
    /// returns when it started from ours (seen on small chains: objective 1296, columns summing
    /// to the starting 1325.75). Such a run is repeated without the starting solution, and
    /// the objective that is reported is always Σ d of the columns returned.
    pub(crate) fn solve(
        self,
        inst: &Instance,
        s: &Schedule,
        method: &str,
        time_limit: f64,
        max_nodes: i32,
    ) -> Result<WindowResult> {
        let started = std::time::Instant::now();
        let mut solved = self.run(true, time_limit, max_nodes)?;
        let consistent = |m: &highs::SolvedModel| reports_its_columns(m, 0..self.durations);
        if !consistent(&solved) {
            let left = time_limit - started.elapsed().as_secs_f64();
            let again = self.run(false, left, max_nodes)?;
            if again.primal_solution_status() == highs::HighsSolutionStatus::Feasible {
                solved = again;
            }
        }
        let optimal = solved.status() == HighsModelStatus::Optimal && consistent(&solved);
        if solved.primal_solution_status() != highs::HighsSolutionStatus::Feasible {
            return Ok(WindowResult {
                schedule: None,
                optimal,
            });
        }
        let values = solved.get_solution().columns().to_vec();
        let mut options = s.options.clone();
        for (i, xs) in &self.x {
            if let Some(&(o, _)) = xs
                .iter()
                .max_by(|a, b| values[a.1.index()].total_cmp(&values[b.1.index()]))
            {
                options[*i] = o;
            }
        }
        // HiGHS's integrality tolerance lets a start binary sit at 1e-6 while its load does
        // up to H·1e-6 of work "before it started" in the model; the simulator would see that
        // piece start the load (and break the order rule). Such pieces are dropped here and
        // their work goes to the load's largest piece (clean_work).
        let pieces = self.w.iter().map(|&(j, k, c)| {
            let v = values[c.index()];
            let dust = v < MIP_DUST * inst.ops[j].hbm_cycles.get();
            (j, k, if dust { 0.0 } else { v })
        });
        let work = clean_work(inst, pieces);
        let schedule = Schedule::new(
            inst,
            method,
            options,
            s.load_order.clone(),
            work,
            Cycles(self.claimed(&values)),
        );
        Ok(WindowResult {
            schedule: Some(schedule),
            optimal,
        })
    }
}
