//! `elk-opt plans` on the model the scheduling issues use by default.

use super::common::{elk_env, elk_json};

#[test]
fn llama2_13b_on_ipu_pod4_has_options_for_every_operator() {
    let j = elk_json(&[
        "plans",
        "--model",
        "llama2-13b",
        "--chip",
        "ipu-pod4",
        "--json",
    ]);
    let ops = j["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 1729);
    for op in ops {
        assert!(op["options"].as_u64().unwrap() >= 1, "{}", op["name"]);
        assert!(op["best_exec_cycles"].as_f64().unwrap() > 0.0);
        // HBM bytes = c_min · cores.
        assert_eq!(
            op["hbm_bytes"].as_u64(),
            Some(op["c_min_bytes"].as_u64().unwrap() * 5888)
        );
    }
    let qkv = ops.iter().find(|o| o["name"] == "l0.attn.qkv").unwrap();
    assert!(
        qkv["c_min_bytes"].as_u64().unwrap() * 5888 >= 5120 * 15360 * 2,
        "the whole weight is loaded"
    );
}

#[test]
fn one_operator_prints_its_option_table() {
    let j = elk_json(&[
        "plans",
        "--model",
        "bert-base",
        "--batch",
        "8",
        "--kv",
        "512",
        "--chip",
        "ipu-mk2",
        "--op",
        "l0.attn.qkv",
        "--json",
    ]);
    let ops = j["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 1);
    let table = ops[0]["option_table"].as_array().unwrap();
    assert_eq!(table.len() as u64, ops[0]["options"].as_u64().unwrap());
    assert!(!table.is_empty());
    for o in table {
        let (cold, hot) = (
            o["cold_bytes"].as_u64().unwrap(),
            o["hot_bytes"].as_u64().unwrap(),
        );
        assert!(cold <= hot, "{o}");
        assert!(hot <= 638_976, "{o}");
    }
}

#[test]
fn plan_tables_do_not_depend_on_the_thread_count() {
    let args = [
        "plans",
        "--model",
        "bert-base",
        "--batch",
        "8",
        "--kv",
        "512",
        "--chip",
        "ipu-mk2",
        "--json",
    ];
    let one = elk_env(&args, &[("RAYON_NUM_THREADS", "1")]);
    let many = elk_env(&args, &[("RAYON_NUM_THREADS", "4")]);
    assert!(one.status.success() && many.status.success());
    assert!(!one.stdout.is_empty());
    assert_eq!(one.stdout, many.stdout);
}
