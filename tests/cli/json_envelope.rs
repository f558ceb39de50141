//! Every `--json` output is one envelope (`schema`, `tool_version`, `config`, `results`;
//! docs/json.md), and every number in it says its unit: a key ending in a unit or in the
//! noun it counts, never a bare number and never a positional array.

use super::common::{elk, elk_ok, envelope, fixtures, scratch, small_instance_args, SMALL_MODEL};
use serde_json::Value;

/// Suffixes that are units: time, work, size, rate, a percentage, a ratio (`_x`, "times").
const UNITS: [&str; 10] = [
    "ms", "s", "cycles", "bytes", "flops", "tflops", "tbps", "hz", "pct", "x",
];

/// Suffixes that are the noun a count counts (`operators: 549` reads "549 operators").
const COUNTED: [&str; 17] = [
    "ops",
    "experts",
    "plans",
    "shapes",
    "operators",
    "options",
    "stages",
    "layers",
    "cores",
    "controllers",
    "params",
    "cells",
    "loads",
    "tokens",
    "windows",
    "sweeps",
    "steps",
];

/// Numbers allowed under a key without a unit suffix, each for a reason:
/// - indices, which have no unit: `index`, `stage`, `layer` (the layer cut);
/// - the batch size, a count of sequences named as every command's `--batch`;
/// - counts whose key names the thing counted although it is not a suffix: `spatial` and
///   `pareto` (plans), `pruned` and `table_entries` (options),
///   `unique_shapes`, the backend's `variables`, `binaries` and `constraints`, the detailed
///   simulator's `events` and `steps`, a model's `parameters`;
/// - the chip file's own keys, which `chips show --json` prints as the TOML has them so a
///   chip round-trips: `width`, `height` (cores), `inter_chip_comm_factor` (a ratio);
/// - ρ (`rho`), the broadcast ratio cold / c_min, named by its symbol in SPEC.md;
/// - `max_displacement`, the load-order policy `D` as instance files spell it (positions);
/// - `seed`, which names a sample (`moe --seed`), as an index names an item.
const ALLOWED: [&str; 21] = [
    "index",
    "stage",
    "layer",
    "batch",
    "spatial",
    "pareto",
    "pruned",
    "table_entries",
    "unique_shapes",
    "variables",
    "binaries",
    "constraints",
    "events",
    "steps",
    "parameters",
    "width",
    "height",
    "inter_chip_comm_factor",
    "rho",
    "max_displacement",
    "seed",
];

/// Objects whose every value is a count named by the object: operators per kind.
const COUNT_MAPS: [&str; 1] = ["layer_kind_counts"];

/// Arrays of numbers that are lists of one thing, not tuples: a tensor's dimension sizes.
const LISTS: [&str; 2] = ["dims", "shape"];

/// Whether `key` carries a unit: its last word before any `_per_…` is a unit or a counted
/// noun (`sram_bytes_per_core`, `ops_per_layer`, `makespan_ms`, `cycles`).
fn has_unit(key: &str) -> bool {
    let head = key.split("_per_").next().unwrap_or(key);
    let last = head.rsplit('_').next().unwrap_or(head);
    UNITS.contains(&last) || COUNTED.contains(&last)
}

/// The paths of every number without a unit under `v` (array elements take their array's
/// key).
fn unitless(v: &Value, key: &str, parent: &str, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                unitless(x, k, key, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                unitless(x, key, parent, &format!("{path}[{i}]"), out);
            }
        }
        Value::Number(_) => {
            let fine = has_unit(key)
                || ALLOWED.contains(&key)
                || LISTS.contains(&key)
                || COUNT_MAPS.contains(&parent);
            if !fine {
                out.push(path.to_string());
            }
        }
        _ => {}
    }
}

#[test]
fn the_unit_rule_refuses_what_the_old_outputs_had() {
    for bad in [
        r#"{"hbm_util": 0.5}"#,
        r#"{"stages_bound": [1198, 188, 0]}"#,
        r#"{"model": {"options_kept": [177, 177]}}"#,
        r#"{"breakdown": {"execute_only": 3.0}}"#,
        r#"{"controller_utilisation": [0.1, 0.2]}"#,
    ] {
        let mut out = Vec::new();
        unitless(&serde_json::from_str(bad).unwrap(), "", "", "", &mut out);
        assert!(!out.is_empty(), "{bad} passes");
    }
    let mut out = Vec::new();
    let good = r#"{"sram_bytes_per_core": 1, "ops_per_layer": 2, "stages": [{"cycles": 3.0}],
                   "layer_kind_counts": {"matmul": 4}, "speedup_vs_basic_x": 1.0}"#;
    unitless(&serde_json::from_str(good).unwrap(), "", "", "", &mut out);
    assert!(out.is_empty(), "{out:?}");
}

/// Checks one `--json` output: the envelope with schema `elk-opt/<name>/1`, and a unit on
/// every number in `config` and `results`.
fn check(name: &str, args: &[&str]) {
    let out = elk(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = envelope(&out.stdout);
    assert_eq!(j["schema"], format!("elk-opt/{name}/1"), "{args:?}");
    let mut bare = Vec::new();
    unitless(&j, "", "", "", &mut bare);
    bare.truncate(10);
    assert!(
        bare.is_empty(),
        "{args:?}: numbers without a unit: {bare:?}"
    );
}

#[test]
fn every_json_output_is_an_envelope_with_a_unit_on_every_number() {
    let d = scratch("envelope");
    let p = |name: &str| d.join(name).to_str().unwrap().to_string();
    let (inst, sched) = (p("small.json"), p("small.sched.json"));
    let (inst, sched) = (inst.as_str(), sched.as_str());
    let bert = fixtures().join("models/bert-base.json");
    let bert = bert.to_str().unwrap();
    let mut instance = small_instance_args("llama2-7b", "0..8", inst).to_vec();
    instance.push("--json");
    check("instance", &instance);
    let solve = ["solve", "--method", "elk-full", "--instance", inst];
    check("solve", &[&solve[..], &["-o", sched, "--json"]].concat());
    check(
        "solve",
        &["solve", "--method", "ideal", "--instance", inst, "--json"],
    );
    let limit = ["--time-limit", "20", "--json"];
    check(
        "solve-exact",
        &[&["solve", "--exact", "--instance", inst][..], &limit].concat(),
    );
    check("gap", &[&["gap", "--instance", inst][..], &limit].concat());
    let sim = [
        "simulate",
        "--instance",
        inst,
        "--schedule",
        sched,
        "--json",
    ];
    check("simulate", &sim);
    check(
        "simulate-detailed",
        &[&sim[..], &["--detailed", "--compare"]].concat(),
    );
    check("compare", &["compare", "--instance", inst, "--json"]);
    check(
        "compare",
        &[
            &["compare"][..],
            &SMALL_MODEL,
            &["--layer-exact", "10", "--json"],
        ]
        .concat(),
    );
    check("models-list", &["models", "list", "--json"]);
    check(
        "moe",
        &[
            "moe",
            "--num-layers",
            "1",
            "--batch",
            "2",
            "--steps",
            "2",
            "--json",
        ],
    );
    check(
        "compare",
        &[
            "compare",
            "--model",
            "mixtral-8x7b",
            "--num-layers",
            "1",
            "--batch",
            "2",
            "--routing",
            "uniform",
            "--steps",
            "2",
            "--json",
        ],
    );
    let trace = fixtures().join("routing/olmoe-synthetic.jsonl");
    let trace = [
        "routing",
        "import",
        trace.to_str().unwrap(),
        "--batch",
        "4",
        "--json",
    ];
    check("routing-import", &trace);
    let show = ["models", "show", "bert-base", "--num-layers", "1", "--json"];
    check("models-show", &show);
    check("import", &["import", bert, "--json"]);
    check("chips-list", &["chips", "list", "--json"]);
    check("chips-show", &["chips", "show", "sn40l-like", "--json"]);
    check(
        "plans",
        &[
            "plans",
            "--model",
            "bert-base",
            "--num-layers",
            "1",
            "--op",
            "l0.attn.qkv",
            "--timings",
            "--json",
        ],
    );
    let grid = p("grid.toml");
    std::fs::write(
        &grid,
        "figure = \"bars\"\nmodels = [\"bert-base\"]\nbatches = [8]\nkvs = [128]\n\
         chips = [\"ipu-mk2\"]\nmethods = [\"basic\"]\n",
    )
    .unwrap();
    let results = p("grid.jsonl");
    let (grid, results) = (grid.as_str(), results.as_str());
    check("sweep", &["sweep", grid, "-o", results, "--json"]);
    check(
        "report",
        &["report", results, "-o", &p("reports/grid"), "--json"],
    );
    check(
        "report-merge",
        &[
            "report",
            "merge",
            results,
            "-o",
            &p("merged.jsonl"),
            "--json",
        ],
    );
    // The summary reads the finding.json of every report it lists.
    for name in elk_reports::summary::summary_order() {
        let to = d.join("summary").join(name);
        std::fs::create_dir_all(&to).unwrap();
        let finding = r#"{"question": "q?", "finding": "f.", "number": "1 %"}"#;
        std::fs::write(to.join("finding.json"), finding).unwrap();
    }
    check(
        "report-summary",
        &["report", "summary", &p("summary"), "--json"],
    );
}

#[test]
fn every_subcommand_has_json() {
    let commands: [&[&str]; 18] = [
        &["models", "list"],
        &["models", "show"],
        &["import"],
        &["chips", "list"],
        &["chips", "show"],
        &["plans"],
        &["instance"],
        &["simulate"],
        &["solve"],
        &["compare"],
        &["gap"],
        &["sweep"],
        &["report"],
        &["report", "merge"],
        &["report", "summary"],
        &["study"],
        &["moe"],
        &["routing", "import"],
    ];
    for cmd in commands {
        let help = elk_ok(&[cmd, &["--help"][..]].concat()).stdout;
        assert!(
            String::from_utf8(help).unwrap().contains("--json"),
            "{cmd:?}: no --json"
        );
    }
}
