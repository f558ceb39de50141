//! Which experts the tokens of an MoE step are routed to (docs/moe.md): a distribution per
//! layer — balanced, uniform, Zipf-skewed — or a recorded trace, sampled step by step with a
//! seeded generator, so the same seed gives the same steps on every machine.

mod grouped;
pub mod import;
mod trace;

pub use trace::RoutingTrace;

use crate::error::{ModelError, Result};
use crate::zoo::{ExpertTokens, Moe};
use elk_stage::corpus::Rng;
use std::sync::Arc;

/// How tokens choose their experts.
#[derive(Clone, Debug, PartialEq)]
pub enum Routing {
    /// Token t goes to experts (t·k + j) mod E: every expert within one token of the mean,
    /// the same in every step (what load-balancing losses aim for).
    Balanced,
    /// Each token picks k distinct experts uniformly at random.
    Uniform,
    /// Each token picks k distinct experts with probability ∝ 1/rank^s, the ranks a fixed
    /// permutation of the experts per layer (a layer's popular experts are its own).
    Zipf {
        /// The exponent s > 0 (0 would be uniform).
        s: f64,
    },
    /// Group-limited routing (DeepSeek): Zipf-like popularities as `zipf:S`, each token's
    /// experts chosen inside the best groups by the model's scores (`routing/grouped.rs`).
    Grouped {
        /// The popularities' exponent s > 0.
        s: f64,
    },
    /// The recorded routing of a trace file, step i being the trace's step i mod its steps.
    Trace(Arc<RoutingTrace>),
}

/// The exponent of `--routing grouped` without one (as the study's `zipf:1.2`).
pub const GROUPED_DEFAULT_S: f64 = 1.2;

/// Draws of the Monte Carlo estimate of [`Routing::inclusion`] for `zipf:S` and `grouped:S`.
pub const INCLUSION_DRAWS: usize = 4096;

/// The experts each token of one step is routed to: `[layer][token]` → k distinct experts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRouting {
    choices: Vec<Vec<Vec<u32>>>,
}

impl StepRouting {
    /// The choices `[layer][token][j]`.
    pub fn new(choices: Vec<Vec<Vec<u32>>>) -> StepRouting {
        StepRouting { choices }
    }

    /// Tokens per expert and layer.
    pub fn counts(&self, experts: u64) -> ExpertTokens {
        ExpertTokens::new(
            self.choices
                .iter()
                .map(|layer| {
                    let mut n = vec![0u64; experts as usize];
                    for &e in layer.iter().flatten() {
                        n[e as usize] += 1;
                    }
                    n
                })
                .collect(),
        )
    }

    /// The choices of layer `l`, per token.
    pub fn layer(&self, l: usize) -> &[Vec<u32>] {
        self.choices.get(l).map(Vec::as_slice).unwrap_or(&[])
    }
}

impl Routing {
    /// Parses `balanced`, `uniform`, `zipf:S` or `trace:FILE` (the file is read here).
    pub fn parse(s: &str) -> Result<Routing> {
        let bad = |detail: String| ModelError::Invalid(format!("--routing {s}: {detail}"));
        match s.split_once(':') {
            None if s == "balanced" => Ok(Routing::Balanced),
            None if s == "uniform" => Ok(Routing::Uniform),
            None if s == "grouped" => Ok(Routing::Grouped {
                s: GROUPED_DEFAULT_S,
            }),
            Some((kind @ ("zipf" | "grouped"), v)) => match v.parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 && s <= 10.0 => Ok(if kind == "zipf" {
                    Routing::Zipf { s }
                } else {
                    Routing::Grouped { s }
                }),
                _ => Err(bad(format!(
                    "the Zipf exponent '{v}' must be a number in (0, 10]"
                ))),
            },
            Some(("trace", path)) => Ok(Routing::Trace(Arc::new(RoutingTrace::read(
                std::path::Path::new(path),
            )?))),
            _ => Err(bad(
                "expected balanced, uniform, zipf:S (e.g. zipf:1.2), grouped[:S] or trace:FILE"
                    .into(),
            )),
        }
    }

    /// How it is written on the command line (`zipf:1.2`, `trace:FILE`).
    pub fn label(&self) -> String {
        match self {
            Routing::Balanced => "balanced".into(),
            Routing::Uniform => "uniform".into(),
            Routing::Zipf { s } => format!("zipf:{s}"),
            Routing::Grouped { s } => format!("grouped:{s}"),
            Routing::Trace(t) => format!("trace:{}", t.file),
        }
    }

    /// Whether every step routes alike (balanced): one sample says everything.
    pub fn is_deterministic(&self) -> bool {
        matches!(self, Routing::Balanced)
    }

    /// Checks that the routing fits the model: a trace's experts, k, layers and tokens.
    pub fn check(&self, moe: &Moe, layers: usize, tokens: u64) -> Result<()> {
        match self {
            Routing::Trace(t) => t.check(moe, layers, tokens),
            Routing::Grouped { .. } if moe.groups.is_none() => Err(ModelError::Invalid(format!(
                "--routing {}: the model routes its {} experts without groups (no n_group / \
                 topk_group): group-limited routing applies to DeepSeek-style routers; zipf:S \
                 is the same popularities without groups",
                self.label(),
                moe.experts
            ))),
            _ => Ok(()),
        }
    }

    /// The routing of step `step` of `layers` layers with `tokens` tokens per layer, drawn
    /// from `seed` (each step its own stream, so step 7 is the same whatever steps precede
    /// it).
    pub fn sample(
        &self,
        moe: &Moe,
        layers: usize,
        tokens: u64,
        seed: u64,
        step: u64,
    ) -> Result<StepRouting> {
        self.check(moe, layers, tokens)?;
        let k = moe.top_k.min(moe.experts) as usize;
        let e = moe.experts as usize;
        let mut rng = Rng::new(seed ^ step.wrapping_mul(0xA24B_AED4_963E_E407));
        let choices = match self {
            Routing::Balanced => {
                let all = (0..tokens)
                    .map(|t| {
                        (0..k)
                            .map(|j| ((t as usize * k + j) % e) as u32)
                            .collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>();
                vec![all; layers]
            }
            Routing::Uniform => (0..layers)
                .map(|_| (0..tokens).map(|_| uniform_pick(&mut rng, e, k)).collect())
                .collect(),
            Routing::Zipf { s } => (0..layers)
                .map(|l| {
                    let weights = zipf_weights(e, *s, l);
                    (0..tokens)
                        .map(|_| weighted_pick(&mut rng, &weights, k))
                        .collect()
                })
                .collect(),
            Routing::Grouped { s } => (0..layers)
                .map(|l| {
                    let weights = zipf_weights(e, *s, l);
                    (0..tokens)
                        .map(|_| grouped::pick(&mut rng, moe, &groups_of(moe), &weights))
                        .collect()
                })
                .collect(),
            Routing::Trace(t) => t.step(step as usize),
        };
        Ok(StepRouting::new(choices))
    }

    /// Layer `l`'s experts, most likely first (ties by index): what a predictor that knows
    /// the distribution (or the trace's frequencies) would preload.
    pub fn ranking(&self, moe: &Moe, l: usize) -> Vec<usize> {
        let e = moe.experts as usize;
        let weights = match self {
            Routing::Balanced | Routing::Uniform => vec![1.0; e],
            Routing::Zipf { s } | Routing::Grouped { s } => zipf_weights(e, *s, l),
            Routing::Trace(t) => t.frequencies(l, e),
        };
        let mut order: Vec<usize> = (0..e).collect();
        order.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
        order
    }

    /// Per expert of MoE layer `l`, the probability that one token of that layer picks it
    /// (the values sum to k).
    ///
    /// Exact for `balanced` and `uniform` (k/E each: balanced spreads every step's
    /// assignments evenly, so a token taken at random has each expert with probability k/E)
    /// and for a trace (each expert's share of the layer's recorded choices, times k). For
    /// `zipf:S` and `grouped:S`, a Monte Carlo estimate from [`INCLUSION_DRAWS`] (4,096)
    /// tokens drawn with a fixed seed per layer, so the same on every call and machine: each
    /// value's standard error is √(p(1 − p)/4096), at most 0.0078 (p = ½) and 0.0027 for
    /// DeepSeek-V3's mean p = 8/256. The values still sum to k exactly (every draw picks k).
    pub fn inclusion(&self, moe: &Moe, l: usize) -> Vec<f64> {
        let e = moe.experts as usize;
        let k = moe.top_k.min(moe.experts) as usize;
        match self {
            Routing::Balanced | Routing::Uniform => vec![k as f64 / e as f64; e],
            Routing::Trace(t) => {
                let f = t.frequencies(l, e);
                let total: f64 = f.iter().sum();
                if total == 0.0 {
                    return vec![0.0; e];
                }
                f.iter().map(|x| x * k as f64 / total).collect()
            }
            Routing::Zipf { s } | Routing::Grouped { s } => {
                let weights = zipf_weights(e, *s, l);
                let mut rng = Rng::new(0x1C1_0510_4E57 ^ l as u64);
                let groups = groups_of(moe);
                let mut hits = vec![0u64; e];
                for _ in 0..INCLUSION_DRAWS {
                    let picked = match self {
                        Routing::Grouped { .. } => grouped::pick(&mut rng, moe, &groups, &weights),
                        _ => weighted_pick(&mut rng, &weights, k),
                    };
                    for x in picked {
                        hits[x as usize] += 1;
                    }
                }
                hits.iter()
                    .map(|&h| h as f64 / INCLUSION_DRAWS as f64)
                    .collect()
            }
        }
    }
}

/// The model's groups, or one group of every expert (what `check` lets through only for a
/// model with groups; one group is the ungrouped top-k).
fn groups_of(moe: &Moe) -> crate::zoo::Groups {
    moe.groups.unwrap_or(crate::zoo::Groups {
        count: 1,
        top: 1,
        score: crate::zoo::GroupScore::Max,
    })
}

/// k distinct experts of `e`, uniformly (a partial Fisher–Yates shuffle).
fn uniform_pick(rng: &mut Rng, e: usize, k: usize) -> Vec<u32> {
    let mut pool: Vec<u32> = (0..e as u32).collect();
    for j in 0..k {
        let r = j + rng.range(0, (e - j - 1) as u64) as usize;
        pool.swap(j, r);
    }
    pool.truncate(k);
    pool
}

/// k distinct experts drawn one after another in proportion to `weights` among those not
/// yet drawn.
fn weighted_pick(rng: &mut Rng, weights: &[f64], k: usize) -> Vec<u32> {
    let mut left: Vec<(u32, f64)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| (i as u32, w))
        .collect();
    let mut picked = Vec::with_capacity(k);
    for _ in 0..k {
        let total: f64 = left.iter().map(|p| p.1).sum();
        let mut u = rng.uniform(0.0, total);
        let mut at = left.len() - 1;
        for (i, p) in left.iter().enumerate() {
            if u < p.1 {
                at = i;
                break;
            }
            u -= p.1;
        }
        picked.push(left.remove(at).0);
    }
    picked
}

/// Zipf weights 1/rank^s of layer `l`'s experts; the ranks are a permutation fixed per layer
/// (seeded by the layer), so the popular experts differ between layers but not between runs.
fn zipf_weights(e: usize, s: f64, l: usize) -> Vec<f64> {
    let mut rank: Vec<usize> = (0..e).collect();
    let mut rng = Rng::new(0x005E_ED0F_2175 ^ l as u64);
    for i in (1..e).rev() {
        let j = rng.range(0, i as u64) as usize;
        rank.swap(i, j);
    }
    rank.iter()
        .map(|&r| 1.0 / ((r + 1) as f64).powf(s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moe(experts: u64, top_k: u64) -> Moe {
        Moe::every_layer(experts, top_k, 8)
    }

    #[test]
    fn every_token_gets_k_distinct_experts() {
        let m = moe(8, 2);
        for r in [
            Routing::Uniform,
            Routing::Zipf { s: 1.2 },
            Routing::Balanced,
        ] {
            let step = r.sample(&m, 3, 17, 1, 0).unwrap();
            for l in 0..3 {
                assert_eq!(step.layer(l).len(), 17);
                for t in step.layer(l) {
                    let mut d = t.clone();
                    d.sort();
                    d.dedup();
                    assert_eq!(d.len(), 2, "{r:?} {t:?}");
                    assert!(d.iter().all(|&e| e < 8));
                }
            }
            let c = step.counts(8);
            assert_eq!(c.layer(1).iter().sum::<u64>(), 34);
        }
    }

    #[test]
    fn a_seed_and_step_give_one_sample() {
        let m = moe(64, 8);
        let a = Routing::Uniform.sample(&m, 2, 5, 9, 3).unwrap();
        let b = Routing::Uniform.sample(&m, 2, 5, 9, 3).unwrap();
        let c = Routing::Uniform.sample(&m, 2, 5, 9, 4).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn zipf_prefers_its_top_ranked_expert() {
        let m = moe(16, 1);
        let r = Routing::Zipf { s: 1.5 };
        let top = r.ranking(&m, 0)[0];
        let step = r.sample(&m, 1, 4000, 3, 0).unwrap();
        let c = step.counts(16);
        let most = (0..16).max_by_key(|&e| c.tokens(0, e)).unwrap();
        assert_eq!(most, top);
        // P(top) = 1 / H(16, 1.5) ≈ 0.443: within sampling error of 4,000 draws.
        let h: f64 = (1..=16).map(|r| 1.0 / (r as f64).powf(1.5)).sum();
        let share = c.tokens(0, top) as f64 / 4000.0;
        assert!((share - 1.0 / h).abs() < 0.03, "{share} vs {}", 1.0 / h);
        // Layers rank their experts differently.
        assert_ne!(r.ranking(&m, 0), r.ranking(&m, 1));
    }

    #[test]
    fn parse_names_what_it_expects() {
        assert_eq!(
            Routing::parse("zipf:1.2").unwrap(),
            Routing::Zipf { s: 1.2 }
        );
        let e = Routing::parse("zipf:-1").unwrap_err().to_string();
        assert!(e.contains("must be a number in (0, 10]"), "{e}");
        let e = Routing::parse("skewed").unwrap_err().to_string();
        assert!(e.contains("expected balanced, uniform, zipf:S"), "{e}");
    }

    fn grouped_moe(experts: u64, top_k: u64, count: u64, top: u64) -> Moe {
        Moe {
            scoring: crate::zoo::Scoring::Sigmoid,
            groups: Some(crate::zoo::Groups {
                count,
                top,
                score: crate::zoo::GroupScore::TopTwoSum,
            }),
            ..Moe::every_layer(experts, top_k, 8)
        }
    }

    #[test]
    fn grouped_with_one_group_is_zipf_in_distribution() {
        // One group: the Gumbel-top-k draw, k experts without replacement ∝ w, as zipf:S.
        // Each inclusion probability is an average of 4,096 draws (standard error
        // √(p(1 − p)/4096) each); the two estimates are independent, so their difference
        // has √2 times that. 5 standard errors: a wrong draw (w in place of log w, the
        // scores' order reversed) is off by far more on the top-ranked experts.
        for scoring in [crate::zoo::Scoring::Sigmoid, crate::zoo::Scoring::Softmax] {
            let m = Moe {
                scoring,
                ..grouped_moe(16, 3, 1, 1)
            };
            for l in 0..2 {
                let g = Routing::Grouped { s: 1.2 }.inclusion(&m, l);
                let z = Routing::Zipf { s: 1.2 }.inclusion(&m, l);
                for e in 0..16 {
                    let p = (g[e] + z[e]) / 2.0;
                    let se = (2.0 * p * (1.0 - p) / INCLUSION_DRAWS as f64).sqrt();
                    assert!(
                        (g[e] - z[e]).abs() <= 5.0 * se + 1e-9,
                        "layer {l} expert {e}: grouped {} vs zipf {}",
                        g[e],
                        z[e]
                    );
                }
            }
        }
        // And the sampled steps agree with the estimate: the most popular expert is the same.
        let m = grouped_moe(16, 3, 1, 1);
        let r = Routing::Grouped { s: 1.5 };
        let c = r.sample(&m, 1, 2000, 5, 0).unwrap().counts(16);
        let most = (0..16).max_by_key(|&e| c.tokens(0, e)).unwrap();
        assert_eq!(most, r.ranking(&m, 0)[0]);
    }

    #[test]
    fn grouped_picks_inside_the_best_groups_only() {
        // 32 experts in 8 groups of 4, each token keeps 2 groups and picks 4 experts.
        let m = grouped_moe(32, 4, 8, 2);
        let step = Routing::Grouped { s: 0.5 }
            .sample(&m, 2, 300, 7, 0)
            .unwrap();
        let mut spans = std::collections::BTreeSet::new();
        for l in 0..2 {
            for t in step.layer(l) {
                let mut d = t.clone();
                d.sort();
                d.dedup();
                assert_eq!(d.len(), 4, "{t:?}");
                let groups: std::collections::BTreeSet<u32> = d.iter().map(|e| e / 4).collect();
                assert!(groups.len() <= 2, "{t:?} spans groups {groups:?}");
                spans.insert(groups.len());
            }
        }
        assert!(spans.contains(&2), "the second group is used");
        // Keeping one group: every token's four experts are that group's four.
        let one = grouped_moe(32, 4, 8, 1);
        let step = Routing::Grouped { s: 0.5 }
            .sample(&one, 1, 300, 7, 0)
            .unwrap();
        for t in step.layer(0) {
            let groups: std::collections::BTreeSet<u32> = t.iter().map(|e| e / 4).collect();
            assert_eq!(groups.len(), 1, "{t:?}");
        }
        let inc = Routing::Grouped { s: 0.5 }.inclusion(&m, 0);
        assert!((inc.iter().sum::<f64>() - 4.0).abs() < 1e-9);
    }

    #[test]
    fn grouped_is_refused_for_a_router_without_groups() {
        let e = Routing::parse("grouped")
            .unwrap()
            .sample(&moe(8, 2), 1, 4, 1, 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--routing grouped:1.2: the model routes its 8 experts without groups"),
            "{e}"
        );
        assert_eq!(
            Routing::parse("grouped:0.8").unwrap(),
            Routing::Grouped { s: 0.8 }
        );
    }

    #[test]
    fn inclusion_is_exact_where_it_can_be_and_sums_to_k() {
        let m = moe(8, 2);
        assert_eq!(Routing::Uniform.inclusion(&m, 3), vec![0.25; 8]);
        assert_eq!(Routing::Balanced.inclusion(&m, 0), vec![0.25; 8]);
        // A trace of one step, two tokens: experts 0 and 3, then 0 and 5.
        let text = r#"{"format": "elk-routing-trace/1", "experts": 8, "top_k": 2,
            "steps": [[[[0, 3], [0, 5]]]]}"#;
        let t = Routing::Trace(Arc::new(RoutingTrace::from_json("t.json", text).unwrap()));
        assert_eq!(
            t.inclusion(&m, 0),
            vec![1.0, 0.0, 0.0, 0.5, 0.0, 0.5, 0.0, 0.0]
        );
        // Zipf's estimate: the top-ranked expert most often, each step's values summing to k,
        // the same on every call.
        let z = Routing::Zipf { s: 1.5 };
        let inc = z.inclusion(&m, 1);
        assert!((inc.iter().sum::<f64>() - 2.0).abs() < 1e-9);
        let top = z.ranking(&m, 1)[0];
        assert!(inc.iter().all(|&p| p <= inc[top]), "{inc:?}");
        assert_eq!(inc, z.inclusion(&m, 1));
    }
}
