//! `elk-app`: the application layer between the engines and their two front ends, the CLI
//! and the Python package. [`request`] holds what a user asks for (a model, a chip, an
//! instance, a compare, gap or MoE run) with its defaults, validation and one-line refusals,
//! so that neither front end restates them.
#![deny(missing_docs)]

pub mod request;
pub mod simulate;
