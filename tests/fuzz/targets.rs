//! The fuzz targets: each runs a parser (and what consumes its output) on mutated seeds.

use super::common::fixtures;
use super::mutate::{apply, apply_bytes, edits, focus};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::import::{import_onnx_bytes, import_str, Compat, ImportOptions};
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use proptest::prelude::*;
use proptest::test_runner::Config;

fn cases() -> u32 {
    std::env::var("ELK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn config() -> Config {
    Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    }
}

/// An error must be one line.
fn one_line(e: impl std::fmt::Display) -> Result<(), TestCaseError> {
    let s = e.to_string();
    prop_assert!(!s.contains('\n'), "multi-line error: {s}");
    prop_assert!(!s.is_empty());
    Ok(())
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(rel)).unwrap()
}

#[test]
fn importer_never_panics() {
    let seeds: Vec<String> = [
        "decode_attn.json",
        "decode_kv.json",
        "prefill_attn.json",
        "prefill_kv.json",
        "llama2-13-layers.json",
    ]
    .iter()
    .map(|f| read(&format!("models/{f}")))
    .collect();
    proptest!(config(), |(k in 0usize..5, e in edits(), reference in any::<bool>())| {
        let text = apply(&seeds[k], &e);
        let mut opts = ImportOptions::new(Mode::Decode, 8, 512);
        if reference {
            opts.compat = Compat::Reference;
        }
        if let Err(err) = import_str("fuzz.json", &text, &opts) {
            one_line(err)?;
        }
    });
}

/// The ONNX fixtures (tests/data/onnx/) and the mode each imports in.
fn onnx_seeds() -> Vec<(Vec<u8>, Mode)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/onnx");
    [
        ("tiny-llama-decode", Mode::Decode),
        ("tiny-llama-prefill", Mode::Prefill),
        ("tiny-gpt2-decode", Mode::Decode),
        ("tiny-gpt2-prefill", Mode::Prefill),
        ("tiny-vit", Mode::Prefill),
        ("unsupported-op", Mode::Prefill),
        ("missing-shape", Mode::Prefill),
        ("tiny-llama-gqa-decode", Mode::Decode),
        ("tiny-llama-gqa-prefill", Mode::Prefill),
        ("tiny-gpt2-tied-decode", Mode::Decode),
        ("tiny-llama3-sdpa-decode", Mode::Decode),
        ("expanded-kv", Mode::Decode),
    ]
    .iter()
    .map(|(f, m)| (std::fs::read(dir.join(format!("{f}.onnx"))).unwrap(), *m))
    .collect()
}

#[test]
fn onnx_importer_never_panics() {
    let seeds = onnx_seeds();
    proptest!(config(), |(k in 0usize..seeds.len(), e in edits(), near_nodes in any::<bool>())| {
        let (seed, mode) = &seeds[k];
        // Half the cases replace bytes in the first 64 KiB, where an exported file keeps
        // its nodes.
        let e = if near_nodes { focus(&e, 1 << 16) } else { e };
        let bytes = apply_bytes(seed, &e);
        if let Err(err) = import_onnx_bytes("fuzz.onnx", &bytes, &ImportOptions::new(*mode, 2, 64)) {
            one_line(err)?;
        }
    });
}

/// Every prefix of the small files, and 2,000 spread over a large one, is an error of one
/// line (or, for the empty prefix of nothing, a model without a graph).
#[test]
fn truncated_onnx_files_are_one_line_errors() {
    let seeds = onnx_seeds();
    for (seed, mode) in &seeds {
        let opts = ImportOptions::new(*mode, 2, 64);
        let step = (seed.len() / 2000).max(1);
        for cut in (0..seed.len()).step_by(step) {
            let err = import_onnx_bytes("cut.onnx", &seed[..cut], &opts).unwrap_err();
            let s = err.to_string();
            assert!(
                !s.contains('\n') && s.starts_with("cut.onnx: "),
                "{cut}: {s}"
            );
        }
    }
}

/// Routing logs (`routing import`): the fixture's CSV and JSON lines; a trace that imports
/// is written and must read back as the same trace.
#[test]
fn routing_import_never_panics() {
    use elk_model::routing::import::{import, ImportOptions};
    use elk_model::routing::RoutingTrace;
    let seeds: Vec<String> = ["olmoe-synthetic.csv", "olmoe-synthetic.jsonl"]
        .iter()
        .map(|f| read(&format!("routing/{f}")))
        .collect();
    proptest!(config(), |(k in 0usize..2, e in edits(), batch in 1u64..6)| {
        let options = ImportOptions { batch, experts: None };
        match import("fuzz.log", &apply(&seeds[k], &e), &options) {
            Ok(i) => {
                let back = RoutingTrace::from_json("fuzz.log", &i.trace.to_json());
                prop_assert_eq!(back.ok(), Some(i.trace));
            }
            Err(err) => one_line(err)?,
        }
    });
}

#[test]
fn chip_toml_never_panics() {
    let seeds: Vec<String> = ["ipu-mk2", "ipu-pod4", "sn40l-like", "tt-blackhole-like"]
        .iter()
        .map(|p| ChipSpec::preset(p).unwrap().to_toml())
        .collect();
    proptest!(config(), |(k in 0usize..4, e in edits())| {
        if let Err(err) = ChipSpec::from_toml_str("fuzz.toml", &apply(&seeds[k], &e)) {
            one_line(err)?;
        }
    });
}

#[test]
fn grid_toml_never_panics() {
    let seeds: Vec<&str> = elk_app::grid::PRESETS
        .iter()
        .filter_map(|p| elk_app::grid::preset(p))
        .collect();
    proptest!(config(), |(k in 0usize..8, e in edits())| {
        match elk_app::grid::Grid::from_toml("fuzz.toml", &apply(seeds[k], &e)) {
            Ok(g) => { let _ = g.cells().len(); }
            Err(err) => one_line(err)?,
        }
    });
}

/// A small instance and a Basic schedule of it, as seeds.
fn small_pair() -> (String, String) {
    use elk_stage::instance::{InstanceOp, LoadOrder, NamedOrder, OpOption};
    use elk_stage::method::{Budget, Method};
    let opt = |cold, hot, exec: f64| OpOption::new(cold, hot, exec, exec / 4.0, 0.5);
    let inst = Instance {
        format: "elk-instance/1".into(),
        name: "fuzz".into(),
        sram_bytes: elk_stage::units::Bytes(100),
        clock_hz: 1e9,
        load_order: LoadOrder::Named(NamedOrder::Free),
        preload_window: Some(2),
        noc_row: elk_stage::instance::NocRow::Spec,
        ops: (0..4)
            .map(|i| InstanceOp {
                name: format!("op{i}"),
                hbm_cycles: elk_stage::units::Cycles(40.0 + 10.0 * i as f64),
                options: vec![opt(10, 40, 80.0), opt(30, 60, 60.0)].into(),
                flops: Some(1e6),
                preload_window: None,
                parallel: None,
            })
            .collect(),
    };
    let s = elk_heuristics::Basic
        .schedule(&inst, &Budget::default())
        .unwrap();
    (
        inst.to_json().unwrap(),
        s.outcome.schedule().unwrap().to_json().unwrap(),
    )
}

/// Judges a parsed pair the way `simulate` does: validate; evaluate and replay when valid.
fn judge(inst: &Instance, s: &Schedule) {
    if elk_sim::validate(inst, s).is_empty() {
        let _ = elk_sim::evaluate(inst, s);
        let chip = ChipSpec::preset("ipu-mk2").unwrap();
        let cfg = elk_sim::detailed::DetailedConfig::from_chip(&chip);
        let _ = elk_sim::detailed::simulate_detailed(inst, s, &chip, &cfg);
    }
}

#[test]
fn instance_and_schedule_never_panic() {
    let (inst_text, sched_text) = small_pair();
    let inst = Instance::from_json("seed", &inst_text).unwrap();
    let sched = Schedule::from_json("seed", &sched_text).unwrap();
    proptest!(config(), |(e in edits(), which in 0u8..2)| {
        if which == 0 {
            match Instance::from_json("fuzz.json", &apply(&inst_text, &e)) {
                Ok(i) => judge(&i, &sched),
                Err(err) => one_line(err)?,
            }
        } else {
            match Schedule::from_json("fuzz.json", &apply(&sched_text, &e)) {
                Ok(s) => judge(&inst, &s),
                Err(err) => one_line(err)?,
            }
        }
    });
}

#[test]
fn reference_schedules_never_panic() {
    let inst =
        Instance::from_json("instance.json", &read("reference/bert-base/instance.json")).unwrap();
    let seed = read("reference/bert-base/schedule-basic.json");
    proptest!(config(), |(e in edits())| {
        match Schedule::from_json("fuzz.json", &apply(&seed, &e)) {
            Ok(s) => {
                if elk_sim::validate(&inst, &s).is_empty() {
                    let _ = elk_sim::evaluate(&inst, &s);
                }
            }
            Err(err) => one_line(err)?,
        }
    });
}
