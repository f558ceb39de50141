//! `elk-opt instance`: build a stage-model instance (SPEC §4.1) from a graph and a chip.

use super::source::GraphSource;
use clap::Args;
use elk_model::build::{build_instance, InstanceOptions, OpRange};
use elk_stage::instance::LoadOrder;
use std::path::PathBuf;

/// What to build and where to write it.
#[derive(Args, Debug)]
pub struct InstanceArgs {
    #[command(flatten)]
    graph: GraphSource,
    /// Chip preset or TOML file.
    #[arg(long, default_value = "ipu-pod4")]
    chip: String,
    /// Only layers A..B (a sub-instance for exact solving).
    #[arg(long, conflicts_with = "ops")]
    layers: Option<String>,
    /// Only operators A..B.
    #[arg(long)]
    ops: Option<String>,
    /// Load-order policy: fixed, free, or a maximum displacement D.
    #[arg(long, default_value = "fixed", value_parser = super::flags::load_order)]
    load_order: LoadOrder,
    /// Preload window W (loads start at most W stages before their operator).
    #[arg(long)]
    window: Option<u32>,
    /// Output file (elk-instance/1 JSON).
    #[arg(short = 'o', long)]
    output: PathBuf,
}

pub fn run(a: InstanceArgs) -> anyhow::Result<()> {
    let chip = super::chips::load_chip(&a.chip)?;
    let graph = a.graph.load()?;
    let range = match (&a.layers, &a.ops) {
        (Some(l), _) => OpRange::Layers(OpRange::parse_range(l)?),
        (_, Some(o)) => OpRange::Ops(OpRange::parse_range(o)?),
        _ => OpRange::All,
    };
    let opts = InstanceOptions {
        range,
        load_order: a.load_order,
        preload_window: a.window,
    };
    let inst = build_instance(&graph, &chip, &opts)?;
    super::output::write_atomic(&a.output, &inst.to_json()?)?;
    let options: usize = inst.ops.iter().map(|o| o.options.len()).sum();
    eprintln!(
        "{}: {} operators, {} options, {} loads -> {}",
        inst.name,
        inst.ops.len(),
        options,
        inst.loads().len(),
        a.output.display()
    );
    Ok(())
}
