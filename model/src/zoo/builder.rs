//! Small helpers that append operators to a chain; the zoo's model builders are written with
//! them so that every model uses the same operator shapes and roles.

use crate::dtype::{Dtype, DtypeBytes, Dtypes};
use crate::graph::{OpKind, Operator, Residency, Role, Tensor};

/// A value in the chain: its source name and shape.
#[derive(Clone, Debug)]
pub struct Act {
    /// The producing operator's name (or a graph input's name).
    pub source: String,
    /// Shape in elements.
    pub shape: Vec<u64>,
}

impl Act {
    /// The same data viewed with another shape of equal size (a free reshape).
    pub fn view(&self, shape: &[u64]) -> Act {
        debug_assert_eq!(
            self.shape.iter().product::<u64>(),
            shape.iter().product::<u64>()
        );
        Act {
            source: self.source.clone(),
            shape: shape.to_vec(),
        }
    }

    fn rows(&self) -> u64 {
        self.shape[..self.shape.len() - 1].iter().product()
    }

    fn last(&self) -> u64 {
        self.shape[self.shape.len() - 1]
    }
}

/// An input of an operator under construction.
pub struct In {
    source: String,
    role: Role,
    axes: Vec<usize>,
    shape: Vec<u64>,
    /// Named tensors keep their declared shape; activations read the extents of the loop
    /// dimensions that index them (a slice reads only its columns).
    declared: bool,
}

impl In {
    /// An activation read on the given dimensions.
    pub fn act(a: &Act, axes: &[usize]) -> In {
        In {
            source: a.source.clone(),
            role: Role::Activation,
            axes: axes.to_vec(),
            shape: a.shape.clone(),
            declared: false,
        }
    }

    /// The activation `source` read on `axes`, its extents those of the loop dimensions
    /// indexing it.
    pub fn on(source: &str, axes: &[usize]) -> In {
        In {
            source: source.into(),
            role: Role::Activation,
            axes: axes.to_vec(),
            shape: vec![0; axes.len()],
            declared: false,
        }
    }

    /// A tensor with an explicit role (weight, KV cache, graph input).
    pub fn named(source: &str, role: Role, axes: &[usize], shape: &[u64]) -> In {
        In {
            source: source.into(),
            role,
            axes: axes.to_vec(),
            shape: shape.to_vec(),
            declared: true,
        }
    }
}

/// Appends operators to a chain.
pub struct Builder {
    /// The operators so far.
    pub ops: Vec<Operator>,
    dtypes: Dtypes,
    /// Bytes per element of optimizer state (a training step's Adam state).
    state_bytes: DtypeBytes,
    /// Gated FFNs as separate gate and up matmuls ([`super::moe::ffn`]).
    pub separate_gate_up: bool,
}

fn identity(rank: usize) -> Vec<usize> {
    (0..rank).collect()
}

impl Builder {
    /// An empty chain whose weights, KV cache and activations have `dtypes`.
    pub fn new(dtypes: Dtypes) -> Builder {
        Builder::continuing(Vec::new(), dtypes, dtypes.activations.bytes())
    }

    /// A chain that continues `ops`, its optimizer state `state_bytes` per element.
    pub fn continuing(ops: Vec<Operator>, dtypes: Dtypes, state_bytes: DtypeBytes) -> Builder {
        Builder {
            ops,
            dtypes,
            state_bytes,
            separate_gate_up: false,
        }
    }

    /// The element types the chain is built with.
    pub fn dtypes(&self) -> Dtypes {
        self.dtypes
    }

    /// Makes the weights appended from now on `d` (unchanged for `None`); returns the weight
    /// dtype before, to restore it.
    pub fn weights_as(&mut self, d: Option<Dtype>) -> Dtype {
        let before = self.dtypes.weights;
        if let Some(d) = d {
            self.dtypes.weights = d;
        }
        before
    }

    /// Bytes per element of a tensor with `role`.
    pub(crate) fn bytes(&self, role: Role) -> DtypeBytes {
        match role {
            Role::Weight => self.dtypes.weights,
            Role::KvCache => self.dtypes.kv,
            Role::Activation => self.dtypes.activations,
            Role::OptimizerState => return self.state_bytes,
        }
        .bytes()
    }

    /// Appends an operator with loop `dims`; its output is indexed by `out_axes`.
    pub fn op(
        &mut self,
        name: &str,
        kind: OpKind,
        op_type: &str,
        dims: &[u64],
        out_axes: &[usize],
        inputs: Vec<In>,
    ) -> Act {
        let shape: Vec<u64> = out_axes.iter().map(|&d| dims[d]).collect();
        let tensor = |source: String, role, axes: &[usize], shape: Vec<u64>| Tensor {
            source,
            axes: axes.iter().map(|&d| vec![d]).collect(),
            shape,
            dtype_bytes: self.bytes(role),
            role,
            producer: None,
            residency: Residency::OnChip,
        };
        let mut tensors = vec![tensor(
            name.into(),
            Role::Activation,
            out_axes,
            shape.clone(),
        )];
        for i in inputs {
            let shape: Vec<u64> = if !i.declared && i.shape.len() == i.axes.len() {
                i.axes.iter().map(|&d| dims[d]).collect()
            } else {
                i.shape
            };
            tensors.push(tensor(i.source, i.role, &i.axes, shape));
        }
        self.ops.push(Operator {
            name: name.into(),
            kind,
            op_type: op_type.into(),
            dims: dims.to_vec(),
            tensors,
            after: Vec::new(),
            moe: None,
        });
        Act {
            source: name.into(),
            shape,
        }
    }

    /// `x[m, k] · W[k, n]` (+ bias as a separate Add), W named `weight`.
    pub fn linear(&mut self, name: &str, x: &Act, n: u64, weight: &str, bias: bool) -> Act {
        let (m, k) = (x.rows(), x.last());
        let x2 = x.view(&[m, k]);
        let y = self.op(
            name,
            OpKind::MatMul,
            "Dot",
            &[m, n, k],
            &[0, 1],
            vec![
                In::act(&x2, &[0, 2]),
                In::named(weight, Role::Weight, &[2, 1], &[k, n]),
            ],
        );
        if !bias {
            return y;
        }
        self.op(
            &format!("{name}.bias"),
            OpKind::Elementwise,
            "Add",
            &[m, n],
            &[0, 1],
            vec![
                In::act(&y, &[0, 1]),
                In::named(&format!("{weight}.b"), Role::Weight, &[1], &[n]),
            ],
        )
    }

    /// A unary elementwise operator (or a binary one with a constant operand).
    pub fn unary(&mut self, name: &str, op_type: &str, x: &Act) -> Act {
        let r = identity(x.shape.len());
        self.op(
            name,
            OpKind::Unary,
            op_type,
            &x.shape,
            &r,
            vec![In::act(x, &r)],
        )
    }

    /// A binary elementwise operator on equal shapes.
    pub fn binary(&mut self, name: &str, op_type: &str, a: &Act, b: &Act) -> Act {
        let r = identity(a.shape.len());
        let ins = vec![In::act(a, &r), In::act(b, &r)];
        self.op(name, OpKind::Elementwise, op_type, &a.shape, &r, ins)
    }

    /// `x op w` with a weight vector broadcast along all but the last axis.
    pub fn with_vector(&mut self, name: &str, op_type: &str, x: &Act, weight: &str) -> Act {
        let r = identity(x.shape.len());
        let last = [r.len() - 1];
        let ins = vec![
            In::act(x, &r),
            In::named(weight, Role::Weight, &last, &[x.last()]),
        ];
        self.op(name, OpKind::Elementwise, op_type, &x.shape, &r, ins)
    }

    /// `x op r` where `r` has one value per row of `x` (a norm or softmax step: `kind`).
    pub fn with_rows(&mut self, name: &str, kind: OpKind, op_type: &str, x: &Act, r: &Act) -> Act {
        let all = identity(x.shape.len());
        let lead = &all[..all.len() - 1];
        let ins = vec![In::act(x, &all), In::act(r, lead)];
        self.op(name, kind, op_type, &x.shape, &all, ins)
    }

    /// `x[m, h] op c` where `c` is a per-sample conditioning vector (DiT's adaLN output),
    /// read whole.
    pub fn with_cond(&mut self, name: &str, op_type: &str, x: &Act, c: &Act) -> Act {
        let ins = vec![In::act(x, &[0, 1]), In::act(c, &[1])];
        self.op(name, OpKind::Elementwise, op_type, &x.shape, &[0, 1], ins)
    }

    /// Reduces the last axis with `kind` (sum or softmax step).
    pub fn reduce_last(&mut self, name: &str, kind: OpKind, op_type: &str, x: &Act) -> Act {
        let all = identity(x.shape.len());
        let lead = &all[..all.len() - 1];
        self.op(name, kind, op_type, &x.shape, lead, vec![In::act(x, &all)])
    }
}
