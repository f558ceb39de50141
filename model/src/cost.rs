//! Cost models (SPEC §3): cycles of a plan's compute and communication. The trait
//! ([`CostModel`]) belongs to its consumer, `plan`; this module holds the implementations and
//! [`for_chip`], so the dependency runs one way: cost → plan.

mod ipu_mk2;
mod roofline;

pub use ipu_mk2::IpuMk2;
pub use roofline::Roofline;

use crate::chip::{ChipSpec, CostModelSpec};
pub use crate::plan::{CostModel, PlanCost};

/// The cost model a chip names.
pub fn for_chip(chip: &ChipSpec) -> Box<dyn CostModel> {
    match &chip.cost_model {
        CostModelSpec::IpuMk2 { .. } => Box::new(IpuMk2 {
            comm_factor: chip.cost_model.comm_factor(chip.cores),
        }),
        CostModelSpec::Roofline {
            peak_flops_per_s_per_core,
            noc_bytes_per_s_per_core,
            sync_latency_cycles,
        } => Box::new(Roofline {
            flops_per_cycle: peak_flops_per_s_per_core / chip.clock_hz,
            noc_bytes_per_cycle: noc_bytes_per_s_per_core / chip.clock_hz,
            sync_cycles: *sync_latency_cycles,
        }),
    }
}
