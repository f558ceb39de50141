//! `basic-fill`: double buffering (SPEC §5) on the stage model's forward fill — elk-opt's
//! Basic before the faithful one, kept as a named variant. While an operator with HBM data runs — or the prologue,
//! for the first — the next operator with HBM data is loaded, and nothing further ahead.
//! Each operator takes its fastest option that fits: its cold beside the hot footprints of
//! the operators running while it waits, its hot beside the smallest cold of the next load.

use crate::common::{build, c_min, fastest};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved};
use elk_stage::units::{OpId, Stage};

/// Double buffering with loads placed by the forward fill.
#[derive(Clone, Copy, Debug, Default)]
pub struct BasicFill;

impl Method for BasicFill {
    fn name(&self) -> &str {
        "basic-fill"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        crate::sizing::by_work(inst, |inst| self.run_on(inst))
    }
}

impl BasicFill {
    /// The method on `inst` as given, every option a choice (`schedule` gives it the
    /// instance with parallel sets sized by work).
    fn run_on(&self, inst: &Instance) -> Result<Solved, MethodError> {
        let n = inst.ops.len();
        let loads = inst.loads();
        // next_load[i]: the first load after operator i; it is resident while i runs.
        let mut next_load = vec![None; n];
        let mut upcoming = None;
        for i in (0..n).rev() {
            next_load[i] = upcoming;
            if inst.is_load(OpId(i)) {
                upcoming = Some(i);
            }
        }
        let c_min = |j: usize| c_min(inst, j);
        // A load starts in the stage of the previous load's operator (the prologue for the
        // first).
        let starts: Vec<Stage> = loads
            .iter()
            .enumerate()
            .map(|(q, _)| {
                if q == 0 {
                    Stage::PROLOGUE
                } else {
                    Stage::of_op(loads[q - 1])
                }
            })
            .collect();
        let mut options = vec![0; n];
        let mut max_hot_while_waiting = 0; // hot of operators run since the previous load's op
        for i in 0..n {
            let op = &inst.ops[i];
            let sram = inst.sram_bytes.get();
            let hot_room = sram.saturating_sub(next_load[i].map_or(0, c_min));
            let is_load = inst.is_load(OpId(i));
            let cold_room = if is_load {
                sram.saturating_sub(max_hot_while_waiting)
            } else {
                u64::MAX
            };
            let Some(o) = fastest(op, hot_room, cold_room) else {
                return Ok(Solved::completed(Outcome::Unknown {
                    reason: format!(
                        "operator {}: no option with hot ≤ {hot_room} B and cold ≤ {cold_room} B",
                        op.name
                    ),
                }));
            };
            options[i] = o;
            let hot = op.options[o].hot.get();
            max_hot_while_waiting = if is_load {
                hot
            } else {
                max_hot_while_waiting.max(hot)
            };
        }
        let schedule = build(inst, self.name(), options, &starts)
            .map_err(|e| MethodError::internal(self.name(), e))?;
        Ok(Solved::completed(Outcome::Feasible {
            schedule,
            bound: None,
        }))
    }
}
