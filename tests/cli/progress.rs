//! Progress (issue 16 item 10): on a terminal, `gap` and `solve --exact` say on stderr where
//! they are (each heuristic, then each phase of the exact solve with its incumbent and
//! bound); with stderr piped, stderr carries nothing but warnings, and stdout is the same
//! bytes either way. The terminal is a pseudo-terminal from util-linux's `script` (in
//! Debian's essential `bsdutils`).

use super::common::{elk, elk_ok, scratch, small_instance, TWO_LLAMA_LAYERS};
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

/// Llama2-13B's operators 2..9 (the attention norm through the QKV projection), built once:
/// no heuristic meets its roofline bound, so the exact solve goes through every phase (LP
/// relaxation, fixed-order MILP, MILP) and proves the optimum in under a second even on a
/// loaded machine (measured at load 12 on 2 cores: 0.5 s of HiGHS in all), far inside
/// [`LIMIT`]. What the terminal shows then does not depend on the machine's speed: each
/// phase starts, and each event of the solve is drawn however short its phase
/// (`ExactProgress::exact` forces the draw past indicatif's rate limit).
fn norm_and_qkv() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_norm_and_qkv).clone()
}

fn build_norm_and_qkv() -> PathBuf {
    let inst = temp("norm-and-qkv.json");
    elk_ok(&[
        "instance",
        "--model",
        "llama2-13b",
        "--ops",
        "2..9",
        "-o",
        inst.to_str().unwrap(),
    ]);
    inst
}

/// The exact solve's time limit (s): a bound on a broken run, never reached by a working one.
const LIMIT: &str = "60";

/// Asserts that the terminal `shown` each of `expected`.
fn showed(shown: &str, expected: &[&str]) {
    for e in expected {
        assert!(
            shown.contains(e),
            "the terminal did not show {e:?}: {shown:?}"
        );
    }
}

#[test]
fn gap_on_a_terminal_shows_each_heuristic_and_each_exact_phase() {
    let inst = norm_and_qkv();
    let args = [
        "gap",
        "--instance",
        inst.to_str().unwrap(),
        "--time-limit",
        LIMIT,
    ];
    let shown = on_terminal(&args, &temp("gap-terminal.txt"));
    // The heuristics take milliseconds each: the spinner draws at most 20 times a second, so
    // some of their lines may be skipped, not all.
    // The heuristics, the two re-timed rows and `stage-lp+queue`.
    let n = elk_heuristics::NAMES.len() + elk_heuristics::VARIANTS.len() + 3;
    assert!(
        (1..=n).any(|k| shown.contains(&format!("heuristics {k}/{n}: "))),
        "the terminal showed no 'heuristics k/{n}': {shown:?}"
    );
    // Each phase with the best heuristic's makespan as the incumbent, the bound and the gap.
    showed(
        &shown,
        &[
            "exact milp (limit 60 s): LP relaxation · incumbent ",
            "exact milp (limit 60 s): fixed-order MILP · incumbent ",
            "exact milp (limit 60 s): MILP (HiGHS) · incumbent ",
            " ms, bound ",
            " ms, gap ≤ ",
        ],
    );
    // Piped, the same run draws nothing: not the spinner, not the worker's progress lines.
    let piped = elk(&args);
    assert!(piped.status.success());
    only_warnings(&piped.stderr);
}

#[test]
fn gap_on_a_chain_of_layers_shows_the_coupled_segment_lp_first() {
    // Two Llama2-7B layers, which the MILP can build: the coupled LP comes first with a
    // quarter of the limit, and the spinner says so with its limit; then the MILP's phases,
    // with the rest of the limit, which the spinner shows as the share of the whole.
    let args = [
        &["gap"][..],
        &TWO_LLAMA_LAYERS,
        &["--time-limit", "4", "--no-cache"],
    ];
    let shown = on_terminal(&args.concat(), &temp("gap-coupled-terminal.txt"));
    showed(
        &shown,
        &[
            "segment relaxation: the coupled LP (limit 1.0 s) · incumbent ",
            "exact milp (limit 3.0 s of the 4 s): ",
        ],
    );
}

#[test]
fn solve_exact_without_a_warm_start_shows_its_phases_and_no_heuristics() {
    let shown = solve_exact_cold(&norm_and_qkv(), &[], "solve-terminal.txt");
    // No schedule until the LP relaxation's options are queued; the MILPs start from it.
    showed(
        &shown,
        &[
            "exact milp (limit 60 s): LP relaxation · no schedule yet, bound ",
            "exact milp (limit 60 s): LP relaxation's options, queued · no schedule yet, bound ",
            "exact milp (limit 60 s): fixed-order MILP · incumbent ",
            "exact milp (limit 60 s): MILP (HiGHS) · incumbent ",
        ],
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

#[test]
fn a_milp_tells_its_nodes_incumbent_and_bound_while_it_runs() {
    // The first 24 operators of a Llama2-13B layer, free order: without a warm start and the
    // LP relaxation (whose options prove it at once) HiGHS needs branch and bound (30 nodes
    // allowed here), and its callback tells the spinner its nodes, incumbent and bound as
    // they move, inside the phase.
    let inst = temp("ops24.json");
    elk_ok(&[
        "instance",
        "--model",
        "llama2-13b",
        "--num-layers",
        "1",
        "--ops",
        "0..24",
        "--load-order",
        "free",
        "-o",
        inst.to_str().unwrap(),
    ]);
    let shown = solve_exact_cold(
        &inst,
        &["--work-limit", "30", "--no-lp-bound"],
        "milp-progress.txt",
    );
    showed(
        &shown,
        &[
            "exact milp (limit 60 s): MILP (HiGHS), ",
            " nodes · incumbent ",
        ],
    );
}

/// `solve --exact` on `inst` without a warm start, with `extra` flags, on a terminal: what it
/// showed (stdout into `out`).
fn solve_exact_cold(inst: &Path, extra: &[&str], out: &str) -> String {
    let mut args = vec![
        "solve",
        "--exact",
        "--instance",
        inst.to_str().unwrap(),
        "--time-limit",
        LIMIT,
        "--no-warm-start",
    ];
    args.extend(extra);
    on_terminal(&args, &temp(out))
}
