//! `compare` and `solve --method`: the requests of the heuristic side.

use super::error::{RequestError, Result};
use super::input::{InstanceInput, SourceConfig};
use serde::Serialize;
use std::path::PathBuf;

/// `compare --bound`: the lower bound the methods are measured against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum BoundChoice {
    /// The roofline bound (HBM, execution, prefix): instant.
    Roofline,
    /// The stage relaxation LP, or the roofline where it is stronger: under a second on a
    /// dense model (docs/exact.md, "The stage relaxation").
    #[default]
    Stage,
    /// The coupled segment relaxation LP and the stage relaxation LP, or the roofline,
    /// whichever is strongest: seconds to a minute, then the coupled LP is cached.
    Segment,
}

impl BoundChoice {
    /// Parses `roofline`, `stage` or `segment`.
    pub fn parse(s: &str) -> Result<BoundChoice> {
        match s {
            "roofline" => Ok(BoundChoice::Roofline),
            "stage" => Ok(BoundChoice::Stage),
            "segment" => Ok(BoundChoice::Segment),
            other => Err(RequestError::refused(format!(
                "bound '{other}': one of roofline, stage, segment"
            ))),
        }
    }
}

/// Every method on one instance, with a lower bound and, on request, one layer solved
/// exactly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompareRequest {
    /// The instance.
    pub input: InstanceInput,
    /// `--bound`.
    pub bound: BoundChoice,
    /// `--layer-exact SECONDS`: one layer of the model solved exactly within that limit.
    pub layer_exact_s: Option<f64>,
    /// `--work-limit N` with `--layer-exact`: the layer's MILP stops after N branch-and-bound
    /// nodes (the same result on every machine; the seconds stay a hard stop).
    pub layer_work_limit: Option<u64>,
    /// `--no-timings`: compile times left out, so that two runs give the same bytes.
    pub no_timings: bool,
}

impl CompareRequest {
    /// Refuses a layer-exact limit that is not a positive number of seconds, and a work
    /// budget that is zero or comes without `--layer-exact` (nothing exact would spend it).
    pub fn validate(&self) -> Result<()> {
        if let Some(s) = self.layer_exact_s {
            positive_seconds("--layer-exact", s)?;
        }
        match (self.layer_work_limit, self.layer_exact_s) {
            (Some(0), _) => Err(RequestError::refused(format!(
                "--work-limit 0: {}",
                crate::gap::WORK_LIMIT_POSITIVE
            ))),
            (Some(n), None) => Err(RequestError::refused(format!(
                "--work-limit {n} without --layer-exact: compare runs no exact method to spend it on; add --layer-exact SECONDS (the layer's MILP then stops after {n} branch-and-bound nodes)"
            ))),
            _ => Ok(()),
        }
    }

    /// The inputs as `--json` prints them in `config`.
    pub fn config(&self) -> CompareConfig {
        CompareConfig {
            source: self.input.config(),
            bound: self.bound,
            layer_exact_s: self.layer_exact_s,
            layer_work_limit: self.layer_work_limit,
            no_timings: self.no_timings,
        }
    }
}

/// `s` is a positive, finite number of seconds (`flag`: what the refusal names).
pub fn positive_seconds(flag: &str, s: f64) -> Result<f64> {
    if s.is_finite() && s > 0.0 {
        Ok(s)
    } else {
        Err(RequestError::refused(format!(
            "{flag} {s}: must be a positive number of seconds"
        )))
    }
}

/// `compare --json`: the inputs.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct CompareConfig {
    #[serde(flatten)]
    source: SourceConfig,
    bound: BoundChoice,
    /// `--layer-exact SECONDS` (`null`: no layer section).
    layer_exact_s: Option<f64>,
    /// `--work-limit N` (absent without one).
    #[serde(rename = "work_limit", skip_serializing_if = "Option::is_none")]
    layer_work_limit: Option<u64>,
    no_timings: bool,
}

/// One method on one instance: its schedule, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveRequest {
    /// The instance.
    pub input: InstanceInput,
    /// `--method`: a heuristic or a re-timed heuristic (`NAME+retime`).
    pub method: String,
    /// `-o`: where the schedule is written.
    pub output: Option<PathBuf>,
    /// `--trace`: where a Chrome trace of its evaluation is written.
    pub trace: Option<PathBuf>,
    /// `--no-timings`.
    pub no_timings: bool,
}

impl SolveRequest {
    /// The inputs as `--json` prints them in `config`.
    pub fn config(&self) -> SolveConfig {
        SolveConfig {
            source: self.input.config(),
            method: self.method.clone(),
            output: self.output.clone(),
            trace: self.trace.clone(),
            no_timings: self.no_timings,
        }
    }
}

/// `solve --json` (a method, not `--exact`): the inputs.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SolveConfig {
    #[serde(flatten)]
    source: SourceConfig,
    method: String,
    output: Option<PathBuf>,
    trace: Option<PathBuf>,
    no_timings: bool,
}
