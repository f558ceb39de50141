//! ONNX nodes → graph-IR operators, for nodes that read at least one tensor (a weight, the
//! KV cache, a graph input or an operator's output). Nodes on constants only are folded by
//! the driver; the operators here follow the zoo's shapes (`zoo::builder`) so that an
//! imported model and its zoo twin plan alike: linear layers as 2-D `MatMul`s with merged
//! leading dimensions, attention as `BatchMatMul`s, softmax in four steps, LayerNormalization
//! as the zoo's norm steps, biases as separate `Add`s, embedding lookups as `Gather`s.

use super::proto::Node;
use super::shape::{self, attr_i, Known, BROADCAST, UNARY};
use super::Val;
use super::{Repeat, Tv};
use crate::graph::{OpKind, Operator, Residency, Role, Tensor};
use crate::zoo::builder::{Act, Builder, In};

type R<T> = Result<T, String>;

/// Views: the output is input 0's data with another shape (or type); folded.
pub const VIEWS: [&str; 9] = [
    "Identity",
    "Cast",
    "Dropout",
    "Reshape",
    "Transpose",
    "Unsqueeze",
    "Squeeze",
    "Flatten",
    "Expand",
];

/// A tensor as an operator reads it; scalar constants vanish (`None`), larger constants
/// (the exporter's masks and rotary tables) are read as named activations, as the zoo reads
/// its `rope.cos` table.
fn operand(v: &Option<Val>) -> Option<Tv> {
    match v.as_ref()? {
        Val::Tensor(t) => Some(t.clone()),
        Val::Static(k, _) if k.elements() <= 1 => None,
        Val::Static(k, name) => Some(Tv::activation(name, &k.shape)),
    }
}

fn required(v: &Option<Val>, what: &str) -> R<Tv> {
    operand(v).ok_or_else(|| format!("its {what} is a scalar constant"))
}

/// The input of an operator reading `t` on dimensions `axes`. Weights keep their stored
/// shape (an expanded or sliced view still reads the stored tensor), a transposed 2-D one
/// with its axes swapped back; the KV cache and activations their shape as this node sees
/// it.
fn input_of(t: &Tv, axes: &[usize]) -> In {
    match t.role {
        // (The optimizer's state exists only in a training step, built after import.)
        Role::Weight | Role::OptimizerState => match axes {
            &[a, b] if t.transposed && t.decl.len() == 2 => {
                In::named(&t.source, t.role, &[b, a], &t.decl)
            }
            _ => In::named(&t.source, t.role, axes, &t.decl),
        },
        Role::KvCache => In::named(&t.source, t.role, axes, &t.shape),
        Role::Activation => In::act(&t.act(), axes),
    }
}

fn identity(r: usize) -> Vec<usize> {
    (0..r).collect()
}

/// The operand axes of a tensor of shape `s` broadcast (right-aligned) into `out`: axes
/// that broadcast (extent 1 under a larger one) index no dimension.
fn aligned(s: &[u64], out: &[u64]) -> Vec<usize> {
    let off = out.len().saturating_sub(s.len());
    (0..s.len().min(out.len()))
        .filter(|&i| !(s[i] == 1 && out[off + i] != 1))
        .map(|i| off + i)
        .collect()
}

fn output(name: &str, shape: &[u64]) -> Val {
    Val::Tensor(Tv::activation(name, shape))
}

/// Maps one node; `known` and `outs` are its inputs and outputs as shape inference saw them.
pub fn emit(
    b: &mut Builder,
    name: &str,
    node: &Node,
    ins: &[Option<Val>],
    known: &[Option<Known>],
    outs: &[Known],
    opset: i64,
) -> R<Vec<Val>> {
    let op = node.op_type.as_str();
    let out = outs.first().map(|k| k.shape.clone()).unwrap_or_default();
    let one = |v: Val| Ok(vec![v]);
    if VIEWS.contains(&op) {
        return one(view(node, ins, outs.first().ok_or("no output")?)?);
    }
    if BROADCAST.contains(&op) || UNARY.contains(&op) {
        return one(pointwise(b, name, op, ins, &out)?);
    }
    let repeated_kv =
        |v: &Val| matches!(v, Val::Tensor(t) if t.role == Role::KvCache && t.repeat.is_some());
    if op != "MatMul" && ins.iter().flatten().any(repeated_kv) {
        return Err(format!("{REPEATED_KV} read by {op} is not supported"));
    }
    match op {
        "Concat" => one(concat(b, name, ins, &out)),
        "MatMul" => {
            let (x, w) = (required(&ins[0], "A")?, required(&ins[1], "B")?);
            one(matmul(b, name, &x, &w, &out)?)
        }
        "Gemm" => gemm(b, name, node, ins, &out).map(|v| vec![v]),
        "Softmax" => {
            let x = required(&ins[0], "input")?;
            let a = attr_i(node, "axis").unwrap_or(-1);
            let r = x.shape.len() as i64;
            let a = if a < 0 { a + r } else { a };
            if !(0..r).contains(&a) {
                return Err(format!("axis {a} out of range"));
            }
            one(softmax(b, name, &x, a as usize))
        }
        "LayerNormalization" => layer_norm(b, name, node, ins).map(|v| vec![v]),
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {
            let x = required(&ins[0], "input")?;
            let r = x.shape.len();
            let reduced = shape::reduced_axes(node, known, opset, r)?;
            let kept: Vec<usize> = (0..r).filter(|i| !reduced.contains(i)).collect();
            b.op(
                name,
                OpKind::Reduce,
                op,
                &x.shape,
                &kept,
                vec![input_of(&x, &identity(r))],
            );
            one(output(name, &out))
        }
        "Gather" => one(gather(b, name, node, ins, &out)?),
        "Slice" => one(slice_op(b, name, &required(&ins[0], "input")?, &out)),
        "Split" => {
            let x = required(&ins[0], "input")?;
            Ok(outs
                .iter()
                .enumerate()
                .map(|(k, o)| slice_op(b, &format!("{name}.{k}"), &x, &o.shape))
                .collect())
        }
        "Conv" | "MaxPool" | "AveragePool" | "GlobalAveragePool" | "GlobalMaxPool" => {
            window_op(b, name, node, ins, known).map(|v| vec![v])
        }
        _ => Err("unsupported op type".into()),
    }
}

const REPEATED_KV: &str = "a KV cache with repeated heads (repeat_kv)";

/// How a view changes a tensor's [`Repeat`].
enum Follow {
    /// The repeat (if any) is at this axis of the view.
    Kept(Option<Repeat>),
    /// The view mixes the repeated axis with others, or broadcasts more than one axis.
    Lost,
}

/// Folds a view onto its input: same data, another shape. A broadcast that repeats one
/// axis (`repeat_kv`'s Expand) is followed through the views after it, so that the
/// attention MatMul reads the data, not the repeats, and takes the zoo's grouped shape.
fn view(node: &Node, ins: &[Option<Val>], outk: &Known) -> R<Val> {
    let op = node.op_type.as_str();
    let out = &outk.shape;
    match ins.first().cloned().flatten() {
        Some(Val::Tensor(t)) => {
            let mut transposed = t.transposed;
            let follow = match op {
                "Expand" => expanded(&t, out),
                "Transpose" => {
                    let p = shape::perm(node, t.shape.len())?;
                    transposed ^= p == [1, 0];
                    match t.repeat {
                        Some(r) => p
                            .iter()
                            .position(|&a| a == r.axis)
                            .map_or(Follow::Lost, |axis| {
                                Follow::Kept(Some(Repeat { axis, ..r }))
                            }),
                        None => Follow::Kept(None),
                    }
                }
                "Identity" | "Cast" | "Dropout" => Follow::Kept(t.repeat),
                // Reshape, Flatten, Squeeze, Unsqueeze.
                _ => match t.repeat {
                    Some(r) => reshaped(&t.shape, r, out),
                    None => Follow::Kept(None),
                },
            };
            let repeat = match follow {
                // A weight is read as stored whatever view reads it.
                _ if t.role == Role::Weight => None,
                Follow::Kept(r) => r,
                Follow::Lost if t.role == Role::KvCache => {
                    return Err(
                        "a broadcast of the KV cache other than repeat_kv's (one head \
                                axis repeated, read by the attention MatMul) is not supported"
                            .into(),
                    )
                }
                // An activation's view is read whole, as any view of it.
                Follow::Lost => None,
            };
            Ok(Val::Tensor(Tv {
                shape: out.to_vec(),
                transposed,
                repeat,
                ..t
            }))
        }
        Some(Val::Static(_, name)) => Ok(Val::Static(outk.clone(), name)),
        None => Err("input 0 is missing".into()),
    }
}

/// An Expand of `t` to `out`: growing one axis from 1 is a repeat along it (broadcasting
/// to 0 is not: nothing would be read).
fn expanded(t: &Tv, out: &[u64]) -> Follow {
    let off = out.len().saturating_sub(t.shape.len());
    let extent = |i: usize| if i < off { 1 } else { t.shape[i - off] };
    let grown: Vec<usize> = (0..out.len()).filter(|&i| extent(i) != out[i]).collect();
    match (t.repeat, grown.as_slice()) {
        (r, []) => Follow::Kept(r.map(|r| Repeat {
            axis: r.axis + off,
            ..r
        })),
        (None, &[axis]) if out[axis] > 1 => Follow::Kept(Some(Repeat {
            axis,
            times: out[axis],
        })),
        _ => Follow::Lost,
    }
}

/// A reshape of `from` (repeated as `r`) to `to`: the repeat stays a repeat where an axis
/// of `to` has the same elements after it and a multiple of `r.times` as its extent (the
/// repeated copies are still the innermost run of one axis: `[b, kv, n, s, d]` →
/// `[b, kv · n, s, d]`).
fn reshaped(from: &[u64], r: Repeat, to: &[u64]) -> Follow {
    let inner = shape::count(&from[r.axis + 1..]);
    (0..to.len())
        .find(|&j| shape::count(&to[j + 1..]) == inner && to[j] >= r.times && to[j] % r.times == 0)
        .map_or(Follow::Lost, |axis| {
            Follow::Kept(Some(Repeat {
                axis,
                times: r.times,
            }))
        })
}

/// An elementwise node. When one operand has repeated heads and the others are the same
/// along the repeated axis (SDPA's `K · √scale` after `repeat_kv`), it is computed on the
/// data and keeps the repeat — `f(repeat(k), c) = repeat(f(k, c))` — so that the MatMul
/// after it still takes the grouped shape and the KV cache is read at its size. (Not
/// Trilu, whose result depends on the position.)
fn pointwise(b: &mut Builder, name: &str, op: &str, ins: &[Option<Val>], out: &[u64]) -> R<Val> {
    let parts: Vec<Tv> = ins.iter().filter_map(operand).collect();
    let repeated: Vec<&Tv> = parts.iter().filter(|t| t.repeat.is_some()).collect();
    let Some(r) = repeated.first().and_then(|t| t.repeat) else {
        return Ok(elementwise(b, name, op, ins, out));
    };
    let same_along = |t: &&Tv| {
        let off = out.len().saturating_sub(t.shape.len());
        r.axis < off || t.shape.get(r.axis - off) == Some(&1)
    };
    let commutes = op != "Trilu"
        && repeated.len() == 1
        && repeated[0].shape.len() == out.len()
        && parts
            .iter()
            .filter(|t| t.repeat.is_none())
            .all(|t| same_along(&t));
    if !commutes {
        if repeated.iter().any(|t| t.role == Role::KvCache) {
            return Err(format!("{REPEATED_KV} read by {op} is not supported"));
        }
        // A repeated activation is read whole, as any view of it.
        return Ok(elementwise(b, name, op, ins, out));
    }
    let data: Vec<Option<Val>> = ins
        .iter()
        .map(|v| match v {
            Some(Val::Tensor(t)) if t.repeat.is_some() => Some(Val::Tensor(Tv {
                shape: t.data_shape(),
                repeat: None,
                ..t.clone()
            })),
            v => v.clone(),
        })
        .collect();
    let mut data_out = out.to_vec();
    data_out[r.axis] /= r.times;
    elementwise(b, name, op, &data, &data_out);
    Ok(Val::Tensor(Tv {
        repeat: Some(r),
        ..Tv::activation(name, out)
    }))
}

fn elementwise(b: &mut Builder, name: &str, op: &str, ins: &[Option<Val>], out: &[u64]) -> Val {
    let parts: Vec<Tv> = ins.iter().filter_map(operand).collect();
    let inputs: Vec<In> = parts
        .iter()
        .map(|t| input_of(t, &aligned(&t.shape, out)))
        .collect();
    let kind = if parts.len() == 1 {
        OpKind::Unary
    } else {
        OpKind::Elementwise
    };
    b.op(name, kind, op, out, &identity(out.len()), inputs);
    output(name, out)
}

/// A Concat: of the KV cache and the new token, it is the KV cache; with a weight (ViT's CLS
/// token) it is an operator reading both; of activations it is folded, its users reading
/// the concatenation as one tensor, as the reference format folds Concat.
fn concat(b: &mut Builder, name: &str, ins: &[Option<Val>], out: &[u64]) -> Val {
    let parts: Vec<Tv> = ins.iter().filter_map(operand).collect();
    if let Some(kv) = parts.iter().find(|t| t.role == Role::KvCache) {
        return Val::Tensor(Tv {
            source: kv.source.clone(),
            role: Role::KvCache,
            shape: out.to_vec(),
            decl: out.to_vec(),
            transposed: false,
            repeat: None,
        });
    }
    if parts.iter().any(|t| t.role == Role::Weight) {
        let all = identity(out.len());
        let inputs = parts
            .iter()
            .map(|t| match t.role {
                Role::Activation => In::named(&t.source, t.role, &all, &t.shape),
                _ => input_of(t, &all),
            })
            .collect();
        b.op(name, OpKind::Elementwise, "Concat", out, &all, inputs);
    }
    output(name, out)
}

/// A MatMul: a linear layer (B 2-D) or attention (both batched). When B is K or V with
/// repeated heads (`repeat_kv`), the operator takes the zoo's grouped shape: dims
/// `[b, kv_heads, n_rep · M, N, K]`, B read at its `kv_heads`, A's heads split into
/// `kv_heads × n_rep` with the repeats merged into its rows.
fn matmul(b: &mut Builder, name: &str, x: &Tv, w: &Tv, out: &[u64]) -> R<Val> {
    let (ra, rb) = (x.shape.len(), w.shape.len());
    let (m, k, n) = (x.shape[ra - 2], x.shape[ra - 1], w.shape[rb - 1]);
    let nb = out.len() - 2;
    let group = match (x.repeat, w.repeat) {
        (None, None) => None,
        (None, Some(r))
            if ra == out.len()
                && rb == out.len()
                && r.axis < nb
                && x.shape[r.axis] == out[r.axis] =>
        {
            Some(r)
        }
        _ if [x, w]
            .iter()
            .any(|t| t.role == Role::KvCache && t.repeat.is_some()) =>
        {
            return Err(format!(
                "{REPEATED_KV} is supported as the MatMul's B operand, repeated on a batch \
                 axis A has whole"
            ))
        }
        // A repeated activation is read whole, as any view of it.
        _ => None,
    };
    if group.is_none() && w.shape[..rb - 2].iter().all(|&d| d == 1) {
        // A linear layer: leading dimensions merged, as the zoo's `linear`.
        let rows = shape::count(&x.shape[..ra - 1]);
        let ins = vec![input_of(x, &[0, 2]), input_of(w, &[2, 1])];
        b.op(name, OpKind::MatMul, "MatMul", &[rows, n, k], &[0, 1], ins);
    } else {
        let mut batch = out[..nb].to_vec();
        let (mut x, mut w, mut m) = (x.clone(), w.clone(), m);
        if let Some(r) = group {
            batch[r.axis] /= r.times;
            m *= r.times;
            x.shape[r.axis] /= r.times;
            x.shape[ra - 2] *= r.times;
            w.shape = w.data_shape();
            w.repeat = None;
        }
        let mut dims = batch.clone();
        dims.extend([m, n, k]);
        let mut ax = aligned(&x.shape[..ra - 2], &batch);
        ax.extend([nb, nb + 2]);
        let mut aw = aligned(&w.shape[..rb - 2], &batch);
        aw.extend([nb + 2, nb + 1]);
        let ins = vec![input_of(&x, &ax), input_of(&w, &aw)];
        let out_axes = identity(nb + 2);
        b.op(name, OpKind::BatchMatMul, "MatMul", &dims, &out_axes, ins);
    }
    // Grouped, the operator's output is `[b, kv_heads, n_rep · M, N]`: the same data as
    // the node's `[b, heads, M, N]`, which its users read.
    Ok(output(name, out))
}

fn gemm(b: &mut Builder, name: &str, node: &Node, ins: &[Option<Val>], out: &[u64]) -> R<Val> {
    let x = required(&ins[0], "A")?;
    let w = required(&ins[1], "B")?;
    let ax: &[usize] = if attr_i(node, "transA").unwrap_or(0) != 0 {
        &[2, 0]
    } else {
        &[0, 2]
    };
    let aw: &[usize] = if attr_i(node, "transB").unwrap_or(0) != 0 {
        &[1, 2]
    } else {
        &[2, 1]
    };
    let (m, n) = (out[0], out[1]);
    let k = if ax == [0, 2] { x.shape[1] } else { x.shape[0] };
    let ins2 = vec![input_of(&x, ax), input_of(&w, aw)];
    b.op(name, OpKind::MatMul, "Gemm", &[m, n, k], &[0, 1], ins2);
    let y = output(name, out);
    Ok(match ins.get(2).and_then(operand) {
        Some(c) => elementwise(
            b,
            &format!("{name}.bias"),
            "Add",
            &[Some(y), Some(Val::Tensor(c))],
            out,
        ),
        None => y,
    })
}

/// Softmax in the zoo's four steps along `axis`: max, exp, sum, divide.
fn softmax(b: &mut Builder, name: &str, x: &Tv, axis: usize) -> Val {
    let all = identity(x.shape.len());
    let rest: Vec<usize> = all.iter().copied().filter(|&d| d != axis).collect();
    let dims = &x.shape;
    let k = OpKind::Softmax;
    let step = |b: &mut Builder, s: &str, out: &[usize], ins: Vec<In>| {
        b.op(&format!("{name}.{s}"), k, "Softmax", dims, out, ins)
    };
    let mx = step(b, "max", &rest, vec![input_of(x, &all)]);
    let ex = step(b, "exp", &all, vec![input_of(x, &all), In::act(&mx, &rest)]);
    let sm = step(b, "sum", &rest, vec![In::act(&ex, &all)]);
    let dv = step(
        b,
        "div",
        &all,
        vec![In::act(&ex, &all), In::act(&sm, &rest)],
    );
    output(&dv.source, &x.shape)
}

/// LayerNormalization over the last axis, as the zoo's norm steps (docs/onnx.md).
fn layer_norm(b: &mut Builder, name: &str, node: &Node, ins: &[Option<Val>]) -> R<Val> {
    let x = required(&ins[0], "input")?;
    let r = x.shape.len();
    if r == 0 {
        return Err("it normalises a scalar".into());
    }
    let a = attr_i(node, "axis").unwrap_or(-1);
    if a != -1 && a != r as i64 - 1 {
        return Err(format!(
            "normalisation over axis {a}: only the last axis is supported"
        ));
    }
    if x.role != Role::Activation {
        return Err("it normalises a weight or the KV cache".into());
    }
    let xa = x.act();
    let s = b.reduce_last(&format!("{name}.sum"), OpKind::Reduce, "Sum", &xa);
    let mean = b.unary(&format!("{name}.mean"), "Divide", &s);
    let kind = OpKind::Elementwise;
    let c = b.with_rows(&format!("{name}.centre"), kind, "Subtract", &xa, &mean);
    let sq = b.binary(&format!("{name}.sq"), "Multiply", &c, &c);
    let ss = b.reduce_last(&format!("{name}.sqsum"), OpKind::Reduce, "Sum", &sq);
    let var = b.unary(&format!("{name}.var"), "Divide", &ss);
    let eps = b.unary(&format!("{name}.eps"), "Add", &var);
    let sd = b.unary(&format!("{name}.sqrt"), "Sqrt", &eps);
    let mut y = Val::Tensor(Tv::from_act(&b.with_rows(
        &format!("{name}.div"),
        kind,
        "Divide",
        &c,
        &sd,
    )));
    for (i, (step, op)) in [(1, ("scale", "Multiply")), (2, ("shift", "Add"))] {
        if ins.get(i).and_then(operand).is_some() {
            let pair = [Some(y), ins[i].clone()];
            y = elementwise(b, &format!("{name}.{step}"), op, &pair, &x.shape);
        }
    }
    Ok(y)
}

fn gather(b: &mut Builder, name: &str, node: &Node, ins: &[Option<Val>], out: &[u64]) -> R<Val> {
    let table = required(&ins[0], "data")?;
    let r = table.shape.len() as i64;
    let a = attr_i(node, "axis").unwrap_or(0);
    let a = if a < 0 { a + r } else { a };
    match table.role {
        Role::Weight if a == 0 => {
            let h = shape::count(&table.shape[1..]);
            let rows = shape::count(out) / h.max(1);
            let mut inputs = vec![input_of(&table, &[2, 1])];
            if let Some(ids) = ins.get(1).and_then(operand) {
                inputs.push(In::named(&ids.source, Role::Activation, &[0], &[rows]));
            }
            let dims = [rows, h, table.shape[0]];
            b.op(name, OpKind::Gather, "Gather", &dims, &[0, 1], inputs);
            Ok(output(name, out))
        }
        Role::KvCache => Err("a gather from the KV cache is not supported".into()),
        _ => Ok(slice_op(b, name, &table, out)),
    }
}

/// A Slice (or a Split part, or a Gather of one position): reads only its part.
fn slice_op(b: &mut Builder, name: &str, x: &Tv, out: &[u64]) -> Val {
    let all = identity(out.len());
    let input = match x.role {
        Role::Activation => In::act(
            &Act {
                source: x.source.clone(),
                shape: out.to_vec(),
            },
            &all,
        ),
        _ => input_of(x, &all),
    };
    b.op(name, OpKind::Slice, "Slice", out, &all, vec![input]);
    output(name, out)
}

/// A 2-D convolution (dims `[N, M, OH, OW, C/groups, KH, KW]`) or pooling window (`[N, C,
/// OH, OW, KH, KW]`); the input's spatial axes are compound (`OH` with `KH`), as the
/// reference format's Convolution.
fn window_op(
    b: &mut Builder,
    name: &str,
    node: &Node,
    ins: &[Option<Val>],
    known: &[Option<Known>],
) -> R<Val> {
    let x = required(&ins[0], "input")?;
    let win = shape::window(node, known)?;
    let o = &win.out;
    let [kh, kw] = win.kernel;
    let conv = node.op_type == "Conv";
    let tensor = |t: &Tv, axes: Vec<Vec<usize>>, shape: Vec<u64>| Tensor {
        source: t.source.clone(),
        axes,
        shape,
        dtype_bytes: b.bytes(t.role),
        role: t.role,
        producer: None,
        residency: Residency::Hbm,
    };
    let out_t = tensor(
        &Tv::activation(name, o),
        vec![vec![0], vec![1], vec![2], vec![3]],
        o.clone(),
    );
    let (op, dims, tensors) = if conv {
        let w = required(&ins[1], "weight")?;
        let cg = w.decl.get(1).copied().unwrap_or(1);
        let xt = tensor(
            &x,
            vec![vec![0], vec![4], vec![2, 5], vec![3, 6]],
            x.shape.clone(),
        );
        let wt = tensor(&w, vec![vec![1], vec![4], vec![5], vec![6]], w.decl.clone());
        let dims = vec![o[0], o[1], o[2], o[3], cg, kh, kw];
        ((OpKind::Conv, "Conv"), dims, vec![out_t, xt, wt])
    } else {
        let xt = tensor(
            &x,
            vec![vec![0], vec![1], vec![2, 4], vec![3, 5]],
            x.shape.clone(),
        );
        let dims = vec![o[0], o[1], o[2], o[3], kh, kw];
        ((OpKind::Pool, node.op_type.as_str()), dims, vec![out_t, xt])
    };
    b.ops.push(Operator {
        name: name.into(),
        kind: op.0,
        op_type: op.1.into(),
        dims,
        tensors,
        after: Vec::new(),
        moe: None,
    });
    let y = output(name, o);
    Ok(match (conv, ins.get(2).and_then(operand)) {
        (true, Some(bias)) => {
            // One value per output channel: viewed as [M, 1, 1] it broadcasts along axis 1.
            let c = Val::Tensor(Tv {
                shape: vec![o[1], 1, 1],
                ..bias
            });
            elementwise(b, &format!("{name}.bias"), "Add", &[Some(y), Some(c)], o)
        }
        _ => y,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{Dtype, Dtypes};

    fn node(op: &str, perm: Option<Vec<i64>>) -> Node {
        let mut n = Node {
            op_type: op.into(),
            ..Node::default()
        };
        if let Some(ints) = perm {
            n.attributes.push(super::super::proto::Attribute {
                name: "perm".into(),
                ints,
                ..Default::default()
            });
        }
        n
    }

    fn tensor(role: Role, shape: &[u64]) -> Val {
        Val::Tensor(Tv {
            role,
            ..Tv::activation("t", shape)
        })
    }

    /// Folds the views `(op, output shape)` in turn onto `v`.
    fn views(mut v: Val, steps: &[(&str, &[u64])]) -> R<Tv> {
        for (op, out) in steps {
            let perm = (*op == "Transpose").then(|| vec![0, 1, 3, 2]);
            v = view(&node(op, perm), &[Some(v)], &Known::shaped(out.to_vec()))?;
        }
        match v {
            Val::Tensor(t) => Ok(t),
            Val::Static(..) => Err("static".into()),
        }
    }

    /// HF's `repeat_kv` of a `[2, 2, 8, 16]` cache to 6 heads, then `transpose(2, 3)`.
    const REPEAT_KV: [(&str, &[u64]); 4] = [
        ("Unsqueeze", &[2, 2, 1, 8, 16]),
        ("Expand", &[2, 2, 3, 8, 16]),
        ("Reshape", &[2, 6, 8, 16]),
        ("Transpose", &[2, 6, 16, 8]),
    ];

    #[test]
    fn repeat_kv_is_followed_to_a_grouped_attention_matmul() {
        let k = views(tensor(Role::KvCache, &[2, 2, 8, 16]), &REPEAT_KV).unwrap();
        assert_eq!(k.repeat, Some(Repeat { axis: 1, times: 3 }));
        assert_eq!(k.data_shape(), [2, 2, 16, 8]);
        let q = Tv::activation("q", &[2, 6, 5, 16]);
        let mut b = Builder::new(Dtypes::all(Dtype::Fp16));
        matmul(&mut b, "qk", &q, &k, &[2, 6, 5, 8]).unwrap();
        let op = &b.ops[0];
        // [b, kv heads, 3 repeats × 5 query rows, s, d]; K read at its 2 heads.
        assert_eq!(op.dims, [2, 2, 15, 8, 16]);
        assert_eq!(op.tensors[2].shape, [2, 2, 16, 8]);
        assert_eq!(op.tensors[2].role, Role::KvCache);
    }

    #[test]
    fn a_pointwise_step_on_repeated_heads_is_computed_on_the_data() {
        // SDPA's K · √scale: the scalar vanishes, the Mul runs on [2, 2, 16, 8].
        let k = views(tensor(Role::KvCache, &[2, 2, 8, 16]), &REPEAT_KV).unwrap();
        let scale = Val::Static(Known::shaped(vec![]), "s".into());
        let mut b = Builder::new(Dtypes::all(Dtype::Fp16));
        let ins = [Some(Val::Tensor(k)), Some(scale)];
        let out = [2, 6, 16, 8];
        let Val::Tensor(y) = pointwise(&mut b, "k.scale", "Mul", &ins, &out).unwrap() else {
            panic!("a tensor");
        };
        assert_eq!(b.ops[0].dims, [2, 2, 16, 8]);
        assert_eq!(b.ops[0].tensors[1].role, Role::KvCache);
        assert_eq!(b.ops[0].tensors[1].shape, [2, 2, 16, 8]);
        assert_eq!(
            (y.shape.as_slice(), y.repeat),
            (&out[..], Some(Repeat { axis: 1, times: 3 }))
        );
        // An operand that differs along the heads does not commute: refused for the cache.
        let k = views(tensor(Role::KvCache, &[2, 2, 8, 16]), &REPEAT_KV).unwrap();
        let per_head = Val::Tensor(Tv::activation("h", &[1, 6, 1, 1]));
        let ins = [Some(Val::Tensor(k)), Some(per_head)];
        assert!(pointwise(&mut b, "k.mul", "Mul", &ins, &out).is_err());
    }

    #[test]
    fn other_broadcasts_of_the_kv_cache_are_refused() {
        // An axis broadcast to nothing.
        let kv = tensor(Role::KvCache, &[2, 1, 8, 16]);
        assert!(views(kv, &[("Expand", &[2, 0, 8, 16])]).is_err());
        // Two axes grown at once.
        let kv = tensor(Role::KvCache, &[2, 1, 8, 1]);
        let e = views(kv, &[("Expand", &[2, 4, 8, 16])]).unwrap_err();
        assert!(e.contains("repeat_kv"), "{e}");
        // A reshape that splits the repeated heads across two axes.
        let mut split = REPEAT_KV[..3].to_vec();
        split.push(("Reshape", &[2, 3, 2, 8, 16]));
        let kv = tensor(Role::KvCache, &[2, 2, 8, 16]);
        assert!(views(kv, &split).is_err());
        // The same views of an activation are read whole, as before.
        let act = tensor(Role::Activation, &[2, 2, 8, 16]);
        assert_eq!(views(act, &split).unwrap().repeat, None);
        // Repeated K on the left of a MatMul.
        let k = views(tensor(Role::KvCache, &[2, 2, 8, 16]), &REPEAT_KV).unwrap();
        let x = Tv::activation("x", &[2, 6, 8, 5]);
        let mut b = Builder::new(Dtypes::all(Dtype::Fp16));
        assert!(matmul(&mut b, "m", &k, &x, &[2, 6, 16, 5]).is_err());
    }

    #[test]
    fn a_transposed_weight_is_read_on_its_stored_axes() {
        // Optimum's tied head: MatMul(x, Transpose(embedding)).
        let t = views(tensor(Role::Weight, &[256, 64]), &[]).unwrap();
        assert!(!t.transposed);
        let n = node("Transpose", None);
        let t = match view(&n, &[Some(Val::Tensor(t))], &Known::shaped(vec![64, 256])) {
            Ok(Val::Tensor(t)) => t,
            other => panic!("{other:?}"),
        };
        assert!(t.transposed && t.repeat.is_none());
        let x = Tv::activation("x", &[2, 64]);
        let mut b = Builder::new(Dtypes::all(Dtype::Fp16));
        matmul(&mut b, "head", &x, &t, &[2, 256]).unwrap();
        let w = &b.ops[0].tensors[2];
        // dims [rows, vocab, hidden]: the [vocab, hidden] table on (1, 2), as the zoo's.
        assert_eq!(b.ops[0].dims, [2, 256, 64]);
        assert_eq!(
            (w.shape.clone(), w.axes.clone()),
            (vec![256, 64], vec![vec![1], vec![2]])
        );
    }
}
