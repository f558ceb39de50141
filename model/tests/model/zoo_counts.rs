//! The zoo against published parameter counts, KV bytes against the closed form, and the
//! zoo's Llama2-13B against the imported reference graph.

use super::fixtures::fixtures;
use elk_model::graph::{Mode, OpKind};
use elk_model::import::{import_file, ImportOptions};
use elk_model::zoo::{self, ZooParams};

#[test]
fn every_zoo_model_is_within_one_percent_of_its_published_count() {
    for m in zoo::models() {
        let mode = if m.supports_decode() {
            Mode::Decode
        } else {
            Mode::Prefill
        };
        let g = m.build(&ZooParams::new(mode, 2, 256)).unwrap();
        let other = m.build(&ZooParams::new(mode, 32, 2048)).unwrap();
        let (total, active) = m.parameter_counts().unwrap();
        if m.moe().is_none() {
            assert_eq!(
                other.totals().parameters,
                g.totals().parameters,
                "{}: parameters must not depend on batch or sequence",
                m.name
            );
            assert_eq!(total, g.totals().parameters, "{}", m.name);
            assert_eq!(active, total, "{}: a dense model's are all active", m.name);
        }
        let close = |got: u64, published: f64, what: &str| {
            let err = (got as f64 - published).abs();
            assert!(
                err <= zoo::published_tolerance(published),
                "{}: {got} {what} parameters vs published {published} ({:.2}%)",
                m.name,
                100.0 * err / published
            );
        };
        // Every embedded file states its count (a user's file may not).
        let published = m
            .published_params
            .unwrap_or_else(|| panic!("{}: no count", m.name));
        close(total, published, "total");
        if let Some(a) = m.published_active_params {
            close(m.active_as_published(active), a, "active");
        }
        assert!(m.count_mismatches().unwrap().is_empty(), "{}", m.name);
        assert_eq!(g.layers.total(), g.ops.len(), "{}", m.name);
        // A model's dense layers before its MoE ones are in the prologue.
        let dense = m.moe().map_or(0, |moe| moe.dense_layers);
        assert_eq!(g.layers.layers, m.layers() - dense, "{}", m.name);
    }
}

#[test]
fn the_tolerance_widens_only_for_rounded_figures() {
    // 1 % of an exact figure; one unit of the last digit of a figure given to 2 digits.
    assert_eq!(zoo::published_tolerance(46_702_792_704.0), 467_027_927.04);
    assert!((zoo::published_tolerance(3.3e9) - 1e8).abs() < 1.0);
    assert!((zoo::published_tolerance(6.9e9) - 1e8).abs() < 1.0);
    // "110 M" is 2 digits (1.1e8): ±10 M; a 4-digit figure gets 1 %.
    assert!((zoo::published_tolerance(110e6) - 1e7).abs() < 1.0);
    assert!((zoo::published_tolerance(1.234e9) - 1.234e7).abs() < 1.0);
}

#[test]
fn kv_bytes_follow_the_closed_form() {
    // 2 · layers · B · S · kv_heads · head_dim · 2 bytes.
    for (name, layers, kv_heads, head_dim) in [
        ("llama2-13b", 40u64, 40u64, 128u64),
        ("llama2-70b", 80, 8, 128),
        ("gemma2-27b", 46, 16, 128),
    ] {
        let g = zoo::build(name, &ZooParams::new(Mode::Decode, 32, 2048)).unwrap();
        assert_eq!(
            g.totals().kv_bytes.0,
            2 * layers * 32 * 2048 * kv_heads * head_dim * 2,
            "{name}"
        );
    }
    let g = zoo::build("llama2-13b", &ZooParams::new(Mode::Decode, 32, 2048)).unwrap();
    assert_eq!(
        g.count_in_layer(0, OpKind::Softmax),
        4,
        "softmax in four steps"
    );
    assert_eq!(g.count_in_layer(0, OpKind::BatchMatMul), 2);
    assert_eq!(
        g.count_in_layer(0, OpKind::MatMul),
        4,
        "fused qkv, o, fused gate/up, down"
    );
    let prefill = zoo::build("llama2-13b", &ZooParams::new(Mode::Prefill, 2, 128)).unwrap();
    assert_eq!(prefill.totals().kv_bytes.0, 0, "prefill reads no KV cache");
}

#[test]
fn imported_llama2_13b_agrees_with_the_zoo() {
    let opts = ImportOptions::new(Mode::Decode, 32, 2048);
    let imported = import_file(&fixtures().join("models/llama2-13.json"), &opts).unwrap();
    let generated = zoo::build("llama2-13b", &ZooParams::new(Mode::Decode, 32, 2048)).unwrap();
    let (ti, tz) = (imported.totals(), generated.totals());
    let w_err =
        (ti.weight_bytes.0 as f64 - tz.weight_bytes.0 as f64).abs() / tz.weight_bytes.0 as f64;
    assert!(
        w_err < 0.02,
        "weight bytes: imported {} vs zoo {} ({:.2}%)",
        ti.weight_bytes,
        tz.weight_bytes,
        w_err * 100.0
    );
    assert_eq!(ti.kv_bytes, tz.kv_bytes, "KV bytes");
    assert_eq!(imported.layers.layers, 40, "{:?}", imported.layers);
    assert_eq!(
        imported.count_in_layer(1, OpKind::MatMul),
        generated.count_in_layer(1, OpKind::MatMul),
        "MatMuls per layer"
    );
}

#[test]
fn producers_precede_their_consumers() {
    let zoo_graph = zoo::build("llama2-7b", &ZooParams::new(Mode::Prefill, 2, 128)).unwrap();
    let opts = ImportOptions::new(Mode::Decode, 8, 512);
    let imported = import_file(&fixtures().join("models/bert-base.json"), &opts).unwrap();
    for g in [zoo_graph, imported] {
        let mut linked = 0;
        for (i, op) in g.ops.iter().enumerate() {
            for t in op.inputs() {
                if let Some(p) = t.producer {
                    assert!(
                        p < i,
                        "{}: {} reads {} produced later",
                        g.name,
                        op.name,
                        t.source
                    );
                    assert_eq!(g.ops[p].output().source, t.source);
                    linked += 1;
                }
            }
        }
        assert!(
            linked > g.ops.len() / 2,
            "{}: only {linked} inputs linked",
            g.name
        );
    }
}
