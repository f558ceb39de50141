//! Elk-Full (SPEC §5): Elk-Dyn over preload-order permutations. The repeating layer is split
//! into blocks, each ending at an HBM-heavy operator (H ≥ 5% of the layer's largest); block
//! orders with every block within `max_displacement` places of its own are enumerated
//! (closest to the identity first, deduplicated by block signature, at most `max_orders`),
//! the same order is used in every layer, each order is scheduled by the inductive pass in
//! parallel, and the fastest schedule (by the simulator) is kept. The identity order is always
//! first, so Elk-Full is never worse than Elk-Dyn. Orders the instance's load-order policy
//! forbids are skipped (a `fixed` instance leaves only the identity).

use crate::elk_dyn::ElkDyn;
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::units::{Cycles, OpId};
use rayon::prelude::*;
use std::collections::BTreeSet;

/// Elk-Full's search limits.
#[derive(Clone, Copy, Debug)]
pub struct ElkFull {
    /// Largest distance a block may move from its place.
    pub max_displacement: usize,
    /// Most distinct orders evaluated (the reference evaluated 125).
    pub max_orders: usize,
}

impl Default for ElkFull {
    fn default() -> ElkFull {
        ElkFull {
            max_displacement: 4,
            max_orders: 128,
        }
    }
}

/// Heavy-operator fraction of the layer's largest load that ends a block.
const HEAVY: f64 = 0.05;

/// Blocks of the layer `start..start + len`: half-open operator ranges, each ending at an
/// HBM-heavy operator (the tail after the last heavy one is a block of its own).
pub fn blocks(inst: &Instance, start: usize, len: usize) -> Vec<(usize, usize)> {
    let layer = &inst.ops[start..start + len];
    let max_h = layer
        .iter()
        .map(|o| o.hbm_cycles)
        .fold(Cycles::ZERO, Cycles::max);
    let mut out = Vec::new();
    let mut from = start;
    for (k, op) in layer.iter().enumerate() {
        if max_h > Cycles::ZERO && op.hbm_cycles >= max_h * HEAVY {
            out.push((from, start + k + 1));
            from = start + k + 1;
        }
    }
    if from < start + len {
        out.push((from, start + len));
    }
    out
}

/// Permutations of `b` items with every item within `d` places, closest to the identity first
/// (total displacement, then lexicographic); enumeration stops after `cap` permutations.
fn permutations(b: usize, d: usize, cap: usize) -> Vec<Vec<usize>> {
    fn rec(
        b: usize,
        d: usize,
        cap: usize,
        cur: &mut Vec<usize>,
        used: &mut Vec<bool>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if out.len() >= cap {
            return;
        }
        let p = cur.len();
        if p == b {
            out.push(cur.clone());
            return;
        }
        // The item that must go here: an unused item at distance d behind cannot wait longer.
        for x in p.saturating_sub(d)..(p + d + 1).min(b) {
            if used[x] {
                continue;
            }
            if (0..b).any(|y| !used[y] && y != x && y + d < p + 1) {
                continue;
            }
            used[x] = true;
            cur.push(x);
            rec(b, d, cap, cur, used, out);
            cur.pop();
            used[x] = false;
        }
    }
    let mut out = Vec::new();
    rec(b, d, cap, &mut Vec::new(), &mut vec![false; b], &mut out);
    let displacement = |p: &Vec<usize>| {
        p.iter()
            .enumerate()
            .map(|(i, &x)| i.abs_diff(x))
            .sum::<usize>()
    };
    out.sort_by(|a, b| displacement(a).cmp(&displacement(b)).then(a.cmp(b)));
    out
}

/// Whether `order` respects the instance's load-order policy.
fn allowed(inst: &Instance, order: &[OpId]) -> bool {
    let limit = match inst.load_order {
        LoadOrder::Named(NamedOrder::Free) => return true,
        LoadOrder::Named(NamedOrder::Fixed) => 0,
        LoadOrder::Displacement { max_displacement } => max_displacement as usize,
    };
    let mut rank: Vec<OpId> = order.to_vec();
    rank.sort_unstable();
    order
        .iter()
        .enumerate()
        .all(|(p, j)| rank.binary_search(j).unwrap_or(p).abs_diff(p) <= limit)
}

impl ElkFull {
    /// Candidate load orders (identity first) and how many block orders were generated.
    pub fn orders(&self, inst: &Instance) -> (Vec<Vec<OpId>>, usize) {
        let layers = inst.layers();
        let identity = inst.loads();
        // One layer (a sub-instance): its blocks are permuted all the same.
        if layers.layers == 0 || layers.ops_per_layer == 0 {
            return (vec![identity], 1);
        }
        let template = blocks(inst, layers.prologue, layers.ops_per_layer);
        let signature = |&(a, b): &(usize, usize)| -> Vec<u64> {
            inst.ops[a..b]
                .iter()
                .flat_map(|o| {
                    std::iter::once(o.hbm_cycles.get().to_bits()).chain(o.options.iter().map(|x| {
                        x.cold.get() ^ x.hot.get().rotate_left(20) ^ x.exec_cycles.get().to_bits()
                    }))
                })
                .collect()
        };
        let sigs: Vec<Vec<u64>> = template.iter().map(signature).collect();
        let perms = permutations(template.len(), self.max_displacement, 100_000);
        let generated = perms.len();
        let mut seen = BTreeSet::new();
        let mut orders = Vec::new();
        for p in perms {
            let key: Vec<&Vec<u64>> = p.iter().map(|&b| &sigs[b]).collect();
            if !seen.insert(key) {
                continue;
            }
            let loads_in = |a: usize, e: usize| (a..e).map(OpId).filter(|&j| inst.is_load(j));
            let mut order: Vec<OpId> = loads_in(0, layers.prologue).collect();
            for l in 0..layers.layers {
                let shift = l * layers.ops_per_layer;
                for &b in &p {
                    let (a, e) = template[b];
                    order.extend(loads_in(a + shift, e + shift));
                }
            }
            let tail = layers.prologue + layers.layers * layers.ops_per_layer;
            order.extend(loads_in(tail, inst.ops.len()));
            if allowed(inst, &order) {
                orders.push(order);
            }
            if orders.len() >= self.max_orders {
                break;
            }
        }
        if orders.first() != Some(&identity) {
            orders.insert(0, identity);
            orders.truncate(self.max_orders.max(1));
        }
        (orders, generated)
    }
}

impl Method for ElkFull {
    fn name(&self) -> &str {
        "elk-full"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        let pass = ElkDyn::default();
        let depth = pass.depth(inst);
        let (orders, generated) = self.orders(inst);
        // An order can be impossible under the preload window (a load that must end before
        // a later-ordered load starts, which the window forbids it to precede): such an
        // order's schedule does not validate and counts as infeasible.
        let checked = |o: &Vec<OpId>| {
            pass.pass(inst, o)
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
        let notes = vec![
            format!("{} load orders tried ({} block orders generated, displacement ≤ {}), {} infeasible", orders.len(), generated, self.max_displacement, infeasible),
            format!("preload depth up to {depth} operators"),
        ];
        let outcome = match best.and_then(|(_, k)| checked(&orders[k])) {
            Some(mut schedule) => {
                schedule.method = self.name().into();
                let chosen = best.map_or(0, |(_, k)| k);
                return Ok(Solved {
                    outcome: Outcome::Feasible {
                        schedule,
                        bound: None,
                    },
                    stop: StopReason::Completed,
                    notes: [
                        notes,
                        vec![format!("best order: #{chosen} (0 = execution order)")],
                    ]
                    .concat(),
                });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_respect_the_displacement_and_start_with_the_identity() {
        let p = permutations(4, 1, 1000);
        assert_eq!(p[0], vec![0, 1, 2, 3]);
        // Adjacent swaps only: 1, 2, 3 fixed points patterns: 5 permutations (Fibonacci).
        assert_eq!(p.len(), 5);
        assert!(p
            .iter()
            .all(|q| q.iter().enumerate().all(|(i, &x)| i.abs_diff(x) <= 1)));
        assert_eq!(permutations(5, 4, 1000).len(), 120);
    }
}
