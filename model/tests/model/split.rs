//! Weights larger than the chip (docs/chips.md): an output matmul cut into column chunks
//! keeps its FLOPs and bytes and the layer structure; operators inside the layers are left
//! whole; gated FFNs built as separate gate and up matmuls keep the parameters.

use elk_model::dtype::Dtypes;
use elk_model::graph::Mode;
use elk_model::zoo::{self, ZooParams};

fn llama3(separate_gate_up: bool) -> elk_model::graph::Graph {
    let mut p = ZooParams::new(Mode::Decode, 32, 128);
    p.dtypes = Dtypes::parse("w=bfp8,ffn=bfp4,kv=bfp8,a=bf16").unwrap();
    p.layers = Some(2);
    p.separate_gate_up = separate_gate_up;
    zoo::build("llama3-8b", &p).unwrap()
}

#[test]
fn the_lm_head_becomes_column_chunks_with_the_same_work() {
    let mut g = llama3(true);
    let before = g.totals();
    let ops = g.ops.len();
    let split = g.split_wide_outputs(24_000_000, 24_000_000);
    assert_eq!(split.len(), 1, "{split:?}");
    let s = &split[0];
    assert_eq!(s.op, "lm_head");
    // 128,256 columns of 4,096 bfp8 weights (4,352 bytes a column): 5,514 columns at most per
    // chunk, whole tiles of 32: 5,504 → ⌈4,008 tiles / 172⌉ = 24 chunks.
    assert_eq!(s.weight_bytes, 128_256 * 4096 * 17 / 16);
    assert_eq!(s.chunks, 24);
    assert!(s.chunk_bytes <= 24_000_000, "{}", s.chunk_bytes);
    assert_eq!(g.ops.len(), ops + 23);
    assert_eq!(g.layers.total(), g.ops.len());
    let after = g.totals();
    assert_eq!(after.flops, before.flops);
    assert_eq!(after.weight_bytes, before.weight_bytes);
    assert_eq!(after.hbm_bytes, before.hbm_bytes);
    let cols: u64 = g
        .ops
        .iter()
        .filter(|o| o.name.starts_with("lm_head.c"))
        .map(|o| o.dims[1])
        .sum();
    assert_eq!(cols, 128_256);
    assert_eq!(g.ops.last().unwrap().name, "lm_head.c23");
}

#[test]
fn operators_inside_the_layers_are_never_cut() {
    let mut g = llama3(false);
    let layer_ops = g.layers.ops_per_layer;
    // Far below the FFN's weight: only the LM head (outside the layers) is cut.
    let split = g.split_wide_outputs(1_000_000, 1_000_000);
    assert_eq!(
        split.iter().map(|s| s.op.as_str()).collect::<Vec<_>>(),
        ["lm_head"]
    );
    assert_eq!(g.layers.ops_per_layer, layer_ops);
}

#[test]
fn separate_gate_and_up_keep_the_parameters_and_drop_the_slices() {
    let (fused, separate) = (llama3(false), llama3(true));
    assert_eq!(fused.totals().parameters, separate.totals().parameters);
    // The same FLOPs but the two slices' (one per element they copy).
    let slices: u64 = fused
        .ops
        .iter()
        .filter(|o| o.name.ends_with(".ffn.gate") || o.name.ends_with(".ffn.up"))
        .map(|o| o.flops().0)
        .sum();
    assert!(slices > 0);
    assert_eq!(fused.totals().flops.0, separate.totals().flops.0 + slices);
    let names = |g: &elk_model::graph::Graph| -> Vec<String> {
        g.ops
            .iter()
            .filter(|o| o.name.starts_with("l0.ffn."))
            .map(|o| o.name.clone())
            .collect()
    };
    assert!(names(&fused).contains(&"l0.ffn.gate_up".to_string()));
    let s = names(&separate);
    assert!(s.contains(&"l0.ffn.gate".to_string()) && s.contains(&"l0.ffn.up".to_string()));
    assert!(!s.iter().any(|n| n == "l0.ffn.gate_up"));
    // Two slices fewer, one matmul more: one operator fewer per layer.
    assert_eq!(
        separate.layers.ops_per_layer + 1,
        fused.layers.ops_per_layer
    );
}
