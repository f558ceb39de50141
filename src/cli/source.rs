//! Choosing a graph on the command line: a zoo model by name or an imported file.

use super::flags::RunShapeArgs;
use super::notice::{cli_error, Stderr};
use clap::Args;
use elk_app::request::{ModelRequest, ModelSource};
use elk_model::dtype::Dtypes;
use elk_model::graph::Graph;
use elk_model::import::Compat;
use elk_model::zoo;
use std::path::PathBuf;

/// `--model NAME|FILE.toml`, `--import FILE` or `--onnx FILE.onnx`, with mode, batch and
/// sequence/KV length.
#[derive(Args, Debug, Clone)]
pub struct GraphSource {
    /// Zoo model name (see `models list`), a model file FILE.toml or a Hugging Face
    /// config.json (docs/model-files.md).
    #[arg(long, conflicts_with_all = ["import", "onnx"])]
    pub model: Option<String>,
    /// A graph in the reference JSON format, or an ONNX model when its name ends in `.onnx`.
    #[arg(long, conflicts_with = "onnx")]
    pub import: Option<PathBuf>,
    /// An ONNX model (docs/onnx.md), whatever its file is called; symbolic batch and
    /// sequence dimensions are bound by --batch and --kv.
    #[arg(long, value_name = "FILE.onnx")]
    pub onnx: Option<PathBuf>,
    #[command(flatten)]
    pub shape: RunShapeArgs,
    /// Importer flavour of `--import`: `clean` (the default) or `reference`.
    #[arg(long, value_parser = super::flags::compat)]
    pub compat: Option<Compat>,
    /// Element types of a zoo model: fp16 (the default), bf16, fp8, int8, fp32 for every
    /// tensor, or weights/KV/activations apart as wXaY or wXkvYaZ (bits 32, 16 or 8; e.g.
    /// w8a16: int8 weights, fp16 KV cache and activations) or w=DTYPE,kv=DTYPE,a=DTYPE, where
    /// weights and KV may also be the block floats bfp8 (17/16 byte per element) and bfp4
    /// (9/16), e.g. w=bfp8,kv=bf16,a=bf16.
    #[arg(long, value_parser = super::flags::dtype)]
    pub dtype: Option<Dtypes>,
    /// Element types of the Adam state in `--mode training`: fp32 (the default: fp32
    /// moments and master weights), another dtype for both, or m=DTYPE,master=DTYPE|none.
    #[arg(long, value_name = "DTYPE", value_parser = super::flags::optimizer_dtype)]
    pub optimizer_dtype: Option<elk_model::zoo::AdamState>,
}

impl GraphSource {
    /// The model asked for (`None`: none of `--model`, `--import` and `--onnx`).
    pub fn request(&self) -> Option<ModelRequest> {
        let source = match (&self.model, &self.import, &self.onnx) {
            (Some(name), _, _) => ModelSource::Zoo(name.clone()),
            (_, Some(file), _) => ModelSource::Import(file.clone()),
            (_, _, Some(file)) => ModelSource::Onnx(file.clone()),
            (None, None, None) => return None,
        };
        Some(self.of(source))
    }

    /// The model asked for, else the built-in default ([`ModelRequest::default`]) with the
    /// element types given.
    pub fn request_or_default(&self) -> ModelRequest {
        self.request()
            .unwrap_or_else(|| self.of(ModelRequest::default().source))
    }

    /// `source` with the element-type and flavour flags.
    fn of(&self, source: ModelSource) -> ModelRequest {
        ModelRequest {
            source,
            compat: self.compat,
            dtype: self.dtype,
            optimizer_dtype: self.optimizer_dtype,
        }
    }

    /// The model asked for, or the refusal of a command that needs one.
    pub fn required(&self) -> anyhow::Result<ModelRequest> {
        match self.request() {
            Some(r) => Ok(r),
            None => super::flags::Usage::err(
                "give --model NAME|FILE.toml, --import FILE or --onnx FILE.onnx",
            ),
        }
    }

    /// Builds or imports the graph, its warnings on stderr.
    pub fn load(&self) -> anyhow::Result<Graph> {
        self.required()?
            .load(&self.shape.shape(), &mut Stderr::default())
            .map_err(cli_error)
    }
}

/// A zoo model by name or a model file by path, its warnings on stderr
/// ([`elk_app::request::ModelRequest`]'s rules).
pub fn load_model(name: &str) -> anyhow::Result<std::borrow::Cow<'static, zoo::ZooModel>> {
    elk_app::request::zoo_model(name, &mut Stderr::default()).map_err(cli_error)
}
