//! The one run-and-judge path: run a method, validate what it returns, evaluate it. Every
//! caller (CLI, sweeps, studies, warm starts) goes through [`run_judged`], so a method that
//! returns an invalid schedule fails loudly everywhere, never as a blank cell.

use crate::{evaluate, validate, Evaluation};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Solved};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use std::time::Instant;

/// Relative difference between a method's own makespan claim and the simulator's beyond
/// which the report notes the claim (the simulator's number is the one reported).
pub const CLAIM_TOLERANCE: f64 = 1e-6;

/// A method's result, judged.
#[derive(Clone, Debug)]
pub struct Judged {
    /// What the method returned.
    pub solved: Solved,
    /// The simulator's evaluation of its schedule (when it returned one; always valid).
    pub evaluation: Option<Evaluation>,
    /// Wall-clock seconds the method took.
    pub seconds: f64,
}

impl Judged {
    /// The schedule, if any.
    pub fn schedule(&self) -> Option<&Schedule> {
        self.solved.outcome.schedule()
    }

    /// The simulator's makespan, if there is a schedule.
    pub fn makespan(&self) -> Option<Cycles> {
        self.evaluation.as_ref().map(|e| e.makespan_cycles)
    }

    /// The schedule and its judged makespan, by value.
    pub fn judged(self) -> Option<(Schedule, Cycles)> {
        let t = self.makespan()?;
        let s = self.solved.outcome.schedule()?.clone();
        Some((s, t))
    }

    /// Whether the method's own claim differs from the simulator's makespan (a note, not an
    /// error: heuristics price with the same simulator, exact backends with their objective).
    pub fn claim_differs(&self) -> Option<Cycles> {
        let (s, e) = (self.schedule()?, self.evaluation.as_ref()?);
        let diff = (e.makespan_cycles - s.makespan_cycles).abs();
        (diff.get() > CLAIM_TOLERANCE * e.makespan_cycles.get()).then_some(s.makespan_cycles)
    }
}

/// Runs `m` on `inst` within `budget` and judges its schedule. An invalid schedule is a
/// [`MethodError::Internal`] naming the method and the first violation.
pub fn run_judged(inst: &Instance, m: &dyn Method, budget: &Budget) -> Result<Judged, MethodError> {
    let started = Instant::now();
    let solved = m.schedule(inst, budget)?;
    let seconds = started.elapsed().as_secs_f64();
    let evaluation = match solved.outcome.schedule() {
        None => None,
        Some(s) => {
            if let Some(v) = validate(inst, s).into_iter().next() {
                return Err(MethodError::internal(
                    m.name(),
                    format!("returned an invalid schedule: {v}"),
                ));
            }
            Some(evaluate(inst, s))
        }
    };
    Ok(Judged {
        solved,
        evaluation,
        seconds,
    })
}
