//! Mixture-of-Experts graphs: the zoo's MoE models against their published counts, FLOPs and
//! expert bytes against the routing's closed forms, and the routing's checks.

use elk_model::graph::{Graph, Mode, Role};
use elk_model::zoo::{self, ExpertTokens, ZooParams};

/// Weight bytes of the operators whose names start with `prefix`, each tensor once.
fn weight_bytes(g: &Graph, prefix: &str) -> u64 {
    let mut seen = std::collections::BTreeSet::new();
    g.ops
        .iter()
        .filter(|o| o.name.starts_with(prefix))
        .flat_map(|o| o.inputs())
        .filter(|t| t.role == Role::Weight && seen.insert(t.source.clone()))
        .map(|t| t.bytes().0)
        .sum()
}

fn flops(g: &Graph, prefix: &str) -> u64 {
    g.ops
        .iter()
        .filter(|o| o.name.starts_with(prefix))
        .map(|o| o.flops().0)
        .sum()
}

#[test]
fn mixtral_has_its_safetensors_total_and_published_active_count() {
    let m = zoo::find("mixtral-8x7b").unwrap();
    let (total, active) = m.parameter_counts().unwrap();
    // The safetensors total of mistralai/Mixtral-8x7B-v0.1, exactly.
    assert_eq!(total, 46_702_792_704);
    // 12.9 B active: embeddings, attention and 2 of 8 experts per layer.
    assert!((active as f64 - 12.9e9).abs() < 0.01 * 12.9e9, "{active}");
    let expert = 3 * 4096 * 14336u64;
    assert_eq!(total - active, 32 * 6 * expert, "6 idle experts per layer");
}

#[test]
fn expert_flops_follow_the_tokens_each_expert_receives() {
    let m = zoo::find("mixtral-8x7b").unwrap();
    let mut p = ZooParams::new(Mode::Decode, 3, 128);
    p.layers = Some(2);
    // Layer 0: 3 tokens × top-2 = 6 assignments on experts 0, 0, 0, 5, 5, 7 → counts 3/2/1;
    // layer 1 on 1/1/1/1/1/1.
    let routing = ExpertTokens::new(vec![
        vec![3, 0, 0, 0, 0, 2, 0, 1],
        vec![1, 1, 1, 1, 1, 1, 0, 0],
    ]);
    let g = m.build_routed(&p, Some(&routing)).unwrap();
    let per_token = 2.0 * 3.0 * 4096.0 * 14336.0;
    for (l, tokens) in [(0, 6.0), (1, 6.0)] {
        let matmuls: f64 = g
            .ops
            .iter()
            .filter(|o| o.name.starts_with(&format!("l{l}.moe.e")))
            .filter(|o| o.kind.is_contraction())
            .map(|o| o.flops().0 as f64)
            .sum();
        assert_eq!(matmuls, tokens * per_token, "layer {l}");
    }
    // Experts with no token have no operators and load nothing.
    let expert_bytes = 3 * 4096 * 14336 * 2u64;
    assert_eq!(weight_bytes(&g, "l0.moe.e"), 3 * expert_bytes);
    assert_eq!(weight_bytes(&g, "l1.moe.e"), 6 * expert_bytes);
    assert!(!g.ops.iter().any(|o| o.name.starts_with("l0.moe.e1.")));
    // Layers with different experts are one irregular block.
    assert_eq!(g.layers.layers, 1);
    assert_eq!(g.layers.total(), g.ops.len());
    assert_eq!(flops(&g, "l0.moe.router"), 2 * 3 * 8 * 4096);
}

#[test]
fn the_balanced_routing_touches_min_of_experts_and_assignments() {
    let m = zoo::find("qwen3-30b-a3b").unwrap();
    for (batch, experts) in [(1u64, 8usize), (4, 32), (32, 128)] {
        let mut p = ZooParams::new(Mode::Decode, batch, 256);
        p.layers = Some(2);
        let g = m.build(&p).unwrap();
        let downs = g
            .ops
            .iter()
            .filter(|o| o.name.starts_with("l0.moe.e") && o.name.ends_with(".down"))
            .count();
        assert_eq!(downs, experts, "batch {batch}");
        // Equal layers keep the layer structure.
        assert_eq!(g.layers.layers, 2);
    }
}

#[test]
fn a_routing_that_does_not_add_up_is_refused() {
    let m = zoo::find("mixtral-8x7b").unwrap();
    let mut p = ZooParams::new(Mode::Decode, 2, 128);
    p.layers = Some(1);
    let short = ExpertTokens::new(vec![vec![1, 1, 1, 0, 0, 0, 0, 0]]);
    let e = m.build_routed(&p, Some(&short)).unwrap_err().to_string();
    assert!(
        e.contains("assigns 3 tokens to experts: 2 tokens × top-2 is 4"),
        "{e}"
    );
    let narrow = ExpertTokens::new(vec![vec![2, 2]]);
    let e = m.build_routed(&p, Some(&narrow)).unwrap_err().to_string();
    assert!(e.contains("names 2 experts, mixtral-8x7b has 8"), "{e}");
    let dense = zoo::find("llama2-7b").unwrap();
    let e = dense
        .build_routed(&p, Some(&short))
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no experts"), "{e}");
}

#[test]
fn a_model_file_with_a_wrong_count_is_reported() {
    let text = include_str!("../../zoo/mixtral-8x7b.toml").replace("layers = 32", "layers = 4");
    let m = zoo::ZooModel::from_toml_str("m.toml", &text).unwrap();
    let lines = m.count_mismatches().unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("total parameters, -87.0 %"),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("active parameters"), "{}", lines[1]);
}

#[test]
fn moe_keys_are_checked() {
    let base = include_str!("../../zoo/mixtral-8x7b.toml");
    let bad = |from: &str, to: &str| {
        zoo::ZooModel::from_toml_str("m.toml", &base.replace(from, to))
            .unwrap_err()
            .to_string()
    };
    assert!(bad("top_k = 2", "top_k = 9").contains("key 'moe.top_k': 9 is more than the 8 experts"));
    assert!(bad("experts = 8", "experts = 0").contains("key 'moe.experts': must be ≥ 1"));
    assert!(bad("expert_dim = 14336", "expert_dim = 14336\nrouted = 1")
        .contains("unknown field `routed`"));
    let dense = include_str!("../../zoo/llama2-7b.toml");
    let e = zoo::ZooModel::from_toml_str(
        "m.toml",
        &dense.replace(
            "published_params",
            "published_active_params = 1e9\npublished_params",
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("applies to a model with [moe]"), "{e}");
}
