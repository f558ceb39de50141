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
    let mut best = one_layer(n);
    let mut best_cover = 0;
    for p in 1..=n / 2 {
        let s = repeats(sigs, p);
        let cover = s.layers * p;
        // A period must explain at least half of the operators: otherwise two look-alike
        // blocks inside one layer (q/k rotary embeddings, the two norms) would pass for
        // layers, and per-layer bounds (Elk's preload depth) would shrink to a few operators.
        if s.layers >= 2 && cover > best_cover && 2 * cover >= n {
            best_cover = cover;
            best = s;
        }
    }
    best
}

/// The structure with exactly `layers` repetitions, when the caller knows the count (the
/// reference artifact's `--layers` hint): the longest period p ≤ n / `layers` whose longest
/// repeating run holds exactly `layers` whole repetitions; the prologue and epilogue are
/// what lies around them. `None` if no period does (or `layers` is 0); one layer is always
/// the whole sequence.
pub fn detect_period_with_count(sigs: &[usize], layers: usize) -> Option<LayerStructure> {
    let n = sigs.len();
    match layers {
        0 => None,
        1 => Some(one_layer(n)),
        _ => (1..=n / layers)
            .rev()
            .map(|p| repeats(sigs, p))
            .find(|s| s.layers == layers),
    }
}

/// The whole sequence as one layer.
fn one_layer(n: usize) -> LayerStructure {
    LayerStructure {
        prologue: 0,
        ops_per_layer: n,
        layers: usize::from(n > 0),
        epilogue: 0,
    }
}

/// The repetitions of period `p` (1 ≤ p < n) in the longest run of positions i with
/// sig(i) = sig(i + p), and where they sit.
fn repeats(sigs: &[usize], p: usize) -> LayerStructure {
    let n = sigs.len();
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
    LayerStructure {
        prologue: best_run.1,
        ops_per_layer: p,
        layers,
        epilogue: n - best_run.1 - layers * p,
    }
}
