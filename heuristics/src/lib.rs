//! `elk-heuristics`: the heuristic methods of SPEC §5 behind [`elk_model::method::Method`]:
//! [`Basic`] (double buffering), [`StaticSplit`] (one SRAM split for all operators) and Elk's
//! [`ideal`] baseline. Every schedule is built with the shared fill helper and its makespan is
//! the simulator's.
//!
//! ```
//! use elk_model::instance::{Instance, InstanceOp, OpOption, LoadOrder, NamedOrder};
//! use elk_model::method::{Budget, Method};
//! let opt = |cold, hot, exec| OpOption { cold, hot, exec_cycles: exec, comm_cycles: 0.0, noc_per_hbm: 0.0 };
//! let inst = Instance {
//!     format: "elk-instance/1".into(), name: "doc".into(), sram_bytes: 100, clock_hz: 1e9,
//!     load_order: LoadOrder::Named(NamedOrder::Fixed), preload_window: None,
//!     ops: vec![
//!         InstanceOp { name: "a".into(), hbm_cycles: 50.0, options: vec![opt(10, 40, 80.0)], flops: None },
//!         InstanceOp { name: "b".into(), hbm_cycles: 50.0, options: vec![opt(10, 20, 90.0), opt(30, 60, 60.0)], flops: None },
//!     ],
//! };
//! let solved = elk_heuristics::Basic.schedule(&inst, &Budget::default()).unwrap();
//! let s = solved.outcome.schedule().unwrap();
//! // a loads in the prologue (50); b's cold must fit beside a's hot 40: b takes its fast
//! // option (cold 30 + hot 40 = 70 ≤ 100) and loads under a (50 ≤ 80); T = 50 + 80 + 60.
//! assert_eq!(s.options, [0, 1]);
//! assert_eq!(s.makespan_cycles, 190.0);
//! ```
#![deny(missing_docs)]

mod basic;
mod common;
mod elk_dyn;
mod elk_full;
mod ideal;
mod static_split;

pub use basic::Basic;
pub use elk_dyn::{inductive, inductive_with, max_depth, ElkDyn};
pub use elk_full::ElkFull;
pub use ideal::{ideal, IdealReport};
pub use static_split::StaticSplit;

use elk_model::instance::Instance;
use elk_model::method::{Budget, Method};
use elk_model::schedule::Schedule;

/// The heuristics by their command-line names, in comparison order.
pub const NAMES: [&str; 4] = ["basic", "static", "elk-dyn", "elk-full"];

/// A heuristic by name (`basic`, `static`, `elk-dyn`, `elk-full`; Elk-Full with its
/// defaults).
pub fn by_name(name: &str) -> Option<Box<dyn Method>> {
    Some(match name {
        "basic" => Box::new(Basic),
        "static" => Box::new(StaticSplit),
        "elk-dyn" => Box::new(ElkDyn),
        "elk-full" => Box::new(ElkFull::default()),
        _ => return None,
    })
}

/// `m`'s schedule of `inst` and the simulator's makespan of it (None: no valid schedule).
pub fn judged(inst: &Instance, m: &dyn Method) -> Option<(Schedule, f64)> {
    let s = m
        .schedule(inst, &Budget::default())
        .ok()?
        .outcome
        .schedule()?
        .clone();
    let t = elk_sim::judged_makespan(inst, &s).ok()?;
    Some((s, t))
}

/// The best valid schedule of every heuristic (the warm start of the exact methods).
pub fn best(inst: &Instance) -> Option<(Schedule, f64)> {
    NAMES
        .iter()
        .filter_map(|n| judged(inst, by_name(n)?.as_ref()))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}
