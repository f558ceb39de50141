//! Requests as keyword arguments name them: what the Python package sends (one JSON object
//! per request, only the keywords the user gave), turned into the request types with the
//! same defaults and refusals the CLI's flags get. A keyword left out takes the request's
//! default ([`defaults`] lists them, and Python's signatures show them from there).

use super::chip::{ChipRequest, DramReaders};
use super::compare::BoundChoice;
use super::error::{RequestError, Result};
use super::input::InstanceInput;
use super::instance::{Cut, InstanceRequest, StageChoices};
use super::model::{ModelRequest, ModelSource, RunShape, DEFAULT_MODEL};
use super::moe::MoeRequest;
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
    /// `--dram-readers K`, or `"auto"`.
    #[serde(default)]
    pub dram_readers: Option<ReadersKey>,
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

/// Parses a request's keywords (a JSON object); an unknown keyword or a value of the wrong
/// type is refused, naming it (without serde's position in a JSON text the user never
/// wrote).
pub fn parse<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| {
        let at = format!(" at line {} column {}", e.line(), e.column());
        let why = e.to_string();
        let why = why.strip_suffix(&at).unwrap_or(&why);
        RequestError::refused(format!("{what}: {why}"))
    })
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

/// Python's `Chip(dram_readers=…)`: a count or `"auto"`.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
pub enum ReadersKey {
    /// `--dram-readers K`.
    Count(u64),
    /// `--dram-readers auto` (any other word is refused).
    Word(String),
}

impl ReadersKey {
    fn request(&self) -> Result<DramReaders> {
        match self {
            ReadersKey::Count(k) => Ok(DramReaders::Count(*k)),
            ReadersKey::Word(w) if w == "auto" => Ok(DramReaders::Auto),
            ReadersKey::Word(w) => Err(RequestError::refused(format!(
                "dram_readers '{w}': a whole number of cores, or \"auto\""
            ))),
        }
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
            dram_readers: self
                .dram_readers
                .as_ref()
                .map(ReadersKey::request)
                .transpose()?,
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
                load_order: load_order(&self.load_order)?.unwrap_or(choices.load_order),
                window: self.window,
                noc_row: noc_row(self.noc_row.as_deref())?.unwrap_or(choices.noc_row),
                expert_parallel: self.expert_parallel.unwrap_or(choices.expert_parallel),
            },
        };
        request.cut.range()?;
        request.choices.validate()?;
        Ok(request)
    }
}

/// `load_order`: `free`, `fixed` or a displacement (a number or its digits).
fn load_order(v: &Option<Value>) -> Result<Option<LoadOrder>> {
    Ok(match v {
        None => None,
        Some(Value::String(s)) => Some(LoadOrder::parse(s)?),
        Some(v) => Some(LoadOrder::parse(&v.to_string())?),
    })
}

/// `noc_row`: `phased` or `spec`.
fn noc_row(v: Option<&str>) -> Result<Option<NocRow>> {
    match v {
        None => Ok(None),
        Some("phased") => Ok(Some(NocRow::Phased)),
        Some("spec") => Ok(Some(NocRow::Spec)),
        Some(other) => Err(RequestError::refused(format!(
            "noc_row '{other}': one of phased, spec"
        ))),
    }
}

/// A run of the MoE load policies as Python's `moe()` takes it.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct MoeKeys {
    /// `--model`.
    #[serde(default)]
    pub model: Option<String>,
    /// The chip.
    #[serde(default)]
    pub chip: ChipKeys,
    /// `--batch`.
    #[serde(default)]
    pub batch: Option<u64>,
    /// `--kv`.
    #[serde(default)]
    pub kv: Option<u64>,
    /// `--num-layers`.
    #[serde(default)]
    pub num_layers: Option<usize>,
    /// `--dtype`.
    #[serde(default)]
    pub dtype: Option<String>,
    /// `--routing`.
    #[serde(default)]
    pub routing: Option<String>,
    /// `--steps`.
    #[serde(default)]
    pub steps: Option<u64>,
    /// `--seed`.
    #[serde(default)]
    pub seed: Option<u64>,
    /// `--policies`.
    #[serde(default)]
    pub policies: Option<Vec<String>>,
    /// `--methods`.
    #[serde(default)]
    pub methods: Option<Vec<String>>,
    /// `--load-order`.
    #[serde(default)]
    pub load_order: Option<Value>,
    /// `--noc-row`.
    #[serde(default)]
    pub noc_row: Option<String>,
    /// `--expert-parallel`.
    #[serde(default)]
    pub expert_parallel: Option<bool>,
    /// `--bound`: `roofline`, `stage` or `segment`.
    #[serde(default)]
    pub bound: Option<String>,
}

impl MoeKeys {
    /// The MoE request, every keyword left out at `moe`'s default.
    pub fn request(&self) -> Result<MoeRequest> {
        let d = MoeRequest::default();
        let request = MoeRequest {
            model: self.model.clone().unwrap_or(d.model),
            batch: self.batch.unwrap_or(d.batch),
            kv: self.kv.unwrap_or(d.kv),
            num_layers: self.num_layers,
            dtype: self
                .dtype
                .as_deref()
                .map(Dtypes::parse)
                .transpose()
                .map_err(RequestError::refused)?,
            chip: self.chip.request()?,
            routing: self.routing.clone().unwrap_or(d.routing),
            steps: self.steps.unwrap_or(d.steps),
            seed: self.seed.unwrap_or(d.seed),
            policies: self.policies.clone().unwrap_or(d.policies),
            methods: self.methods.clone().unwrap_or(d.methods),
            load_order: load_order(&self.load_order)?.unwrap_or(d.load_order),
            noc_row: noc_row(self.noc_row.as_deref())?.unwrap_or(d.noc_row),
            expert_parallel: self.expert_parallel.unwrap_or(d.expert_parallel),
            bound: self
                .bound
                .as_deref()
                .map(BoundChoice::parse)
                .transpose()?
                .unwrap_or(d.bound),
        };
        request.validate()?;
        Ok(request)
    }
}

/// `compare(routing=…)`'s MoE part: the instance's keywords (`None`: an `Instance` given,
/// which `--routing` refuses as it refuses `--instance`) and the routing's.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct CompareMoeKeys {
    /// The instance's keywords.
    #[serde(default)]
    pub instance: Option<InstanceKeys>,
    /// `--routing`.
    pub routing: String,
    /// `--steps`.
    #[serde(default)]
    pub steps: Option<u64>,
    /// `--seed`.
    #[serde(default)]
    pub seed: Option<u64>,
    /// `--policies`.
    #[serde(default)]
    pub policies: Option<Vec<String>>,
}

impl CompareMoeKeys {
    /// The MoE request `compare --routing` runs ([`MoeRequest::of_compare`]).
    pub fn request(&self) -> Result<MoeRequest> {
        let input = match &self.instance {
            Some(keys) => InstanceInput::Build(Box::new(keys.request()?)),
            None => InstanceInput::File("(an Instance)".into()),
        };
        let d = MoeRequest::default();
        let request = MoeRequest::of_compare(
            &input,
            &self.routing,
            self.steps.unwrap_or(d.steps),
            self.seed.unwrap_or(d.seed),
            self.policies.as_deref().unwrap_or(&d.policies),
        )?;
        request.validate()?;
        Ok(request)
    }
}

/// Every default a keyword takes when left out, by its Python name, as JSON: `model`,
/// `chip`, `mode`, `batch`, `kv`, `load_order`, `noc_row`, the exact solver's (`backend`,
/// `time_limit`, `linearisation`, `warm_start`, `lp_bound`, `whole_model_bound`,
/// `window_search`, `work_limit`) and `moe`'s (`moe_model`, `routing`, `steps`, `seed`, `methods`,
/// `moe_bound`).
pub fn defaults() -> Value {
    let shape = RunShape::default();
    let choices = StageChoices::default();
    let moe = MoeRequest::default();
    let exact = crate::gap::ExactSettings::milp_within(super::exact::DEFAULT_TIME_LIMIT_S);
    serde_json::json!({
        "backend": exact.backend,
        "time_limit": exact.time_limit_s,
        "linearisation": exact.linearisation,
        "warm_start": exact.warm_start,
        "lp_bound": exact.lp_bound,
        "whole_model_bound": exact.whole_model_bound,
        "window_search": exact.window_search,
        "work_limit": exact.work_limit,
        "moe_model": moe.model,
        "routing": moe.routing,
        "steps": moe.steps,
        "seed": moe.seed,
        "methods": moe.methods,
        "moe_bound": moe.bound,
        "model": DEFAULT_MODEL,
        "chip": ChipRequest::default().given,
        "mode": shape.mode,
        "batch": shape.batch,
        "kv": shape.kv,
        "load_order": choices.load_order,
        "noc_row": choices.noc_row,
    })
}
