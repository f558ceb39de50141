//! `elk-stage`: the contract every engine of elk-opt speaks — the stage model of SPEC §4.
//!
//! - [`instance::Instance`]: the problem (`elk-instance/1`), with [`Instance::builder`].
//! - [`schedule::Schedule`]: a solution (`elk-schedule/1`), its load work, and
//!   [`schedule::fill_load_work`], which turns decisions into load work.
//! - [`method::Method`]: the one trait of every method, heuristic or exact, with
//!   [`method::Outcome`] and [`method::MethodError`].
//! - [`hash`]: content hashes (`fnv1a64:…`), the identity of instances and chips.
//! - [`units`]: `Cycles`, `Bytes`, `OpId`, `Stage` on every value that crosses a crate.
//! - [`corpus`]: the one seeded generator of random instances.
//!
//! The simulator, the heuristics and the solver depend on this crate only (the detailed
//! replay also reads chips from `elk-model`). Graphs, importers, cost models and plans live
//! in `elk-model`, which builds instances.
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
//! // Both loads may start in the prologue; a's 30 cycles fit there, and b fills the spare
//! // HBM capacity of the prologue (none: it lasts 30) and then of stage 1, where a runs.
//! let work = fill_load_work(&inst, &[0, 0], &[OpId(0), OpId(1)], &[Stage(0), Stage(0)]).unwrap();
//! assert_eq!(work[0].cycles, Cycles(30.0));
//! assert_eq!(work.last().unwrap().stage, Stage::of_op(OpId(0)));
//! let s = Schedule::new(&inst, "doc", vec![0, 0], vec![OpId(0), OpId(1)], work, Cycles(280.0));
//! assert!(s.to_json().unwrap().contains(r#""load_work":[[0,0,30.0],"#));
//! ```
#![deny(missing_docs)]

pub mod corpus;
pub mod error;
pub mod hash;
pub mod instance;
pub mod method;
pub mod period;
pub mod schedule;
pub mod units;

pub use error::{Result, StageError};
pub use instance::Instance;
pub use schedule::Schedule;
pub use units::{Bytes, Cycles, Flops, OpId, Stage};
