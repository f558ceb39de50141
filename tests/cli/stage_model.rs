//! `instance` and `simulate`.

use super::common::{elk, elk_json, elk_ok, fixtures, results, scratch};

fn tmp(name: &str) -> std::path::PathBuf {
    scratch("stage").join(name)
}

#[test]
fn instance_of_one_layer() {
    let out = tmp("layer0.json");
    elk_ok(&[
        "instance",
        "--model",
        "llama2-7b",
        "--num-layers",
        "2",
        "--chip",
        "ipu-pod4",
        "--layers",
        "0..1",
        "--window",
        "43",
        "-o",
        out.to_str().unwrap(),
    ]);
    let inst: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(inst["format"], "elk-instance/1");
    assert_eq!(inst["ops"].as_array().unwrap().len(), 43, "one Llama layer");
    assert_eq!(inst["preload_window"], 43);
    // The name says so: an instance with a window is not mistaken for one without.
    assert_eq!(
        inst["name"],
        "llama2-7b decode b32 kv2048 on ipu-pod4, window 43, layers 0..1"
    );
    assert_eq!(inst["load_order"], "free", "the default of every command");
    assert_eq!(inst["chip"]["name"], "ipu-pod4");
    // H of the fused QKV projection: 4096 × 12288 fp16 weights at 16 TB/s, 1.325 GHz.
    let qkv = inst["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "l0.attn.qkv")
        .unwrap();
    let h = qkv["hbm_cycles"].as_f64().unwrap();
    let weight_cycles = 4096.0 * 12288.0 * 2.0 / 16e12 * 1.325e9;
    assert!(
        h >= weight_cycles && h < weight_cycles * 1.05,
        "{h} vs {weight_cycles}"
    );
}

#[test]
fn simulate_reference_schedules() {
    let dir = fixtures().join("reference/bert-base");
    let inst = dir.join("instance.json");
    let trace = tmp("trace.json");
    let j = elk_json(&[
        "simulate",
        "--instance",
        inst.to_str().unwrap(),
        "--schedule",
        dir.join("schedule-basic.json").to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(j["valid"], true);
    assert!((j["makespan_cycles"].as_f64().unwrap() - 1_315_372.809_696_5).abs() < 1e-3);
    assert!(
        j["method_claim_cycles"].as_f64().is_some(),
        "the artifact's own claim differs"
    );
    let events: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(events.as_array().unwrap().len() > 548);
    let bad = elk(&[
        "simulate",
        "--instance",
        inst.to_str().unwrap(),
        "--schedule",
        dir.join("schedule-elk-full.json").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "invalid under a fixed load order"
    );
    let j: serde_json::Value = results(&bad.stdout);
    assert_eq!(j["valid"], false);
    assert!(j["violations"][0]
        .as_str()
        .unwrap()
        .starts_with("load order: "));
}
