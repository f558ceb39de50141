//! `elk-opt instance`: build a stage-model instance (SPEC §4.1) from a graph and a chip.

use super::chip_choice::DEFAULT_CHIP;
use super::instance_source::{build, op_range, BuildConfig, StageChoices};
use super::source::GraphSource;
use clap::Args;
use elk_stage::instance::{LoadOrder, NocRow};
use serde::Serialize;
use std::path::PathBuf;

/// What to build and where to write it.
#[derive(Args, Debug)]
pub struct InstanceArgs {
    #[command(flatten)]
    graph: GraphSource,
    /// Chip preset or TOML file.
    #[arg(long, default_value = DEFAULT_CHIP)]
    chip: String,
    /// Override the chip's HBM bandwidth, TB/s (decimal); the instance's name shows it
    /// (`on ipu-pod4 @ 8 TB/s HBM`).
    #[arg(long, allow_negative_numbers = true)]
    hbm_tbps: Option<f64>,
    /// Only layers A..B, half-open: layers A to B−1 (`0..1` is layer 0), a sub-instance for
    /// exact solving.
    #[arg(long, conflicts_with = "ops")]
    layers: Option<String>,
    /// Only operators A..B, half-open (operators A to B−1).
    #[arg(long)]
    ops: Option<String>,
    /// Load-order policy: free (Elk-Full may permute; the default of every command), fixed,
    /// or a maximum displacement D.
    #[arg(long, default_value = "free", value_parser = super::flags::load_order)]
    load_order: LoadOrder,
    /// Preload window W (loads start at most W stages before their operator).
    #[arg(long, value_parser = super::flags::window, allow_negative_numbers = true)]
    window: Option<u32>,
    /// The stage model's NoC row: `phased` (the default: loads beside an operator's compute
    /// phase move at most its length of HBM work; what the paced detailed replay measures:
    /// docs/detailed.md) or `spec` (SPEC §4's, the reference artifact's). Every method, the
    /// exact ones and the simulator then use it.
    #[arg(long, value_enum, default_value = "phased")]
    noc_row: NocRow,
    /// Run independent chains of operators side by side, each on its own group of cores:
    /// an MoE layer's experts, a dense layer's independent projections; the file is then
    /// elk-instance/2 (docs/core-groups.md).
    #[arg(long)]
    expert_parallel: bool,
    /// Output file (elk-instance/1 JSON).
    #[arg(short = 'o', long)]
    output: PathBuf,
    /// Machine-readable summary of what was written (on stdout).
    #[arg(long)]
    json: bool,
}

/// `instance --json`: the inputs.
#[derive(Serialize)]
struct Config<'a> {
    #[serde(flatten)]
    build: BuildConfig,
    output: &'a std::path::Path,
}

/// `instance --json`: what was written.
#[derive(Serialize)]
struct Written<'a> {
    instance: &'a str,
    operators: usize,
    options: usize,
    loads: usize,
    output: &'a std::path::Path,
}

pub fn run(a: InstanceArgs) -> anyhow::Result<()> {
    let chip = super::chip_choice::load(&a.chip, a.hbm_tbps)?;
    if let Some(w) = super::chip_choice::slow_distribution_warning(&chip.spec, Some(chip.given())) {
        eprintln!("warning: {w}");
    }
    let range = op_range(a.layers.as_deref(), a.ops.as_deref())?;
    let graph = a.graph.load()?;
    let choices = StageChoices {
        load_order: a.load_order,
        window: a.window,
        noc_row: a.noc_row,
        expert_parallel: a.expert_parallel,
    };
    let file = build(&graph, &chip, range, choices)?;
    super::output::write_atomic(&a.output, &file.to_json()?)?;
    let inst = &file.instance;
    let options: usize = inst.ops.iter().map(|o| o.options.len()).sum();
    if a.json {
        let config = Config {
            build: BuildConfig::new(
                &a.graph,
                &a.chip,
                a.hbm_tbps,
                (a.layers.as_ref(), a.ops.as_ref()),
                choices,
            ),
            output: &a.output,
        };
        let written = Written {
            instance: &inst.name,
            operators: inst.ops.len(),
            options,
            loads: inst.loads().len(),
            output: &a.output,
        };
        return super::json::print_json("instance", &config, &written);
    }
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
