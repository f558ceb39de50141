//! Faithful Elk, checked on the reference artifact's own instances (`tests/fixtures/reference/`:
//! bert-base, Llama2-7B, OPT-6.7B): each of our faithful methods must reach, under SPEC §4,
//! at most 1.003 × the best of the artifact's schedules for that method under SPEC §4 (the
//! converted `schedule-*.json`, judged by our simulator). Elk-Full is run and judged with the
//! load order opened to `free`, as its schedules need. Where the artifact left no schedule for a
//! method (bert-base's Static and Elk-Dyn) its reported latency is the reference.

use super::fixtures::reference_run;
use elk_heuristics::{by_name, ideal, NAMES};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::Budget;
use elk_stage::schedule::Schedule;

/// The tolerance of the issue: ours ≤ 1.003 × the artifact's best.
const TOLERANCE: f64 = 1.003;

/// Known misses, each with the ratio it must not exceed (a regression guard, not a pass; see
/// docs/heuristics-vs-reference.md):
/// - bert-base's Basic: that (older) artifact run took every operator's largest cold layout,
///   the Llama2-7B and OPT-6.7B runs the smallest, which is what our Basic does (checked
///   below);
/// - bert-base's Elk-Full: the artifact's best run there is delay-load, whose load placement
///   we do not reproduce.
const KNOWN_MISSES: [(&str, &str, f64); 2] = [
    ("bert-base", "basic", 1.099),
    ("bert-base", "elk-full", 1.0040),
];

fn free(inst: &Instance) -> Instance {
    let mut f = inst.clone();
    f.load_order = LoadOrder::Named(NamedOrder::Free);
    f
}

/// The artifact's schedule files for each method.
fn files(method: &str) -> &'static [&'static str] {
    match method {
        "basic" => &["schedule-basic.json"],
        "static" => &[
            "schedule-static-min-cold.json",
            "schedule-static-max-cold.json",
        ],
        "elk-dyn" => &["schedule-elk-dyn.json", "schedule-elk-dyn-theta0.9.json"],
        "elk-full" => &["schedule-elk-full.json"],
        _ => &[],
    }
}

/// The schedule files of [`files`] that the artifact's run of a model never wrote (its
/// shared reference directory has none of them either). Every other one must be in the
/// fixtures, and none of these may be, so removing a schedule from `tests/fixtures/` fails
/// the test instead of quietly dropping a reference.
const NOT_IN_THE_ARTIFACT: [(&str, &str); 5] = [
    ("bert-base", "schedule-static-min-cold.json"),
    ("bert-base", "schedule-static-max-cold.json"),
    ("bert-base", "schedule-elk-dyn.json"),
    ("bert-base", "schedule-elk-dyn-theta0.9.json"),
    ("llama2-7", "schedule-elk-dyn-theta0.9.json"),
];

/// The best of the artifact's schedules for `method` in its run of `model`, judged under
/// SPEC §4 (ms); `None` when the artifact wrote none for it.
fn artifact_best(inst: &Instance, model: &str, method: &str) -> Option<f64> {
    let dir = reference_run(model);
    let mut best: Option<f64> = None;
    for name in files(method) {
        let path = dir.join(name);
        let absent = NOT_IN_THE_ARTIFACT.contains(&(model, *name));
        assert_eq!(
            path.is_file(),
            !absent,
            "{}: {}",
            path.display(),
            if absent {
                "listed in NOT_IN_THE_ARTIFACT, yet present: take it off the list"
            } else {
                "missing: the artifact wrote it, and this test needs it"
            }
        );
        if absent {
            continue;
        }
        let s = Schedule::read(&path).unwrap();
        assert_eq!(
            elk_sim::validate(inst, &s),
            vec![],
            "{name}: the artifact's schedule validates"
        );
        let ms = elk_sim::evaluate(inst, &s).makespan_ms;
        best = Some(best.map_or(ms, |b: f64| b.min(ms)));
    }
    best
}

/// bert-base's reported latencies where it left no schedule (ms, `reference/README.md`).
fn reported(model: &str, method: &str) -> Option<f64> {
    match (model, method) {
        ("bert-base", "static") => Some(0.969_701_189_702_794_1),
        ("bert-base", "elk-dyn") => Some(0.917_279_208_108_232_9),
        _ => None,
    }
}

fn ours(inst: &Instance, method: &str) -> f64 {
    let m = by_name(method).unwrap();
    let run = elk_sim::run_judged(inst, m.as_ref(), &Budget::default()).unwrap();
    assert!(
        run.claim_differs().is_none(),
        "{method}: the claim is the judge's"
    );
    let t = run
        .makespan()
        .unwrap_or_else(|| panic!("{method}: no schedule"));
    inst.ms(t)
}

#[test]
fn faithful_methods_match_or_beat_the_artifact_on_its_own_instances() {
    let mut table = String::new();
    let mut failures = Vec::new();
    for model in ["bert-base", "llama2-7", "opt-6.7"] {
        let d = reference_run(model);
        let inst = Instance::read(&d.join("instance.json")).unwrap();
        let open = free(&inst);
        let mut by_method = Vec::new();
        for method in NAMES {
            let judge_on = if method == "elk-full" { &open } else { &inst };
            let reference = artifact_best(judge_on, model, method)
                .or_else(|| reported(model, method))
                .unwrap_or_else(|| panic!("{model}: no artifact figure for {method}"));
            let t = ours(judge_on, method);
            let ratio = t / reference;
            table.push_str(&format!(
                "{model:10} {method:9} ours {t:.6} ms  artifact {reference:.6} ms  ratio {ratio:.4}\n"
            ));
            let allowed = KNOWN_MISSES
                .iter()
                .find(|(m, k, _)| *m == model && *k == method)
                .map_or(TOLERANCE, |x| x.2);
            if ratio > allowed {
                failures.push(format!("{model} {method}: {ratio:.4} > {allowed}"));
            }
            by_method.push(t);
        }
        // Elk-Full ≤ Elk-Dyn by construction (its candidates include Elk-Dyn's runs); both
        // are in `by_method` in NAMES order, Elk-Full judged on the free-order instance.
        assert_eq!(NAMES[2..], ["elk-dyn", "elk-full"]);
        let (dyn_ms, full_ms) = (by_method[2], by_method[3]);
        assert!(
            full_ms <= dyn_ms,
            "{model}: Elk-Full {full_ms} > Elk-Dyn {dyn_ms}"
        );
    }
    eprintln!("{table}");
    assert!(failures.is_empty(), "{failures:?}\n{table}");
}

#[test]
fn ideal_is_the_artifacts_on_bert_base() {
    // Σ fastest exec + the first load in the prologue, exactly as the artifact's.
    let inst = Instance::read(&reference_run("bert-base").join("instance.json")).unwrap();
    let ideal_ms = inst.ms(ideal(&inst).cycles.unwrap());
    assert!((ideal_ms - 0.909_020_5).abs() < 1e-6, "{ideal_ms}");
}

/// Which layout each of the artifact's Basic schedules took, per operator: the `largest` or
/// smallest cold, and the largest hot footprint at that cold.
fn basic_takes(model: &str, largest: bool) {
    let d = reference_run(model);
    let inst = Instance::read(&d.join("instance.json")).unwrap();
    let s = Schedule::read(&d.join("schedule-basic.json")).unwrap();
    for (op, &o) in inst.ops.iter().zip(&s.options) {
        let colds = op.options.iter().map(|x| x.cold);
        let cold = if largest { colds.max() } else { colds.min() }.unwrap();
        let hot = op
            .options
            .iter()
            .filter(|x| x.cold == cold)
            .map(|x| x.hot)
            .max();
        assert_eq!(
            (op.options[o].cold, Some(op.options[o].hot)),
            (cold, hot),
            "{model}: {}",
            op.name
        );
    }
}

#[test]
fn the_artifacts_basic_takes_the_smallest_cold_layout_on_llama_and_opt() {
    basic_takes("llama2-7", false);
    basic_takes("opt-6.7", false);
}

#[test]
fn the_artifacts_older_bert_base_basic_takes_the_largest() {
    basic_takes("bert-base", true);
}

/// Each load's first stage with work.
fn starts(s: &Schedule) -> std::collections::BTreeMap<usize, usize> {
    let mut st = std::collections::BTreeMap::new();
    for w in s.load_work.iter().filter(|w| w.cycles.get() > 0.0) {
        let e = st.entry(w.op.index()).or_insert(w.stage.index());
        *e = (*e).min(w.stage.index());
    }
    st
}

#[test]
fn decisions_equal_the_artifacts_on_llama_and_opt() {
    // Basic: every option and every load's start stage, as the artifact decided; Elk-Dyn:
    // every option (its loads start elsewhere: the artifact stretches them at θ = 0.5 with its
    // 5 GB/s NoC constant, ours at 5.5 do not stretch).
    for model in ["llama2-7", "opt-6.7"] {
        let d = reference_run(model);
        let inst = Instance::read(&d.join("instance.json")).unwrap();
        for (method, file, same_starts) in [
            ("basic", "schedule-basic.json", true),
            ("elk-dyn", "schedule-elk-dyn.json", false),
        ] {
            let theirs = Schedule::read(&d.join(file)).unwrap();
            let m = by_name(method).unwrap();
            let solved = m.schedule(&inst, &Budget::default()).unwrap();
            let ours = solved.outcome.schedule().unwrap();
            let differ = ours
                .options
                .iter()
                .zip(&theirs.options)
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!(
                differ, 0,
                "{model} {method}: options differ on {differ} operators"
            );
            if same_starts {
                assert_eq!(
                    starts(ours),
                    starts(&theirs),
                    "{model} {method}: start stages"
                );
            }
        }
    }
}
