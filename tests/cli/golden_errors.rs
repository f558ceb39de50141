//! Golden errors: a dozen representative bad inputs, each answered by exactly one line on
//! stderr (this text, byte for byte) and exit code 2.

use super::common::{elk, elk_in, scratch};
use std::path::PathBuf;

const OK_INSTANCE: &str = r#"{"format":"elk-instance/1","name":"x","sram_bytes":100,"clock_hz":1e9,"load_order":"fixed","preload_window":null,"ops":[{"name":"a","hbm_cycles":10,"options":[{"cold":1,"hot":2,"exec_cycles":1,"comm_cycles":0,"noc_per_hbm":0}]}]}"#;

/// The files the cases use, written into a fresh directory of the calling `test`'s own: the
/// tests run in parallel, and one rewriting `ok.json` while another reads it made the reader
/// see an empty file (a CI failure, stop 61).
fn files(test: &str) -> PathBuf {
    let d = scratch(&format!("golden-{test}"));
    let write = |name: &str, text: &str| std::fs::write(d.join(name), text).unwrap();
    write("ok.json", OK_INSTANCE);
    write(
        "fmt.json",
        &OK_INSTANCE.replace("elk-instance/1", "elk-instance/9"),
    );
    write(
        "extra.json",
        &OK_INSTANCE.replace("\"ops\"", "\"extra\":1,\"ops\""),
    );
    write(
        "neg.json",
        &OK_INSTANCE.replace("\"hbm_cycles\":10", "\"hbm_cycles\":-1"),
    );
    let sched = r#"{"format":"elk-schedule/1","instance":"x","method":"m","options":[0],"load_order":[0],"load_work":[[0,0,5.0]],"makespan_cycles":0,"status":"heuristic","lower_bound_cycles":null}"#;
    write("short.json", sched);
    write("full.json", &sched.replace("5.0]]", "10.0]]"));
    write("typed.json", &sched.replace("5.0]]", "\"a\"]]"));
    write(
        "hashform.json",
        &sched.replace("\"method\"", "\"instance_hash\":\"abc\",\"method\""),
    );
    write(
        "other.json",
        &sched.replace(
            "\"method\"",
            "\"instance_hash\":\"fnv1a64:0123456789abcdef\",\"method\"",
        ),
    );
    write("chip.toml", "name = \"c\"\ncores = -4\n");
    write(
        "grid.toml",
        "figure = \"bars\"\nmodels = [\"llama2-7b\"]\nbatches = [8]\nkvs = [512]\ncolour = 1\n",
    );
    write("methods.toml", "figure = \"bars\"\nmodels = [\"llama2-7b\"]\nbatches = [8]\nkvs = [512]\nmethods = [\"magic\"]\n");
    d
}

#[test]
fn each_bad_input_gets_its_one_line() {
    let d = files("one-line");
    let cases: [(&[&str], &str); 24] = [
        (&["simulate", "--instance", "fmt.json", "--schedule", "short.json"],
         "error: fmt.json: invalid instance: format 'elk-instance/9': expected 'elk-instance/1' or 'elk-instance/2'"),
        (&["simulate", "--instance", "extra.json", "--schedule", "short.json"],
         "error: extra.json: malformed JSON: unknown field `extra`, expected one of `format`, `name`, `sram_bytes`, `clock_hz`, `load_order`, `preload_window`, `noc_row`, `chip`, `ops` at line 1 column 120"),
        (&["simulate", "--instance", "neg.json", "--schedule", "short.json"],
         "error: neg.json: invalid instance: ops[0] (a): hbm_cycles must be ≥ 0"),
        (&["simulate", "--instance", "ok.json", "--schedule", "typed.json"],
         "error: typed.json: malformed JSON: invalid type: string \"a\", expected f64 at line 1 column 107"),
        (&["simulate", "--instance", "ok.json", "--schedule", "short.json"],
         "error: invalid schedule: operator a: load incomplete before it runs: 5 of 10 HBM cycles (5 missing) (1 violation(s) in all)"),
        (&["simulate", "--instance", "ok.json", "--schedule", "hashform.json"],
         "error: hashform.json: invalid schedule: instance_hash 'abc': expected fnv1a64:<16 hex digits>"),
        (&["simulate", "--instance", "ok.json", "--schedule", "other.json"],
         "error: schedule was built for instance fnv1a64:0123456789abcdef (x), this instance is fnv1a64:1e8b127a604717c6 (x)"),
        (&["simulate", "--instance", "missing.json", "--schedule", "short.json"],
         "error: missing.json: cannot read: No such file or directory (os error 2)"),
        (&["chips", "show", "chip.toml"],
         "error: chip.toml: line 2: key 'cores': invalid value: integer `-4`, expected u64"),
        (&["sweep", "grid.toml"],
         "error: grid.toml: line 5: key 'colour': unknown field `colour`, expected one of `figure`, `models`, `modes`, `batches`, `kvs`, `chips`, `hbm_tbps`, `noc_scale`, `compute_scale`, `topologies`, `cores`, `hbm_per_1472_cores_tbps`, `methods`, `bound`, `routings`, `expert_parallel`, `policies`, `moe_steps`"),
        (&["sweep", "methods.toml"],
         "error: methods.toml: key 'methods': unknown method 'magic': expected one of basic, static, elk-dyn, elk-full, basic-fill, static-fill, elk-dyn-greedy, elk-full-greedy, elk-full-groups, bound (Ideal is always reported; the exact solver is `elk-opt gap`, per configuration)"),
        (&["sweep", "fig17", "--shard", "3/2"],
         "error: --shard: '3/2': expected K/N with 0 ≤ K < N"),
        (&["study", "nope"],
         "error: study 'nope': expected one of gap, gap-whole, ideal, hbm-emulation, order-pruning, cost-noise, ablation, replay-fidelity, moe, resident, measured"),
        (&["instance", "--model", "llama2-7b", "--layers", "5..3", "-o", "x.json"],
         "error: range '5..3': expected A..B with A < B"),
        // A negative number after a flag is its value, refused as such (ux-2 #14), with or
        // without `=`.
        (&["compare", "--batch", "-4"], "error: --batch -4: must be positive"),
        (&["compare", "--batch=-4"], "error: --batch -4: must be positive"),
        (&["compare", "--hbm-tbps", "-8"], "error: --hbm-tbps -8: must be positive"),
        (&["gap", "--time-limit", "-1"],
         "error: --time-limit -1: must be a positive number of seconds"),
        (&["compare", "--window", "-2"],
         "error: --window -2: must be 1 or more (stages): a load works in the stages before its operator's, so a window of 0 leaves it none"),
        (&["compare", "--window", "4294967296"],
         "error: --window 4294967296: must be at most 4294967295 (stages)"),
        (&["compare", "--window", "0"],
         "error: --window 0: must be 1 or more (stages): a load works in the stages before its operator's, so a window of 0 leaves it none"),
        (&["models", "show", "llama2-7b", "--kv", "x"],
         "error: --kv x: expected a positive whole number"),
        (&["simulate", "--instance", "ok.json", "--schedule", "full.json", "--detailed",
           "--chip", "ipu-mk2", "--hbm-controllers", "100000"],
         "error: --hbm-controllers 100000: at most one per core (ipu-mk2 has 1472 cores)"),
        (&["gap", "--time-limit", "5", "--time-limit", "6"],
         "error: --time-limit given twice: give it once"),
    ];
    for (args, expected) in cases {
        let out = elk_in(&d, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end(), expected, "{args:?}");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn flags_that_only_apply_to_built_instances_are_refused_with_a_file() {
    let d = files("built-only");
    let inst = d.join("ok.json");
    let out = elk(&[
        "solve",
        "--method",
        "basic",
        "--instance",
        inst.to_str().unwrap(),
        "--load-order",
        "fixed",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .next()
            .unwrap()
            .starts_with("error: --load-order cannot be used with --instance: the instance file"),
        "{err}"
    );
}

#[test]
fn a_failed_solve_never_overwrites_an_existing_schedule() {
    let d = files("no-overwrite");
    // SRAM 1 byte: nothing fits, no method finds a schedule.
    let tiny = d.join("tiny.json");
    std::fs::write(
        &tiny,
        OK_INSTANCE.replace("\"sram_bytes\":100", "\"sram_bytes\":1"),
    )
    .unwrap();
    let out_file = d.join("keep.json");
    for args in [
        vec!["solve", "--method", "elk-full"],
        vec!["solve", "--exact"],
        vec!["solve", "--exact", "--backend", "smt"],
    ] {
        std::fs::write(&out_file, "keep me").unwrap();
        let mut all = args.clone();
        all.extend([
            "--instance",
            tiny.to_str().unwrap(),
            "-o",
            out_file.to_str().unwrap(),
        ]);
        let out = elk(&all);
        assert!(out.status.code().is_some(), "{all:?}");
        assert_eq!(
            std::fs::read_to_string(&out_file).unwrap(),
            "keep me",
            "{all:?}"
        );
    }
}
