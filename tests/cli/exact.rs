//! `solve --exact`, `gap` and `simulate --detailed`: the JSON fields, the hard time limit,
//! the schedule file the simulator accepts, and determinism.

use super::common::{elk, elk_json, scratch};
use std::path::PathBuf;
use std::time::Instant;

fn temp(name: &str) -> PathBuf {
    scratch("exact").join(name)
}

/// A small real instance: the first 8 operators of a Llama2-13B layer, free load order.
fn small_instance() -> PathBuf {
    let path = temp("small.json");
    let out = elk(&[
        "instance",
        "--model",
        "llama2-13b",
        "--num-layers",
        "1",
        "--ops",
        "0..8",
        "--load-order",
        "free",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

#[test]
fn solve_exact_json_has_the_required_fields_and_a_valid_schedule() {
    let inst = small_instance();
    let sched = temp("small.sched.json");
    for backend in ["milp", "smt"] {
        let j = elk_json(&[
            "solve",
            "--exact",
            "--backend",
            backend,
            "--instance",
            inst.to_str().unwrap(),
            "--time-limit",
            "60",
            "-o",
            sched.to_str().unwrap(),
            "--json",
        ]);
        for key in [
            "status",
            "makespan_cycles",
            "lower_bound_cycles",
            "gap_pct",
            "solve_s",
        ] {
            assert!(j.get(key).is_some(), "{backend}: {key} missing in {j}");
        }
        assert_eq!(j["status"], "optimal", "{backend}: {j}");
        assert!(j["gap_pct"].as_f64().unwrap().abs() < 1e-6);
        // The written schedule is valid and the simulator agrees with the reported makespan.
        let sim = elk_json(&[
            "simulate",
            "--instance",
            inst.to_str().unwrap(),
            "--schedule",
            sched.to_str().unwrap(),
            "--json",
        ]);
        let (a, b) = (
            sim["makespan_cycles"].as_f64().unwrap(),
            j["makespan_cycles"].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() <= 1e-9 * a,
            "{backend}: simulate {a} vs solve {b}"
        );
    }
}

#[test]
fn gap_lists_every_heuristic_against_the_optimum() {
    let inst = small_instance();
    let j = elk_json(&[
        "gap",
        "--instance",
        inst.to_str().unwrap(),
        "--json",
        "--no-timings",
    ]);
    assert_eq!(j["reference"], "optimum");
    let rows = j["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["basic", "static", "elk-dyn", "elk-full", "exact-milp"]
    );
    for r in rows {
        assert_eq!(r["certified"], true);
        assert!(r["gap_pct"].as_f64().unwrap() >= -1e-6, "{r}");
    }
    // Determinism: the same run twice gives the same bytes.
    let args = [
        "gap",
        "--instance",
        inst.to_str().unwrap(),
        "--json",
        "--no-timings",
    ];
    assert_eq!(elk(&args).stdout, elk(&args).stdout);
}

#[test]
fn time_limit_is_hard() {
    // Two Llama2-13B layers, free order, no warm start: far from solvable in 2 s.
    let inst = temp("hard.json");
    let out = elk(&[
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = Instant::now();
    let out = elk(&[
        "solve",
        "--exact",
        "--instance",
        inst.to_str().unwrap(),
        "--time-limit",
        "2",
        "--no-warm-start",
        "--json",
    ]);
    let took = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The contract: --time-limit 2 returns within 4 s.
    assert!(took < 4.0, "took {took:.2} s");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(j["status"], "optimal", "{j}");
}

#[test]
fn simulate_detailed_is_deterministic_and_compares() {
    let inst = small_instance();
    let sched = temp("small.basic.json");
    let out = elk(&[
        "solve",
        "--method",
        "basic",
        "--instance",
        inst.to_str().unwrap(),
        "-o",
        sched.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let args = [
        "simulate",
        "--instance",
        inst.to_str().unwrap(),
        "--schedule",
        sched.to_str().unwrap(),
        "--detailed",
        "--compare",
        "--json",
    ];
    let (one, two) = (elk(&args), elk(&args));
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert_eq!(one.stdout, two.stdout);
    let j: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    for key in [
        "makespan_cycles",
        "analytic_makespan_cycles",
        "hottest_links",
        "controller_utilisation",
        "stages",
        "events",
    ] {
        assert!(j.get(key).is_some(), "{key} missing in {j}");
    }
    // A mesh override needs a size that matches the core count: one clear line, exit 2.
    let bad = elk(&[
        "simulate",
        "--instance",
        inst.to_str().unwrap(),
        "--schedule",
        sched.to_str().unwrap(),
        "--detailed",
        "--topology",
        "mesh",
        "--width",
        "10",
        "--height",
        "10",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("noc.width") && err.lines().count() == 1,
        "{err}"
    );
}
