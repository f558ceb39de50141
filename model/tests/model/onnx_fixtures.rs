//! The ONNX fixtures (tests/data/onnx/, exported by scripts/onnx-fixtures/export.py) against
//! their zoo twins (the TOML file of the same model): the same operator kinds in every
//! layer, the same attention, softmax and reduction operators, the same matrix-multiply
//! FLOPs per layer, and the same weight and KV bytes (±0.1 %).
//!
//! Slices are left out of the kinds: the zoo fuses Q/K/V (and gate/up) into one projection
//! and slices it, while Hugging Face's Llama and ViT project separately (GPT-2 fuses, and its
//! Split gives the same slices). The per-layer FLOPs of the MatMuls hold either way.

use elk_model::graph::{Graph, Mode, OpKind, Role};
use elk_model::import::{import_file, ImportOptions};
use elk_model::zoo::{ZooModel, ZooParams};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn data(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/onnx")
        .join(file)
}

fn twin(model: &str, mode: Mode, batch: u64, kv: u64) -> Graph {
    let path = data(&format!("{model}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let m = ZooModel::from_toml_str(&path.display().to_string(), &text).unwrap();
    m.build(&ZooParams::new(mode, batch, kv)).unwrap()
}

/// FLOPs of the matrix multiplies of layer `l`.
fn contraction_flops(g: &Graph, l: usize) -> u64 {
    let r = g.layers.layer_range(l).unwrap();
    g.ops[r]
        .iter()
        .filter(|o| o.kind.is_contraction())
        .map(|o| o.flops().0)
        .sum()
}

/// Operators of each kind (but slices) in layer `l`.
fn kinds(g: &Graph, l: usize) -> BTreeMap<OpKind, usize> {
    let mut m = BTreeMap::new();
    for k in OpKind::ALL {
        let n = g.count_in_layer(l, k);
        if n > 0 && k != OpKind::Slice {
            m.insert(k, n);
        }
    }
    m
}

fn close(a: u64, b: u64) -> bool {
    (a as f64 - b as f64).abs() <= 0.001 * b as f64
}

fn check(file: &str, model: &str, mode: Mode, batch: u64, kv: u64) {
    let g = import_file(&data(file), &ImportOptions::new(mode, batch, kv)).unwrap();
    let z = twin(model, mode, batch, kv);
    assert_eq!(
        g.layers.layers, z.layers.layers,
        "{file}: layers {:?}",
        g.layers
    );
    for l in 0..z.layers.layers {
        let (a, b) = (kinds(&g, l), kinds(&z, l));
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{file} layer {l}: kinds {a:?} vs the zoo's {b:?}"
        );
        for k in [OpKind::BatchMatMul, OpKind::Softmax, OpKind::Reduce] {
            assert_eq!(a.get(&k), b.get(&k), "{file} layer {l}: {k} {a:?} vs {b:?}");
        }
        let (f, zf) = (contraction_flops(&g, l), contraction_flops(&z, l));
        assert!(
            close(f, zf),
            "{file} layer {l}: MatMul FLOPs {f} vs the zoo's {zf}"
        );
    }
    let (t, zt) = (g.totals(), z.totals());
    assert!(
        close(t.weight_bytes.0, zt.weight_bytes.0),
        "{file}: weight bytes {} vs the zoo's {}",
        t.weight_bytes.0,
        zt.weight_bytes.0
    );
    assert!(
        close(t.kv_bytes.0, zt.kv_bytes.0),
        "{file}: KV bytes {} vs the zoo's {}",
        t.kv_bytes.0,
        zt.kv_bytes.0
    );
    assert_eq!(t.kv_bytes.0 > 0, mode == Mode::Decode, "{file}");
}

#[test]
fn llama_prefill_and_decode_match_their_zoo_twin() {
    check(
        "tiny-llama-prefill.onnx",
        "tiny-llama",
        Mode::Prefill,
        2,
        64,
    );
    check("tiny-llama-decode.onnx", "tiny-llama", Mode::Decode, 2, 64);
    check(
        "tiny-llama-decode.onnx",
        "tiny-llama",
        Mode::Decode,
        8,
        2048,
    );
}

#[test]
fn gpt2_prefill_and_decode_match_their_zoo_twin() {
    check("tiny-gpt2-prefill.onnx", "tiny-gpt2", Mode::Prefill, 3, 100);
    check("tiny-gpt2-decode.onnx", "tiny-gpt2", Mode::Decode, 2, 64);
    check("tiny-gpt2-decode.onnx", "tiny-gpt2", Mode::Decode, 8, 128);
}

#[test]
fn vit_matches_its_zoo_twin() {
    check("tiny-vit.onnx", "tiny-vit", Mode::Prefill, 2, 1);
    check("tiny-vit.onnx", "tiny-vit", Mode::ForwardBatch, 4, 1);
}

/// [`check`] of `{model}-prefill.onnx` or `{model}-decode.onnx` (by the mode) against
/// `{model}.toml`, for each `(mode, batch, kv)`.
fn check_twin(model: &str, cases: &[(Mode, u64, u64)]) {
    for &(mode, batch, kv) in cases {
        let stage = if mode == Mode::Decode {
            "decode"
        } else {
            "prefill"
        };
        check(&format!("{model}-{stage}.onnx"), model, mode, batch, kv);
    }
}

const PREFILL: Mode = Mode::Prefill;
const DECODE: Mode = Mode::Decode;

#[test]
fn grouped_query_llama_matches_its_zoo_twin() {
    let cases = [
        (PREFILL, 2, 64),
        (PREFILL, 3, 100),
        (DECODE, 2, 64),
        (DECODE, 8, 2048),
    ];
    check_twin("tiny-llama-gqa", &cases);
}

#[test]
fn tied_gpt2_matches_its_zoo_twin() {
    check_twin(
        "tiny-gpt2-tied",
        &[(PREFILL, 3, 100), (DECODE, 2, 64), (DECODE, 8, 128)],
    );
}

#[test]
fn grouped_query_tied_sdpa_llama_matches_its_zoo_twin() {
    // SDPA's export scales the repeated K (a Mul before the score MatMul): computed on the
    // cache's KV heads, the MatMul still grouped.
    let model = "tiny-llama3-sdpa";
    check_twin(
        model,
        &[(PREFILL, 2, 64), (DECODE, 2, 64), (DECODE, 8, 2048)],
    );
    for (file, mode) in [
        ("tiny-llama3-sdpa-prefill.onnx", Mode::Prefill),
        ("tiny-llama3-sdpa-decode.onnx", Mode::Decode),
    ] {
        let g = import_file(&data(file), &ImportOptions::new(mode, 2, 64)).unwrap();
        let z = twin(model, mode, 2, 64);
        let dims = |g: &Graph| attention(g).into_iter().map(|(d, _)| d).collect::<Vec<_>>();
        assert_eq!(dims(&g), dims(&z), "{file}");
        // Every read of the cache at its 2 KV heads: 2 × 2 layers × 2 × 16 × 64 × 2 × 2 B.
        assert_eq!(
            g.totals().kv_bytes.0,
            if mode == Mode::Decode { 32_768 } else { 0 }
        );
        for t in g.ops.iter().flat_map(|o| o.inputs()) {
            if t.role == Role::KvCache {
                assert_eq!(t.shape[..2], [2, 2], "{file}");
            }
        }
    }
}

/// An attention contraction: its dims, and each input's role, axes and (for the KV cache,
/// which keeps its stored shape) shape; activations read the extents of their dims.
type Contraction = (Vec<u64>, Vec<(Role, Vec<Vec<usize>>, Option<Vec<u64>>)>);

/// The attention contractions in graph order.
fn attention(g: &Graph) -> Vec<Contraction> {
    let input = |t: &elk_model::graph::Tensor| {
        let kv = t.role == Role::KvCache;
        (t.role, t.axes.clone(), kv.then(|| t.shape.clone()))
    };
    g.ops
        .iter()
        .filter(|o| o.kind == OpKind::BatchMatMul)
        .map(|o| (o.dims.clone(), o.inputs().iter().map(input).collect()))
        .collect()
}

#[test]
fn grouped_query_attention_caches_and_reads_only_the_kv_heads() {
    // By hand (tiny-llama-gqa.toml): 2 layers, 2 KV heads of 16 for 4 query heads, fp16.
    let (layers, kv_heads, heads, head_dim, dtype) = (2, 2, 4, 16, 2);
    let rows = heads / kv_heads; // query rows per KV head and token
    for (batch, kv) in [(2, 64), (8, 2048)] {
        let opts = ImportOptions::new(Mode::Decode, batch, kv);
        let g = import_file(&data("tiny-llama-gqa-decode.onnx"), &opts).unwrap();
        let cache = 2 * layers * kv_heads * head_dim * kv * batch * dtype;
        assert_eq!(g.totals().kv_bytes.0, cache, "B{batch} KV{kv}");
        // Every read of K or V is [batch, kv_heads, ·, ·]: none at the query heads.
        for o in &g.ops {
            for t in o.inputs().iter().filter(|t| t.role == Role::KvCache) {
                assert_eq!(t.shape[..2], [batch, kv_heads], "{}", o.name);
                assert_eq!(t.elements(), kv_heads * head_dim * kv * batch, "{}", o.name);
            }
        }
        // Scores [b, kv_heads, heads / kv_heads · q, s, d] and context [b, kv_heads, ·, d,
        // s], operand for operand as the zoo builds them.
        let a = attention(&g);
        assert_eq!(a.len(), 2 * layers as usize);
        assert_eq!(a[0].0, [batch, kv_heads, rows, kv, head_dim]);
        assert_eq!(a[1].0, [batch, kv_heads, rows, head_dim, kv]);
        let z = twin("tiny-llama-gqa", Mode::Decode, batch, kv);
        assert_eq!(a, attention(&z), "B{batch} KV{kv}");
    }
    // Prefill attends over the fresh K and V activations, in the same grouped shape.
    let (batch, seq) = (2, 64);
    let opts = ImportOptions::new(Mode::Prefill, batch, seq);
    let g = import_file(&data("tiny-llama-gqa-prefill.onnx"), &opts).unwrap();
    let a = attention(&g);
    assert_eq!(a[0].0, [batch, kv_heads, rows * seq, seq, head_dim]);
    assert_eq!(
        a,
        attention(&twin("tiny-llama-gqa", Mode::Prefill, batch, seq))
    );
}

#[test]
fn a_tied_lm_head_is_the_embedding_counted_once() {
    let opts = ImportOptions::new(Mode::Decode, 2, 64);
    let tied = import_file(&data("tiny-gpt2-tied-decode.onnx"), &opts).unwrap();
    let untied = import_file(&data("tiny-gpt2-decode.onnx"), &opts).unwrap();
    // By hand: the untied fixture's weights less one 256 × 64 fp16 table; its parameters
    // 141,056 less 16,384.
    let (t, u) = (tied.totals(), untied.totals());
    assert_eq!(t.weight_bytes.0, u.weight_bytes.0 - 256 * 64 * 2);
    assert_eq!((u.parameters, t.parameters), (141_056, 124_672));
    // The head reads the embedding table itself, stored [vocab, hidden], as the zoo's tied
    // head does: dims [rows, vocab, hidden], the table on (vocab, hidden).
    let head = tied.ops.last().unwrap();
    let w = head
        .inputs()
        .iter()
        .find(|t| t.role == Role::Weight)
        .unwrap();
    let gather = tied.ops.iter().find(|o| o.kind == OpKind::Gather).unwrap();
    let table = gather
        .inputs()
        .iter()
        .find(|t| t.role == Role::Weight)
        .unwrap();
    assert_eq!(w.source, table.source);
    assert_eq!(
        (w.shape.clone(), w.axes.clone()),
        (vec![256, 64], vec![vec![1], vec![2]])
    );
    let z = twin("tiny-gpt2-tied", Mode::Decode, 2, 64);
    let zw = z
        .ops
        .last()
        .unwrap()
        .inputs()
        .iter()
        .find(|t| t.role == Role::Weight)
        .unwrap()
        .clone();
    assert_eq!((zw.shape, zw.axes), (w.shape.clone(), w.axes.clone()));
    assert_eq!(head.dims, z.ops.last().unwrap().dims);
}
