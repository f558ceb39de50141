//! Hugging Face config.json files as models: the published configs of seven checkpoints give
//! their published parameter counts, the six with a zoo twin build the twin's graph, the model
//! file `models from-hf` prints reads back to the same model, and what the generator does not
//! model is refused in one line naming the key.

use super::fixtures::fixtures;
use elk_model::graph::{Graph, Mode};
use elk_model::import::{import_file, ImportOptions};
use elk_model::zoo::{self, hf, ZooModel, ZooParams};
use serde_json::{json, Value};

/// The fixture of `dir` (model/tests/fixtures/hf/DIR/config.json): its path and text.
pub(super) fn fixture(dir: &str) -> (String, String) {
    let path = format!(
        "{}/tests/fixtures/hf/{dir}/config.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

pub(super) fn read(dir: &str) -> hf::HfModel {
    let (path, text) = fixture(dir);
    hf::read(&path, &text).unwrap()
}

/// The fixture of `dir` with its keys `edits` set (`null` removes nothing: it is transformers'
/// None), read as `config.json`.
fn edited(dir: &str, edits: Value) -> Result<hf::HfModel, String> {
    let (_, text) = fixture(dir);
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for (k, x) in edits.as_object().unwrap() {
        v[k] = x.clone();
    }
    hf::read("config.json", &v.to_string()).map_err(|e| e.to_string())
}

fn within(got: u64, published: f64) -> bool {
    (got as f64 - published).abs() <= zoo::published_tolerance(published)
}

#[test]
fn dense_configs_have_their_safetensors_totals_exactly() {
    for (dir, published) in [
        ("Meta-Llama-3-8B", 8_030_261_248u64),
        ("Mistral-7B-v0.1", 7_241_732_096),
        ("Qwen2-7B", 7_615_616_512),
    ] {
        let m = read(dir);
        assert!(m.warnings.is_empty(), "{dir}: {:?}", m.warnings);
        assert_eq!(m.model.name, dir, "named after its directory");
        assert_eq!(m.model.published_params, None, "{dir}: no made-up count");
        let (total, active) = m.model.parameter_counts().unwrap();
        assert_eq!(total, published, "{dir}");
        assert_eq!(active, total, "{dir}");
    }
}

#[test]
fn moe_configs_have_their_published_total_and_active_counts() {
    let (total, active) = read("Mixtral-8x7B-v0.1").model.parameter_counts().unwrap();
    assert_eq!(total, 46_702_792_704, "the safetensors total");
    assert!(within(active, 12.9e9), "{active}");
    for (dir, published, published_active) in [
        ("Qwen3-30B-A3B", 30.5e9, 3.3e9),
        ("OLMoE-1B-7B-0924", 6.9e9, 1.3e9),
        ("Qwen1.5-MoE-A2.7B", 14.3e9, 2.7e9),
    ] {
        let m = read(dir);
        assert!(m.warnings.is_empty(), "{dir}: {:?}", m.warnings);
        let (total, active) = m.model.parameter_counts().unwrap();
        assert!(within(total, published), "{dir}: {total} in all");
        assert!(within(active, published_active), "{dir}: {active} active");
        assert_eq!(m.model.published_active_params, None, "{dir}");
    }
}

#[test]
fn qwen2_moe_has_a_gated_shared_expert_and_qkv_biases() {
    // Qwen1.5-MoE-A2.7B per layer: 60 experts of 3·2048·1408, a shared expert of 3·2048·5632
    // and its 2048-wide sigmoid gate, the router, q/k/v biases; all but 56 experts active.
    let m = read("Qwen1.5-MoE-A2.7B").model;
    let moe = m.moe().unwrap();
    assert_eq!((moe.experts, moe.top_k, moe.expert_dim), (60, 4, 1408));
    assert_eq!((moe.shared_dim, moe.shared_gate), (5632, true));
    let (total, active) = m.parameter_counts().unwrap();
    assert_eq!(total - active, 24 * 56 * 3 * 2048 * 1408);
    let text = read("Qwen1.5-MoE-A2.7B").model_file;
    let ungated = text.replace("shared_gate = true", "shared_gate = false");
    assert_ne!(ungated, text);
    let ungated = ZooModel::from_toml_str("m.toml", &ungated).unwrap();
    let (plain, _) = ungated.parameter_counts().unwrap();
    assert_eq!(total - plain, 24 * 2048, "one gate vector per layer");
}

/// The zoo's file of each twin and the published config.json build the same graphs.
#[test]
fn each_zoo_twin_builds_the_same_graph_from_its_config() {
    for (dir, name) in [
        ("Meta-Llama-3-8B", "llama3-8b"),
        ("Mistral-7B-v0.1", "mistral-7b"),
        ("Qwen2-7B", "qwen2-7b"),
        ("Mixtral-8x7B-v0.1", "mixtral-8x7b"),
        ("Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("OLMoE-1B-7B-0924", "olmoe-1b-7b"),
    ] {
        let from_json = read(dir).model;
        let twin = zoo::find(name).unwrap();
        // KV 8,192 is past Mistral's 4,096-token window: a lost window would change it.
        for (mode, batch, seq) in [(Mode::Decode, 4, 8192), (Mode::Prefill, 2, 64)] {
            let p = ZooParams::new(mode, batch, seq);
            let (a, b): (Graph, Graph) = (from_json.build(&p).unwrap(), twin.build(&p).unwrap());
            assert_eq!(a.ops.len(), b.ops.len(), "{dir}");
            assert!(a.ops == b.ops, "{dir}: the operators differ");
            assert_eq!(a.totals(), b.totals(), "{dir}");
            assert_eq!(a.layers, b.layers, "{dir}");
        }
        assert_eq!(
            from_json.parameter_counts().unwrap(),
            twin.parameter_counts().unwrap(),
            "{dir}"
        );
    }
}

#[test]
fn the_printed_model_file_reads_back_to_the_same_model() {
    for dir in [
        "Meta-Llama-3-8B",
        "Mistral-7B-v0.1",
        "Qwen2-7B",
        "Mixtral-8x7B-v0.1",
        "Qwen3-30B-A3B",
        "OLMoE-1B-7B-0924",
        "Qwen1.5-MoE-A2.7B",
    ] {
        let m = read(dir);
        let back = ZooModel::from_toml_str("kept.toml", &m.model_file).unwrap();
        assert_eq!(back.name, m.model.name);
        assert_eq!(back.source, m.model.source);
        assert_eq!(back.published_params, None);
        let p = ZooParams::new(Mode::Decode, 2, 8192);
        assert!(
            back.build(&p).unwrap().ops == m.model.build(&p).unwrap().ops,
            "{dir}"
        );
        // Every value names the config.json key it comes from.
        assert!(m.model_file.contains("hidden = "), "{dir}");
        assert!(m.model_file.contains("# num_hidden_layers\n"), "{dir}");
    }
}

#[test]
fn refused_keys_are_one_line_naming_the_key() {
    for (dir, edits, want) in [
        (
            "Meta-Llama-3-8B",
            json!({"attention_bias": true}),
            "config.json: key 'attention_bias': true: biases on q, k, v and o are not modelled \
             (elk-opt models none, qkv or all)",
        ),
        (
            "Meta-Llama-3-8B",
            json!({"mlp_bias": true}),
            "config.json: key 'mlp_bias': true: biases on the FFN without biases on q, k, v and \
             o are not modelled (elk-opt models none, qkv or all)",
        ),
        (
            "Qwen3-30B-A3B",
            json!({"attention_bias": true}),
            "config.json: key 'attention_bias': true: biases on q, k, v and o are not modelled \
             (elk-opt models none, qkv or all)",
        ),
        (
            "Qwen3-30B-A3B",
            json!({"decoder_sparse_step": 2}),
            "config.json: key 'decoder_sparse_step': 2: layers with a dense FFN among the MoE \
             ones are not modelled (elk-opt puts the experts in every layer)",
        ),
        (
            "Qwen1.5-MoE-A2.7B",
            json!({"mlp_only_layers": [0, 5]}),
            "config.json: key 'mlp_only_layers': [0,5]: layers with a dense FFN among the MoE \
             ones are not modelled (elk-opt puts the experts in every layer)",
        ),
        (
            "OLMoE-1B-7B-0924",
            json!({"clip_qkv": 8.0}),
            "config.json: key 'clip_qkv': 8.0: clamping q, k and v is not modelled (the \
             generator emits no clamp)",
        ),
        (
            "Mistral-7B-v0.1",
            json!({"hidden_act": "tanh"}),
            "config.json: key 'hidden_act': \"tanh\": elk-opt models silu, relu and the gelu \
             family (gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, gelu_python, gelu_accurate)",
        ),
        (
            "Mixtral-8x7B-v0.1",
            json!({"num_local_experts": null}),
            "config.json: missing key 'num_local_experts'",
        ),
        (
            "Qwen2-7B",
            json!({"num_attention_heads": 27}),
            "config.json: key 'num_attention_heads': 27 heads do not divide hidden 3584",
        ),
        (
            "Mixtral-8x7B-v0.1",
            json!({"num_experts_per_tok": 9}),
            "config.json: key 'num_experts_per_tok': 9 is more than the 8 experts",
        ),
        (
            "Mistral-7B-v0.1",
            json!({"num_key_value_heads": null}),
            "config.json: missing key 'num_key_value_heads' (mistral's default is a fixed \
             count, not a rule)",
        ),
    ] {
        let e = edited(dir, edits.clone()).unwrap_err();
        assert_eq!(e, want, "{dir} {edits}");
    }
}

#[test]
fn an_unsupported_model_type_lists_the_supported_ones() {
    let e = edited("Meta-Llama-3-8B", json!({"model_type": "gemma2"})).unwrap_err();
    assert_eq!(
        e,
        "config.json: key 'model_type': \"gemma2\" is not supported; supported: llama, \
         mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, olmoe, deepseek_v2, \
         deepseek_v3, kimi_k2"
    );
}

#[test]
fn llama_with_every_bias_is_bias_all() {
    // attention_bias and mlp_bias together are the model file's "all": per layer q, k, v
    // (4,096 + 2 · 1,024), o (4,096), gate and up (2 · 14,336) and down (4,096).
    let both = edited(
        "Meta-Llama-3-8B",
        json!({"attention_bias": true, "mlp_bias": true}),
    )
    .unwrap();
    let (with, _) = both.model.parameter_counts().unwrap();
    assert_eq!(with - 8_030_261_248, 32 * (6144 + 4096 + 2 * 14336 + 4096));
}

#[test]
fn unknown_keys_are_one_warning_and_ignored_keys_none() {
    let m = edited(
        "Qwen2-7B",
        json!({"rope_scaling": {"type": "yarn", "factor": 4.0}, "quantization_config": {},
               "partial_rotary_factor": 0.5}),
    )
    .unwrap();
    assert_eq!(
        m.warnings,
        [
            "config.json: ignoring keys elk-opt does not know for model_type \"qwen2\": \
          partial_rotary_factor, quantization_config (docs/model-files.md lists the keys it \
          reads and ignores)"
        ]
    );
    // A key another family reads is unknown to this one.
    let m = edited("Mistral-7B-v0.1", json!({"mlp_bias": false})).unwrap();
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    assert!(m.warnings[0].contains("\"mistral\": mlp_bias ("));
}

/// Decode KV bytes of a Qwen2-7B with the given keys: the sliding window bounds the cache of the
/// layers transformers gives it.
fn qwen2_kv_bytes(edits: Value) -> (u64, String) {
    let m = edited("Qwen2-7B", edits).unwrap();
    let g = m
        .model
        .build(&ZooParams::new(Mode::Decode, 1, 8192))
        .unwrap();
    (g.totals().kv_bytes.0, m.model_file)
}

#[test]
fn qwen_sliding_windows_follow_use_sliding_window_and_the_layers_it_names() {
    // 2 (K, V) · 4 KV heads · 128 · 2 bytes per token and layer; 28 layers.
    let per = 2 * 4 * 128 * 2u64;
    let (off, _) = qwen2_kv_bytes(json!({"sliding_window": 4096}));
    assert_eq!(off, 28 * 8192 * per, "use_sliding_window false: no window");
    let (from14, text) = qwen2_kv_bytes(
        json!({"use_sliding_window": true, "sliding_window": 4096, "max_window_layers": 14}),
    );
    assert_eq!(from14, (14 * 8192 + 14 * 4096) * per);
    assert!(
        text.contains("# layers from max_window_layers = 14 on"),
        "{text}"
    );
    let types: Vec<&str> = (0..28)
        .map(|i| ["sliding_attention", "full_attention"][i % 2])
        .collect();
    let (alternate, text) = qwen2_kv_bytes(
        json!({"use_sliding_window": true, "sliding_window": 4096, "layer_types": types}),
    );
    assert_eq!(alternate, (14 * 8192 + 14 * 4096) * per);
    assert!(
        text.contains("pattern = [\"local\", \"global\"]  # layer_types"),
        "{text}"
    );
    let e = edited(
        "Qwen2-7B",
        json!({"use_sliding_window": true, "layer_types": ["full_attention"]}),
    )
    .unwrap_err();
    assert_eq!(
        e,
        "config.json: key 'layer_types': 1 entries for 28 layers (num_hidden_layers)"
    );
}

#[test]
fn the_model_is_named_by_name_or_path_first() {
    let m = edited(
        "Meta-Llama-3-8B",
        json!({"_name_or_path": "meta-llama/Meta-Llama-3-8B-Instruct"}),
    )
    .unwrap();
    assert_eq!(m.model.name, "Meta-Llama-3-8B-Instruct");
    assert!(m.warnings.is_empty());
}

#[test]
fn load_reads_a_config_json_by_path() {
    let (path, _) = fixture("Mistral-7B-v0.1");
    let m = ZooModel::load(&path).unwrap();
    assert_eq!(m.name, "Mistral-7B-v0.1");
    let g = zoo::build(&path, &ZooParams::new(Mode::Decode, 1, 128)).unwrap();
    assert_eq!(g.name, "Mistral-7B-v0.1 decode b1 kv128");
}

#[test]
fn a_graph_and_a_config_each_name_the_flag_that_reads_them() {
    let graph = fixtures().join("models/bert-base.json");
    let e = ZooModel::load(graph.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bert-base.json: a JSON list: this looks like a graph in the reference format, which --import FILE reads"),
        "{e}"
    );
    let (path, _) = fixture("Qwen2-7B");
    let opts = ImportOptions::new(Mode::Decode, 1, 128);
    let e = import_file(std::path::Path::new(&path), &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("config.json: an object with 'model_type': this looks like a Hugging Face config.json, which --model FILE reads (models show FILE, compare --model FILE, …); import reads a graph, a JSON list of entries"),
        "{e}"
    );
}
