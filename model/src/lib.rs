//! `elk-model`: the front end of elk-opt — operator graphs (SPEC §2.1), the importer for the
//! reference graph format, the built-in model zoo, chip specifications (SPEC §2.2), cost
//! models and intra-operator plans (SPEC §3), and [`build::build_instance`], which turns
//! (graph, chip) into the stage-model [`elk_stage::Instance`] that every engine reads.
//!
//! ```
//! use elk_model::{zoo, graph::Mode};
//! let g = zoo::build("llama2-7b", &zoo::ZooParams::new(Mode::Decode, 1, 128)).unwrap();
//! let t = g.totals();
//! assert!((t.parameters as f64 - 6.74e9).abs() / 6.74e9 < 0.01);
//! ```
#![deny(missing_docs)]

pub mod build;
pub mod chip;
pub mod cost;
pub mod dtype;
pub mod error;
pub mod graph;
pub mod import;
pub mod load_policy;
pub mod parallel;
pub mod plan;
pub mod provenance;
pub mod routing;
pub mod zoo;

pub use error::{ModelError, Result};
