//! The reference artifact's Basic and Elk-Full decisions on its own instance
//! (`tests/fixtures/reference/bert-base/`), evaluated under SPEC §4 — the numbers its README
//! states.

use super::fixtures::bert_base as reference;
use elk_sim::{evaluate, validate, Violation};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

#[test]
fn basic_schedule_gives_the_stated_makespan() {
    let inst = Instance::read(&reference("instance.json")).unwrap();
    let s = Schedule::read(&reference("schedule-basic.json")).unwrap();
    assert_eq!(validate(&inst, &s), vec![]);
    let ev = evaluate(&inst, &s);
    assert!(
        (ev.makespan_cycles - Cycles(1_315_372.809_696_5)).abs() < Cycles(1e-3),
        "{}",
        ev.makespan_cycles
    );
    assert!((ev.makespan_ms - 0.992_734_2).abs() < 1e-6);
}

#[test]
fn elk_full_schedule_needs_a_free_load_order() {
    let mut inst = Instance::read(&reference("instance.json")).unwrap();
    let s = Schedule::read(&reference("schedule-elk-full.json")).unwrap();
    let fixed = validate(&inst, &s);
    assert!(
        fixed
            .iter()
            .any(|v| matches!(v, Violation::LoadOrderPolicy { .. })),
        "{fixed:?}"
    );
    inst.load_order = LoadOrder::Named(NamedOrder::Free);
    assert_eq!(validate(&inst, &s), vec![]);
    let ev = evaluate(&inst, &s);
    assert!(
        (ev.makespan_cycles - Cycles(1_207_768.436_798_3)).abs() < Cycles(1e-3),
        "{}",
        ev.makespan_cycles
    );
    // Execution-bound: the lower bound max(Σ H, Σ min exec) = 1,204,447.56 cycles.
    let sum_min_exec: Cycles = inst
        .ops
        .iter()
        .map(|o| {
            o.options
                .iter()
                .map(|x| x.exec_cycles)
                .fold(Cycles(f64::INFINITY), Cycles::min)
        })
        .sum();
    assert!((sum_min_exec - Cycles(1_204_447.56)).abs() < Cycles(0.01));
    assert!(ev.makespan_cycles >= sum_min_exec);
}
