//! `sweep`: a grid of configurations × methods into a JSON-lines file.

use crate::grid::Grid;
use crate::sweep::{Shard, SweepSummary};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A sweep: the grid, where its lines go, the shard and the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepRequest {
    /// A preset (`fig17` … `fig24`), a grid TOML file, or (Python's) the TOML text itself.
    pub grid: String,
    /// `-o`: the results file (`None`: `<grid's stem>.jsonl` here, `grid.jsonl` for TOML
    /// text).
    pub output: Option<PathBuf>,
    /// `--shard K/N`.
    pub shard: Option<String>,
    /// `--report DIR`.
    pub report: Option<PathBuf>,
}

impl SweepRequest {
    /// The grid is TOML text rather than a name (it has a line break).
    pub fn is_toml_text(&self) -> bool {
        self.grid.contains('\n')
    }

    /// Where the lines go.
    pub fn output(&self) -> PathBuf {
        self.output.clone().unwrap_or_else(|| {
            let stem = if self.is_toml_text() {
                "grid".to_string()
            } else {
                Path::new(&self.grid)
                    .file_stem()
                    .map_or_else(|| self.grid.clone(), |s| s.to_string_lossy().into_owned())
            };
            PathBuf::from(format!("{stem}.jsonl"))
        })
    }

    /// The grid: a preset, a file, or the text.
    pub fn load_grid(&self) -> crate::Result<Grid> {
        if self.is_toml_text() {
            Grid::from_toml("(grid text)", &self.grid)
        } else {
            crate::grid::load(&self.grid)
        }
    }

    /// The shard (`None`: every cell).
    pub fn shard(&self) -> crate::Result<Option<Shard>> {
        self.shard.as_deref().map(Shard::parse).transpose()
    }

    /// The inputs as `--json` prints them in `config`.
    pub fn config(&self) -> SweepConfig {
        SweepConfig {
            grid: self.grid.clone(),
            output: self.output(),
            shard: self.shard.clone(),
            report: self.report.clone(),
        }
    }

    /// `sweep --json`'s results for `summary`.
    pub fn results(&self, summary: &SweepSummary) -> SweepResults {
        SweepResults {
            cells: summary.cells,
            skipped_cells: summary.skipped,
            ran_cells: summary.ran,
            retried_cells: summary.retried,
            failed_cells: summary.failed,
            does_not_fit_cells: summary.does_not_fit,
            output: self.output(),
            report: self.report.as_ref().map(|d| d.join("README.md")),
        }
    }

    /// Why the run failed, when cells failed (the CLI exits 1, Python raises): each failed
    /// cell's error is its line.
    pub fn failure(&self, summary: &SweepSummary) -> Option<String> {
        (summary.failed > 0).then(|| {
            format!(
                "{} cell{} failed (of {}): each failed cell's error is its line in {}; rerunning \
                 the same command retries them",
                summary.failed,
                if summary.failed == 1 { "" } else { "s" },
                summary.cells,
                self.output().display()
            )
        })
    }
}

/// `sweep --json`: the inputs.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SweepConfig {
    grid: String,
    output: PathBuf,
    shard: Option<String>,
    report: Option<PathBuf>,
}

/// `sweep --json`: what ran, counted in cells.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SweepResults {
    cells: usize,
    skipped_cells: usize,
    ran_cells: usize,
    retried_cells: usize,
    failed_cells: usize,
    does_not_fit_cells: usize,
    output: PathBuf,
    /// `--report DIR`: its README.
    report: Option<PathBuf>,
}
