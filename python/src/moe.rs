//! `elk-opt moe`: the MoE load policies over sampled routing steps (docs/moe.md), from the
//! same request ([`elk_app::request::MoeRequest`]) and through the same
//! [`elk_app::moe::run`] the CLI calls.

use crate::errors::Failure;
use elk_app::moe::{run_with_bound, MoeProgress, MoeReport};
use elk_app::request::{keys, Collected, MoeRequest, PreparedMoe};
use elk_model::plan::PlanCache;
use pyo3::prelude::*;

/// Runs `request` (GIL released by the caller): the prepared run, its report and the
/// warnings; `progress(done, steps, "steps")` as steps are built, then `progress(done,
/// distinct, "step bounds")` as their bounds are solved (a bound other than the roofline).
fn run_policies(
    request: &MoeRequest,
    cache: bool,
    progress: Option<&Py<PyAny>>,
) -> Result<(PreparedMoe, MoeReport, Vec<String>), Failure> {
    let plan_cache = if cache {
        PlanCache::default_location()
    } else {
        None
    };
    let mut notice = Collected::default();
    let prepared = request.prepare(plan_cache, &mut notice)?;
    // Python's progress counts the steps built and bounded (the scheduling that follows is
    // not shown).
    let bound = request.step_bound();
    let report = run_with_bound(&prepared.model, &prepared.spec, bound, &|p| match p {
        MoeProgress::Built { done, of } => {
            crate::objects::report_progress(progress, done, of, "steps");
        }
        MoeProgress::Bounded { done, of } => {
            crate::objects::report_progress(progress, done, of, "step bounds");
        }
        MoeProgress::Scheduled { .. } => {}
    })?;
    Ok((prepared, report, notice.0))
}

/// `moe --json`'s results and config as JSON, and the warnings the CLI prints on stderr,
/// for `keys_json` (`MoeKeys`: the keywords given); `progress(done, steps, "steps")` as
/// steps are built (GIL released). `cache = false` is `--no-cache`.
#[pyfunction]
#[pyo3(signature = (keys_json, progress=None, cache=true))]
pub fn moe_json(
    py: Python<'_>,
    keys_json: &str,
    progress: Option<Py<PyAny>>,
    cache: bool,
) -> PyResult<(String, String, Vec<String>)> {
    let request = keys::parse::<keys::MoeKeys>("moe", keys_json)
        .and_then(|k| k.request())
        .map_err(Failure::from)?;
    let out = py.detach(|| -> Result<(String, String, Vec<String>), Failure> {
        let (prepared, report, warnings) = run_policies(&request, cache, progress.as_ref())?;
        let results = serde_json::to_string(&prepared.results(&report))?;
        let config = serde_json::to_string(&request.config(&prepared))?;
        Ok((results, config, warnings))
    })?;
    Ok(out)
}

/// Checks `compare(routing=…)`'s MoE part (`CompareMoeKeys` as JSON) before any work, as
/// the CLI checks `--routing`.
#[pyfunction]
pub fn check_compare_moe(keys_json: &str) -> PyResult<()> {
    keys::parse::<keys::CompareMoeKeys>("routing", keys_json)
        .and_then(|k| k.request())
        .map_err(Failure::from)?;
    Ok(())
}

/// `compare --routing`'s `moe` section as JSON, and the warnings, for `keys_json`
/// (`CompareMoeKeys`); progress and cache as [`moe_json`]'s.
#[pyfunction]
#[pyo3(signature = (keys_json, progress=None, cache=true))]
pub fn moe_section_json(
    py: Python<'_>,
    keys_json: &str,
    progress: Option<Py<PyAny>>,
    cache: bool,
) -> PyResult<(String, Vec<String>)> {
    let request = keys::parse::<keys::CompareMoeKeys>("routing", keys_json)
        .and_then(|k| k.request())
        .map_err(Failure::from)?;
    let out = py.detach(|| -> Result<(String, Vec<String>), Failure> {
        let (prepared, report, warnings) = run_policies(&request, cache, progress.as_ref())?;
        Ok((serde_json::to_string(&prepared.section(report))?, warnings))
    })?;
    Ok(out)
}
