//! `elk-opt instance`: build a stage-model instance (SPEC §4.1) from a graph and a chip.

use super::chip_choice::DEFAULT_CHIP;
use super::notice::{cli_error, Stderr};
use super::source::GraphSource;
use clap::Args;
use elk_app::request::{build_on, ChipRequest, Cut, InstanceConfig, InstanceRequest, StageChoices};
use elk_stage::instance::{InstanceFile, LoadOrder, NocRow};
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
    /// Preload window W, 1 or more (loads start at most W stages before their operator; 1: only in the stage before it).
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
    build: InstanceConfig,
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

impl InstanceArgs {
    /// The instance asked for (a model is required).
    fn request(&self) -> anyhow::Result<InstanceRequest> {
        Ok(InstanceRequest {
            model: self.graph.required()?,
            shape: self.graph.shape.shape(),
            chip: ChipRequest::with_hbm(&self.chip, self.hbm_tbps),
            cut: Cut {
                layers: self.layers.clone(),
                ops: self.ops.clone(),
            },
            choices: StageChoices {
                load_order: self.load_order,
                window: self.window,
                noc_row: self.noc_row,
                expert_parallel: self.expert_parallel,
            },
        })
    }
}

pub fn run(a: InstanceArgs) -> anyhow::Result<()> {
    let request = a.request()?;
    let mut notice = Stderr::default();
    let chip = request.chip.resolve(&mut notice).map_err(cli_error)?;
    if let Some(w) = super::chip_choice::slow_distribution_warning(&chip.spec, Some(chip.given())) {
        eprintln!("warning: {w}");
    }
    let range = request.cut.range().map_err(cli_error)?;
    let graph = request
        .model
        .load_on(&request.shape, Some(&chip.spec), &mut notice)
        .map_err(cli_error)?;
    let (instance, cache) = build_on(
        &graph,
        &chip,
        range,
        request.choices,
        super::plan_cache::get(),
    )
    .map_err(cli_error)?;
    super::plan_cache::warn_on_write_error(&cache);
    let file = InstanceFile {
        instance,
        chip: Some(chip.record.clone()),
    };
    super::output::write_atomic(&a.output, &file.to_json()?)?;
    let inst = &file.instance;
    let options: usize = inst.ops.iter().map(|o| o.options.len()).sum();
    if a.json {
        let config = Config {
            build: request.config(),
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
