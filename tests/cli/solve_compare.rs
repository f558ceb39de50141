//! `solve` and `compare` on the reference artifact's instance.

use super::common::{elk, elk_env, elk_json, shared};

#[test]
fn compare_prints_every_method_with_the_required_fields() {
    let inst = shared().join("reference/bert-base/instance.json");
    let args = ["compare", "--instance", inst.to_str().unwrap(), "--json"];
    let j = elk_json(&args);
    let rows = j.as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(names, ["basic", "static", "elk-dyn", "elk-full", "ideal"]);
    for r in rows {
        for key in [
            "method",
            "makespan_ms",
            "speedup_vs_basic",
            "pct_of_ideal",
            "hbm_util",
            "noc_util",
            "compile_s",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
    }
    assert_eq!(rows[0]["speedup_vs_basic"], 1.0);
    assert_eq!(rows[4]["pct_of_ideal"], 100.0);
    assert!(
        rows[3]["makespan_ms"].as_f64() <= rows[2]["makespan_ms"].as_f64(),
        "Elk-Full ≤ Elk-Dyn"
    );
    // With --no-timings, two runs are byte-identical.
    let quiet = [
        "compare",
        "--instance",
        inst.to_str().unwrap(),
        "--json",
        "--no-timings",
    ];
    let (one, two) = (elk(&quiet), elk(&quiet));
    assert!(one.status.success());
    assert_eq!(one.stdout, two.stdout);
    // …and with one rayon thread (Elk-Full evaluates its orders in parallel).
    let single = elk_env(&quiet, &[("RAYON_NUM_THREADS", "1")]);
    assert_eq!(single.stdout, one.stdout);
}

#[test]
fn a_solved_schedule_is_accepted_by_simulate() {
    let inst = shared().join("reference/bert-base/instance.json");
    let dir = std::env::temp_dir().join(format!("elk-cli-solve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("basic.json");
    let row = elk_json(&[
        "solve",
        "--method",
        "basic",
        "--instance",
        inst.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    let sim = elk_json(&[
        "simulate",
        "--instance",
        inst.to_str().unwrap(),
        "--schedule",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(sim["valid"], true);
    assert_eq!(sim["makespan_cycles"], row["makespan_cycles"]);
    assert!(
        sim.get("method_claim_cycles").is_none(),
        "the method reports the simulator's makespan"
    );
    let bad = elk(&[
        "solve",
        "--method",
        "elk-magic",
        "--instance",
        inst.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
}
