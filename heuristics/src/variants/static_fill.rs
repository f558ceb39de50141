//! `static-fill`: elk-opt's Static before the faithful one, kept as a named variant (SPEC §5): one split of SRAM into an execution region E and a preload region
//! P = SRAM − E for all operators, swept in 10 KiB steps; two variants — every operator on its
//! smallest-cold option (min-cold) or its largest cold that fits P (max-cold), each the
//! fastest such with hot ≤ E — and the best (variant, E) by simulated makespan is reported.
//! Loads enter the preload region in order, each as soon as it has room.

use crate::common::{build, largest_cold, smallest_cold};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::schedule::Schedule;
use elk_stage::units::{Cycles, Stage};

/// The sweep step of the execution region.
pub const STEP_BYTES: u64 = 10 * 1024;

/// One fixed SRAM split for all operators.
#[derive(Clone, Copy, Debug, Default)]
pub struct StaticFill;

/// How options are chosen within a split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Smallest cold, then fastest.
    MinCold,
    /// Largest cold that fits the preload region, then fastest.
    MaxCold,
}

/// The schedule for execution region `exec_bytes`, or `None` when some operator fits nowhere.
pub fn with_split(inst: &Instance, exec_bytes: u64, variant: Variant) -> Option<Schedule> {
    let preload = inst.sram_bytes.get().checked_sub(exec_bytes)?;
    let n = inst.ops.len();
    let mut options = Vec::with_capacity(n);
    for op in &inst.ops {
        let o = match variant {
            Variant::MinCold => smallest_cold(op, exec_bytes, preload),
            Variant::MaxCold => largest_cold(op, exec_bytes, preload),
        }?;
        options.push(o);
    }
    // Loads enter the preload region in order, each as early as the region has room for it
    // in every stage until its operator runs (first-in, first-out).
    let mut occupied = vec![0u64; n + 1];
    let mut starts = Vec::new();
    let mut earliest = 0;
    for j in inst.loads().into_iter().map(|j| j.index()) {
        let cold = inst.ops[j].options[options[j]].cold.get();
        // Stages t..=j (stage j + 1 runs the operator) hold the cold data.
        let mut t = j;
        while t > earliest && occupied[t - 1] + cold <= preload {
            t -= 1;
        }
        if occupied[t..=j].iter().any(|&o| o + cold > preload) {
            return None;
        }
        for occ in &mut occupied[t..=j] {
            *occ += cold;
        }
        starts.push(Stage(t));
        earliest = t;
    }
    build(inst, "static-fill", options, &starts).ok()
}

impl Method for StaticFill {
    fn name(&self) -> &str {
        "static-fill"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        crate::sizing::by_work(inst, |inst| self.run_on(inst))
    }
}

impl StaticFill {
    /// The method on `inst` as given, every option a choice (`schedule` gives it the
    /// instance with parallel sets sized by work).
    fn run_on(&self, inst: &Instance) -> Result<Solved, MethodError> {
        let mut best: Option<(Schedule, u64, Variant)> = None;
        let mut per_variant = Vec::new();
        for variant in [Variant::MinCold, Variant::MaxCold] {
            let mut variant_best: Option<(Cycles, u64)> = None;
            let mut e = STEP_BYTES;
            while e <= inst.sram_bytes.get() {
                if let Some(s) = with_split(inst, e, variant) {
                    if variant_best.is_none_or(|(t, _)| s.makespan_cycles < t) {
                        variant_best = Some((s.makespan_cycles, e));
                    }
                    if best
                        .as_ref()
                        .is_none_or(|(b, _, _)| s.makespan_cycles < b.makespan_cycles)
                    {
                        best = Some((s, e, variant));
                    }
                }
                e += STEP_BYTES;
            }
            per_variant.push(match variant_best {
                Some((t, e)) => format!("{variant:?}: best exec region {} KiB, {t}", e / 1024),
                None => format!("{variant:?}: no split fits"),
            });
        }
        let notes = per_variant;
        Ok(match best {
            Some((schedule, e, variant)) => Solved {
                notes: [
                    vec![format!(
                        "chosen: {variant:?}, exec region {} KiB of {} KiB",
                        e / 1024,
                        inst.sram_bytes.get() / 1024
                    )],
                    notes,
                ]
                .concat(),
                outcome: Outcome::Feasible {
                    schedule,
                    bound: None,
                },
                stop: StopReason::Completed,
            },
            None => Solved {
                outcome: Outcome::Unknown {
                    reason: "no 10 KiB split of SRAM fits every operator".into(),
                },
                stop: StopReason::Completed,
                notes,
            },
        })
    }
}
