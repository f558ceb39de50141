//! A generic roofline cost model for non-IPU chips: compute at peak FLOP/s per core, every
//! transfer at the per-core NoC rate, one synchronisation per step.

use super::{CostModel, PlanCost};
use crate::plan::{Geometry, OpShape};

/// Peak compute and NoC rates per core, in per-cycle units, and a sync latency.
#[derive(Clone, Copy, Debug)]
pub struct Roofline {
    /// FLOP per cycle of one core.
    pub flops_per_cycle: f64,
    /// NoC bytes per cycle of one core.
    pub noc_bytes_per_cycle: f64,
    /// Cycles of one synchronisation.
    pub sync_cycles: f64,
}

impl Roofline {
    /// Compute cycles: every loop point of every step at the peak rate (2 FLOP per point of a
    /// contraction).
    fn comp(&self, shape: &OpShape, g: &Geometry) -> f64 {
        let points: f64 = g.step.iter().map(|&e| e as f64).product();
        let per_point = if shape.kind.is_contraction() {
            2.0
        } else {
            1.0
        };
        g.iterations as f64 * points * per_point / self.flops_per_cycle
    }
}

impl CostModel for Roofline {
    fn name(&self) -> &'static str {
        "roofline"
    }

    fn cost(&self, shape: &OpShape, g: &Geometry) -> PlanCost {
        let comp = self.comp(shape, g);
        let (shifts, shifted) = g.shift_totals();
        // Reducing k output replicas moves (k − 1) output tiles; every tensor moves at its own
        // bytes per element.
        let shuffled = (g.output_replicas - 1) as f64 * g.z[0] as f64;
        let bytes = shifted + shuffled * shape.dtype_bytes.as_f64();
        let syncs = 1.0 + shifts + f64::from(u8::from(g.output_replicas > 1));
        PlanCost {
            comp,
            comm: syncs * self.sync_cycles + bytes / self.noc_bytes_per_cycle,
        }
    }

    /// The exec without the rotation rounds' shifts and bytes (≥ 0), the same sums in the
    /// same order with 0 in their place (rounding is monotone: never above the exec).
    fn exec_lower_bound(&self, shape: &OpShape, g: &Geometry) -> f64 {
        let comp = self.comp(shape, g);
        let shuffled = (g.output_replicas - 1) as f64 * g.z[0] as f64;
        let bytes = 0.0 + shuffled * shape.dtype_bytes.as_f64();
        let syncs = 1.0 + 0.0 + f64::from(u8::from(g.output_replicas > 1));
        comp + (syncs * self.sync_cycles + bytes / self.noc_bytes_per_cycle)
    }

    fn warm_up(&self, shape: &OpShape, factors: &[u64], cold_z: &[u64]) -> f64 {
        warm_up_at(
            shape,
            factors,
            cold_z,
            self.sync_cycles,
            self.noc_bytes_per_cycle,
        )
    }
}

/// Cycles to regroup the cold layout into the hot one at a per-core NoC rate: one sync per
/// regrouped tensor, and its bytes (`factors[v]` cold pieces of `cold_z[v]` elements, at the
/// tensor's own bytes per element) at `noc_bytes_per_cycle`. The roofline's and the Tensix
/// model's warm-up.
pub fn warm_up_at(
    shape: &OpShape,
    factors: &[u64],
    cold_z: &[u64],
    sync_cycles: f64,
    noc_bytes_per_cycle: f64,
) -> f64 {
    let moved: f64 = factors
        .iter()
        .zip(cold_z)
        .zip(&shape.tensors)
        .filter(|((&m, _), _)| m > 1)
        .map(|((&m, &z), t)| (m as f64) * z as f64 * t.dtype_bytes.as_f64())
        .sum();
    let syncs = factors.iter().filter(|&&m| m > 1).count() as f64;
    syncs * sync_cycles + moved / noc_bytes_per_cycle
}
