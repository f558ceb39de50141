//! The built-in model zoo (SPEC §2.1.1): graphs generated from published hyper-parameters,
//! no files needed.
//!
//! Each entry states its published parameter count and where it comes from; a test checks
//! every generated graph against it (within 1%).

mod builder;
mod transformer;

use crate::error::{ModelError, Result};
use crate::graph::{classify_residency, link_producers, Graph, LayerStructure, Mode};
use crate::plan::PlanRules;
use transformer::{Ffn, Frame, Norm, Run, Transformer};

/// Parameters of one generated graph.
#[derive(Clone, Copy, Debug)]
pub struct ZooParams {
    /// Decode, prefill or training.
    pub mode: Mode,
    /// Batch size.
    pub batch: u64,
    /// S: KV length in decode, sequence length otherwise (vision models fix their own).
    pub seq: u64,
    /// Override the number of layers (for small experiments).
    pub layers: Option<usize>,
    /// Bytes per element (fp16: 2).
    pub dtype_bytes: u64,
}

impl ZooParams {
    /// fp16, the model's own layer count.
    pub fn new(mode: Mode, batch: u64, seq: u64) -> ZooParams {
        ZooParams {
            mode,
            batch,
            seq,
            layers: None,
            dtype_bytes: 2,
        }
    }
}

/// One zoo model.
#[derive(Clone, Copy, Debug)]
pub struct ZooModel {
    /// Name used on the command line.
    pub name: &'static str,
    /// Published parameter count.
    pub published_params: f64,
    /// Where that count comes from.
    pub source: &'static str,
    config: Transformer,
    /// Fixed token count for vision models (patches + CLS), `None` for text models.
    fixed_tokens: Option<u64>,
}

impl ZooModel {
    /// Number of layers.
    pub fn layers(&self) -> usize {
        self.config.layers
    }

    /// Whether decode (a KV cache) applies to this model.
    pub fn supports_decode(&self) -> bool {
        self.fixed_tokens.is_none()
    }
}

const fn llama(hidden: u64, layers: usize, heads: u64, kv_heads: u64, ffn_dim: u64) -> Transformer {
    Transformer {
        hidden,
        layers,
        heads,
        kv_heads,
        head_dim: hidden / heads,
        ffn_dim,
        vocab: 32000,
        positions: 0,
        norm: Norm::Rms,
        pre_norm: true,
        sandwich_norm: false,
        bias: false,
        rotary: true,
        ffn: Ffn::Gated("Sigmoid"),
        frame: Frame::DecoderLm { tied: false },
    }
}

const fn opt(hidden: u64, layers: usize, heads: u64) -> Transformer {
    Transformer {
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        ffn_dim: 4 * hidden,
        vocab: 50272,
        positions: 2050,
        norm: Norm::Layer,
        pre_norm: true,
        sandwich_norm: false,
        bias: true,
        rotary: false,
        ffn: Ffn::Plain("Relu"),
        frame: Frame::DecoderLm { tied: true },
    }
}

const fn bert(hidden: u64, layers: usize, heads: u64) -> Transformer {
    Transformer {
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        ffn_dim: 4 * hidden,
        vocab: 30522,
        positions: 512,
        norm: Norm::Layer,
        pre_norm: false,
        sandwich_norm: false,
        bias: true,
        rotary: false,
        ffn: Ffn::Plain("Gelu"),
        frame: Frame::Bert,
    }
}

/// Every zoo model.
pub const MODELS: [ZooModel; 12] = [
    ZooModel {
        name: "llama2-7b",
        published_params: 6.738e9,
        source: "Llama 2 paper / HF meta-llama/Llama-2-7b-hf (6,738,415,616)",
        config: llama(4096, 32, 32, 32, 11008),
        fixed_tokens: None,
    },
    ZooModel {
        name: "llama2-13b",
        published_params: 13.016e9,
        source: "Llama 2 paper / HF meta-llama/Llama-2-13b-hf (13,015,864,320)",
        config: llama(5120, 40, 40, 40, 13824),
        fixed_tokens: None,
    },
    ZooModel {
        name: "llama2-70b",
        published_params: 68.977e9,
        source: "HF meta-llama/Llama-2-70b-hf (68,976,648,192; marketed as 70B), GQA 64q/8kv",
        config: llama(8192, 80, 64, 8, 28672),
        fixed_tokens: None,
    },
    ZooModel {
        name: "opt-1.3b",
        published_params: 1.316e9,
        source: "OPT paper Table 1 / HF facebook/opt-1.3b (1,315,758,080)",
        config: opt(2048, 24, 32),
        fixed_tokens: None,
    },
    ZooModel {
        name: "opt-6.7b",
        published_params: 6.658e9,
        source: "OPT paper Table 1 / HF facebook/opt-6.7b (6,658,473,984)",
        config: opt(4096, 32, 32),
        fixed_tokens: None,
    },
    ZooModel {
        name: "opt-13b",
        published_params: 12.853e9,
        source: "HF facebook/opt-13b (12,853,473,280; marketed as 13B)",
        config: opt(5120, 40, 40),
        fixed_tokens: None,
    },
    ZooModel {
        name: "opt-30b",
        published_params: 29.975e9,
        source: "OPT paper Table 1 / HF facebook/opt-30b (29,974,589,440)",
        config: opt(7168, 48, 56),
        fixed_tokens: None,
    },
    ZooModel {
        name: "gemma2-27b",
        published_params: 27.227e9,
        source: "Gemma 2 report Table 1 / HF google/gemma-2-27b (27,227,128,320)",
        config: Transformer {
            hidden: 4608,
            layers: 46,
            heads: 32,
            kv_heads: 16,
            head_dim: 128,
            ffn_dim: 36864,
            vocab: 256000,
            positions: 0,
            norm: Norm::Rms,
            pre_norm: true,
            sandwich_norm: true,
            bias: false,
            rotary: true,
            ffn: Ffn::Gated("Gelu"),
            frame: Frame::DecoderLm { tied: true },
        },
        fixed_tokens: None,
    },
    ZooModel {
        name: "bert-base",
        published_params: 109.48e6,
        source: "HF bert-base-uncased with pooler (109,482,240; BERT paper: 110M)",
        config: bert(768, 12, 12),
        fixed_tokens: None,
    },
    ZooModel {
        name: "bert-large",
        published_params: 335.14e6,
        source: "HF bert-large-uncased with pooler (335,141,888; BERT paper: 340M)",
        config: bert(1024, 24, 16),
        fixed_tokens: None,
    },
    ZooModel {
        name: "vit-h-14",
        published_params: 632.0e6,
        source: "ViT paper Table 1 (ViT-Huge: 632M), 224² input, 14² patches, 1000 classes",
        config: Transformer {
            hidden: 1280,
            layers: 32,
            heads: 16,
            kv_heads: 16,
            head_dim: 80,
            ffn_dim: 5120,
            vocab: 0,
            positions: 0,
            norm: Norm::Layer,
            pre_norm: true,
            sandwich_norm: false,
            bias: true,
            rotary: false,
            ffn: Ffn::Plain("Gelu"),
            frame: Frame::Vit {
                patch_elems: 3 * 14 * 14,
                classes: 1000,
            },
        },
        fixed_tokens: Some(257),
    },
    ZooModel {
        name: "dit-xl-2",
        published_params: 675.13e6,
        source:
            "DiT paper Table 1 (DiT-XL/2: 675M; 675,129,632 with the position table), 256² images",
        config: Transformer {
            hidden: 1152,
            layers: 28,
            heads: 16,
            kv_heads: 16,
            head_dim: 72,
            ffn_dim: 4608,
            vocab: 0,
            positions: 0,
            norm: Norm::LayerNoAffine,
            pre_norm: true,
            sandwich_norm: false,
            bias: true,
            rotary: false,
            ffn: Ffn::Plain("Gelu"),
            frame: Frame::Dit {
                patch_elems: 16,
                out_elems: 32,
                freq_dim: 256,
                labels: 1001,
            },
        },
        fixed_tokens: Some(256),
    },
];

/// Looks a zoo model up by name.
pub fn find(name: &str) -> Result<&'static ZooModel> {
    MODELS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| ModelError::Unknown {
            what: "model",
            name: name.into(),
            known: MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", "),
        })
}

/// Generates the graph of zoo model `name`.
pub fn build(name: &str, params: &ZooParams) -> Result<Graph> {
    let model = find(name)?;
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
            "{name} is a vision model: decode does not apply (use --mode prefill or training)"
        )));
    }
    let mut config = model.config;
    if let Some(l) = params.layers {
        config.layers = l;
    }
    let seq = model.fixed_tokens.unwrap_or(params.seq);
    // Every loop nest is at most B · S · S · width (attention scores, prefill) with width the
    // widest weight dimension; keep byte counts well inside u64.
    let width = [
        config.heads * config.head_dim,
        config.ffn_dim,
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
    };
    let (builder, prologue, per_layer) = config.build(&run, params.dtype_bytes);
    let mut ops = builder.ops;
    classify_residency(&mut ops);
    link_producers(&mut ops);
    let layers = LayerStructure {
        prologue,
        ops_per_layer: per_layer,
        layers: config.layers,
        epilogue: ops.len() - prologue - per_layer * config.layers,
    };
    let label = if decode { "kv" } else { "s" };
    Ok(Graph {
        name: format!(
            "{name} {} b{} {label}{seq}",
            params.mode.as_str(),
            params.batch
        ),
        ops,
        layers,
        plan_rules: PlanRules::SPEC,
    })
}
