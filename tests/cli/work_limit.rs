//! `--work-limit N`: the same command with the same budget gives the same bytes (stdout,
//! `--json`, the `-o` schedule) on a rerun and with one rayon thread as with four, on an
//! instance where the budget cuts the search; and a budget that is zero, negative, not a
//! number or given without an exact method is refused in one line with exit code 2.
//! docs/exact.md, "Reproducible certificates".

use super::common::{elk, elk_env, results, scratch, small_instance};
use std::path::PathBuf;

fn temp(name: &str) -> PathBuf {
    scratch("work-limit").join(name)
}

/// Runs `args` (which write the schedule to `schedule`) once per entry of `threads` (rayon
/// threads); each run's stdout and schedule file must be the same bytes. Returns the stdout.
fn same_bytes(args: &[&str], schedule: &PathBuf, threads: &[&str]) -> Vec<u8> {
    let run = |threads: &str| {
        let _ = std::fs::remove_file(schedule);
        let out = elk_env(args, &[("RAYON_NUM_THREADS", threads)]);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.stdout, std::fs::read(schedule).unwrap())
    };
    let first = run(threads[0]);
    for t in &threads[1..] {
        assert!(
            run(t) == first,
            "{args:?}: {t} threads differ from {}",
            threads[0]
        );
    }
    first.0
}

/// Default threads twice, one thread once: a rerun and a change of threads.
const RERUN_AND_ONE_THREAD: [&str; 3] = ["4", "4", "1"];

/// 24 operators of a Llama2-13B layer, free order, without a warm start or the LP relaxation
/// (whose options, queued, meet its bound here: no MILP would run): the MILP needs well over
/// 10 branch-and-bound nodes to prove its optimum, so a budget of 10 stops it.
#[test]
fn the_same_budget_gives_the_same_bytes_where_it_cuts_the_search() {
    let inst = small_instance(&temp("ops24.json"), "llama2-13b", "0..24");
    let sched = temp("ops24.sched.json");
    let (i, s) = (inst.to_str().unwrap(), sched.to_str().unwrap());
    // Both commands take the same instance, budget and schedule file.
    let budget = [
        "--instance",
        i,
        "--no-warm-start",
        "--no-lp-bound",
        "--work-limit",
        "10",
        "--time-limit",
        "300",
        "--no-timings",
        "-o",
        s,
    ];
    let with =
        |head: &[&'static str]| -> Vec<&str> { head.iter().copied().chain(budget).collect() };
    let solve = with(&["solve", "--exact", "--json"]);
    let j = results(&same_bytes(&solve, &sched, &RERUN_AND_ONE_THREAD));
    // The budget cut the search (a test that passes when nothing is cut proves nothing).
    assert_eq!(j["stop"], "work_limit", "{j}");
    assert_eq!(j["status"], "feasible", "{j}");
    assert_eq!(j["work_limit"], 10, "{j}");
    assert_eq!(j["work_used"], 10, "{j}");
    assert_eq!(j["work_unit"], "nodes", "{j}");
    assert_eq!(j["cut_by_time"], false, "{j}");
    assert!(j["gap_pct"].as_f64().unwrap() > 0.0, "not proven: {j}");
    let notes = j["notes"].to_string();
    assert!(
        notes.contains("stopped by the budget: reproducible"),
        "{notes}"
    );
    // `gap`'s table, the text output, is the same bytes too.
    let gap = with(&["gap"]);
    let text = String::from_utf8(same_bytes(&gap, &sched, &RERUN_AND_ONE_THREAD)).unwrap();
    assert!(text.contains("exact status work limit (gap"), "{text}");
    assert!(
        text.contains("10 of 10 branch-and-bound nodes used; stopped by the budget"),
        "{text}"
    );
}

/// The main job's layer budget (`gap --layers 0..1 --time-limit 10 --work-limit 1`), here on
/// Llama2-7B and without the heuristics' warm start (`stage-lp+queue` meets the bound there
/// too): the LP relaxation runs to its end under the budget, its options queued meet the
/// bound, so the layer is proven optimal with no MILP built, the same bytes with four threads
/// and one (docs/exact.md, "The LP relaxation's options"). Under `--layer-exact 1` alone the
/// LP got 0.25 s and the section was a look.
#[test]
fn the_main_jobs_layer_budget_proves_a_decode_layer_by_the_lp_relaxations_options() {
    let sched = temp("layer7b.sched.json");
    let args = [
        "gap",
        "--model",
        "llama2-7b",
        "--layers",
        "0..1",
        "--time-limit",
        "10",
        "--work-limit",
        "1",
        "--no-warm-start",
        "--no-timings",
        "-o",
        sched.to_str().unwrap(),
    ];
    let text = String::from_utf8(same_bytes(&args, &sched, &["4", "1"])).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("exact-milp "))
        .unwrap_or_else(|| panic!("no exact row in {text}"));
    assert!(
        row.ends_with("no MILP ran: the LP relaxation's options, queued and re-timed, meet the roofline bound, so that schedule is optimal"),
        "{row}"
    );
    assert!(text.contains("reference: optimum = "), "{text}");
    assert!(
        text.contains("0 of 1 branch-and-bound nodes used; finished within the budget"),
        "{text}"
    );
    // The schedule written is the proven one: its makespan is the row's, at a 0 % gap.
    let printed: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(printed[2], "0.000", "{row}");
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&sched).unwrap()).unwrap();
    assert_eq!(s["method"], "exact-milp", "{s}");
    assert_eq!(s["status"], "optimal", "{s}");
}

/// Two OPT-1.3B layers, free order: the MILP's root (not a node) takes far more than the
/// 10,000 simplex iterations a budget of one node allows, so the budget's iteration cap stops
/// it at the root, at the same iteration every run (it once ran until the time limit killed
/// the worker, and said "NOT reproducible"). Two runs, one thread and four.
#[test]
fn a_budget_stops_a_long_root_at_the_same_simplex_iteration() {
    let sched = temp("opt2.sched.json");
    let args = [
        "solve",
        "--exact",
        "--model",
        "opt-1.3b",
        "--num-layers",
        "2",
        "--work-limit",
        "1",
        "--time-limit",
        "600",
        "--no-timings",
        "--json",
        "-o",
        sched.to_str().unwrap(),
    ];
    let j = results(&same_bytes(&args, &sched, &["4", "1"]));
    assert_eq!(j["stop"], "work_limit", "{j}");
    assert_eq!(j["iterations_capped"], true, "{j}");
    assert_eq!(j["cut_by_time"], false, "{j}");
    assert!(
        j["notes"]
            .to_string()
            .contains("stopped by the budget's cap of 10000 simplex iterations per node"),
        "{j}"
    );
}

/// A time limit that fires before the budget: said, and said to be not reproducible (the MILP
/// runs: without the LP relaxation, whose options prove this instance at once).
#[test]
fn a_time_limit_before_the_budget_says_the_result_is_not_reproducible() {
    let inst = small_instance(&temp("ops24.json"), "llama2-13b", "0..24");
    let out = elk(&[
        "solve",
        "--exact",
        "--instance",
        inst.to_str().unwrap(),
        "--no-warm-start",
        "--no-lp-bound",
        "--work-limit",
        "100000",
        "--time-limit",
        "0.05",
        "--no-timings",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = results(&out.stdout);
    assert_eq!(j["cut_by_time"], true, "{j}");
    assert_eq!(j["work_limit"], 100000, "{j}");
    assert!(j["notes"].to_string().contains("NOT reproducible"), "{j}");
}

#[test]
fn a_budget_of_zero_a_negative_one_a_non_number_or_one_without_an_exact_method_is_refused() {
    let inst = small_instance(&temp("ops8.json"), "llama2-13b", "0..8");
    let i = inst.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["solve", "--exact", "--instance", i, "--work-limit", "0"],
            "--work-limit 0: must be a positive whole number",
        ),
        (
            vec!["solve", "--exact", "--instance", i, "--work-limit", "-5"],
            "--work-limit -5: must be a positive whole number",
        ),
        (
            vec!["gap", "--instance", i, "--work-limit", "many"],
            "--work-limit many: must be a positive whole number",
        ),
        (
            vec![
                "solve",
                "--method",
                "elk-full",
                "--instance",
                i,
                "--work-limit",
                "5",
            ],
            "--work-limit cannot be used with --method",
        ),
        (
            vec!["compare", "--model", "llama2-7b", "--work-limit", "5"],
            "--work-limit 5 without --layer-exact",
        ),
        (
            vec![
                "compare",
                "--model",
                "llama2-7b",
                "--layer-exact",
                "5",
                "--work-limit",
                "0",
            ],
            "--work-limit 0: must be a positive whole number",
        ),
        (
            vec![
                "gap",
                "--instance",
                i,
                "--backend",
                "smt",
                "--work-limit",
                "5",
            ],
            "--work-limit with --backend smt",
        ),
    ];
    for (args, says) in cases {
        let out = elk(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

/// A model too large for the MILP (the whole OPT-1.3B): the budget counts window MILPs, and
/// the window search stops after them the same way on every run (two runs, ≈ 20 s each: one
/// with four rayon threads, one with one).
#[test]
fn a_window_budget_stops_the_whole_model_search_at_the_same_window() {
    let sched = temp("opt.sched.json");
    let s = sched.to_str().unwrap();
    let args = [
        "solve",
        "--exact",
        "--model",
        "opt-1.3b",
        "--work-limit",
        "6",
        "--time-limit",
        "600",
        "--no-timings",
        "--json",
        "-o",
        s,
    ];
    let j = results(&same_bytes(&args, &sched, &["4", "1"]));
    assert_eq!(j["stop"], "window_search", "{j}");
    assert_eq!(
        j["search"]["stop"], "work-limit",
        "the budget cut the search: {j}"
    );
    assert_eq!(j["search"]["solved_windows"], 6, "{j}");
    assert_eq!(j["work_used"], 6, "{j}");
    assert_eq!(j["work_unit"], "windows", "{j}");
    assert_eq!(j["cut_by_time"], false, "{j}");
}
