//! `models`, `import` and `chips` on real inputs.

use super::common::{elk, elk_json, shared};

#[test]
fn default_job_compares_every_method_on_llama2_13b() {
    let out = elk(&[]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("llama2-13b decode b32 kv2048 on ipu-pod4"),
        "{text}"
    );
    for method in ["basic", "static", "elk-dyn", "elk-full", "ideal"] {
        assert!(
            text.lines().any(|l| l.starts_with(method)),
            "{method} missing:\n{text}"
        );
    }
}

#[test]
fn llama2_13b_has_13_billion_parameters() {
    let j = elk_json(&[
        "models",
        "show",
        "llama2-13b",
        "--mode",
        "decode",
        "--batch",
        "32",
        "--kv",
        "2048",
        "--json",
    ]);
    let p = j["totals"]["parameters"].as_f64().unwrap();
    assert!((p - 13.0e9).abs() / 13.0e9 < 0.01, "{p}");
    assert_eq!(
        j["ops"].as_array().unwrap().len(),
        j["operators"].as_u64().unwrap() as usize
    );
}

#[test]
fn import_and_zoo_agree_on_llama2_13b() {
    let file = shared().join("models/llama2-13.json");
    let imported = elk_json(&[
        "import",
        file.to_str().unwrap(),
        "--batch",
        "32",
        "--kv",
        "2048",
        "--json",
    ]);
    let zoo = elk_json(&[
        "models",
        "show",
        "llama2-13b",
        "--batch",
        "32",
        "--kv",
        "2048",
        "--json",
    ]);
    let w = |j: &serde_json::Value| j["totals"]["weight_bytes"].as_f64().unwrap();
    assert!((w(&imported) - w(&zoo)).abs() / w(&zoo) < 0.02);
    assert_eq!(imported["totals"]["kv_bytes"], zoo["totals"]["kv_bytes"]);
    assert_eq!(imported["layer_kind_counts"]["matmul"], 4);
    assert_eq!(
        imported["layer_kind_counts"]["matmul"],
        zoo["layer_kind_counts"]["matmul"]
    );
    assert_eq!(
        imported["layer_kind_counts"]["batch_matmul"],
        zoo["layer_kind_counts"]["batch_matmul"]
    );
}

#[test]
fn chips_list_and_show() {
    let list = elk_json(&["chips", "list", "--json"]);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["ipu-mk2", "ipu-pod4", "tt-blackhole-like", "sn40l-like"]
    );
    let pod = elk_json(&["chips", "show", "ipu-pod4", "--json"]);
    assert_eq!(pod["cores"], 5888);
    assert_eq!(pod["cost_model"]["kind"], "ipu-mk2");
}

#[test]
fn json_output_is_deterministic() {
    let a = elk(&["models", "show", "opt-1.3b", "--json"]);
    let b = elk(&["models", "show", "opt-1.3b", "--json"]);
    assert_eq!(a.stdout, b.stdout);
}
