//! `gap` and `solve --exact`: the requests of the exact side.

use super::error::{RequestError, Result};
use super::input::{InstanceInput, SourceConfig};
use crate::gap::ExactSettings;
use elk_solver::milp::Linearisation;
use elk_solver::{Backend, WholeModelBound};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The exact backend's limit when none is given, seconds.
pub const DEFAULT_TIME_LIMIT_S: f64 = 60.0;

/// Every heuristic's gap to the exact optimum or the certified bound (`gap`), or the exact
/// solve alone (`solve --exact`): the same inputs.
#[derive(Clone, Debug)]
pub struct ExactRequest {
    /// The instance.
    pub input: InstanceInput,
    /// The exact solver's settings.
    pub exact: ExactSettings,
    /// `-o`: where the schedule the exact part ends with is written.
    pub output: Option<PathBuf>,
    /// `--no-timings`.
    pub no_timings: bool,
    /// The instance with parallel sets and the one without are both solved (the CLI's
    /// `--expert-parallel`; in Python, an `expert_parallel=True` call that builds both), each
    /// within the time limit.
    pub union: bool,
}

impl ExactRequest {
    /// The inputs as `--json` prints them in `config`.
    pub fn config(&self) -> ExactConfig {
        ExactConfig {
            source: self.input.config(),
            time_limit_total_s: self.union.then_some(2.0 * self.exact.time_limit_s),
            exact: self.exact.clone(),
            output: self.output.clone(),
            no_timings: self.no_timings,
        }
    }
}

/// `solve --exact --json` and `gap --json`: the inputs.
#[derive(Serialize, Debug, Clone)]
pub struct ExactConfig {
    #[serde(flatten)]
    source: SourceConfig,
    #[serde(flatten)]
    exact: ExactSettings,
    /// `--expert-parallel`: the two exact solves' limits together (each instance's gets
    /// `time_limit_s`: docs/core-groups.md, CG-5); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    time_limit_total_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<PathBuf>,
    no_timings: bool,
}

/// The exact settings as Python's `gap()` and `solve(exact=True)` name them; a keyword left
/// out takes the CLI's default.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ExactKeys {
    /// `--backend`: `milp` or `smt`.
    #[serde(default)]
    pub backend: Option<String>,
    /// `--time-limit`, seconds.
    #[serde(default)]
    pub time_limit: Option<f64>,
    /// `--linearisation`: `big-m` or `per-option`.
    #[serde(default)]
    pub linearisation: Option<String>,
    /// Not `--no-warm-start`.
    #[serde(default)]
    pub warm_start: Option<bool>,
    /// Not `--no-lp-bound`.
    #[serde(default)]
    pub lp_bound: Option<bool>,
    /// `--whole-model-bound`: `lp`, `milp` or `off`.
    #[serde(default)]
    pub whole_model_bound: Option<String>,
    /// Not `--no-window-search`.
    #[serde(default)]
    pub window_search: Option<bool>,
    /// `--work-limit`: a deterministic budget in solver work.
    #[serde(default)]
    pub work_limit: Option<u64>,
}

/// One of `values` by name, or a refusal naming the keyword and the names it takes.
fn pick<T: Copy>(key: &str, given: &Option<String>, default: T, values: &[(&str, T)]) -> Result<T> {
    let Some(given) = given else {
        return Ok(default);
    };
    values
        .iter()
        .find(|(name, _)| name == given)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
            RequestError::refused(format!("{key} '{given}': one of {}", names.join(", ")))
        })
}

impl ExactKeys {
    /// The settings, every keyword left out at the CLI's default (checked: a bad time limit
    /// or a backend this build lacks is refused as the CLI refuses its flags).
    pub fn settings(&self) -> Result<ExactSettings> {
        let d = ExactSettings::milp_within(DEFAULT_TIME_LIMIT_S);
        let settings = ExactSettings {
            backend: pick(
                "backend",
                &self.backend,
                d.backend,
                &Backend::ALL.map(|b| (b.name(), b)),
            )?,
            time_limit_s: self.time_limit.unwrap_or(d.time_limit_s),
            linearisation: pick(
                "linearisation",
                &self.linearisation,
                d.linearisation,
                &[
                    ("big-m", Linearisation::BigM),
                    ("per-option", Linearisation::PerOption),
                ],
            )?,
            warm_start: self.warm_start.unwrap_or(d.warm_start),
            lp_bound: self.lp_bound.unwrap_or(d.lp_bound),
            whole_model_bound: pick(
                "whole_model_bound",
                &self.whole_model_bound,
                d.whole_model_bound,
                &[
                    ("lp", WholeModelBound::Lp),
                    ("milp", WholeModelBound::Milp),
                    ("off", WholeModelBound::Off),
                ],
            )?,
            window_search: self.window_search.unwrap_or(d.window_search),
            bound_cache: None,
            work_limit: self.work_limit,
        };
        settings.check().map_err(RequestError::refused)?;
        Ok(settings)
    }
}
