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
            "error: sweep/method.toml: key 'methods': unknown method 'elk-fulll': expected one of basic, static, elk-dyn, elk-full, basic-fill, static-fill, elk-dyn-greedy, elk-full-greedy, elk-full-groups, bound (Ideal is always reported; the exact solver is `elk-opt gap`, per configuration)",
        ),
        (
            "model.toml",
            grid("\"ipu-mk2\"", "\"basic\"").replace("[\"bert-base\"]", "[\"mine.toml\"]"),
            "error: sweep/model.toml: key 'models': entry 'mine.toml': sweep/mine.toml: cannot read: No such file or directory (os error 2) (relative model paths are read from the grid file's directory)",
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

#[test]
fn a_grid_that_asks_for_the_bound_gets_it_and_every_gap() {
    let d = scratch("sweeps-bound");
    // `bound` among the methods is `bound = true`; both give the same results.
    std::fs::write(
        d.join("a.toml"),
        grid("\"ipu-pod4\"", "\"basic\", \"elk-full\", \"bound\""),
    )
    .unwrap();
    std::fs::write(
        d.join("b.toml"),
        grid("\"ipu-pod4\"", "\"basic\", \"elk-full\"") + "bound = true\n",
    )
    .unwrap();
    for g in ["a", "b"] {
        let out = elk_in(
            &d,
            &["sweep", &format!("{g}.toml"), "-o", &format!("{g}.jsonl")],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let a = std::fs::read_to_string(d.join("a.jsonl")).unwrap();
    assert_eq!(a, std::fs::read_to_string(d.join("b.jsonl")).unwrap());
    let line: serde_json::Value = serde_json::from_str(a.lines().next().unwrap()).unwrap();
    let bound = line["bound"]["bound_ms"].as_f64().unwrap();
    let source = line["bound"]["source"].as_str().unwrap();
    assert!(
        ["segment relaxation", "roofline"].contains(&source),
        "{line}"
    );
    let methods = line["methods"].as_array().unwrap();
    assert_eq!(methods.len(), 2, "{line}");
    for m in methods {
        let (t, g) = (
            m["makespan_ms"].as_f64().unwrap(),
            m["gap_le_pct"].as_f64().unwrap(),
        );
        assert!(
            g >= 0.0 && (bound * (1.0 + g / 100.0) - t).abs() <= 1e-9 * t,
            "{m}"
        );
    }
    // The report shows the gaps, with every dimension in its CSV.
    let out = elk_in(&d, &["report", "a.jsonl", "-o", "rep"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let readme = std::fs::read_to_string(d.join("rep/README.md")).unwrap();
    assert!(readme.contains("## Certified gaps"), "{readme}");
    let csv = std::fs::read_to_string(d.join("rep/gaps.csv")).unwrap();
    assert!(
        csv.starts_with("model,mode,batch,kv,chip,hbm_tbps,noc_scale,compute_scale,topology,cores,method,makespan_ms,bound_ms,bound_source,gap_le_pct\n"),
        "{csv}"
    );
    // Without the bound, no bound key at all: earlier results files stay as they were.
    std::fs::write(d.join("c.toml"), grid("\"ipu-pod4\"", "\"basic\"")).unwrap();
    let out = elk_in(&d, &["sweep", "c.toml", "-o", "c.jsonl"]);
    assert!(out.status.success());
    let c = std::fs::read_to_string(d.join("c.jsonl")).unwrap();
    assert!(
        !c.contains("\"bound\"") && !c.contains("gap_le_pct") && !c.contains("ideal_unreachable"),
        "{c}"
    );
}

#[test]
fn a_figure_on_a_noc_bound_chip_says_ideal_is_unreachable() {
    // sn40l-like distributes HBM data at 712 GB/s: at 0.5 TB/s the NoC keeps up, at 2 TB/s
    // it does not.
    let d = scratch("sweeps-unreachable");
    std::fs::write(
        d.join("g.toml"),
        "figure = \"vs-hbm\"\nmodels = [\"bert-base\"]\nbatches = [8]\nkvs = [128]\nchips = [\"sn40l-like\"]\nhbm_tbps = [0.5, 2]\nmethods = [\"basic\"]\n",
    )
    .unwrap();
    let out = elk_in(&d, &["sweep", "g.toml", "-o", "r.jsonl", "--report", "rep"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(d.join("r.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines[0].get("ideal_unreachable").is_none(), "{}", lines[0]);
    let why = lines[1]["ideal_unreachable"].as_str().unwrap();
    assert!(
        why.starts_with("Ideal is unreachable on sn40l-like"),
        "{why}"
    );
    let readme = std::fs::read_to_string(d.join("rep/README.md")).unwrap();
    assert!(
        readme.contains("; at HBM bandwidth (TB/s) = 2, Ideal is no target."),
        "{readme}"
    );
    // The CSV notes it on that point only; the figure's title says it.
    let csv = std::fs::read_to_string(d.join("rep/vs-hbm-0.csv")).unwrap();
    // Every point says which cell it is: each grid dimension, the chip included, a column.
    assert!(
        csv.lines().next().unwrap().ends_with(
            ",note,model,mode,batch,kv,chip,hbm_tbps,noc_scale,compute_scale,topology,cores"
        ),
        "{csv}"
    );
    let ideal: Vec<&str> = csv
        .lines()
        .filter(|l| l.starts_with("Elk's ideal (not a bound),"))
        .collect();
    assert!(
        ideal[1].ends_with(",bert-base,decode,8,128,sn40l-like,2,1,1,,"),
        "{csv}"
    );
    assert_eq!(ideal.len(), 2, "{csv}");
    assert!(
        !ideal[0].contains("unreachable") && ideal[1].contains("Ideal is unreachable"),
        "{csv}"
    );
    let svg = std::fs::read_to_string(d.join("rep/vs-hbm-0.svg")).unwrap();
    assert!(
        svg.contains("Ideal unreachable at 1 of 2 points: NoC-bound"),
        "the figure says it"
    );
    // A bar figure says it too.
    std::fs::write(d.join("bars.toml"), grid("\"sn40l-like\"", "\"basic\"")).unwrap();
    let out = elk_in(
        &d,
        &["sweep", "bars.toml", "-o", "b.jsonl", "--report", "bars"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(d.join("bars/latency.svg")).unwrap();
    assert!(
        svg.contains("(Ideal unreachable: NoC-bound)"),
        "the bar figure says it"
    );
    let csv = std::fs::read_to_string(d.join("bars/latency.csv")).unwrap();
    let ideal = csv
        .lines()
        .find(|l| l.starts_with("Elk's ideal (not a bound),"))
        .unwrap();
    assert!(
        ideal.contains("Ideal is unreachable on sn40l-like"),
        "{csv}"
    );
}

#[test]
fn an_expert_parallel_axis_runs_each_point_with_and_without_sets_and_is_never_slower() {
    let d = scratch("sweeps-expert-parallel");
    let text = grid(
        "\"ipu-pod4\", \"ipu-mk2\"",
        "\"basic\", \"elk-dyn\", \"elk-full\"",
    ) + "expert_parallel = [false, true]\nbound = true\n";
    std::fs::write(d.join("g.toml"), text).unwrap();
    let out = elk_in(&d, &["sweep", "g.toml", "-o", "g.jsonl"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(d.join("g.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    for pair in lines.chunks(2) {
        let (plain, sets) = (&pair[0], &pair[1]);
        assert!(plain["cell"].get("expert_parallel").is_none(), "{plain}");
        assert_eq!(sets["cell"]["expert_parallel"], true, "{sets}");
        assert!(sets["bound"]["bound_ms"].as_f64() <= plain["bound"]["bound_ms"].as_f64());
        let bound = sets["bound"]["bound_ms"].as_f64().unwrap();
        for (a, b) in plain["methods"]
            .as_array()
            .unwrap()
            .iter()
            .zip(sets["methods"].as_array().unwrap())
        {
            assert!(a.get("parallel_sets").is_none(), "{a}");
            assert!(b["parallel_sets"].is_boolean(), "{b}");
            let (x, y) = (
                a["makespan_ms"].as_f64().unwrap(),
                b["makespan_ms"].as_f64().unwrap(),
            );
            assert!(
                y <= x && y >= bound * (1.0 - 1e-12),
                "{a} vs {b}, bound {bound}"
            );
        }
    }
    // The report's CSV has the axis as a column.
    let out = elk_in(&d, &["report", "g.jsonl", "-o", "rep"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_dir(d.join("rep"))
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "csv"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .unwrap();
    assert!(
        csv.lines().next().unwrap().contains("expert_parallel"),
        "{csv}"
    );
    // Its README pairs each configuration's cells, and its finding is the speedup.
    let readme = std::fs::read_to_string(d.join("rep/README.md")).unwrap();
    assert!(
        readme.contains("## Parallel sets (`expert_parallel`)"),
        "{readme}"
    );
    let finding = std::fs::read_to_string(d.join("rep/finding.json")).unwrap();
    assert!(
        finding.contains("Parallel sets make the best schedule up to"),
        "{finding}"
    );
}
