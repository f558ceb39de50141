//! Elk-Full's candidate load orders (SPEC §5): the repeating layer is split into blocks, each
//! ending at an HBM-heavy operator (H ≥ 5% of the layer's largest); block orders with every
//! block within `max_displacement` places of its own are enumerated (closest to the identity
//! first, deduplicated by block signature, at most `max_orders`), and the same order is used in
//! every layer. The identity order is always first. Orders the instance's load-order policy
//! forbids are skipped (a `fixed` instance leaves only the identity).

use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::units::{Cycles, OpId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

/// Heavy-operator fraction of the layer's largest load that ends a block.
const HEAVY: f64 = 0.05;

/// The limits of the order search.
#[derive(Clone, Copy, Debug)]
pub struct OrderSearch {
    /// Largest distance a block may move from its place.
    pub max_displacement: usize,
    /// Most distinct orders evaluated (the reference evaluated 125 on bert-base, 221 on
    /// Llama2-7B).
    pub max_orders: usize,
}

impl Default for OrderSearch {
    fn default() -> OrderSearch {
        OrderSearch {
            max_displacement: 4,
            max_orders: 256,
        }
    }
}

/// Candidate orders: each lists **every** operator once (operators without HBM data move
/// with their block), identity first; and how many block orders were generated.
pub struct Candidates {
    /// The orders, identity first.
    pub orders: Vec<Vec<usize>>,
    /// Block orders generated before deduplication and the policy filter.
    pub generated: usize,
}

impl Candidates {
    /// Order `k` restricted to the operators with HBM data (an instance's load order).
    pub fn loads(inst: &Instance, order: &[usize]) -> Vec<OpId> {
        order
            .iter()
            .copied()
            .map(OpId)
            .filter(|&j| inst.is_load(j))
            .collect()
    }
}

/// Whether operator `k` of the layer `start..start + len` is HBM-heavy (ends a block).
fn is_heavy(inst: &Instance, start: usize, len: usize, k: usize) -> bool {
    let max_h = inst.ops[start..start + len]
        .iter()
        .map(|o| o.hbm_cycles)
        .fold(Cycles::ZERO, Cycles::max);
    max_h > Cycles::ZERO && inst.ops[k].hbm_cycles >= max_h * HEAVY
}

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
    // `rec` emits them in lexicographic order, so a stable bucket sort by displacement (at
    // most b·d) gives (displacement, then lexicographic) without comparing permutations: with
    // up to `cap` of them, comparison sorts cost more than generating them.
    let mut buckets: Vec<Vec<Vec<usize>>> = vec![Vec::new(); b * d + 1];
    for p in out {
        let displacement: usize = p.iter().enumerate().map(|(i, &x)| i.abs_diff(x)).sum();
        buckets[displacement].push(p);
    }
    buckets.into_iter().flatten().collect()
}

/// [`permutations`], computed once per (b, d, cap) in the process: they depend on nothing
/// else, and every Elk-Full run over a model with the same block count asks for the same up to
/// 100,000 of them (a study runs it dozens of times).
fn shared_permutations(b: usize, d: usize, cap: usize) -> Arc<Vec<Vec<usize>>> {
    type Table = Mutex<BTreeMap<(usize, usize, usize), Arc<Vec<Vec<usize>>>>>;
    static MADE: OnceLock<Table> = OnceLock::new();
    let made = MADE.get_or_init(Table::default);
    if let Some(p) = made
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(b, d, cap))
    {
        return Arc::clone(p);
    }
    // Computed outside the lock; two threads asking at once both compute the same value.
    let p = Arc::new(permutations(b, d, cap));
    made.lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((b, d, cap))
        .or_insert(p)
        .clone()
}

/// Whether the load order `order` respects the instance's load-order policy.
pub fn allowed(inst: &Instance, order: &[OpId]) -> bool {
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

impl OrderSearch {
    /// The candidates as instance load orders (operators with HBM data only, identity
    /// first) and how many block orders were generated.
    pub fn load_orders(&self, inst: &Instance) -> (Vec<Vec<OpId>>, usize) {
        let c = self.candidates(inst);
        let orders = c
            .orders
            .iter()
            .map(|o| Candidates::loads(inst, o))
            .collect();
        (orders, c.generated)
    }

    /// Candidate orders of `inst` (identity first).
    pub fn candidates(&self, inst: &Instance) -> Candidates {
        let layers = inst.layers();
        let n = inst.ops.len();
        let identity: Vec<usize> = (0..n).collect();
        // One layer (a sub-instance): nothing repeats to permute.
        if layers.layers == 0 || layers.ops_per_layer == 0 {
            return Candidates {
                orders: vec![identity],
                generated: 1,
            };
        }
        // The layer as the artifact cuts it: ending at its last HBM-heavy operator, so no block
        // straddles two layers (the detected phase may start a layer anywhere).
        let len = layers.ops_per_layer;
        let last_heavy_end = blocks(inst, layers.prologue, len)
            .iter()
            .map(|&(_, e)| e)
            .filter(|&e| is_heavy(inst, layers.prologue, len, e - 1))
            .max()
            .unwrap_or(layers.prologue + len);
        let start = last_heavy_end.saturating_sub(len);
        // Cut the blocks on a whole layer (the second, when the rotation reaches into the
        // prologue), then place them at `start`.
        let probe = if layers.layers >= 2 {
            start + len
        } else {
            start
        };
        let template: Vec<(usize, usize)> = blocks(inst, probe, len)
            .into_iter()
            .map(|(a, e)| (a - probe + start, e - probe + start))
            .collect();
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
        let perms = shared_permutations(template.len(), self.max_displacement, 100_000);
        let generated = perms.len();
        let mut seen = BTreeSet::new();
        let mut orders = Vec::new();
        for p in perms.iter() {
            let key: Vec<&Vec<u64>> = p.iter().map(|&b| &sigs[b]).collect();
            if !seen.insert(key) {
                continue;
            }
            let mut order: Vec<usize> = (0..start).collect();
            for l in 0..layers.layers {
                let shift = l * len;
                for &b in p {
                    let (a, e) = template[b];
                    order.extend(a + shift..e + shift);
                }
            }
            order.extend(start + layers.layers * len..n);
            if allowed(inst, &Candidates::loads(inst, &order)) {
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
        Candidates { orders, generated }
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

    #[test]
    fn permutations_are_sorted_by_displacement_then_lexicographically() {
        // Against a comparison sort of every permutation, including runs cut by the cap
        // (the first `cap` in lexicographic order are the ones kept).
        for (b, d, cap) in [(6, 2, 100_000), (7, 4, 100_000), (8, 3, 500), (9, 4, 3000)] {
            let got = permutations(b, d, cap);
            let mut want = got.clone();
            want.sort_by_key(|p| {
                let displacement: usize = p.iter().enumerate().map(|(i, &x)| i.abs_diff(x)).sum();
                (displacement, p.clone())
            });
            assert_eq!(got, want, "b {b}, d {d}, cap {cap}");
            let mut lexicographic = got.clone();
            lexicographic.sort();
            let all = permutations(b, d, usize::MAX);
            let mut first: Vec<Vec<usize>> = all.clone();
            first.sort();
            first.truncate(cap);
            assert_eq!(
                lexicographic, first,
                "b {b}, d {d}, cap {cap}: the kept ones"
            );
        }
    }
}
