//! `elk-reports`: turns the engines into answers (SPEC §7). [`grid`] describes a sweep (a TOML
//! file or a preset `fig17` … `fig24`), [`sweep`] runs it in parallel into a JSON-lines file
//! that survives interruption and sharding, [`report`] turns results into Markdown tables and
//! SVG plots ([`plot`]), [`html`] makes one self-contained page of a report, and [`studies`]
//! answer the reviewers' questions, each one command.
//!
//! ```
//! let grid = elk_reports::grid::Grid::from_toml("doc", elk_reports::grid::preset("fig17").unwrap()).unwrap();
//! // 4 models × 3 batches × 2 KV lengths.
//! assert_eq!(grid.cells().len(), 24);
//! assert_eq!(grid.cells()[5].index, 5);
//! ```
#![deny(missing_docs)]

pub mod bound;
pub mod cell;
pub mod compare;
pub mod csv_text;
pub mod dominant;
mod error;
pub mod finding;
pub mod gap;
pub mod grid;
pub mod html;
pub mod layer_ranking;
pub mod moe;
pub mod plot;
pub mod portfolio;
pub mod report;
pub mod studies;
pub mod sweep;
pub mod zoo_list;

pub use error::{ReportError, Result};
