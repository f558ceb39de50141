//! Models and chips: the zoo and the presets as the CLI lists them, and a model or chip
//! chosen by name or path, loaded with the library functions the CLI's `--model`, `--import`,
//! `--onnx`, `--chip` and `--hbm-tbps` call.

use crate::errors::Failure;
use elk_model::chip::{describe_keys, ChipOverrides, ChipSpec, LoadedChip, PRESETS};
use elk_model::dtype::Dtypes;
use elk_model::graph::{Graph, Mode};
use elk_model::import::{import_file, import_onnx_file, Compat, ImportOptions};
use elk_model::provenance::chip_ref;
use elk_model::zoo::{ZooModel, ZooParams};
use elk_stage::instance::ChipRef;
use pyo3::prelude::*;
use std::path::Path;

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

/// Every method `solve` accepts: the heuristics, `ideal`, then each heuristic re-timed.
#[pyfunction]
pub fn method_names() -> Vec<String> {
    let heuristics = elk_app::compare::heuristic_names();
    let mut names: Vec<String> = heuristics.map(String::from).collect();
    names.push("ideal".into());
    names.extend(
        elk_app::compare::heuristic_names().map(|n| format!("{n}{}", elk_solver::RETIME_SUFFIX)),
    );
    names
}

/// A chip as chosen: the spec with the overrides applied and what instances record of it.
pub struct ChosenChip {
    /// The chip as used.
    pub spec: ChipSpec,
    /// Its record (name, file, HBM override, hash).
    pub record: ChipRef,
    /// Warnings about implausible values (the CLI prints them on stderr).
    pub warnings: Vec<String>,
}

/// The chip keys a Python `Chip(...)` sets besides `hbm_tbps`: `[[name, value], …]` as
/// JSON, in the order given (any key of a chip TOML, named as
/// [`elk_model::chip::keys::resolve`] takes it).
pub type Overrides = Option<String>;

/// The overrides' pairs as TOML values.
fn override_keys(json: &str) -> Result<Vec<(String, toml::Value)>, Failure> {
    let pairs: Vec<(String, serde_json::Value)> =
        serde_json::from_str(json).map_err(|e| Failure::input(format!("chip overrides: {e}")))?;
    pairs
        .into_iter()
        .map(|(k, v)| match toml::Value::try_from(&v) {
            Ok(t) => Ok((k, t)),
            Err(_) => Err(Failure::input(format!(
                "chip key '{k}': {v} is no TOML value"
            ))),
        })
        .collect()
}

/// `--chip given --hbm-tbps T` as the CLI loads it (chip_choice::load), then the other
/// overrides (the chip's name gains them, so instance names and labels say so).
pub fn load_chip(
    given: &str,
    hbm_tbps: Option<f64>,
    overrides: &Overrides,
) -> Result<ChosenChip, Failure> {
    let loaded = LoadedChip::load(given)?;
    let mut spec = loaded.spec;
    if let Some(tbps) = hbm_tbps {
        if !(tbps.is_finite() && tbps > 0.0) {
            return Err(Failure::input(format!(
                "--hbm-tbps {tbps}: must be positive"
            )));
        }
        spec = spec.with_overrides(&ChipOverrides {
            file: format!("{given} with --hbm-tbps"),
            hbm_tbps: Some(tbps),
            ..ChipOverrides::default()
        })?;
    }
    let mut warnings = loaded.warnings;
    let keys = overrides.as_deref().map(override_keys).transpose()?;
    if let Some(keys) = keys.filter(|k| !k.is_empty()) {
        let described = describe_keys(&keys);
        let file = format!("{given} with {described}");
        spec = spec.with_keys(&file, &keys)?;
        warnings = spec.warnings(&file);
        // The name gains the overrides (so instance names say so) unless it is one of them.
        if !keys.iter().any(|(k, _)| k == "name") {
            spec.name = format!("{} ({described})", spec.name);
        }
    }
    let record = chip_ref(&spec, given, hbm_tbps);
    Ok(ChosenChip {
        spec,
        record,
        warnings,
    })
}

/// The chip as `chips show --json` prints it (with the overrides applied), and its warnings.
#[pyfunction]
#[pyo3(signature = (given, hbm_tbps=None, overrides=None))]
pub fn chip_json(
    given: &str,
    hbm_tbps: Option<f64>,
    overrides: Overrides,
) -> PyResult<(String, Vec<String>)> {
    let chip = load_chip(given, hbm_tbps, &overrides)?;
    let json = serde_json::to_string(&chip.spec).map_err(Failure::from)?;
    Ok((json, chip.warnings))
}

/// Where a graph comes from: `--model`, `--import` or `--onnx`, with the shape flags.
#[derive(Debug, Clone, FromPyObject)]
#[pyo3(from_item_all)]
pub struct GraphChoice {
    /// `model`, `import` or `onnx`.
    pub kind: String,
    /// The zoo name or the path.
    pub source: String,
    /// `--mode`.
    pub mode: String,
    /// `--batch`.
    pub batch: u64,
    /// `--kv` (or `--seq`).
    pub kv: u64,
    /// `--num-layers`.
    pub num_layers: Option<usize>,
    /// `--dtype` (zoo models).
    pub dtype: Option<String>,
    /// `--compat` (imports): `clean` or `reference`.
    pub compat: Option<String>,
}

/// A zoo model or model file, with the warnings the CLI prints for it (source::load_model).
pub fn zoo_model(
    name: &str,
) -> Result<(std::borrow::Cow<'static, ZooModel>, Vec<String>), Failure> {
    let (m, mut warnings) = ZooModel::load_with_warnings(name)?;
    if let std::borrow::Cow::Owned(own) = &m {
        for line in own.count_mismatches()? {
            warnings.push(format!("{name}: {line}"));
        }
    }
    Ok((m, warnings))
}

/// Checks that `name` is a zoo model, a model file or a config.json: its canonical name and
/// layer count, and the warnings.
#[pyfunction]
pub fn check_model(name: &str) -> PyResult<(String, usize, Vec<String>)> {
    let (m, warnings) = zoo_model(name)?;
    Ok((m.name.clone(), m.layers(), warnings))
}

impl GraphChoice {
    /// Builds or imports the graph as the CLI's `GraphSource::load` does; the warnings it
    /// prints on stderr are returned.
    pub fn load(&self) -> Result<(Graph, Vec<String>), Failure> {
        let mode = Mode::parse(&self.mode)?;
        match self.kind.as_str() {
            "model" => {
                let (m, warnings) = zoo_model(&self.source)?;
                let mut params = ZooParams::new(mode, self.batch, self.kv);
                params.layers = self.num_layers;
                if let Some(d) = &self.dtype {
                    params.dtypes = Dtypes::parse(d).map_err(Failure::input)?;
                }
                Ok((m.build(&params)?, warnings))
            }
            "import" | "onnx" => {
                if self.dtype.is_some() {
                    return Err(Failure::input(
                        "--dtype applies to a zoo model (--model); an imported graph keeps the \
                         importer's fp16",
                    ));
                }
                let mut opts = ImportOptions::new(mode, self.batch, self.kv);
                opts.compat = match self.compat.as_deref() {
                    None | Some("clean") => Compat::Clean,
                    Some("reference") => Compat::Reference,
                    Some(other) => {
                        return Err(Failure::input(format!(
                            "compat '{other}': one of clean, reference"
                        )))
                    }
                };
                opts.num_layers = self.num_layers;
                let file = Path::new(&self.source);
                let g = if self.kind == "onnx" {
                    import_onnx_file(file, &opts)?
                } else {
                    import_file(file, &opts)?
                };
                let mut warnings = Vec::new();
                if opts.num_layers.is_none() && g.layers.layers <= 1 && g.ops.len() > 1 {
                    warnings.push(format!(
                        "{}: no repeating layer found ({}); pass --num-layers N if the model \
                         has N identical layers",
                        file.display(),
                        elk_model::error::describe_layers(&g.layers)
                    ));
                }
                Ok((g, warnings))
            }
            other => Err(Failure::input(format!(
                "model kind '{other}': one of model, import, onnx"
            ))),
        }
    }
}
