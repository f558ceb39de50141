//! The interface plans are priced through: a [`CostModel`] turns a plan's [`Geometry`] into
//! cycles. It lives here, with its consumer, so `cost` (the implementations) depends on
//! `plan` and never the other way round.

use super::{Geometry, OpShape};

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

/// Prices plans for one chip. Its `Debug` form names the model and every parameter exactly
/// (the plan cache keys tables by it).
pub trait CostModel: Send + Sync + std::fmt::Debug {
    /// The model's name (`ipu-mk2`, `roofline`).
    fn name(&self) -> &'static str;
    /// Compute and communication cycles of a plan.
    fn cost(&self, shape: &OpShape, g: &Geometry) -> PlanCost;
    /// A lower bound on `cost(shape, g).exec()` that reads everything of `g` but its rounds
    /// (enumeration calls it after [`Geometry::set_steps`], before
    /// [`Geometry::set_rounds`]). It must never exceed the exec, in floating point too:
    /// plan tables skip the plans whose bound shows they cannot reach the hot front, and a
    /// bound above a plan's exec would drop it wrongly (docs/plans.md, "Skipping plans"; the
    /// proof also needs costs that are never NaN). The default, 0, skips nothing.
    fn exec_lower_bound(&self, shape: &OpShape, g: &Geometry) -> f64 {
        let _ = (shape, g);
        0.0
    }
    /// Cycles to turn the cold layout into the hot one: `factors[v]` is how many cold pieces
    /// of tensor v make one hot piece (1 = no change), `cold_z[v]` its cold tile elements.
    fn warm_up(&self, shape: &OpShape, factors: &[u64], cold_z: &[u64]) -> f64;
}
