//! `solve` and `compare` on the reference artifact's instance.

use super::common::{bert_instance, elk, elk_env, elk_json, elk_ok, scratch, solve_to_file};

#[test]
fn compare_prints_every_method_with_the_required_fields() {
    let inst = bert_instance();
    let args = ["compare", "--instance", inst.to_str().unwrap(), "--json"];
    let j = elk_json(&args);
    let rows = j.as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    // Every registered heuristic once (the faithful ones first), re-timed rows beside them,
    // Elk's Ideal last.
    let registered: Vec<&str> = elk_heuristics::NAMES
        .iter()
        .chain(&elk_heuristics::VARIANTS)
        .copied()
        .collect();
    let plain: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !n.ends_with("+retime") && *n != "ideal")
        .collect();
    assert_eq!(plain, registered, "{names:?}");
    assert_eq!(names.last(), Some(&"ideal"), "{names:?}");
    for r in rows {
        let method = r["method"].as_str().unwrap();
        for key in [
            "method",
            "makespan_ms",
            "speedup_vs_basic",
            "pct_of_ideal",
            "hbm_util",
            "noc_util",
            "compile_s",
        ] {
            // Every field is serialised (null when absent); each must carry a value, except
            // Ideal's NoC utilisation: Ideal is a figure, not a schedule with traffic.
            assert!(r.get(key).is_some(), "{key} missing in {r}");
            if !(method == "ideal" && key == "noc_util") {
                assert!(!r[key].is_null(), "{key} is null in {r}");
            }
        }
        // Every method found a schedule (or, for Ideal, a figure): a positive makespan.
        let ms = r["makespan_ms"].as_f64().unwrap();
        assert!(ms.is_finite() && ms > 0.0, "{r}");
    }
    let at = |name: &str| names.iter().position(|n| *n == name).unwrap();
    let ms = |name: &str| rows[at(name)]["makespan_ms"].as_f64().unwrap();
    // Every schedule stands beside the certified roofline bound: gap ≤ x %, and the gaps
    // order as the makespans do (one bound for all). Ideal is a figure: no gap.
    let gaps: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r["method"] != "ideal")
        .map(|r| {
            (
                r["makespan_ms"].as_f64().unwrap(),
                r["gap_le_pct"].as_f64().unwrap(),
            )
        })
        .collect();
    for &(t, g) in &gaps {
        assert!(g >= -1e-9, "gap {g} below 0 (makespan {t})");
        let bound = t / (1.0 + g / 100.0);
        let first = gaps[0].0 / (1.0 + gaps[0].1 / 100.0);
        assert!((bound - first).abs() <= 1e-6 * first, "{bound} vs {first}");
    }
    assert!(rows[at("ideal")].get("gap_le_pct").is_none());
    assert_eq!(rows[at("basic")]["speedup_vs_basic"], 1.0);
    assert_eq!(rows[at("ideal")]["pct_of_ideal"], 100.0);
    assert!(
        ms("elk-full") <= ms("elk-dyn"),
        "Elk-Full {} ≤ Elk-Dyn {}",
        ms("elk-full"),
        ms("elk-dyn")
    );
    // With --no-timings, two runs are byte-identical.
    let quiet = [
        "compare",
        "--instance",
        inst.to_str().unwrap(),
        "--json",
        "--no-timings",
    ];
    let text = elk_ok(&[
        "compare",
        "--instance",
        inst.to_str().unwrap(),
        "--no-timings",
    ]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("gap ≤ %"), "{text}");
    assert!(text.contains("certified roofline lower bound"), "{text}");
    let (one, two) = (elk_ok(&quiet), elk(&quiet));
    assert!(!one.stdout.is_empty());
    assert_eq!(one.stdout, two.stdout);
    // …and with one rayon thread (Elk-Full evaluates its orders in parallel).
    let single = elk_env(&quiet, &[("RAYON_NUM_THREADS", "1")]);
    assert_eq!(single.stdout, one.stdout);
}

#[test]
fn a_solved_schedule_is_accepted_by_simulate() {
    let inst = bert_instance();
    let out = scratch("solve").join("basic.json");
    let solved = solve_to_file("basic", &inst, &out, &["--json"]);
    let row: serde_json::Value = serde_json::from_slice(&solved.stdout).unwrap();
    let sim = elk_json(&[
        "simulate",
        "--instance",
        inst.to_str().unwrap(),
        "--schedule",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(sim["valid"], true);
    assert!(row["makespan_cycles"].is_number(), "{row}");
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
