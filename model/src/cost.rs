//! Cost models (SPEC §3): cycles of a plan's compute and communication. The trait
//! ([`CostModel`]) belongs to its consumer, `plan`; this module holds the implementations and
//! [`for_chip`], so the dependency runs one way: cost → plan.

mod ipu_mk2;
mod roofline;
mod tensix;

pub use ipu_mk2::IpuMk2;
pub use roofline::Roofline;
pub use tensix::{fidelity_for, peak_flops_per_s, Fidelity, Tensix};

use crate::chip::{ChipSpec, CostModelSpec};
use crate::dtype::{Dtype, Dtypes};
use crate::error::{ModelError, Result};
pub use crate::plan::{CostModel, PlanCost};

/// The cost model a chip names, for fp16 everywhere (the default dtypes).
pub fn for_chip(chip: &ChipSpec) -> Box<dyn CostModel> {
    build(chip, 1.0)
}

/// The dtypes the IPU-Mk2 model prices: its constants were measured with fp16 (AMP), and
/// fp32 scales them (`dtype_factor` in the IPU model: ×4 on contractions, ×2 otherwise).
pub const IPU_MK2_DTYPES: [Dtype; 2] = [Dtype::Fp16, Dtype::Fp32];

/// The cost model a chip names, for a graph of `dtypes`. The compute rate follows the
/// activations' dtype (the output's, which a matmul accumulates and its inputs are widened
/// to: int8 weights beside fp16 activations compute at fp16's rate); bytes follow each
/// tensor's own. The IPU-Mk2 model refuses every dtype but fp16 and fp32; the roofline scales
/// its peak compute by the chip's `<dtype>_speedup_x` key (default 1.0, fp16's rate).
pub fn for_chip_with(chip: &ChipSpec, dtypes: &Dtypes) -> Result<Box<dyn CostModel>> {
    if let CostModelSpec::IpuMk2 { .. } = chip.cost_model {
        if let Some(d) = dtypes
            .distinct()
            .into_iter()
            .find(|d| !IPU_MK2_DTYPES.contains(d))
        {
            return Err(ModelError::Invalid(format!(
                "{} cost model on {}: dtype {d} not modelled ({})",
                chip.cost_model.name(),
                chip.name,
                IPU_MK2_DTYPES.map(Dtype::as_str).join(", ")
            )));
        }
    }
    Ok(build(chip, chip.cost_model.speedup(dtypes.activations)))
}

fn build(chip: &ChipSpec, speedup: f64) -> Box<dyn CostModel> {
    match &chip.cost_model {
        CostModelSpec::IpuMk2 { .. } => Box::new(IpuMk2 {
            comm_factor: chip.cost_model.comm_factor(chip.cores),
        }),
        CostModelSpec::Roofline {
            peak_flops_per_s_per_core,
            noc_bytes_per_s_per_core,
            sync_latency_cycles,
            ..
        } => Box::new(Roofline {
            flops_per_cycle: peak_flops_per_s_per_core * speedup / chip.clock_hz,
            noc_bytes_per_cycle: noc_bytes_per_s_per_core / chip.clock_hz,
            sync_cycles: *sync_latency_cycles,
        }),
        CostModelSpec::Tensix {
            math_fidelity,
            lofi_tile_cycles,
            matmul_efficiency_pct,
            unpack_bytes_per_cycle,
            vector_tile_cycles,
            op_overhead_cycles,
            noc_bytes_per_s_per_core,
            sync_latency_cycles,
        } => Box::new(Tensix {
            fidelity: math_fidelity.fixed(),
            lofi_cycles: lofi_tile_cycles * 100.0 / matmul_efficiency_pct,
            unpack_bytes_per_cycle: *unpack_bytes_per_cycle,
            vector_tile_cycles: *vector_tile_cycles,
            op_cycles: *op_overhead_cycles,
            noc_bytes_per_cycle: noc_bytes_per_s_per_core / chip.clock_hz,
            sync_cycles: *sync_latency_cycles,
        }),
    }
}
