//! Where `solve`, `compare` and `gap` get their instance: a file, or built from a graph
//! (zoo model or import), a chip and the instance options.

use super::source::GraphSource;
use clap::Args;
use elk_model::build::{build_instance, InstanceOptions, OpRange};
use elk_model::chip::ChipOverrides;
use elk_stage::instance::Instance;
use std::path::PathBuf;
use std::time::Instant;

/// Where the instance comes from.
#[derive(Args, Debug)]
pub struct InstanceSource {
    /// Read this instance (elk-instance/1) instead of building one.
    #[arg(long, conflicts_with_all = ["model", "import"])]
    instance: Option<PathBuf>,
    #[command(flatten)]
    graph: GraphSource,
    /// Chip preset or TOML file.
    #[arg(long, default_value = "ipu-pod4", conflicts_with = "instance")]
    chip: String,
    /// Override the chip's HBM bandwidth, TB/s (decimal).
    #[arg(long, conflicts_with = "instance")]
    hbm_tbps: Option<f64>,
    /// Load-order policy of the built instance: free (Elk-Full may permute), fixed, or a
    /// maximum displacement D.
    #[arg(
        long,
        default_value = "free",
        conflicts_with = "instance",
        value_parser = super::flags::load_order
    )]
    load_order: elk_stage::instance::LoadOrder,
    /// Only layers A..B of the graph (a sub-instance, e.g. for exact solving).
    #[arg(long, conflicts_with_all = ["ops", "instance"])]
    layers: Option<String>,
    /// Only operators A..B of the graph.
    #[arg(long, conflicts_with = "instance")]
    ops: Option<String>,
    /// Preload window W: every load starts at most W stages before its operator.
    #[arg(long, conflicts_with = "instance")]
    window: Option<u32>,
}

impl InstanceSource {
    /// The instance and the seconds spent building it (plan tables). With no instance,
    /// model or import given: the built-in default, Llama2-13B decode B32 KV2048.
    pub fn load(&self) -> anyhow::Result<(Instance, f64)> {
        let start = Instant::now();
        if let Some(path) = &self.instance {
            return Ok((Instance::read(path)?, start.elapsed().as_secs_f64()));
        }
        let mut graph_source = self.graph.clone();
        if graph_source.model.is_none() && graph_source.import.is_none() {
            graph_source.model = Some("llama2-13b".into());
        }
        let mut chip = super::chips::load_chip(&self.chip)?;
        if let Some(tbps) = self.hbm_tbps {
            if !(tbps.is_finite() && tbps > 0.0) {
                return Err(
                    super::flags::Usage(format!("--hbm-tbps {tbps}: must be positive")).into(),
                );
            }
            chip = chip.with_overrides(&ChipOverrides {
                file: format!("{} with --hbm-tbps", self.chip),
                hbm_tbps: Some(tbps),
                ..ChipOverrides::default()
            })?;
        }
        let graph = graph_source.load()?;
        let spinner =
            super::progress::spinner(format!("plan tables for {} on {}", graph.name, chip.name));
        let range = match (&self.layers, &self.ops) {
            (Some(l), _) => OpRange::Layers(OpRange::parse_range(l)?),
            (_, Some(o)) => OpRange::Ops(OpRange::parse_range(o)?),
            _ => OpRange::All,
        };
        let opts = InstanceOptions {
            range,
            load_order: self.load_order,
            preload_window: self.window,
        };
        let inst = build_instance(&graph, &chip, &opts)?;
        spinner.finish_and_clear();
        Ok((inst, start.elapsed().as_secs_f64()))
    }
}
