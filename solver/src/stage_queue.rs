//! `stage-lp+queue`, elk-opt's relaxation-guided variant (not the reference artifact's): the
//! stage relaxation's LP (`bounds::stage_lp`, the bound `compare` reports) chooses the
//! options, per operator the one its optimum weighs most, and the queue LP ([`crate::queue`])
//! serves their loads in execution order and re-times them. Where the relaxation's blend of
//! options sits on one option per operator (dense LLM decode steps on ipu-pod4) its schedule
//! comes within a fraction of a percent of the bound, ahead of every Elk heuristic; where the
//! relaxation blends options a schedule cannot (Llama2-70B's `ffn.gate_up`, SRAM-tight
//! ipu-mk2) it falls behind them (docs/heuristics.md, "stage-lp+queue").

use crate::bounds::{stage_options, STAGE_LIMIT, STAGE_MAX_OPERATORS};
use crate::queue::{queue_for_options, REFINEMENTS};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use std::time::{Duration, Instant};

/// The method's name.
pub const STAGE_QUEUE: &str = "stage-lp+queue";

/// `stage-lp+queue` (module docs).
#[derive(Clone, Debug, Default)]
pub struct StageQueue {
    /// The LP's options when the caller has them (`compare` solves the same LP for its bound,
    /// or reads them from the bound cache); otherwise the method solves the LP.
    known: Option<Vec<usize>>,
}

impl StageQueue {
    /// The method, with the LP's options already known (`None`: it solves the LP). Options
    /// that do not fit the instance (one per operator, each one of its options) are ignored.
    pub fn with_options(known: Option<Vec<usize>>) -> StageQueue {
        StageQueue { known }
    }

    /// The LP's options of `inst`: the known ones when they fit it, else the LP's.
    fn options(&self, inst: &Instance, limit: Duration) -> crate::Result<Option<Vec<usize>>> {
        let fits = |o: &Vec<usize>| {
            o.len() == inst.ops.len()
                && o.iter().zip(&inst.ops).all(|(&k, op)| k < op.options.len())
        };
        match self.known.as_ref().filter(|o| fits(o)) {
            Some(o) => Ok(Some(o.clone())),
            None => stage_options(inst, limit),
        }
    }

    fn nothing(reason: String, stop: StopReason) -> Solved {
        Solved {
            outcome: Outcome::Unknown { reason },
            stop,
            notes: Vec::new(),
        }
    }
}

impl Method for StageQueue {
    fn name(&self) -> &str {
        STAGE_QUEUE
    }

    fn schedule(&self, inst: &Instance, budget: &Budget) -> Result<Solved, MethodError> {
        if inst.ops.len() > STAGE_MAX_OPERATORS {
            return Ok(StageQueue::nothing(
                format!(
                    "{} operators: the stage LP is not tried above {STAGE_MAX_OPERATORS}",
                    inst.ops.len()
                ),
                StopReason::NotAttempted,
            ));
        }
        let started = Instant::now();
        let limit = budget
            .time_limit
            .map_or(STAGE_LIMIT, |t| t.min(STAGE_LIMIT));
        let left = || limit.saturating_sub(started.elapsed());
        let failed = |e: crate::SolverError| e.for_method(STAGE_QUEUE);
        let Some(options) = self.options(inst, limit).map_err(failed)? else {
            return Ok(StageQueue::nothing(
                format!(
                    "the stage LP did not finish within {} s",
                    limit.as_secs_f64()
                ),
                StopReason::TimeLimit,
            ));
        };
        if inst.load_indices().is_empty() {
            // Nothing to queue: the options alone are the schedule.
            let mut s = Schedule::new(
                inst,
                STAGE_QUEUE,
                options,
                Vec::new(),
                Vec::new(),
                Cycles(0.0),
            );
            s.makespan_cycles =
                elk_sim::judged_makespan(inst, &s).map_err(|v| MethodError::Internal {
                    method: STAGE_QUEUE.into(),
                    detail: format!("the simulator rejected a schedule without loads: {v}"),
                })?;
            return Ok(Solved::completed(Outcome::Feasible {
                schedule: s,
                bound: None,
            }));
        }
        let queued =
            queue_for_options(inst, options, STAGE_QUEUE, REFINEMENTS, left()).map_err(failed)?;
        if !queued.makespan_cycles.get().is_finite() {
            // The LP blends options; the heaviest ones may not fit together (an operator's
            // hot bytes beside the next load's cold ones), and then no queue schedule is
            // valid; otherwise no queue LP finished in time.
            return Ok(if queued.out_of_time() {
                StageQueue::nothing(
                    format!(
                        "the queue LP did not finish within {} s",
                        limit.as_secs_f64()
                    ),
                    StopReason::TimeLimit,
                )
            } else {
                StageQueue::nothing(
                    format!("no queue fits the LP's options: {}", queued.why_none()),
                    StopReason::Completed,
                )
            });
        }
        Ok(Solved::completed(Outcome::Feasible {
            schedule: queued.schedule,
            bound: None,
        }))
    }
}
