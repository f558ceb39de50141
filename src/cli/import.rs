//! `elk-opt import FILE`.

use super::flags::RunShapeArgs;
use clap::Args;
use elk_app::request::{ModelRequest, ModelSource};
use elk_model::import::Compat;
use std::path::PathBuf;

/// A reference-format graph and its placeholder values.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The graph file: a JSON list of [id, expr, op_type, inputs] (--batch and --kv stand
    /// for its placeholders 99 and 66), or FILE.onnx.
    pub file: PathBuf,
    #[command(flatten)]
    pub shape: RunShapeArgs,
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
    let request = ModelRequest {
        compat: Some(a.compat),
        ..ModelRequest::of(ModelSource::Import(a.file.clone()))
    };
    let shape = a.shape.shape();
    let g = request
        .load(&shape, &mut super::notice::Stderr::default())
        .map_err(super::notice::cli_error)?;
    if a.json {
        let config = request.config(&shape);
        return super::json::print_json("import", &config, &super::graph_table::json(&g));
    }
    super::graph_table::print(&g, a.all);
    Ok(())
}
