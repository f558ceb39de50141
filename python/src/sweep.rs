//! `elk-opt sweep GRID -o FILE`: a grid of configurations × methods into JSON lines,
//! resumable and shardable, through [`elk_app::sweep::run_sweep`] as the CLI runs it.

use crate::errors::Failure;
use elk_app::grid::Grid;
use elk_app::sweep::{read_results, run_sweep, Shard};
use elk_model::plan::PlanCache;
use pyo3::prelude::*;
use std::path::PathBuf;

/// Runs `grid` (a preset, a TOML file, or with `is_toml` the TOML text itself) into
/// `output` (GIL released); `progress(done, total, "cells")` after each cell. Returns the
/// summary (`sweep --json`'s results without `report`) and every cell's line of `output`,
/// as JSON, and the chips' warnings.
#[pyfunction]
#[pyo3(signature = (grid, output, is_toml=false, shard=None, progress=None))]
pub fn sweep_json(
    py: Python<'_>,
    grid: &str,
    output: PathBuf,
    is_toml: bool,
    shard: Option<&str>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String, Vec<String>)> {
    let out = py.detach(|| -> Result<(String, String, Vec<String>), Failure> {
        // The plan cache at its default location, as the CLI's without --no-cache.
        let plans = PlanCache::default_location();
        let grid = if is_toml {
            Grid::from_toml("(grid text)", grid)?
        } else {
            elk_app::grid::load(grid)?
        };
        let shard = shard.map(Shard::parse).transpose()?;
        let warnings = grid.load_inputs()?.warnings();
        let summary = run_sweep(&grid, &output, shard, plans.as_ref(), &|done, total| {
            if let Some(cb) = &progress {
                Python::attach(|py| {
                    let _ = cb.call1(py, (done, total, "cells"));
                });
            }
        })?;
        let summary = serde_json::json!({
            "cells": summary.cells,
            "skipped_cells": summary.skipped,
            "ran_cells": summary.ran,
            "retried_cells": summary.retried,
            "failed_cells": summary.failed,
            "does_not_fit_cells": summary.does_not_fit,
            "output": output,
        });
        let lines: Vec<_> = read_results(&output)?.into_values().collect();
        Ok((
            serde_json::to_string(&summary)?,
            serde_json::to_string(&lines)?,
            warnings,
        ))
    })?;
    Ok(out)
}
