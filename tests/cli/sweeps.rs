//! Sweeps fail loudly: bad chips and methods are refused before any cell runs (exit 2, one
//! line naming the grid file and the entry, no results file); failed cells make the sweep
//! exit non-zero; relative chip paths are read from the grid file's directory.

use super::common::{elk_in, scratch};

fn grid(chips: &str, methods: &str) -> String {
    format!("figure = \"bars\"\nmodels = [\"bert-base\"]\nbatches = [8]\nkvs = [128]\nchips = [{chips}]\nmethods = [{methods}]\n")
}

fn chip_with_sram(bytes: u64) -> String {
    include_str!("../../model/chips/ipu-mk2.toml").replace(
        "sram_bytes_per_core = 638976",
        &format!("sram_bytes_per_core = {bytes}"),
    )
}

#[test]
fn bad_chips_and_methods_exit_2_before_any_cell_runs() {
    let d = scratch("sweeps-bad");
    std::fs::create_dir_all(d.join("sweep")).unwrap();
    std::fs::write(
        d.join("chip.toml"),
        chip_with_sram(1).replace("clock_hz = 1.325e9", "clock_hz = -1.0"),
    )
    .unwrap();
    for (name, text, expected) in [
        (
            "missing.toml",
            grid("\"ipu-mk2\", \"../nope.toml\"", "\"basic\""),
            "error: sweep/missing.toml: key 'chips': entry '../nope.toml': sweep/../nope.toml: cannot read: No such file or directory (os error 2) (relative chip paths are read from the grid file's directory)",
        ),
        (
            "invalid.toml",
            grid("\"../chip.toml\"", "\"basic\""),
            "error: sweep/invalid.toml: key 'chips': entry '../chip.toml': sweep/../chip.toml: key 'clock_hz': must be a positive number, got -1",
        ),
        (
            "method.toml",
            grid("\"ipu-mk2\"", "\"basic\", \"elk-fulll\""),
            "error: sweep/method.toml: key 'methods': unknown method 'elk-fulll'",
        ),
    ] {
        std::fs::write(d.join("sweep").join(name), text).unwrap();
        let out = elk_in(&d, &["sweep", &format!("sweep/{name}"), "-o", "r.jsonl"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end(), expected, "{name}");
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(!d.join("r.jsonl").exists(), "{name}: a results file was written");
    }
}

#[test]
fn chip_paths_are_relative_to_the_grid_file() {
    let d = scratch("sweeps-paths");
    std::fs::create_dir_all(d.join("chips")).unwrap();
    std::fs::create_dir_all(d.join("sweep")).unwrap();
    std::fs::write(d.join("chips/mine.toml"), chip_with_sram(638976)).unwrap();
    std::fs::write(
        d.join("sweep/g.toml"),
        grid("\"../chips/mine.toml\"", "\"basic\""),
    )
    .unwrap();
    // From the grid's parent and from the grid's own directory: the same chip either way.
    let a = elk_in(&d, &["sweep", "sweep/g.toml", "-o", "a.jsonl"]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = elk_in(&d.join("sweep"), &["sweep", "g.toml", "-o", "../b.jsonl"]);
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let a = std::fs::read_to_string(d.join("a.jsonl")).unwrap();
    assert_eq!(a, std::fs::read_to_string(d.join("b.jsonl")).unwrap());
    assert!(a.contains("\"error\":null"), "{a}");
}

#[test]
fn failed_cells_make_the_sweep_fail_and_are_retried() {
    let d = scratch("sweeps-failed");
    // Batch 2^30 × KV 16384 is too large for the zoo: the cell fails at run time.
    let huge = grid("\"ipu-mk2\"", "\"basic\"")
        .replace("batches = [8]", "batches = [8, 1073741824]")
        .replace("kvs = [128]", "kvs = [16384]");
    std::fs::write(d.join("g.toml"), huge).unwrap();
    let out = elk_in(&d, &["sweep", "g.toml", "-o", "r.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("g.toml: 2 cells, 0 already done, 2 run -> r.jsonl")
            && err.contains("error: 1 cell failed (of 2)"),
        "{err}"
    );
    // Rerun: the failed cell is run again, not counted as done.
    let out = elk_in(&d, &["sweep", "g.toml", "-o", "r.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 cells, 1 already done, 1 run (1 of them failed before)"),
        "{err}"
    );
    // A chip the model does not fit is a result: exit 0, said once.
    std::fs::write(d.join("tiny.toml"), chip_with_sram(2048)).unwrap();
    std::fs::write(
        d.join("t.toml"),
        grid("\"ipu-mk2\", \"tiny.toml\"", "\"basic\""),
    )
    .unwrap();
    let out = elk_in(&d, &["sweep", "t.toml", "-o", "t.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("1 cell does not fit the chip (no plan fits SRAM)"),
        "{err}"
    );
}
