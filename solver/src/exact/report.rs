//! What an exact solve reports: the verdict, the schedule judged by the simulator, every
//! bound computed and the best of them, the model's size and the time of each phase; and
//! the same as a [`Solved`], the one result type every method returns.

use crate::bounds::{roofline, BoundSource, Roofline};
use crate::exact::Backend;
use crate::exact::Note;
use crate::exact::Work;
use crate::lns::LnsSummary;
use crate::tolerance::MEETS_BOUND;
use elk_stage::instance::Instance;
use elk_stage::method::{Outcome, Solved, StopReason, Verdict};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};

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
    /// The stage relaxation's bound, when the caller gave it
    /// ([`crate::exact::ExactOptions::stage`]).
    #[serde(default)]
    pub stage_cycles: Option<Cycles>,
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

    /// The strongest bound and what proved it, `backend_cycles` being `backend`'s dual bound
    /// (on a tie the cheaper proof is named: roofline, stage relaxation, LP relaxation,
    /// segment relaxation).
    pub fn best(&self, backend: Backend) -> (Cycles, BoundSource) {
        let mut best = (self.roofline_best(), BoundSource::Roofline);
        for (v, source) in [
            (self.stage_cycles, BoundSource::StageRelaxation),
            (self.lp_cycles, BoundSource::LpRelaxation),
            (self.segment_cycles, BoundSource::SegmentRelaxation),
            (self.backend_cycles, backend.dual_bound()),
        ] {
            if let Some(v) = v.filter(|&v| v > best.0) {
                best = (v, source);
            }
        }
        best
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
    pub status: Verdict,
    /// Why it stopped.
    #[serde(default)]
    pub stop: StopReason,
    /// The schedule (judged by the simulator).
    pub schedule: Option<Schedule>,
    /// The simulator's makespan of `schedule`.
    pub makespan_cycles: Option<Cycles>,
    /// The backend's own objective (equals the makespan up to 1e-6 relative).
    pub objective_cycles: Option<Cycles>,
    /// The best certified lower bound.
    pub lower_bound_cycles: Cycles,
    /// Which bound that is.
    pub bound_source: BoundSource,
    /// All bounds computed.
    pub bounds: Bounds,
    /// 100·(makespan − bound)/bound.
    pub gap_pct: Option<f64>,
    /// Wall-clock seconds, whole solve.
    pub solve_s: f64,
    /// Model size.
    pub model: ModelStats,
    /// The schedule returned is the warm start the caller gave (the backend found nothing
    /// better), not one the solve found itself (the fixed-order restriction's, the LP
    /// relaxation's options queued, the window search's).
    pub from_warm_start: bool,
    /// Facts worth reporting (no wall-clock times: those are in `phases`).
    pub notes: Vec<Note>,
    /// Wall-clock seconds of each phase.
    pub phases: Vec<Phase>,
    /// What the window search did (models too large for the backend).
    #[serde(default)]
    pub search: Option<LnsSummary>,
    /// The work budget and what it bought (only under `--work-limit`).
    #[serde(default)]
    pub work: Option<Work>,
}

/// A timed phase of a solve.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Phase {
    /// What ran.
    pub what: String,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// 100·(t − bound)/bound. A makespan below the bound by no more than [`MEETS_BOUND`] (the
/// simulator's sums against the bound's, in another order) is 0, not "-0.00"; a larger
/// negative gap stays, and shows a defect.
pub fn gap_pct(t: Cycles, bound: Cycles) -> Option<f64> {
    let rounding = -100.0 * MEETS_BOUND..0.0;
    (bound > Cycles::ZERO)
        .then(|| 100.0 * ((t - bound) / bound))
        .map(|g| if rounding.contains(&g) { 0.0 } else { g })
}

impl ExactReport {
    /// The report with this stop reason.
    pub(crate) fn stopped(mut self, stop: StopReason) -> ExactReport {
        self.stop = stop;
        self
    }

    /// As a method result.
    pub fn solved(&self) -> Solved {
        let outcome = match (&self.status, &self.schedule) {
            (Verdict::Optimal, Some(s)) => Outcome::Optimal(s.clone()),
            (Verdict::Infeasible, _) => Outcome::Infeasible {
                reason: format!("{} proved that no schedule fits", self.backend.name()),
            },
            (_, Some(s)) => Outcome::Feasible {
                schedule: s.clone(),
                bound: Some(self.lower_bound_cycles),
            },
            _ => Outcome::Unknown {
                reason: match self.stop {
                    StopReason::NotAttempted => "model too large to attempt".into(),
                    _ => format!("{}: no schedule within the time limit", self.backend.name()),
                },
            },
        };
        let mut notes = super::note::texts(&self.notes);
        notes.push(format!(
            "lower bound {} ({})",
            self.lower_bound_cycles, self.bound_source
        ));
        Solved {
            outcome,
            stop: self.stop,
            notes,
        }
    }

    /// The reference every heuristic's gap is measured against: the proven optimum, or the
    /// best lower bound. `certified_optimum` says which. Either way the gap is certified (an
    /// upper bound on the true gap when the reference is a bound).
    pub fn gap_reference(&self) -> GapReference {
        match (self.status, self.makespan_cycles) {
            (Verdict::Optimal, Some(t)) => GapReference {
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
