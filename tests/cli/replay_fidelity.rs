//! Is the stage model's makespan achievable? Real schedules replayed with paced loads agree
//! with the phased stage model (elk_sim::phased) within 1 %, and SPEC §4's NoC row is the
//! optimistic term (docs/detailed.md, "Is the stage model achievable?").

use super::common::{elk_ok, results, scratch};

#[test]
fn paced_replays_of_real_schedules_agree_with_the_phased_stage_model() {
    let dir = scratch("fidelity");
    let inst = dir.join("l13-2.json");
    let p = |x: &std::path::Path| x.to_str().unwrap().to_string();
    // Two Llama2-13B layers at the default 16 TB/s: NoC-heavy stages with HBM-bound loads.
    // The instance has SPEC §4's row, so the methods' schedules are SPEC's and the judge's
    // makespan is SPEC's; `--compare` also gives the phased row's.
    elk_ok(&[
        "instance",
        "--model",
        "llama2-13b",
        "--num-layers",
        "2",
        "--noc-row",
        "spec",
        "-o",
        &p(&inst),
    ]);
    let mut worst_spec: f64 = 0.0;
    for method in ["basic", "static", "elk-dyn", "elk-full"] {
        let sched = dir.join(format!("{method}.json"));
        elk_ok(&[
            "solve",
            "--instance",
            &p(&inst),
            "--method",
            method,
            "-o",
            &p(&sched),
        ]);
        let j = results(
            &elk_ok(&[
                "simulate",
                "--instance",
                &p(&inst),
                "--schedule",
                &p(&sched),
                "--detailed",
                "--compare",
                "--json",
            ])
            .stdout,
        );
        assert_eq!(j["loads"], "paced", "{method}: paced is the default");
        assert_eq!(j["other_loads"]["loads"], "greedy", "{method}");
        let get = |k: &str| j[k].as_f64().unwrap_or_else(|| panic!("{k} in {j}"));
        let (paced, spec, phased) = (
            get("makespan_cycles"),
            get("analytic_makespan_cycles"),
            get("phased_makespan_cycles"),
        );
        assert_eq!(
            get("spec_makespan_cycles"),
            spec,
            "{method}: the judge is SPEC's"
        );
        let off = |a: f64, b: f64| 100.0 * (a / b - 1.0);
        assert!(
            off(paced, phased).abs() <= 1.0,
            "{method}: paced {paced} vs phased {phased} ({:+.2} %)",
            off(paced, phased)
        );
        assert!(
            phased >= spec,
            "{method}: the phased row only adds: {phased} < {spec}"
        );
        worst_spec = worst_spec.max(off(paced, spec));
    }
    // The SPEC §4 row is what is optimistic: some schedule's paced replay is well above it.
    assert!(
        worst_spec > 2.0,
        "largest paced vs stage model: {worst_spec:.2} %"
    );
}

#[test]
fn a_phased_instance_is_solved_exactly_in_its_own_row_and_judged_by_it() {
    let dir = scratch("fidelity-phased");
    let p = |x: &std::path::Path| x.to_str().unwrap().to_string();
    // Llama2-13B's operators 2..9 (the attention norm's reduction through the QKV
    // projection, whose weights load beside the norm's short operators): small enough that
    // the MILP proves either row optimal far inside the limit however loaded the machine
    // (measured at load 12 on 2 cores: SPEC 53,596.3 cycles in 0.45 s, phased 54,152.5 in
    // 0.58 s, against 60 s), large enough that no heuristic meets the roofline bound, so the
    // MILP runs and proves it. `row` "default" builds without `--noc-row`.
    let build = |row: &str| {
        let out = dir.join(format!("{row}.json"));
        let mut args = vec!["instance", "--model", "llama2-13b", "--ops", "2..9"];
        if row != "default" {
            args.extend(["--noc-row", row]);
        }
        let out_s = p(&out);
        args.extend(["-o", &out_s]);
        elk_ok(&args);
        out
    };
    let (spec, phased) = (build("spec"), build("phased"));
    let spec_text = std::fs::read_to_string(&spec).unwrap();
    assert!(!spec_text.contains("noc_row") && spec_text.contains(", SPEC §4 NoC row"));
    let phased_text = std::fs::read_to_string(&phased).unwrap();
    assert!(phased_text.contains(r#""noc_row":"phased""#));
    // Phased is the default: without the flag the same bytes.
    let default = build("default");
    assert_eq!(std::fs::read_to_string(&default).unwrap(), phased_text);
    let exact = |inst: &std::path::Path, out: &std::path::Path| {
        let j = results(
            &elk_ok(&[
                "solve",
                "--instance",
                &p(inst),
                "--exact",
                "--time-limit",
                "60",
                "-o",
                &p(out),
                "--json",
            ])
            .stdout,
        );
        assert_eq!(j["status"], "optimal", "{j}");
        // Proven by the MILP's search, not by a heuristic meeting the roofline bound.
        assert_eq!(j["stop"], "completed", "{j}");
        j["makespan_cycles"].as_f64().unwrap()
    };
    let (s, f) = (
        exact(&spec, &dir.join("spec.sched.json")),
        exact(&phased, &dir.join("phased.sched.json")),
    );
    // The phased row only adds, and it bites here (the QKV weights load beside the norm).
    assert!(f > s * (1.0 + 1e-6), "phased optimum {f} vs SPEC {s}");
    // The simulator judges the phased schedule in the instance's row: the exact makespan.
    let j = results(
        &elk_ok(&[
            "simulate",
            "--instance",
            &p(&phased),
            "--schedule",
            &p(&dir.join("phased.sched.json")),
            "--json",
        ])
        .stdout,
    );
    assert!(
        (j["makespan_cycles"].as_f64().unwrap() - f).abs() <= 1e-6 * f,
        "{j}"
    );
}
