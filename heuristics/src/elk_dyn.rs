//! Elk-Dyn as the reference artifact runs it (SPEC §5; the faithful-Elk issue): the backward
//! [`timeline`] with loads in execution order, the budgeted argmin plan rule
//! with √(c_min·c_chosen) resident weights, delay-comp, and load stretching at each θ of
//! [`THETAS`]; the fastest run by the simulator is kept (the artifact's own tie rule can keep
//! a slower θ; we do not).

use crate::timeline::{self, Admission, NoSchedule, NocPriority, Plans, Rules};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::schedule::Schedule;

/// The stretching factors the artifact runs for Elk-Dyn.
pub const THETAS: [f64; 3] = [0.9, 0.7, 0.5];

/// Elk-Dyn, faithful to the reference artifact by default; its knobs are ablations.
#[derive(Clone, Copy, Debug)]
pub struct ElkDyn {
    /// The NoC penalty π in the plan rule (off: argmin exec alone).
    pub penalty: bool,
    /// A cap on how many operators ahead may be resident (`None`: the artifact's, none
    /// beyond the memory budget and the preload window).
    pub max_depth: Option<usize>,
}

impl Default for ElkDyn {
    fn default() -> ElkDyn {
        ElkDyn {
            penalty: true,
            max_depth: None,
        }
    }
}

impl ElkDyn {
    /// This configuration's rules at stretching `theta` with NoC `priority`.
    pub(crate) fn rules(&self, theta: f64, priority: NocPriority) -> Rules<'static> {
        Rules {
            theta,
            priority,
            admission: Admission::Any,
            max_ahead: self.max_depth,
            plans: Plans::Argmin {
                penalty: self.penalty,
            },
        }
    }
}

/// The artifact's Elk rules at stretching `theta` with NoC `priority`.
pub(crate) fn rules(theta: f64, priority: NocPriority) -> Rules<'static> {
    ElkDyn::default().rules(theta, priority)
}

/// The fastest of `runs` (first on ties) with its index; the first failure when none worked.
pub(crate) fn fastest(
    method: &str,
    runs: impl Iterator<Item = Result<Schedule, NoSchedule>>,
) -> Result<Result<(Schedule, usize), String>, MethodError> {
    let mut best: Option<(Schedule, usize)> = None;
    let mut first_failure = None;
    for (k, run) in runs.enumerate() {
        match run {
            Ok(s) => {
                if best
                    .as_ref()
                    .is_none_or(|(b, _)| s.makespan_cycles < b.makespan_cycles)
                {
                    best = Some((s, k));
                }
            }
            Err(NoSchedule::NoPlan(why)) => {
                first_failure.get_or_insert(why);
            }
            Err(NoSchedule::Invalid(why)) => {
                return Err(MethodError::internal(
                    method,
                    format!("its timeline converts to an invalid schedule: {why}"),
                ))
            }
        }
    }
    Ok(best.ok_or_else(|| first_failure.unwrap_or_else(|| "no run".into())))
}

impl Method for ElkDyn {
    fn name(&self) -> &str {
        "elk-dyn"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        crate::sizing::by_work(inst, |inst| self.run_on(inst))
    }
}

impl ElkDyn {
    /// The method on `inst` as given, every option a choice (`schedule` gives it the
    /// instance with parallel sets sized by work).
    fn run_on(&self, inst: &Instance) -> Result<Solved, MethodError> {
        let identity: Vec<usize> = (0..inst.ops.len()).collect();
        let ranked = timeline::Ranked::new(inst, &self.rules(THETAS[0], NocPriority::Loads).plans);
        let runs = THETAS.iter().map(|&theta| {
            let rules = self.rules(theta, NocPriority::Loads);
            timeline::schedule_ranked(inst, self.name(), &identity, &rules, &ranked)
        });
        Ok(match fastest(self.name(), runs)? {
            Ok((schedule, k)) => Solved {
                outcome: Outcome::Feasible {
                    schedule,
                    bound: None,
                },
                stop: StopReason::Completed,
                notes: vec![format!(
                    "backward timeline, delay-comp, best of θ = {:?}: θ = {}",
                    THETAS, THETAS[k]
                )],
            },
            Err(reason) => Solved::completed(Outcome::Unknown { reason }),
        })
    }
}
