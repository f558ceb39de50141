//! Models and chips: the zoo and the presets as the CLI lists them, and a model or chip
//! from Python's keywords, resolved by the same requests ([`elk_app::request`]) the CLI's
//! `--model`, `--import`, `--onnx`, `--chip` and `--hbm-tbps` build.

use crate::errors::Failure;
use elk_app::request::{keys, ChosenChip, Collected, DramReaders, ModelSource};
use elk_model::chip::{ChipSpec, PRESETS};
use pyo3::prelude::*;
use std::path::PathBuf;

/// `models list --json`'s results, as JSON.
#[pyfunction]
pub fn models_json() -> PyResult<String> {
    let rows = elk_app::zoo_list::rows().map_err(Failure::from)?;
    Ok(serde_json::to_string(&rows).map_err(Failure::from)?)
}

/// `chips list --json`'s results, as JSON.
#[pyfunction]
pub fn chips_json() -> PyResult<String> {
    let chips = PRESETS
        .iter()
        .map(|(name, _)| ChipSpec::preset(name))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::from)?;
    Ok(serde_json::to_string(&chips).map_err(Failure::from)?)
}

/// Every method `solve` accepts ([`elk_app::compare::solve_method_names`]: the heuristics,
/// `ideal`, `stage-lp+queue`, then each heuristic re-timed).
#[pyfunction]
pub fn method_names() -> Vec<String> {
    elk_app::compare::solve_method_names()
}

/// Every keyword default as JSON ([`keys::defaults`]: the instance's, the exact solver's and
/// `moe`'s): Python's signatures show these, and a keyword left out takes them.
#[pyfunction]
pub fn request_defaults() -> String {
    keys::defaults().to_string()
}

/// What kind of model a file is (`model`, `import` or `onnx`), by what it holds
/// ([`ModelSource::of_file`]).
#[pyfunction]
pub fn model_kind(path: PathBuf) -> &'static str {
    ModelSource::of_file(&path).kind()
}

/// A chip from its keywords (`{"given": …, "hbm_tbps": …, "keys": [[name, value], …]}` as
/// JSON), resolved, and its warnings. With `dram_readers = "auto"`: the chip without reader
/// cores (`compare` tries every count).
pub fn chip(keys_json: &str) -> Result<(ChosenChip, Vec<String>), Failure> {
    let mut request = keys::parse::<keys::ChipKeys>("chip", keys_json)?.request()?;
    if request.dram_readers == Some(DramReaders::Auto) {
        request.dram_readers = None;
    }
    let mut notice = Collected::default();
    let chip = request.resolve(&mut notice)?;
    Ok((chip, notice.0))
}

/// The chip as `chips show --json` prints it (with the overrides applied), and its warnings.
#[pyfunction]
pub fn chip_json(keys_json: &str) -> PyResult<(String, Vec<String>)> {
    let (chip, warnings) = chip(keys_json)?;
    let json = serde_json::to_string(&chip.spec).map_err(Failure::from)?;
    Ok((json, warnings))
}

/// Checks a model from its keywords (`{"kind": …, "source": …, "dtype": …, …}` as JSON):
/// its name and layer count (`None` for an import, known once it is built) and the warnings.
#[pyfunction]
pub fn check_model(keys_json: &str) -> PyResult<(String, Option<usize>, Vec<String>)> {
    let mut notice = Collected::default();
    let (name, layers) = keys::parse::<keys::ModelKeys>("model", keys_json)
        .and_then(|k| k.request())
        .and_then(|request| request.check(&mut notice))
        .map_err(Failure::from)?;
    Ok((name, layers, notice.0))
}
