//! Which experts the tokens of an MoE step are routed to (docs/moe.md): a distribution per
//! layer — balanced, uniform, Zipf-skewed — or a recorded trace, sampled step by step with a
//! seeded generator, so the same seed gives the same steps on every machine.

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
    /// The recorded routing of a trace file, step i being the trace's step i mod its steps.
    Trace(Arc<RoutingTrace>),
}

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
            Some(("zipf", v)) => match v.parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 && s <= 10.0 => Ok(Routing::Zipf { s }),
                _ => Err(bad(format!(
                    "the Zipf exponent '{v}' must be a number in (0, 10]"
                ))),
            },
            Some(("trace", path)) => Ok(Routing::Trace(Arc::new(RoutingTrace::read(
                std::path::Path::new(path),
            )?))),
            _ => Err(bad(
                "expected balanced, uniform, zipf:S (e.g. zipf:1.2) or trace:FILE".into(),
            )),
        }
    }

    /// How it is written on the command line (`zipf:1.2`, `trace:FILE`).
    pub fn label(&self) -> String {
        match self {
            Routing::Balanced => "balanced".into(),
            Routing::Uniform => "uniform".into(),
            Routing::Zipf { s } => format!("zipf:{s}"),
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
            Routing::Zipf { s } => zipf_weights(e, *s, l),
            Routing::Trace(t) => t.frequencies(l, e),
        };
        let mut order: Vec<usize> = (0..e).collect();
        order.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
        order
    }
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
        Moe {
            experts,
            top_k,
            expert_dim: 8,
            shared_dim: 0,
            shared_gate: false,
        }
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
}
