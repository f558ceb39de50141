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

/// The MoE block of every layer of a model.
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

/// Appends layer `l`'s MoE block on the normalised input `x` ([m, hidden]) and returns its
/// output ([m, hidden]). `tokens[e]` is the number of tokens expert `e` receives.
pub fn moe_block(b: &mut Builder, moe: &Moe, kind: Ffn, l: usize, x: &Act, tokens: &[u64]) -> Act {
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
    mark(b, router, MoeRole::Router { layer: l });
    let top_k = b.ops.len();
    let gates = b.op(
        &format!("{p}.topk"),
        OpKind::Softmax,
        "TopK",
        &[m, moe.experts],
        &[0, 1],
        vec![In::act(&logits, &[0, 1])],
    );
    mark(b, top_k, MoeRole::TopK { layer: l });
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
        mark(b, shared, MoeRole::Shared { layer: l });
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
                layer: l,
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
                layer: l,
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
        let moe = Moe {
            experts: 8,
            top_k: 2,
            expert_dim: 16,
            shared_dim: 0,
            shared_gate: false,
        };
        let r = ExpertTokens::balanced(&moe, 3, 5);
        assert_eq!(r.layer(0), &[2, 2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(r.layer(2).iter().sum::<u64>(), 10);
        let one = ExpertTokens::balanced(&moe, 1, 1);
        assert_eq!(one.layer(0), &[1, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(one.touched(), 2);
    }
}
