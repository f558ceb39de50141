//! Mixture-of-Experts feed-forward blocks (docs/moe.md): a router, a top-k selection, one
//! gated FFN per routed expert that receives tokens (sized by the tokens it receives), an
//! optional shared expert, and the weighted combine.
//!
//! Which expert receives how many tokens is an [`ExpertTokens`]: the balanced routing by
//! default (every graph a command builds without a routing), a sampled or traced routing for
//! the MoE policies (`crate::moe`). An expert that receives no token has no operators, so its
//! weights are neither loaded nor counted in that graph: the graph is what the step computes.

use super::builder::{Act, Builder, In};
use super::transformer::Ffn;
use crate::graph::{MoeRole, OpKind};

/// The MoE block of a model and the layers it replaces the FFN of: every layer, or (DeepSeek)
/// those from `dense_layers` on, every `layer_freq`-th.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moe {
    /// Routed experts E per layer.
    pub experts: u64,
    /// Experts each token is routed to (k).
    pub top_k: u64,
    /// Width of one routed expert's FFN.
    pub expert_dim: u64,
    /// Width of the shared expert every token passes through (0: none).
    pub shared_dim: u64,
    /// The shared expert's output is scaled by a learned sigmoid gate (Qwen2-MoE).
    pub shared_gate: bool,
    /// Leading layers with a dense FFN of the model's `[ffn] dim` (DeepSeek's
    /// `first_k_dense_replace`; 0: none).
    pub dense_layers: usize,
    /// From `dense_layers` on, layer l is an MoE layer when l mod `layer_freq` = 0
    /// (`moe_layer_freq`, transformers' rule; 1: every layer).
    pub layer_freq: usize,
    /// How the router turns logits into scores (no cost of its own: the top-k step's price is
    /// that of a softmax step either way).
    pub scoring: Scoring,
    /// Group-limited routing (DeepSeek's `n_group`, `topk_group`, `topk_method`); `None`: the
    /// top k of all experts.
    pub groups: Option<Groups>,
    /// A learned bias per expert added to the scores before selection (DeepSeek-V3's
    /// `e_score_correction_bias`, `noaux_tc`): E parameters per MoE layer.
    pub score_bias: bool,
}

/// How a router scores its experts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scoring {
    /// softmax over the E logits (Mixtral, Qwen, DeepSeek-V2).
    Softmax,
    /// sigmoid of each logit (DeepSeek-V3, Kimi K2).
    Sigmoid,
}

/// Group-limited routing: the E experts are `count` groups of E / count; a token first keeps
/// the `top` groups with the highest group score, then picks its k experts inside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    /// Groups (`n_group`); divides the experts.
    pub count: u64,
    /// Groups kept per token (`topk_group`), 1 ≤ top ≤ count.
    pub top: u64,
    /// A group's score.
    pub score: GroupScore,
}

/// What a group of experts scores, from its experts' scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupScore {
    /// The sum of its two best (`noaux_tc`, DeepSeek-V3).
    TopTwoSum,
    /// Its best (`group_limited_greedy`, DeepSeek-V2).
    Max,
}

impl Moe {
    /// An MoE block in every layer, softmax scores, no groups: what every model before
    /// DeepSeek's has.
    pub const fn every_layer(experts: u64, top_k: u64, expert_dim: u64) -> Moe {
        Moe {
            experts,
            top_k,
            expert_dim,
            shared_dim: 0,
            shared_gate: false,
            dense_layers: 0,
            layer_freq: 1,
            scoring: Scoring::Softmax,
            groups: None,
            score_bias: false,
        }
    }

    /// Whether layer `l` (of the model) has the MoE block rather than a dense FFN.
    pub fn is_moe_layer(&self, l: usize) -> bool {
        l >= self.dense_layers && l % self.layer_freq.max(1) == 0
    }

    /// MoE layers among the first `layers` layers: how many entries a routing has. Routing
    /// is per MoE layer: a routing's layer i is the i-th MoE layer of the model.
    pub fn moe_layers(&self, layers: usize) -> usize {
        (0..layers).filter(|&l| self.is_moe_layer(l)).count()
    }

    /// The MoE-layer index of model layer `l` (`None`: a dense layer).
    pub fn moe_index(&self, l: usize) -> Option<usize> {
        self.is_moe_layer(l).then(|| self.moe_layers(l))
    }
}

/// Tokens each routed expert receives, per MoE layer, in one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpertTokens {
    per_layer: Vec<Vec<u64>>,
}

impl ExpertTokens {
    /// Counts per layer (outer) and expert (inner).
    pub fn new(per_layer: Vec<Vec<u64>>) -> ExpertTokens {
        ExpertTokens { per_layer }
    }

    /// The balanced routing of `tokens` tokens over `layers` layers: token t goes to experts
    /// (t·k + j) mod E for j < k, so every expert receives ⌊tk/E⌋ or ⌈tk/E⌉ tokens and
    /// min(E, t·k) experts receive any. What load-balancing losses aim for; the default.
    pub fn balanced(moe: &Moe, layers: usize, tokens: u64) -> ExpertTokens {
        let assignments = tokens * moe.top_k.min(moe.experts);
        let (base, extra) = (assignments / moe.experts, assignments % moe.experts);
        let layer: Vec<u64> = (0..moe.experts)
            .map(|e| base + u64::from(e < extra))
            .collect();
        ExpertTokens::new(vec![layer; layers])
    }

    /// Tokens of expert `e` in layer `l` (0 past the recorded layers or experts).
    pub fn tokens(&self, l: usize, e: usize) -> u64 {
        self.per_layer
            .get(l)
            .and_then(|v| v.get(e))
            .copied()
            .unwrap_or(0)
    }

    /// The counts of layer `l`.
    pub fn layer(&self, l: usize) -> &[u64] {
        self.per_layer.get(l).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Layers recorded.
    pub fn layers(&self) -> usize {
        self.per_layer.len()
    }

    /// Experts that receive at least one token, summed over the layers.
    pub fn touched(&self) -> u64 {
        self.per_layer
            .iter()
            .map(|v| v.iter().filter(|&&n| n > 0).count() as u64)
            .sum()
    }
}

/// Whether `graph` has MoE operators (a top-k step or a routed expert's), so that which
/// routing it was built with matters: every command but `moe` builds the balanced one.
pub fn has_experts(graph: &crate::graph::Graph) -> bool {
    graph
        .ops
        .iter()
        .any(|o| o.top_k().is_some() || o.expert().is_some())
}

/// The gated or plain FFN `down(act(…))` of `x` with width `dim`, weights under `w`
/// (`{w}.wgu`/`{w}.wu`, `{w}.wd`) and operators under `p`.
pub fn ffn(b: &mut Builder, kind: Ffn, p: &str, w: &str, x: &Act, dim: u64, bias: bool) -> Act {
    let hidden = x.shape[x.shape.len() - 1];
    match kind {
        Ffn::Gated(act) => {
            let (gate, up) = if b.separate_gate_up {
                // Two projections, as a chip that cannot hold the fused weight runs them.
                let gate = b.linear(&format!("{p}.gate"), x, dim, &format!("{w}.wg"), bias);
                let up = b.linear(&format!("{p}.up"), x, dim, &format!("{w}.wu"), bias);
                (gate, up)
            } else {
                // One fused gate/up projection, then slices — as in the reference graphs.
                let both = b.linear(
                    &format!("{p}.gate_up"),
                    x,
                    2 * dim,
                    &format!("{w}.wgu"),
                    bias,
                );
                let gate = super::transformer::slice_cols(b, &format!("{p}.gate"), &both, dim);
                let up = super::transformer::slice_cols(b, &format!("{p}.up"), &both, dim);
                (gate, up)
            };
            let a = b.unary(&format!("{p}.act"), act, &gate);
            let a = if act == "Sigmoid" {
                b.binary(&format!("{p}.silu"), "Multiply", &gate, &a)
            } else {
                a
            };
            let h = b.binary(&format!("{p}.mul"), "Multiply", &a, &up);
            b.linear(&format!("{p}.down"), &h, hidden, &format!("{w}.wd"), bias)
        }
        Ffn::Plain(act) => {
            let up = b.linear(&format!("{p}.up"), x, dim, &format!("{w}.wu"), bias);
            let mut a = b.unary(&format!("{p}.act"), act, &up);
            if act == "Sigmoid" {
                a = b.binary(&format!("{p}.silu"), "Multiply", &up, &a);
            }
            b.linear(&format!("{p}.down"), &a, hidden, &format!("{w}.wd"), bias)
        }
    }
}

/// Appends model layer `l`'s MoE block on the normalised input `x` ([m, hidden]) and returns
/// its output ([m, hidden]). `tokens[e]` is the number of tokens expert `e` receives. The
/// operators are named after the model layer (`l{l}.moe.…`); their [`MoeRole`]s carry the MoE
/// layer `index` (the routing's layer).
pub fn moe_block(
    b: &mut Builder,
    moe: &Moe,
    kind: Ffn,
    (l, index): (usize, usize),
    x: &Act,
    tokens: &[u64],
) -> Act {
    let p = format!("l{l}.moe");
    let (m, hidden) = (x.shape[0], x.shape[1]);
    // Each operator appended since `from` plays `role`.
    let mark = |b: &mut Builder, from: usize, role: MoeRole| {
        for op in &mut b.ops[from..] {
            op.moe = Some(role);
        }
    };
    let router = b.ops.len();
    // The router's logits, then softmax and top-k selection over the E logits of each token
    // in one pass (priced as a softmax step).
    let logits = b.linear(
        &format!("{p}.router"),
        x,
        moe.experts,
        &format!("{p}.wr"),
        false,
    );
    mark(b, router, MoeRole::Router { layer: index });
    let top_k = b.ops.len();
    let mut ins = vec![In::act(&logits, &[0, 1])];
    if moe.score_bias {
        // DeepSeek-V3's e_score_correction_bias: added to the scores before the selection.
        ins.push(In::named(
            &format!("{p}.score_bias"),
            crate::graph::Role::Weight,
            &[1],
            &[moe.experts],
        ));
    }
    let gates = b.op(
        &format!("{p}.topk"),
        OpKind::Softmax,
        "TopK",
        &[m, moe.experts],
        &[0, 1],
        ins,
    );
    mark(b, top_k, MoeRole::TopK { layer: index });
    // The running sum of the block's output: the shared expert's (all m tokens), then each
    // routed expert's rows added in.
    let mut acc: Option<Act> = None;
    if moe.shared_dim > 0 {
        let shared = b.ops.len();
        let sp = format!("{p}.shared");
        let mut y = ffn(b, kind, &sp, &sp, x, moe.shared_dim, false);
        if moe.shared_gate {
            // Qwen2-MoE's `shared_expert_gate`: one logit per token. Named apart from the
            // gated FFN's own `{sp}.gate` slice, so every operator name stays unique.
            let gp = format!("{p}.shared_gate");
            let g = b.linear(&gp, x, 1, &format!("{sp}.wg"), false);
            let g = b.unary(&format!("{gp}.act"), "Sigmoid", &g);
            let ins = vec![In::act(&y, &[0, 1]), In::act(&g, &[0])];
            y = b.op(
                &format!("{sp}.scale"),
                OpKind::Elementwise,
                "Multiply",
                &[m, hidden],
                &[0, 1],
                ins,
            );
        }
        mark(b, shared, MoeRole::Shared { layer: index });
        acc = Some(y);
    }
    for (e, &n) in tokens.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let ep = format!("{p}.e{e}");
        // The expert reads only the rows of the tokens routed to it.
        let rows = Act {
            source: x.source.clone(),
            shape: vec![n, hidden],
        };
        let first = b.ops.len();
        let y = ffn(b, kind, &ep, &ep, &rows, moe.expert_dim, false);
        // Which rows it reads is the top-k's choice: its first operator waits for it.
        b.ops[first].after.push(gates.source.clone());
        mark(
            b,
            first,
            MoeRole::Expert {
                layer: index,
                expert: e,
            },
        );
        let combine = b.ops.len();
        // out[token] += gate[token, e] · y[token] for its n tokens.
        let mut ins = vec![In::act(&y, &[0, 1]), In::on(&gates.source, &[0])];
        if let Some(a) = &acc {
            ins.push(In::on(&a.source, &[0, 1]));
        }
        let c = b.op(
            &format!("{ep}.combine"),
            OpKind::Elementwise,
            "Add",
            &[n, hidden],
            &[0, 1],
            ins,
        );
        mark(
            b,
            combine,
            MoeRole::Combine {
                layer: index,
                expert: e,
            },
        );
        acc = Some(c);
    }
    match acc {
        Some(a) => Act {
            source: a.source,
            shape: vec![m, hidden],
        },
        // No token routed anywhere cannot happen (k ≥ 1, m ≥ 1), but an empty block is the
        // gates' view rather than a panic.
        None => gates.view(&[m, moe.experts]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_records_each_operators_role() {
        use crate::graph::Mode;
        // Qwen1.5-MoE (Qwen2-MoE) has a gated shared expert; one layer, batch 2.
        let mut params = crate::zoo::ZooParams::new(Mode::Decode, 2, 64);
        params.layers = Some(1);
        let config = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/hf/Qwen1.5-MoE-A2.7B/config.json"
        );
        let g = crate::zoo::build(config, &params).unwrap();
        let role = |name: &str| g.ops.iter().find(|o| o.name == name).and_then(|o| o.moe);
        assert_eq!(role("l0.moe.router"), Some(MoeRole::Router { layer: 0 }));
        assert_eq!(role("l0.moe.topk"), Some(MoeRole::TopK { layer: 0 }));
        assert_eq!(
            role("l0.moe.shared.down"),
            Some(MoeRole::Shared { layer: 0 })
        );
        assert_eq!(
            role("l0.moe.shared_gate.act"),
            Some(MoeRole::Shared { layer: 0 })
        );
        let e1 = MoeRole::Expert {
            layer: 0,
            expert: 1,
        };
        assert_eq!(role("l0.moe.e1.down"), Some(e1));
        assert_eq!(
            role("l0.moe.e1.combine").and_then(MoeRole::expert),
            Some((0, 1))
        );
        assert_eq!(role("l0.attn.qk"), None);
        // Every operator named as an expert's has its role, and no other.
        for op in &g.ops {
            let named = op.name.starts_with("l0.moe.e");
            assert_eq!(op.expert().is_some(), named, "{}", op.name);
        }
        assert!(has_experts(&g));
    }

    #[test]
    fn balanced_routing_spreads_every_assignment() {
        let moe = Moe::every_layer(8, 2, 16);
        let r = ExpertTokens::balanced(&moe, 3, 5);
        assert_eq!(r.layer(0), &[2, 2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(r.layer(2).iter().sum::<u64>(), 10);
        let one = ExpertTokens::balanced(&moe, 1, 1);
        assert_eq!(one.layer(0), &[1, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(one.touched(), 2);
    }
}
