//! `elk-opt routing import`: a routing log as people publish it (CSV or JSON lines, per token
//! and layer the expert ids) into an `elk-routing-trace/1` file for `--routing trace:FILE`
//! (docs/moe.md, "Routing traces from the real world").

use clap::{Args, Subcommand};
use elk_model::routing::import::{import_file, ImportOptions, ImportSummary};
use std::path::PathBuf;

/// Routing traces.
#[derive(Subcommand, Debug)]
pub enum RoutingCmd {
    /// Turn a routing log (CSV with a header, or JSON lines: per token and layer the expert
    /// ids) into an elk-routing-trace/1 file of decode steps of --batch tokens.
    Import(ImportArgs),
}

/// `elk-opt routing import`: what to read and write.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The log: CSV (`token,layer,experts` or `expert_0 …` columns) or JSON lines
    /// (`{"token": 12, "layer": 3, "experts": [5, 17]}`), optional step or sequence fields.
    pub file: PathBuf,
    /// Tokens per step: decode runs one token of each of B sequences per step.
    #[arg(long, value_name = "B", value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    pub batch: u64,
    /// Experts per layer (default: the largest id in the file + 1, which is short when the
    /// file never uses the last expert).
    #[arg(long, value_name = "E", value_parser = super::flags::count::<u64>, allow_negative_numbers = true)]
    pub experts: Option<u64>,
    /// Write the trace here (replaced atomically); without it, only the summary is printed.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// The `config` of `--json`: the inputs as given.
#[derive(serde::Serialize)]
struct Config<'a> {
    file: &'a std::path::Path,
    batch: u64,
    experts: Option<u64>,
    output: Option<&'a std::path::Path>,
}

pub fn run(cmd: RoutingCmd) -> anyhow::Result<()> {
    match cmd {
        RoutingCmd::Import(a) => import(&a),
    }
}

fn import(a: &ImportArgs) -> anyhow::Result<()> {
    let options = ImportOptions {
        batch: a.batch,
        experts: a.experts,
    };
    let imported = import_file(&a.file, &options)?;
    if let Some(out) = &a.output {
        super::output::write_atomic(out, &imported.trace.to_json())?;
    }
    if a.json {
        let config = Config {
            file: &a.file,
            batch: a.batch,
            experts: a.experts,
            output: a.output.as_deref(),
        };
        return super::json::print_json("routing-import", &config, &imported.summary);
    }
    print(&a.file.display().to_string(), &imported.summary);
    match &a.output {
        Some(out) => println!(
            "\nWrote {} (elk-routing-trace/1): --routing trace:{} --batch {} runs it on a model \
             with {} experts, top-{}, {} MoE layers.",
            out.display(),
            out.display(),
            a.batch,
            imported.summary.experts,
            imported.summary.top_k_experts,
            imported.summary.file_layers.len()
        ),
        None => println!("\nNo file written (no -o)."),
    }
    Ok(())
}

/// The summary as text.
fn print(file: &str, s: &ImportSummary) {
    println!(
        "Routing log {file} ({}): {} tokens × {} layers",
        s.format,
        s.tokens,
        s.file_layers.len()
    );
    if s.placeholder_layers > 0 {
        println!(
            "  {} rows of -1 ids (a layer without routed experts) skipped",
            s.placeholder_layers
        );
    }
    if !s.ignored_fields.is_empty() {
        println!("  not read: {}", s.ignored_fields.join(", "));
    }
    let dropped = match s.dropped_tokens {
        0 => String::new(),
        n => format!("; {n} tokens dropped (in no whole step)"),
    };
    println!(
        "  steps: {} of {} tokens, from the {}{dropped}",
        s.steps, s.batch, s.steps_from
    );
    let gaps = if s.missing_layers.is_empty() {
        String::new()
    } else {
        format!(" (gap: {} not in the file)", ranges(&s.missing_layers))
    };
    println!(
        "  layers: file ids {} → MoE layers 0–{}{gaps}",
        ranges(&s.file_layers),
        s.file_layers.len() - 1
    );
    let from = match s.experts_from {
        "flag" => "--experts",
        _ => "the largest id + 1",
    };
    println!("  experts: {} ({from}), top-{}", s.experts, s.top_k_experts);
    println!("\n  layer  used  most chosen (share of the layer's choices)");
    for l in &s.layers {
        let top: Vec<String> = l
            .top_experts
            .iter()
            .map(|t| format!("{} {:.1} %", t.index, t.share_pct))
            .collect();
        println!(
            "  {:>5}  {:>4}  {}",
            l.layer,
            l.used_experts,
            top.join(", ")
        );
    }
}

/// Sorted ids as runs: `0–3, 5, 7–9`.
fn ranges(ids: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == id => *end = id,
            _ => runs.push((id, id)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
