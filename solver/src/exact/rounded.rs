//! The LP relaxation's options as a schedule ([`Solve::queue_lp_options`]): per operator the
//! option the relaxation weighs most, its loads served by the queue LP ([`crate::queue`]),
//! re-timed and judged by the simulator. On a decode layer of an LLM the relaxation is
//! nearly integral in its options, and the queue's starts are the ones the relaxation wants,
//! so this schedule often meets the relaxation's own bound: the layer is then proven optimal
//! with no MILP built (Llama2-13B's main-job layer in 0.4 s, where the fixed-order MILP's
//! root heuristics took 4.5 s to find the same schedule; docs/exact.md, "The LP relaxation's
//! options"). Elsewhere it is one more warm start, kept when it beats the given one.

use crate::error::Result;
use crate::exact::solve::Solve;
use crate::exact::{Note, Phase};
use crate::queue::{queue_for_options, REFINEMENTS};
use crate::tolerance::meets_bound;
use elk_stage::units::Cycles;
use std::time::{Duration, Instant};

/// The share of what is left of the time limit the queue LPs get without a work budget.
const QUEUE_SHARE: f64 = 0.1;

/// Without a time limit, the queue LPs' own.
const QUEUE_LIMIT: Duration = Duration::from_secs(60);

impl Solve<'_> {
    /// Queues the LP relaxation's options (when it was solved) and keeps the schedule as the
    /// warm start when it is faster. Returns whether the warm start now meets the bound.
    pub(super) fn queue_lp_options(&mut self, options: Vec<usize>) -> Result<bool> {
        const WHAT: &str = "LP relaxation's options, queued";
        self.phase(WHAT);
        let started = Instant::now();
        let limit = self.time_share(QUEUE_SHARE).unwrap_or(QUEUE_LIMIT);
        let method = self.opts.backend.method_name();
        let queued = queue_for_options(self.inst, options, method, REFINEMENTS, limit)?;
        self.phases.push(Phase {
            what: WHAT.into(),
            seconds: started.elapsed().as_secs_f64(),
        });
        let t = queued.makespan_cycles.get();
        if !t.is_finite() {
            // Rounding can pick options no schedule fits (an operator's hot bytes beside the
            // next load's cold ones over the SRAM).
            self.notes.push(Note::general(format!(
                "{WHAT}: no schedule ({})",
                queued.why_none()
            )));
            return Ok(false);
        }
        let beats = self.warm.as_ref().is_none_or(|(_, w)| t < *w);
        let noun = self.opts.backend.model_noun();
        self.notes.push(Note::general(format!(
            "{WHAT}: {t:.1} cycles{}",
            match (meets_bound(Cycles(t), self.bound()), beats, &self.warm) {
                (true, _, _) => format!(" (meets the lower bound: optimal, no {noun} built)"),
                (false, true, None) => format!(" (the {noun} starts from it)"),
                (false, true, Some(_)) =>
                    format!(" (better than the warm start: the {noun} starts from it)"),
                (false, false, _) => " (no better than the warm start)".into(),
            }
        )));
        if beats {
            self.warm = Some((queued.schedule, t));
            self.warm_given = false;
        }
        Ok(self.warm_start_meets_bound())
    }
}
