//! The graph IR (SPEC §2.1): a chain of operators in execution order, each partitioned over all
//! cores, with loop dimensions and the tensors it reads and writes.
//!
//! Every later stage (plans, instances, schedulers) reads only this IR, so it is the same
//! whether a graph came from the model zoo or from the reference-format importer.

mod layers;
mod residency;
mod split;

pub use layers::{
    detect_layers, detect_layers_with_count, detect_period, detect_period_with_count,
    LayerStructure,
};
pub use residency::{classify_residency, is_on_chip};
pub use split::SplitOp;

/// Points every input at the operator whose output it is (by `source`), or `None`.
pub fn link_producers(ops: &mut [Operator]) {
    // Found by name first, then written: the index borrows the names (a model's step graph
    // has tens of thousands of operators; copying each name costs more than the lookups).
    let producers: Vec<Option<usize>> = {
        let index: HashMap<&str, usize> = ops
            .iter()
            .enumerate()
            .map(|(i, o)| (o.output().source.as_str(), i))
            .collect();
        ops.iter()
            .flat_map(|op| op.tensors.iter().skip(1))
            .map(|t| index.get(t.source.as_str()).copied())
            .collect()
    };
    let inputs = ops.iter_mut().flat_map(|op| op.tensors.iter_mut().skip(1));
    for (t, p) in inputs.zip(producers) {
        t.producer = p;
    }
}

use crate::dtype::{DtypeBytes, Dtypes};
use crate::plan::PlanRules;
use elk_stage::units::{Bytes, Flops};
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What an operator computes; selects its cost formula (SPEC §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A 2-D matrix multiply (leading dimensions of the output merged into one).
    MatMul,
    /// A batched matrix multiply (attention).
    BatchMatMul,
    /// A convolution.
    Conv,
    /// A pooling window reduction.
    Pool,
    /// A binary elementwise operation.
    Elementwise,
    /// A unary elementwise operation.
    Unary,
    /// A reduction (sum).
    Reduce,
    /// One step of a softmax.
    Softmax,
    /// A row gather (embedding lookup).
    Gather,
    /// A slice of a larger tensor.
    Slice,
}

impl OpKind {
    /// Every kind, in declaration order.
    pub const ALL: [OpKind; 10] = [
        OpKind::MatMul,
        OpKind::BatchMatMul,
        OpKind::Conv,
        OpKind::Pool,
        OpKind::Elementwise,
        OpKind::Unary,
        OpKind::Reduce,
        OpKind::Softmax,
        OpKind::Gather,
        OpKind::Slice,
    ];

    /// Kinds whose loop nest contracts a reduction dimension with multiply-adds.
    pub fn is_contraction(self) -> bool {
        matches!(self, OpKind::MatMul | OpKind::BatchMatMul | OpKind::Conv)
    }

    /// The snake-case name used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::MatMul => "matmul",
            OpKind::BatchMatMul => "batch_matmul",
            OpKind::Conv => "conv",
            OpKind::Pool => "pool",
            OpKind::Elementwise => "elementwise",
            OpKind::Unary => "unary",
            OpKind::Reduce => "reduce",
            OpKind::Softmax => "softmax",
            OpKind::Gather => "gather",
            OpKind::Slice => "slice",
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a tensor's data comes from, which decides whether it must be preloaded from HBM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Model parameters: live in HBM.
    Weight,
    /// The attention key/value cache of a decode step: lives in HBM.
    KvCache,
    /// Optimizer state of a training step (Adam's two moments and the master weights): lives
    /// in HBM, read and written by the parameter update (`zoo/training.rs`).
    OptimizerState,
    /// Values computed by the model (or fed to it).
    Activation,
}

/// Where an input tensor is when its operator runs (derived by [`classify_residency`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Residency {
    /// Must be preloaded from HBM before the operator runs.
    Hbm,
    /// Already in the cores' SRAM.
    OnChip,
}

/// One tensor an operator touches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    /// Identity of the data: operators that read the same `source` read the same tensor.
    pub source: String,
    /// For each axis, the operator dimensions that index it (one for a plain axis, several for
    /// a compound index such as a convolution window).
    pub axes: Vec<Vec<usize>>,
    /// Extent of each axis in elements.
    pub shape: Vec<u64>,
    /// Bytes per element, exact (`1.0625` in a file for bfp8: [`DtypeBytes`]).
    pub dtype_bytes: DtypeBytes,
    /// What the data is.
    pub role: Role,
    /// Index of the operator producing this tensor, if it is produced inside the graph.
    pub producer: Option<usize>,
    /// Where the tensor is when the operator runs (always `OnChip` for outputs).
    pub residency: Residency,
}

impl Tensor {
    /// Number of elements.
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Size in bytes, rounded up to a whole byte.
    pub fn bytes(&self) -> Bytes {
        Bytes(self.dtype_bytes.of(self.elements()))
    }
}

/// One operator of the chain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Operator {
    /// Unique, human-readable name (`l3.attn.qk`, `Dot#308`).
    pub name: String,
    /// What it computes.
    pub kind: OpKind,
    /// The source op type (`Dot`, `Add`, … for imports; the kind for zoo operators).
    pub op_type: String,
    /// Loop dimension extents: output dimensions first, then reduction dimensions.
    pub dims: Vec<u64>,
    /// Tensors: the output first, then the inputs.
    pub tensors: Vec<Tensor>,
    /// Sources of outputs this operator waits for without reading them (a control
    /// dependence): a routed expert waits for its layer's top-k step, which picks the rows
    /// it reads. Only parallel sets read it (docs/core-groups.md §CG-1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// Its part in a Mixture-of-Experts block, set by the block that builds it
    /// (`zoo::moe_block`); absent for every other operator and for imported graphs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<MoeRole>,
}

/// An operator's part in layer `layer`'s Mixture-of-Experts block (docs/moe.md). What the
/// load policies and the parallel sets read, instead of parsing operator names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "role")]
pub enum MoeRole {
    /// The router's logits.
    Router {
        /// The layer.
        layer: usize,
    },
    /// The softmax and top-k selection: after it, which experts receive tokens is known.
    TopK {
        /// The layer.
        layer: usize,
    },
    /// The shared expert every token passes through (with its gate).
    Shared {
        /// The layer.
        layer: usize,
    },
    /// A routed expert's FFN, on the rows of its tokens.
    Expert {
        /// The layer.
        layer: usize,
        /// The expert.
        expert: usize,
    },
    /// Adding a routed expert's rows, weighted by their gates, into the block's output.
    Combine {
        /// The layer.
        layer: usize,
        /// The expert.
        expert: usize,
    },
}

impl MoeRole {
    /// (layer, expert) of a routed expert's operator, its combine included.
    pub fn expert(self) -> Option<(usize, usize)> {
        match self {
            MoeRole::Expert { layer, expert } | MoeRole::Combine { layer, expert } => {
                Some((layer, expert))
            }
            _ => None,
        }
    }

    /// The layer of a top-k step.
    pub fn top_k(self) -> Option<usize> {
        match self {
            MoeRole::TopK { layer } => Some(layer),
            _ => None,
        }
    }
}

impl Operator {
    /// (layer, expert) of a routed expert's operator ([`MoeRole::expert`]).
    pub fn expert(&self) -> Option<(usize, usize)> {
        self.moe.and_then(MoeRole::expert)
    }

    /// The layer of a top-k step ([`MoeRole::top_k`]).
    pub fn top_k(&self) -> Option<usize> {
        self.moe.and_then(MoeRole::top_k)
    }

    /// The output tensor.
    pub fn output(&self) -> &Tensor {
        &self.tensors[0]
    }

    /// The input tensors.
    pub fn inputs(&self) -> &[Tensor] {
        &self.tensors[1..]
    }

    /// Number of points in the full loop nest.
    pub fn iteration_space(&self) -> u64 {
        self.dims.iter().product()
    }

    /// Floating-point operations: 2 per multiply-add for contractions, 1 per loop point for
    /// window and reduction kinds, 1 per output element otherwise.
    pub fn flops(&self) -> Flops {
        match self.kind {
            k if k.is_contraction() => Flops(2 * self.iteration_space()),
            OpKind::Pool | OpKind::Reduce | OpKind::Softmax => Flops(self.iteration_space()),
            _ => Flops(self.output().elements()),
        }
    }

    /// Bytes of inputs that must be preloaded from HBM. A gather fetches only the rows it
    /// reads, so its table counts at most the output's size.
    pub fn hbm_bytes(&self) -> Bytes {
        self.inputs()
            .iter()
            .filter(|t| t.residency == Residency::Hbm)
            .map(|t| match (self.kind, t.role) {
                (OpKind::Gather, Role::Weight) => t.bytes().min(self.output().bytes()),
                _ => t.bytes(),
            })
            .sum()
    }

    /// Bytes already on chip: the output plus the on-chip inputs.
    pub fn on_chip_bytes(&self) -> Bytes {
        self.tensors
            .iter()
            .enumerate()
            .filter(|(i, t)| *i == 0 || t.residency == Residency::OnChip)
            .map(|(_, t)| t.bytes())
            .sum()
    }
}

/// How an imported or generated graph was produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// One generated token per sequence, attending over a KV cache of length S.
    Decode,
    /// A whole prompt of S tokens.
    Prefill,
    /// The forward pass of a training batch of S-token sequences, and nothing else: the
    /// prefill graph under another name. This is what the reference artifact calls training
    /// (its Fig 24), kept so that figure can be reproduced.
    #[serde(rename = "forward-batch")]
    ForwardBatch,
    /// A training step: the forward pass, the loss gradient, the backward pass and the Adam
    /// update of every parameter (docs/training.md).
    Training,
}

impl Mode {
    /// Every mode, in the order error messages list them.
    pub const ALL: [Mode; 4] = [
        Mode::Decode,
        Mode::Prefill,
        Mode::ForwardBatch,
        Mode::Training,
    ];

    /// Parses `decode`, `prefill`, `forward-batch` or `training`.
    pub fn parse(s: &str) -> crate::Result<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| crate::ModelError::Unknown {
                what: "mode",
                name: s.to_string(),
                known: Mode::ALL.map(Mode::as_str).join(", "),
            })
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Decode => "decode",
            Mode::Prefill => "prefill",
            Mode::ForwardBatch => "forward-batch",
            Mode::Training => "training",
        }
    }

    /// Whether the graph processes whole sequences of S tokens (all but decode).
    pub fn whole_sequences(self) -> bool {
        self != Mode::Decode
    }
}

/// An operator chain with its layer structure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    /// Model name with its configuration (`llama2-13b decode b32 kv2048`).
    pub name: String,
    /// Operators in execution order.
    pub ops: Vec<Operator>,
    /// Prologue, repeated layer and epilogue.
    pub layers: LayerStructure,
    /// How its operators are planned: SPEC §3, or the reference artifact's departures from it
    /// (set by the importer's `--compat reference`).
    #[serde(default, skip_serializing_if = "PlanRules::is_spec")]
    pub plan_rules: PlanRules,
    /// The element types its tensors were made with (their `dtype_bytes` follow them); the
    /// cost model is chosen for them ([`crate::cost::for_chip_with`]).
    #[serde(default, skip_serializing_if = "Dtypes::is_default")]
    pub dtypes: Dtypes,
}

fn is_zero(b: &Bytes) -> bool {
    b.0 == 0
}

/// Totals of a graph, the numbers researchers check a model by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphTotals {
    /// Distinct weight elements (each weight tensor counted once).
    pub parameters: u64,
    /// Bytes of distinct weights.
    pub weight_bytes: Bytes,
    /// Bytes of distinct KV-cache tensors.
    pub kv_bytes: Bytes,
    /// Bytes of distinct optimizer-state tensors (training only: Adam's moments and master
    /// weights).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub optimizer_bytes: Bytes,
    /// Bytes preloaded from HBM summed over operators (a tensor read twice counts twice).
    pub hbm_bytes: Bytes,
    /// Floating-point operations of the whole chain.
    pub flops: Flops,
}

impl Graph {
    /// Sums parameters, weight and KV bytes (distinct tensors), HBM bytes and FLOPs.
    pub fn totals(&self) -> GraphTotals {
        let mut seen = std::collections::BTreeSet::new();
        let mut totals = GraphTotals::default();
        for op in &self.ops {
            totals.flops += op.flops();
            totals.hbm_bytes += op.hbm_bytes();
            for t in op.inputs() {
                if matches!(t.role, Role::Activation) || !seen.insert(t.source.as_str()) {
                    continue;
                }
                match t.role {
                    Role::Weight => {
                        totals.parameters += t.elements();
                        totals.weight_bytes += t.bytes();
                    }
                    Role::KvCache => totals.kv_bytes += t.bytes(),
                    Role::OptimizerState => totals.optimizer_bytes += t.bytes(),
                    Role::Activation => {}
                }
            }
        }
        totals
    }

    /// Each operator's index by the source name of its output (the graph's own indices,
    /// also in a cut of a larger graph, whose tensors' `producer` fields index the whole).
    pub fn producers_by_source(&self) -> std::collections::HashMap<&str, usize> {
        self.ops
            .iter()
            .enumerate()
            .map(|(i, o)| (o.output().source.as_str(), i))
            .collect()
    }

    /// Operators of the given kind in layer `layer` (0-based), for per-layer comparisons.
    pub fn count_in_layer(&self, layer: usize, kind: OpKind) -> usize {
        self.layers
            .layer_range(layer)
            .map(|r| self.ops[r].iter().filter(|o| o.kind == kind).count())
            .unwrap_or(0)
    }
}
