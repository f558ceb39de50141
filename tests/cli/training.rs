//! `--mode training` and `--mode forward-batch` through the CLI: a training step schedules
//! end to end with a valid schedule, `forward-batch` is byte for byte the instance that
//! `--mode training` built before issue 18 (the forward pass alone), and bad names are one line.

use super::common::{assert_refused, elk_json, elk_ok, ops_sum, scratch};

const SHAPE: [&str; 8] = [
    "--model",
    "opt-1.3b",
    "--num-layers",
    "1",
    "--batch",
    "2",
    "--kv",
    "64",
];

fn instance(dir: &std::path::Path, mode: &str, extra: &[&str]) -> std::path::PathBuf {
    let out = dir.join(format!("{mode}.json"));
    let mut args = vec!["instance", "--mode", mode, "-o", out.to_str().unwrap()];
    args.extend(SHAPE);
    args.extend(extra);
    elk_ok(&args);
    out
}

#[test]
fn a_training_step_schedules_end_to_end_with_a_valid_schedule() {
    let dir = scratch("training-step");
    let inst = instance(&dir, "training", &[]);
    let fb = instance(&dir, "forward-batch", &[]);
    // Forward, backward (two gradient MatMuls per MatMul) and the updates: about 3× the
    // forward pass's FLOPs, never the forward pass alone.
    let ratio = ops_sum(&inst, "flops") / ops_sum(&fb, "flops");
    assert!(
        (2.9..3.2).contains(&ratio),
        "training / forward-batch FLOPs = {ratio}"
    );
    let sched = dir.join("schedule.json");
    let i = inst.to_str().unwrap();
    elk_ok(&[
        "solve",
        "--method",
        "elk-full",
        "--instance",
        i,
        "-o",
        sched.to_str().unwrap(),
    ]);
    let r = elk_json(&[
        "simulate",
        "--instance",
        i,
        "--schedule",
        sched.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["valid"], true, "{r}");
    assert!(r["violations"].as_array().unwrap().is_empty(), "{r}");
    assert!(r["makespan_ms"].as_f64().unwrap() > 0.0, "{r}");
    assert!(
        r["instance"].as_str().unwrap().contains(" training b2 s64"),
        "{r}"
    );
    // The Adam state is in the instance's loads: lower-precision state loads less.
    let hbm = |p: &std::path::Path| ops_sum(p, "hbm_cycles");
    let bf16 = dir.join("bf16");
    std::fs::create_dir_all(&bf16).unwrap();
    let small = instance(&bf16, "training", &["--optimizer-dtype", "bf16"]);
    assert!(
        hbm(&small) < hbm(&inst),
        "bf16 Adam state loads less than fp32"
    );
}

/// `--mode forward-batch` is what `--mode training` built before issue 18: the golden file
/// was captured with the binary of commit 9f26d8b (`--mode training`, the same flags, SPEC
/// §4's NoC row, the default then) and re-captured, on purpose, when issue 45 changed the clean
/// plan rules' tables (core groups, gathers that hold their rows: docs/plans.md).
#[test]
fn forward_batch_is_the_instance_training_built_before_issue_18() {
    let dir = scratch("forward-batch");
    let fb = instance(&dir, "forward-batch", &["--noc-row", "spec"]);
    let before = include_str!("../golden/opt-1.3b-forward-batch-l1-b2-s64.json");
    let now = std::fs::read_to_string(&fb).unwrap();
    let now = now
        .replacen(" forward-batch ", " training ", 1)
        .replacen(", SPEC §4 NoC row", "", 1);
    assert_eq!(now, before);
}

#[test]
fn bad_modes_and_optimizer_dtypes_are_one_line_naming_the_choices() {
    let dir = scratch("training-refusals");
    let out = dir.join("refused.json");
    let o = out.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--mode", "train"],
            "unknown mode 'train'; known: decode, prefill, forward-batch, training",
        ),
        (
            vec!["--mode", "training", "--optimizer-dtype", "fp64"],
            "--optimizer-dtype 'fp64'",
        ),
        (
            vec!["--mode", "prefill", "--optimizer-dtype", "bf16"],
            "applies to --mode training",
        ),
    ] {
        let mut all = vec!["instance", "-o", o];
        all.extend(SHAPE);
        all.extend(args.iter().copied());
        assert_refused(&all, says, &out);
    }
}
