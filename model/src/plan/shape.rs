//! The facts about an operator that plan enumeration needs, extracted once.

use super::rules::PlanRules;
use crate::graph::{OpKind, Operator, Residency};

/// One tensor as plan enumeration sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorShape {
    /// Per axis, the loop dimensions indexing it.
    pub axes: Vec<Vec<usize>>,
    /// Whether the tensor is preloaded from HBM (counts toward the cold footprint).
    pub from_hbm: bool,
    /// Bytes per element: its own, so int8 weights beside fp16 activations count 1 and 2.
    pub dtype_bytes: u64,
}

impl TensorShape {
    /// Whether dimension `d` indexes this tensor.
    pub fn indexed_by(&self, d: usize) -> bool {
        self.axes.iter().any(|a| a.contains(&d))
    }
}

/// An operator reduced to its planning signature: identical signatures plan identically.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpShape {
    /// What it computes.
    pub kind: OpKind,
    /// Loop extents.
    pub dims: Vec<u64>,
    /// Output first, then inputs.
    pub tensors: Vec<TensorShape>,
    /// Bytes per element of the output (the activations' dtype, which the compute runs in);
    /// each tensor's own is in [`TensorShape::dtype_bytes`].
    pub dtype_bytes: u64,
    /// Where planning follows the reference artifact instead of SPEC §3.
    pub rules: PlanRules,
}

impl OpShape {
    /// Extracts the planning signature of an operator, to be planned by `rules`.
    pub fn of(op: &Operator, rules: PlanRules) -> OpShape {
        OpShape {
            kind: op.kind,
            dims: op.dims.clone(),
            tensors: op
                .tensors
                .iter()
                .enumerate()
                .map(|(i, t)| TensorShape {
                    axes: t.axes.clone(),
                    from_hbm: i > 0 && t.residency == Residency::Hbm,
                    dtype_bytes: t.dtype_bytes,
                })
                .collect(),
            dtype_bytes: op.output().dtype_bytes,
            rules,
        }
    }

    /// Floating-point operations of the whole operator (conv/pool fallback cost model).
    pub fn flops(&self) -> f64 {
        let points: f64 = self.dims.iter().map(|&d| d as f64).product();
        if self.kind.is_contraction() {
            2.0 * points
        } else {
            points
        }
    }

    /// Dimensions indexing the output.
    pub fn output_dims(&self) -> Vec<usize> {
        (0..self.dims.len())
            .filter(|&d| self.tensors[0].indexed_by(d))
            .collect()
    }
}
