//! `elk-solver`: the exact methods of SPEC §5 — the stage model as a MILP solved by HiGHS
//! ([`milp`]) and, independently encoded, as an SMT problem solved by z3 ([`smt`]) — plus the
//! certified lower bounds ([`bounds`], the LP relaxation) that turn every heuristic's makespan
//! into a distance from the optimum. Every schedule is judged by the simulator. [`retime()`]
//! re-times any schedule: the best load work for its decisions, a linear program
//! ([`Retimed`] is the method `<name>+retime`).
//!
//! The SMT backend is the `smt` feature (on by default; it links the system z3): a build
//! without it, as the Python wheel is, keeps [`Backend::Smt`] as a name and refuses to run it
//! ([`Backend::missing`] says why).
//!
//! ```
//! use elk_stage::instance::{Instance, OpOption};
//! use elk_stage::method::{Budget, Method, Outcome};
//! use elk_stage::units::{Bytes, Cycles};
//! use elk_solver::{Backend, Exact, ExactOptions};
//! let inst = Instance::builder("doc", Bytes(100), 1e9)
//!     .op("a", Cycles(50.0), vec![OpOption::new(10, 40, 80.0, 0.0, 0.0)])
//!     .op("b", Cycles(50.0), vec![OpOption::new(10, 20, 90.0, 0.0, 0.0), OpOption::new(30, 60, 60.0, 0.0, 0.0)])
//!     .build()
//!     .unwrap();
//! for backend in Backend::ALL.into_iter().filter(|b| b.missing().is_none()) {
//!     let exact = Exact { options: ExactOptions { backend, ..Default::default() }, worker: None };
//!     let solved = exact.schedule(&inst, &Budget::seconds(10.0)).unwrap();
//!     // a loads in the prologue (50), b loads under a (50 ≤ 80) and runs fast: 50 + 80 + 60.
//!     let Outcome::Optimal(s) = &solved.outcome else { panic!("{:?}", solved.outcome) };
//!     assert!((elk_sim::judged_makespan(&inst, s).unwrap().get() - 190.0).abs() < 1e-6);
//! }
//! ```
#![deny(missing_docs)]

pub mod bounds;
mod error;
mod exact;
mod extract;
pub mod lns;
pub mod milp;
mod prune;
mod queue;
mod retime;
pub mod segments;
#[cfg(feature = "smt")]
pub mod smt;
mod stage_queue;
mod tolerance;

pub use bounds::BoundSource;
pub use error::{Result, SolverError};
pub use exact::worker;
pub use exact::{
    gap_pct, texts, too_large, Backend, Bounds, Exact, ExactEvent, ExactOptions, ExactReport,
    GapReference, ModelStats, Note, NoteAbout, Phase, WholeModelBound, WholeModelSearch, Work,
    WorkUnit, WorkerCommand, NO_SMT_BUDGET,
};
pub use extract::{OrderHint, RawSolution};
pub use queue::{queue_for_options, requeue, NoQueue, QueueReport, REFINEMENTS};
pub use retime::{retime, RetimeReport, RetimeStop, Retimed, RETIME_SUFFIX};
pub use stage_queue::{StageQueue, STAGE_QUEUE};
pub use tolerance::{meets_bound, MEETS_BOUND};
