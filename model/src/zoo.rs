//! The built-in model zoo (SPEC §2.1.1): graphs generated from published hyper-parameters.
//!
//! Each model is a TOML file (`model/zoo/*.toml`) embedded in the binary, so adding
//! a model is a file, not code, and `--model FILE.toml` reads one of the user's the same way.
//! Each zoo file states its published parameter count and where it comes from; a test checks
//! every generated graph against it (within 1%). A user's file may leave the count out (a
//! Hugging Face config.json states none, [`hf`]): no figure is then made up.

pub(crate) mod builder;
mod file;
pub mod hf;
mod mla;
mod moe;
mod notes;
mod training;
mod transformer;

pub use mla::Mla;
pub use moe::{has_experts, ExpertTokens, GroupScore, Groups, Moe, Scoring};
pub use training::{training_step, AdamState, UPDATE_CHUNK};

use crate::dtype::Dtypes;
use crate::error::{ModelError, Result};
use crate::graph::{classify_residency, link_producers, Graph, LayerStructure, Mode};
use crate::plan::PlanRules;
use std::borrow::Cow;
use std::sync::LazyLock;
use transformer::{Run, Transformer};

/// Parameters of one generated graph.
#[derive(Clone, Copy, Debug)]
pub struct ZooParams {
    /// Decode, prefill, forward-batch or training.
    pub mode: Mode,
    /// Batch size.
    pub batch: u64,
    /// S: KV length in decode, sequence length otherwise (vision models fix their own).
    pub seq: u64,
    /// Override the number of layers (for small experiments).
    pub layers: Option<usize>,
    /// Element types of the weights, the KV cache and the activations (fp16 by default).
    pub dtypes: Dtypes,
    /// Element types of the optimizer state (training only; fp32 by default).
    pub adam: AdamState,
    /// Gated FFNs as two matmuls, gate and up, instead of one fused projection and two
    /// slices: how a chip that cannot hold the fused weight runs it.
    pub separate_gate_up: bool,
}

impl ZooParams {
    /// fp16, the model's own layer count.
    pub fn new(mode: Mode, batch: u64, seq: u64) -> ZooParams {
        ZooParams {
            mode,
            batch,
            seq,
            layers: None,
            dtypes: Dtypes::default(),
            adam: AdamState::default(),
            separate_gate_up: false,
        }
    }
}

/// One zoo model: the contents of a model file (docs/model-files.md).
#[derive(Clone, Debug)]
pub struct ZooModel {
    /// Name used on the command line.
    pub name: String,
    /// Published parameter count (`None`: the file states none, as a config.json does).
    pub published_params: Option<f64>,
    /// Published active parameters per token (MoE models that state it).
    pub published_active_params: Option<f64>,
    /// The published active count leaves out the input embedding table (DeepSeek's
    /// convention); the graph's active count has it, so the comparison takes it off.
    pub active_without_embedding: bool,
    /// The element type of the published weights (an FP8 checkpoint: `fp8`); the default
    /// weight dtype when the user gives no `--dtype` ([`ZooModel::default_dtypes`]).
    pub weight_dtype: Option<crate::dtype::Dtype>,
    /// Where that count and the hyper-parameters come from.
    pub source: String,
    config: Transformer,
    /// Fixed token count for vision models (patches + CLS), `None` for text models.
    fixed_tokens: Option<u64>,
}

impl ZooModel {
    /// Number of layers.
    pub fn layers(&self) -> usize {
        self.config.layers
    }

    /// The element types a run uses without `--dtype`: the published weights' dtype (fp16 if
    /// the file states none), fp16 KV cache and activations.
    pub fn default_dtypes(&self) -> Dtypes {
        let mut d = Dtypes::default();
        if let Some(w) = self.weight_dtype {
            d.weights = w;
        }
        d
    }

    /// [`ZooModel::default_dtypes`] where `chip`'s cost model prices them; else fp16, and the
    /// line saying why (the IPU-Mk2 model prices fp16 and fp32 only, so DeepSeek-V3's fp8
    /// weights run at fp16 on ipu-pod4 unless `--dtype` says otherwise).
    pub fn default_dtypes_on(&self, chip: &crate::chip::ChipSpec) -> (Dtypes, Option<String>) {
        let published = self.default_dtypes();
        match crate::cost::for_chip_with(chip, &published) {
            Ok(_) => (published, None),
            Err(e) => (
                Dtypes::default(),
                Some(format!(
                    "{}'s published weights are {}; running at fp16 on {} (--dtype chooses), \
                     as {e}",
                    self.name, published.weights, chip.name
                )),
            ),
        }
    }

    /// Whether decode (a KV cache) applies to this model.
    pub fn supports_decode(&self) -> bool {
        self.fixed_tokens.is_none()
    }

    /// One layer at decode B32 KV2048 (prefill for a model without decode): the graph whose
    /// plan tables `plan_digest` and the plan-digest test hash.
    pub fn one_layer(&self) -> Result<Graph> {
        let mode = if self.supports_decode() {
            Mode::Decode
        } else {
            Mode::Prefill
        };
        let mut params = ZooParams::new(mode, 32, 2048);
        params.layers = Some(1);
        self.build(&params)
    }

    /// Parses a model file's text; `file` names it in errors.
    pub fn from_toml_str(file: &str, text: &str) -> Result<ZooModel> {
        file::parse(file, text)
    }

    /// A zoo model by name, or else a model file by path: TOML, or a Hugging Face
    /// config.json when the name ends in `.json` ([`hf`]).
    pub fn load(name_or_path: &str) -> Result<Cow<'static, ZooModel>> {
        Ok(ZooModel::load_with_warnings(name_or_path)?.0)
    }

    /// [`ZooModel::load`], and the warnings a caller should show (a config.json's keys that
    /// elk-opt does not know).
    pub fn load_with_warnings(name_or_path: &str) -> Result<(Cow<'static, ZooModel>, Vec<String>)> {
        if let Some(m) = models().iter().find(|m| m.name == name_or_path) {
            return Ok((Cow::Borrowed(m), Vec::new()));
        }
        let path = std::path::Path::new(name_or_path);
        let json = name_or_path.ends_with(".json");
        if !path.exists() && !json && !name_or_path.ends_with(".toml") {
            return Err(unknown(name_or_path));
        }
        let text = crate::error::read_file(path)?;
        if json {
            let hf = hf::read(name_or_path, &text)?;
            return Ok((Cow::Owned(hf.model), hf.warnings));
        }
        Ok((
            Cow::Owned(ZooModel::from_toml_str(name_or_path, &text)?),
            Vec::new(),
        ))
    }
}

/// How far a generated count may be from a published one: 1 %, or one unit of the published
/// figure's last significant digit when it is given to fewer than four (a report's "3.3 B"
/// may be 3.35 B rounded down).
pub fn published_tolerance(published: f64) -> f64 {
    let digits = format!("{published:e}");
    let mantissa = digits.split('e').next().unwrap_or("");
    let significant = mantissa.chars().filter(char::is_ascii_digit).count() as i32;
    let exponent = published.abs().log10().floor() as i32;
    let unit = if significant < 4 {
        10f64.powi(exponent - significant + 1)
    } else {
        0.0
    };
    (0.01 * published).max(unit)
}

impl ZooModel {
    /// The graph's active count `active` in the published count's convention: without the
    /// input embedding table where the file says the published figure leaves it out.
    pub fn active_as_published(&self, active: u64) -> u64 {
        if self.active_without_embedding {
            active - self.config.vocab * self.config.hidden
        } else {
            active
        }
    }

    /// Why the generated graph's parameters disagree with the file's published counts
    /// (beyond [`published_tolerance`]), if they do: one line per count.
    pub fn count_mismatches(&self) -> Result<Vec<String>> {
        let (total, active) = self.parameter_counts()?;
        let mut out = Vec::new();
        let mut check = |what: &str, key: &str, got: u64, published: f64| {
            let off = got as f64 - published;
            if off.abs() > published_tolerance(published) {
                out.push(format!(
                    "{}: the graph has {} {what} parameters, {:+.1} % from {key} = {} \
                     (a wrong hyper-parameter, or a part the generator does not model)",
                    self.name,
                    elk_stage::units::si(got as f64, ""),
                    100.0 * off / published,
                    elk_stage::units::si(published, ""),
                ));
            }
        };
        if let Some(p) = self.published_params {
            check("total", "published_params", total, p);
        }
        if let Some(a) = self.published_active_params {
            check(
                "active",
                "published_active_params",
                self.active_as_published(active),
                a,
            );
        }
        Ok(out)
    }
}

/// The zoo's model files, in `models list` order: (file name, text).
pub const FILES: [(&str, &str); 23] = [
    ("llama2-7b.toml", include_str!("../zoo/llama2-7b.toml")),
    ("llama2-13b.toml", include_str!("../zoo/llama2-13b.toml")),
    ("llama2-70b.toml", include_str!("../zoo/llama2-70b.toml")),
    ("llama3-8b.toml", include_str!("../zoo/llama3-8b.toml")),
    ("llama3.2-1b.toml", include_str!("../zoo/llama3.2-1b.toml")),
    ("llama3.2-3b.toml", include_str!("../zoo/llama3.2-3b.toml")),
    ("mistral-7b.toml", include_str!("../zoo/mistral-7b.toml")),
    ("qwen2-7b.toml", include_str!("../zoo/qwen2-7b.toml")),
    ("phi3-mini.toml", include_str!("../zoo/phi3-mini.toml")),
    (
        "mixtral-8x7b.toml",
        include_str!("../zoo/mixtral-8x7b.toml"),
    ),
    (
        "qwen3-30b-a3b.toml",
        include_str!("../zoo/qwen3-30b-a3b.toml"),
    ),
    ("olmoe-1b-7b.toml", include_str!("../zoo/olmoe-1b-7b.toml")),
    ("deepseek-v3.toml", include_str!("../zoo/deepseek-v3.toml")),
    (
        "deepseek-v2-lite.toml",
        include_str!("../zoo/deepseek-v2-lite.toml"),
    ),
    ("opt-1.3b.toml", include_str!("../zoo/opt-1.3b.toml")),
    ("opt-6.7b.toml", include_str!("../zoo/opt-6.7b.toml")),
    ("opt-13b.toml", include_str!("../zoo/opt-13b.toml")),
    ("opt-30b.toml", include_str!("../zoo/opt-30b.toml")),
    ("gemma2-27b.toml", include_str!("../zoo/gemma2-27b.toml")),
    ("bert-base.toml", include_str!("../zoo/bert-base.toml")),
    ("bert-large.toml", include_str!("../zoo/bert-large.toml")),
    ("vit-h-14.toml", include_str!("../zoo/vit-h-14.toml")),
    ("dit-xl-2.toml", include_str!("../zoo/dit-xl-2.toml")),
];

/// Every zoo model, parsed once from [`FILES`].
pub fn models() -> &'static [ZooModel] {
    static MODELS: LazyLock<Vec<ZooModel>> = LazyLock::new(|| {
        FILES
            .iter()
            .map(|(file, text)| {
                // The files are part of the binary and every one is parsed by the tests: a
                // failure here is a bug in the repository, not in the user's input.
                #[allow(clippy::expect_used)]
                ZooModel::from_toml_str(&format!("model/zoo/{file}"), text)
                    .expect("embedded zoo model file")
            })
            .collect()
    });
    &MODELS
}

fn unknown(name: &str) -> ModelError {
    ModelError::Unknown {
        what: "model",
        name: name.into(),
        known: format!(
            "{} (or a model file FILE.toml or a Hugging Face config.json, docs/model-files.md)",
            models()
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Looks a zoo model up by name.
pub fn find(name: &str) -> Result<&'static ZooModel> {
    models()
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| unknown(name))
}

/// Generates the graph of zoo model `name_or_path` (a name, or else a model file).
pub fn build(name_or_path: &str, params: &ZooParams) -> Result<Graph> {
    ZooModel::load(name_or_path)?.build(params)
}

impl ZooModel {
    /// Generates this model's graph (an MoE model with the balanced routing).
    pub fn build(&self, params: &ZooParams) -> Result<Graph> {
        self.build_routed(params, None)
    }

    /// The MoE block of this model, if it has one.
    pub fn moe(&self) -> Option<&Moe> {
        self.config.moe.as_ref()
    }

    /// The MoE layers of a run of this model (`--num-layers` counts every layer, dense ones
    /// included): how many layers a routing has. Routing is per MoE layer. A run whose layers
    /// are all dense is refused.
    pub fn moe_layers(&self, params: &ZooParams) -> Result<usize> {
        let layers = params.layers.unwrap_or(self.layers());
        let Some(moe) = self.moe() else {
            return Ok(0);
        };
        match moe.moe_layers(layers) {
            0 => Err(ModelError::Invalid(format!(
                "{} with {layers} layers has no MoE layer: its first {} layers are dense \
                 (first_k_dense_replace); ask for more layers",
                self.name, moe.dense_layers
            ))),
            n => Ok(n),
        }
    }

    /// Parameters in all and active per token (equal for a dense model): the weights of the
    /// graph in which every expert receives a token, and of the graph of one token.
    pub fn parameter_counts(&self) -> Result<(u64, u64)> {
        let mode = if self.supports_decode() {
            Mode::Decode
        } else {
            Mode::Prefill
        };
        let one = ZooParams::new(mode, 1, 1);
        let active = self.build(&one)?.totals().parameters;
        let total = match self.moe() {
            Some(moe) => {
                let layers = moe.moe_layers(self.layers());
                let every = ExpertTokens::new(vec![vec![1; moe.experts as usize]; layers]);
                let mut params = one;
                // Every expert receives one token: E tokens, each routed to k experts.
                params.batch = moe.experts;
                self.build_routed_unchecked(&params, Some(&every))?
                    .totals()
                    .parameters
            }
            None => active,
        };
        Ok((total, active))
    }

    /// Generates this model's graph with the tokens each expert receives in each layer
    /// (`None`: the balanced routing). The counts of a layer must sum to its tokens × k.
    pub fn build_routed(
        &self,
        params: &ZooParams,
        experts: Option<&ExpertTokens>,
    ) -> Result<Graph> {
        self.check_routing(params, experts)?;
        self.build_routed_unchecked(params, experts)
    }

    /// Checks that `experts` fits this model and run: one count per expert and layer, each
    /// layer's counts summing to its tokens × k (`None`, the balanced routing, always fits).
    pub fn check_routing(&self, params: &ZooParams, experts: Option<&ExpertTokens>) -> Result<()> {
        if let (Some(t), Some(moe)) = (experts, self.moe()) {
            let layers = self.moe_layers(params)?;
            let tokens = params.batch
                * if params.mode == Mode::Decode {
                    1
                } else {
                    self.fixed_tokens.unwrap_or(params.seq)
                };
            let want = tokens * moe.top_k.min(moe.experts);
            if t.layers() != layers {
                return Err(ModelError::Invalid(format!(
                    "the routing has {} layers, {} has {layers} MoE layers",
                    t.layers(),
                    self.name
                )));
            }
            for l in 0..layers {
                let counts = t.layer(l);
                if counts.len() as u64 != moe.experts {
                    return Err(ModelError::Invalid(format!(
                        "the routing of layer {l} names {} experts, {} has {}",
                        counts.len(),
                        self.name,
                        moe.experts
                    )));
                }
                let sum: u64 = counts.iter().sum();
                if sum != want {
                    return Err(ModelError::Invalid(format!(
                        "the routing of layer {l} assigns {sum} tokens to experts: {tokens} \
                         tokens × top-{} is {want}",
                        moe.top_k
                    )));
                }
            }
        } else if experts.is_some() {
            return Err(ModelError::Invalid(format!(
                "{} has no experts: a routing applies to MoE models only",
                self.name
            )));
        }
        Ok(())
    }

    /// The graph in which experts receive `counts` tokens, without checking that they add up
    /// to the run's tokens × k: the load policies give each expert without tokens a phantom
    /// one, so that its weights have operators (`crate::load_policy`).
    pub(crate) fn build_slots(&self, params: &ZooParams, counts: &ExpertTokens) -> Result<Graph> {
        self.build_routed_unchecked(params, Some(counts))
    }

    fn build_routed_unchecked(
        &self,
        params: &ZooParams,
        experts: Option<&ExpertTokens>,
    ) -> Result<Graph> {
        let model = self;
        let name = model.name.as_str();
        if params.batch == 0 || params.seq == 0 {
            return Err(ModelError::Invalid(
                "batch and sequence/KV length must be ≥ 1".into(),
            ));
        }
        if params.layers == Some(0) {
            return Err(ModelError::Invalid("--layers must be ≥ 1".into()));
        }
        let decode = params.mode == Mode::Decode;
        if decode && !model.supports_decode() {
            return Err(ModelError::Invalid(format!(
                "{name} is a vision model: decode does not apply (use --mode prefill, \
                 forward-batch or training)"
            )));
        }
        if params.mode != Mode::Training && !params.adam.is_default() {
            return Err(ModelError::Invalid(format!(
                "--optimizer-dtype {} applies to --mode training, not {}",
                params.adam,
                params.mode.as_str()
            )));
        }
        let mut config = model.config.clone();
        if let Some(l) = params.layers {
            config.layers = l;
        }
        let seq = model.fixed_tokens.unwrap_or(params.seq);
        // Every loop nest is at most B · S · S · width (attention scores, prefill) with width the
        // widest weight dimension; keep byte counts well inside u64.
        let width = [
            config.heads * config.head_dim,
            config
                .mla
                .map_or(0, |m| config.heads * (m.nope_dim + m.v_dim)),
            config.ffn_dim,
            config
                .moe
                .map_or(0, |m| m.experts.max(2 * m.expert_dim.max(m.shared_dim))),
            config.vocab,
            config.hidden,
        ]
        .into_iter()
        .max()
        .unwrap_or(1) as u128;
        let bound = params.batch as u128 * seq as u128 * seq as u128 * width * 8;
        if bound >= 1 << 62 {
            return Err(ModelError::Invalid(format!(
                "batch {} x sequence {seq} is too large for {name}",
                params.batch
            )));
        }
        let run = Run {
            batch: params.batch,
            q: if decode { 1 } else { seq },
            kv: seq,
            decode,
            experts,
            separate_gate_up: params.separate_gate_up,
        };
        let (builder, prologue, per_layer, layer_ops) = config.build(&run, params.dtypes);
        let mut ops = builder.ops;
        let forward_ops = ops.len();
        if params.mode == Mode::Training {
            ops = training_step(&ops, params.dtypes, params.adam)?;
        }
        classify_residency(&mut ops);
        link_producers(&mut ops);
        // Layers that differ in operator count (a routing giving them different numbers of
        // experts with tokens) are one irregular block.
        let (per_layer, layer_count) = per_layer.unwrap_or((layer_ops, 1));
        let layers = LayerStructure {
            prologue,
            ops_per_layer: per_layer,
            layers: layer_count,
            // In training the backward pass and the updates follow the forward epilogue: the
            // repeated layers are the forward's (a backward layer is not contiguous with its
            // forward layer, and the structure has one repeated block).
            epilogue: ops.len() - prologue - per_layer * layer_count,
        };
        debug_assert!(forward_ops >= prologue + per_layer * layer_count);
        let label = if decode { "kv" } else { "s" };
        let mut dtype = if params.dtypes.is_default() {
            String::new()
        } else {
            format!(" {}", params.dtypes)
        };
        if !params.adam.is_default() {
            dtype.push_str(&format!(" adam {}", params.adam));
        }
        // A model with latent attention says which form of it the graph has.
        let form = match config.mla {
            Some(_) => format!(" {}", mla::Mla::form(decode)),
            None => String::new(),
        };
        Ok(Graph {
            name: format!(
                "{name} {} b{} {label}{seq}{dtype}{form}",
                params.mode.as_str(),
                params.batch
            ),
            ops,
            layers,
            plan_rules: PlanRules::SPEC,
            dtypes: params.dtypes,
        })
    }
}
