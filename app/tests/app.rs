//! Integration tests of elk-app: resumable and shardable sweeps give the bytes of a straight
//! run; grids are validated, their chips read before any cell; failed cells are retried; MoE
//! policies keep the oracle below them, resident experts included; one certified bound
//! whatever the command; study measured quotes its fixture; a decode step is never faster at
//! a larger batch.
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

use elk_app::grid::{preset, Grid, PRESETS};
use elk_app::sweep::{merge, read_results, run_sweep, Shard};
use inputs::{dir, grid_of, mk2_with_sram, TINY};

#[path = "app/batch_monotone.rs"]
mod batch_monotone;
#[path = "app/inputs.rs"]
mod inputs;
#[path = "app/measured.rs"]
mod measured;
#[path = "app/moe.rs"]
mod moe;
#[path = "app/one_bound.rs"]
mod one_bound;
#[path = "app/request.rs"]
mod request;
#[path = "app/resident.rs"]
mod resident;

#[test]
fn interrupted_resumed_and_sharded_sweeps_equal_a_straight_run() {
    let grid = Grid::from_toml("tiny", TINY).unwrap();
    let d = dir("sweep");
    let straight = d.join("straight.jsonl");
    run_sweep(&grid, &straight, None, None, &|_, _| {}).unwrap();
    let bytes = std::fs::read(&straight).unwrap();
    assert_eq!(String::from_utf8_lossy(&bytes).lines().count(), 4);

    // "Killed midway": one shard's cells plus a line cut short, then a full run resumes.
    let resumed = d.join("resumed.jsonl");
    run_sweep(
        &grid,
        &resumed,
        Some(Shard { k: 1, n: 3 }),
        None,
        &|_, _| {},
    )
    .unwrap();
    let mut partial = std::fs::read_to_string(&resumed).unwrap();
    partial.push_str("{\"figure\":\"vs-hb");
    std::fs::write(&resumed, partial).unwrap();
    let summary = run_sweep(&grid, &resumed, None, None, &|_, _| {}).unwrap();
    assert_eq!((summary.skipped, summary.ran), (1, 3));
    assert_eq!(std::fs::read(&resumed).unwrap(), bytes);

    // Two shards merged.
    let (a, b) = (d.join("a.jsonl"), d.join("b.jsonl"));
    run_sweep(
        &grid,
        &a,
        Some(Shard::parse("0/2").unwrap()),
        None,
        &|_, _| {},
    )
    .unwrap();
    run_sweep(
        &grid,
        &b,
        Some(Shard::parse("1/2").unwrap()),
        None,
        &|_, _| {},
    )
    .unwrap();
    let merged = d.join("merged.jsonl");
    assert_eq!(merge(&[&b, &a], &merged).unwrap(), 4);
    assert_eq!(std::fs::read(&merged).unwrap(), bytes);
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
    // Fig 24 reproduces the reference artifact, whose "training" is the forward pass alone.
    let g = Grid::from_toml("fig24", preset("fig24").unwrap()).unwrap();
    assert!(g.cells().iter().all(|c| c.mode == "forward-batch"));
    // Fig 23: HBM scales with the cores.
    let g = Grid::from_toml("fig23", preset("fig23").unwrap()).unwrap();
    assert_eq!(g.cells()[0].hbm_tbps, Some(4.0 * 2208.0 / 1472.0));
}

#[test]
fn chip_paths_resolve_from_the_grid_file_and_bad_chips_fail_before_any_cell() {
    let d = dir("paths");
    std::fs::create_dir_all(d.join("chips")).unwrap();
    std::fs::create_dir_all(d.join("grids")).unwrap();
    std::fs::write(d.join("chips/mine.toml"), mk2_with_sram(638976)).unwrap();
    let abs = d.join("chips/mine.toml").display().to_string();
    let grid_file = d.join("grids/g.toml");
    std::fs::write(
        &grid_file,
        grid_of(&["../chips/mine.toml", &abs, "ipu-mk2"], "\"basic\""),
    )
    .unwrap();
    // The test's current directory is the crate, where ../chips/mine.toml does not exist.
    let grid = Grid::from_file(&grid_file).unwrap();
    assert_eq!(
        grid.chip_path("../chips/mine.toml"),
        d.join("grids/../chips/mine.toml").display().to_string()
    );
    assert_eq!(grid.chip_path(&abs), abs);
    assert_eq!(grid.chip_path("ipu-mk2"), "ipu-mk2");
    let chips = grid.load_chips().unwrap();
    assert_eq!(chips.specs.len(), 3);
    assert_eq!(chips.specs["../chips/mine.toml"], chips.specs["ipu-mk2"]);

    // An unreadable and an invalid chip: one line naming the grid file and the entry, and
    // the results file is never created.
    let bad_text = mk2_with_sram(638976).replace("cores = 1472", "cores = 0");
    std::fs::write(d.join("chips/zero.toml"), bad_text).unwrap();
    for (entry, says) in [
        ("../chips/missing.toml", "cannot read"),
        ("../chips/zero.toml", "key 'cores'"),
        ("no-such-preset", "unknown chip 'no-such-preset'"),
    ] {
        std::fs::write(&grid_file, grid_of(&["ipu-mk2", entry], "\"basic\"")).unwrap();
        let grid = Grid::from_file(&grid_file).unwrap();
        let out = d.join("never.jsonl");
        let err = run_sweep(&grid, &out, None, None, &|_, _| {})
            .unwrap_err()
            .to_string();
        let head = format!("{}: key 'chips': entry '{entry}': ", grid_file.display());
        assert!(err.starts_with(&head) && err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.exists(), "{entry}: the results file was written");
    }

    // Unknown models and modes that do not apply are grid errors, not failed cells.
    for (text, says) in [
        (
            grid_of(&["ipu-mk2"], "\"basic\"").replace("bert-base", "gpt-5"),
            "entry 'gpt-5'",
        ),
        (
            grid_of(&["ipu-mk2"], "\"basic\"").replace("bert-base", "vit-h-14"),
            "decode' does not apply",
        ),
        (
            grid_of(&["ipu-mk2"], "\"basic\"").replace("batches = [8]", "batches = [0]"),
            "key 'batches'",
        ),
    ] {
        let err = Grid::from_toml("m.toml", &text).unwrap_err().to_string();
        assert!(err.starts_with("m.toml: ") && err.contains(says), "{err}");
    }
}

#[test]
fn failed_cells_are_counted_and_retried_on_resume() {
    let d = dir("retry");
    // Batch 2^30 × KV 16384 is too large for the zoo to build: a cell that fails every time.
    let huge = grid_of(&["ipu-mk2"], "\"basic\"")
        .replace("batches = [8]", "batches = [1073741824]")
        .replace("kvs = [128]", "kvs = [16384]");
    let grid = Grid::from_toml("huge.toml", &huge).unwrap();
    let out = d.join("huge.jsonl");
    let first = run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    assert_eq!((first.ran, first.failed, first.retried), (1, 1, 0));
    let stored = read_results(&out).unwrap();
    assert!(stored[&0].failed(), "{:?}", stored[&0].error);
    // The same run again retries the failed cell (and fails it again).
    let again = run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    assert_eq!(
        (again.skipped, again.ran, again.retried, again.failed),
        (0, 1, 1, 1)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 1);

    // A configuration that does not fit (2 KiB of SRAM) is a result: not failed, not retried.
    std::fs::write(d.join("chip.toml"), mk2_with_sram(2048)).unwrap();
    let grid_file = d.join("g.toml");
    std::fs::write(&grid_file, grid_of(&["ipu-mk2", "chip.toml"], "\"basic\"")).unwrap();
    let grid = Grid::from_file(&grid_file).unwrap();
    let out = d.join("r.jsonl");
    let first = run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    assert_eq!((first.ran, first.failed, first.does_not_fit), (2, 0, 1));
    let straight = std::fs::read_to_string(&out).unwrap();
    let stored = read_results(&out).unwrap();
    assert!(stored[&1].does_not_fit && !stored[&1].failed());
    assert!(stored[&1]
        .error
        .as_deref()
        .unwrap()
        .contains("no plan fits 2048 B"));
    assert!(straight.contains(",\"does_not_fit\":true}"), "{straight}");
    let again = run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    assert_eq!((again.skipped, again.ran), (2, 0));

    // A cell stored as an error by an earlier run (the chip file was not found then) is run
    // again, and the file ends as a straight run's.
    let lines: Vec<&str> = straight.lines().collect();
    let broken = lines[0].replace(
        "\"error\":null",
        "\"error\":\"../chips/mine.toml: cannot read\"",
    );
    std::fs::write(&out, format!("{broken}\n{}\n", lines[1])).unwrap();
    let resumed = run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    assert_eq!(
        (
            resumed.skipped,
            resumed.ran,
            resumed.retried,
            resumed.failed
        ),
        (1, 1, 1, 0)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), straight);
}
