//! The exchange formats round-trip byte for byte, reject unknown fields, and traces are valid
//! Chrome-trace JSON with one event per stage and per load segment.

use super::fixtures::bert_base;
use elk_sim::evaluate_with;
use elk_sim::trace::ChromeTrace;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

/// The text of `file` of the reference artifact's bert-base run.
fn reference(file: &str) -> String {
    std::fs::read_to_string(bert_base(file)).unwrap()
}

#[test]
fn reference_files_round_trip_byte_for_byte() {
    for file in ["schedule-basic.json", "schedule-elk-full.json"] {
        let text = reference(file);
        let s = Schedule::from_json(file, &text).unwrap();
        assert_eq!(s.to_json().unwrap(), text.trim_end(), "{file}");
    }
    let text = reference("instance.json");
    let inst = Instance::from_json("instance.json", &text).unwrap();
    let again = Instance::from_json("again", &inst.to_json().unwrap()).unwrap();
    assert_eq!(again, inst);
    assert_eq!(again.to_json().unwrap(), inst.to_json().unwrap());
}

#[test]
fn unknown_fields_and_wrong_formats_are_rejected() {
    let text = reference("schedule-basic.json");
    let extra = text.replacen("\"method\"", "\"colour\":1,\"method\"", 1);
    let err = Schedule::from_json("s.json", &extra)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("s.json: ") && err.contains("unknown field `colour`"),
        "{err}"
    );
    let wrong = text.replacen("elk-schedule/1", "elk-schedule/9", 1);
    assert!(Schedule::from_json("s.json", &wrong)
        .unwrap_err()
        .to_string()
        .contains("expected 'elk-schedule/1'"));
    let inst =
        reference("instance.json").replacen("\"sram_bytes\"", "\"sram\":1,\"sram_bytes\"", 1);
    assert!(Instance::from_json("i.json", &inst)
        .unwrap_err()
        .to_string()
        .contains("unknown field `sram`"));
}

#[test]
fn trace_has_one_event_per_stage_and_per_load_segment() {
    let inst = Instance::from_json("i", &reference("instance.json")).unwrap();
    let s = Schedule::from_json("s", &reference("schedule-basic.json")).unwrap();
    let mut trace = ChromeTrace::new(inst.clock_hz);
    evaluate_with(&inst, &s, &mut trace);
    let events: Vec<serde_json::Value> = serde_json::from_str(&trace.to_json()).unwrap();
    let complete = |tid: u64| {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == tid)
            .count()
    };
    assert_eq!(
        complete(1),
        inst.ops.len() + 1,
        "one execution event per stage"
    );
    let segments = s
        .load_work
        .iter()
        .filter(|w| w.cycles > Cycles::ZERO)
        .count();
    assert_eq!(complete(2), segments, "one HBM event per load segment");
    assert!(events.iter().all(
        |e| e["ph"] == "M" || (e["dur"].as_f64().unwrap() >= 0.0 && e["ts"].as_f64().is_some())
    ));
}
