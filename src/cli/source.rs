//! Choosing a graph on the command line: a zoo model by name or an imported file.

use clap::Args;
use elk_model::graph::{Graph, Mode};
use elk_model::import::{import_file, Compat, ImportOptions};
use elk_model::zoo::{self, ZooParams};
use std::path::{Path, PathBuf};

/// `--model NAME` or `--import FILE`, with mode, batch and sequence/KV length.
#[derive(Args, Debug, Clone)]
pub struct GraphSource {
    /// Zoo model name (see `models list`).
    #[arg(long, conflicts_with = "import")]
    pub model: Option<String>,
    /// A graph in the reference JSON format.
    #[arg(long)]
    pub import: Option<PathBuf>,
    /// decode, prefill or training.
    #[arg(long, default_value = "decode", value_parser = super::flags::mode)]
    pub mode: Mode,
    /// Batch size.
    #[arg(long, default_value_t = 32)]
    pub batch: u64,
    /// KV length (decode) or sequence length (prefill/training).
    #[arg(long, alias = "seq", default_value_t = 2048)]
    pub kv: u64,
    /// The number of layers: a zoo model is built with N layers; an imported graph must
    /// have N identical layers (when detection finds none or the wrong ones).
    #[arg(long, value_name = "N")]
    pub num_layers: Option<usize>,
    /// Importer flavour: `clean` or `reference`.
    #[arg(long, default_value = "clean", value_parser = super::flags::compat)]
    pub compat: Compat,
}

impl GraphSource {
    /// Builds or imports the graph.
    pub fn load(&self) -> anyhow::Result<Graph> {
        let mode = self.mode;
        if let Some(file) = &self.import {
            let mut opts = ImportOptions::new(mode, self.batch, self.kv);
            opts.compat = self.compat;
            opts.num_layers = self.num_layers;
            return import_graph(file, &opts);
        }
        let Some(name) = self.model.as_deref() else {
            return super::flags::Usage::err("give --model NAME or --import FILE");
        };
        let mut params = ZooParams::new(mode, self.batch, self.kv);
        params.layers = self.num_layers;
        Ok(zoo::build(name, &params)?)
    }
}

/// Imports a reference-format graph; when no layer count was given and detection finds no
/// repeating layer, says so on stderr (every later step then treats the graph as one layer:
/// `--layers 0..1` is the whole graph, Elk's preload depth spans every operator).
pub fn import_graph(file: &Path, opts: &ImportOptions) -> anyhow::Result<Graph> {
    let g = import_file(file, opts)?;
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
