//! Cost models (SPEC §3): cycles of a plan's compute and communication. A trait, so a chip
//! can name its model and a new one can be added without touching plans or schedulers.

mod ipu_mk2;
mod roofline;

pub use ipu_mk2::IpuMk2;
pub use roofline::Roofline;

use crate::chip::{ChipSpec, CostModelSpec};
use crate::plan::{Geometry, OpShape};

/// Cycles of one plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanCost {
    /// Compute cycles (I · per-iteration cost).
    pub comp: f64,
    /// Communication cycles: synchronisation, shifts and the output shuffle.
    pub comm: f64,
}

impl PlanCost {
    /// comp + comm: the executing operator's critical path.
    pub fn exec(&self) -> f64 {
        self.comp + self.comm
    }
}

/// Prices plans for one chip.
pub trait CostModel: Send + Sync {
    /// The model's name (`ipu-mk2`, `roofline`).
    fn name(&self) -> &'static str;
    /// Compute and communication cycles of a plan.
    fn cost(&self, shape: &OpShape, g: &Geometry) -> PlanCost;
    /// Cycles to turn the cold layout into the hot one: `factors[v]` is how many cold pieces
    /// of tensor v make one hot piece (1 = no change), `cold_z[v]` its cold tile elements.
    fn warm_up(&self, shape: &OpShape, factors: &[u64], cold_z: &[u64]) -> f64;
}

/// The cost model a chip names.
pub fn for_chip(chip: &ChipSpec) -> Box<dyn CostModel> {
    match &chip.cost_model {
        CostModelSpec::IpuMk2 {
            cores_per_chip,
            inter_chip_comm_factor,
        } => Box::new(IpuMk2 {
            comm_factor: if chip.cores > *cores_per_chip {
                *inter_chip_comm_factor
            } else {
                1.0
            },
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
