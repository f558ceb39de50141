//! The request layer: the keyword form Python sends gives the CLI's defaults, and each
//! refusal names what it refuses.

use elk_app::request::keys::{self, CompareMoeKeys, InstanceKeys, MoeKeys};
use elk_app::request::{
    ExactKeys, InstanceInput, InstanceRequest, ModelSource, MoeRequest, SweepRequest,
};

fn instance_keys(json: &str) -> Result<InstanceRequest, String> {
    keys::parse::<InstanceKeys>("instance", json)
        .and_then(|k| k.request())
        .map_err(|e| e.to_string())
}

#[test]
fn no_keyword_is_the_built_in_default() {
    assert_eq!(instance_keys("{}").unwrap(), InstanceRequest::default());
    let moe = keys::parse::<MoeKeys>("moe", "{}")
        .unwrap()
        .request()
        .unwrap();
    assert_eq!(moe, MoeRequest::default());
    let exact = keys::parse::<ExactKeys>("exact", "{}")
        .unwrap()
        .settings()
        .unwrap();
    assert_eq!(exact.time_limit_s, 60.0);
    let d = keys::defaults();
    assert_eq!(d["model"], "llama2-13b");
    assert_eq!(d["batch"], 32);
    assert_eq!(d["load_order"], "free");
    assert_eq!(d["noc_row"], "phased");
    assert_eq!(d["backend"], "milp");
    assert_eq!(d["moe_model"], "mixtral-8x7b");
}

#[test]
fn keywords_become_the_fields_the_flags_set() {
    let r = instance_keys(
        r#"{"model": {"kind": "import", "source": "g.json", "compat": "reference"},
            "chip": {"given": "ipu-mk2", "hbm_tbps": 8, "keys": [["sram_bytes_per_core", 1000]]},
            "mode": "prefill", "batch": 4, "kv": 128, "load_order": 3, "ops": "0..5",
            "noc_row": "spec", "expert_parallel": true}"#,
    )
    .unwrap();
    assert_eq!(r.model.source, ModelSource::Import("g.json".into()));
    assert_eq!((r.shape.batch, r.shape.kv), (4, 128));
    assert_eq!(r.chip.hbm_tbps, Some(8.0));
    assert_eq!(r.chip.keys.len(), 1);
    assert_eq!(r.cut.ops.as_deref(), Some("0..5"));
    assert!(r.choices.expert_parallel);
    let config = serde_json::to_value(r.config()).unwrap();
    assert_eq!(config["import"], "g.json");
    assert_eq!(config["compat"], "reference");
    assert_eq!(config["plan_rules"], "reference");
    assert_eq!(config["load_order"]["max_displacement"], 3);
    assert_eq!(config["chip_keys"]["sram_bytes_per_core"], 1000);
    // The CLI's config has no chip_keys: without keys it is left out.
    let plain = serde_json::to_value(InstanceRequest::default().config()).unwrap();
    assert!(plain.get("chip_keys").is_none());
}

#[test]
fn refusals_name_what_they_refuse() {
    let refused = |json: &str| instance_keys(json).unwrap_err();
    let unknown = refused(r#"{"bogus": 1}"#);
    assert!(
        unknown.starts_with("instance: unknown field `bogus`, expected one of"),
        "{unknown}"
    );
    assert!(!unknown.contains("column"), "{unknown}");
    assert!(refused(r#"{"noc_row": "x"}"#).starts_with("noc_row 'x': one of phased, spec"));
    assert!(refused(r#"{"layers": "0..1", "ops": "0..2"}"#).contains("--layers and --ops"));
    assert!(
        refused(r#"{"model": {"kind": "import", "source": "g.json", "dtype": "fp8"}}"#)
            .starts_with("--dtype applies to a zoo model")
    );
    assert!(
        refused(r#"{"model": {"compat": "reference"}}"#).starts_with("--compat is the importer")
    );
    assert!(refused(r#"{"model": {"kind": "x"}}"#).starts_with("model kind 'x'"));
    assert!(refused(r#"{"load_order": "sometimes"}"#).contains("load order 'sometimes'"));
    let exact = |json: &str| {
        keys::parse::<ExactKeys>("exact", json)
            .and_then(|k| k.settings())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        exact(r#"{"time_limit": 0}"#),
        "--time-limit 0: must be a positive number of seconds"
    );
    assert!(exact(r#"{"backend": "gurobi"}"#).starts_with("backend 'gurobi': one of milp"));
    assert!(exact(r#"{"work_limit": 0}"#).starts_with("--work-limit 0: must be a positive"));
    assert!(exact(r#"{"backend": "smt", "work_limit": 5}"#).contains("--backend smt"));
    let moe = keys::parse::<MoeKeys>("moe", r#"{"steps": 0}"#)
        .unwrap()
        .request();
    assert_eq!(
        moe.unwrap_err().to_string(),
        "--steps 0: must be at least 1"
    );
}

#[test]
fn compare_routing_is_refused_where_the_cli_refuses_it() {
    let routing = |json: &str| {
        keys::parse::<CompareMoeKeys>("routing", json)
            .and_then(|k| k.request())
            .map_err(|e| e.to_string())
    };
    let ok = routing(
        r#"{"instance": {"model": {"source": "olmoe-1b-7b"}, "batch": 8}, "routing": "zipf:1.2"}"#,
    )
    .unwrap();
    assert_eq!(
        (ok.model.as_str(), ok.batch, ok.routing.as_str()),
        ("olmoe-1b-7b", 8, "zipf:1.2")
    );
    for (json, why) in [
        (r#"{"routing": "uniform"}"#, "not with --instance"),
        (
            r#"{"instance": {"ops": "0..3"}, "routing": "uniform"}"#,
            "not with --layers, --ops",
        ),
        (
            r#"{"instance": {"mode": "prefill"}, "routing": "uniform"}"#,
            "not with --mode prefill",
        ),
    ] {
        assert!(routing(json).unwrap_err().contains(why), "{json}");
    }
    let file = MoeRequest::of_compare(&InstanceInput::File("i.json".into()), "uniform", 1, 1, &[]);
    assert!(file.is_err());
}

#[test]
fn a_sweep_names_its_output_after_its_grid() {
    let named = |grid: &str| {
        SweepRequest {
            grid: grid.into(),
            ..SweepRequest::default()
        }
        .output()
    };
    assert_eq!(named("fig17"), std::path::PathBuf::from("fig17.jsonl"));
    assert_eq!(named("grids/my.toml"), std::path::PathBuf::from("my.jsonl"));
    assert_eq!(
        named("figure = \"vs-hbm\"\nmodels = []\n"),
        std::path::PathBuf::from("grid.jsonl")
    );
}
