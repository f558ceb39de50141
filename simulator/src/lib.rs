//! `elk-sim`: the judge of every method (SPEC §6). [`validate()`] checks a schedule against
//! every rule of the stage model (SPEC §4); [`evaluate()`] computes each stage's duration, the
//! term that binds it, the makespan and the Fig-18 metrics, emitting events to a
//! [`trace::TraceSink`]; [`run_judged`] is the one way to run a method and judge it;
//! [`detailed`] replays a schedule on a modelled network (links, ports, HBM controllers);
//! [`phased`] is the stage model with the NoC row the paced replay measures.
//!
//! ```
//! use elk_stage::instance::{Instance, OpOption};
//! use elk_stage::schedule::{fill_load_work, Schedule};
//! use elk_stage::units::{Bytes, Cycles, OpId, Stage};
//! let opt = OpOption::new(10, 20, 100.0, 10.0, 0.5);
//! let inst = Instance::builder("two ops", Bytes(64), 1e9)
//!     .op("a", Cycles(30.0), vec![opt.clone()])
//!     .op("b", Cycles(150.0), vec![opt])
//!     .build()
//!     .unwrap();
//! let order = [OpId(0), OpId(1)];
//! let work = fill_load_work(&inst, &[0, 0], &order, &[Stage(0), Stage(0)]).unwrap();
//! let sched = Schedule::new(&inst, "doc", vec![0, 0], order.to_vec(), work, Cycles::ZERO);
//! assert!(elk_sim::validate(&inst, &sched).is_empty());
//! let ev = elk_sim::evaluate(&inst, &sched);
//! // a loads in the prologue (30 cycles); b's 150 HBM cycles must all land in stage 1 (while
//! // a runs for 100), so stage 1 stretches to 150 (HBM-bound); b then runs for 100.
//! assert_eq!(ev.makespan_cycles, Cycles(30.0 + 150.0 + 100.0));
//! ```
#![deny(missing_docs)]

pub mod detailed;
mod evaluate;
mod judge;
pub mod phased;
pub mod trace;
mod validate;
#[cfg(feature = "clap")]
mod value_enum;

pub use evaluate::{
    evaluate, evaluate_in, evaluate_with, Binding, Breakdown, Evaluation, StageEval,
};
pub use judge::{run_judged, Judged, CLAIM_TOLERANCE};
pub use validate::{validate, Violation};

/// The judge in one call: the simulator's makespan of a valid schedule, or its first
/// violation (for callers that only need the verdict).
pub fn judged_makespan(
    inst: &elk_stage::instance::Instance,
    s: &elk_stage::schedule::Schedule,
) -> Result<elk_stage::units::Cycles, Violation> {
    match validate(inst, s).into_iter().next() {
        Some(v) => Err(v),
        None => Ok(evaluate(inst, s).makespan_cycles),
    }
}
