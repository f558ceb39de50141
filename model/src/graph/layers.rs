//! Layer structure: a prologue, `layers` repetitions of one layer, and an epilogue.
//!
//! Zoo models know theirs; imported graphs get it from [`detect_layers`], which finds the
//! period that covers the most operators with a repeating pattern, or, when the user knows
//! the layer count, from [`detect_layers_with_count`].

use super::Operator;
pub use elk_stage::period::{detect_period, detect_period_with_count, LayerStructure};

/// A structural signature: two operators with equal signatures do the same work.
fn signature(op: &Operator) -> String {
    let tensors: Vec<String> = op
        .tensors
        .iter()
        .map(|t| format!("{:?}{:?}{:?}", t.axes, t.shape, t.residency))
        .collect();
    format!("{}{:?}{}", op.op_type, op.dims, tensors.join(";"))
}

/// One small integer per operator, equal for equal signatures.
fn signatures(ops: &[Operator]) -> Vec<usize> {
    let mut interned = std::collections::HashMap::new();
    ops.iter()
        .map(|op| {
            let next = interned.len();
            *interned.entry(signature(op)).or_insert(next)
        })
        .collect()
}

/// Finds the layer structure of an operator chain (see [`detect_period`]).
pub fn detect_layers(ops: &[Operator]) -> LayerStructure {
    detect_period(&signatures(ops))
}

/// The layer structure with exactly `layers` identical layers, if the chain has one (see
/// [`detect_period_with_count`]): for a graph whose layers detection misses, e.g. because a
/// long prologue or epilogue leaves them less than half of the operators.
pub fn detect_layers_with_count(ops: &[Operator], layers: usize) -> Option<LayerStructure> {
    detect_period_with_count(&signatures(ops), layers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{OpKind, Residency, Role, Tensor};

    /// An elementwise operator over `n` elements: equal `n`, equal signature.
    fn op(n: u64) -> Operator {
        let t = Tensor {
            source: format!("#{n}"),
            axes: vec![vec![0]],
            shape: vec![n],
            dtype_bytes: crate::dtype::DtypeBytes::whole(2),
            role: Role::Activation,
            producer: None,
            residency: Residency::OnChip,
        };
        Operator {
            name: format!("Add#{n}"),
            kind: OpKind::Elementwise,
            op_type: "Add".into(),
            dims: vec![n],
            tensors: vec![t.clone(), t],
            after: Vec::new(),
            moe: None,
        }
    }

    fn chain(sizes: &[u64]) -> Vec<Operator> {
        sizes.iter().map(|&n| op(n)).collect()
    }

    fn structure(prologue: usize, layers: usize, per: usize, epilogue: usize) -> LayerStructure {
        LayerStructure {
            prologue,
            ops_per_layer: per,
            layers,
            epilogue,
        }
    }

    #[test]
    fn a_count_finds_layers_a_long_prologue_hides() {
        // Six distinct operators, then two layers of (7, 8): the layers cover 4 of 10
        // operators, too few for detection on its own.
        let ops = chain(&[1, 2, 3, 4, 5, 6, 7, 8, 7, 8]);
        assert_eq!(detect_layers(&ops), structure(0, 1, 10, 0));
        assert_eq!(
            detect_layers_with_count(&ops, 2),
            Some(structure(6, 2, 2, 0))
        );
    }

    #[test]
    fn a_count_picks_the_period_with_exactly_that_many_repetitions() {
        // One prologue operator, four layers of (7, 8, 9), one epilogue operator.
        let mut sizes = vec![1];
        for _ in 0..4 {
            sizes.extend([7, 8, 9]);
        }
        sizes.push(2);
        let ops = chain(&sizes);
        assert_eq!(detect_layers(&ops), structure(1, 4, 3, 1));
        assert_eq!(detect_layers_with_count(&ops, 4), Some(detect_layers(&ops)));
        // Two layers of two real layers each.
        assert_eq!(
            detect_layers_with_count(&ops, 2),
            Some(structure(1, 2, 6, 1))
        );
        assert_eq!(
            detect_layers_with_count(&ops, 1),
            Some(structure(0, 1, 14, 0))
        );
        // Three, five or more identical layers are not there; zero never is.
        for n in [0, 3, 5, 8, 15] {
            assert_eq!(detect_layers_with_count(&ops, n), None, "{n} layers");
        }
    }
}
