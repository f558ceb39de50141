//! Reading the reference graph file: a JSON list of `[id, expr, op_type, inputs]` entries,
//! where `expr` wraps an `einstein_v2` expression and its `input_dict` of input shapes.

use super::einsum::{self, Einsum};
use crate::error::{ModelError, Result};
use serde_json::Value;

/// One input's declared dtype and shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputDecl {
    /// The dtype string as written (`float32`, `int64`).
    pub dtype: String,
    /// The shape with placeholders (99, 66) still in.
    pub shape: Vec<u64>,
}

/// One entry of the file.
#[derive(Clone, Debug)]
pub struct RawEntry {
    /// The node id.
    pub id: i64,
    /// The op type (`Dot`, `Reshape`, …).
    pub op_type: String,
    /// `(producer id, output slot)` per input.
    pub inputs: Vec<i64>,
    /// The parsed expression, absent for `Parameter`, `Constant` and `Result` entries.
    pub einsum: Option<Einsum>,
    /// Declared inputs, by input number.
    pub decls: Vec<InputDecl>,
}

fn json_err(file: &str, detail: String) -> ModelError {
    ModelError::GraphJson {
        file: file.to_string(),
        detail,
    }
}

/// Parses the whole file into entries, validating each expression against its declarations.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<RawEntry>> {
    let value: Value = serde_json::from_str(text).map_err(|e| json_err(file, e.to_string()))?;
    if value.get("model_type").is_some() {
        return Err(ModelError::WrongKind {
            file: file.to_string(),
            detail: "an object with 'model_type': this looks like a Hugging Face config.json, \
                     which --model FILE reads (models show FILE, compare --model FILE, …); \
                     import reads a graph, a JSON list of entries"
                .into(),
        });
    }
    let list = value
        .as_array()
        .ok_or_else(|| json_err(file, "top level must be a list of entries".into()))?;
    list.iter()
        .enumerate()
        .map(|(pos, v)| parse_entry(file, pos, v))
        .collect()
}

fn parse_entry(file: &str, pos: usize, v: &Value) -> Result<RawEntry> {
    let shape_err = || {
        json_err(
            file,
            format!("entry #{pos} must be [id, expr, op_type, [[producer, slot], ...]]"),
        )
    };
    let items = v
        .as_array()
        .filter(|a| a.len() == 4)
        .ok_or_else(shape_err)?;
    let id = items[0].as_i64().ok_or_else(shape_err)?;
    let expr = items[1].as_str().ok_or_else(shape_err)?;
    let op_type = items[2].as_str().ok_or_else(shape_err)?.to_string();
    let entry_err = |detail: String| ModelError::Entry {
        file: file.to_string(),
        id,
        op_type: op_type.clone(),
        detail,
    };
    let inputs = items[3]
        .as_array()
        .ok_or_else(|| entry_err("inputs must be a list of [producer, slot] pairs".into()))?
        .iter()
        .map(|pair| {
            pair.as_array()
                .and_then(|p| p.first())
                .and_then(Value::as_i64)
                .ok_or_else(|| entry_err("each input must be [producer_id, slot]".into()))
        })
        .collect::<Result<Vec<i64>>>()?;
    let (einsum, decls) = if expr.trim().is_empty() {
        (None, Vec::new())
    } else {
        let (text, decls) = split_expr(expr).map_err(&entry_err)?;
        let e = einsum::parse(&text).map_err(|d| entry_err(format!("expression: {d}")))?;
        check_against_decls(&e, &decls).map_err(&entry_err)?;
        if decls.len() != inputs.len() {
            return Err(entry_err(format!(
                "input_dict declares {} inputs but the entry lists {}",
                decls.len(),
                inputs.len()
            )));
        }
        (Some(e), decls)
    };
    Ok(RawEntry {
        id,
        op_type,
        inputs,
        einsum,
        decls,
    })
}

/// Splits ` - einstein_v2("EXPR", input_dict={...})  ## @: comment` into EXPR and the inputs.
fn split_expr(expr: &str) -> std::result::Result<(String, Vec<InputDecl>), String> {
    let start = expr
        .find("einstein_v2(\"")
        .ok_or("expr must contain einstein_v2(\"...\")")?
        + "einstein_v2(\"".len();
    let len = expr[start..]
        .find('"')
        .ok_or("unterminated expression string")?;
    let text = expr[start..start + len].to_string();
    let rest = &expr[start + len + 1..];
    let dict_at = rest.find("input_dict=").ok_or("missing input_dict=")? + "input_dict=".len();
    let mut stream = serde_json::Deserializer::from_str(&rest[dict_at..]).into_iter::<Value>();
    let dict = match stream.next() {
        Some(Ok(Value::Object(m))) => m,
        Some(Err(e)) => return Err(format!("input_dict: {e}")),
        _ => return Err("input_dict must be a JSON object".into()),
    };
    let mut decls: Vec<Option<InputDecl>> = vec![None; dict.len()];
    for (key, val) in &dict {
        let k: usize = key
            .strip_prefix("input")
            .and_then(|n| n.parse().ok())
            .filter(|k| *k < dict.len())
            .ok_or_else(|| {
                format!(
                    "input_dict key '{key}' must be input0..input{}",
                    dict.len() - 1
                )
            })?;
        let dtype = val
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("input_dict.{key}.dtype missing"))?
            .to_string();
        let shape = val
            .get("shape")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("input_dict.{key}.shape missing"))?
            .iter()
            .map(|x| x.as_u64().filter(|v| *v > 0))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| format!("input_dict.{key}.shape must list positive integers"))?;
        decls[k] = Some(InputDecl { dtype, shape });
    }
    let decls = decls
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or("duplicate input_dict key")?;
    Ok((text, decls))
}

/// A shape contradicts its expression when an access has the wrong rank, names an undeclared
/// input, or two plain uses of one index name disagree on its extent.
fn check_against_decls(e: &Einsum, decls: &[InputDecl]) -> std::result::Result<(), String> {
    let mut extent_of: std::collections::BTreeMap<&str, (u64, usize)> = Default::default();
    for a in &e.accesses {
        let decl = decls
            .get(a.input)
            .ok_or_else(|| format!("input{} is used but not declared in input_dict", a.input))?;
        if decl.shape.len() != a.index.len() {
            return Err(format!(
                "input{} is indexed with {} axes but its shape {:?} has {}",
                a.input,
                a.index.len(),
                decl.shape,
                decl.shape.len()
            ));
        }
        for (axis, ix) in a.index.iter().enumerate() {
            if !ix.bare {
                continue;
            }
            let n = decl.shape[axis];
            match extent_of.insert(&ix.vars[0], (n, a.input)) {
                Some((m, other)) if m != n => {
                    return Err(format!(
                        "index {} has extent {m} in input{other} but {n} in input{}",
                        ix.vars[0], a.input
                    ))
                }
                _ => {}
            }
        }
    }
    Ok(())
}
