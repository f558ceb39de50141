//! The zoo's model files: the models added as files match their published totals exactly,
//! their hyper-parameters show where they differ from Llama 2 (KV heads, sliding window, QKV
//! biases), and a user's file builds like an embedded one.

use elk_model::graph::Mode;
use elk_model::zoo::{self, ZooModel, ZooParams, FILES};

fn parameters(name: &str) -> u64 {
    let g = zoo::build(name, &ZooParams::new(Mode::Decode, 1, 128)).unwrap();
    g.totals().parameters
}

#[test]
fn added_models_have_their_published_parameter_counts() {
    // The safetensors totals of the Hugging Face checkpoints each file cites: exact, not
    // only within the 1% every zoo model is held to.
    for (name, published) in [
        ("llama3-8b", 8_030_261_248u64),
        ("mistral-7b", 7_241_732_096),
        ("qwen2-7b", 7_615_616_512),
        ("phi3-mini", 3_821_079_552),
    ] {
        assert_eq!(parameters(name), published, "{name}");
        let m = zoo::find(name).unwrap();
        assert_eq!(
            m.published_params,
            Some(published as f64),
            "{name}: the file's figure"
        );
        assert!(m.source.contains("HF "), "{name}: {}", m.source);
    }
}

#[test]
fn every_file_is_named_after_its_model() {
    assert_eq!(FILES.len(), zoo::models().len());
    for ((file, _), m) in FILES.iter().zip(zoo::models()) {
        assert_eq!(*file, format!("{}.toml", m.name));
        assert!(!m.source.is_empty(), "{file}");
    }
}

#[test]
fn a_sliding_window_bounds_the_kv_cache_in_decode() {
    // Mistral attends to the last 4,096 tokens in every layer; Llama 3 (same shape, global)
    // reads the whole cache: 2 (K, V) · 32 layers · 8 KV heads · 128 · 2 bytes per token.
    let kv = |name: &str, s: u64| {
        let g = zoo::build(name, &ZooParams::new(Mode::Decode, 1, s)).unwrap();
        g.totals().kv_bytes.0
    };
    let per_token = 2 * 32 * 8 * 128 * 2;
    assert_eq!(kv("mistral-7b", 2048), 2048 * per_token);
    assert_eq!(kv("mistral-7b", 16384), 4096 * per_token);
    assert_eq!(kv("llama3-8b", 16384), 16384 * per_token);
}

#[test]
fn qwen2_has_biases_on_the_qkv_projection_only() {
    // Per layer: q (3,584) + k and v (512 each) bias entries; none on o or the FFN.
    let qwen = FILES.iter().find(|(f, _)| *f == "qwen2-7b.toml").unwrap().1;
    let with = ZooModel::from_toml_str("q", qwen).unwrap();
    assert_eq!(with.name, "qwen2-7b");
    let without = qwen.replace("bias = \"qkv\"", "bias = \"none\"");
    let without = ZooModel::from_toml_str("q", &without).unwrap();
    let p = |m: &ZooModel| {
        let g = m.build(&ZooParams::new(Mode::Decode, 1, 128)).unwrap();
        g.totals().parameters
    };
    assert_eq!(p(&with) - p(&without), 28 * (3584 + 2 * 512));
}

#[test]
fn a_user_file_builds_the_same_graph_as_the_embedded_one() {
    let dir = std::env::temp_dir().join(format!("elk-zoo-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.toml");
    let text = FILES[0]
        .1
        .replace("name = \"llama2-7b\"", "name = \"mine\"");
    std::fs::write(&path, text).unwrap();
    let params = ZooParams::new(Mode::Prefill, 2, 64);
    let mine = zoo::build(path.to_str().unwrap(), &params).unwrap();
    let zoo_graph = zoo::build("llama2-7b", &params).unwrap();
    assert_eq!(mine.ops, zoo_graph.ops);
    assert_eq!(mine.name, "mine prefill b2 s64");
    let missing = zoo::build(dir.join("none.toml").to_str().unwrap(), &params);
    assert!(missing
        .unwrap_err()
        .to_string()
        .contains("none.toml: cannot read"));
    std::fs::remove_dir_all(&dir).unwrap();
}
