//! Running the binary and locating `../shared`.

use std::path::PathBuf;
use std::process::Output;

/// Runs `elk-opt` with `args`.
pub fn elk(args: &[&str]) -> Output {
    elk_env(args, &[])
}

/// Runs `elk-opt` with `args` and extra environment variables.
pub fn elk_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_elk-opt"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("the elk-opt binary runs")
}

/// Runs `elk-opt` with `args` in directory `dir`.
pub fn elk_in(dir: &std::path::Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_elk-opt"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the elk-opt binary runs")
}

/// Stdout of a successful run, parsed as JSON.
pub fn elk_json(args: &[&str]) -> serde_json::Value {
    let out = elk(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// A scratch directory for one test module (`tag`), created if missing, unique per run.
pub fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("elk-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temp directory is writable");
    dir
}

/// `../shared` beside the repository root; panics with a clear message when missing.
pub fn shared() -> PathBuf {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    assert!(
        shared.join("models").is_dir(),
        "these tests need ../shared (with models/) beside the repository root"
    );
    shared
}
