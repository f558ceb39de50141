//! `solve` and `compare` on the reference artifact's instance.

use super::common::{
    bert_instance, elk, elk_env, elk_json, elk_ok, results, scratch, solve_to_file, SMALL_MODEL,
};

#[test]
fn compare_prints_every_method_with_the_required_fields() {
    let inst = bert_instance();
    let args = ["compare", "--instance", inst.to_str().unwrap(), "--json"];
    let j = elk_json(&args);
    let rows = j["methods"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    // Every registered heuristic once (the faithful ones first), re-timed rows beside them,
    // then `stage-lp+queue`, Elk's Ideal last.
    let registered: Vec<&str> = elk_heuristics::NAMES
        .iter()
        .chain(&elk_heuristics::VARIANTS)
        .copied()
        .collect();
    let plain: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !n.ends_with("+retime") && !["ideal", elk_solver::STAGE_QUEUE].contains(n))
        .collect();
    assert_eq!(plain, registered, "{names:?}");
    assert_eq!(
        names[names.len() - 2..],
        [elk_solver::STAGE_QUEUE, "ideal"],
        "{names:?}"
    );
    for r in rows {
        let method = r["method"].as_str().unwrap();
        for key in [
            "method",
            "makespan_ms",
            "speedup_vs_basic_x",
            "ideal_pct",
            "hbm_util_pct",
            "noc_util_pct",
            "compile_s",
        ] {
            // Every field is serialised (null when absent); each must carry a value, except
            // Ideal's NoC utilisation: Ideal is a figure, not a schedule with traffic.
            assert!(r.get(key).is_some(), "{key} missing in {r}");
            if !(method == "ideal" && key == "noc_util_pct") {
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
    assert_eq!(rows[at("basic")]["speedup_vs_basic_x"], 1.0);
    assert_eq!(rows[at("ideal")]["ideal_pct"], 100.0);
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
    let row: serde_json::Value = results(&solved.stdout);
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

/// `compare` on [`SMALL_MODEL`] with `extra`.
fn compare_small(extra: &[&str]) -> Vec<u8> {
    let mut args = vec!["compare"];
    args.extend_from_slice(&SMALL_MODEL);
    args.extend_from_slice(extra);
    elk_ok(&args).stdout
}

#[test]
fn layer_exact_gives_the_layer_optimum_and_every_heuristic_its_gap_there() {
    let limit = ["--layer-exact", "30", "--no-timings"];
    let j = results(&compare_small(&[&limit[..], &["--json"]].concat()));
    assert_eq!(j["chip"], "ipu-pod4 @ 16 TB/s HBM", "{j}");
    assert_eq!(j["hbm_tbps"], 16.0);
    assert_eq!(j["warnings"].as_array().unwrap().len(), 0, "{j}");
    let layer = &j["layer"];
    let gap = &layer["gap"];
    // Layer 0, as `--layers 0..1` cuts it: the layer's operators, not the embeddings.
    assert_eq!(layer["layer"], 0);
    assert_eq!(
        gap["instance"],
        "bert-base decode b1 kv128 on ipu-pod4, layers 0..1"
    );
    assert!(layer["operators"].as_u64().unwrap() >= 40, "{layer}");
    // One BERT layer is solved to optimality in a few seconds: the gaps are exact (here the
    // best heuristic already meets the roofline bound, so no MILP is built).
    assert_eq!(
        layer["status"], "optimal (meets the roofline bound)",
        "{layer}"
    );
    assert_eq!(gap["exact"]["stop"], "warm_start_meets_bound", "{layer}");
    assert_eq!(gap["reference"], "optimum");
    let optimum = layer["reference_ms"].as_f64().unwrap();
    assert!(optimum > 0.0);
    let rows = gap["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    for h in elk_heuristics::NAMES
        .iter()
        .chain(&elk_heuristics::VARIANTS)
    {
        assert!(names.contains(h), "{h} missing from {names:?}");
    }
    // No MILP ran: the row is named for where its schedule came from, and says so.
    assert_eq!(names.last(), Some(&"warm-start"), "{names:?}");
    let status = rows.last().unwrap()["status"].as_str().unwrap();
    assert!(status.starts_with("no MILP ran: "), "{status}");
    let mut best = f64::INFINITY;
    for r in rows {
        let (t, g) = (
            r["makespan_ms"].as_f64().unwrap(),
            r["gap_pct"].as_f64().unwrap(),
        );
        assert_eq!(r["reference_is_optimum"], true, "{r}");
        // No schedule beats the proven optimum, and each gap is its distance from it.
        assert!(
            g >= -1e-9 && t >= optimum * (1.0 - 1e-9),
            "{r} vs {optimum}"
        );
        let implied = optimum * (1.0 + g / 100.0);
        assert!((implied - t).abs() <= 1e-6 * t, "{r}: {implied} vs {t}");
        best = best.min(t);
    }
    // The optimum is a schedule found: the best row meets it.
    assert!(
        (best - optimum).abs() <= 1e-9 * optimum,
        "{best} vs {optimum}"
    );
    // Basic is not optimal on this layer, so a program that printed zero gaps fails.
    assert!(rows[0]["gap_pct"].as_f64().unwrap() > 1.0, "{}", rows[0]);
    // The table: the header names the HBM bandwidth and the plan rules (and, with
    // --no-timings, no build time), the section follows the whole model.
    let text = String::from_utf8(compare_small(&limit)).unwrap();
    assert!(
        text.starts_with("bert-base decode b1 kv128 on ipu-pod4 @ 16 TB/s HBM, clean plan rules\n"),
        "{text}"
    );
    assert!(!text.contains("Ideal is unreachable"), "{text}");
    let section = text
        .split("one layer of the same model, solved exactly")
        .nth(1)
        .unwrap_or_else(|| panic!("no layer section in {text}"));
    assert!(section.contains("limit 30 s"), "{section}");
    assert!(section.contains(": optimal"), "{section}");
    assert!(
        section.contains("reference: optimum = ") && section.contains(&format!("{optimum:.6} ms")),
        "{section}"
    );
    let basic = section
        .lines()
        .find(|l| l.starts_with("basic "))
        .unwrap_or_else(|| panic!("no basic row in {section}"));
    let printed: Vec<&str> = basic.split_whitespace().collect();
    assert_eq!(
        printed[2],
        format!("{:.3}", rows[0]["gap_pct"].as_f64().unwrap()),
        "{basic}"
    );
}

#[test]
fn the_header_warns_when_the_noc_cannot_distribute_hbm_data_fast_enough() {
    // sn40l-like: a mesh whose 8 controllers' traffic to every core (x-first routes) reaches
    // 712.348 GB/s, below its 2 TB/s HBM and the 8 TB/s override, so Ideal (loads never
    // contend) is out of reach; at 0.5 TB/s the NoC keeps up.
    let json = |extra: &[&str]| -> serde_json::Value {
        results(&compare_small(
            &[extra, &["--json", "--no-timings"]].concat(),
        ))
    };
    let fast = json(&["--chip", "sn40l-like", "--hbm-tbps", "8"]);
    let warnings = fast["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{fast}");
    let w = warnings[0].as_str().unwrap();
    assert!(w.starts_with("Ideal is unreachable"), "{w}");
    assert!(
        w.contains("712.348 GB/s") && w.contains("8.000 TB/s"),
        "{w}"
    );
    assert_eq!(fast["chip"], "sn40l-like @ 8 TB/s HBM");
    assert!(fast["hbm_distribution_tbps"].as_f64().unwrap() < 8.0);
    let native = json(&["--chip", "sn40l-like"]);
    assert_eq!(native["warnings"].as_array().unwrap().len(), 1, "{native}");
    assert_eq!(native["chip"], "sn40l-like @ 2 TB/s HBM");
    assert!(native.get("layer").is_none());
    let slow = json(&["--chip", "sn40l-like", "--hbm-tbps", "0.5"]);
    assert_eq!(slow["warnings"].as_array().unwrap().len(), 0, "{slow}");
    // In the table, the warning is the line under the header.
    let text =
        String::from_utf8(compare_small(&["--chip", "sn40l-like", "--hbm-tbps", "8"])).unwrap();
    let second = text.lines().nth(1).unwrap();
    assert_eq!(second, format!("warning: {w}"), "{text}");
}

#[test]
fn help_documents_the_main_job_and_layer_exact() {
    let top = String::from_utf8(elk_ok(&["--help"]).stdout).unwrap();
    assert!(
        top.contains(
            "With no command: the main job, `elk-opt compare --bound segment --layer-exact 10"
        ),
        "{top}"
    );
    let help = String::from_utf8(elk_ok(&["compare", "--help"]).stdout).unwrap();
    assert!(help.contains("--layer-exact <SECONDS>"), "{help}");
    // It says what the main job gives the layer: a work budget, and a proof.
    assert!(
        help.contains("The main job (no arguments) uses 10 with `--work-limit 1`, and"),
        "{help}"
    );
    // It cuts a layer from the model's graph: an instance file has none.
    let inst = bert_instance();
    let out = elk(&[
        "compare",
        "--instance",
        inst.to_str().unwrap(),
        "--layer-exact",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let bad = elk(&["compare", "--layer-exact", "0"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// The review's configuration (ux #7), its first layer: Static finds no schedule.
const NO_STATIC: [&str; 14] = [
    "compare",
    "--model",
    "llama2-7b",
    "--batch",
    "16",
    "--kv",
    "4096",
    "--chip",
    "ipu-mk2",
    "--hbm-tbps",
    "4",
    "--layers",
    "0..1",
    "--no-timings",
];

#[test]
fn a_method_without_a_schedule_says_why_in_its_row_and_pct_of_ideal_is_each_methods_own() {
    let text = String::from_utf8(elk_ok(&NO_STATIC).stdout).unwrap();
    let row = |m: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(m))
            .unwrap_or_else(|| panic!("no row {m}: {text}"))
            .to_string()
    };
    // The row says what happened and why, in place of a row of "-".
    let stat = row("static");
    assert!(
        stat.contains(" no schedule   operator l0.attn.qk: no option with hot ≤ "),
        "{text}"
    );
    assert!(!stat.contains(" - "), "{stat}");
    // % Ideal is Ideal's figure over the method's own makespan, in the table and the JSON.
    let j = elk_json(&[&NO_STATIC[..], &["--json"]].concat());
    let rows = j["methods"].as_array().unwrap();
    let ideal_ms = rows.last().unwrap()["makespan_ms"].as_f64().unwrap();
    for r in rows {
        let method = r["method"].as_str().unwrap();
        match r["makespan_ms"].as_f64() {
            Some(t) => {
                let pct = r["ideal_pct"].as_f64().unwrap();
                assert!((pct - 100.0 * ideal_ms / t).abs() < 1e-9, "{r}");
                let shown = row(method);
                assert!(shown.contains(&format!(" {pct:.1} ")), "{shown}");
            }
            None => assert!(r["ideal_pct"].is_null(), "{r}"),
        }
    }
}

/// ux #7: `solve` with a method that finds no schedule prints why and fails (exit 1), writing
/// no `-o` file; the same solve with a method that schedules exits 0.
#[test]
fn solve_without_a_schedule_fails_and_writes_nothing() {
    let dir = scratch("no-schedule");
    let out_path = dir.join("static.sched.json");
    let _ = std::fs::remove_file(&out_path);
    let path = out_path.to_str().unwrap();
    let solve = |method: &str, extra: &[&str]| {
        let args: Vec<&str> = ["solve", "--method", method]
            .iter()
            .chain(&NO_STATIC[1..])
            .chain(extra)
            .copied()
            .collect();
        elk(&args)
    };
    let out = solve("static", &["-o", path]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("no schedule found"), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: static found no schedule for llama2-7b")
            && err.contains("operator l0.attn.qk: no option with hot ≤ ")
            && err
                .trim_end()
                .ends_with(&format!("nothing written to {path}")),
        "{err}"
    );
    assert!(!out_path.exists());
    let json = solve("static", &["--json"]);
    assert_eq!(json.status.code(), Some(1));
    assert!(results(&json.stdout)["makespan_ms"].is_null());
    assert_eq!(solve("elk-dyn", &[]).status.code(), Some(0));
}

/// No schedule of `compare --json`'s results `j` beats the certified `bound` (ms), and each
/// row's gap is measured against it.
fn assert_gaps_against(j: &serde_json::Value, bound: f64) {
    for r in j["methods"].as_array().unwrap() {
        if r["method"] == "ideal" {
            continue;
        }
        let (t, g) = (
            r["makespan_ms"].as_f64().unwrap(),
            r["gap_le_pct"].as_f64().unwrap(),
        );
        assert!(g >= 0.0, "{r}");
        assert!((t / (1.0 + g / 100.0) - bound).abs() <= 1e-9 * bound, "{r}");
    }
}

#[test]
fn compare_measures_every_gap_against_the_stage_relaxation_by_default() {
    // Three Llama2-13B layers at 16 TB/s: HBM and the NoC-heavy norms balance, so the stage
    // relaxation beats the roofline; without the bound cache, so nothing else is read.
    let model = [
        "compare",
        "--model",
        "llama2-13b",
        "--num-layers",
        "3",
        "--no-cache",
        "--no-timings",
    ];
    let j = elk_json(&[&model[..], &["--json"]].concat());
    assert_eq!(j["bound_source"], "stage relaxation", "{j}");
    let (bound, roof) = (
        j["bound_ms"].as_f64().unwrap(),
        j["roofline_bound_ms"].as_f64().unwrap(),
    );
    assert!(bound > 1.02 * roof, "{bound} vs roofline {roof}");
    assert_gaps_against(&j, bound);
    let text = String::from_utf8(elk_ok(&model).stdout).unwrap();
    assert!(
        text.contains("gap ≤ %: against the certified stage relaxation lower bound"),
        "{text}"
    );
    assert!(text.contains("the roofline bound is lower: "), "{text}");
    // `--bound roofline` skips it; `--bound segment` takes the best of both LPs.
    let roofline = elk_json(&[&model[..], &["--bound", "roofline", "--json"]].concat());
    assert_eq!(roofline["bound_source"], "roofline");
    assert_eq!(roofline["bound_ms"], j["roofline_bound_ms"]);
    // Its footer points to the default first, then to the segment LP.
    let text =
        String::from_utf8(elk_ok(&[&model[..], &["--bound", "roofline"]].concat()).stdout).unwrap();
    let stage_hint = text.find("a stronger bound may come from `--bound stage`, the default");
    let segment_hint = text.find("a stronger bound may come from `--bound segment`");
    assert!(
        stage_hint.is_some() && segment_hint.is_some() && stage_hint < segment_hint,
        "{text}"
    );
    let segment = elk_json(&[&model[..], &["--bound", "segment", "--json"]].concat());
    assert!(segment["bound_ms"].as_f64().unwrap() >= bound, "{segment}");
    let text =
        String::from_utf8(elk_ok(&[&model[..], &["--bound", "segment"]].concat()).stdout).unwrap();
    assert!(text.contains("the stage relaxation is lower: "), "{text}");
}

#[test]
fn compare_bound_segment_measures_every_gap_against_the_segment_relaxation() {
    // Three Llama2-13B layers at 8 TB/s: the segment relaxation beats the roofline.
    let point = [
        "--model",
        "llama2-13b",
        "--num-layers",
        "3",
        "--hbm-tbps",
        "8",
    ];
    let model = [&["compare"][..], &point, &["--no-timings"]].concat();
    let j = elk_json(&[&model[..], &["--bound", "segment", "--json"]].concat());
    assert_eq!(j["bound_source"], "segment relaxation", "{j}");
    let (bound, roof) = (
        j["bound_ms"].as_f64().unwrap(),
        j["roofline_bound_ms"].as_f64().unwrap(),
    );
    assert!(bound > roof, "{bound} vs roofline {roof}");
    assert_gaps_against(&j, bound);
    // The default reads the bound the run above kept in the bound cache, and says so;
    // without the cache it is the roofline, and the footer says what tightens it.
    let plain = elk_json(&[&model[..], &["--json"]].concat());
    assert_eq!(plain["bound_source"], "segment relaxation", "{plain}");
    assert_eq!(plain["bound_ms"], j["bound_ms"]);
    let cached = String::from_utf8(elk_ok(&model).stdout).unwrap();
    assert!(
        cached.contains("the segment bound was read from the bound cache"),
        "{cached}"
    );
    let no_cache = [&model[..], &["--no-cache"]].concat();
    let plain = elk_json(&[&no_cache[..], &["--json"]].concat());
    assert_eq!(plain["bound_source"], "roofline");
    assert_eq!(plain["bound_ms"], plain["roofline_bound_ms"]);
    let plain = String::from_utf8(elk_ok(&no_cache).stdout).unwrap();
    assert!(
        plain.contains("a stronger bound may come from `--bound segment` (the coupled segment LP"),
        "{plain}"
    );
    let text =
        String::from_utf8(elk_ok(&[&model[..], &["--bound", "segment"]].concat()).stdout).unwrap();
    assert!(
        text.contains("gap ≤ %: against the certified segment relaxation lower bound"),
        "{text}"
    );
    assert!(text.contains("balances per NoC-per-HBM ratio"), "{text}");
    assert!(text.contains("the roofline bound is lower: "), "{text}");
    // The bound is cached beside the plan tables: a fresh cache computes and keeps it, the
    // next run reads it, and a corrupted entry is computed again, all with the same bytes.
    let cache = scratch("bound-cache");
    let env = [("XDG_CACHE_HOME", cache.to_str().unwrap())];
    let args = [&model[..], &["--bound", "segment"]].concat();
    // (The header's build time is the one wall-clock figure --no-timings keeps.)
    let body = |out: std::process::Output| {
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        text.split_once('\n').unwrap().1.to_string()
    };
    let first = body(elk_env(&args, &env));
    let bounds = cache.join("elk-opt").join("bounds");
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(&bounds)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let named = |p: &std::path::PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    // The coupled LP's entry and the stage relaxation's, named `stage-…`.
    assert_eq!(entries.len(), 2, "two bounds kept: {entries:?}");
    assert!(!named(&entries[0]).starts_with("stage-") && named(&entries[1]).starts_with("stage-"));
    assert_eq!(body(elk_env(&args, &env)), first);
    // `gap` on the same model reads that entry (its first phase says so), so its bound is
    // compare's to the bit, with no time spent on the LP.
    let gap = [
        &["gap"][..],
        &point,
        &["--time-limit", "2", "--no-lp-bound", "--json"],
    ]
    .concat();
    let g = results(&elk_env(&gap, &env).stdout);
    assert_eq!(
        g["exact"]["phases"][0]["what"],
        "segment relaxation, the coupled LP (read from the bound cache)",
        "{g}"
    );
    let row = &g["rows"][0];
    let ms_per_cycle =
        row["makespan_ms"].as_f64().unwrap() / row["makespan_cycles"].as_f64().unwrap();
    let held = g["exact"]["bounds"]["segment_cycles"].as_f64().unwrap() * ms_per_cycle;
    assert!(
        (held - bound).abs() <= 1e-9 * bound,
        "gap {held} vs compare {bound} ms"
    );
    assert!(g["reference_cycles"].as_f64().unwrap() * ms_per_cycle >= bound * (1.0 - 1e-12));
    std::fs::write(&entries[0], "{\"format\": \"elk-bound/1\"").unwrap();
    std::fs::write(&entries[1], "{\"format\": \"elk-stage-bound/1\"").unwrap();
    assert_eq!(body(elk_env(&args, &env)), first);
    assert_eq!(first, text.split_once('\n').unwrap().1);
    // Without the cache, nothing is written.
    let none = scratch("bound-no-cache");
    let out = elk_env(
        &[&args[..], &["--no-cache"]].concat(),
        &[("XDG_CACHE_HOME", none.to_str().unwrap())],
    );
    assert!(out.status.success());
    assert!(!none.join("elk-opt").exists());
}

#[test]
fn compare_and_gap_print_their_tables_as_csv_with_the_json_numbers() {
    use elk_reports::csv_text;
    let csv = String::from_utf8(compare_small(&["--csv", "--no-timings"])).unwrap();
    let j = results(&compare_small(&["--json", "--no-timings"]));
    let mut lines = csv_text::read(&csv).into_iter();
    let header = lines.next().unwrap();
    assert_eq!(
        header[..7],
        [
            "instance",
            "chip",
            "method",
            "makespan_ms",
            "gap_le_pct",
            "bound_ms",
            "bound_source"
        ]
    );
    let rows: Vec<Vec<String>> = lines.collect();
    let methods = j["methods"].as_array().unwrap();
    assert_eq!(rows.len(), methods.len());
    for (row, m) in rows.iter().zip(methods) {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert_eq!(row[0], j["instance"].as_str().unwrap());
        assert_eq!(row[1], "ipu-pod4 @ 16 TB/s HBM");
        assert_eq!(row[2], m["method"].as_str().unwrap());
        // Numbers are the JSON's to six significant digits, and no more digits than that.
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        for key in ["makespan_ms", "hbm_util_pct", "speedup_vs_basic_x"] {
            let field = &row[col(key)];
            let (v, j): (f64, f64) = (field.parse().unwrap(), m[key].as_f64().unwrap());
            assert!(
                (v - j).abs() <= 5e-6 * j.abs(),
                "{key}: {row:?} against {j}"
            );
            let digits = field.trim_start_matches(['0', '.']).replace('.', "");
            assert!(digits.len() <= 6, "{key}: {field}");
        }
        assert_eq!(row[col("bound_source")], "roofline");
    }
    // gap: the exact part's row last, with its status.
    let gap: Vec<u8> =
        elk_ok(&[&["gap"][..], &SMALL_MODEL, &["--csv", "--no-timings"]].concat()).stdout;
    let gap = String::from_utf8(gap).unwrap();
    let last = csv_text::read(&gap).pop().unwrap();
    assert!(
        ["exact-milp", "warm-start"].contains(&last[2].as_str()),
        "{gap}"
    );
    assert!(!last[10].is_empty(), "the exact row has a status: {gap}");
    // One format at a time, and the layer section is gap's.
    for bad in [&["--csv", "--json"][..], &["--csv", "--layer-exact", "1"]] {
        let out = elk(&[&["compare"][..], &SMALL_MODEL, bad].concat());
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn a_variant_behind_basic_is_explained_with_its_numbers_and_only_then() {
    // The review's second chip (ux-2 #10): a 64 x 32 mesh whose 16 controllers' 1 TB/s links
    // distribute HBM data at 8.533 TB/s, just above its 8 TB/s HBM, so a load's NoC time is
    // about its HBM time times its layout's broadcast ratio.
    let chip = super::common::reviewers_mesh()
        .replace("controllers = 8", "controllers = 16")
        .replace("link_bytes_per_s = 102.4e9", "link_bytes_per_s = 1.0e12");
    let file = scratch("behind-basic").join("fastnoc.toml");
    std::fs::write(&file, chip).unwrap();
    let args = [
        "compare",
        "--model",
        "opt-1.3b",
        "--num-layers",
        "2",
        "--chip",
        file.to_str().unwrap(),
        "--no-timings",
        "--json",
    ];
    let j = elk_json(&args);
    let rows = j["methods"].as_array().unwrap();
    let ms = |m: &str| {
        rows.iter().find(|r| r["method"] == m).unwrap()["makespan_ms"]
            .as_f64()
            .unwrap()
    };
    let notes: Vec<&str> = j["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    // Every method slower than Basic for this reason has its note, naming its slowdown.
    let behind: Vec<&str> = ["basic-fill", "elk-dyn-greedy", "elk-full-greedy"]
        .into_iter()
        .filter(|m| ms(m) > ms("basic"))
        .collect();
    assert!(!behind.is_empty(), "{j}");
    for m in &behind {
        let note = notes
            .iter()
            .find(|n| n.starts_with(&format!("{m} is ")))
            .unwrap_or_else(|| panic!("no note for {m}: {notes:?}"));
        assert!(
            note.contains(&format!("{:.2}x slower than Basic", ms(m) / ms("basic"))),
            "{note}"
        );
        assert!(note.contains("NoC cycles per HBM cycle"), "{note}");
        assert!(note.contains("B_NoC,dist 8.533 TB/s"), "{note}");
    }
    // The main job's configuration has no such method: no note.
    let main = elk_json(&["compare", "--no-timings", "--json"]);
    assert_eq!(main["notes"].as_array().unwrap().len(), 0, "{main}");
}

#[test]
fn a_stage_lp_queue_that_cannot_fit_says_so_not_that_time_ran_out() {
    // One Llama2-7B prefill layer at batch 1: the stage LP's heaviest options leave a load
    // no stage in the queue, before any queue LP runs (in 0.2 s, not a 60-s limit).
    let j = elk_json(&[
        "compare",
        "--model",
        "llama2-7b",
        "--batch",
        "1",
        "--mode",
        "prefill",
        "--layers",
        "0..1",
        "--no-timings",
        "--json",
    ]);
    let row = j["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == elk_solver::STAGE_QUEUE)
        .unwrap_or_else(|| panic!("no {} row in {j}", elk_solver::STAGE_QUEUE));
    assert_eq!(row["status"], "no schedule found", "{row}");
    let notes = row["notes"].to_string();
    assert!(notes.contains("no queue fits the LP's options"), "{notes}");
    assert!(!notes.contains("did not finish"), "{notes}");
}

#[test]
fn stage_lp_queue_meets_the_stage_bound_where_the_relaxation_is_integral() {
    // Two Llama2-7B layers at batch 1: the stage LP weighs one option per operator, and its
    // options queued come within 0.01 % of its own bound, where every Elk heuristic is more
    // than 5 % above it (docs/heuristics.md, "stage-lp+queue").
    let point = [
        "--model",
        "llama2-7b",
        "--batch",
        "1",
        "--num-layers",
        "2",
        "--no-timings",
        "--json",
    ];
    let j = elk_json(&[&["compare"][..], &point].concat());
    assert_eq!(j["bound_source"], "stage relaxation", "{j}");
    let rows = j["methods"].as_array().unwrap();
    let gap = |name: &str| {
        rows.iter()
            .find(|r| r["method"] == name)
            .and_then(|r| r["gap_le_pct"].as_f64())
            .unwrap_or_else(|| panic!("no gap for {name} in {j}"))
    };
    assert!(gap(elk_solver::STAGE_QUEUE) < 0.01, "{j}");
    for elk in ["elk-dyn", "elk-full", "elk-full+retime"] {
        assert!(gap(elk) > 5.0, "{elk}: {j}");
    }
    // `solve --method` gives the same schedule.
    let solved = elk_json(&[&["solve", "--method", elk_solver::STAGE_QUEUE][..], &point].concat());
    let row = rows
        .iter()
        .find(|r| r["method"] == elk_solver::STAGE_QUEUE)
        .unwrap();
    assert_eq!(
        solved["makespan_cycles"], row["makespan_cycles"],
        "{solved}"
    );
}
