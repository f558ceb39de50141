//! The grids and chip files the sweep tests share, elk-app's (sweeps, retries) and
//! elk-reports' (what a report draws of them, which includes this file by path).

use std::path::PathBuf;

/// Cheap cells: BERT-base (12 layers) at two HBM bandwidths and two batches, Basic only.
pub const TINY: &str = r#"figure = "vs-hbm"
models = ["bert-base"]
batches = [8, 16]
kvs = [128]
hbm_tbps = [4.0, 16.0]
methods = ["basic"]
"#;

/// A fresh directory for a test's files.
pub fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elk-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A copy of the ipu-mk2 preset with `sram_bytes_per_core` set: 2 KiB fits no plan of
/// BERT-base (the cell fails), 6 KiB leaves Static without a schedule.
pub fn mk2_with_sram(bytes: u64) -> String {
    elk_model::chip::PRESETS[0].1.replace(
        "sram_bytes_per_core = 638976",
        &format!("sram_bytes_per_core = {bytes}"),
    )
}

/// One BERT-base decode cell per chip entry.
pub fn grid_of(chips: &[&str], methods: &str) -> String {
    format!(
        "figure = \"bars\"\nmodels = [\"bert-base\"]\nbatches = [8]\nkvs = [128]\nchips = [{}]\nmethods = [{methods}]\n",
        chips
            .iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
