//! The ONNX fixtures (tests/data/onnx/, exported by scripts/onnx-fixtures/export.py) against
//! their zoo twins (the TOML file of the same model): the same operator kinds in every
//! layer, the same attention, softmax and reduction operators, the same matrix-multiply
//! FLOPs per layer, and the same weight and KV bytes (±0.1 %).
//!
//! Slices are left out of the kinds: the zoo fuses Q/K/V (and gate/up) into one projection
//! and slices it, while Hugging Face's Llama and ViT project separately (GPT-2 fuses, and its
//! Split gives the same slices). The per-layer FLOPs of the MatMuls hold either way.

use elk_model::graph::{Graph, Mode, OpKind};
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
