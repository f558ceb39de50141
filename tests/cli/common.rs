//! Running the binary, locating `tests/fixtures/`, and the fixtures several test files share.

use std::path::{Path, PathBuf};
use std::process::Output;

/// Runs `elk-opt` with `args`.
pub fn elk(args: &[&str]) -> Output {
    elk_env(args, &[])
}

/// Runs `elk-opt` with `args` and extra environment variables.
pub fn elk_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    elk_command()
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("the elk-opt binary runs")
}

/// Runs `elk-opt` with `args` in directory `dir`.
pub fn elk_in(dir: &std::path::Path, args: &[&str]) -> Output {
    elk_command()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the elk-opt binary runs")
}

/// The `elk-opt` command, its plan cache in [`test_plan_cache`]: the tests of one run share
/// their plan tables (most of their time on large models), and no run sees another's cache or
/// the user's.
pub fn elk_command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_elk-opt"));
    c.env("XDG_CACHE_HOME", test_plan_cache());
    c
}

/// `XDG_CACHE_HOME` of this test run: a directory under cargo's target tmp, empty when the
/// run starts (the previous runs' are removed).
pub fn test_plan_cache() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        if let Ok(entries) = std::fs::read_dir(base) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with("plan-cache-") {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = base.join(format!("plan-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("cargo's target tmp directory is writable");
        dir
    })
}

/// The sum of number `key` over the operators of the instance file at `path` (`hbm_cycles`,
/// `flops`).
pub fn ops_sum(path: &Path, key: &str) -> f64 {
    let inst: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    inst["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o[key].as_f64().unwrap())
        .sum()
}

/// Runs `elk-opt` with `args`, which must be refused: exit 2, a first line of stderr that
/// says `says`, and no file at `out`.
pub fn assert_refused(args: &[&str], says: &str, out: &Path) {
    let r = elk(args);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.lines().next().unwrap().contains(says), "{err}");
    assert!(!out.exists(), "no file after a refusal");
}

/// Runs `elk-opt` with `args` and panics, quoting stderr, unless it exits 0.
pub fn elk_ok(args: &[&str]) -> Output {
    let out = elk(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `results` of a successful `--json` run (see [`results`]).
pub fn elk_json(args: &[&str]) -> serde_json::Value {
    results(&elk_ok(args).stdout)
}

/// The whole `--json` output: checked to be the envelope of docs/json.md (`schema`
/// `elk-opt/<name>/1`, `tool_version` this package's, a `config` object, `results`, and no
/// other key).
pub fn envelope(stdout: &[u8]) -> serde_json::Value {
    let j: serde_json::Value = serde_json::from_slice(stdout).expect("valid JSON on stdout");
    let keys: Vec<&str> = j
        .as_object()
        .expect("a JSON object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["config", "results", "schema", "tool_version"], "{j}");
    let schema = j["schema"].as_str().expect("schema is a string");
    assert!(
        schema.starts_with("elk-opt/") && schema.ends_with("/1"),
        "{schema}"
    );
    assert_eq!(j["tool_version"], env!("CARGO_PKG_VERSION"));
    assert!(j["config"].is_object(), "{j}");
    j
}

/// The `results` of a `--json` output, its envelope checked ([`envelope`]).
pub fn results(stdout: &[u8]) -> serde_json::Value {
    envelope(stdout)["results"].take()
}

/// A scratch directory for one test module (`tag`), created if missing, unique per run.
pub fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("elk-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temp directory is writable");
    dir
}

/// `tests/fixtures/`: the reference artifact's graphs (`models/`) and its converted runs
/// (`reference/`), listed with their origin in its README.md.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// `tests/fixtures/reference/bert-base/instance.json`, the reference artifact's instance.
pub fn bert_instance() -> PathBuf {
    fixtures().join("reference/bert-base/instance.json")
}

/// The arguments of `elk-opt instance` for a small real instance: operators `ops` (`A..B`) of
/// one layer of `model`, free load order, written to `out`.
pub fn small_instance_args<'a>(model: &'a str, ops: &'a str, out: &'a str) -> [&'a str; 11] {
    [
        "instance",
        "--model",
        model,
        "--num-layers",
        "1",
        "--ops",
        ops,
        "--load-order",
        "free",
        "-o",
        out,
    ]
}

/// Two Llama2-7B layers (decode B32 KV2048 on ipu-pod4): a chain the MILP can build whose
/// coupled segment LP (≈ 2 s of one core) beats the roofline.
pub const TWO_LLAMA_LAYERS: [&str; 4] = ["--model", "llama2-7b", "--num-layers", "2"];

/// A small whole model: one BERT layer between its embeddings and head, decode B1 KV128.
pub const SMALL_MODEL: [&str; 8] = [
    "--model",
    "bert-base",
    "--num-layers",
    "1",
    "--batch",
    "1",
    "--kv",
    "128",
];

/// Builds the small instance of [`small_instance_args`] at `path` and returns `path`.
pub fn small_instance(path: &Path, model: &str, ops: &str) -> PathBuf {
    elk_ok(&small_instance_args(model, ops, path.to_str().unwrap()));
    path.to_path_buf()
}

/// Runs `solve --method <method> --instance <inst> -o <out>` plus `extra`, asserting success;
/// the schedule is in `out`, the run's output is returned.
pub fn solve_to_file(method: &str, inst: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "solve",
        "--method",
        method,
        "--instance",
        inst.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    elk_ok(&args)
}

/// A chain of Dots in the reference JSON format, one per step of `widths`
/// (`[B, 1, w_k] × [w_k, w_k+1]`, the batch as its placeholder 99): equal steps are equal
/// operators.
pub fn dot_chain(widths: &[u64]) -> String {
    let entries: Vec<serde_json::Value> = widths
        .windows(2)
        .enumerate()
        .map(|(k, w)| {
            let expr = format!(
                " - einstein_v2(\" output0[S0, N, M] +=! input0[S0, N, K] * input1[K, M]; \", \
                 input_dict={{ \"input0\" : {{ \"dtype\" : \"float32\", \"shape\" : [99, 1, {k_}]}} , \
                 \"input1\" : {{ \"dtype\" : \"float32\", \"shape\" : [{k_}, {m}]}} }})",
                k_ = w[0],
                m = w[1]
            );
            // Ids 1..; the first input of the first Dot and every weight have no entry.
            let input = if k == 0 { 999 } else { k };
            serde_json::json!([k + 1, expr, "Dot", [[input, 0], [1000 + k, 0]]])
        })
        .collect();
    serde_json::to_string(&entries).unwrap()
}

/// Writes `hidden.json` into `dir`: six distinct Dots, then two identical layers of two
/// Dots — 4 of its 10 operators, too few for layer detection on its own to count them
/// (it needs half). Returns its path.
pub fn hidden_layers_graph(dir: &Path) -> PathBuf {
    let path = dir.join("hidden.json");
    let widths = [16, 24, 40, 56, 72, 88, 64, 128, 64, 128, 64];
    std::fs::write(&path, dot_chain(&widths)).unwrap();
    path
}

/// The reviewers' chip (ux-2 #8): sn40l-like grown to 2,048 cores on a 64 × 32 mesh with
/// 8 TB/s of HBM, its controllers and links as `sn40l-like.toml` has them (8 and 102.4e9),
/// for the caller to change.
pub fn reviewers_mesh() -> String {
    include_str!("../../model/chips/sn40l-like.toml")
        .replace("cores = 1040", "cores = 2048")
        .replace("width = 40", "width = 64")
        .replace("height = 26", "height = 32")
        .replace(
            "bandwidth_bytes_per_s = 2.0e12",
            "bandwidth_bytes_per_s = 8.0e12",
        )
}

/// The makespan `simulate` gives schedule file `sched` on instance file `inst`, cycles.
pub fn simulated_makespan(inst: &std::path::Path, sched: &std::path::Path) -> f64 {
    let sim = elk_json(&[
        "simulate",
        "--instance",
        inst.to_str().unwrap(),
        "--schedule",
        sched.to_str().unwrap(),
        "--json",
    ]);
    sim["makespan_cycles"].as_f64().unwrap()
}
