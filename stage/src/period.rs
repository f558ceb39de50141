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
    detect_period_scanning(sigs, may_repeat)
}

/// [`detect_period`], scanning the periods that `may` lets through.
fn detect_period_scanning(sigs: &[usize], may: fn(&[usize], usize) -> bool) -> LayerStructure {
    let n = sigs.len();
    let mut best = one_layer(n);
    let mut best_cover = 0;
    for p in 1..=n / 2 {
        if !may(sigs, p) {
            continue;
        }
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

/// Whether period `p` may pass [`detect_period`]'s test, checked on a sample of positions
/// (scanning every position for every period costs time quadratic in the length: 7·10⁹
/// comparisons on DeepSeek-V3's 122,813 operators). Passing needs at least two repetitions
/// (a run of at least p matching positions) covering at least half of the sequence (a run of
/// at least n/2 − p), so a run of L = max(p, ⌊n/2⌋ − p) ≥ n/4 positions i with
/// sig(i) = sig(i + p). Such a run holds at least ⌊L/S⌋ consecutive multiples of the stride
/// S, all matching: without such a streak among the multiples, `p` cannot pass. Exact: it
/// only skips periods that [`repeats`] would reject.
fn may_repeat(sigs: &[usize], p: usize) -> bool {
    let n = sigs.len();
    let need_run = p.max((n / 2).saturating_sub(p));
    let stride = (n / 1024).max(1);
    let streak_needed = need_run / stride;
    if streak_needed == 0 {
        return true;
    }
    let mut streak = 0;
    for i in (0..n - p).step_by(stride) {
        if sigs[i] == sigs[i + p] {
            streak += 1;
            if streak >= streak_needed {
                return true;
            }
        } else {
            streak = 0;
        }
    }
    false
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`detect_period`] without [`may_repeat`]: every period scanned in full.
    fn every_period(sigs: &[usize]) -> LayerStructure {
        detect_period_scanning(sigs, |_, _| true)
    }

    /// A prologue, `layers` copies of a layer with an inner repetition (experts), a few
    /// corrupted positions, and an epilogue, over `classes` signatures.
    fn model_like(seed: u64, layers: usize, classes: usize) -> Vec<usize> {
        let mut rng = crate::corpus::Rng::new(seed);
        // Uniform in 0..k (0 when k is 0).
        let mut pick = |k: usize| rng.range(0, k.saturating_sub(1) as u64) as usize;
        let head: Vec<usize> = (0..pick(40)).map(|_| pick(classes)).collect();
        let attention: Vec<usize> = (0..1 + pick(30)).map(|_| pick(classes)).collect();
        let expert: Vec<usize> = (0..1 + pick(6)).map(|_| pick(classes)).collect();
        let mut layer = attention;
        for _ in 0..pick(60) {
            layer.extend(&expert);
        }
        let mut sigs = head;
        for _ in 0..layers {
            sigs.extend(&layer);
        }
        sigs.extend((0..pick(20)).map(|_| pick(classes)));
        for _ in 0..pick(3) {
            let at = pick(sigs.len());
            sigs[at] = pick(classes);
        }
        sigs
    }

    #[test]
    fn sampling_the_periods_finds_what_scanning_every_one_finds() {
        for seed in 0..300 {
            let layers = 1 + (seed % 9) as usize;
            for classes in [2, 5, 40] {
                let sigs = model_like(seed, layers, classes);
                assert_eq!(
                    detect_period(&sigs),
                    every_period(&sigs),
                    "seed {seed}, {layers} layers, {classes} classes, n {}",
                    sigs.len()
                );
            }
        }
        // Short and degenerate sequences.
        for sigs in [vec![], vec![1], vec![1, 1], vec![1, 2, 1], vec![3; 17]] {
            assert_eq!(detect_period(&sigs), every_period(&sigs), "{sigs:?}");
        }
    }
}
