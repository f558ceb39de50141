//! `elk-full-greedy`: elk-opt's Elk-Full before the faithful one, kept as a named variant —
//! [`ElkDynGreedy`]'s stage-by-stage pass over the block orders of
//! [`OrderSearch`]; each order is scheduled in parallel and the fastest schedule (by the
//! simulator) is kept. The identity order is first, so it is never worse than
//! `elk-dyn-greedy`.

use crate::orders::OrderSearch;
use crate::variants::elk_dyn_greedy::ElkDynGreedy;
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::units::{Cycles, OpId};
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
        let pass = ElkDynGreedy::default();
        let depth = pass.depth(inst);
        let (orders, generated) = self.orders(inst);
        // An order can be impossible under the preload window (a load that must end before
        // a later-ordered load starts, which the window forbids it to precede): such an
        // order's schedule does not validate and counts as infeasible.
        let checked = |o: &Vec<OpId>| {
            pass.pass_at_depth(inst, o, depth)
                .filter(|s| elk_sim::validate(inst, s).is_empty())
        };
        let results: Vec<Option<Cycles>> = orders
            .par_iter()
            .map(|o| checked(o).map(|s| s.makespan_cycles))
            .collect();
        let infeasible = results.iter().filter(|r| r.is_none()).count();
        let best = results
            .iter()
            .enumerate()
            .filter_map(|(k, r)| r.map(|c| (c, k)))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
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
        let outcome = match best.and_then(|(_, k)| checked(&orders[k]).map(|s| (s, k))) {
            Some((mut schedule, k)) => {
                schedule.method = self.name().into();
                notes.push(format!("best order: #{k} (0 = execution order)"));
                Outcome::Feasible {
                    schedule,
                    bound: None,
                }
            }
            None => Outcome::Unknown {
                reason: "no load order admits a schedule".into(),
            },
        };
        Ok(Solved {
            outcome,
            stop: StopReason::Completed,
            notes,
        })
    }
}
