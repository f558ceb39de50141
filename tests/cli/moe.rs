//! `elk-opt moe`: the policy table, its JSON, reproducibility with a seed, and refusals.

use super::common::{elk, elk_env, elk_json, elk_ok, envelope};

const SMALL: [&str; 9] = [
    "moe",
    "--num-layers",
    "2",
    "--batch",
    "4",
    "--kv",
    "256",
    "--steps",
    "6",
];

/// One layer, one token per layer.
const ONE_TOKEN: [&str; 6] = ["--num-layers", "1", "--batch", "1", "--kv", "256"];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    SMALL.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn the_table_has_every_policy_and_the_json_every_step() {
    let out = elk_ok(&args(&["--chip", "ipu-mk2"]));
    let text = String::from_utf8_lossy(&out.stdout);
    for p in [
        "load-all",
        "on-demand",
        "predicted-2",
        "oracle",
        "gap ≤ %",
        "E·(1 − (1 − k/E)^n)",
    ] {
        assert!(text.contains(p), "{p}: {text}");
    }
    let r = elk_json(&args(&[
        "--chip",
        "ipu-mk2",
        "--json",
        "--policies",
        "on-demand,load-all",
    ]));
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6);
    // load-all preloads every expert of the 2 layers.
    for s in steps {
        let p = s["policies"].as_array().unwrap();
        assert_eq!(p.len(), 3, "the oracle is added");
        assert_eq!(p[1]["loaded_experts"], 16);
        assert!(p[2]["makespan_ms"].as_f64() <= p[0]["makespan_ms"].as_f64());
    }
    assert_eq!(r["summary"][2]["policy"], "oracle");
}

#[test]
fn a_seed_gives_the_same_bytes_and_another_seed_other_steps() {
    let a = elk_env(
        &args(&["--json", "--routing", "zipf:1.2"]),
        &[("RAYON_NUM_THREADS", "1")],
    );
    let b = elk_env(
        &args(&["--json", "--routing", "zipf:1.2"]),
        &[("RAYON_NUM_THREADS", "2")],
    );
    assert!(a.status.success() && a.stdout == b.stdout);
    let c = elk(&args(&["--json", "--routing", "zipf:1.2", "--seed", "2"]));
    assert_ne!(a.stdout, c.stdout);
}

#[test]
fn bad_input_is_one_line() {
    for (extra, says) in [
        (
            vec!["--model", "llama2-7b"],
            "--model llama2-7b: not an MoE model",
        ),
        (
            vec!["--routing", "skewed"],
            "expected balanced, uniform, zipf:S",
        ),
        (
            vec!["--policies", "lazy"],
            "policy 'lazy': expected load-all",
        ),
        (
            vec!["--policies", "predicted-8"],
            "policy 'predicted-8': the model has 8 experts per layer, so predicting 8 preloads \
             every one of them (that is load-all)",
        ),
        (
            vec!["--methods", "magic"],
            "--methods magic: unknown heuristic",
        ),
        (vec!["--hbm-tbps", "-2"], "--hbm-tbps -2: must be positive"),
        (
            vec!["--routing", "trace:/nonexistent/t.json"],
            "/nonexistent/t.json",
        ),
    ] {
        let out = elk(&args(&extra));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.lines().next().unwrap_or("").contains(says),
            "{extra:?}: {err}"
        );
    }
}

#[test]
fn another_routing_names_the_uniform_expectation_as_a_comparison() {
    let line = |extra: &[&str]| {
        let out = elk_ok(&args(&[&["--policies", "on-demand"][..], extra].concat()));
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines().nth(1).unwrap_or("").to_string()
    };
    let uniform = line(&[]);
    assert!(uniform.contains("(uniform routing expects E·"), "{uniform}");
    let zipf = line(&["--routing", "zipf:1.2"]);
    assert!(
        zipf.contains("(for comparison, uniform routing would give E·"),
        "{zipf}"
    );
    let one = elk_ok(&[&["moe", "--steps", "1"][..], &ONE_TOKEN].concat());
    let text = String::from_utf8_lossy(&one.stdout);
    assert!(text.contains(", 1 step (seed 1)"), "{text}");
    assert!(text.contains(", 1 token per layer:"), "{text}");
}

#[test]
fn a_negative_count_is_refused_as_such() {
    let out = elk(&["moe", "--steps", "-3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("'-3': expected a whole number ≥ 1"), "{err}");
}

#[test]
fn a_trace_routes_every_step_as_recorded() {
    let dir = super::common::scratch("moe-trace");
    let path = dir.join("trace.json");
    // 2 layers × 4 tokens, all tokens on experts 0 and 1: 2 experts per layer.
    let layer = "[[0,1],[1,0],[0,1],[0,1]]";
    std::fs::write(
        &path,
        format!(
            r#"{{"format": "elk-routing-trace/1", "experts": 8, "top_k": 2, "steps": [[{layer}, {layer}]]}}"#
        ),
    )
    .unwrap();
    let routing = format!("trace:{}", path.display());
    let r = elk_json(&args(&["--json", "--routing", &routing]));
    for s in r["steps"].as_array().unwrap() {
        assert_eq!(s["touched_experts"], 4);
        // predicted-2 knows the trace's two experts: nothing on demand, nothing idle.
        let p = s["policies"].as_array().unwrap();
        assert_eq!(p[2]["loaded_experts"], 4);
        assert_eq!(p[2]["makespan_ms"], p[3]["makespan_ms"]);
    }
}

#[test]
fn a_policys_instance_is_written_for_the_exact_solver() {
    let dir = super::common::scratch("moe-emit");
    let d = dir.to_str().unwrap();
    elk_ok(&args(&["--policies", "on-demand", "--emit-instances", d]));
    let on_demand = std::fs::read_to_string(dir.join("step0-on-demand.json")).unwrap();
    let oracle = std::fs::read_to_string(dir.join("step0-oracle.json")).unwrap();
    // On demand, the experts' loads carry their own window; the oracle's do not.
    let released = |text: &str| {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["ops"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o.get("preload_window").is_some())
            .count()
    };
    assert!(released(&on_demand) > 0, "no released load");
    assert_eq!(released(&oracle), 0);
    // The simulator reads it, and a schedule of it is judged against its windows.
    let path = dir.join("step0-on-demand.json");
    let p = path.to_str().unwrap();
    let r = super::common::elk_json(&["solve", "--method", "elk-dyn", "--instance", p, "--json"]);
    assert!(r["makespan_ms"].as_f64().unwrap() > 0.0, "{r}");
}

#[test]
fn compare_names_the_routing_of_an_moe_model_in_its_header() {
    let header = |model: &str| {
        let out = elk_ok(
            &[
                &["compare", "--model", model, "--no-timings"][..],
                &ONE_TOKEN,
            ]
            .concat(),
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines().next().unwrap_or("").to_string()
    };
    assert_eq!(
        header("mixtral-8x7b"),
        "mixtral-8x7b decode b1 kv256 on ipu-pod4 @ 16 TB/s HBM, balanced routing, clean plan rules"
    );
    assert_eq!(
        header("llama2-7b"),
        "llama2-7b decode b1 kv256 on ipu-pod4 @ 16 TB/s HBM, clean plan rules"
    );
}

/// ux-3 #4: on demand at 4 TB/s, the greedy Elk-Dyn started an expert's load before its
/// router (an internal error); now both greedy heuristics schedule every policy's instance.
#[test]
fn the_greedy_heuristics_schedule_released_loads() {
    let out = elk_ok(&args(&[
        "--hbm-tbps",
        "4",
        "--methods",
        "elk-dyn-greedy,elk-full-greedy",
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("on-demand"), "{text}");
}

#[test]
fn resident_policies_print_their_set_and_give_it_in_the_json() {
    let extra = [
        "--model",
        "olmoe-1b-7b",
        "--routing",
        "zipf:1.2",
        "--policies",
        "on-demand,resident-8,resident-auto",
    ];
    let out = elk_ok(&args(&extra));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "resident-8: 8 of 128 experts resident",
        "the others on-demand",
        "certified gap 0 %",
        "resident-auto: ",
        "chosen by mean ms on 4 calibration steps",
        "with a resident policy's experts kept as it keeps them",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let r = elk_json(&args(&[&extra[..], &["--json"]].concat()));
    let resident = r["resident"].as_array().unwrap();
    assert_eq!(resident.len(), 2);
    assert_eq!(resident[0]["resident"].as_array().unwrap().len(), 8);
    assert!(
        resident[1]["calibration"]["candidates"]
            .as_array()
            .unwrap()
            .len()
            >= 2
    );
    // Without a resident policy the key is absent (the JSON of earlier runs is unchanged).
    let plain = elk_json(&args(&["--model", "olmoe-1b-7b", "--json"]));
    assert!(plain.get("resident").is_none());
    let bad = elk(&args(&["--policies", "resident-0"]));
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn an_moe_model_runs_on_a_tensix_chip_whose_sram_cannot_hold_its_lm_head() {
    // OLMoE's LM head (50,304 × 2,048) exceeds the n150's 96 MB in fp16: as a dense model's,
    // it runs as column chunks (said once), and the experts' gate and up run separately.
    let out = elk_ok(&[
        "moe",
        "--model",
        "olmoe-1b-7b",
        "--chip",
        "wormhole-n150",
        "--num-layers",
        "1",
        "--steps",
        "1",
        "--kv",
        "128",
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("lm_head: its weight").count(), 1, "{stderr}");
    let results = super::common::results(&out.stdout);
    let policies = results["steps"][0]["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 4, "{results}");
    let bound = results["steps"][0]["bound_ms"].as_f64().unwrap();
    for p in policies {
        assert!(
            p["makespan_ms"].as_f64().is_some_and(|t| t >= bound),
            "{results}"
        );
    }
}

#[test]
fn bound_stage_certifies_every_step_against_the_stage_relaxation_below_its_oracle() {
    // OLMoE, two layers, skewed routing: the stage relaxation beats the roofline on these
    // steps, so `--bound stage` must move the bound and say so.
    let point = [
        "moe",
        "--model",
        "olmoe-1b-7b",
        "--num-layers",
        "2",
        "--steps",
        "2",
        "--routing",
        "zipf:1.2",
    ];
    let run = |bound: &str| {
        envelope(&elk_ok(&[&point[..], &["--bound", bound, "--json"]].concat()).stdout)
    };
    let (roofline, stage) = (run("roofline"), run("stage"));
    assert_eq!(stage["config"]["bound"], "stage");
    let steps = |r: &serde_json::Value| r["results"]["steps"].as_array().unwrap().clone();
    for (r, s) in steps(&roofline).iter().zip(steps(&stage)) {
        assert_eq!(r["bound_source"], "roofline", "{r}");
        assert_eq!(s["bound_source"], "stage relaxation", "{s}");
        let (low, high) = (
            r["bound_ms"].as_f64().unwrap(),
            s["bound_ms"].as_f64().unwrap(),
        );
        assert!(high > low * 1.001, "stage {high} vs roofline {low}");
        // Below every policy of the step, the oracle included.
        for p in s["policies"].as_array().unwrap() {
            assert!(p["makespan_ms"].as_f64().unwrap() >= high, "{p} vs {high}");
        }
    }
    let text =
        String::from_utf8(elk_ok(&[&point[..], &["--bound", "stage"]].concat()).stdout).unwrap();
    assert!(
        text.contains("the step's certified stage relaxation bound − 1"),
        "{text}"
    );
    // The default stays the instant roofline.
    assert_eq!(
        elk_json(&[&point[..], &["--json"]].concat()),
        roofline["results"]
    );
}
