//! Integration tests of elk-reports: resumable and shardable sweeps give the bytes of a
//! straight run; grids are validated; reports name their command and label their axes.
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

use elk_reports::grid::{preset, Grid, PRESETS};
use elk_reports::report::{report, Header};
use elk_reports::sweep::{merge, read_results, run_sweep, Shard};
use std::path::PathBuf;

/// Cheap cells: BERT-base (12 layers) at two HBM bandwidths and two batches, Basic only.
const TINY: &str = r#"figure = "vs-hbm"
models = ["bert-base"]
batches = [8, 16]
kvs = [128]
hbm_tbps = [4.0, 16.0]
methods = ["basic"]
"#;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elk-reports-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn interrupted_resumed_and_sharded_sweeps_equal_a_straight_run() {
    let grid = Grid::from_toml("tiny", TINY).unwrap();
    let d = dir("sweep");
    let straight = d.join("straight.jsonl");
    run_sweep(&grid, &straight, None, &|_, _| {}).unwrap();
    let bytes = std::fs::read(&straight).unwrap();
    assert_eq!(String::from_utf8_lossy(&bytes).lines().count(), 4);

    // "Killed midway": one shard's cells plus a line cut short, then a full run resumes.
    let resumed = d.join("resumed.jsonl");
    run_sweep(&grid, &resumed, Some(Shard { k: 1, n: 3 }), &|_, _| {}).unwrap();
    let mut partial = std::fs::read_to_string(&resumed).unwrap();
    partial.push_str("{\"figure\":\"vs-hb");
    std::fs::write(&resumed, partial).unwrap();
    let summary = run_sweep(&grid, &resumed, None, &|_, _| {}).unwrap();
    assert_eq!((summary.skipped, summary.ran), (1, 3));
    assert_eq!(std::fs::read(&resumed).unwrap(), bytes);

    // Two shards merged.
    let (a, b) = (d.join("a.jsonl"), d.join("b.jsonl"));
    run_sweep(&grid, &a, Some(Shard::parse("0/2").unwrap()), &|_, _| {}).unwrap();
    run_sweep(&grid, &b, Some(Shard::parse("1/2").unwrap()), &|_, _| {}).unwrap();
    let merged = d.join("merged.jsonl");
    assert_eq!(merge(&[&b, &a], &merged).unwrap(), 4);
    assert_eq!(std::fs::read(&merged).unwrap(), bytes);

    // The report names its command and inputs, and every plot labels its axes with units.
    let results: Vec<_> = read_results(&merged).unwrap().into_values().collect();
    let header = Header {
        command: "elk-opt sweep tiny.toml".into(),
        inputs: "tiny.toml".into(),
        date: "2026-11-29".into(),
    };
    let files = report(&results, "tiny", &header).unwrap();
    assert_eq!(files[0].0, "README.md");
    assert!(files[0].1.contains("`elk-opt sweep tiny.toml`") && files[0].1.contains("2026-11-29"));
    let svgs: Vec<_> = files.iter().filter(|f| f.0.ends_with(".svg")).collect();
    assert_eq!(svgs.len(), 2, "one plot per batch");
    for (_, svg) in svgs {
        assert!(svg.contains("HBM bandwidth (TB/s)") && svg.contains("latency (ms)"));
    }
}

#[test]
fn grids_are_validated_with_the_key_named() {
    for (text, key) in [
        (
            "figure = \"pie\"\nmodels = [\"x\"]\nbatches = [1]\nkvs = [1]",
            "figure",
        ),
        (
            "figure = \"bars\"\nmodels = []\nbatches = [1]\nkvs = [1]",
            "models",
        ),
        (
            "figure = \"bars\"\nmodels = [\"x\"]\nbatches = [1]\nkvs = [1]\nmethods = [\"magic\"]",
            "methods",
        ),
        (
            "figure = \"bars\"\nmodels = [\"x\"]\nbatches = [1]\nkvs = [1]\nhbm_tbps = [-1.0]",
            "hbm_tbps",
        ),
        (
            "figure = \"bars\"\nmodels = [\"x\"]\nbatches = [1]\nkvs = [1]\ncolour = 3",
            "colour",
        ),
    ] {
        let err = Grid::from_toml("g.toml", text).unwrap_err().to_string();
        assert!(err.starts_with("g.toml: ") && err.contains(key), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    for name in PRESETS {
        let g = Grid::from_toml(name, preset(name).unwrap()).unwrap();
        assert!(!g.cells().is_empty(), "{name}");
    }
    // Fig 23: HBM scales with the cores.
    let g = Grid::from_toml("fig23", preset("fig23").unwrap()).unwrap();
    assert_eq!(g.cells()[0].hbm_tbps, Some(4.0 * 2208.0 / 1472.0));
}
