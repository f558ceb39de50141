//! Requests as keyword arguments name them: what the Python package sends (one JSON object
//! per request, only the keywords the user gave), turned into the request types with the
//! same defaults and refusals the CLI's flags get. A keyword left out takes the request's
//! default ([`defaults`] lists them, and Python's signatures show them from there).

use super::chip::ChipRequest;
use super::error::{RequestError, Result};
use super::instance::{Cut, InstanceRequest, StageChoices};
use super::model::{ModelRequest, ModelSource, RunShape, DEFAULT_MODEL};
use elk_model::dtype::Dtypes;
use elk_model::graph::Mode;
use elk_model::import::Compat;
use elk_model::zoo::AdamState;
use elk_stage::instance::{LoadOrder, NocRow};
use serde::Deserialize;
use serde_json::Value;

/// A model as Python's `Model` describes it.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ModelKeys {
    /// `model` (a zoo name, model file or config.json), `import` or `onnx`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The zoo name or the path.
    #[serde(default)]
    pub source: Option<String>,
    /// `--dtype` (zoo models).
    #[serde(default)]
    pub dtype: Option<String>,
    /// `--optimizer-dtype` (zoo models, training).
    #[serde(default)]
    pub optimizer_dtype: Option<String>,
    /// `--compat` (imports): `clean` or `reference`.
    #[serde(default)]
    pub compat: Option<String>,
}

/// A chip as Python's `Chip` describes it.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ChipKeys {
    /// A preset or a chip TOML file.
    #[serde(default)]
    pub given: Option<String>,
    /// `--hbm-tbps`.
    #[serde(default)]
    pub hbm_tbps: Option<f64>,
    /// Any other chip key, `[[name, value], …]` in the order given.
    #[serde(default)]
    pub keys: Vec<(String, Value)>,
}

/// An instance as Python's `instance()`, `compare()`, `gap()` and `solve()` take it.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct InstanceKeys {
    /// The model.
    #[serde(default)]
    pub model: ModelKeys,
    /// The chip.
    #[serde(default)]
    pub chip: ChipKeys,
    /// `--mode`.
    #[serde(default)]
    pub mode: Option<String>,
    /// `--batch`.
    #[serde(default)]
    pub batch: Option<u64>,
    /// `--kv`.
    #[serde(default)]
    pub kv: Option<u64>,
    /// `--num-layers`.
    #[serde(default)]
    pub num_layers: Option<usize>,
    /// `--load-order`: `free`, `fixed` or a displacement (a number or its digits).
    #[serde(default)]
    pub load_order: Option<Value>,
    /// `--layers A..B`.
    #[serde(default)]
    pub layers: Option<String>,
    /// `--ops A..B`.
    #[serde(default)]
    pub ops: Option<String>,
    /// `--window W`.
    #[serde(default)]
    pub window: Option<u32>,
    /// `--noc-row`: `phased` or `spec`.
    #[serde(default)]
    pub noc_row: Option<String>,
    /// `--expert-parallel`.
    #[serde(default)]
    pub expert_parallel: Option<bool>,
}

/// Parses a request's keywords (a JSON object); an unknown keyword is refused, naming it.
pub fn parse<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| RequestError::refused(format!("{what}: {e}")))
}

impl ModelKeys {
    /// The model request: a zoo model unless `kind` says otherwise, the default model
    /// without a `source`.
    pub fn request(&self) -> Result<ModelRequest> {
        let source = self.source.clone().unwrap_or_else(|| DEFAULT_MODEL.into());
        let source = match self.kind.as_deref().unwrap_or("model") {
            "model" => ModelSource::Zoo(source),
            "import" => ModelSource::Import(source.into()),
            "onnx" => ModelSource::Onnx(source.into()),
            other => {
                return Err(RequestError::refused(format!(
                    "model kind '{other}': one of model, import, onnx"
                )))
            }
        };
        let refused = RequestError::refused;
        let request = ModelRequest {
            source,
            compat: self.compat.as_deref().map(Compat::parse).transpose()?,
            dtype: self
                .dtype
                .as_deref()
                .map(Dtypes::parse)
                .transpose()
                .map_err(refused)?,
            optimizer_dtype: self
                .optimizer_dtype
                .as_deref()
                .map(AdamState::parse)
                .transpose()
                .map_err(refused)?,
        };
        request.validate()?;
        Ok(request)
    }
}

impl ChipKeys {
    /// The chip request: the default chip without `given`.
    pub fn request(&self) -> Result<ChipRequest> {
        let keys = self
            .keys
            .iter()
            .map(|(k, v)| match toml::Value::try_from(v) {
                Ok(t) => Ok((k.clone(), t)),
                Err(_) => Err(RequestError::refused(format!(
                    "chip key '{k}': {v} is no TOML value"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ChipRequest {
            given: self
                .given
                .clone()
                .unwrap_or_else(|| ChipRequest::default().given),
            hbm_tbps: self.hbm_tbps,
            keys,
        })
    }
}

impl InstanceKeys {
    /// The instance request, every keyword left out at its default.
    pub fn request(&self) -> Result<InstanceRequest> {
        let shape = RunShape::default();
        let choices = StageChoices::default();
        let request = InstanceRequest {
            model: self.model.request()?,
            shape: RunShape {
                mode: self
                    .mode
                    .as_deref()
                    .map(Mode::parse)
                    .transpose()?
                    .unwrap_or(shape.mode),
                batch: self.batch.unwrap_or(shape.batch),
                kv: self.kv.unwrap_or(shape.kv),
                num_layers: self.num_layers,
            },
            chip: self.chip.request()?,
            cut: Cut {
                layers: self.layers.clone(),
                ops: self.ops.clone(),
            },
            choices: StageChoices {
                load_order: match &self.load_order {
                    None => choices.load_order,
                    Some(Value::String(s)) => LoadOrder::parse(s)?,
                    Some(v) => LoadOrder::parse(&v.to_string())?,
                },
                window: self.window,
                noc_row: match self.noc_row.as_deref() {
                    None => choices.noc_row,
                    Some("phased") => NocRow::Phased,
                    Some("spec") => NocRow::Spec,
                    Some(other) => {
                        return Err(RequestError::refused(format!(
                            "noc_row '{other}': one of phased, spec"
                        )))
                    }
                },
                expert_parallel: self.expert_parallel.unwrap_or(choices.expert_parallel),
            },
        };
        request.cut.range()?;
        Ok(request)
    }
}

/// Every default a keyword takes when left out, by its Python name, as JSON: `model`,
/// `chip`, `mode`, `batch`, `kv`, `load_order`, `noc_row`.
pub fn defaults() -> Value {
    let shape = RunShape::default();
    let choices = StageChoices::default();
    serde_json::json!({
        "model": DEFAULT_MODEL,
        "chip": ChipRequest::default().given,
        "mode": shape.mode,
        "batch": shape.batch,
        "kv": shape.kv,
        "load_order": choices.load_order,
        "noc_row": choices.noc_row,
    })
}
