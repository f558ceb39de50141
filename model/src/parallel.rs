//! Operators side by side (docs/core-groups.md): independent chains of operators found from
//! the graph's data dependences ([`sets`]), each run on its own group of cores as one
//! stage-model operator ([`options`]).

pub mod options;
pub mod sets;

pub use options::{allocations, set_op, GroupPlanner};
pub use sets::{dependences, steps, Step};
