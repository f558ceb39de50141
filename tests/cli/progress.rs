//! Progress (issue 16 item 10): on a terminal, `gap` and `solve --exact` say on stderr where
//! they are (each heuristic, then each phase of the exact solve with its incumbent and
//! bound); with stderr piped, stderr carries nothing but warnings, and stdout is the same
//! bytes either way. The terminal is a pseudo-terminal from util-linux's `script` (in
//! Debian's essential `bsdutils`).

use super::common::{elk, elk_ok, scratch, small_instance};
use std::path::{Path, PathBuf};
use std::process::Command;

fn temp(name: &str) -> PathBuf {
    scratch("progress").join(name)
}

/// `arg` quoted for `sh`.
fn quoted(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Runs `elk-opt args` with stderr on a pseudo-terminal 200 columns wide and stdout into
/// `stdout`: returns what the terminal showed (stderr only).
fn on_terminal(args: &[&str], stdout: &Path) -> String {
    let command: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_elk-opt"))
        .chain(args.iter().copied())
        .map(quoted)
        .collect();
    let line = format!(
        "stty cols 200 rows 50; exec {} > {}",
        command.join(" "),
        quoted(stdout.to_str().unwrap())
    );
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .expect("util-linux's script runs (Debian's bsdutils)");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{line}: {shown}");
    shown
}

/// Every line of a piped stderr is a warning.
fn only_warnings(stderr: &[u8]) {
    let text = String::from_utf8_lossy(stderr);
    for line in text.lines() {
        assert!(line.starts_with("warning: "), "stderr: {text}");
    }
}

/// Two Llama2-13B layers, free order (built once): the MILP runs until its limit, each
/// phase long enough to be drawn.
fn two_layers() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_two_layers).clone()
}

fn build_two_layers() -> PathBuf {
    let inst = temp("two-layers.json");
    elk_ok(&[
        "instance",
        "--model",
        "llama2-13b",
        "--num-layers",
        "2",
        "--layers",
        "0..2",
        "--load-order",
        "free",
        "-o",
        inst.to_str().unwrap(),
    ]);
    inst
}

#[test]
fn gap_on_a_terminal_shows_each_heuristic_and_each_exact_phase() {
    let inst = two_layers();
    let args = [
        "gap",
        "--instance",
        inst.to_str().unwrap(),
        "--time-limit",
        "3",
        "--no-cache",
    ];
    let shown = on_terminal(&args, &temp("gap-terminal.txt"));
    // The heuristics take milliseconds each: the spinner draws at most 20 times a second, so
    // some of their lines may be skipped, not all.
    let n = elk_heuristics::NAMES.len() + elk_heuristics::VARIANTS.len() + 2;
    assert!(
        (1..=n).any(|k| shown.contains(&format!("heuristics {k}/{n}: "))),
        "the terminal showed no 'heuristics k/{n}': {shown:?}"
    );
    for expected in [
        // The coupled segment LP first, with a quarter of the limit (the MILP can build this).
        "segment relaxation: the coupled LP (limit 0.750 s) · incumbent ",
        "exact milp (limit 3 s): LP relaxation · incumbent ",
        "exact milp (limit 3 s): fixed-order MILP · incumbent ",
        " ms, bound ",
        " ms, gap ≤ ",
    ] {
        assert!(
            shown.contains(expected),
            "the terminal did not show {expected:?}: {shown:?}"
        );
    }
    // Piped, the same run draws nothing: not the spinner, not the worker's progress lines.
    let piped = elk(&args);
    assert!(piped.status.success());
    only_warnings(&piped.stderr);
}

#[test]
fn solve_exact_without_a_warm_start_shows_its_phases_and_no_heuristics() {
    let inst = two_layers();
    let shown = on_terminal(
        &[
            "solve",
            "--exact",
            "--instance",
            inst.to_str().unwrap(),
            "--time-limit",
            "3",
            "--no-warm-start",
        ],
        &temp("solve-terminal.txt"),
    );
    // How far the solve gets in 3 s depends on the machine's load: the first phase is sure.
    let expected = "exact milp (limit 3 s): LP relaxation · no schedule yet, bound ";
    assert!(
        shown.contains(expected),
        "the terminal did not show {expected:?}: {shown:?}"
    );
    assert!(!shown.contains("heuristics"), "{shown:?}");
}

#[test]
fn stdout_is_the_same_bytes_on_a_terminal_and_piped() {
    let inst = small_instance(&temp("small.json"), "llama2-13b", "0..8");
    let args = [
        "gap",
        "--instance",
        inst.to_str().unwrap(),
        "--json",
        "--no-timings",
    ];
    let file = temp("gap-stdout.json");
    on_terminal(&args, &file);
    let piped = elk_ok(&args);
    only_warnings(&piped.stderr);
    assert_eq!(std::fs::read(&file).unwrap(), piped.stdout);
}
