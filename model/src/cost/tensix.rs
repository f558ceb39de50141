//! The Tensix cost model: Tenstorrent's Wormhole and Blackhole cores (docs/chips.md,
//! "Tensix cost model"). A core's matrix engine multiplies 8×16 by 16×16 per cycle, so one
//! 32×32×32 tile product takes 16 cycles at LoFi and 32, 48, 64 at HiFi2, HiFi3, HiFi4
//! (Tenstorrent, tt-metal `tech_reports/GEMM_FLOPS`). Data movement runs on the core's own
//! RISC-V movers beside the math, so an iteration costs the larger of its compute and its
//! NoC transfer; every operator pays a fixed launch cost. The efficiency and the launch cost
//! are fitted to the published GEMM microbenchmarks (`model/tests/model/tensix.rs` reproduces
//! each one).

use super::{CostModel, PlanCost};
pub use crate::chip::Fidelity;
use crate::plan::{Geometry, OpShape};

/// Rows, and columns, of one Tensix tile: matrices are stored and multiplied in 32×32 tiles.
pub const TILE: f64 = 32.0;

/// The Tensix model's constants, in cycles of the chip's clock.
#[derive(Clone, Copy, Debug)]
pub struct Tensix {
    /// The fidelity of every matmul, or `None`: each by its narrowest input
    /// ([`fidelity_for`]).
    pub fidelity: Option<Fidelity>,
    /// Cycles of one 32×32×32 tile product's math at LoFi, efficiency included
    /// (`lofi_tile_cycles · 100 / matmul_efficiency_pct`); a fidelity of p passes takes p times this.
    pub lofi_cycles: f64,
    /// Bytes of input tiles the unpacker feeds the matrix engine per cycle: a tile product
    /// takes at least (bytes of its two input tiles) / this.
    pub unpack_bytes_per_cycle: f64,
    /// Cycles of one 32×32 tile of an elementwise, unary, softmax or reduction step.
    pub vector_tile_cycles: f64,
    /// Fixed cycles of every operator (launch, semaphores, the first tile's latency).
    pub op_cycles: f64,
    /// NoC bytes per cycle of one core.
    pub noc_bytes_per_cycle: f64,
    /// Cycles of one synchronisation between cores.
    pub sync_cycles: f64,
}

/// The fidelity Tenstorrent's LLM configurations give a matmul whose narrowest input has
/// `bytes` per element (tt-metal `tech_reports/LLMs/llms.md`: "HiFi4 for BF16 weights, HiFi2
/// for BFP8 weights, LoFi for BFP4 weights"): 4-bit block floats (9/16 byte) at LoFi, 8-bit
/// types (up to bfp8's 17/16) at HiFi2, 16-bit and wider at HiFi4.
pub fn fidelity_for(bytes: f64) -> Fidelity {
    if bytes <= 9.0 / 16.0 {
        Fidelity::LoFi
    } else if bytes <= 17.0 / 16.0 {
        Fidelity::HiFi2
    } else {
        Fidelity::HiFi4
    }
}

/// Bytes per element of a tensor, as a float.
fn elem_bytes(t: &crate::plan::TensorShape) -> f64 {
    t.dtype_bytes.as_f64()
}

/// The chip's matmul peak at fidelity `f` in FLOP/s, (ideal, sustained at the fitted
/// efficiency): every core's engine at one 32×32×32 product (65,536 FLOP) per
/// `lofi_tile_cycles` · passes cycles. `None` for a chip without the Tensix model.
pub fn peak_flops_per_s(chip: &crate::chip::ChipSpec, f: Fidelity) -> Option<(f64, f64)> {
    match chip.cost_model {
        crate::chip::CostModelSpec::Tensix {
            lofi_tile_cycles,
            matmul_efficiency_pct,
            ..
        } => {
            let flops = 2.0 * TILE * TILE * TILE;
            let ideal = chip.cores as f64 * flops / (lofi_tile_cycles * f.passes()) * chip.clock_hz;
            Some((ideal, ideal * matmul_efficiency_pct / 100.0))
        }
        _ => None,
    }
}

/// Tiles of an extent: rounded up to whole 32-element tiles.
fn tiles(e: f64) -> f64 {
    (e / TILE).ceil()
}

impl Tensix {
    /// Compute cycles: every iteration's tile products (matmul) or tiles (the rest).
    fn comp(&self, shape: &OpShape, g: &Geometry) -> f64 {
        let per_iteration = if shape.kind.is_contraction() {
            let (b, m, k, n) = super::ipu_mk2::matmul_extents(g);
            b * tiles(m) * tiles(k) * tiles(n) * self.tile_product_cycles(shape)
        } else {
            // Whole 32×32 tiles of the step's loop points.
            let points: f64 = g.step.iter().map(|&e| e as f64).product();
            (points / (TILE * TILE)).ceil() * self.vector_tile_cycles
        };
        g.iterations as f64 * per_iteration
    }

    /// Cycles of one tile product: its math, or the unpacking of its two input tiles when
    /// that is slower (wide inputs at low fidelity).
    fn tile_product_cycles(&self, shape: &OpShape) -> f64 {
        let inputs = &shape.tensors[1..shape.tensors.len().min(3)];
        let input_bytes: f64 = inputs.iter().map(|t| TILE * TILE * elem_bytes(t)).sum();
        let narrowest = inputs.iter().map(elem_bytes).fold(f64::INFINITY, f64::min);
        let fidelity = self.fidelity.unwrap_or_else(|| fidelity_for(narrowest));
        (self.lofi_cycles * fidelity.passes()).max(input_bytes / self.unpack_bytes_per_cycle)
    }

    /// NoC cycles: the rotation rounds' bytes (`shifts`) and the output replicas' reduction.
    fn transfer(&self, shape: &OpShape, g: &Geometry, shifted: f64) -> f64 {
        let shuffled = (g.output_replicas - 1) as f64 * g.z[0] as f64;
        (shifted + shuffled * shape.dtype_bytes.as_f64()) / self.noc_bytes_per_cycle
    }

    /// Fixed cycles: the launch and one synchronisation per shift and per reduction.
    fn fixed(&self, g: &Geometry, shifts: f64) -> f64 {
        let syncs = shifts + f64::from(u8::from(g.output_replicas > 1));
        self.op_cycles + syncs * self.sync_cycles
    }
}

impl CostModel for Tensix {
    fn name(&self) -> &'static str {
        "tensix"
    }

    /// comp is the math; comm is what the NoC adds beyond it (movers overlap the math) and
    /// the fixed cycles: exec = max(math, transfer) + fixed.
    fn cost(&self, shape: &OpShape, g: &Geometry) -> PlanCost {
        let comp = self.comp(shape, g);
        let (shifts, shifted) = g.shift_totals();
        let transfer = self.transfer(shape, g, shifted);
        PlanCost {
            comp,
            comm: (transfer - comp).max(0.0) + self.fixed(g, shifts),
        }
    }

    /// The math and the launch: the exec with no transfer beyond the math and no shift's
    /// synchronisation (both ≥ 0, and rounding is monotone: never above the exec).
    fn exec_lower_bound(&self, shape: &OpShape, g: &Geometry) -> f64 {
        self.comp(shape, g) + (0.0 + self.fixed(g, 0.0))
    }

    fn warm_up(&self, shape: &OpShape, factors: &[u64], cold_z: &[u64]) -> f64 {
        super::roofline::warm_up_at(
            shape,
            factors,
            cold_z,
            self.sync_cycles,
            self.noc_bytes_per_cycle,
        )
    }
}
