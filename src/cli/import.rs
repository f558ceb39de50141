//! `elk-opt import FILE`.

use clap::Args;
use elk_model::graph::Mode;
use elk_model::import::{Compat, ImportOptions};
use std::path::PathBuf;

/// A reference-format graph and its placeholder values.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The graph file: a JSON list of [id, expr, op_type, inputs], or FILE.onnx.
    pub file: PathBuf,
    /// decode, prefill, forward-batch (a training batch's forward pass alone: what the
    /// reference artifact calls training) or training (forward, backward and the Adam update;
    /// docs/training.md).
    #[arg(long, default_value = "decode", value_parser = super::flags::mode)]
    pub mode: Mode,
    /// Batch size (placeholder 99); the same default as every other command.
    #[arg(long, default_value_t = 32, value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    pub batch: u64,
    /// KV length in decode, sequence length otherwise (placeholder 66); the same default as
    /// every other command.
    #[arg(long, alias = "seq", default_value_t = 2048, value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    pub kv: u64,
    /// The number of identical layers, when detection finds none or the wrong ones (the
    /// graph must have exactly N; the reference artifact's `--layers` hint).
    #[arg(long, value_name = "N", value_parser = super::flags::count::<usize>, allow_negative_numbers = true)]
    pub num_layers: Option<usize>,
    /// `clean` (default) or `reference` (reproduce the reference artifact's parse).
    #[arg(long, default_value = "clean", value_parser = super::flags::compat)]
    pub compat: Compat,
    /// Print every operator (`--json` has them all).
    #[arg(long, conflicts_with = "json")]
    pub all: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: ImportArgs) -> anyhow::Result<()> {
    let mut opts = ImportOptions::new(a.mode, a.batch, a.kv);
    opts.compat = a.compat;
    opts.num_layers = a.num_layers;
    let g = super::source::import_graph(&a.file, &opts, false)?;
    if a.json {
        let config = super::source::GraphConfig::new(
            None,
            Some((a.file.as_path(), a.compat)),
            a.mode,
            a.batch,
            a.kv,
            a.num_layers,
        );
        return crate::cli::print_json("import", &config, &super::graph_table::json(&g));
    }
    super::graph_table::print(&g, a.all);
    Ok(())
}
