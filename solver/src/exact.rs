//! One road for the exact methods: [`Exact`] (the only way in, for the CLI, the studies and
//! the Python package) runs a backend — in this process or in a worker process killed at a
//! hard limit — judges its schedule with the simulator, combines its bound with the LP
//! relaxation and the roofline bounds, and never returns anything worse than the warm start.
//!
//! Where things are:
//! - `options.rs`: what is asked ([`ExactOptions`], [`Backend`] and every name a backend
//!   goes by);
//! - `solve.rs`: the solve as a state type, one method per step (LP relaxation, warm start
//!   against the bound, fixed-order restriction, backend); `whole_model.rs`: the road of a
//!   model too large for the backend (segment relaxation, window search); `finish.rs`: the
//!   last step (judge, keep the better schedule, take the best bound);
//! - `backend.rs`: HiGHS and z3 in common terms (a new backend is a function there);
//! - `report.rs`: what a solve reports ([`ExactReport`]) and the same as a
//!   [`Solved`](elk_stage::method::Solved); `event.rs`: what it tells as it runs;
//! - `method.rs`: [`Exact`], the [`Method`](elk_stage::method::Method);
//!   `worker.rs`: the child process, its pipe and the report of a killed worker;
//! - `work.rs`: the deterministic budget (`--work-limit`) and what one unit of it is.
//!
//! Verdicts and stop reasons are [`elk_stage::method::Verdict`] and
//! [`elk_stage::method::StopReason`], the vocabulary every method shares.

mod backend;
mod event;
mod finish;
mod method;
mod note;
mod options;
mod report;
mod rounded;
mod solve;
mod whole_model;
mod work;
pub mod worker;

pub use event::ExactEvent;
pub use method::{Exact, WorkerCommand};
pub use note::{texts, Note, NoteAbout};
pub use options::{too_large, Backend, ExactOptions, WholeModelBound, WholeModelSearch};
pub use report::{gap_pct, Bounds, ExactReport, GapReference, ModelStats, Phase};
pub use solve::NO_SMT_BUDGET;
pub use work::{Work, WorkUnit};
