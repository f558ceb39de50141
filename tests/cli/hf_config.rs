//! `--model config.json`: a Hugging Face config is a model on every command, `models show`
//! prints its parameters without a published figure, `models from-hf` prints the model file it
//! maps to, and a config given where a graph is expected (or a graph where a model is) names
//! the flag that reads it.

use super::common::{elk, elk_json, elk_ok, fixtures, scratch, small_instance_args};

/// model/tests/fixtures/hf/DIR/config.json.
fn fixture(dir: &str) -> String {
    format!(
        "{}/model/tests/fixtures/hf/{dir}/config.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Runs `args`, which must fail with exit 2 and one line on stderr; returns that line.
fn refused(args: &[&str]) -> String {
    let out = elk(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err.trim_end().to_string()
}

#[test]
fn models_show_prints_the_parameters_of_a_config_json() {
    let mixtral = fixture("Mixtral-8x7B-v0.1");
    let out = elk_ok(&[
        "models",
        "show",
        &mixtral,
        "--num-layers",
        "1",
        "--batch",
        "1",
    ]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("Mixtral-8x7B-v0.1 decode b1 kv2048"),
        "{text}"
    );
    let line = text.lines().find(|l| l.starts_with("model parameters:"));
    assert_eq!(
        line,
        Some(
            "model parameters:  46.703 G parameters in all, 12.880 G active per token (no \
             published count: the file states none)"
        ),
        "{text}"
    );
    let j = elk_json(&["models", "show", &mixtral, "--num-layers", "1", "--json"]);
    assert_eq!(j["model_params"]["total_params"], 46_702_792_704u64);
    assert!(j["model_params"]["published_params"].is_null(), "{j}");
    // A zoo model says what it was published with.
    let zoo = elk_json(&[
        "models",
        "show",
        "mixtral-8x7b",
        "--num-layers",
        "1",
        "--json",
    ]);
    assert_eq!(zoo["model_params"]["total_params"], 46_702_792_704u64);
    assert_eq!(zoo["model_params"]["published_params"], 46_702_792_704.0);
}

#[test]
fn a_config_json_gives_the_same_instance_as_its_zoo_twin() {
    let dir = scratch("hf-config");
    let (a, b) = (dir.join("zoo.json"), dir.join("hf.json"));
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    elk_ok(&small_instance_args("llama3-8b", "0..6", a_s));
    elk_ok(&small_instance_args(
        &fixture("Meta-Llama-3-8B"),
        "0..6",
        b_s,
    ));
    let ops = |p: &std::path::Path| {
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        j["ops"].clone()
    };
    assert!(ops(&a).as_array().is_some_and(|o| o.len() == 6));
    assert_eq!(ops(&a), ops(&b));
}

#[test]
fn from_hf_prints_a_model_file_that_builds_the_same_model() {
    let dir = scratch("hf-from");
    let config = dir.join("config.json");
    let text = std::fs::read_to_string(fixture("Qwen3-30B-A3B")).unwrap();
    // A key elk-opt does not know: kept out of the model, named on stderr.
    std::fs::write(&config, text.replacen('{', "{\"foo_bar\": 1,", 1)).unwrap();
    let out = elk_ok(&["models", "from-hf", config.to_str().unwrap()]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        format!(
            "warning: {}: ignoring keys elk-opt does not know for model_type \"qwen3_moe\": \
             foo_bar (docs/model-files.md lists the keys it reads and ignores)\n",
            config.display()
        )
    );
    let file = dir.join("kept.toml");
    std::fs::write(&file, &out.stdout).unwrap();
    let show = |m: &str| elk_json(&["models", "show", m, "--num-layers", "2", "--json"]);
    let (kept, zoo) = (show(file.to_str().unwrap()), show("qwen3-30b-a3b"));
    assert_eq!(kept["ops"], zoo["ops"]);
    assert_eq!(
        kept["model_params"]["total_params"],
        zoo["model_params"]["total_params"]
    );
    // The directory names the model.
    assert!(kept["name"].as_str().unwrap().starts_with(&format!(
        "{} decode",
        dir.file_name().unwrap().to_string_lossy()
    )));
}

#[test]
fn a_refused_key_is_one_line_and_exit_2() {
    let dir = scratch("hf-refused");
    let config = dir.join("config.json");
    let text = std::fs::read_to_string(fixture("Meta-Llama-3-8B")).unwrap();
    let text = text.replace("\"attention_bias\": false", "\"attention_bias\": true");
    std::fs::write(&config, text).unwrap();
    let path = config.to_str().unwrap();
    let want = format!(
        "error: {path}: key 'attention_bias': true: biases on q, k, v and o are not modelled \
         (elk-opt models none, qkv or all)"
    );
    assert_eq!(refused(&["models", "show", path]), want);
    assert_eq!(
        refused(&["compare", "--model", path, "--chip", "ipu-pod4"]),
        want
    );
    assert_eq!(refused(&["models", "from-hf", path]), want);
}

#[test]
fn a_config_and_a_graph_each_name_the_flag_that_reads_them() {
    let config = fixture("Qwen2-7B");
    let e = refused(&["import", &config]);
    assert!(
        e.contains("this looks like a Hugging Face config.json, which --model FILE reads"),
        "{e}"
    );
    let graph = fixtures().join("models/bert-base.json");
    let e = refused(&["models", "show", graph.to_str().unwrap()]);
    assert!(
        e.contains("this looks like a graph in the reference format, which --import FILE reads"),
        "{e}"
    );
}
