//! Importer for the reference graph format (SPEC §2.1.2, `tests/fixtures/models/README.md`).
//!
//! Pipeline: parse entries (`entry`), fold Reshape/Convert/Broadcast/Concat/Result
//! (`fold`), turn each remaining entry into an [`Operator`] with its loop dimensions and
//! tensors, substitute the batch/sequence placeholders (`placeholders`), classify inputs
//! as HBM or on chip (the one rule in [`crate::graph::classify_residency`]), and detect the
//! layer structure.
//!
//! Two flavours ([`Compat`]): `Reference` reproduces the reference artifact's parse
//! (its operator list for bert-base is matched operator by operator in the tests) and marks
//! the graph to be planned by the artifact's rules (its option tables are matched entry by
//! entry); `Clean`, the default, fixes three of its parse quirks and plans by SPEC §3 — see
//! `docs/importer.md` and `docs/plans-vs-reference.md`.

mod einsum;
mod entry;
mod fold;
mod onnx;
mod placeholders;

pub use onnx::{import_onnx_bytes, import_onnx_file};
pub use placeholders::{Placeholders, SeqRole};

use crate::error::{ModelError, Result};
use crate::graph::{
    classify_residency, detect_layers, detect_layers_with_count, link_producers, Graph, Mode,
    OpKind, Operator, Residency, Role, Tensor,
};
use crate::plan::PlanRules;
use einsum::{Einsum, IndexExpr};
use entry::RawEntry;
use fold::{Resolved, Source};
use std::collections::HashMap;
use std::path::Path;

/// Which parse of the reference format to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compat {
    /// The default: decode attention scores get the KV length, Slice uses its output extents,
    /// GatherV2 (embedding lookup) is kept in decode.
    #[default]
    Clean,
    /// Reproduce the reference artifact's operator list, quirks included, and plan it by the
    /// artifact's rules ([`PlanRules::REFERENCE`]); the graph's name ends in
    /// `compat reference`.
    Reference,
}

impl Compat {
    /// Parses `clean` or `reference`.
    pub fn parse(s: &str) -> Result<Compat> {
        match s {
            "clean" => Ok(Compat::Clean),
            "reference" => Ok(Compat::Reference),
            _ => Err(ModelError::Unknown {
                what: "compat mode",
                name: s.into(),
                known: "clean, reference".into(),
            }),
        }
    }
}

/// Options of one import.
#[derive(Clone, Copy, Debug)]
pub struct ImportOptions {
    /// Decode, prefill or training.
    pub mode: Mode,
    /// Batch size B.
    pub batch: u64,
    /// S: KV length (decode) or sequence length (prefill/training).
    pub seq: u64,
    /// Which parse.
    pub compat: Compat,
    /// Bytes per element of every tensor (the reference treats all as fp16: 2).
    pub dtype_bytes: u64,
    /// The number of identical layers, when the user knows it (the reference artifact's
    /// `--layers` hint): the graph must have exactly that many, or the import fails with
    /// [`ModelError::LayerCount`]. `None`: detect them ([`detect_layers`]).
    pub num_layers: Option<usize>,
}

impl ImportOptions {
    /// Default options for a mode: clean parse, fp16.
    pub fn new(mode: Mode, batch: u64, seq: u64) -> ImportOptions {
        ImportOptions {
            mode,
            batch,
            seq,
            compat: Compat::Clean,
            dtype_bytes: 2,
            num_layers: None,
        }
    }
}

/// Imports a graph file: ONNX when its name ends in `.onnx` ([`import_onnx_file`]), the
/// reference JSON format otherwise.
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<Graph> {
    if is_onnx(path) {
        return import_onnx_file(path, opts);
    }
    let text = crate::error::read_file(path)?;
    import_str(&path.display().to_string(), &text, opts)
}

/// Whether a file is read as ONNX: its extension is `.onnx` (any case).
pub fn is_onnx(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
}

/// Imports a reference-format graph from text; `file` names it in errors.
pub fn import_str(file: &str, text: &str, opts: &ImportOptions) -> Result<Graph> {
    if opts.batch == 0 || opts.seq == 0 {
        return Err(ModelError::Invalid(
            "batch and sequence/KV length must be ≥ 1".into(),
        ));
    }
    let entries = entry::parse_file(file, text)?;
    let by_id: HashMap<i64, &RawEntry> = entries.iter().map(|e| (e.id, e)).collect();
    let ph = Placeholders {
        batch: opts.batch,
        seq: opts.seq,
        mode: opts.mode,
    };
    let mut ops = Vec::new();
    for e in &entries {
        if fold::is_folded(&e.op_type) || fold::is_external(&e.op_type) {
            continue;
        }
        let err = |detail: String| ModelError::Entry {
            file: file.into(),
            id: e.id,
            op_type: e.op_type.clone(),
            detail,
        };
        let kind = op_kind(&e.op_type).ok_or_else(|| err("unknown op type".into()))?;
        let einsum = e
            .einsum
            .as_ref()
            .ok_or_else(|| err("operator has no expression".into()))?;
        let op = build_operator(&by_id, e, einsum, kind, &ph, opts).map_err(err)?;
        ops.push(op);
    }
    classify_residency(&mut ops);
    if opts.compat == Compat::Reference && opts.mode == Mode::Decode {
        // The reference drops the embedding lookup of a decode step after classifying.
        ops.retain(|o| o.kind != OpKind::Gather);
    }
    link_producers(&mut ops);
    if ops.is_empty() {
        return Err(ModelError::GraphJson {
            file: file.into(),
            detail: "no operators left after folding".into(),
        });
    }
    let stem = file_stem(file);
    let layers = layers_of(file, &ops, opts.num_layers)?;
    // Every tensor has `dtype_bytes`; the importer knows no names, so 4 bytes is taken
    // for fp32, 1 for int8 and anything else for fp16 (the reference's fp16).
    let dtypes = crate::dtype::Dtypes::all(match opts.dtype_bytes {
        4 => crate::dtype::Dtype::Fp32,
        1 => crate::dtype::Dtype::Int8,
        _ => crate::dtype::Dtype::Fp16,
    });
    let mut layers = layers;
    if opts.mode == Mode::Training {
        training_step_of(file, &mut ops, &mut layers, dtypes)?;
    }
    let (plan_rules, flavour) = match opts.compat {
        Compat::Clean => (PlanRules::SPEC, ""),
        Compat::Reference => (PlanRules::REFERENCE, " compat reference"),
    };
    Ok(Graph {
        name: format!(
            "{stem} {} b{} {}{}{flavour}",
            opts.mode.as_str(),
            opts.batch,
            seq_label(opts.mode),
            opts.seq
        ),
        ops,
        layers,
        plan_rules,
        dtypes,
    })
}

/// Replaces an imported forward pass by its training step (`--mode training`), built as for
/// a zoo model: the layers stay the forward's, the backward pass and the updates go in the
/// epilogue.
fn training_step_of(
    file: &str,
    ops: &mut Vec<Operator>,
    layers: &mut crate::graph::LayerStructure,
    dtypes: crate::dtype::Dtypes,
) -> Result<()> {
    let forward = ops.len();
    *ops = crate::zoo::training_step(ops, dtypes, crate::zoo::AdamState::default())
        .map_err(|e| ModelError::Invalid(format!("{file}: {e}")))?;
    classify_residency(ops);
    link_producers(ops);
    layers.epilogue += ops.len() - forward;
    Ok(())
}

/// A graph file's name without directory and extension, the start of the graph's name.
fn file_stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string())
}

/// The layer structure of an imported chain: detected, or exactly `num_layers` identical
/// layers when the user gives the count ([`ModelError::LayerCount`] if there are not).
fn layers_of(
    file: &str,
    ops: &[Operator],
    num_layers: Option<usize>,
) -> Result<crate::graph::LayerStructure> {
    match num_layers {
        None => Ok(detect_layers(ops)),
        Some(n) => detect_layers_with_count(ops, n).ok_or_else(|| ModelError::LayerCount {
            file: file.into(),
            layers: n,
            ops: ops.len(),
            detected: detect_layers(ops),
        }),
    }
}

fn seq_label(mode: Mode) -> &'static str {
    match mode {
        Mode::Decode => "kv",
        Mode::Prefill | Mode::ForwardBatch | Mode::Training => "s",
    }
}

/// Maps an op type of the reference format to a kind.
pub fn op_kind(op_type: &str) -> Option<OpKind> {
    Some(match op_type {
        "Dot" => OpKind::MatMul,
        "BatchMatMul" => OpKind::BatchMatMul,
        "Convolution" => OpKind::Conv,
        "MaxPool" | "AvgPool" => OpKind::Pool,
        "Add" | "Subtract" | "Multiply" | "Divide" | "Power" | "Maximum" | "Minimum" => {
            OpKind::Elementwise
        }
        "Relu" | "Negative" | "Sigmoid" | "Sqrt" | "Tanh" | "Erf" | "Exp" | "Log" => OpKind::Unary,
        "Sum" | "ReduceMax" => OpKind::Reduce,
        "SoftmaxBasic" => OpKind::Softmax,
        "GatherV2" => OpKind::Gather,
        "Slice" => OpKind::Slice,
        _ => return None,
    })
}

/// A loop dimension under construction.
struct Dim {
    raw: u64,
    /// Index names merged into it (several only for a Dot's leading output axes).
    names: Vec<String>,
}

fn build_operator(
    by_id: &HashMap<i64, &RawEntry>,
    e: &RawEntry,
    einsum: &Einsum,
    kind: OpKind,
    ph: &Placeholders,
    opts: &ImportOptions,
) -> std::result::Result<Operator, String> {
    // Resolve inputs through folded producers, in input order.
    let mut inputs: Vec<(usize, Resolved)> = Vec::new();
    for access in &einsum.accesses {
        let producer = *e
            .inputs
            .get(access.input)
            .ok_or("input without a producer")?;
        let decl = e.decls[access.input].clone();
        if let Some(r) = fold::resolve(by_id, producer, access.index.clone(), decl)? {
            inputs.push((access.input, r));
        }
    }
    // Loop dimensions: output names, then the rest in order of appearance; constant axes of
    // inputs become dimensions of their own.
    let slice_uses_input = kind == OpKind::Slice && opts.compat == Compat::Reference;
    let mut dims: Vec<Dim> = Vec::new();
    let mut dim_of: HashMap<&str, usize> = HashMap::new();
    let merge_leading = e.op_type == "Dot" && einsum.output.len() > 2;
    for (pos, name) in einsum.var_order.iter().enumerate() {
        let raw = raw_extent(name, einsum, &inputs, slice_uses_input)
            .ok_or_else(|| format!("cannot determine the extent of index {name}"))?;
        if merge_leading && pos > 0 && pos + 1 < einsum.output.len() {
            dims[0].raw *= raw;
            dims[0].names.push(name.clone());
            dim_of.insert(name, 0);
        } else {
            dim_of.insert(name, dims.len());
            dims.push(Dim {
                raw,
                names: vec![name.clone()],
            });
        }
    }
    let const_axes: Vec<(usize, usize)> = inputs
        .iter()
        .enumerate()
        .flat_map(|(k, (_, r))| {
            r.access
                .iter()
                .enumerate()
                .filter(|(_, ix)| ix.constant.is_some())
                .map(move |(axis, _)| (k, axis))
        })
        .collect();
    let mut const_dim: HashMap<(usize, usize), usize> = HashMap::new();
    for &(k, axis) in &const_axes {
        const_dim.insert((k, axis), dims.len());
        dims.push(Dim {
            raw: inputs[k].1.decl.shape[axis],
            names: Vec::new(),
        });
    }
    let roles = seq_roles(&dims, einsum, kind, opts);
    let extents: Vec<u64> = dims
        .iter()
        .zip(&roles)
        .map(|(d, r)| ph.extent(d.raw, *r))
        .collect();
    let kv_input = kind == OpKind::BatchMatMul && ph.mode == Mode::Decode;

    let axes_of = |access: &[IndexExpr], k: Option<usize>| -> Vec<Vec<usize>> {
        let mut axes: Vec<Vec<usize>> = Vec::new();
        for (axis, ix) in access.iter().enumerate() {
            let ds: Vec<usize> = match (ix.constant, k) {
                (Some(_), Some(k)) => vec![const_dim[&(k, axis)]],
                _ => ix.vars.iter().map(|v| dim_of[v.as_str()]).collect(),
            };
            // Axes merged into one dimension (a Dot's leading axes) become one axis.
            if ds.len() == 1 && axes.last().is_some_and(|last| last == &ds) {
                continue;
            }
            axes.push(ds);
        }
        axes
    };
    let shape_of = |axes: &[Vec<usize>], raw_shape: Option<&[u64]>| -> Vec<u64> {
        axes.iter()
            .enumerate()
            .map(|(i, ds)| match (ds.as_slice(), raw_shape) {
                ([d], _) => extents[*d],
                (_, Some(raw)) => ph.extent(raw[i], SeqRole::Query),
                _ => ds.iter().map(|d| extents[*d]).product(),
            })
            .collect()
    };
    let out_axes = axes_of(&einsum.output, None);
    let mut tensors = vec![Tensor {
        source: format!("#{}", e.id),
        shape: shape_of(&out_axes, None),
        axes: out_axes,
        dtype_bytes: crate::dtype::DtypeBytes::whole(opts.dtype_bytes),
        role: Role::Activation,
        producer: None,
        residency: Residency::OnChip,
    }];
    for (k, (input_no, r)) in inputs.iter().enumerate() {
        let axes = axes_of(&r.access, Some(k));
        let raw_shape = (axes.len() == r.decl.shape.len()).then_some(r.decl.shape.as_slice());
        let shape = shape_of(&axes, raw_shape);
        let (source, role) = match r.source {
            _ if kv_input && *input_no == 1 => {
                (format!("kv:#{}", source_id(r.source)), Role::KvCache)
            }
            Source::Op(id) => (format!("#{id}"), Role::Activation),
            Source::External(id) => {
                let graph_input = r.decl.shape.iter().any(|&x| Placeholders::has_batch(x));
                let role = if graph_input {
                    Role::Activation
                } else {
                    Role::Weight
                };
                (format!("#{id}"), role)
            }
        };
        tensors.push(Tensor {
            source,
            axes,
            shape,
            dtype_bytes: crate::dtype::DtypeBytes::whole(opts.dtype_bytes),
            role,
            producer: None,
            residency: Residency::Hbm,
        });
    }
    let fits = |v: &[u64]| {
        v.iter()
            .try_fold(opts.dtype_bytes.max(2), |a, &d| a.checked_mul(d))
            .is_some_and(|x| x < 1 << 62)
    };
    if !fits(&extents) || !tensors.iter().all(|t| fits(&t.shape)) {
        return Err(format!("loop nest or tensor too large: dims {extents:?}"));
    }
    // A Concat is read as an external tensor (fold.rs), so its parts' producers are waited
    // for explicitly: parallel sets (docs/core-groups.md) order operators by dependences.
    let mut after = Vec::new();
    for (_, r) in &inputs {
        if let Source::External(id) = r.source {
            concat_producers(by_id, id, &mut after);
        }
    }
    after.sort();
    after.dedup();
    Ok(Operator {
        name: format!("{}#{}", e.op_type, e.id),
        kind,
        op_type: e.op_type.clone(),
        dims: extents,
        tensors,
        after,
        moe: None,
    })
}

/// The sources (`#id`) of the kept operators whose outputs the Concat `id` joins (through
/// folded nodes and nested Concats); nothing when `id` is not a Concat.
fn concat_producers(by_id: &HashMap<i64, &RawEntry>, id: i64, out: &mut Vec<String>) {
    let mut todo = match by_id.get(&id) {
        Some(e) if e.op_type == "Concat" => e.inputs.clone(),
        _ => return,
    };
    let mut seen = std::collections::HashSet::new();
    while let Some(p) = todo.pop() {
        if !seen.insert(p) {
            continue;
        }
        match by_id.get(&p) {
            None => {}
            Some(e) if matches!(e.op_type.as_str(), "Parameter" | "Constant") => {}
            Some(e) if fold::is_folded(&e.op_type) => todo.extend(e.inputs.iter().copied()),
            Some(e) => out.push(format!("#{}", e.id)),
        }
    }
}

fn source_id(s: Source) -> i64 {
    match s {
        Source::Op(id) | Source::External(id) => id,
    }
}

/// The raw extent of an index name: from a `where` clause or from a plain use in an input
/// (a Slice in reference mode prefers its input's extent, the reference's quirk).
fn raw_extent(
    name: &str,
    einsum: &Einsum,
    inputs: &[(usize, Resolved)],
    slice_uses_input: bool,
) -> Option<u64> {
    let from_input = |offset_ok: bool| {
        inputs.iter().find_map(|(_, r)| {
            r.access.iter().enumerate().find_map(|(axis, ix)| {
                let plain = ix.bare || (offset_ok && ix.offset_of_one);
                (plain && ix.vars[0] == name).then(|| r.decl.shape[axis])
            })
        })
    };
    if slice_uses_input {
        if let Some(n) = from_input(true) {
            return Some(n);
        }
    }
    einsum
        .wheres
        .get(name)
        .copied()
        .or_else(|| from_input(false))
}

/// Which sequence length each dimension's placeholder stands for.
///
/// Attention BatchMatMul: its query axis (the output's second-to-last) is the query, every
/// other sequence placeholder the key. Other operators: in reference mode always the query;
/// in clean mode the first is the query and later ones the key (attention scores `[B,H,1,S]`).
fn seq_roles(dims: &[Dim], einsum: &Einsum, kind: OpKind, opts: &ImportOptions) -> Vec<SeqRole> {
    let query_name = (kind == OpKind::BatchMatMul && einsum.output.len() >= 2)
        .then(|| einsum.output[einsum.output.len() - 2].vars.first())
        .flatten();
    let mut seen_seq = false;
    dims.iter()
        .map(|d| {
            let is_seq = Placeholders::is_seq(d.raw);
            let role = match query_name {
                Some(q) => {
                    if d.names.first() == Some(q) {
                        SeqRole::Query
                    } else {
                        SeqRole::Key
                    }
                }
                None if opts.compat == Compat::Clean && is_seq && seen_seq => SeqRole::Key,
                None => SeqRole::Query,
            };
            seen_seq |= is_seq;
            role
        })
        .collect()
}
