//! `elk-opt sweep GRID -o FILE`: a grid of configurations × methods into JSON lines,
//! resumable and shardable, from the same request ([`elk_app::request::SweepRequest`]) and
//! through the same [`elk_app::sweep::run_sweep`] the CLI runs.

use crate::errors::Failure;
use elk_app::request::SweepRequest;
use elk_app::sweep::{read_results, run_sweep};
use elk_model::plan::PlanCache;
use pyo3::prelude::*;
use std::path::PathBuf;

/// `sweep_json`'s answer: results, config and lines as JSON, the warnings, the failure.
type SweepOut = (String, String, String, Vec<String>, Option<String>);

/// Runs `grid` (a preset, a TOML file, or the TOML text itself) into `output` (`None`: the
/// CLI's default name), GIL released; `progress(done, total, "cells")` after each cell.
/// Returns `sweep --json`'s results and config, every cell's line of the output, as JSON, the
/// chips' warnings, and why the run failed when cells failed.
#[pyfunction]
#[pyo3(signature = (grid, output=None, shard=None, progress=None))]
pub fn sweep_json(
    py: Python<'_>,
    grid: &str,
    output: Option<PathBuf>,
    shard: Option<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<SweepOut> {
    let request = SweepRequest {
        grid: grid.to_string(),
        output,
        shard,
        report: None,
    };
    let out = py.detach(|| -> Result<SweepOut, Failure> {
        // The plan cache at its default location, as the CLI's without --no-cache.
        let plans = PlanCache::default_location();
        let grid = request.load_grid()?;
        let shard = request.shard()?;
        let warnings = grid.load_inputs()?.warnings();
        let output = request.output();
        let summary = run_sweep(&grid, &output, shard, plans.as_ref(), &|done, total| {
            if let Some(cb) = &progress {
                Python::attach(|py| {
                    let _ = cb.call1(py, (done, total, "cells"));
                });
            }
        })?;
        let lines: Vec<_> = read_results(&output)?.into_values().collect();
        Ok((
            serde_json::to_string(&request.results(&summary))?,
            serde_json::to_string(&request.config())?,
            serde_json::to_string(&lines)?,
            warnings,
            request.failure(&summary),
        ))
    })?;
    Ok(out)
}
