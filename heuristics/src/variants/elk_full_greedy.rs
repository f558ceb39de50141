//! `elk-full-greedy`: elk-opt's Elk-Full before the faithful one, kept as a named variant —
//! [`ElkDynGreedy`]'s stage-by-stage pass over the block orders of
//! [`OrderSearch`]; each order is scheduled in parallel and the fastest schedule (by the
//! simulator) is kept. The identity order is first, so it is never worse than
//! `elk-dyn-greedy`.

use crate::orders::OrderSearch;
use crate::variants::elk_dyn_greedy::ElkDynGreedy;
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::schedule::Schedule;
use elk_stage::units::OpId;
use rayon::prelude::*;

/// The greedy-allocation Elk-Full.
#[derive(Clone, Copy, Debug, Default)]
pub struct ElkFullGreedy {
    /// The order search.
    pub search: OrderSearch,
}

impl ElkFullGreedy {
    /// Candidate load orders (identity first) and how many block orders were generated.
    pub fn orders(&self, inst: &Instance) -> (Vec<Vec<OpId>>, usize) {
        self.search.load_orders(inst)
    }
}

impl Method for ElkFullGreedy {
    fn name(&self) -> &str {
        "elk-full-greedy"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        crate::sizing::by_work(inst, |inst| self.run_on(inst))
    }
}

impl ElkFullGreedy {
    /// The method on `inst` as given, every option a choice (`schedule` gives it the
    /// instance with parallel sets sized by work).
    fn run_on(&self, inst: &Instance) -> Result<Solved, MethodError> {
        let pass = ElkDynGreedy::default();
        let depth = pass.depth(inst);
        let (orders, generated) = self.orders(inst);
        // An order can be impossible under the preload windows (a load that must end before
        // a load ordered ahead of it may start): its pass says so, and it counts as infeasible.
        let results: Vec<Result<Schedule, String>> = orders
            .par_iter()
            .map(|o| pass.pass_at_depth(inst, o, depth))
            .collect();
        let infeasible = results.iter().filter(|r| r.is_err()).count();
        let mut notes = vec![
            format!(
                "{} load orders tried ({} block orders generated, displacement ≤ {}), {} infeasible",
                orders.len(),
                generated,
                self.search.max_displacement,
                infeasible
            ),
            format!("preload depth up to {depth} operators"),
        ];
        let best = results
            .iter()
            .enumerate()
            .filter_map(|(k, r)| r.as_ref().ok().map(|s| (s, k)))
            .min_by(|a, b| {
                a.0.makespan_cycles
                    .total_cmp(&b.0.makespan_cycles)
                    .then(a.1.cmp(&b.1))
            });
        let outcome = match best {
            Some((schedule, k)) => {
                let mut schedule = schedule.clone();
                schedule.method = self.name().into();
                notes.push(format!("best order: #{k} (0 = execution order)"));
                Outcome::Feasible {
                    schedule,
                    bound: None,
                }
            }
            None => Outcome::Unknown {
                reason: match results.first() {
                    Some(Err(why)) if results.len() == 1 => why.clone(),
                    Some(Err(why)) => {
                        format!("no load order admits a schedule (the execution order: {why})")
                    }
                    _ => "no load order to try".into(),
                },
            },
        };
        Ok(Solved {
            outcome,
            stop: StopReason::Completed,
            notes,
        })
    }
}
