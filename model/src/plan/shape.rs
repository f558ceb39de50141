//! The facts about an operator that plan enumeration needs, extracted once.

use super::rules::PlanRules;
use crate::dtype::DtypeBytes;
use crate::graph::{OpKind, Operator, Residency};

/// One tensor as plan enumeration sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorShape {
    /// Per axis, the loop dimensions indexing it.
    pub axes: Vec<Vec<usize>>,
    /// Whether the tensor is preloaded from HBM (counts toward the cold footprint).
    pub from_hbm: bool,
    /// Bytes per element: its own, so int8 weights beside fp16 activations count 1 and 2
    /// (bfp8 weights 17/16).
    pub dtype_bytes: DtypeBytes,
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
    pub dtype_bytes: DtypeBytes,
    /// Where planning follows the reference artifact instead of SPEC §3.
    pub rules: PlanRules,
}

impl OpShape {
    /// Extracts the planning signature of an operator, to be planned by `rules`.
    pub fn of(op: &Operator, rules: PlanRules) -> OpShape {
        let shape = OpShape::as_written(op, rules);
        if op.kind == OpKind::Gather && !rules.gather_holds_table {
            return shape.reading_rows();
        }
        shape
    }

    /// A hash of what [`OpShape::of`] reads from `op`, computed without building the shape
    /// (an MoE run looks up tens of thousands of operators per step). Operators that
    /// [`OpShape::matches`] alike have equal prints.
    pub fn print(op: &Operator, rules: PlanRules) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        (op.kind, &op.dims, op.tensors.len(), rules).hash(&mut h);
        for (i, t) in op.tensors.iter().enumerate() {
            (
                &t.axes,
                i > 0 && t.residency == Residency::Hbm,
                t.dtype_bytes,
            )
                .hash(&mut h);
        }
        h.finish()
    }

    /// Whether `OpShape::of(op, rules)` is this shape; without building it, except for a
    /// gather that reads rows (whose shape is rewritten).
    pub fn matches(&self, op: &Operator, rules: PlanRules) -> bool {
        if op.kind == OpKind::Gather && !rules.gather_holds_table {
            return *self == OpShape::of(op, rules);
        }
        self.kind == op.kind
            && self.rules == rules
            && self.dims == op.dims
            && self.dtype_bytes == op.output().dtype_bytes
            && self.tensors.len() == op.tensors.len()
            && self
                .tensors
                .iter()
                .zip(&op.tensors)
                .enumerate()
                .all(|(i, (s, t))| {
                    s.axes == t.axes
                        && s.from_hbm == (i > 0 && t.residency == Residency::Hbm)
                        && s.dtype_bytes == t.dtype_bytes
                })
    }

    /// The signature of `op` as its tensors are written.
    fn as_written(op: &Operator, rules: PlanRules) -> OpShape {
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

    /// A gather as the rows it reads: the table from HBM is indexed by the output's row
    /// dimensions instead of the vocabulary's, and the vocabulary dimensions (those indexing
    /// the table but not the output) become extent 1. So a plan's cold and hot tiles are the
    /// rows this lookup fetches, as its HBM bytes already are ([`Operator::hbm_bytes`]), not
    /// a share of the whole table. A gather of another layout is left as written.
    fn reading_rows(mut self) -> OpShape {
        let output = self.output_dims();
        let Some(table) = self.tensors.iter().skip(1).position(|t| t.from_hbm) else {
            return self;
        };
        let table = table + 1;
        let vocabulary: Vec<usize> = (0..self.dims.len())
            .filter(|&d| self.tensors[table].indexed_by(d) && !output.contains(&d))
            .collect();
        let rows: Vec<usize> = output
            .iter()
            .copied()
            .filter(|&d| !self.tensors[table].indexed_by(d))
            .collect();
        let plain = self.tensors[table].axes.iter().all(|a| a.len() == 1);
        let [row] = rows[..] else { return self };
        if vocabulary.is_empty() || !plain {
            return self;
        }
        for axis in &mut self.tensors[table].axes {
            if vocabulary.contains(&axis[0]) {
                axis[0] = row;
            }
        }
        // Several vocabulary axes would all become the row axis; keep one.
        let mut seen = false;
        self.tensors[table]
            .axes
            .retain(|a| a[0] != row || !std::mem::replace(&mut seen, true));
        for d in vocabulary {
            self.dims[d] = 1;
        }
        self
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
