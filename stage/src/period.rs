//! Layer structure: a prologue, `layers` repetitions of one layer, and an epilogue, and the
//! period finder that detects it from a sequence of signatures (instances carry no layer
//! annotations; graphs use the same finder on operator signatures).

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Where the repeated layers sit in the operator chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerStructure {
    /// Operators before the first layer (embeddings).
    pub prologue: usize,
    /// Operators in one layer.
    pub ops_per_layer: usize,
    /// Number of layers.
    pub layers: usize,
    /// Operators after the last layer (final norm, head).
    pub epilogue: usize,
}

impl LayerStructure {
    /// Operator range of layer `layer`, if it exists.
    pub fn layer_range(&self, layer: usize) -> Option<Range<usize>> {
        (layer < self.layers).then(|| {
            let start = self.prologue + layer * self.ops_per_layer;
            start..start + self.ops_per_layer
        })
    }

    /// Total operators described.
    pub fn total(&self) -> usize {
        self.prologue + self.ops_per_layer * self.layers + self.epilogue
    }
}

/// Finds the repeating structure of a sequence of signatures.
///
/// For each period p, the longest run of positions i with sig(i) = sig(i + p) spans
/// `run + p` items, i.e. `(run + p) / p` whole repetitions. The period covering the most
/// items in whole repetitions wins (ties: the shortest period), provided it covers at least
/// half of the sequence; otherwise (no repetition, or a sub-instance of about one layer) the
/// whole sequence is one layer.
pub fn detect_period(sigs: &[usize]) -> LayerStructure {
    let n = sigs.len();
    let mut best = LayerStructure {
        prologue: 0,
        ops_per_layer: n,
        layers: usize::from(n > 0),
        epilogue: 0,
    };
    let mut best_cover = 0;
    for p in 1..=n / 2 {
        let mut run = 0;
        let mut best_run = (0usize, 0usize); // (length, start)
        for i in 0..n - p {
            if sigs[i] == sigs[i + p] {
                run += 1;
                if run > best_run.0 {
                    best_run = (run, i + 1 - run);
                }
            } else {
                run = 0;
            }
        }
        let layers = (best_run.0 + p) / p;
        let cover = layers * p;
        // A period must explain at least half of the operators: otherwise two look-alike
        // blocks inside one layer (q/k rotary embeddings, the two norms) would pass for
        // layers, and per-layer bounds (Elk's preload depth) would shrink to a few operators.
        if layers >= 2 && cover > best_cover && 2 * cover >= n {
            best_cover = cover;
            best = LayerStructure {
                prologue: best_run.1,
                ops_per_layer: p,
                layers,
                epilogue: n - best_run.1 - cover,
            };
        }
    }
    best
}
