//! Elk-Full as the reference artifact runs it (SPEC §5): Elk-Dyn's timeline rules at θ = 0.99
//! over the block orders of [`OrderSearch`], each order scheduled in parallel; the fastest
//! schedule by the simulator is kept.
//!
//! The artifact's Elk-Full runs only θ = 0.99, so it is not a superset of its Elk-Dyn (which
//! runs θ ∈ {0.9, 0.7, 0.5}). Ours adds the identity order at Elk-Dyn's θs to the candidates,
//! so Elk-Full ≤ Elk-Dyn holds by construction; the note names the winning run.
//! Every order runs under both NoC priorities, *delay-comp* and *delay-load*, as in the
//! artifact.
//!
//! Like every heuristic, it sizes a parallel set's groups by work ([`Sizing::ByWork`]);
//! `elk-full-groups` is Elk-Full searching all of a set's allocations ([`Sizing::Search`]).

use crate::elk_dyn::{fastest, rules, THETAS};
use crate::orders::OrderSearch;
use crate::sizing::Sizing;
use crate::timeline::{self, NocPriority};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::units::OpId;
use rayon::prelude::*;

/// Elk-Full's stretching factor in the artifact.
pub const THETA: f64 = 0.99;

/// Elk-Full, faithful to the reference artifact (plus Elk-Dyn's runs, see the module doc).
#[derive(Clone, Copy, Debug, Default)]
pub struct ElkFull {
    /// The order search.
    pub search: OrderSearch,
    /// How it chooses a parallel set's groups: by work (Elk's rule, `elk-full`) or among all
    /// the set's options (`elk-full-groups`).
    pub sizing: Sizing,
}

impl ElkFull {
    /// `elk-full-groups`: Elk-Full choosing among all of a parallel set's allocations.
    pub fn searching_groups() -> ElkFull {
        ElkFull {
            sizing: Sizing::Search,
            ..ElkFull::default()
        }
    }

    /// Candidate load orders (identity first) and how many block orders were generated.
    pub fn orders(&self, inst: &Instance) -> (Vec<Vec<OpId>>, usize) {
        self.search.load_orders(inst)
    }
}

impl Method for ElkFull {
    fn name(&self) -> &str {
        match self.sizing {
            Sizing::ByWork => "elk-full",
            Sizing::Search => "elk-full-groups",
        }
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        crate::sizing::sized(inst, self.sizing, |inst| self.run_on(inst))
    }
}

impl ElkFull {
    /// The method on `inst` as given, every option a choice (`schedule` gives it the
    /// instance with parallel sets sized as `sizing` says).
    fn run_on(&self, inst: &Instance) -> Result<Solved, MethodError> {
        let candidates = self.search.candidates(inst);
        let identity = &candidates.orders[0];
        // (order index, θ, priority): every order at 0.99 in both modes, then the identity at
        // Elk-Dyn's θs and rules.
        let runs: Vec<(usize, f64, NocPriority)> = (0..candidates.orders.len())
            .flat_map(|k| [NocPriority::Loads, NocPriority::Execution].map(|p| (k, THETA, p)))
            .chain(THETAS.iter().map(|&t| (0, t, NocPriority::Loads)))
            .collect();
        // Every run plans by the same rule (only θ and the priority change).
        let ranked = timeline::Ranked::new(inst, &rules(THETA, NocPriority::Loads).plans);
        let results: Vec<_> = runs
            .par_iter()
            .map(|&(k, theta, priority)| {
                let order = if k == 0 {
                    identity
                } else {
                    &candidates.orders[k]
                };
                let rules = rules(theta, priority);
                timeline::schedule_ranked(inst, self.name(), order, &rules, &ranked)
            })
            .collect();
        let infeasible = results.iter().filter(|r| r.is_err()).count();
        let mut notes = vec![format!(
            "{} load orders tried ({} block orders generated, displacement ≤ {}), {} runs without a schedule",
            candidates.orders.len(),
            candidates.generated,
            self.search.max_displacement,
            infeasible
        )];
        // An order the preload window cannot host converts to an invalid schedule: skip it.
        let runs_ok = results.into_iter().map(|r| match r {
            Err(timeline::NoSchedule::Invalid(why)) => Err(timeline::NoSchedule::NoPlan(why)),
            other => other,
        });
        Ok(match fastest(self.name(), runs_ok)? {
            Ok((schedule, r)) => {
                let (k, theta, priority) = runs[r];
                let mode = match priority {
                    NocPriority::Loads => "delay-comp",
                    NocPriority::Execution => "delay-load",
                };
                notes.push(format!(
                    "best: order #{k} (0 = execution order), θ = {theta}, {mode}"
                ));
                Solved {
                    outcome: Outcome::Feasible {
                        schedule,
                        bound: None,
                    },
                    stop: StopReason::Completed,
                    notes,
                }
            }
            Err(reason) => Solved {
                outcome: Outcome::Unknown { reason },
                stop: StopReason::Completed,
                notes,
            },
        })
    }
}
