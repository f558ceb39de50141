//! Choosing a graph on the command line: a zoo model by name or an imported file.

use clap::Args;
use elk_model::graph::{Graph, Mode};
use elk_model::import::{import_file, Compat, ImportOptions};
use elk_model::zoo::{self, ZooParams};
use std::path::PathBuf;

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
    /// Override the zoo model's number of layers.
    #[arg(long)]
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
            return Ok(import_file(file, &opts)?);
        }
        let Some(name) = self.model.as_deref() else {
            return super::flags::Usage::err("give --model NAME or --import FILE");
        };
        let mut params = ZooParams::new(mode, self.batch, self.kv);
        params.layers = self.num_layers;
        Ok(zoo::build(name, &params)?)
    }
}
