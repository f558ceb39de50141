//! A training step built from a forward chain: the loss gradient, the backward pass (reverse
//! mode over the IR, operator by operator) and one Adam update per parameter (docs/training.md).
//!
//! The IR is unchanged: backward operators are operators of the same kinds.
//!
//! - A (batched) MatMul `Y = A·B` gives one contraction per differentiable input, over the
//!   same loop points with the input as the output: `dA = dY·Bᵀ` and `dB = Aᵀ·dY`. Each has
//!   the forward's 2·Π dims FLOPs, so a MatMul costs 3× its forward FLOPs in a step.
//! - Every other operator gives, per differentiable input, one elementwise operator over the
//!   forward's loop points (a Reduce over the dimensions a broadcast input does not have, e.g.
//!   a norm scale or a bias), reading `dY` and the forward tensors its local derivative needs
//!   ([`local_needs`]). Adds and Subtracts pass `dY` through (no operator); a Slice's gradient
//!   is `dY` placed in its columns, and the slices of one tensor are joined by a concat that
//!   costs nothing (the importer folds Concat the same way), read as one spilled tensor.
//!   A gather (embedding lookup) scatters `dY` into its table's gradient, one FLOP per row
//!   element.
//! - A value read by several operators gets its gradients summed by Adds, in the order they
//!   were produced.
//! - The loss gradient is one elementwise operator over the last operator's output (1 FLOP
//!   per element; a softmax cross-entropy costs a few, < 0.1 % of a step).
//! - Activations are stashed, not recomputed: backward operators read the forward tensors,
//!   which the residency rule (`graph/residency.rs`) loads from HBM like any spilled value.
//!   Recompute is not built.
//! - Each parameter is updated as soon as its gradient is complete (when the sweep reaches its
//!   first reader), by `Adam` operators over its elements (in chunks of rows, at most
//!   [`UPDATE_CHUNK`] elements each) that read the gradient and the optimizer state (two
//!   moments and the master copy, [`AdamState`]) and write the state and the parameter back. The stage model only loads from HBM; the write-back is charged as
//!   second HBM inputs of the update (the state again and the parameter), because reads and
//!   writes share the HBM bandwidth. The IR counts 1 FLOP per updated element (AdamW takes
//!   about 12; at ≥ 1,000 tokens per step that is < 0.1 % of the step's FLOPs).
//!
//! FLOPs. With N the parameters a token is multiplied by (every weight but the embedding
//! tables that are only gathered), a dense transformer's forward MatMuls do 2·N FLOPs per
//! token, and their two gradient MatMuls 4·N: 6·N per token. The attention score and context
//! BatchMatMuls add 3 · 2 · 2·S·d_attn per token and layer (the graph computes full S×S
//! scores), 12·L·S·d_attn in all, and the elementwise operators a few per activation element.
//! So F ≈ 6·N·T + 12·L·S·d_attn·T for T = batch·S tokens; a test checks both.

use super::builder::{Builder, In};
use crate::dtype::{Dtype, DtypeBytes, Dtypes};
use crate::error::{ModelError, Result};
use crate::graph::{OpKind, Operator, Role, Tensor};
use std::collections::{BTreeMap, HashMap};

/// Element types of Adam's state: the two moments and the master copy of the weights
/// (`None`: no master copy, the update writes the weights directly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AdamState {
    /// First and second moments.
    pub moments: Dtype,
    /// The master weights.
    pub master: Option<Dtype>,
}

impl Default for AdamState {
    /// fp32 moments and an fp32 master copy: mixed-precision training's usual state.
    fn default() -> AdamState {
        AdamState {
            moments: Dtype::Fp32,
            master: Some(Dtype::Fp32),
        }
    }
}

/// What `--optimizer-dtype` accepts, for error messages.
pub const ACCEPTED: &str = "a dtype (fp32, fp16, bf16, fp8, int8) for the moments and the master \
                            copy, or m=DTYPE,master=DTYPE|none";

impl AdamState {
    /// Bytes of state per parameter.
    pub fn bytes_per_parameter(&self) -> DtypeBytes {
        let sixteenths = |d: Dtype| d.bytes().in_sixteenths();
        DtypeBytes::sixteenths(2 * sixteenths(self.moments) + self.master.map_or(0, sixteenths))
    }

    /// fp32 moments and master (the default, printed nowhere).
    pub fn is_default(&self) -> bool {
        *self == AdamState::default()
    }

    /// Parses `fp32` (moments and master), or `m=bf16,master=fp32` / `m=bf16,master=none`.
    pub fn parse(s: &str) -> std::result::Result<AdamState, String> {
        let bad = || format!("--optimizer-dtype '{s}': expected {ACCEPTED}");
        // Block floats are storage for weights and KV, not optimizer state.
        let dtype = |d: &str| {
            Dtype::ALL
                .into_iter()
                .find(|x| x.as_str() == d && !x.is_block())
        };
        if let Some(d) = dtype(s) {
            return Ok(AdamState {
                moments: d,
                master: Some(d),
            });
        }
        let (m, master) = s.split_once(',').ok_or_else(bad)?;
        let m = m.strip_prefix("m=").and_then(dtype).ok_or_else(bad)?;
        let master = match master.strip_prefix("master=").ok_or_else(bad)? {
            "none" => None,
            d => Some(dtype(d).ok_or_else(bad)?),
        };
        Ok(AdamState { moments: m, master })
    }
}

impl std::fmt::Display for AdamState {
    /// `fp32` when moments and master agree, else `m=bf16,master=fp32` (or `master=none`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.master {
            Some(d) if d == self.moments => write!(f, "{d}"),
            Some(d) => write!(f, "m={},master={d}", self.moments),
            None => write!(f, "m={},master=none", self.moments),
        }
    }
}

/// A gradient of a value: the operator (or passed-through value) holding it, and whether it
/// covers only the columns a Slice read (to be joined with its siblings by a free concat).
#[derive(Clone, Debug)]
struct Grad {
    source: String,
    piece: bool,
}

/// The training step of `forward` (a chain whose last operator's output is the loss input):
/// `forward` followed by the loss gradient, the backward pass and the parameter updates.
/// Residency and producers are left to the caller, who classifies the whole chain.
pub fn training_step(
    forward: &[Operator],
    dtypes: Dtypes,
    adam: AdamState,
) -> Result<Vec<Operator>> {
    for op in forward {
        let compound = op
            .tensors
            .iter()
            .any(|t| t.axes.iter().any(|a| a.len() != 1));
        if matches!(op.kind, OpKind::Conv | OpKind::Pool) || compound {
            return Err(ModelError::Invalid(format!(
                "training: operator '{}' ({}): the backward pass of convolutions and pools is \
                 not built; use --mode forward-batch for the forward pass alone",
                op.name, op.kind
            )));
        }
    }
    let Some(last) = forward.last() else {
        return Err(ModelError::Invalid(
            "training: the graph has no operators".into(),
        ));
    };
    let mut s = Sweep::new(forward, dtypes, adam);
    let out = last.output();
    let r = identity(out.shape.len());
    let ins = vec![
        reading(out, &r),
        In::named("loss.target", Role::Activation, &[0], &out.shape[..1]),
    ];
    let loss = s.b.op(
        "loss.grad",
        OpKind::Elementwise,
        "LossGrad",
        &out.shape,
        &r,
        ins,
    );
    s.add_grad(&out.source, loss.source, false);
    // Every parameter's first reader: its update follows that reader's backward.
    let mut first_reader: BTreeMap<usize, Vec<&Tensor>> = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, op) in forward.iter().enumerate() {
        for t in op.inputs() {
            if t.role == Role::Weight && seen.insert(t.source.as_str()) {
                first_reader.entry(i).or_default().push(t);
            }
        }
    }
    for (i, op) in forward.iter().enumerate().rev() {
        if s.needs_grad[i] {
            if let Some(dy) = s.complete(&op.output().source, &op.output().shape) {
                s.backward(op, &dy);
            }
        }
        for w in first_reader.get(&i).into_iter().flatten() {
            if let Some(dw) = s.complete(&w.source, &w.shape) {
                s.update(w, &dw);
            }
        }
    }
    Ok(s.wait_for_concats())
}

/// The reverse sweep's state: the chain so far and the gradients not yet consumed.
struct Sweep<'a> {
    b: Builder,
    weights: Dtype,
    /// Producer of every forward output, by source.
    producer: HashMap<&'a str, usize>,
    /// Whether a forward operator's output depends on a parameter.
    needs_grad: Vec<bool>,
    /// Gradients of values (forward outputs and parameters), in the order produced.
    grads: HashMap<String, Vec<Grad>>,
    /// Each free concat's source (`{of}.grad`, produced by no operator) and its parts'.
    concats: HashMap<String, Vec<String>>,
}

impl<'a> Sweep<'a> {
    fn new(forward: &'a [Operator], dtypes: Dtypes, adam: AdamState) -> Sweep<'a> {
        let producer: HashMap<&str, usize> = forward
            .iter()
            .enumerate()
            .map(|(i, o)| (o.output().source.as_str(), i))
            .collect();
        let mut needs_grad = vec![false; forward.len()];
        for (i, op) in forward.iter().enumerate() {
            needs_grad[i] = op.inputs().iter().any(|t| {
                t.role == Role::Weight
                    || producer
                        .get(t.source.as_str())
                        .is_some_and(|&j| j < i && needs_grad[j])
            });
        }
        Sweep {
            b: Builder::continuing(forward.to_vec(), dtypes, adam.bytes_per_parameter()),
            weights: dtypes.weights,
            producer,
            needs_grad,
            grads: HashMap::new(),
            concats: HashMap::new(),
        }
    }

    /// Whether `t` gets a gradient: a parameter, or a value computed from one.
    fn differentiable(&self, t: &Tensor) -> bool {
        match t.role {
            Role::Weight => true,
            Role::Activation => self
                .producer
                .get(t.source.as_str())
                .is_some_and(|&j| self.needs_grad[j]),
            Role::KvCache | Role::OptimizerState => false,
        }
    }

    fn add_grad(&mut self, of: &str, source: String, piece: bool) {
        self.grads
            .entry(of.to_string())
            .or_default()
            .push(Grad { source, piece });
    }

    /// The whole gradient of value `of` (shape `shape`), summing its parts; `None` when
    /// nothing downstream reached it.
    /// The chain, each reader of a free concat waiting for its parts' producers
    /// (`Operator::after`): the dependence its input alone does not record.
    fn wait_for_concats(self) -> Vec<Operator> {
        let concats = self.concats;
        let parts_of = |source: &str| -> Vec<String> {
            // A part may itself be a free concat: its parts, recursively.
            let mut out = Vec::new();
            let mut todo = vec![source.to_string()];
            while let Some(s) = todo.pop() {
                match concats.get(&s) {
                    Some(parts) => todo.extend(parts.iter().cloned()),
                    None => out.push(s),
                }
            }
            out.sort();
            out
        };
        let mut ops = self.b.ops;
        for op in &mut ops {
            let waits: Vec<String> = op
                .inputs()
                .iter()
                .filter(|t| concats.contains_key(&t.source))
                .flat_map(|t| parts_of(&t.source))
                .collect();
            for w in waits {
                if !op.after.contains(&w) {
                    op.after.push(w);
                }
            }
        }
        ops
    }

    fn complete(&mut self, of: &str, shape: &[u64]) -> Option<String> {
        let parts = self.grads.remove(of)?;
        if parts.len() == 1 {
            return Some(parts[0].source.clone());
        }
        if parts.iter().all(|g| g.piece) {
            // The columns of several slices: a free concat, read as one tensor. No operator
            // produces it, so its readers wait for the parts' ([`Sweep::wait_for_concats`]).
            let name = format!("{of}.grad");
            self.concats.insert(
                name.clone(),
                parts.iter().map(|g| g.source.clone()).collect(),
            );
            return Some(name);
        }
        let r = identity(shape.len());
        let mut acc = parts[0].source.clone();
        for (j, g) in parts.iter().enumerate().skip(1) {
            let ins = vec![In::on(&acc, &r), In::on(&g.source, &r)];
            let name = format!("{of}.grad.sum{j}");
            acc = self
                .b
                .op(&name, OpKind::Elementwise, "Add", shape, &r, ins)
                .source;
        }
        Some(acc)
    }

    /// The gradients of `op`'s inputs from `dy`, the gradient of its output.
    fn backward(&mut self, op: &Operator, dy: &str) {
        let all: Vec<usize> = (0..op.dims.len()).collect();
        let out_axes = axes_of(op.output());
        for (k, v) in op.inputs().iter().enumerate() {
            if !self.differentiable(v) {
                continue;
            }
            let v_axes = axes_of(v);
            if op.kind == OpKind::Slice {
                self.add_grad(&v.source, dy.into(), true);
                continue;
            }
            if passes_through(op) && covers(&v_axes, &all) && covers(&out_axes, &all) {
                self.add_grad(&v.source, dy.into(), false);
                continue;
            }
            let others: Vec<usize> = (1..op.tensors.len()).filter(|&j| j != k + 1).collect();
            // The gradient's loop dimensions (`perm[new] = old`), what it is indexed by,
            // its kind and the forward tensors it reads.
            let (perm, grad_axes, kind, needs) = match op.kind {
                // Scatter dY's rows into the table's gradient: over the output's points.
                OpKind::Gather => (
                    out_axes.clone(),
                    out_axes.clone(),
                    OpKind::Elementwise,
                    others,
                ),
                kind if kind.is_contraction() => (
                    output_first(&v_axes, all.len()),
                    v_axes.clone(),
                    kind,
                    others,
                ),
                _ => {
                    let needs = local_needs(op, k);
                    let kind = if !covers(&v_axes, &all) {
                        OpKind::Reduce
                    } else if needs.is_empty() {
                        OpKind::Unary
                    } else {
                        OpKind::Elementwise
                    };
                    (
                        output_first(&v_axes, all.len()),
                        v_axes.clone(),
                        kind,
                        needs,
                    )
                }
            };
            let dims: Vec<u64> = perm.iter().map(|&d| op.dims[d]).collect();
            let mut at = vec![0; op.dims.len()];
            for (new, &old) in perm.iter().enumerate() {
                at[old] = new;
            }
            let map = |axes: &[usize]| -> Vec<usize> { axes.iter().map(|&d| at[d]).collect() };
            let mut ins = vec![In::on(dy, &map(&out_axes))];
            for j in needs {
                let t = &op.tensors[j];
                ins.push(reading(t, &map(&axes_of(t))));
            }
            let op_type = match op.kind {
                OpKind::Gather => "ScatterAdd".to_string(),
                _ => format!("{}Grad", op.op_type),
            };
            let name = format!("{}.grad.{k}", op.name);
            let g = self
                .b
                .op(&name, kind, &op_type, &dims, &map(&grad_axes), ins);
            self.add_grad(&v.source, g.source, false);
        }
    }

    /// The Adam update of parameter `w` from its gradient `dw`, in chunks of rows of at most
    /// [`UPDATE_CHUNK`] elements: each reads its rows of the gradient and of the state, and
    /// writes the state and the parameter back (the writes charged as HBM transfers).
    fn update(&mut self, w: &Tensor, dw: &str) {
        let r = identity(w.shape.len());
        let rows = w.shape.first().copied().unwrap_or(1).max(1);
        let per_row: u64 = w.shape.iter().skip(1).product();
        // As few chunks as keep each within the size, their rows as even as can be.
        let most_rows = (UPDATE_CHUNK / per_row.max(1)).max(1);
        let rows_per = rows.div_ceil(rows.div_ceil(most_rows));
        let chunks = rows.div_ceil(rows_per);
        for c in 0..chunks {
            let suffix = if chunks == 1 {
                String::new()
            } else {
                format!(".{c}")
            };
            let mut shape = w.shape.clone();
            if let Some(first) = shape.first_mut() {
                *first = rows_per.min(rows - c * rows_per);
            }
            let state = format!("{}.adam_state{suffix}", w.source);
            let ins = vec![
                In::on(dw, &r),
                In::named(&state, Role::OptimizerState, &r, &shape),
                In::named(&state, Role::OptimizerState, &r, &shape),
                In::named(&w.source, Role::Weight, &r, &shape),
            ];
            let name = format!("{}.adam{suffix}", w.source);
            self.b
                .op(&name, OpKind::Elementwise, "Adam", &shape, &r, ins);
            // The output is the new parameter, in the parameters' type.
            if let Some(op) = self.b.ops.last_mut() {
                op.tensors[0].dtype_bytes = self.weights.bytes();
            }
        }
    }
}

/// Elements of one update operator at most: an operator runs on all cores at once, and a
/// table-sized update (Llama2-7B's LM head, 131 M parameters at 30 bytes each with fp32 state)
/// fits no core's SRAM. 4 Mi elements are 126 MB with fp32 state: under half of the smallest
/// preset's SRAM (tt-blackhole-like, 140 × 1.5 MiB). Optimizers chunk their updates the same way.
pub const UPDATE_CHUNK: u64 = 1 << 22;

/// Adds and Subtracts (and adding a constant) pass the output's gradient through unchanged.
fn passes_through(op: &Operator) -> bool {
    matches!(
        (op.kind, op.op_type.as_str()),
        (OpKind::Elementwise, "Add" | "Subtract") | (OpKind::Unary, "Add" | "Subtract")
    )
}

/// Tensors (0: the output, j ≥ 1: input j−1) the derivative of `op` with respect to input
/// `k` reads besides the output's gradient.
fn local_needs(op: &Operator, k: usize) -> Vec<usize> {
    let others: Vec<usize> = (1..op.tensors.len()).filter(|&j| j != k + 1).collect();
    match (op.kind, op.op_type.as_str()) {
        // d(a ± b) = da ± db; a bias or mask gradient is a sum of dY.
        (OpKind::Elementwise, "Add" | "Subtract") => vec![],
        // d(a·b)/da = b.
        (OpKind::Elementwise, "Multiply") => others,
        // Divide, Power, Maximum, …: both operands.
        (OpKind::Elementwise, _) => (1..op.tensors.len()).collect(),
        // By a constant.
        (OpKind::Unary, "Add" | "Subtract" | "Multiply" | "Divide" | "Negative") => vec![],
        // f' from f: σ' = σ(1−σ), tanh' = 1−tanh², exp' = exp.
        (OpKind::Unary, "Sigmoid" | "Tanh" | "Exp") => vec![0],
        // f' from x (Gelu, Sqrt, Erf, Log, Relu).
        (OpKind::Unary, _) => vec![k + 1],
        // A sum's gradient is dY broadcast; a max's needs where x is the max.
        (OpKind::Reduce, "Sum") => vec![],
        (OpKind::Reduce, _) => vec![0, k + 1],
        // Softmax steps (max, exp, sum, divide): the step's output and its other operand.
        (OpKind::Softmax, _) => std::iter::once(0).chain(others).collect(),
        _ => others,
    }
}

/// The single loop dimension of every axis of `t` (the sweep refuses compound axes).
fn axes_of(t: &Tensor) -> Vec<usize> {
    t.axes.iter().map(|a| a[0]).collect()
}

fn covers(axes: &[usize], all: &[usize]) -> bool {
    all.iter().all(|d| axes.contains(d))
}

fn identity(rank: usize) -> Vec<usize> {
    (0..rank).collect()
}

/// A dimension order with `out`'s dimensions first (the IR's convention: output dimensions,
/// then reductions), the rest in their old order: `perm[new] = old`.
fn output_first(out: &[usize], rank: usize) -> Vec<usize> {
    let mut perm = out.to_vec();
    perm.extend((0..rank).filter(|d| !out.contains(d)));
    perm
}

/// A forward tensor read again, on `axes` of the reading operator.
fn reading(t: &Tensor, axes: &[usize]) -> In {
    In::named(&t.source, t.role, axes, &t.shape)
}
