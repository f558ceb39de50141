//! `elk-opt plans` on the model the scheduling issues use by default.

use super::common::{elk_env, elk_json, elk_ok, scratch};

#[test]
fn llama2_13b_on_ipu_pod4_has_options_for_every_operator() {
    let j = elk_json(&[
        "plans",
        "--model",
        "llama2-13b",
        "--chip",
        "ipu-pod4",
        "--json",
    ]);
    let ops = j["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 1729);
    for op in ops {
        assert!(op["options"].as_u64().unwrap() >= 1, "{}", op["name"]);
        assert!(op["best_exec_cycles"].as_f64().unwrap() > 0.0);
        // HBM bytes = c_min · cores.
        assert_eq!(
            op["hbm_bytes"].as_u64(),
            Some(op["c_min_bytes"].as_u64().unwrap() * 5888)
        );
    }
    let qkv = ops.iter().find(|o| o["name"] == "l0.attn.qkv").unwrap();
    assert!(
        qkv["c_min_bytes"].as_u64().unwrap() * 5888 >= 5120 * 15360 * 2,
        "the whole weight is loaded"
    );
}

#[test]
fn one_operator_prints_its_option_table() {
    let j = elk_json(&[
        "plans",
        "--model",
        "bert-base",
        "--batch",
        "8",
        "--kv",
        "512",
        "--chip",
        "ipu-mk2",
        "--op",
        "l0.attn.qkv",
        "--json",
    ]);
    let ops = j["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 1);
    let table = ops[0]["option_table"].as_array().unwrap();
    assert_eq!(table.len() as u64, ops[0]["options"].as_u64().unwrap());
    assert!(!table.is_empty());
    for o in table {
        let (cold, hot) = (
            o["cold_bytes"].as_u64().unwrap(),
            o["hot_bytes"].as_u64().unwrap(),
        );
        assert!(cold <= hot, "{o}");
        assert!(hot <= 638_976, "{o}");
    }
}

/// `plans` on BERT-base B8 KV512 on ipu-mk2 (the reference artifact's setting; 0.2 s).
const BERT_ON_MK2: [&str; 9] = [
    "plans",
    "--model",
    "bert-base",
    "--batch",
    "8",
    "--kv",
    "512",
    "--chip",
    "ipu-mk2",
];

#[test]
fn plan_tables_do_not_depend_on_the_thread_count() {
    let args: Vec<&str> = BERT_ON_MK2
        .iter()
        .chain(&["--json", "--no-cache"])
        .copied()
        .collect();
    let one = elk_env(&args, &[("RAYON_NUM_THREADS", "1")]);
    let many = elk_env(&args, &[("RAYON_NUM_THREADS", "4")]);
    assert!(one.status.success() && many.status.success());
    assert!(!one.stdout.is_empty());
    assert_eq!(one.stdout, many.stdout);
}

/// The plan cache: the first run enumerates and writes every table, the second reads them all
/// and prints the same tables; `--no-cache` neither reads nor writes it.
#[test]
fn a_second_run_reads_the_plan_cache() {
    let home = scratch("plan-cache").join("xdg");
    let _ = std::fs::remove_dir_all(&home);
    let xdg = home.to_str().unwrap();
    let run = |extra: &[&str]| {
        let all: Vec<&str> = BERT_ON_MK2
            .iter()
            .chain(&["--timings"])
            .chain(extra)
            .copied()
            .collect();
        let out = elk_env(&all, &[("XDG_CACHE_HOME", xdg)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let (tables, timings) = text.rsplit_once("timings:").unwrap();
        (tables.to_string(), timings.to_string())
    };
    let (uncached, t) = run(&["--no-cache"]);
    assert!(t.contains(" 0 from the plan cache"), "{t}");
    assert!(!home.exists(), "--no-cache wrote {}", home.display());
    let (first, t) = run(&[]);
    assert!(t.contains(" 0 from the plan cache"), "{t}");
    let shapes: usize = t
        .split(" unique operator shapes")
        .next()
        .unwrap()
        .rsplit('(')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(shapes > 3, "{t}");
    let files = std::fs::read_dir(home.join("elk-opt/plans"))
        .unwrap()
        .count();
    assert_eq!(files, shapes, "one entry per shape");
    let (second, t) = run(&[]);
    assert!(
        t.contains(&format!("{shapes} from the plan cache, 0 enumerated")),
        "{t}"
    );
    assert_eq!(second, first);
    assert_eq!(second, uncached);
}

#[test]
fn timings_count_the_plans_costed_and_skipped() {
    let all: Vec<&str> = BERT_ON_MK2
        .iter()
        .chain(&["--timings", "--no-cache", "--json"])
        .copied()
        .collect();
    let j = elk_json(&all);
    let t = &j["timings"];
    let n = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{k} in {t}"));
    let (enumerated, fitting) = (n("enumerated_plans"), n("fitting_plans"));
    let (costed, skipped) = (n("costed_plans"), n("skipped_plans"));
    assert_eq!(costed + skipped, fitting, "{t}");
    assert!(fitting <= enumerated && enumerated > 0, "{t}");
    // The bound does skip most plans (bert-base on ipu-mk2: about 95 %), and some are priced.
    assert!(skipped > costed && costed > 0, "{t}");
    let text_args: Vec<&str> = BERT_ON_MK2
        .iter()
        .chain(&["--timings", "--no-cache"])
        .copied()
        .collect();
    let text = String::from_utf8(elk_ok(&text_args).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "enumeration: {enumerated} plans, {fitting} fit in SRAM: {costed} costed, {skipped} skipped by their bound"
        )),
        "{text}"
    );
}
