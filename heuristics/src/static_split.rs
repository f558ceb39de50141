//! Static as the reference artifact runs it (SPEC §5): one split of SRAM into an execution
//! region E and a preload region P = SRAM − E for all operators. E is swept from the largest
//! minimum hot footprint upwards in 10 KiB steps; in each split every operator takes its
//! smallest-cold option (min-cold variant) or its largest cold that fits P (max-cold), each
//! the fastest such with hot ≤ E. The backward [`timeline`] admits loads
//! while their cold bytes fit P (delay-comp, θ = 1). The best (variant, E) by the simulator
//! is reported.

use crate::common::{largest_cold, smallest_cold};
use crate::elk_dyn::fastest;
use crate::timeline::{self, Admission, NoSchedule, NocPriority, Plans, Rules};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::schedule::Schedule;

/// The sweep step of the execution region.
pub const STEP_BYTES: u64 = 10 * 1024;

/// One fixed SRAM split for all operators, faithful to the reference artifact.
#[derive(Clone, Copy, Debug, Default)]
pub struct StaticSplit;

/// How options are chosen within a split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Smallest cold, then fastest.
    MinCold,
    /// Largest cold that fits the preload region, then fastest.
    MaxCold,
}

/// The execution regions swept: from the largest minimum hot footprint, in [`STEP_BYTES`].
pub fn exec_regions(inst: &Instance) -> impl Iterator<Item = u64> {
    let start = inst
        .ops
        .iter()
        .map(|op| op.options.iter().map(|o| o.hot.get()).min().unwrap_or(0))
        .max()
        .unwrap_or(0)
        .max(1);
    let sram = inst.sram_bytes.get();
    (0..)
        .map(move |k| start + k * STEP_BYTES)
        .take_while(move |&e| e <= sram)
}

/// The schedule for execution region `exec_bytes` and `variant`.
pub(crate) fn with_split(
    inst: &Instance,
    exec_bytes: u64,
    variant: Variant,
) -> Result<Schedule, NoSchedule> {
    let preload = inst.sram_bytes.get().saturating_sub(exec_bytes);
    let mut options = Vec::with_capacity(inst.ops.len());
    for op in &inst.ops {
        let o = match variant {
            Variant::MinCold => smallest_cold(op, exec_bytes, preload),
            Variant::MaxCold => largest_cold(op, exec_bytes, preload),
        };
        let Some(o) = o else {
            return Err(NoSchedule::NoPlan(format!(
                "operator {}: no option with hot ≤ {exec_bytes} B and cold ≤ {preload} B",
                op.name
            )));
        };
        options.push(o);
    }
    let identity: Vec<usize> = (0..inst.ops.len()).collect();
    let rules = Rules {
        theta: 1.0,
        priority: NocPriority::Loads,
        max_ahead: None,
        admission: Admission::Region(preload),
        plans: Plans::Fixed(&options),
    };
    timeline::schedule(inst, "static", &identity, &rules)
}

impl Method for StaticSplit {
    fn name(&self) -> &str {
        "static"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        crate::sizing::by_work(inst, |inst| self.run_on(inst))
    }
}

impl StaticSplit {
    /// The method on `inst` as given, every option a choice (`schedule` gives it the
    /// instance with parallel sets sized by work).
    fn run_on(&self, inst: &Instance) -> Result<Solved, MethodError> {
        let mut best: Option<(Schedule, u64, Variant)> = None;
        let mut notes = Vec::new();
        let mut failure = None;
        for variant in [Variant::MinCold, Variant::MaxCold] {
            let splits: Vec<u64> = exec_regions(inst).collect();
            let runs = splits.iter().map(|&e| with_split(inst, e, variant));
            match fastest(self.name(), runs)? {
                Ok((s, k)) => {
                    notes.push(format!(
                        "{variant:?}: best exec region {} B ({:.1} KiB), {}",
                        splits[k],
                        splits[k] as f64 / 1024.0,
                        s.makespan_cycles
                    ));
                    if best
                        .as_ref()
                        .is_none_or(|(b, _, _)| s.makespan_cycles < b.makespan_cycles)
                    {
                        best = Some((s, splits[k], variant));
                    }
                }
                Err(why) => {
                    notes.push(format!("{variant:?}: no split fits ({why})"));
                    failure.get_or_insert(why);
                }
            }
        }
        Ok(match best {
            Some((schedule, e, variant)) => Solved {
                notes: [
                    vec![format!(
                        "chosen: {variant:?}, exec region {:.1} KiB of {} KiB",
                        e as f64 / 1024.0,
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
                    reason: failure.unwrap_or_else(|| "no split of SRAM fits".into()),
                },
                stop: StopReason::Completed,
                notes,
            },
        })
    }
}
