//! The HBM-vs-on-chip rule for operator inputs (SPEC §2.1), kept in this one place.
//!
//! Weights and the KV cache always come from HBM. An activation is on chip only when the
//! immediately preceding operator produced it or also read it; any other activation (a
//! residual, a value produced several operators earlier, a graph input) is treated as spilled
//! to HBM and preloaded like a weight. This matches the reference artifact; change it here.

use super::{Operator, Residency, Role, Tensor};

/// Whether input `tensor` of an operator is on chip, given the operator that ran just before.
pub fn is_on_chip(tensor: &Tensor, previous: Option<&Operator>) -> bool {
    if tensor.role != Role::Activation {
        return false;
    }
    let Some(prev) = previous else {
        return false;
    };
    prev.tensors.iter().any(|t| t.source == tensor.source)
}

/// Sets the residency of every input of every operator from the rule above (outputs are on
/// chip by definition).
pub fn classify_residency(ops: &mut [Operator]) {
    for i in 0..ops.len() {
        let (before, rest) = ops.split_at_mut(i);
        let op = &mut rest[0];
        let previous = before.last();
        for (slot, tensor) in op.tensors.iter_mut().enumerate() {
            tensor.residency = if slot == 0 || is_on_chip(tensor, previous) {
                Residency::OnChip
            } else {
                Residency::Hbm
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::OpKind;

    fn tensor(source: &str, role: Role) -> Tensor {
        Tensor {
            source: source.into(),
            axes: vec![vec![0]],
            shape: vec![4],
            dtype_bytes: crate::dtype::DtypeBytes::whole(2),
            role,
            producer: None,
            residency: Residency::Hbm,
        }
    }

    fn op(name: &str, inputs: &[(&str, Role)]) -> Operator {
        let mut tensors = vec![tensor(name, Role::Activation)];
        tensors.extend(inputs.iter().map(|(s, r)| tensor(s, *r)));
        Operator {
            name: name.into(),
            kind: OpKind::Elementwise,
            op_type: "Add".into(),
            dims: vec![4],
            tensors,
            after: Vec::new(),
            moe: None,
        }
    }

    #[test]
    fn produced_or_read_by_previous_is_on_chip_others_spill() {
        let mut ops = vec![
            op("a", &[("x", Role::Activation), ("w", Role::Weight)]),
            op("b", &[("a", Role::Activation), ("x", Role::Activation)]),
            op(
                "c",
                &[
                    ("b", Role::Activation),
                    ("a", Role::Activation),
                    ("w", Role::Weight),
                ],
            ),
        ];
        classify_residency(&mut ops);
        let res = |i: usize, s: usize| ops[i].tensors[s].residency;
        assert_eq!(res(0, 1), Residency::Hbm, "graph input with no previous op");
        assert_eq!(res(0, 2), Residency::Hbm, "weight");
        assert_eq!(res(1, 1), Residency::OnChip, "produced by previous");
        assert_eq!(res(1, 2), Residency::OnChip, "also read by previous");
        assert_eq!(res(2, 2), Residency::OnChip, "a was read by b");
        assert_eq!(res(2, 3), Residency::Hbm, "weights always from HBM");
        assert_eq!(res(2, 0), Residency::OnChip, "outputs are on chip");
    }
}
