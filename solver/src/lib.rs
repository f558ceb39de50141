//! `elk-solver`: the exact methods of SPEC §5 — the stage model as a MILP solved by HiGHS
//! ([`milp`]) and, independently encoded, as an SMT problem solved by z3 ([`smt`]) — plus the
//! certified lower bounds ([`bounds`], the LP relaxation) that turn every heuristic's makespan
//! into a distance from the optimum. Every schedule is judged by the simulator.
//!
//! ```
//! use elk_model::instance::{Instance, InstanceOp, OpOption, LoadOrder, NamedOrder};
//! use elk_solver::{solve_exact, Backend, ExactOptions, ExactStatus};
//! let opt = |cold, hot, exec| OpOption { cold, hot, exec_cycles: exec, comm_cycles: 0.0, noc_per_hbm: 0.0 };
//! let inst = Instance {
//!     format: "elk-instance/1".into(), name: "doc".into(), sram_bytes: 100, clock_hz: 1e9,
//!     load_order: LoadOrder::Named(NamedOrder::Fixed), preload_window: None,
//!     ops: vec![
//!         InstanceOp { name: "a".into(), hbm_cycles: 50.0, options: vec![opt(10, 40, 80.0)], flops: None },
//!         InstanceOp { name: "b".into(), hbm_cycles: 50.0, options: vec![opt(10, 20, 90.0), opt(30, 60, 60.0)], flops: None },
//!     ],
//! };
//! for backend in [Backend::Milp, Backend::Smt] {
//!     let r = solve_exact(&inst, &ExactOptions { backend, ..Default::default() }).unwrap();
//!     assert_eq!(r.status, ExactStatus::Optimal);
//!     // a loads in the prologue (50), b loads under a (50 ≤ 80) and runs fast: 50 + 80 + 60.
//!     assert!((r.makespan_cycles.unwrap() - 190.0).abs() < 1e-6);
//! }
//! ```
#![deny(missing_docs)]

pub mod bounds;
mod error;
mod exact;
mod extract;
pub mod milp;
mod prune;
pub mod smt;
pub mod worker;

pub use error::{Result, SolverError};
pub use exact::{
    gap_pct, solve_exact, Backend, Bounds, Exact, ExactOptions, ExactReport, ExactStatus,
    ModelStats, Phase,
};
pub use extract::{OrderHint, RawSolution};
