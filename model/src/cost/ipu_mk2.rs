//! The IPU-Mk2 cost model of SPEC §3: the reference artifact's constants (cycles at
//! 1.325 GHz), all in [`K`], and its formulas, one function each.

use super::{CostModel, PlanCost};
use crate::graph::OpKind;
use crate::plan::{Geometry, OpShape};

/// Every constant of the model, in one table.
pub struct Constants {
    /// One synchronisation.
    pub sync: f64,
    /// Synchronisation cost charged per shift.
    pub shift_sync: f64,
    /// Cycles per 2-byte element moved between cores (exchange is priced by bytes: an fp32
    /// element costs two of these).
    pub per_elem: f64,
    /// Fixed part of an output shuffle (236 + 472).
    pub shuffle_base: f64,
    /// Elementwise per-iteration cost: `X ≤ ew_knee ? min(ew_cap, ew_slope·X + ew_fixed)
    /// : ew_slope_large·X + ew_fixed_large`.
    pub ew_knee: f64,
    /// See `ew_knee`.
    pub ew_cap: f64,
    /// See `ew_knee`.
    pub ew_slope: f64,
    /// See `ew_knee`.
    pub ew_fixed: f64,
    /// See `ew_knee`.
    pub ew_slope_large: f64,
    /// See `ew_knee`.
    pub ew_fixed_large: f64,
    /// Unary: `unary_slope·X + unary_fixed`.
    pub unary_slope: f64,
    /// See `unary_slope`.
    pub unary_fixed: f64,
    /// Many-replica reduction: `x ≤ red_knee ? min(red_cap, red_slope·x + red_fixed)
    /// : red_slope_large·x + red_fixed`.
    pub red_knee: f64,
    /// See `red_knee`.
    pub red_cap: f64,
    /// See `red_knee`.
    pub red_slope: f64,
    /// See `red_knee`.
    pub red_slope_large: f64,
    /// See `red_knee`.
    pub red_fixed: f64,
    /// MatMul: `b·(mm_m·⌈m/6⌉⌈k/16⌉⌈n/16⌉ + mm_k·⌈k/16⌉⌈n/16⌉ + mm_n·⌈n/16⌉ + mm_fixed)`.
    pub mm_m: f64,
    /// See `mm_m`.
    pub mm_k: f64,
    /// See `mm_m`.
    pub mm_n: f64,
    /// See `mm_m`.
    pub mm_fixed: f64,
    /// Gather fixed cost.
    pub gather_fixed: f64,
    /// Conv/pool analytical fallback: `conv_per_flop·flops + conv_fixed`.
    pub conv_per_flop: f64,
    /// See `conv_per_flop`.
    pub conv_fixed: f64,
}

/// The reference values.
pub const K: Constants = Constants {
    sync: 118.0,
    shift_sync: 236.0,
    per_elem: 0.56,
    shuffle_base: 236.0 + 472.0,
    ew_knee: 16432.0,
    ew_cap: 8517.0,
    ew_slope: 0.75,
    ew_fixed: 290.0,
    ew_slope_large: 0.5,
    ew_fixed_large: 300.0,
    unary_slope: 0.5,
    unary_fixed: 200.0,
    red_knee: 480.0,
    red_cap: 295.25,
    red_slope: 1.5,
    red_slope_large: 0.25,
    red_fixed: 175.0,
    mm_m: 24.0,
    mm_k: 514.0,
    mm_n: 113.0,
    mm_fixed: 173.0,
    gather_fixed: 300.0,
    conv_per_flop: 0.0495,
    conv_fixed: 2030.0,
};

/// The IPU-Mk2 model; `comm_factor` is 1.25 on multi-chip configurations (> 1,472 cores).
#[derive(Clone, Copy, Debug)]
pub struct IpuMk2 {
    /// Factor on sync+shift and shuffle cycles.
    pub comm_factor: f64,
}

/// Elementwise per-iteration cost of X elements.
pub fn elementwise(x: f64) -> f64 {
    if x <= K.ew_knee {
        K.ew_cap.min(K.ew_slope * x + K.ew_fixed)
    } else {
        K.ew_slope_large * x + K.ew_fixed_large
    }
}

/// The reduction cost on x = aligned elements × replicas.
pub fn reduction(x: f64) -> f64 {
    if x <= K.red_knee {
        K.red_cap.min(K.red_slope * x + K.red_fixed)
    } else {
        K.red_slope_large * x + K.red_fixed
    }
}

/// Vector alignment of a per-replica reduction size: up to 2 unchanged, then up to the next
/// of 4, 8, 12, 16, 24, beyond that to a multiple of 48 (the reference's ladder
/// 1, 2, 4, 8, 12, 16, 24, 48, 96, …).
pub fn align(r: f64) -> f64 {
    if r <= 2.0 {
        return r;
    }
    for step in [4.0, 8.0, 12.0, 16.0, 24.0] {
        if r <= step {
            return step;
        }
    }
    (r / 48.0).ceil() * 48.0
}

/// MatMul per-iteration cost with batch b and extents m, k, n (m ≥ n after ordering; with
/// `small_order`, the reference artifact's rule, the two swap back when m ≤ 16).
pub fn matmul(b: f64, m: f64, k: f64, n: f64, small_order: bool) -> f64 {
    let (mut m, mut n) = if m >= n { (m, n) } else { (n, m) };
    if small_order && m <= 16.0 {
        (m, n) = (n, m);
    }
    let (m6, k16, n16) = ((m / 6.0).ceil(), (k / 16.0).ceil(), (n / 16.0).ceil());
    b * (K.mm_m * m6 * k16 * n16 + K.mm_k * k16 * n16 + K.mm_n * n16 + K.mm_fixed)
}

/// Sync + shift cycles of the rotation rounds (SPEC §3), each tensor moved at its own bytes
/// per element (fp16: half the bytes of [`Geometry::shift_totals`]).
pub fn sync_shift(g: &Geometry) -> f64 {
    let (shifts, bytes) = g.shift_totals();
    K.shift_sync * shifts + K.per_elem * (bytes / 2.0)
}

/// Factor on compute cycles for the operator's dtype (its output's, the activations'): 1 for
/// fp16 (the reference constants, measured with fp16 AMP); for fp32 (4 bytes) 4 on
/// contractions — the Mk2's published 62.5 TFLOPS fp32 against 250 TFLOPS fp16 AMP per
/// IPU (Graphcore IPU-M2000 datasheet) — and 2 on every other kind, an assumption (the
/// vector path holds half as many fp32 values as fp16). Other dtypes are refused before a
/// plan is priced ([`crate::cost::for_chip_with`]).
pub fn dtype_factor(shape: &OpShape) -> f64 {
    match (shape.dtype_bytes.as_whole(), shape.kind.is_contraction()) {
        (Some(4), true) => 4.0,
        (Some(4), false) => 2.0,
        _ => 1.0,
    }
}

/// Output shuffle: gather the k output replicas and reduce them (SPEC §3). O is the output
/// of one compute step (Π of the output's per-step extents, as the reference computes it);
/// the first term moves the whole output tile z₀.
pub fn shuffle(shape: &OpShape, g: &Geometry) -> f64 {
    if matches!(
        shape.kind,
        OpKind::Elementwise | OpKind::Unary | OpKind::Pool | OpKind::Softmax
    ) {
        return K.sync;
    }
    let k = g.output_replicas as f64;
    let o = g.output_step_elems(shape) as f64;
    let r = o / k;
    // Cycles per output element moved (the constant is per 2-byte element).
    let per_elem = K.per_elem * (shape.dtype_bytes.as_f64() / 2.0);
    let (gather, reduce) = match g.output_replicas {
        1 => (0.0, 0.0),
        2 => (K.shift_sync + per_elem * (o / 2.0).floor(), elementwise(r)),
        _ => (K.sync * k + per_elem * o, reduction(align(r) * k)),
    };
    per_elem * g.z[0] as f64 + K.shuffle_base + gather + reduce
}

/// Per-iteration compute cycles. Elementwise, softmax and unary steps are priced on all loop
/// points of the step (the reference's sub-operator product), reductions and slices on
/// their output.
pub fn per_iteration(shape: &OpShape, g: &Geometry) -> f64 {
    let all = || -> f64 { g.step.iter().map(|&e| e as f64).product() };
    let out = || g.output_step_elems(shape) as f64;
    match shape.kind {
        OpKind::MatMul | OpKind::BatchMatMul => {
            let (b, m, k, n) = matmul_extents(g);
            matmul(b, m, k, n, shape.rules.small_matmul_order)
        }
        OpKind::Elementwise | OpKind::Softmax => elementwise(all()),
        OpKind::Unary => K.unary_slope * all() + K.unary_fixed,
        OpKind::Reduce => reduction(align(out()) * (all() / out())),
        OpKind::Slice => K.per_elem * out() + K.sync,
        OpKind::Gather => {
            let indices = out().max(1.0);
            let table = g.z.get(1).copied().unwrap_or(1) as f64;
            K.gather_fixed + (table / indices / 2.0).ceil() * indices + indices
        }
        OpKind::Conv => K.conv_per_flop * 2.0 * all() + K.conv_fixed,
        OpKind::Pool => K.conv_per_flop * all() + K.conv_fixed,
    }
}

/// Compute cycles: I · per-iteration cost · the dtype factor.
pub fn compute(shape: &OpShape, g: &Geometry) -> f64 {
    g.iterations as f64 * per_iteration(shape, g) * dtype_factor(shape)
}

/// (batch, m, k, n) of a (batched) matmul's compute step: batch = output dimensions indexing
/// both inputs, m = those indexing only input 0, n = only input 1, k = the rest.
/// The roles come from [`Geometry::indexes`].
pub fn matmul_extents(g: &Geometry) -> (f64, f64, f64, f64) {
    let (mut b, mut m, mut k, mut n) = (1.0, 1.0, 1.0, 1.0);
    for (&e, &ix) in g.step.iter().zip(&g.indexes) {
        let e = e as f64;
        match (ix & 1 != 0, ix & 2 != 0, ix & 4 != 0) {
            (false, _, _) => k *= e,
            (true, true, true) => b *= e,
            (true, _, true) => n *= e,
            (true, _, _) => m *= e,
        }
    }
    (b, m, k, n)
}

impl CostModel for IpuMk2 {
    fn name(&self) -> &'static str {
        "ipu-mk2"
    }

    fn cost(&self, shape: &OpShape, g: &Geometry) -> PlanCost {
        PlanCost {
            comp: compute(shape, g),
            comm: self.comm_factor * (sync_shift(g) + shuffle(shape, g)),
        }
    }

    /// The exec without the rotation rounds' sync and shift cycles (≥ 0): the same sums in
    /// the same order with 0 in their place, and rounding is monotone, so it never exceeds
    /// the exec.
    fn exec_lower_bound(&self, shape: &OpShape, g: &Geometry) -> f64 {
        compute(shape, g) + self.comm_factor * (0.0 + shuffle(shape, g))
    }

    fn warm_up(&self, shape: &OpShape, factors: &[u64], cold_z: &[u64]) -> f64 {
        let pieces = |v: usize| {
            if factors[v] > 1 {
                factors[v] as f64
            } else {
                0.0
            }
        };
        let moved: f64 = (1..factors.len())
            .map(|v| pieces(v) * cold_z[v] as f64 * (shape.tensors[v].dtype_bytes.as_f64() / 2.0))
            .sum();
        let syncs: f64 = (0..factors.len()).map(pieces).sum();
        K.per_elem * moved + K.sync * syncs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_by_hand() {
        // Elementwise, 5 elements: min(8517, 0.75·5 + 290) = 293.75 (reference Add [8,1,768]).
        assert_eq!(elementwise(5.0), 293.75);
        assert_eq!(elementwise(20000.0), 0.5 * 20000.0 + 300.0);
        // Reduction on x = 5: 1.5·5 + 175 = 182.5 (reference Sum [8,1,768], hot 12 B).
        assert_eq!(reduction(5.0), 182.5);
        assert_eq!(reduction(1000.0), 0.25 * 1000.0 + 175.0);
        assert_eq!(align(1.0), 1.0);
        assert_eq!(align(2.0), 2.0);
        assert_eq!(align(3.0), 4.0);
        assert_eq!(align(2.5), 4.0);
        assert_eq!(align(5.0), 8.0);
        assert_eq!(align(30.0), 48.0);
        // m = 8, k = 768, n = 16 → ordered m = 16, n = 8:
        // 24·⌈16/6⌉·⌈768/16⌉·⌈8/16⌉ + 514·48·1 + 113·1 + 173 = 3456 + 24672 + 286 = 28414.
        assert_eq!(matmul(1.0, 8.0, 768.0, 16.0, false), 28414.0);
        assert_eq!(
            matmul(1.0, 16.0, 768.0, 8.0, false),
            matmul(1.0, 8.0, 768.0, 16.0, false),
            "m, n ordered"
        );
        // The reference's small-matrix order puts the smaller extent in sixes when both are
        // ≤ 16: 24·⌈8/6⌉·48·1 + 24672 + 286 = 27262.
        assert_eq!(matmul(1.0, 16.0, 768.0, 8.0, true), 27262.0);
        assert_eq!(
            matmul(1.0, 32.0, 768.0, 8.0, true),
            matmul(1.0, 32.0, 768.0, 8.0, false)
        );
    }
}
