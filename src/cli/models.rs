//! `elk-opt models list|show|from-hf`.

use super::flags::RunShapeArgs;
use clap::{Args, Subcommand};
use elk_app::request::{ModelRequest, ModelSource};
use elk_model::zoo;
use elk_stage::units::si;
use serde::Serialize;
use std::path::PathBuf;

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
    /// Print the model file (TOML) a Hugging Face config.json maps to, to keep and edit
    /// (docs/model-files.md); `--model config.json` reads the same file directly.
    FromHf {
        /// The config.json.
        file: PathBuf,
    },
}

/// Which graph to generate and how to print it.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Model name (see `models list`), a model file FILE.toml or a Hugging Face config.json
    /// (docs/model-files.md).
    pub name: String,
    #[command(flatten)]
    pub shape: RunShapeArgs,
    /// Element types, as `--dtype` in every command (fp16, bf16, fp8, int8, fp32, w8a16,
    /// w=bfp8,kv=bf16,a=bf16, …).
    #[arg(long, value_parser = super::flags::dtype)]
    pub dtype: Option<elk_model::dtype::Dtypes>,
    /// Element types of the Adam state in `--mode training`: fp32 (the default: fp32
    /// moments and master weights), another dtype for both, or m=DTYPE,master=DTYPE|none.
    #[arg(long, value_name = "DTYPE", value_parser = super::flags::optimizer_dtype)]
    pub optimizer_dtype: Option<elk_model::zoo::AdamState>,
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

/// `models show --json`: the graph, and the model's own parameter counts.
#[derive(Serialize)]
struct ShowJson<'a> {
    #[serde(flatten)]
    graph: super::graph_table::GraphJson<'a>,
    model_params: ModelParams,
}

/// The model's parameters (every expert, and one token's), and the counts its file states
/// (`null`: none, as for a config.json).
#[derive(Serialize)]
struct ModelParams {
    total_params: u64,
    active_params: u64,
    published_params: Option<f64>,
    published_active_params: Option<f64>,
}

impl ModelParams {
    fn of(m: &zoo::ZooModel) -> anyhow::Result<ModelParams> {
        let (total_params, active_params) = m.parameter_counts()?;
        Ok(ModelParams {
            total_params,
            active_params,
            published_params: m.published_params,
            published_active_params: m.published_active_params,
        })
    }

    /// `model parameters:  …` for the table.
    fn line(&self) -> String {
        let n = |x: f64| si(x, "");
        let (total, active) = (self.total_params as f64, self.active_params as f64);
        let counts = if self.total_params == self.active_params {
            format!("{} parameters, all active", n(total))
        } else {
            format!(
                "{} parameters in all, {} active per token",
                n(total),
                n(active)
            )
        };
        let published = match (self.published_params, self.published_active_params) {
            (Some(p), Some(a)) => format!("published {} in all, {} active", n(p), n(a)),
            (Some(p), None) => format!("published {}", n(p)),
            (None, _) => "no published count: the file states none".into(),
        };
        format!("model parameters:  {counts} ({published})")
    }
}

pub fn run(cmd: ModelsCmd) -> anyhow::Result<()> {
    match cmd {
        ModelsCmd::List { json } => {
            let rows = elk_app::zoo_list::rows()?;
            if json {
                return super::json::print_json("models-list", &super::json::no_config(), &rows);
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
                    si(r.total_params as f64, ""),
                    si(r.active_params as f64, ""),
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
            let model = super::source::load_model(&a.name)?;
            let mut params = a.shape.shape().zoo_params();
            params.dtypes = a.dtype.unwrap_or_else(|| model.default_dtypes());
            params.adam = a.optimizer_dtype.unwrap_or_default();
            let g = model.build(&params)?;
            let model_params = ModelParams::of(&model)?;
            if a.json {
                let config = ModelRequest {
                    dtype: a.dtype.or(model.weight_dtype.map(|_| params.dtypes)),
                    optimizer_dtype: a.optimizer_dtype,
                    ..ModelRequest::of(ModelSource::Zoo(a.name.clone()))
                }
                .config(&a.shape.shape());
                let results = ShowJson {
                    graph: super::graph_table::json(&g),
                    model_params,
                };
                return super::json::print_json("models-show", &config, &results);
            }
            super::graph_table::print(&g, a.all);
            println!("{}", model_params.line());
            for note in model.notes(&params) {
                println!("{note}");
            }
            Ok(())
        }
        ModelsCmd::FromHf { file } => {
            let text = elk_model::error::read_file(&file)?;
            let hf = zoo::hf::read(&file.to_string_lossy(), &text)?;
            for line in &hf.warnings {
                eprintln!("warning: {line}");
            }
            print!("{}", hf.model_file);
            Ok(())
        }
    }
}
