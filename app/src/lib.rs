//! `elk-app`: the application layer between the engines and their two front ends, the CLI
//! and the Python package. [`request`] holds what a user asks for (a model, a chip, an
//! instance, a compare, gap or MoE run) with its defaults, validation and one-line refusals,
//! so that neither front end restates them.
//!
//! The rest runs requests into results, as values that the CLI prints, Python returns and
//! `elk-reports` draws: [`portfolio`] (the one portfolio runner: these methods on this
//! instance, each judged, the best kept, each failure said one way), [`compare`], [`gap`],
//! [`moe`] (the MoE load policies over sampled steps), [`bound`] (the one certified lower
//! bound per instance, and its cache), [`grid`] (a sweep's grid, a TOML file or a preset),
//! [`cell`] (one grid cell), [`sweep`] (a grid in parallel into a JSON-lines file that
//! survives interruption and sharding), [`studies`] (the reviewers' questions, computed),
//! [`simulate`] (a schedule judged, as `simulate --json` reports it), [`dominant`] and
//! [`layer_ranking`] (the warnings and notes the results carry), and
//! [`zoo_list`] (`models list`'s rows). The plan cache is an argument wherever instances are
//! planned, never a process-wide setting.
//!
//! ```
//! use elk_app::grid::{preset, Grid};
//! let grid = Grid::from_toml("doc", preset("fig17").unwrap()).unwrap();
//! // 4 models × 3 batches × 2 KV lengths.
//! assert_eq!(grid.cells().len(), 24);
//! assert_eq!(grid.cells()[5].index, 5);
//! ```
#![deny(missing_docs)]

pub mod request;

pub mod bound;
pub mod cell;
pub mod compare;
pub mod dominant;
mod error;
pub mod gap;
pub mod grid;
pub mod layer_ranking;
pub mod moe;
pub mod portfolio;
pub mod simulate;
pub mod studies;
pub mod sweep;
pub mod zoo_list;

pub use error::{AppError, Result};
