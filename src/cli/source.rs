//! Choosing a graph on the command line: a zoo model by name or an imported file.

use super::flags::RunShapeArgs;
use clap::Args;
use elk_model::dtype::Dtypes;
use elk_model::graph::{Graph, Mode};
use elk_model::import::{import_file, import_onnx_file, Compat, ImportOptions};
use elk_model::zoo;
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    /// w8a16: int8 weights, fp16 KV cache and activations).
    #[arg(long, value_parser = super::flags::dtype)]
    pub dtype: Option<Dtypes>,
    /// Element types of the Adam state in `--mode training`: fp32 (the default: fp32
    /// moments and master weights), another dtype for both, or m=DTYPE,master=DTYPE|none.
    #[arg(long, value_name = "DTYPE", value_parser = super::flags::optimizer_dtype)]
    pub optimizer_dtype: Option<elk_model::zoo::AdamState>,
}

/// The graph inputs as `--json` prints them in `config`.
#[derive(Serialize, Debug)]
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
    /// `--dtype` as given (`w8a16`), left out for fp16 everywhere, the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    dtype: Option<String>,
    /// `--optimizer-dtype` as given (`m=bf16,master=fp32`), left out for the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    optimizer_dtype: Option<String>,
}

impl GraphConfig {
    /// The inputs of a zoo model or (`import`) an imported file.
    pub fn new(
        model: Option<&str>,
        import: Option<(&Path, Compat)>,
        shape: &RunShapeArgs,
    ) -> GraphConfig {
        GraphConfig {
            model: model.map(str::to_string),
            import: import.map(|(p, _)| p.to_path_buf()),
            onnx: None,
            mode: shape.mode,
            batch: shape.batch,
            kv_tokens: shape.kv,
            num_layers: shape.num_layers,
            compat: import.map(|(_, c)| match c {
                Compat::Clean => "clean",
                Compat::Reference => "reference",
            }),
            plan_rules: match import {
                Some((_, Compat::Reference)) => elk_model::plan::PlanRules::REFERENCE.name(),
                _ => elk_model::plan::PlanRules::SPEC.name(),
            },
            dtype: None,
            optimizer_dtype: None,
        }
    }

    /// The same for `--onnx FILE` (which has no importer flavour).
    pub fn with_onnx(self, onnx: Option<&Path>) -> GraphConfig {
        match onnx {
            Some(p) => GraphConfig {
                onnx: Some(p.to_path_buf()),
                compat: None,
                ..self
            },
            None => self,
        }
    }

    /// The same with the element types (recorded unless they are the default).
    pub fn with_dtypes(self, dtypes: Option<Dtypes>) -> GraphConfig {
        GraphConfig {
            dtype: dtypes.filter(|d| !d.is_default()).map(|d| d.to_string()),
            ..self
        }
    }

    /// The same with the Adam state's element types (recorded unless they are the default).
    pub fn with_optimizer(self, adam: Option<elk_model::zoo::AdamState>) -> GraphConfig {
        GraphConfig {
            optimizer_dtype: adam.filter(|a| !a.is_default()).map(|a| a.to_string()),
            ..self
        }
    }
}

impl GraphSource {
    /// The inputs as `--json` prints them.
    pub fn config(&self) -> GraphConfig {
        GraphConfig::new(
            self.model.as_deref(),
            self.import
                .as_deref()
                .map(|p| (p, self.compat.unwrap_or_default())),
            &self.shape,
        )
        .with_onnx(self.onnx.as_deref())
        .with_dtypes(self.dtype)
        .with_optimizer(self.optimizer_dtype)
    }

    /// Builds or imports the graph.
    pub fn load(&self) -> anyhow::Result<Graph> {
        let onnx = self.onnx.is_some();
        if let Some(file) = self.import.as_ref().or(self.onnx.as_ref()) {
            let mut opts = self.shape.import_options();
            opts.compat = self.compat.unwrap_or_default();
            if self.dtype.is_some() {
                return super::flags::Usage::err(
                    "--dtype applies to a zoo model (--model); an imported graph keeps the \
                     importer's fp16",
                );
            }
            if self.optimizer_dtype.is_some() {
                return super::flags::Usage::err(
                    "--optimizer-dtype applies to a zoo model (--model); an imported graph's \
                     training step keeps fp32 Adam state",
                );
            }
            return import_graph(file, &opts, onnx);
        }
        let Some(name) = self.model.as_deref() else {
            return super::flags::Usage::err(
                "give --model NAME|FILE.toml, --import FILE or --onnx FILE.onnx",
            );
        };
        if self.compat.is_some() {
            return super::flags::Usage::err(
                "--compat is the importer's flavour: it applies to --import FILE, not to a zoo \
                 model",
            );
        }
        let mut params = self.shape.zoo_params();
        params.dtypes = self.dtype.unwrap_or_default();
        params.adam = self.optimizer_dtype.unwrap_or_default();
        Ok(load_model(name)?.build(&params)?)
    }
}

/// A zoo model by name or a model file by path; a file whose published counts the generated
/// graph misses by more than the tolerance gets a warning on stderr per count (the zoo's
/// own files are held to them by a test), a config.json with keys elk-opt does not know one
/// line listing them.
pub fn load_model(name: &str) -> anyhow::Result<std::borrow::Cow<'static, zoo::ZooModel>> {
    let (m, warnings) = zoo::ZooModel::load_with_warnings(name)?;
    for line in warnings {
        eprintln!("warning: {line}");
    }
    if let std::borrow::Cow::Owned(own) = &m {
        for line in own.count_mismatches()? {
            eprintln!("warning: {name}: {line}");
        }
    }
    Ok(m)
}

/// Imports a reference-format graph, or an ONNX model (`onnx`, or a name ending in
/// `.onnx`); when no layer count was given and detection finds no
/// repeating layer, says so on stderr (every later step then treats the graph as one layer:
/// `--layers 0..1` is the whole graph, Elk's preload depth spans every operator).
pub fn import_graph(file: &Path, opts: &ImportOptions, onnx: bool) -> anyhow::Result<Graph> {
    let g = if onnx {
        import_onnx_file(file, opts)?
    } else {
        import_file(file, opts)?
    };
    if opts.num_layers.is_none() && g.layers.layers <= 1 && g.ops.len() > 1 {
        eprintln!(
            "warning: {}: no repeating layer found ({}); pass --num-layers N if the model has \
             N identical layers",
            file.display(),
            elk_model::error::describe_layers(&g.layers)
        );
    }
    Ok(g)
}
