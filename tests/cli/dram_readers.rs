//! DRAM-reader cores (docs/chips.md, "DRAM-reader cores"): `--dram-readers K` builds on the
//! chip with K cores that only read DRAM, and `compare --dram-readers auto` keeps each
//! method's fastest schedule over every count, under the lowest of their bounds.

use super::common::{assert_refused, elk_json, elk_ok, envelope, scratch};

/// Two Llama 3.2 1B layers on the Wormhole n150, decode B32 KV128, in the vendor's dtypes.
const ON_N150: [&str; 12] = [
    "--model",
    "llama3.2-1b",
    "--num-layers",
    "2",
    "--kv",
    "128",
    "--dtype",
    "w=bfp8,ffn=bfp4,kv=bfp8,a=bf16",
    "--chip",
    "wormhole-n150",
    "--no-timings",
    "--json",
];

fn compare(readers: &str) -> serde_json::Value {
    let mut args = vec!["compare", "--dram-readers", readers];
    args.extend(ON_N150);
    elk_json(&args)
}

fn makespan(report: &serde_json::Value, method: &str) -> f64 {
    report["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == method)
        .and_then(|r| r["makespan_ms"].as_f64())
        .unwrap_or(f64::INFINITY)
}

#[test]
fn auto_keeps_each_method_s_fastest_count_under_the_lowest_bound() {
    let auto = compare("auto");
    let counts = auto["dram_reader_counts"].as_array().unwrap();
    let readers: Vec<u64> = counts
        .iter()
        .map(|c| c["readers"].as_u64().unwrap())
        .collect();
    // 8x8 grid, 12 banks: none, one column, two (a reader per bank).
    assert_eq!(readers, [0, 8, 16]);
    let cores: Vec<u64> = counts
        .iter()
        .map(|c| c["compute_cores"].as_u64().unwrap())
        .collect();
    assert_eq!(cores, [64, 56, 48]);
    let rates: Vec<f64> = counts
        .iter()
        .map(|c| c["dram_gb_per_s"].as_f64().unwrap())
        .collect();
    assert_eq!(rates, [190.0, 176.0, 264.0]);
    let each: Vec<serde_json::Value> = readers.iter().map(|k| compare(&k.to_string())).collect();
    for row in auto["methods"].as_array().unwrap() {
        let method = row["method"].as_str().unwrap();
        let fastest = each
            .iter()
            .map(|r| makespan(r, method))
            .fold(f64::INFINITY, f64::min);
        assert_eq!(makespan(&auto, method), fastest, "{method}");
        if method != "ideal" {
            let k = row["dram_readers"].as_u64().unwrap();
            let at = readers.iter().position(|&r| r == k).unwrap();
            assert_eq!(
                makespan(&each[at], method),
                fastest,
                "{method} from count {k}"
            );
        }
    }
    let lowest = each
        .iter()
        .map(|r| r["bound_ms"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(auto["bound_ms"].as_f64().unwrap(), lowest);
    // The counts really differ: the choice is not a relabelling of one chip.
    let bounds: Vec<f64> = each
        .iter()
        .map(|r| r["bound_ms"].as_f64().unwrap())
        .collect();
    assert!(bounds[0] != bounds[2], "{bounds:?}");
    let name = each[2]["instance"].as_str().unwrap();
    assert!(name.contains("(16 DRAM readers)"), "{name}");
}

#[test]
fn an_hbm_override_scales_the_interleaved_and_the_readers_rates_too() {
    // --hbm-tbps 0.534 doubles the n150's saturated 267 GB/s. Were only the peak replaced,
    // the interleaved 190 GB/s and the readers' 264 GB/s would still cap every read and the
    // flag would change nothing.
    let mut args = vec!["compare", "--dram-readers", "auto", "--hbm-tbps", "0.534"];
    args.extend(ON_N150);
    let doubled = elk_json(&args);
    let rates: Vec<f64> = doubled["dram_reader_counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["dram_gb_per_s"].as_f64().unwrap())
        .collect();
    let expected = [380.0, 352.0, 528.0];
    assert!(
        rates
            .iter()
            .zip(expected)
            .all(|(r, e)| (r - e).abs() < 1e-6 * e),
        "{rates:?}"
    );
    let plain = compare("auto");
    assert!(
        makespan(&doubled, "elk-full") < makespan(&plain, "elk-full"),
        "{} against {}",
        makespan(&doubled, "elk-full"),
        makespan(&plain, "elk-full")
    );
}

#[test]
fn bad_counts_are_refused_in_one_line() {
    let out = scratch("dram-readers").join("never.json");
    let o = out.to_str().unwrap();
    let n150 = [
        "--chip",
        "wormhole-n150",
        "--model",
        "llama3.2-1b",
        "--num-layers",
        "1",
    ];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = extra.to_vec();
        v.extend(n150);
        v.extend(["--emit-instance", o]);
        v
    };
    assert_refused(
        &with(&["compare", "--dram-readers", "12"]),
        "readers take whole columns of the 8x8 grid, so a multiple of 8 (worth trying: 0, 8, 16)",
        &out,
    );
    assert_refused(
        &with(&["compare", "--dram-readers", "64"]),
        "leave none of the 64 cores to compute",
        &out,
    );
    assert_refused(
        &with(&["solve", "--method", "basic", "--dram-readers", "auto"]),
        "--dram-readers auto: only `compare` tries every count; give one (wormhole-n150 here: \
         0, 8, 16)",
        &out,
    );
    assert_refused(
        &with(&["compare", "--dram-readers", "-8"]),
        "must be positive",
        &out,
    );
    assert_refused(
        &["compare", "--dram-readers", "4", "--emit-instance", o],
        "chip 'ipu-pod4' gives no hbm.reader_bytes_per_cycle",
        &out,
    );
    assert_refused(
        &with(&["gap", "--dram-readers", "auto"]),
        "--dram-readers auto: only `compare` tries every count; give one (wormhole-n150 here: \
         0, 8, 16)",
        &out,
    );
    assert_refused(
        &with(&["compare", "--dram-readers", "auto", "--layer-exact", "1"]),
        "--dram-readers auto with --layer-exact or --routing",
        &out,
    );
    assert_refused(
        &[
            "compare",
            "--dram-readers",
            "auto",
            "--routing",
            "zipf:1.2",
            "--chip",
            "wormhole-n150",
            "--model",
            "olmoe-1b-7b",
            "--emit-instance",
            o,
        ],
        "--dram-readers auto with --layer-exact or --routing",
        &out,
    );
}

#[test]
fn moe_runs_on_the_chip_with_reader_cores_and_says_so() {
    // OLMoE on the n150, decode B8 KV128, two routing steps: with 16 readers the steps run on
    // 48 cores at 264 GB/s, not 64 at the interleaved 190 GB/s, and the oracle's mean moves.
    let moe = |extra: &[&'static str]| {
        let mut args = vec![
            "moe",
            "--model",
            "olmoe-1b-7b",
            "--chip",
            "wormhole-n150",
            "--batch",
            "8",
            "--kv",
            "128",
            "--steps",
            "2",
            "--json",
        ];
        args.extend(extra);
        envelope(&elk_ok(&args).stdout)
    };
    let with = moe(&["--dram-readers", "16"]);
    let without = moe(&[]);
    assert_eq!(with["config"]["dram_readers"], 16, "{}", with["config"]);
    assert!(without["config"].get("dram_readers").is_none());
    let summary = |r: &serde_json::Value| r["results"]["summary"].to_string();
    assert_ne!(summary(&with), summary(&without));
    assert!(
        with["results"]["instance"]
            .to_string()
            .contains("(16 DRAM readers)"),
        "{}",
        with["results"]["instance"]
    );
    let out = scratch("dram-readers").join("moe-never.json");
    assert_refused(
        &[
            "moe",
            "--model",
            "olmoe-1b-7b",
            "--chip",
            "wormhole-n150",
            "--dram-readers",
            "auto",
        ],
        "--dram-readers auto: only `compare` tries every count",
        &out,
    );
}
