//! Group-limited routing (`--routing grouped:S`, DeepSeek-V2/V3's `n_group` and `topk_group`):
//! a token keeps the `topk_group` groups of experts with the best group score, then picks its
//! k experts inside them.
//!
//! Each layer's experts have fixed popularities w_e, Zipf-like 1/rank^S over a permutation
//! fixed per layer (as `zipf:S`). A token draws its router logits as log(w_e) + Gumbel noise,
//! turns them into scores with the model's scoring function (softmax or sigmoid), scores each
//! group (the sum of its two best scores for `noaux_tc`, its best for
//! `group_limited_greedy`), keeps the best groups and takes the k best experts inside them.
//! With one group this is the Gumbel-top-k draw, k experts without replacement in proportion
//! to w: `zipf:S` in distribution.

use crate::zoo::{GroupScore, Groups, Moe, Scoring};
use elk_stage::corpus::Rng;

/// The k experts one token picks, given the layer's popularities `weights`.
pub(super) fn pick(rng: &mut Rng, moe: &Moe, groups: &Groups, weights: &[f64]) -> Vec<u32> {
    let scores: Vec<f64> = weights
        .iter()
        .map(|w| {
            // Gumbel(0, 1) noise; u in (0, 1) so that both logarithms are finite.
            let u = rng.uniform(0.0, 1.0).max(f64::MIN_POSITIVE);
            w.ln() - (-u.ln()).ln()
        })
        .collect();
    let scores = match moe.scoring {
        Scoring::Sigmoid => scores.iter().map(|g| 1.0 / (1.0 + (-g).exp())).collect(),
        Scoring::Softmax => {
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let exp: Vec<f64> = scores.iter().map(|g| (g - max).exp()).collect();
            let sum: f64 = exp.iter().sum();
            exp.iter().map(|e| e / sum).collect::<Vec<f64>>()
        }
    };
    let size = scores.len() / groups.count as usize;
    let group_score = |g: usize| {
        // The best two of the group in one pass.
        let (mut first, mut second) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for &x in &scores[g * size..(g + 1) * size] {
            if x > first {
                (first, second) = (x, first);
            } else if x > second {
                second = x;
            }
        }
        match groups.score {
            GroupScore::Max => first,
            GroupScore::TopTwoSum if size >= 2 => first + second,
            GroupScore::TopTwoSum => first,
        }
    };
    let mut order: Vec<(f64, usize)> = (0..groups.count as usize)
        .map(|g| (group_score(g), g))
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut candidates: Vec<usize> = order
        .iter()
        .take(groups.top as usize)
        .flat_map(|&(_, g)| g * size..(g + 1) * size)
        .collect();
    let k = (moe.top_k as usize).min(candidates.len());
    let best_first = |&a: &usize, &b: &usize| scores[b].total_cmp(&scores[a]).then(a.cmp(&b));
    if k < candidates.len() {
        candidates.select_nth_unstable_by(k, best_first);
    }
    candidates.truncate(k);
    candidates.sort_by(best_first);
    candidates.into_iter().map(|e| e as u32).collect()
}
