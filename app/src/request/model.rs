//! The model of a request and the run it is built for.

use super::error::{RequestError, Result};
use super::notice::Notice;
use elk_model::dtype::Dtypes;
use elk_model::graph::{Graph, Mode};
use elk_model::import::{import_file, import_onnx_file, Compat, ImportOptions};
use elk_model::plan::PlanRules;
use elk_model::zoo::{AdamState, ZooModel, ZooParams};
use serde::Serialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The model of the built-in default (`elk-opt compare` with no flags, Python's default).
pub const DEFAULT_MODEL: &str = "llama2-13b";

/// Where a graph comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelSource {
    /// `--model`: a zoo name, a model file (TOML) or a Hugging Face config.json.
    Zoo(String),
    /// `--import`: a graph in the reference JSON format (an ONNX model when its name ends in
    /// `.onnx`).
    Import(PathBuf),
    /// `--onnx`: an ONNX model, whatever its file is called.
    Onnx(PathBuf),
}

impl ModelSource {
    /// A model file by what it holds, as Python's `Model.from_file` takes it: `.onnx` an ONNX
    /// model; a JSON object with `model_type` or `architectures` a Hugging Face config.json
    /// (a zoo source); any other `.json` a reference-format graph; anything else a model
    /// file (TOML).
    pub fn of_file(path: &Path) -> ModelSource {
        let name = path.to_string_lossy();
        if name.ends_with(".onnx") {
            return ModelSource::Onnx(path.to_path_buf());
        }
        if name.ends_with(".json") && !is_hf_config(path) {
            return ModelSource::Import(path.to_path_buf());
        }
        ModelSource::Zoo(name.into_owned())
    }

    /// `model`, `import` or `onnx`: the flag (and Python keyword) that names this source.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelSource::Zoo(_) => "model",
            ModelSource::Import(_) => "import",
            ModelSource::Onnx(_) => "onnx",
        }
    }
}

/// A JSON file whose top level is an object with `model_type` or `architectures`.
fn is_hf_config(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    matches!(
        serde_json::from_str::<serde_json::Value>(&text),
        Ok(serde_json::Value::Object(o)) if o.contains_key("model_type") || o.contains_key("architectures")
    )
}

/// A model to build or import, with the element types a zoo model takes and the flavour an
/// import takes.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequest {
    /// Where the graph comes from.
    pub source: ModelSource,
    /// `--compat`: the importer's flavour (imports only; `None`: clean).
    pub compat: Option<Compat>,
    /// `--dtype`: the element types of a zoo model (`None`: fp16 everywhere).
    pub dtype: Option<Dtypes>,
    /// `--optimizer-dtype`: the Adam state's element types in training (zoo models).
    pub optimizer_dtype: Option<AdamState>,
}

impl Default for ModelRequest {
    /// The built-in default: [`DEFAULT_MODEL`].
    fn default() -> Self {
        ModelRequest::of(ModelSource::Zoo(DEFAULT_MODEL.into()))
    }
}

/// The run a graph is built or imported for: `--mode`, `--batch`, `--kv` and `--num-layers`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunShape {
    /// Decode, prefill, forward-batch or training.
    pub mode: Mode,
    /// Batch size.
    pub batch: u64,
    /// KV length (decode) or sequence length (every other mode), tokens.
    pub kv: u64,
    /// A zoo model's layer count, or the number of identical layers an imported graph has
    /// (`None`: the model's own, or what detection finds).
    pub num_layers: Option<usize>,
}

impl Default for RunShape {
    /// Decode, batch 32, KV 2048, the model's own layers: every command's default.
    fn default() -> Self {
        RunShape {
            mode: Mode::Decode,
            batch: 32,
            kv: 2048,
            num_layers: None,
        }
    }
}

impl RunShape {
    /// A zoo model's parameters for this run (fp16, fp32 Adam state: set the rest after).
    pub fn zoo_params(&self) -> ZooParams {
        let mut params = ZooParams::new(self.mode, self.batch, self.kv);
        params.layers = self.num_layers;
        params
    }

    /// An importer's options for this run (clean parse: set the flavour after).
    pub fn import_options(&self) -> ImportOptions {
        let mut opts = ImportOptions::new(self.mode, self.batch, self.kv);
        opts.num_layers = self.num_layers;
        opts
    }
}

impl ModelRequest {
    /// The model of `source` with the default element types and flavour.
    pub fn of(source: ModelSource) -> ModelRequest {
        ModelRequest {
            source,
            compat: None,
            dtype: None,
            optimizer_dtype: None,
        }
    }

    /// Refuses what does not apply to the source: element types for an imported graph, an
    /// importer flavour for a zoo model.
    pub fn validate(&self) -> Result<()> {
        match self.source {
            ModelSource::Import(_) | ModelSource::Onnx(_) => {
                if self.dtype.is_some() {
                    return Err(RequestError::refused(
                        "--dtype applies to a zoo model (--model); an imported graph keeps the \
                         importer's fp16",
                    ));
                }
                if self.optimizer_dtype.is_some() {
                    return Err(RequestError::refused(
                        "--optimizer-dtype applies to a zoo model (--model); an imported \
                         graph's training step keeps fp32 Adam state",
                    ));
                }
            }
            ModelSource::Zoo(_) => {
                if self.compat.is_some() {
                    return Err(RequestError::refused(
                        "--compat is the importer's flavour: it applies to --import FILE, not \
                         to a zoo model",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks the model without building a graph: a zoo model or model file is read (its
    /// canonical name and layer count), a graph file must be readable (its file name, and no
    /// layer count: detection finds it once the graph is built). Warnings go to `notice`.
    pub fn check(&self, notice: &mut dyn Notice) -> Result<(String, Option<usize>)> {
        self.validate()?;
        match &self.source {
            ModelSource::Zoo(name) => {
                let m = zoo_model(name, notice)?;
                Ok((m.name.clone(), Some(m.layers())))
            }
            ModelSource::Import(file) | ModelSource::Onnx(file) => {
                std::fs::File::open(file).map_err(|error| elk_model::ModelError::Io {
                    path: file.clone(),
                    error,
                })?;
                let name = file.file_name().unwrap_or(file.as_os_str());
                Ok((name.to_string_lossy().into_owned(), None))
            }
        }
    }

    /// Builds (zoo model) or imports the graph for `shape`; the warnings go to `notice`.
    pub fn load(&self, shape: &RunShape, notice: &mut dyn Notice) -> Result<Graph> {
        self.load_on(shape, None, notice)
    }

    /// [`ModelRequest::load`] for a run on `chip`: without `--dtype`, a zoo model's published
    /// weight dtype if the chip's cost model prices it, else fp16 with a warning
    /// ([`ZooModel::default_dtypes_on`]).
    pub fn load_on(
        &self,
        shape: &RunShape,
        chip: Option<&elk_model::chip::ChipSpec>,
        notice: &mut dyn Notice,
    ) -> Result<Graph> {
        self.validate()?;
        match &self.source {
            ModelSource::Zoo(name) => {
                let model = zoo_model(name, notice)?;
                let mut params = shape.zoo_params();
                params.dtypes = match (self.dtype, chip) {
                    (Some(d), _) => d,
                    (None, None) => model.default_dtypes(),
                    (None, Some(chip)) => {
                        let (d, why) = model.default_dtypes_on(chip);
                        why.into_iter().for_each(|w| notice.warn(w));
                        d
                    }
                };
                params.adam = self.optimizer_dtype.unwrap_or_default();
                match chip {
                    Some(chip) => fit_to_chip(&model, &mut params, chip, notice),
                    None => Ok(model.build(&params)?),
                }
            }
            ModelSource::Import(file) => self.import(file, shape, false, notice),
            ModelSource::Onnx(file) => self.import(file, shape, true, notice),
        }
    }

    /// Imports a reference-format graph or an ONNX model; when no layer count was given and
    /// detection finds no repeating layer, says so (every later step then treats the graph
    /// as one layer: `--layers 0..1` is the whole graph, Elk's preload depth spans every
    /// operator).
    fn import(
        &self,
        file: &Path,
        shape: &RunShape,
        onnx: bool,
        notice: &mut dyn Notice,
    ) -> Result<Graph> {
        let mut opts = shape.import_options();
        opts.compat = self.compat.unwrap_or_default();
        let g = if onnx {
            import_onnx_file(file, &opts)?
        } else {
            import_file(file, &opts)?
        };
        if opts.num_layers.is_none() && g.layers.layers <= 1 && g.ops.len() > 1 {
            notice.warn(format!(
                "{}: no repeating layer found ({}); pass --num-layers N if the model has N \
                 identical layers",
                file.display(),
                elk_model::error::describe_layers(&g.layers)
            ));
        }
        Ok(g)
    }

    /// The inputs as `--json` prints them in `config`.
    pub fn config(&self, shape: &RunShape) -> GraphConfig {
        let path = |p: &PathBuf| Some(p.clone());
        let (model, import, onnx) = match &self.source {
            ModelSource::Zoo(name) => (Some(name.clone()), None, None),
            ModelSource::Import(p) => (None, path(p), None),
            ModelSource::Onnx(p) => (None, None, path(p)),
        };
        let compat =
            matches!(self.source, ModelSource::Import(_)).then(|| self.compat.unwrap_or_default());
        GraphConfig {
            model,
            import,
            onnx,
            mode: shape.mode,
            batch: shape.batch,
            kv_tokens: shape.kv,
            num_layers: shape.num_layers,
            compat: compat.map(|c| match c {
                Compat::Clean => "clean",
                Compat::Reference => "reference",
            }),
            plan_rules: match compat {
                Some(Compat::Reference) => PlanRules::REFERENCE.name(),
                _ => PlanRules::SPEC.name(),
            },
            dtype: self
                .dtype
                .filter(|d| !d.is_default())
                .map(|d| d.to_string()),
            optimizer_dtype: self
                .optimizer_dtype
                .filter(|a| !a.is_default())
                .map(|a| a.to_string()),
        }
    }
}

/// A zoo model or model file by name or path. A file whose published counts the generated
/// graph misses by more than the tolerance gets a warning per count (the zoo's own files are
/// held to them by a test); a config.json with keys elk-opt does not know, one line listing
/// them.
pub fn zoo_model(name: &str, notice: &mut dyn Notice) -> Result<Cow<'static, ZooModel>> {
    let (m, warnings) = ZooModel::load_with_warnings(name)?;
    for line in warnings {
        notice.warn(line);
    }
    if let Cow::Owned(own) = &m {
        for line in own.count_mismatches()? {
            notice.warn(format!("{name}: {line}"));
        }
    }
    Ok(m)
}

/// The graph inputs as `--json` prints them in `config`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct GraphConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    import: Option<PathBuf>,
    /// `--onnx FILE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    onnx: Option<PathBuf>,
    mode: Mode,
    batch: u64,
    /// KV length (decode) or sequence length, tokens.
    kv_tokens: u64,
    /// `--num-layers` (`null`: the model's own count).
    num_layers: Option<usize>,
    /// The importer flavour (imports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    compat: Option<&'static str>,
    /// The planning rules in force: `reference` with `--compat reference`, else `clean`
    /// (docs/plans.md, "Rules").
    plan_rules: &'static str,
    /// `--dtype` (`w8a16`), left out for fp16 everywhere, the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    dtype: Option<String>,
    /// `--optimizer-dtype` (`m=bf16,master=fp32`), left out for the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    optimizer_dtype: Option<String>,
}

/// Whether `chip` has Tensix cores, whose software runs a gated FFN's gate and up apart
/// (Tenstorrent's `ff1` and `ff3`): its gated FFNs are built as separate matmuls.
/// `model` built with `params` for `chip`: its gated FFNs as separate gate and up matmuls on
/// a Tensix chip or where the fused weight exceeds the chip's SRAM (then `params` says so,
/// for the builds that follow: an MoE run's steps), and its output operators over the SRAM
/// cut into column chunks, each cut warned about through `notice`.
pub(super) fn fit_to_chip(
    model: &elk_model::zoo::ZooModel,
    params: &mut elk_model::zoo::ZooParams,
    chip: &elk_model::chip::ChipSpec,
    notice: &mut dyn Notice,
) -> Result<Graph> {
    params.separate_gate_up = is_tensix(chip);
    let mut graph = model.build(params)?;
    if !params.separate_gate_up && fused_gate_up_too_wide(&graph, chip) {
        params.separate_gate_up = true;
        graph = model.build(params)?;
    }
    split_for(&mut graph, chip, notice);
    Ok(graph)
}

fn is_tensix(chip: &elk_model::chip::ChipSpec) -> bool {
    matches!(
        chip.cost_model,
        elk_model::chip::CostModelSpec::Tensix { .. }
    )
}

/// Whether a fused gate/up projection's weight exceeds `chip`'s SRAM (no plan could hold
/// it): then the gated FFNs run as separate matmuls. Chips that hold it keep the fused
/// projection, so no result on them changes.
fn fused_gate_up_too_wide(graph: &Graph, chip: &elk_model::chip::ChipSpec) -> bool {
    let sram = chip.total_sram_bytes();
    graph
        .ops
        .iter()
        .filter(|op| op.name.ends_with(".gate_up"))
        .any(|op| op.tensors.get(2).is_some_and(|w| w.bytes().0 > sram))
}

/// Cuts the output operators whose weight exceeds all of `chip`'s SRAM (no plan could hold
/// it) into column chunks of at most a quarter of it ([`Graph::split_wide_outputs`]), saying
/// so: the chunk in use, the next one preloading and the activations must fit together.
/// Operators that fit are left whole, so no result on a chip that holds them changes.
fn split_for(graph: &mut Graph, chip: &elk_model::chip::ChipSpec, notice: &mut dyn Notice) {
    use elk_stage::units::si;
    let sram = chip.total_sram_bytes();
    for s in graph.split_wide_outputs(sram, sram / 4) {
        notice.warn(format!(
            "{}: its weight ({}) exceeds {}'s SRAM ({}); run as {} column chunks of at most {} \
             each, as a matmul streaming its weight from DRAM runs it",
            s.op,
            si(s.weight_bytes as f64, "B"),
            chip.name,
            si(sram as f64, "B"),
            s.chunks,
            si(s.chunk_bytes as f64, "B"),
        ));
    }
}
