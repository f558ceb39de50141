//! `--dtype` through the CLI: weights at 1 byte halve a decode instance's weight traffic, and
//! a dtype the chip's cost model does not price, or a form the parser does not know, is one
//! line and exit 2 with no file written.

use super::common::{assert_refused, elk_json, elk_ok, ops_sum, scratch};

fn hbm_cycles(path: &std::path::Path) -> f64 {
    ops_sum(path, "hbm_cycles")
}

#[test]
fn weights_at_one_byte_halve_the_weight_traffic_and_unpriced_dtypes_are_refused() {
    let dir = scratch("dtypes");
    let p = |x: &std::path::Path| x.to_str().unwrap().to_string();
    let build = |dtype: &str| {
        let out = dir.join(format!("{dtype}.json"));
        elk_ok(&[
            "instance",
            "--model",
            "llama2-7b",
            "--num-layers",
            "1",
            "--batch",
            "1",
            "--kv",
            "16",
            "--chip",
            "sn40l-like",
            "--dtype",
            dtype,
            "-o",
            &p(&out),
        ]);
        out
    };
    // Batch 1, KV 16: the traffic is almost all weights, so w8a16 is about half of fp16.
    let (fp16, w8) = (hbm_cycles(&build("fp16")), hbm_cycles(&build("w8a16")));
    let ratio = w8 / fp16;
    assert!(
        (0.49..0.52).contains(&ratio),
        "w8a16 / fp16 HBM cycles = {ratio}"
    );
    for (args, says) in [
        (vec!["--dtype", "int8"], "dtype int8 not modelled"),
        (vec!["--dtype", "w4a16"], "--dtype 'w4a16'"),
    ] {
        assert_instance_refused(&dir, &args, says);
    }
}

/// `instance` of one Llama2-7B layer with `args` is refused: exit 2, `says` on the first
/// line, no file written.
fn assert_instance_refused(dir: &std::path::Path, args: &[&str], says: &str) {
    let out = dir.join("refused.json");
    let o = out.to_str().unwrap();
    let mut all = vec![
        "instance",
        "--model",
        "llama2-7b",
        "--num-layers",
        "1",
        "-o",
        o,
    ];
    all.extend(args.iter().copied());
    assert_refused(&all, says, &out);
}

/// Block floats through the CLI: `models show --dtype w=bfp8,kv=bf16,a=bf16` gives 17/16 byte
/// per parameter and records the dtype as it prints it; bfp activations, bfp on the IPU
/// model and bfp optimizer state are each one line and exit 2.
#[test]
fn block_float_weights_take_seventeen_sixteenths_and_their_refusals_are_one_line() {
    let show = |dtype: &str| elk_json(&["models", "show", "llama3-8b", "--dtype", dtype, "--json"]);
    let bf16 = show("bf16");
    let params = bf16["totals"]["parameters"].as_u64().unwrap();
    assert_eq!(params, 8_030_261_248);
    assert_eq!(bf16["totals"]["weight_bytes"].as_u64(), Some(params * 2));
    for (dtype, sixteenths) in [("w=bfp8,kv=bf16,a=bf16", 17), ("w=bfp4,kv=bf16,a=bf16", 9)] {
        let r = show(dtype);
        assert_eq!(r["totals"]["parameters"].as_u64(), Some(params));
        assert_eq!(
            r["totals"]["weight_bytes"].as_u64(),
            Some(params / 16 * sixteenths),
            "{dtype}"
        );
        assert_eq!(
            r["totals"]["kv_bytes"], bf16["totals"]["kv_bytes"],
            "{dtype}"
        );
    }
    let table = elk_ok(&[
        "models",
        "show",
        "llama3-8b",
        "--dtype",
        "w=bfp8,kv=bf16,a=bf16",
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("weight bytes:      8.532 GB"), "{text}");

    let dir = scratch("dtypes-bfp");
    for (args, says) in [
        (
            vec!["--dtype", "bfp8"],
            "--dtype 'bfp8': activations in bfp8 are not modelled (block floating point is for \
             weights and the KV cache, e.g. w=bfp8,kv=bf16,a=bf16)",
        ),
        (
            vec!["--dtype", "w=bf16,kv=bf16,a=bfp4"],
            "activations in bfp4 are not modelled",
        ),
        (
            vec!["--dtype", "w=bfp8,kv=bf16,a=bf16", "--chip", "ipu-pod4"],
            "ipu-mk2 cost model on ipu-pod4: dtype bfp8 not modelled (fp16, fp32)",
        ),
        (
            vec!["--mode", "training", "--optimizer-dtype", "bfp8"],
            "--optimizer-dtype 'bfp8': expected",
        ),
    ] {
        assert_instance_refused(&dir, &args, says);
    }
}
