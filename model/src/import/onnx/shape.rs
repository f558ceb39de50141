//! Shape inference for every supported node, and evaluation of the small integer tensors
//! that shape plumbing computes (`Shape` → `Gather` → `Concat` → `Reshape`).
//!
//! Symbolic dimensions are bound before the walk (`--batch`, `--kv`), so every shape here is
//! concrete and the exporter's dynamic-shape arithmetic can simply be carried out: that is
//! what folds it away. Data is kept only for integer tensors of at most
//! [`MAX_INT_DATA`] elements; float tensors carry only shapes.

use super::proto::{Node, MAX_INT_DATA};

/// A value as inference sees it: its shape and, for small integer tensors, its data.
#[derive(Clone, Debug, PartialEq)]
pub struct Known {
    /// Extents.
    pub shape: Vec<u64>,
    /// Row-major values, when known.
    pub data: Option<Vec<i64>>,
}

impl Known {
    /// A value with a shape and no data.
    pub fn shaped(shape: Vec<u64>) -> Known {
        Known { shape, data: None }
    }

    fn with(shape: Vec<u64>, data: Vec<i64>) -> Known {
        let keep = data.len() as u64 <= MAX_INT_DATA;
        Known {
            shape,
            data: keep.then_some(data),
        }
    }

    /// Number of elements (saturating: a hostile shape cannot overflow it).
    pub fn elements(&self) -> u64 {
        count(&self.shape)
    }
}

type R<T> = Result<T, String>;

/// The product of extents, saturating at `u64::MAX` (the importer refuses such sizes later).
pub fn count(shape: &[u64]) -> u64 {
    shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
}

/// Attribute lookups.
pub fn attr_i(n: &Node, name: &str) -> Option<i64> {
    n.attributes
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| a.i)
}

/// A list attribute (`perm`, `axes`, `pads`).
pub fn attr_ints(n: &Node, name: &str) -> Option<Vec<i64>> {
    n.attributes
        .iter()
        .find(|a| a.name == name)
        .map(|a| a.ints.clone())
}

/// A Transpose's `perm` (reversed axes by default): output axis `i` is input axis `perm[i]`.
pub fn perm(node: &Node, rank: usize) -> R<Vec<usize>> {
    let perm = attr_ints(node, "perm").unwrap_or_else(|| (0..rank as i64).rev().collect());
    if perm.len() != rank {
        return Err(format!("perm {perm:?} for rank {rank}"));
    }
    perm.iter().map(|&p| axis(p, rank)).collect()
}

fn axis(a: i64, rank: usize) -> R<usize> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if v < 0 || v >= r {
        return Err(format!("axis {a} out of range for rank {rank}"));
    }
    Ok(v as usize)
}

fn input(ins: &[Option<Known>], i: usize) -> R<&Known> {
    ins.get(i)
        .and_then(Option::as_ref)
        .ok_or_else(|| format!("input {i} is missing"))
}

fn data<'a>(ins: &'a [Option<Known>], i: usize, what: &str) -> R<&'a [i64]> {
    input(ins, i)?
        .data
        .as_deref()
        .ok_or_else(|| format!("its {what} (input {i}) is not a constant"))
}

/// Numpy broadcasting of two shapes.
pub fn broadcast(a: &[u64], b: &[u64]) -> R<Vec<u64>> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|i| {
            let x = if i + a.len() >= r {
                a[i + a.len() - r]
            } else {
                1
            };
            let y = if i + b.len() >= r {
                b[i + b.len() - r]
            } else {
                1
            };
            match (x, y) {
                _ if x == y => Ok(x),
                (1, _) => Ok(y),
                (_, 1) => Ok(x),
                _ => Err(format!("shapes {a:?} and {b:?} do not broadcast")),
            }
        })
        .collect()
}

/// The index in a broadcast operand of shape `s` of output position `out` (row-major).
fn broadcast_index(s: &[u64], out_shape: &[u64], mut flat: u64) -> usize {
    let mut idx = 0u64;
    let mut stride = 1u64;
    let r = out_shape.len();
    for j in (0..r).rev() {
        let coord = flat % out_shape[j].max(1);
        flat /= out_shape[j].max(1);
        if j + s.len() >= r {
            let d = s[j + s.len() - r];
            if d != 1 {
                idx += coord * stride;
            }
            stride *= d;
        }
    }
    idx as usize
}

fn elementwise(ins: &[Option<Known>], f: Option<fn(&[i64]) -> i64>) -> R<Known> {
    let present: Vec<&Known> = ins.iter().flatten().collect();
    let mut shape: Vec<u64> = Vec::new();
    for k in &present {
        shape = broadcast(&shape, &k.shape)?;
    }
    let n = count(&shape);
    let values = match f {
        Some(f) if n <= MAX_INT_DATA && present.iter().all(|k| k.data.is_some()) => {
            let mut out = Vec::with_capacity(n as usize);
            let mut args = Vec::with_capacity(present.len());
            for flat in 0..n {
                args.clear();
                for k in &present {
                    let d = k.data.as_deref().unwrap_or(&[]);
                    args.push(
                        d.get(broadcast_index(&k.shape, &shape, flat))
                            .copied()
                            .unwrap_or(0),
                    );
                }
                out.push(f(&args));
            }
            Some(out)
        }
        _ => None,
    };
    Ok(match values {
        Some(v) => Known::with(shape, v),
        None => Known::shaped(shape),
    })
}

/// An integer binary op by name (the data rule of shape arithmetic).
fn int_op(op: &str) -> Option<fn(&[i64]) -> i64> {
    Some(match op {
        "Add" => |a| a[0].wrapping_add(a[1]),
        "Sub" => |a| a[0].wrapping_sub(a[1]),
        "Mul" => |a| a[0].wrapping_mul(a[1]),
        "Div" => |a| a[0].checked_div(a[1]).unwrap_or(0),
        "Mod" => |a| a[0].checked_rem(a[1]).unwrap_or(0),
        "Max" => |a| a[0].max(a[1]),
        "Min" => |a| a[0].min(a[1]),
        "Equal" => |a| i64::from(a[0] == a[1]),
        "Less" => |a| i64::from(a[0] < a[1]),
        "Greater" => |a| i64::from(a[0] > a[1]),
        "LessOrEqual" => |a| i64::from(a[0] <= a[1]),
        "GreaterOrEqual" => |a| i64::from(a[0] >= a[1]),
        "And" => |a| i64::from(a[0] != 0 && a[1] != 0),
        "Or" => |a| i64::from(a[0] != 0 || a[1] != 0),
        "Where" => |a| if a[0] != 0 { a[1] } else { a[2] },
        _ => return None,
    })
}

/// Unary op types: output shaped as input 0 (operators of kind `unary` when they read a
/// tensor).
pub const UNARY: [&str; 17] = [
    "Neg",
    "Not",
    "Sqrt",
    "Erf",
    "Tanh",
    "Sigmoid",
    "Relu",
    "Gelu",
    "Reciprocal",
    "Cos",
    "Sin",
    "Exp",
    "Log",
    "Abs",
    "Softplus",
    "HardSigmoid",
    "Trilu",
];

/// Other op types whose output has the shape (and, for the first three, the data) of input 0.
const SAME_SHAPE: [&str; 5] = [
    "Identity",
    "Cast",
    "Dropout",
    "Softmax",
    "LayerNormalization",
];

/// Binary (and ternary) elementwise op types with numpy broadcasting.
pub const BROADCAST: [&str; 16] = [
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Mod",
    "Max",
    "Min",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "And",
    "Or",
    "Where",
];

/// The output values of `node` given its inputs (`None`: an omitted optional input).
pub fn infer(node: &Node, ins: &[Option<Known>], opset: i64) -> R<Vec<Known>> {
    let op = node.op_type.as_str();
    if SAME_SHAPE.contains(&op) || UNARY.contains(&op) {
        let x = input(ins, 0)?;
        let data = match op {
            "Identity" | "Cast" | "Dropout" => x.data.clone(),
            "Neg" => x
                .data
                .as_ref()
                .map(|d| d.iter().map(|v| v.wrapping_neg()).collect()),
            "Not" => x
                .data
                .as_ref()
                .map(|d| d.iter().map(|v| i64::from(*v == 0)).collect()),
            _ => None,
        };
        return Ok(vec![Known {
            shape: x.shape.clone(),
            data,
        }]);
    }
    if BROADCAST.contains(&op) {
        let arity = if op == "Where" { 3 } else { 2 };
        if ins.len() != arity || ins.iter().any(Option::is_none) {
            return Err(format!("expects {arity} inputs"));
        }
        return Ok(vec![elementwise(ins, int_op(op))?]);
    }
    let one = |k: Known| Ok(vec![k]);
    match op {
        "Constant" => one(constant(node)?),
        "Shape" => {
            let s = &input(ins, 0)?.shape;
            let r = s.len() as i64;
            let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let start = clamp(attr_i(node, "start").unwrap_or(0));
            let end = clamp(attr_i(node, "end").unwrap_or(r)).max(start);
            let d: Vec<i64> = s[start..end].iter().map(|&x| x as i64).collect();
            one(Known::with(vec![d.len() as u64], d))
        }
        "Size" => {
            let n = input(ins, 0)?.elements() as i64;
            one(Known::with(vec![], vec![n]))
        }
        "Reshape" => {
            let x = input(ins, 0)?;
            let target = data(ins, 1, "shape")?;
            let shape = reshape(&x.shape, target)?;
            one(Known {
                shape,
                data: x.data.clone(),
            })
        }
        "Flatten" => {
            let x = input(ins, 0)?;
            let a = axis(attr_i(node, "axis").unwrap_or(1), x.shape.len() + 1)?;
            let (lead, rest) = (count(&x.shape[..a]), count(&x.shape[a..]));
            one(Known {
                shape: vec![lead, rest],
                data: x.data.clone(),
            })
        }
        "Transpose" => {
            let x = input(ins, 0)?;
            let r = x.shape.len();
            let shape = perm(node, r)?.iter().map(|&a| x.shape[a]).collect();
            let data = if r <= 1 { x.data.clone() } else { None };
            one(Known { shape, data })
        }
        "Unsqueeze" | "Squeeze" => {
            let x = input(ins, 0)?;
            let axes = match (opset >= 13, ins.get(1).and_then(Option::as_ref)) {
                (true, Some(_)) => Some(data(ins, 1, "axes")?.to_vec()),
                _ => attr_ints(node, "axes"),
            };
            let shape = if op == "Unsqueeze" {
                let axes = axes.ok_or("no axes")?;
                let r = x.shape.len() + axes.len();
                let mut at: Vec<usize> = axes.iter().map(|&a| axis(a, r)).collect::<R<_>>()?;
                at.sort_unstable();
                let mut src = x.shape.iter();
                (0..r)
                    .map(|i| {
                        if at.contains(&i) {
                            1
                        } else {
                            *src.next().unwrap_or(&1)
                        }
                    })
                    .collect()
            } else {
                let r = x.shape.len();
                let at: Vec<usize> = match axes {
                    Some(a) => a.iter().map(|&a| axis(a, r)).collect::<R<_>>()?,
                    None => (0..r).filter(|&i| x.shape[i] == 1).collect(),
                };
                (0..r)
                    .filter(|i| !at.contains(i))
                    .map(|i| x.shape[i])
                    .collect()
            };
            one(Known {
                shape,
                data: x.data.clone(),
            })
        }
        "Concat" => {
            let parts: Vec<&Known> = ins.iter().flatten().collect();
            let first = parts.first().ok_or("no inputs")?;
            let r = first.shape.len();
            let a = axis(attr_i(node, "axis").ok_or("no axis")?, r)?;
            let mut shape = first.shape.clone();
            shape[a] = 0;
            for p in &parts {
                if p.shape.len() != r || (0..r).any(|i| i != a && p.shape[i] != first.shape[i]) {
                    return Err(format!(
                        "cannot concatenate {:?} and {:?}",
                        first.shape, p.shape
                    ));
                }
                shape[a] = shape[a].saturating_add(p.shape[a]);
            }
            let data = (r == 1)
                .then(|| {
                    parts
                        .iter()
                        .map(|p| p.data.clone())
                        .collect::<Option<Vec<_>>>()
                })
                .flatten()
                .map(|v| v.concat());
            one(Known { shape, data })
        }
        "Gather" => {
            let x = input(ins, 0)?;
            let idx = input(ins, 1)?;
            let r = x.shape.len();
            let a = axis(attr_i(node, "axis").unwrap_or(0), r)?;
            let mut shape = x.shape[..a].to_vec();
            shape.extend(&idx.shape);
            shape.extend(&x.shape[a + 1..]);
            let data = match (&x.data, &idx.data) {
                (Some(d), Some(i)) if r == 1 => Some(
                    i.iter()
                        .map(|&k| {
                            let k = if k < 0 { k + d.len() as i64 } else { k };
                            usize::try_from(k)
                                .ok()
                                .and_then(|k| d.get(k).copied())
                                .ok_or_else(|| format!("index {k} out of range"))
                        })
                        .collect::<R<Vec<i64>>>()?,
                ),
                _ => None,
            };
            one(Known { shape, data })
        }
        "Slice" => one(slice(ins)?),
        "Split" => split(node, ins, opset),
        "Expand" => {
            let x = input(ins, 0)?;
            let target: Vec<u64> = data(ins, 1, "shape")?
                .iter()
                .map(|&d| u64::try_from(d).map_err(|_| format!("expand to dim {d}")))
                .collect::<R<_>>()?;
            let shape = broadcast(&x.shape, &target)?;
            let data = (shape == x.shape).then(|| x.data.clone()).flatten();
            one(Known { shape, data })
        }
        "ConstantOfShape" => {
            let shape: Vec<u64> = data(ins, 0, "shape")?
                .iter()
                .map(|&d| u64::try_from(d).map_err(|_| format!("dim {d}")))
                .collect::<R<_>>()?;
            let fill = node
                .attributes
                .iter()
                .find(|a| a.name == "value")
                .and_then(|a| a.t.as_ref())
                .and_then(|t| t.int_data.as_ref().map(|d| d.first().copied().unwrap_or(0)));
            let n = checked_elements(&shape)?;
            Ok(vec![match fill {
                // An integer fill is data; a float fill (the exporter's masks) only a shape.
                Some(v) if n <= MAX_INT_DATA => Known::with(shape, vec![v; n as usize]),
                _ => Known::shaped(shape),
            }])
        }
        "Range" => {
            let s = |i: usize| -> R<i64> {
                data(ins, i, "bound")?
                    .first()
                    .copied()
                    .ok_or_else(|| "empty bound".to_string())
            };
            let (start, limit, delta) = (s(0)?, s(1)?, s(2)?);
            if delta == 0 {
                return Err("delta 0".into());
            }
            let n = ((limit as f64 - start as f64) / delta as f64)
                .ceil()
                .max(0.0) as u64;
            if n > MAX_INT_DATA {
                return Err(format!("a range of {n} values"));
            }
            let d: Vec<i64> = (0..n as i64)
                .map(|k| start.wrapping_add(k.wrapping_mul(delta)))
                .collect();
            one(Known::with(vec![n], d))
        }
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {
            let x = input(ins, 0)?;
            let reduced = reduced_axes(node, ins, opset, x.shape.len())?;
            let keep = attr_i(node, "keepdims").unwrap_or(1) != 0;
            let shape = (0..x.shape.len())
                .filter_map(|i| match (reduced.contains(&i), keep) {
                    (false, _) => Some(x.shape[i]),
                    (true, true) => Some(1),
                    (true, false) => None,
                })
                .collect();
            one(Known::shaped(shape))
        }
        "MatMul" => {
            let (a, b) = (&input(ins, 0)?.shape, &input(ins, 1)?.shape);
            if a.len() < 2 || b.len() < 2 {
                return Err("a MatMul of a vector is not supported".into());
            }
            let (m, k) = (a[a.len() - 2], a[a.len() - 1]);
            let (k2, n) = (b[b.len() - 2], b[b.len() - 1]);
            if k != k2 {
                return Err(format!("MatMul of {a:?} and {b:?}"));
            }
            let mut shape = broadcast(&a[..a.len() - 2], &b[..b.len() - 2])?;
            shape.extend([m, n]);
            one(Known::shaped(shape))
        }
        "Gemm" => {
            let (a, b) = (&input(ins, 0)?.shape, &input(ins, 1)?.shape);
            if a.len() != 2 || b.len() != 2 {
                return Err("Gemm needs 2-D inputs".into());
            }
            let ta = attr_i(node, "transA").unwrap_or(0) != 0;
            let tb = attr_i(node, "transB").unwrap_or(0) != 0;
            let (m, k) = if ta { (a[1], a[0]) } else { (a[0], a[1]) };
            let (k2, n) = if tb { (b[1], b[0]) } else { (b[0], b[1]) };
            if k != k2 {
                return Err(format!("Gemm of {a:?} and {b:?}"));
            }
            one(Known::shaped(vec![m, n]))
        }
        "Conv" | "MaxPool" | "AveragePool" | "GlobalAveragePool" | "GlobalMaxPool" => {
            one(Known::shaped(window(node, ins)?.out))
        }
        _ => Err("unsupported op type".into()),
    }
}

fn checked_elements(shape: &[u64]) -> R<u64> {
    shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&n| n < 1 << 48)
        .ok_or_else(|| format!("shape {shape:?} is too large"))
}

fn reshape(from: &[u64], target: &[i64]) -> R<Vec<u64>> {
    let total = count(from);
    let mut shape = Vec::with_capacity(target.len());
    let mut infer = None;
    for (i, &t) in target.iter().enumerate() {
        shape.push(match t {
            0 => *from.get(i).ok_or("reshape copies a missing dim")?,
            -1 if infer.is_none() => {
                infer = Some(i);
                1
            }
            t if t > 0 => t as u64,
            _ => return Err(format!("reshape to {target:?}")),
        });
    }
    let known = checked_elements(&shape)?;
    if let Some(i) = infer {
        if known == 0 || total % known != 0 {
            return Err(format!("cannot reshape {from:?} to {target:?}"));
        }
        shape[i] = total / known;
    } else if known != total {
        return Err(format!("cannot reshape {from:?} to {target:?}"));
    }
    Ok(shape)
}

/// The axes a Reduce* node reduces (all when it names none).
pub fn reduced_axes(node: &Node, ins: &[Option<Known>], opset: i64, r: usize) -> R<Vec<usize>> {
    let from_input = opset >= 18 || (node.op_type == "ReduceSum" && opset >= 13);
    let axes = match (from_input, ins.get(1).and_then(Option::as_ref)) {
        (true, Some(_)) => Some(data(ins, 1, "axes")?.to_vec()),
        (true, None) => None,
        (false, _) => attr_ints(node, "axes"),
    };
    match axes {
        Some(a) if !a.is_empty() => a.iter().map(|&a| axis(a, r)).collect(),
        _ => Ok((0..r).collect()),
    }
}

/// Output extents of a Slice, and its data for a 1-D integer input.
fn slice(ins: &[Option<Known>]) -> R<Known> {
    let x = input(ins, 0)?;
    let r = x.shape.len();
    let starts = data(ins, 1, "starts")?;
    let ends = data(ins, 2, "ends")?;
    let axes: Vec<i64> = match ins.get(3).and_then(Option::as_ref) {
        Some(_) => data(ins, 3, "axes")?.to_vec(),
        None => (0..starts.len() as i64).collect(),
    };
    let steps: Vec<i64> = match ins.get(4).and_then(Option::as_ref) {
        Some(_) => data(ins, 4, "steps")?.to_vec(),
        None => vec![1; starts.len()],
    };
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err("starts, ends, axes and steps differ in length".into());
    }
    let mut shape = x.shape.clone();
    let mut range1 = None;
    for k in 0..starts.len() {
        let a = axis(axes[k], r)?;
        let dim = x.shape[a] as i64;
        let step = steps[k];
        if step <= 0 {
            return Err("only positive slice steps are supported".into());
        }
        let clamp = |v: i64| (if v < 0 { v.saturating_add(dim) } else { v }).clamp(0, dim);
        let (s, e) = (clamp(starts[k]), clamp(ends[k]));
        let n = if e > s { (e - s - 1) / step + 1 } else { 0 };
        shape[a] = n as u64;
        range1 = Some((s, step, n));
    }
    let data = match (&x.data, range1) {
        (Some(d), Some((s, step, n))) if r == 1 => {
            Some((0..n).map(|i| d[(s + i * step) as usize]).collect())
        }
        _ => None,
    };
    Ok(Known { shape, data })
}

fn split(node: &Node, ins: &[Option<Known>], opset: i64) -> R<Vec<Known>> {
    let x = input(ins, 0)?;
    let a = axis(attr_i(node, "axis").unwrap_or(0), x.shape.len())?;
    let sizes: Vec<i64> = match (opset >= 13, ins.get(1).and_then(Option::as_ref)) {
        (true, Some(_)) => data(ins, 1, "split")?.to_vec(),
        _ => match attr_ints(node, "split") {
            Some(s) if !s.is_empty() => s,
            _ => {
                let parts = node.outputs.len().max(1) as u64;
                let each = x.shape[a].div_ceil(parts);
                (0..parts)
                    .map(|i| each.min(x.shape[a].saturating_sub(i * each)) as i64)
                    .collect()
            }
        },
    };
    if sizes.len() != node.outputs.len()
        || sizes.iter().any(|&s| s < 0)
        || sizes.iter().sum::<i64>() != x.shape[a] as i64
    {
        return Err(format!("split {sizes:?} of extent {}", x.shape[a]));
    }
    Ok(sizes
        .iter()
        .map(|&s| {
            let mut shape = x.shape.clone();
            shape[a] = s as u64;
            Known::shaped(shape)
        })
        .collect())
}

/// A 2-D convolution or pooling window.
pub struct Window {
    /// Output `[N, C_out, OH, OW]`.
    pub out: Vec<u64>,
    /// Kernel `[KH, KW]`.
    pub kernel: [u64; 2],
}

/// The window of a Conv or pooling node on a 4-D input.
pub fn window(node: &Node, ins: &[Option<Known>]) -> R<Window> {
    let x = &input(ins, 0)?.shape;
    if x.len() != 4 {
        return Err(format!(
            "only 2-D windows (4-D inputs) are supported, not {x:?}"
        ));
    }
    if let Some(p) = node.attributes.iter().find(|a| a.name == "auto_pad") {
        if !matches!(p.s.as_deref(), None | Some("NOTSET") | Some("VALID")) {
            return Err("auto_pad SAME is not supported".into());
        }
    }
    let global = node.op_type.starts_with("Global");
    let (c_out, kernel) = if node.op_type == "Conv" {
        let w = &input(ins, 1)?.shape;
        if w.len() != 4 {
            return Err(format!("weight {w:?} is not 4-D"));
        }
        (w[0], [w[2], w[3]])
    } else if global {
        (x[1], [x[2], x[3]])
    } else {
        let k = attr_ints(node, "kernel_shape").ok_or("no kernel_shape")?;
        match k.as_slice() {
            [h, w] if *h > 0 && *w > 0 => (x[1], [*h as u64, *w as u64]),
            _ => return Err(format!("kernel_shape {k:?}")),
        }
    };
    let strides = attr_ints(node, "strides").unwrap_or_else(|| vec![1, 1]);
    let dil = attr_ints(node, "dilations").unwrap_or_else(|| vec![1, 1]);
    let pads = attr_ints(node, "pads").unwrap_or_else(|| vec![0; 4]);
    if global && (strides != [1, 1] || pads != [0; 4]) {
        return Err("global pooling with strides or pads".into());
    }
    if strides.len() != 2 || dil.len() != 2 || pads.len() != 4 {
        return Err("strides, dilations and pads must be 2-D".into());
    }
    if kernel.contains(&0) {
        return Err("an empty kernel".into());
    }
    let mut out = vec![x[0], c_out];
    for i in 0..2 {
        let (s, d) = (strides[i], dil[i]);
        if s <= 0 || d <= 0 || pads[i] < 0 || pads[i + 2] < 0 {
            return Err("non-positive strides or dilations, or negative pads".into());
        }
        let span = (d as u64).saturating_mul(kernel[i] - 1) + 1;
        let padded = x[2 + i].saturating_add(pads[i] as u64 + pads[i + 2] as u64);
        if padded < span {
            return Err("the window is larger than its input".into());
        }
        out.push((padded - span) / s as u64 + 1);
    }
    Ok(Window { out, kernel })
}

fn constant(node: &Node) -> R<Known> {
    let a = node
        .attributes
        .first()
        .ok_or("a Constant without a value")?;
    match a.name.as_str() {
        "value" => {
            let t = a.t.as_ref().ok_or("value is not a tensor")?;
            let shape = t.shape()?;
            Ok(match &t.int_data {
                Some(d) => Known::with(shape, d.clone()),
                None => Known::shaped(shape),
            })
        }
        "value_int" => Ok(Known::with(vec![], vec![a.i.unwrap_or(0)])),
        "value_ints" => Ok(Known::with(vec![a.ints.len() as u64], a.ints.clone())),
        "value_float" => Ok(Known::shaped(vec![])),
        other => Err(format!("Constant {other} is not supported")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str) -> Node {
        Node {
            op_type: op.into(),
            ..Node::default()
        }
    }

    fn k(shape: &[u64], data: &[i64]) -> Option<Known> {
        Some(Known::with(shape.to_vec(), data.to_vec()))
    }

    #[test]
    fn shape_arithmetic_is_carried_out() {
        let x = Some(Known::shaped(vec![8, 5, 64]));
        let s = infer(&node("Shape"), std::slice::from_ref(&x), 17)
            .unwrap()
            .remove(0);
        assert_eq!(s.data, Some(vec![8, 5, 64]));
        let g = infer(&node("Gather"), &[Some(s), k(&[], &[1])], 17)
            .unwrap()
            .remove(0);
        assert_eq!((g.shape.clone(), g.data.clone()), (vec![], Some(vec![5])));
        let m = infer(&node("Mul"), &[Some(g), k(&[], &[4])], 17)
            .unwrap()
            .remove(0);
        assert_eq!(m.data, Some(vec![20]));
        let r = infer(&node("Reshape"), &[x, k(&[3], &[0, -1, 16])], 17)
            .unwrap()
            .remove(0);
        assert_eq!(r.shape, [8, 20, 16]);
    }

    #[test]
    fn broadcasting_and_its_errors() {
        assert_eq!(broadcast(&[8, 1, 5], &[4, 1]).unwrap(), [8, 4, 5]);
        assert!(broadcast(&[3], &[4]).is_err());
        let w = infer(
            &node("Where"),
            &[k(&[2], &[1, 0]), k(&[2], &[5, 6]), k(&[], &[9])],
            17,
        );
        assert_eq!(w.unwrap()[0].data, Some(vec![5, 9]));
    }

    #[test]
    fn slices_clamp_their_bounds() {
        let x = k(&[4], &[10, 11, 12, 13]);
        let s = infer(
            &node("Slice"),
            &[x, k(&[1], &[-2]), k(&[1], &[i64::MAX])],
            17,
        )
        .unwrap();
        assert_eq!(s[0].data, Some(vec![12, 13]));
    }

    #[test]
    fn a_conv_window() {
        let mut n = node("Conv");
        n.attributes.push(super::super::proto::Attribute {
            name: "strides".into(),
            ints: vec![8, 8],
            ..Default::default()
        });
        let ins = [
            Some(Known::shaped(vec![2, 3, 32, 32])),
            Some(Known::shaped(vec![64, 3, 8, 8])),
        ];
        assert_eq!(window(&n, &ins).unwrap().out, [2, 64, 4, 4]);
    }
}
