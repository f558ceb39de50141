//! Resident experts (docs/moe.md, "Resident experts"): experts whose weights stay in SRAM
//! across steps, never reloaded, their SRAM reserved for the whole run.
//!
//! A [`ResidentSet`] marks experts resident; every other expert follows the set's `rest`
//! policy (load-all or on-demand). In a step's instance a resident expert:
//! - reserves ⌈B/P⌉ bytes of every core for each of its weight tensors (B bytes, P cores: the
//!   even spread of its weights over the chip), taken off the instance's SRAM per core;
//! - is never loaded: its weight operators have no HBM cycles and no preload window;
//! - with tokens, computes as before; its options' footprints lose that share, which the
//!   reservation already holds (so a stage holds what it held, less nothing it still needs);
//! - without tokens, neither computes nor holds anything beyond the reservation.
//!
//! Which experts to keep is a 0/1 knapsack ([`top_by_value`]): each expert's value is the HBM
//! cycles its residency saves per step in expectation, its weight the SRAM it reserves, the
//! capacity the SRAM the run gives residents. Every routed expert of a model has the same
//! shape, so the weights are equal and the knapsack's optimum is the n = ⌊capacity / weight⌋
//! experts of highest value (exchange argument, docs/moe.md); its LP relaxation has the same
//! value, so the certified gap of the choice is 0 for that objective.

use super::{Policy, Slot};
use elk_stage::instance::Instance;
use elk_stage::units::{Bytes, Cycles};

/// Experts kept resident, and the policy of every other expert.
#[derive(Clone, Debug, PartialEq)]
pub struct ResidentSet {
    /// `[layer][expert]`: resident.
    resident: Vec<Vec<bool>>,
    /// The policy of the experts not resident: load-all or on-demand.
    pub rest: Policy,
}

impl ResidentSet {
    /// `experts` ((layer, expert) pairs) resident in a model of `layers` × `per_layer`
    /// experts, the rest following `rest`.
    pub fn new(
        layers: usize,
        per_layer: usize,
        experts: &[(usize, usize)],
        rest: Policy,
    ) -> ResidentSet {
        let mut resident = vec![vec![false; per_layer]; layers];
        for &(l, e) in experts {
            if let Some(x) = resident.get_mut(l).and_then(|v| v.get_mut(e)) {
                *x = true;
            }
        }
        ResidentSet { resident, rest }
    }

    /// Whether expert `e` of layer `l` is resident.
    pub fn holds(&self, l: usize, e: usize) -> bool {
        self.resident
            .get(l)
            .and_then(|v| v.get(e))
            .copied()
            .unwrap_or(false)
    }

    /// The resident experts, layer by layer.
    pub fn experts(&self) -> Vec<(usize, usize)> {
        self.resident
            .iter()
            .enumerate()
            .flat_map(|(l, v)| {
                v.iter()
                    .enumerate()
                    .filter(|&(_, &r)| r)
                    .map(move |(e, _)| (l, e))
            })
            .collect()
    }

    /// How many experts are resident.
    pub fn count(&self) -> usize {
        self.resident.iter().flatten().filter(|&&r| r).count()
    }

    /// Resident experts per layer.
    pub fn per_layer(&self) -> Vec<usize> {
        self.resident
            .iter()
            .map(|v| v.iter().filter(|&&r| r).count())
            .collect()
    }
}

/// The SRAM per core that one weight tensor of `bytes` bytes reserves when resident: its even
/// spread over `cores` cores, rounded up.
pub fn share_per_core(bytes: u64, cores: u64) -> u64 {
    bytes.div_ceil(cores.max(1))
}

/// Applies `set` to `inst`, an instance of the set's rest policy: `slots[j]` says what
/// operator j is and `shares[j]` its weights' SRAM per core when resident (0 for operators
/// without expert weights). Returns the SRAM per core reserved; the instance's SRAM per core
/// is reduced by it (saturating at 0: such an instance has no schedule, and the heuristics
/// say so).
pub(super) fn apply(inst: &mut Instance, set: &ResidentSet, slots: &[Slot], shares: &[u64]) -> u64 {
    let mut reserved = 0u64;
    for (j, slot) in slots.iter().enumerate() {
        let (Slot::Expert { layer, expert } | Slot::Idle { layer, expert }) = *slot else {
            continue;
        };
        let share = shares.get(j).copied().unwrap_or(0);
        if !set.holds(layer, expert) || share == 0 {
            continue;
        }
        reserved += share;
        let op = &mut inst.ops[j];
        op.hbm_cycles = Cycles::ZERO;
        op.preload_window = None;
        if matches!(slot, Slot::Idle { .. }) {
            op.options = vec![super::empty_option()].into();
            continue;
        }
        for o in op.options_mut() {
            o.cold = Bytes(o.cold.0.saturating_sub(share));
            o.hot = Bytes(o.hot.0.saturating_sub(share));
        }
    }
    inst.sram_bytes = Bytes(inst.sram_bytes.0.saturating_sub(reserved));
    reserved
}

/// The `n` items of highest `value` (ties: the lower index first): the optimum of a 0/1
/// knapsack whose items all weigh the same, with room for `n` of them.
pub fn top_by_value(value: &[f64], n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..value.len()).collect();
    order.sort_by(|&a, &b| value[b].total_cmp(&value[a]).then(a.cmp(&b)));
    order.truncate(n);
    order.sort_unstable();
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subset of `n` items of 6, by brute force: none beats the top-n's value.
    #[test]
    fn the_top_n_is_the_knapsacks_optimum() {
        let value = [0.3, 0.9, 0.1, 0.9, 0.5, 0.0];
        for n in 0..=6 {
            let chosen = top_by_value(&value, n);
            assert_eq!(chosen.len(), n);
            let got: f64 = chosen.iter().map(|&i| value[i]).sum();
            let best = (0u32..64)
                .filter(|m| m.count_ones() as usize == n)
                .map(|m| {
                    (0..6)
                        .filter(|i| m >> i & 1 == 1)
                        .map(|i| value[i])
                        .sum::<f64>()
                })
                .fold(f64::MIN, f64::max);
            assert_eq!(got, best, "n = {n}");
        }
        assert_eq!(top_by_value(&value, 2), [1, 3]);
    }

    #[test]
    fn a_set_names_its_experts_and_ignores_what_is_out_of_range() {
        let s = ResidentSet::new(2, 3, &[(0, 2), (1, 0), (5, 0), (1, 9)], Policy::OnDemand);
        assert_eq!(s.experts(), [(0, 2), (1, 0)]);
        assert_eq!(s.count(), 2);
        assert_eq!(s.per_layer(), [1, 1]);
        assert!(s.holds(0, 2) && !s.holds(0, 1) && !s.holds(7, 7));
        assert_eq!(share_per_core(10, 4), 3);
        assert_eq!(share_per_core(8, 4), 2);
    }
}
