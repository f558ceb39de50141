//! Layer structure: a prologue, `layers` repetitions of one layer, and an epilogue.
//!
//! Zoo models know theirs; imported graphs get it from [`detect_layers`], which finds the
//! period that covers the most operators with a repeating pattern.

use super::Operator;
pub use elk_stage::period::{detect_period, LayerStructure};

/// A structural signature: two operators with equal signatures do the same work.
fn signature(op: &Operator) -> String {
    let tensors: Vec<String> = op
        .tensors
        .iter()
        .map(|t| format!("{:?}{:?}{:?}", t.axes, t.shape, t.residency))
        .collect();
    format!("{}{:?}{}", op.op_type, op.dims, tensors.join(";"))
}

/// Finds the layer structure of an operator chain (see [`detect_period`]).
pub fn detect_layers(ops: &[Operator]) -> LayerStructure {
    let mut interned = std::collections::HashMap::new();
    let sigs: Vec<usize> = ops
        .iter()
        .map(|op| {
            let next = interned.len();
            *interned.entry(signature(op)).or_insert(next)
        })
        .collect();
    detect_period(&sigs)
}
