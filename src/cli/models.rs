//! `elk-opt models list|show`.

use super::source::GraphConfig;
use clap::{Args, Subcommand};
use elk_model::graph::Mode;
use elk_model::zoo::{self, ZooParams};
use elk_stage::units::si;
use serde::Serialize;

#[derive(Subcommand, Debug)]
pub enum ModelsCmd {
    /// List the zoo's models with their published parameter counts and sources.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Generate a zoo model (or a model file) and print its operator table and totals.
    Show(ShowArgs),
}

/// Which graph to generate and how to print it.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Model name (see `models list`) or a model file FILE.toml (docs/model-files.md).
    pub name: String,
    /// decode, prefill, forward-batch (a training batch's forward pass alone: what the
    /// reference artifact calls training) or training (forward, backward and the Adam update;
    /// docs/training.md).
    #[arg(long, default_value = "decode", value_parser = super::flags::mode)]
    pub mode: Mode,
    /// Batch size.
    #[arg(long, default_value_t = 32, value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    pub batch: u64,
    /// KV length (decode) or sequence length (every other mode).
    #[arg(long, alias = "seq", default_value_t = 2048, value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    pub kv: u64,
    /// Element types, as `--dtype` in every command (fp16, bf16, fp8, int8, fp32, w8a16, …).
    #[arg(long, value_parser = super::flags::dtype)]
    pub dtype: Option<elk_model::dtype::Dtypes>,
    /// Element types of the Adam state in `--mode training`: fp32 (the default: fp32
    /// moments and master weights), another dtype for both, or m=DTYPE,master=DTYPE|none.
    #[arg(long, value_name = "DTYPE", value_parser = super::flags::optimizer_dtype)]
    pub optimizer_dtype: Option<elk_model::zoo::AdamState>,
    /// Build the model with N layers (as `--num-layers` in every command).
    #[arg(long, value_name = "N", value_parser = super::flags::count::<usize>, allow_negative_numbers = true)]
    pub num_layers: Option<usize>,
    /// Refused: `--layers` is a slice `A..B` elsewhere; a layer count is `--num-layers N`.
    #[arg(long, hide = true, allow_hyphen_values = true)]
    pub layers: Option<String>,
    /// Print every operator (the table otherwise shows one layer; `--json` has them all).
    #[arg(long, conflicts_with = "json")]
    pub all: bool,
    /// Machine-readable output (every operator).
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ModelRow {
    name: &'static str,
    layers: usize,
    decode: bool,
    /// Experts per layer and experts per token (MoE models).
    #[serde(skip_serializing_if = "Option::is_none")]
    experts: Option<ExpertsRow>,
    /// The graph's parameters: all of them, and those one token uses.
    params_total: u64,
    params_active: u64,
    published_params: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    published_active_params: Option<f64>,
    source: &'static str,
}

#[derive(Serialize)]
struct ExpertsRow {
    experts: u64,
    top_k: u64,
}

pub fn run(cmd: ModelsCmd) -> anyhow::Result<()> {
    match cmd {
        ModelsCmd::List { json } => {
            let rows = zoo::models()
                .iter()
                .map(|m| {
                    let (params_total, params_active) = m.parameter_counts()?;
                    Ok(ModelRow {
                        name: &m.name,
                        layers: m.layers(),
                        decode: m.supports_decode(),
                        experts: m.moe().map(|x| ExpertsRow {
                            experts: x.experts,
                            top_k: x.top_k,
                        }),
                        params_total,
                        params_active,
                        published_params: m.published_params,
                        published_active_params: m.published_active_params,
                        source: &m.source,
                    })
                })
                .collect::<anyhow::Result<Vec<ModelRow>>>()?;
            if json {
                return crate::cli::print_json("models-list", &crate::cli::no_config(), &rows);
            }
            println!(
                "{:<13} {:>6} {:>7} {:>8} {:>10} {:>10}  source",
                "model", "layers", "decode", "experts", "params", "active"
            );
            for r in rows {
                println!(
                    "{:<13} {:>6} {:>7} {:>8} {:>10} {:>10}  {}",
                    r.name,
                    r.layers,
                    if r.decode { "yes" } else { "no" },
                    r.experts
                        .map(|x| format!("{}/{}", x.top_k, x.experts))
                        .unwrap_or_else(|| "-".into()),
                    si(r.params_total as f64, ""),
                    si(r.params_active as f64, ""),
                    r.source
                );
            }
            println!(
                "params: the generated graph's parameters; active: those one token uses \
                 (experts: routed per token / per layer). Each is within 1 % of the source's \
                 published count (tested)."
            );
            Ok(())
        }
        ModelsCmd::Show(a) => {
            if let Some(layers) = &a.layers {
                return super::flags::Usage::err(format!(
                    "--layers {layers}: `models show` takes a layer count as --num-layers N \
                     (--layers A..B is a slice of layers in plans, instance, solve, compare \
                     and gap)"
                ));
            }
            let mut params = ZooParams::new(a.mode, a.batch, a.kv);
            params.layers = a.num_layers;
            params.dtypes = a.dtype.unwrap_or_default();
            params.adam = a.optimizer_dtype.unwrap_or_default();
            let model = super::source::load_model(&a.name)?;
            let g = model.build(&params)?;
            if a.json {
                let config =
                    GraphConfig::new(Some(&a.name), None, a.mode, a.batch, a.kv, a.num_layers)
                        .with_dtypes(a.dtype)
                        .with_optimizer(a.optimizer_dtype);
                return crate::cli::print_json(
                    "models-show",
                    &config,
                    &super::graph_table::json(&g),
                );
            }
            super::graph_table::print(&g, a.all);
            Ok(())
        }
    }
}
