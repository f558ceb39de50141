//! Folding away Reshape, Convert, Broadcast, Concat and Result (SPEC §2.1.2): a user of a
//! folded node reads the folded node's input instead.
//!
//! Reshape, Convert and Result pass their input through unchanged (the user keeps its own index
//! expressions and declared shape). A Broadcast is composed into the user's access: the user
//! reads the broadcast's input, indexed by the user's expressions at the broadcast's axes; a
//! broadcast of a constant-indexed scalar (`input0[0]`) disappears. A Concat is not looked
//! through: its users read it as an external tensor (a fused QKV weight, say), as the
//! reference does.

use super::einsum::IndexExpr;
use super::entry::{InputDecl, RawEntry};
use std::collections::HashMap;

/// What a producer id turned out to be after folding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The output of a kept operator with this id.
    Op(i64),
    /// A tensor with no kept producer (weight, parameter, graph input, Concat result).
    External(i64),
}

/// A user's input after folding.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// Where the data comes from.
    pub source: Source,
    /// The index expressions in the user's index names.
    pub access: Vec<IndexExpr>,
    /// The declared dtype and (raw) shape of what is read.
    pub decl: InputDecl,
}

/// Whether entries of this op type are folded away.
pub fn is_folded(op_type: &str) -> bool {
    matches!(
        op_type,
        "Reshape" | "Convert" | "Broadcast" | "Concat" | "Result"
    )
}

/// Whether entries of this op type are external tensors rather than operators.
pub fn is_external(op_type: &str) -> bool {
    matches!(op_type, "Parameter" | "Constant" | "Concat")
}

/// Follows `producer` through folded nodes. `None` means the input vanished (a broadcast
/// scalar constant). Errors name the reason; the caller adds the entry.
pub fn resolve(
    by_id: &HashMap<i64, &RawEntry>,
    mut producer: i64,
    mut access: Vec<IndexExpr>,
    mut decl: InputDecl,
) -> Result<Option<Resolved>, String> {
    for _ in 0..by_id.len() + 1 {
        let Some(entry) = by_id.get(&producer) else {
            return Ok(Some(Resolved {
                source: Source::External(producer),
                access,
                decl,
            }));
        };
        match entry.op_type.as_str() {
            t if is_external(t) => {
                return Ok(Some(Resolved {
                    source: Source::External(producer),
                    access,
                    decl,
                }))
            }
            "Reshape" | "Convert" | "Result" => {
                producer = *entry.inputs.first().ok_or_else(|| {
                    format!("folded {} #{} has no input", entry.op_type, entry.id)
                })?;
            }
            "Broadcast" => {
                let e = entry
                    .einsum
                    .as_ref()
                    .ok_or_else(|| format!("Broadcast #{} has no expression", entry.id))?;
                let inner = e
                    .accesses
                    .first()
                    .ok_or_else(|| format!("Broadcast #{} reads no input", entry.id))?;
                if e.output.len() != access.len() {
                    return Err(format!(
                        "reads Broadcast #{} with {} axes but it produces {}",
                        entry.id,
                        access.len(),
                        e.output.len()
                    ));
                }
                access = compose(&e.output, &inner.index, &access)
                    .map_err(|d| format!("Broadcast #{}: {d}", entry.id))?;
                if access.iter().all(|ix| ix.constant.is_some()) {
                    return Ok(None);
                }
                decl = entry.decls[inner.input].clone();
                producer = entry.inputs[inner.input];
            }
            _ => {
                return Ok(Some(Resolved {
                    source: Source::Op(producer),
                    access,
                    decl,
                }))
            }
        }
    }
    Err(format!("cycle of folded nodes at #{producer}"))
}

/// Rewrites `inner` (expressions over the names of `outer`) into the user's expressions.
fn compose(
    outer: &[IndexExpr],
    inner: &[IndexExpr],
    user: &[IndexExpr],
) -> Result<Vec<IndexExpr>, String> {
    inner
        .iter()
        .map(|ix| {
            if ix.constant.is_some() {
                return Ok(ix.clone());
            }
            if !ix.bare {
                return Err("only plain or constant indices can be broadcast".into());
            }
            let pos = outer
                .iter()
                .position(|o| o.bare && o.vars == ix.vars)
                .ok_or_else(|| format!("index {} is not an output axis", ix.vars[0]))?;
            Ok(user[pos].clone())
        })
        .collect()
}
