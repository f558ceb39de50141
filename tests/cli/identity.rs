//! Trustworthy pairings (issue 16): an instance has an identity (a content hash every written
//! schedule carries, the chip it was built for, overrides in its name), and every command
//! shares one set of defaults.

use super::common::{elk, elk_in, elk_ok, fixtures, results, scratch};
use elk_stage::instance::{Instance, InstanceFile};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    scratch("identity").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The first 8 operators of one Llama2-7B layer (3 loads): quick to plan and solve.
const MODEL: [&str; 6] = ["--model", "llama2-7b", "--num-layers", "1", "--ops", "0..8"];

/// `instance` with the model above plus `extra`, into `out`.
fn instance(out: &Path, extra: &[&str]) {
    let mut args = vec!["instance"];
    args.extend_from_slice(&MODEL);
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", s(out)]);
    elk_ok(&args);
}

/// `solve --method elk-full --instance inst -o out`.
fn solve(inst: &Path, out: &Path) {
    elk_ok(&[
        "solve",
        "--method",
        "elk-full",
        "--instance",
        s(inst),
        "-o",
        s(out),
    ]);
}

/// `simulate --detailed --json` of `sched` against `inst`, plus `extra`, asserting success.
fn detailed(inst: &Path, sched: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "simulate",
        "--instance",
        s(inst),
        "--schedule",
        s(sched),
        "--detailed",
        "--json",
    ];
    args.extend_from_slice(extra);
    elk_ok(&args)
}

/// ipu-pod4 with twice the SRAM per core, named `pod4-2m`: same model, another instance.
fn big_sram_chip(path: &Path) {
    let text = include_str!("../../model/chips/ipu-pod4.toml");
    let line = text
        .lines()
        .find(|l| l.starts_with("sram_bytes_per_core"))
        .unwrap();
    let sram: u64 = line
        .split('=')
        .nth(1)
        .unwrap()
        .split('#')
        .next()
        .unwrap()
        .trim()
        .replace('_', "")
        .parse()
        .unwrap();
    let text = text
        .replace(line, &format!("sram_bytes_per_core = {}", 2 * sram))
        .replace("name = \"ipu-pod4\"", "name = \"pod4-2m\"");
    std::fs::write(path, text).unwrap();
}

#[test]
fn schedules_carry_the_instance_hash_and_simulate_refuses_another_instance() {
    let (a, b, sched) = (tmp("a.json"), tmp("b.json"), tmp("a-sched.json"));
    let chip = tmp("pod4-2m.toml");
    big_sram_chip(&chip);
    instance(&a, &[]);
    instance(&b, &["--chip", s(&chip)]);
    solve(&a, &sched);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    let hash = Instance::read(&a).unwrap().content_hash();
    assert_eq!(j["instance_hash"], hash.as_str());
    assert!(hash.starts_with("fnv1a64:") && hash.len() == 24, "{hash}");
    elk_ok(&["simulate", "--instance", s(&a), "--schedule", s(&sched)]);
    // Another SRAM size: one line naming both instances, before any violation is listed.
    let out = elk(&["simulate", "--instance", s(&b), "--schedule", s(&sched)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no violations listed");
    let other = Instance::read(&b).unwrap();
    assert_eq!(
        stderr(&out).trim_end(),
        format!(
            "error: schedule was built for instance {hash} (llama2-7b decode b32 kv2048 on \
             ipu-pod4, ops 0..8), this instance is {} (llama2-7b decode b32 kv2048 on pod4-2m, \
             ops 0..8)",
            other.content_hash()
        )
    );
    // Another HBM bandwidth (the review's 708 "load incomplete" violations) is refused the
    // same way, and so is the detailed replay.
    let fast = tmp("a-8tbps.json");
    instance(&fast, &["--hbm-tbps", "8"]);
    for detailed in [false, true] {
        let mut args = vec!["simulate", "--instance", s(&fast), "--schedule", s(&sched)];
        if detailed {
            args.push("--detailed");
        }
        let out = elk(&args);
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: schedule was built for instance fnv1a64:"));
    }
}

#[test]
fn a_schedule_without_a_hash_still_reads_and_a_name_mismatch_is_warned() {
    let (a, sched) = (tmp("old-a.json"), tmp("old-sched.json"));
    instance(&a, &[]);
    solve(&a, &sched);
    // A schedule from before the hash: the field removed, the name of another instance.
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    j.as_object_mut().unwrap().remove("instance_hash");
    j["instance"] = "something else".into();
    let old = tmp("old-sched-nohash.json");
    std::fs::write(&old, j.to_string()).unwrap();
    let out = elk_ok(&["simulate", "--instance", s(&a), "--schedule", s(&old)]);
    assert_eq!(
        stderr(&out).trim_end(),
        "warning: the schedule names instance 'something else', this instance is 'llama2-7b \
         decode b32 kv2048 on ipu-pod4, ops 0..8' (the schedule has no instance_hash to check \
         them by)"
    );
    // Unknown fields stay errors.
    j["instance_hsh"] = "x".into();
    std::fs::write(&old, j.to_string()).unwrap();
    let out = elk(&["simulate", "--instance", s(&a), "--schedule", s(&old)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown field `instance_hsh`"));
}

#[test]
fn simulate_detailed_replays_on_the_chip_the_instance_records() {
    let (inst, sched) = (tmp("mk2.json"), tmp("mk2-sched.json"));
    instance(&inst, &["--chip", "ipu-mk2"]);
    let file = InstanceFile::read(&inst).unwrap();
    let chip = file.chip.expect("the instance records its chip");
    assert_eq!(
        (chip.name.as_str(), chip.file, chip.hbm_tbps),
        ("ipu-mk2", None, None)
    );
    solve(&inst, &sched);
    let detailed = |extra: &[&str]| detailed(&inst, &sched, extra);
    let out = detailed(&[]);
    let j: serde_json::Value = results(&out.stdout);
    assert_eq!(j["chip"]["name"], "ipu-mk2", "{j}");
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    // --chip naming another chip is used, with a warning.
    let out = detailed(&["--chip", "ipu-pod4"]);
    let j: serde_json::Value = results(&out.stdout);
    assert_eq!(j["chip"]["name"], "ipu-pod4", "{j}");
    assert_eq!(
        stderr(&out).trim_end(),
        "warning: --chip ipu-pod4 is 'ipu-pod4', but the instance was built for 'ipu-mk2'; the \
         replay uses --chip (leave it out to use the instance's chip)"
    );
    // --chip and --hbm-tbps are flags of the replay only.
    let out = elk(&[
        "simulate",
        "--instance",
        s(&inst),
        "--schedule",
        s(&sched),
        "--chip",
        "ipu-mk2",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_chip_file_is_recorded_and_found_again_or_asked_for() {
    let dir = scratch("identity-file");
    let chip = dir.join("pod4-2m.toml");
    big_sram_chip(&chip);
    let out = elk_in(
        &dir,
        &[
            "instance",
            "--model",
            "llama2-7b",
            "--num-layers",
            "1",
            "--ops",
            "0..8",
            "--chip",
            "pod4-2m.toml",
            "-o",
            "i.json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let file = InstanceFile::read(&dir.join("i.json")).unwrap();
    let rec = file.chip.unwrap();
    assert_eq!(rec.name, "pod4-2m");
    assert_eq!(rec.file.as_deref(), Some("pod4-2m.toml"));
    solve(&dir.join("i.json"), &dir.join("s.json"));
    let args = [
        "simulate",
        "--instance",
        "i.json",
        "--schedule",
        "s.json",
        "--detailed",
        "--json",
    ];
    let out = elk_in(&dir, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let j: serde_json::Value = results(&out.stdout);
    assert_eq!(j["chip"]["name"], "pod4-2m", "{j}");
    // From elsewhere the file is not found: one line asking for --chip, exit 2.
    let out = elk(&[
        "simulate",
        "--instance",
        s(&dir.join("i.json")),
        "--schedule",
        s(&dir.join("s.json")),
        "--detailed",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end(),
        "error: the instance was built for chip 'pod4-2m' from pod4-2m.toml, which is not found \
         from here: give it with --chip"
    );
}

#[test]
fn hbm_overrides_show_in_names_and_headers() {
    let inst = tmp("hbm8.json");
    instance(&inst, &["--hbm-tbps", "8"]);
    let file = InstanceFile::read(&inst).unwrap();
    assert_eq!(
        file.instance.name,
        "llama2-7b decode b32 kv2048 on ipu-pod4 @ 8 TB/s HBM, ops 0..8"
    );
    assert_eq!(file.chip.as_ref().unwrap().hbm_tbps, Some(8.0));
    // H at 8 TB/s is twice H at 16 TB/s.
    let base = tmp("hbm16.json");
    instance(&base, &[]);
    let h = |p: &Path| Instance::read(p).unwrap().ops[0].hbm_cycles.get();
    assert!((h(&inst) / h(&base) - 2.0).abs() < 1e-9);
    let mut args = vec!["solve", "--method", "basic", "--hbm-tbps", "8"];
    args.extend_from_slice(&MODEL);
    let text = String::from_utf8(elk_ok(&args).stdout).unwrap();
    assert!(
        text.starts_with("llama2-7b decode b32 kv2048 on ipu-pod4 @ 8 TB/s HBM, ops 0..8 — "),
        "{text}"
    );
    let plans = elk_ok(&[
        "plans",
        "--model",
        "llama2-7b",
        "--num-layers",
        "1",
        "--hbm-tbps",
        "8",
    ]);
    let text = String::from_utf8(plans.stdout).unwrap();
    assert!(
        text.starts_with("llama2-7b decode b32 kv2048 on ipu-pod4 @ 8 TB/s HBM ("),
        "{text}"
    );
    // The replay uses the recorded override, and its header shows it.
    let sched = tmp("hbm8-sched.json");
    solve(&inst, &sched);
    let j: serde_json::Value = results(&detailed(&inst, &sched, &[]).stdout);
    assert_eq!(j["chip"]["name"], "ipu-pod4 @ 8 TB/s HBM", "{j}");
    // A bad bandwidth is refused in one line, and no file is written.
    let bad = tmp("hbm0.json");
    for cmd in ["instance", "plans"] {
        let mut args = vec![cmd, "--hbm-tbps", "0"];
        args.extend_from_slice(&MODEL[..4]);
        if cmd == "instance" {
            args.extend_from_slice(&["-o", s(&bad)]);
        }
        let out = elk(&args);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert_eq!(
            stderr(&out).trim_end(),
            "error: --hbm-tbps 0: must be positive"
        );
    }
    assert!(!bad.exists());
}

#[test]
fn instance_and_solve_default_to_the_same_load_order() {
    // The review's pipeline: solve with model flags, build the instance with the same flags,
    // simulate the one against the other. On a whole layer Elk-Full permutes loads, which a
    // fixed-order instance would refuse.
    let (inst, sched) = (tmp("pipe-inst.json"), tmp("pipe-sched.json"));
    let layer = [
        "--model",
        "llama2-7b",
        "--num-layers",
        "1",
        "--layers",
        "0..1",
    ];
    let mut args = vec!["solve", "--method", "elk-full", "-o", s(&sched)];
    args.extend_from_slice(&layer);
    elk_ok(&args);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    let order: Vec<u64> = j["load_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(order.windows(2).any(|w| w[0] > w[1]), "loads permuted");
    let mut args = vec!["instance", "-o", s(&inst)];
    args.extend_from_slice(&layer);
    elk_ok(&args);
    let file = InstanceFile::read(&inst).unwrap();
    assert_eq!(
        serde_json::to_value(file.instance.load_order).unwrap(),
        "free"
    );
    elk_ok(&["simulate", "--instance", s(&inst), "--schedule", s(&sched)]);
}

#[test]
fn solve_emits_the_instance_it_used() {
    let (emitted, sched, built) = (tmp("emit.json"), tmp("emit-sched.json"), tmp("emit-b.json"));
    let mut args = vec![
        "solve",
        "--method",
        "elk-full",
        "-o",
        s(&sched),
        "--emit-instance",
        s(&emitted),
    ];
    args.extend_from_slice(&MODEL);
    elk_ok(&args);
    elk_ok(&[
        "simulate",
        "--instance",
        s(&emitted),
        "--schedule",
        s(&sched),
    ]);
    // The same bytes as `instance` with the same flags.
    instance(&built, &[]);
    assert_eq!(
        std::fs::read(&emitted).unwrap(),
        std::fs::read(&built).unwrap()
    );
    // With --instance, the file read (chip record included) is written back.
    let copy = tmp("emit-copy.json");
    elk_ok(&[
        "compare",
        "--instance",
        s(&built),
        "--emit-instance",
        s(&copy),
        "--no-timings",
        "--json",
    ]);
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&built).unwrap()
    );
    // One file for both is refused before anything is built or written, by `solve` and `gap`.
    let same = tmp("emit-same.json");
    for command in [&["solve", "--method", "basic"][..], &["gap"]] {
        let mut args = command.to_vec();
        args.extend_from_slice(&["-o", s(&same), "--emit-instance", s(&same)]);
        args.extend_from_slice(&MODEL);
        let out = elk(&args);
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        assert!(stderr(&out).starts_with("error: -o and --emit-instance name the same file"));
        assert!(!same.exists());
    }
}

#[test]
fn a_schedule_that_permutes_loads_of_a_fixed_instance_says_how_to_rebuild() {
    let dir = fixtures().join("reference/bert-base");
    let (inst, sched) = (
        dir.join("instance.json"),
        dir.join("schedule-elk-full.json"),
    );
    let args = vec!["simulate", "--instance", s(&inst), "--schedule", s(&sched)];
    let hint = "the instance has load_order=fixed and this schedule permutes loads; rebuild it \
                with --load-order free";
    let out = elk(&args);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.trim_end().ends_with(&format!("; {hint}")), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("\nhint: {hint}\n")));
    let mut json = args.clone();
    json.push("--json");
    let j: serde_json::Value = results(&elk(&json).stdout);
    assert_eq!(j["hint"], hint);
}

#[test]
fn help_says_layers_is_a_half_open_slice_and_hbm_tbps_is_taken_with_a_chip() {
    for cmd in ["instance", "solve", "compare", "gap"] {
        let help = String::from_utf8(elk_ok(&[cmd, "--help"]).stdout).unwrap();
        let layers = help
            .split("--layers <LAYERS>")
            .nth(1)
            .unwrap_or_else(|| panic!("{cmd}: no --layers"));
        let doc: String = layers
            .lines()
            .take_while(|l| !l.trim_start().starts_with("--"))
            .collect();
        assert!(doc.contains("half-open"), "{cmd}: {doc}");
        assert!(help.contains("--hbm-tbps"), "{cmd}");
    }
    for cmd in ["plans", "simulate"] {
        let help = String::from_utf8(elk_ok(&[cmd, "--help"]).stdout).unwrap();
        assert!(help.contains("--hbm-tbps"), "{cmd}");
    }
}
