//! Importer for ONNX models as the PyTorch / Hugging Face toolchain exports them
//! (docs/onnx.md).
//!
//! Pipeline: decode the protobuf (`wire`, `proto`: a hand-written decoder of the subset of
//! the vendored `model/proto/onnx.proto` it needs), bind the symbolic input dimensions from
//! `--batch`/`--kv`, then walk the nodes in order with concrete shapes (`shape`). A node
//! that reads only constants (the exporter's shape arithmetic, masks, rotary tables) is
//! carried out and folded; views (Reshape, Transpose, …) are folded onto their input; every
//! other node becomes operators of the same IR the reference-format importer and the zoo
//! produce (`map`). Residency, producers and layers then follow the one rule of each.
//!
//! Roles: float initializers are weights (a MatMul weight that is an embedding table's
//! transposed copy, a tied LM head, is that table); graph inputs whose name contains `past` (or `cache`) are
//! the KV cache; other graph inputs are activations. Grouped-query attention's `repeat_kv`
//! is followed (`Repeat`) to the attention MatMul, which takes the zoo's grouped shape.

mod map;
mod proto;
mod shape;
mod wire;

use super::ImportOptions;
use crate::dtype::{Dtype, Dtypes};
use crate::error::{ModelError, Result};
use crate::graph::{classify_residency, link_producers, Graph, Mode, Role};
use crate::plan::PlanRules;
use crate::zoo::builder::{Act, Builder};
use proto::Dim;
use shape::Known;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A tensor operators read, as the walk has it.
#[derive(Clone, Debug)]
pub(crate) struct Tv {
    /// Identity of the data: an initializer, a graph input or an operator's output.
    source: String,
    role: Role,
    /// The shape at this point of the graph (after folded views).
    shape: Vec<u64>,
    /// The stored shape of a weight (what it occupies in HBM, whatever view reads it).
    decl: Vec<u64>,
    /// A 2-D weight read through a transpose: the view's two axes are the stored ones
    /// swapped (a Transpose node, or an initializer that is another one's transposed copy).
    transposed: bool,
    /// Heads repeated by a broadcast (grouped-query attention's `repeat_kv`): the view is
    /// larger than the data it reads.
    repeat: Option<Repeat>,
}

/// Along `axis` of a view, each slice of the data is repeated `times` times in a row:
/// `repeat_kv`'s `[b, kv_heads, s, d] → [b, kv_heads · times, s, d]`. The view's extent on
/// `axis` is the data's × `times`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Repeat {
    axis: usize,
    times: u64,
}

impl Tv {
    fn activation(source: &str, shape: &[u64]) -> Tv {
        Tv {
            source: source.into(),
            role: Role::Activation,
            shape: shape.to_vec(),
            decl: shape.to_vec(),
            transposed: false,
            repeat: None,
        }
    }

    /// The shape of the data a view reads: the repeated axis at the data's extent.
    fn data_shape(&self) -> Vec<u64> {
        let mut s = self.shape.clone();
        if let Some(r) = self.repeat {
            s[r.axis] /= r.times;
        }
        s
    }

    fn from_act(a: &Act) -> Tv {
        Tv::activation(&a.source, &a.shape)
    }

    fn act(&self) -> Act {
        Act {
            source: self.source.clone(),
            shape: self.shape.clone(),
        }
    }
}

/// A value of the walk: known at import time (shape plumbing, constants), or a tensor.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// A constant or a value computed from constants only, with the ONNX value's name.
    Static(Known, String),
    /// Data that operators read.
    Tensor(Tv),
}

/// Integer values the walk keeps data for, over all nodes (32 MiB of `i64`); shape plumbing
/// needs a few thousand.
const DATA_BUDGET: u64 = 1 << 22;

/// Imports an ONNX file.
pub fn import_onnx_file(path: &Path, opts: &ImportOptions) -> Result<Graph> {
    let bytes = std::fs::read(path).map_err(|error| ModelError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    import_onnx_bytes(&path.display().to_string(), &bytes, opts)
}

/// Imports an ONNX model from its bytes; `file` names it in errors.
pub fn import_onnx_bytes(file: &str, bytes: &[u8], opts: &ImportOptions) -> Result<Graph> {
    let fail = |detail: String| ModelError::Onnx {
        file: file.into(),
        detail,
    };
    if opts.batch == 0 || opts.seq == 0 {
        return Err(ModelError::Invalid(
            "batch and sequence/KV length must be ≥ 1".into(),
        ));
    }
    if opts.compat != super::Compat::Clean {
        return Err(ModelError::Invalid(
            "--compat reference applies to the reference JSON format, not to ONNX".into(),
        ));
    }
    let model = proto::decode_model(bytes).map_err(fail)?;
    let g = &model.graph;
    let mut vals: HashMap<String, Val> = HashMap::new();
    let copies = transposed_copies(g);
    for (i, t) in g.initializers.iter().enumerate() {
        let shape = t.shape().map_err(fail)?;
        t.elements().map_err(fail)?;
        let v = if proto::is_integer_type(t.data_type) {
            Val::Static(
                Known {
                    shape,
                    data: t.int_data.clone(),
                },
                t.name.clone(),
            )
        } else if shape::count(&shape) <= 1 {
            Val::Static(Known::shaped(shape), t.name.clone())
        } else if let Some(&j) = copies.get(&i) {
            // The same parameter: its bytes count once, under the original's name.
            let original = &g.initializers[j];
            Val::Tensor(Tv {
                source: original.name.clone(),
                role: Role::Weight,
                decl: original.shape().map_err(fail)?,
                shape,
                transposed: true,
                repeat: None,
            })
        } else {
            Val::Tensor(Tv {
                source: t.name.clone(),
                role: Role::Weight,
                shape: shape.clone(),
                decl: shape,
                transposed: false,
                repeat: None,
            })
        };
        vals.insert(t.name.clone(), v);
    }
    let (mut kv_inputs, mut has_seq) = (0, false);
    for input in &g.inputs {
        if vals.contains_key(&input.name) {
            continue; // an initializer listed as an input (IR version < 4)
        }
        let (shape, seq) = bind(input, opts).map_err(fail)?;
        has_seq |= seq;
        let role = if is_kv_name(&input.name) {
            kv_inputs += 1;
            Role::KvCache
        } else {
            Role::Activation
        };
        let decl = shape.clone();
        let t = Tv {
            source: input.name.clone(),
            role,
            shape,
            decl,
            transposed: false,
            repeat: None,
        };
        vals.insert(input.name.clone(), Val::Tensor(t));
    }
    match (opts.mode, kv_inputs) {
        (Mode::Decode, 0) => {
            return Err(fail(
                "no past key/value inputs: a prefill graph; import it with --mode prefill".into(),
            ))
        }
        (Mode::Prefill | Mode::ForwardBatch | Mode::Training, n) if n > 0 => {
            return Err(fail(format!(
                "{n} past key/value inputs: a decode graph; import it with --mode decode"
            )))
        }
        _ => {}
    }
    let dtype = match opts.dtype_bytes {
        4 => Dtype::Fp32,
        1 => Dtype::Int8,
        _ => Dtype::Fp16,
    };
    let mut b = Builder::new(Dtypes::all(dtype));
    let mut names = HashSet::new();
    let mut data_budget = DATA_BUDGET;
    for (i, node) in g.nodes.iter().enumerate() {
        let label = if node.name.is_empty() {
            format!("{}#{i}", node.op_type)
        } else {
            node.name.clone()
        };
        let node_err = |d: String| {
            fail(format!(
                "node '{label}' ({}): {d}",
                crate::error::one_line(&node.op_type)
            ))
        };
        if !matches!(node.domain.as_str(), "" | "ai.onnx") {
            return Err(node_err(format!(
                "operator domain '{}' is not supported",
                node.domain
            )));
        }
        let mut ins = Vec::with_capacity(node.inputs.len());
        for name in &node.inputs {
            if name.is_empty() {
                ins.push(None);
                continue;
            }
            let v = vals.get(name).ok_or_else(|| {
                node_err(format!("input '{name}' is not produced by an earlier node"))
            })?;
            ins.push(Some(v.clone()));
        }
        let known: Vec<Option<Known>> = ins
            .iter()
            .map(|v| {
                v.as_ref().map(|v| match v {
                    Val::Static(k, _) => k.clone(),
                    Val::Tensor(t) => Known::shaped(t.shape.clone()),
                })
            })
            .collect();
        let mut outs = shape::infer(node, &known, model.opset).map_err(node_err)?;
        for k in &mut outs {
            // Past the budget, values keep their shapes only: a hostile file of many large
            // constants cannot make the walk hold much memory.
            let n = k.data.as_ref().map_or(0, |d| d.len() as u64);
            if n > data_budget {
                k.data = None;
            } else {
                data_budget -= n;
            }
        }
        let folded = matches!(node.op_type.as_str(), "Shape" | "Size")
            || ins.iter().flatten().all(|v| matches!(v, Val::Static(..)));
        let produced: Vec<Val> = if folded {
            let named = node.outputs.iter().zip(outs);
            named.map(|(n, k)| Val::Static(k, n.clone())).collect()
        } else {
            let mut unique = label.clone();
            while !names.insert(unique.clone()) {
                unique.push('\'');
            }
            map::emit(&mut b, &unique, node, &ins, &known, &outs, model.opset).map_err(node_err)?
        };
        for (name, v) in node.outputs.iter().zip(produced) {
            if !name.is_empty() {
                vals.insert(name.clone(), v);
            }
        }
    }
    let mut ops = b.ops;
    if ops.is_empty() {
        return Err(fail("no operators left after folding".into()));
    }
    let fits = |v: &[u64], bytes: u64| {
        v.iter()
            .try_fold(bytes.max(2), |a, &d| a.checked_mul(d))
            .is_some_and(|x| x < 1 << 62)
    };
    if let Some(op) = ops.iter().find(|o| {
        !fits(&o.dims, 2)
            || !o
                .tensors
                .iter()
                .all(|t| fits(&t.shape, t.dtype_bytes.of(1)))
    }) {
        return Err(fail(format!(
            "node '{}': loop nest or tensor too large: dims {:?}",
            op.name, op.dims
        )));
    }
    classify_residency(&mut ops);
    link_producers(&mut ops);
    let mut layers = super::layers_of(file, &ops, opts.num_layers)?;
    if opts.mode == Mode::Training {
        super::training_step_of(file, &mut ops, &mut layers, Dtypes::all(dtype))?;
    }
    let stem = super::file_stem(file);
    // A graph with no sequence dimension (ViT's fixed patches) is not named by `--kv`.
    let seq = if has_seq {
        format!(" {}{}", super::seq_label(opts.mode), opts.seq)
    } else {
        String::new()
    };
    Ok(Graph {
        name: format!("{stem} {} b{}{seq}", opts.mode.as_str(), opts.batch),
        ops,
        layers,
        plan_rules: PlanRules::SPEC,
        dtypes: Dtypes::all(dtype),
    })
}

/// Tied LM heads: initializers read as a MatMul's (or Gemm's) B that hold, transposed, the
/// values of an embedding table (an initializer gathered by a Gather), by index: copy →
/// table. The TorchScript exporter folds a tied head's `embedding.T` into such a copy; both
/// are one parameter, as the zoo's `tied_embeddings`. Only 2-D float tensors with all their
/// values in `raw_data` are compared (byte for byte, so `-0.0` and `0.0` differ and a NaN
/// equals its own bits); a copy stored otherwise counts twice. Other weights are never
/// compared: two zero-filled matrices are not one parameter.
fn transposed_copies(g: &proto::Graph) -> HashMap<usize, usize> {
    let index: HashMap<&str, usize> = g
        .initializers
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let read_as = |ops: &[&str], input: usize| -> Vec<usize> {
        let mut v: Vec<usize> = g
            .nodes
            .iter()
            .filter(|n| ops.contains(&n.op_type.as_str()))
            .filter_map(|n| index.get(n.inputs.get(input)?.as_str()).copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // (Each float tensor with its raw bytes, element width and 2-D shape.)
    let matrix = |i: usize| {
        let t = &g.initializers[i];
        let raw = (*g.float_raw.get(i)?)?;
        let w = proto::float_width(t.data_type)?;
        match t.shape().ok()?.as_slice() {
            &[r, c] => Some((raw, w, t.data_type, r as usize, c as usize)),
            _ => None,
        }
    };
    let tables = read_as(&["Gather"], 0);
    let mut copies = HashMap::new();
    for i in read_as(&["MatMul", "Gemm"], 1) {
        let Some((raw, w, ty, r, c)) = matrix(i) else {
            continue;
        };
        let table = tables.iter().copied().find(|&j| {
            j != i
                && matrix(j).is_some_and(|(o, _, oty, or, oc)| {
                    (oty, or, oc) == (ty, c, r) && is_transpose(raw, o, r, c, w)
                })
        });
        if let Some(j) = table {
            copies.insert(i, j);
        }
    }
    copies
}

/// Whether `a` (`[r, c]`, `w` bytes an element, row-major) is `b` (`[c, r]`) transposed.
fn is_transpose(a: &[u8], b: &[u8], r: usize, c: usize, w: usize) -> bool {
    a.len() == b.len()
        && a.chunks_exact(w).enumerate().all(|(k, x)| {
            let (i, j) = (k / c, k % c);
            let at = (j * r + i) * w;
            b.get(at..at + w) == Some(x)
        })
}

/// Graph inputs holding the KV cache: `past_key_values.0.key`, `past_key`, `cache_v`.
fn is_kv_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("past") || n.contains("cache")
}

/// The concrete shape of a graph input, and whether a sequence dimension was bound:
/// numbers stay, symbolic names are bound.
///
/// `batch*` → B; `past*` → S − 1 (the cached tokens: with the new one, attention spans
/// `--kv` S tokens, as in the zoo's decode); `total*` → S; `seq*` → S in prefill, 1 in decode.
fn bind(
    input: &proto::ValueInfo,
    opts: &ImportOptions,
) -> std::result::Result<(Vec<u64>, bool), String> {
    let name = &input.name;
    let dims = input
        .shape
        .as_ref()
        .ok_or_else(|| format!("input '{name}' has no shape"))?;
    let decode = opts.mode == Mode::Decode;
    let mut seq = false;
    let shape = dims
        .iter()
        .enumerate()
        .map(|(i, d)| match d {
            Dim::Value(v) if *v >= 0 => Ok(*v as u64),
            Dim::Value(v) => Err(format!("input '{name}' has dimension {i} = {v}")),
            Dim::Unknown => Err(format!(
                "input '{name}' has no shape for dimension {i} (neither a number nor a name)"
            )),
            Dim::Param(p) => {
                let l = p.to_ascii_lowercase();
                let is_seq = ["past", "total", "seq"].iter().any(|w| l.contains(w));
                seq |= is_seq && !l.contains("batch");
                if l.contains("batch") {
                    Ok(opts.batch)
                } else if l.contains("past") {
                    Ok(opts.seq - 1)
                } else if l.contains("total") {
                    Ok(opts.seq)
                } else if l.contains("seq") {
                    Ok(if decode { 1 } else { opts.seq })
                } else {
                    Err(format!(
                        "input '{name}' dimension {i} is '{}': only batch, sequence, \
                         past_sequence and total_sequence dimensions are bound",
                        crate::error::one_line(p)
                    ))
                }
            }
        })
        .collect::<std::result::Result<Vec<u64>, String>>()?;
    Ok((shape, seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transposed_copy_is_found_byte_for_byte() {
        // [[1, 2, 3], [4, 5, 6]] and its transpose [[1, 4], [2, 5], [3, 6]], one byte each.
        let (a, t) = ([1, 2, 3, 4, 5, 6], [1, 4, 2, 5, 3, 6]);
        assert!(is_transpose(&a, &t, 2, 3, 1));
        assert!(is_transpose(&t, &a, 3, 2, 1));
        assert!(
            !is_transpose(&a, &a, 2, 3, 1),
            "the same bytes, not transposed"
        );
        // Two bytes an element: [[0x0102, 0x0304]] is [[0x0102], [0x0304]] transposed.
        assert!(is_transpose(&[1, 2, 3, 4], &[1, 2, 3, 4], 1, 2, 2));
        assert!(!is_transpose(&[1, 2, 3, 4], &[2, 1, 3, 4], 1, 2, 2));
    }

    fn matrix(name: &str, dims: [i64; 2]) -> proto::Tensor {
        let mut t = proto::Tensor::default();
        (t.name, t.dims, t.data_type) = (name.into(), dims.to_vec(), 10); // FLOAT16
        t
    }

    fn node(op: &str, inputs: &[&str]) -> proto::Node {
        proto::Node {
            op_type: op.into(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn only_a_matmul_weight_that_is_a_gathered_table_transposed_is_a_copy() {
        // Float16 (2 bytes an element) [2, 3] table, its transpose, and the same transpose
        // read by an Add only.
        let table: Vec<u8> = (1..=12).collect();
        let t: Vec<u8> = [1, 2, 7, 8, 3, 4, 9, 10, 5, 6, 11, 12].to_vec();
        let ts = vec![
            matrix("emb", [2, 3]),
            matrix("head", [3, 2]),
            matrix("other", [3, 2]),
        ];
        let g = proto::Graph {
            nodes: vec![
                node("Gather", &["emb", "ids"]),
                node("MatMul", &["x", "head"]),
                node("Add", &["y", "other"]),
            ],
            initializers: ts,
            float_raw: vec![Some(&table), Some(&t), Some(&t)],
            inputs: vec![],
        };
        assert_eq!(transposed_copies(&g), HashMap::from([(1, 0)]));
        // Not transposed (the table's own bytes in the head's shape): two weights.
        let g = proto::Graph {
            float_raw: vec![Some(&table), Some(&table), Some(&t)],
            ..g
        };
        assert!(transposed_copies(&g).is_empty());
    }
}
