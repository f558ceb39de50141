//! Basic: double buffering (SPEC §5). While an operator with HBM data runs — or the prologue,
//! for the first — the next operator with HBM data is loaded, and nothing further ahead.
//! Each operator takes its fastest option that fits: its cold beside the hot footprints of
//! the operators running while it waits, its hot beside the smallest cold of the next load.

use crate::common::{build, fastest};
use elk_model::instance::Instance;
use elk_model::method::{Budget, Method, Outcome, Solved, StopReason};
use elk_model::Result;

/// Double buffering.
#[derive(Clone, Copy, Debug, Default)]
pub struct Basic;

impl Method for Basic {
    fn name(&self) -> &'static str {
        "basic"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved> {
        let n = inst.ops.len();
        let loads = inst.loads();
        // next_load[i]: the first load after operator i; it is resident while i runs.
        let mut next_load = vec![None; n];
        let mut upcoming = None;
        for i in (0..n).rev() {
            next_load[i] = upcoming;
            if inst.ops[i].hbm_cycles > 0.0 {
                upcoming = Some(i);
            }
        }
        let c_min = |j: usize| {
            inst.ops[j]
                .options
                .iter()
                .map(|o| o.cold)
                .min()
                .unwrap_or(0)
        };
        // A load starts in the stage of the previous load's operator (stage 0 for the first).
        let starts: Vec<usize> = loads
            .iter()
            .enumerate()
            .map(|(q, _)| if q == 0 { 0 } else { loads[q - 1] + 1 })
            .collect();
        let mut options = vec![0; n];
        let mut max_hot_while_waiting = 0; // hot of operators run since the previous load's op
        for i in 0..n {
            let op = &inst.ops[i];
            let hot_room = inst
                .sram_bytes
                .saturating_sub(next_load[i].map_or(0, c_min));
            let cold_room = if op.hbm_cycles > 0.0 {
                inst.sram_bytes.saturating_sub(max_hot_while_waiting)
            } else {
                u64::MAX
            };
            let Some(o) = fastest(op, hot_room, cold_room) else {
                return Ok(Solved {
                    outcome: Outcome::Infeasible {
                        reason: format!(
                            "operator {}: no option with hot ≤ {hot_room} B and cold ≤ {cold_room} B",
                            op.name
                        ),
                    },
                    stop: StopReason::Completed,
                    notes: vec![],
                });
            };
            options[i] = o;
            let hot = op.options[o].hot;
            max_hot_while_waiting = if op.hbm_cycles > 0.0 {
                hot
            } else {
                max_hot_while_waiting.max(hot)
            };
        }
        let schedule = build(inst, self.name(), options, &starts)
            .map_err(|e| elk_model::ModelError::Invalid(e.to_string()))?;
        Ok(Solved {
            outcome: Outcome::Feasible {
                schedule,
                bound: None,
            },
            stop: StopReason::Completed,
            notes: vec![],
        })
    }
}
