//! `elk-sim`: the judge of every method (SPEC §6). [`validate`] checks a schedule against
//! every rule of the stage model (SPEC §4); [`evaluate`] computes each stage's duration, the
//! term that binds it, the makespan and the Fig-18 metrics, emitting events to a
//! [`trace::TraceSink`].
//!
//! ```
//! use elk_model::instance::{Instance, InstanceOp, OpOption, LoadOrder, NamedOrder};
//! use elk_model::schedule::{fill_load_work, Schedule, Status};
//! let opt = OpOption { cold: 10, hot: 20, exec_cycles: 100.0, comm_cycles: 10.0, noc_per_hbm: 0.5 };
//! let op = |name: &str, h: f64| InstanceOp { name: name.into(), hbm_cycles: h, options: vec![opt.clone()], flops: None };
//! let inst = Instance {
//!     format: "elk-instance/1".into(), name: "two ops".into(), sram_bytes: 64, clock_hz: 1e9,
//!     load_order: LoadOrder::Named(NamedOrder::Fixed), preload_window: None,
//!     ops: vec![op("a", 30.0), op("b", 150.0)],
//! };
//! let work = fill_load_work(&inst, &[0, 0], &[0, 1], &[0, 0]).unwrap();
//! let sched = Schedule { format: "elk-schedule/1".into(), instance: inst.name.clone(), method: "doc".into(),
//!     options: vec![0, 0], load_order: vec![0, 1], load_work: work, makespan_cycles: 0.0,
//!     status: Status::Heuristic, lower_bound_cycles: None };
//! assert!(elk_sim::validate(&inst, &sched).is_empty());
//! let ev = elk_sim::evaluate(&inst, &sched);
//! // a loads in the prologue (30 cycles); b's 150 HBM cycles must all land in stage 1 (while
//! // a runs for 100), so stage 1 stretches to 150 (HBM-bound); b then runs for 100.
//! assert_eq!(ev.makespan_cycles, 30.0 + 150.0 + 100.0);
//! ```
#![deny(missing_docs)]

pub mod detailed;
mod evaluate;
pub mod trace;
mod validate;

pub use evaluate::{evaluate, evaluate_with, Binding, Breakdown, Evaluation, StageEval};
pub use validate::{validate, Violation};

/// The judge in one call: the simulator's makespan of a valid schedule, or its first
/// violation (for callers that only need the verdict).
pub fn judged_makespan(
    inst: &elk_model::instance::Instance,
    s: &elk_model::schedule::Schedule,
) -> Result<f64, Violation> {
    match validate(inst, s).into_iter().next() {
        Some(v) => Err(v),
        None => Ok(evaluate(inst, s).makespan_cycles),
    }
}
