//! `elk-opt sweep`, `elk-opt report` and `elk-opt report merge`: grids of configurations ×
//! methods into JSON lines, and JSON lines into Markdown + SVG reports.

use clap::{Args, Subcommand};
use elk_reports::grid::{preset, Grid, PRESETS};
use elk_reports::report::{report, today, Header};
use elk_reports::sweep::{merge, read_results, run_sweep, Shard};
use std::path::{Path, PathBuf};

/// `sweep` arguments.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// A preset (fig17 … fig24) or a grid TOML file.
    grid: String,
    /// Results file (JSON lines); resumed if it exists. Default: GRID.jsonl.
    #[arg(short = 'o', long)]
    out: Option<PathBuf>,
    /// Run only slice K of N (cells with index ≡ K mod N); join slices with `report merge`.
    #[arg(long)]
    shard: Option<String>,
    /// Also write the report into this directory.
    #[arg(long)]
    report: Option<PathBuf>,
}

/// `report` arguments.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReportArgs {
    #[command(subcommand)]
    cmd: Option<ReportCmd>,
    /// Results file (JSON lines) from `sweep`.
    file: Option<PathBuf>,
    /// Output directory (README.md + SVG plots).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum ReportCmd {
    /// Join shard result files into one, in cell order.
    Merge {
        /// Shard files.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The joined file.
        #[arg(short = 'o', long)]
        out: PathBuf,
    },
}

/// The grid of a preset name or a TOML file.
pub fn load_grid(name: &str) -> anyhow::Result<Grid> {
    if let Some(text) = preset(name) {
        return Ok(Grid::from_toml(name, text)?);
    }
    let path = Path::new(name);
    if !path.exists() {
        return Err(super::flags::Usage(format!(
            "grid '{name}': not a preset ({}) and no such file",
            PRESETS.join(", ")
        ))
        .into());
    }
    let text = elk_model::error::read_file(path)?;
    Ok(Grid::from_toml(name, &text)?)
}

fn grid_stem(name: &str) -> String {
    Path::new(name)
        .file_stem()
        .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned())
}

/// Writes a report's files into `dir` (each atomically).
pub fn write_report(dir: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in files {
        super::output::write_atomic(&dir.join(name), text)?;
    }
    Ok(())
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("elk-opt {}", args.join(" "))
}

pub fn sweep(a: SweepArgs) -> anyhow::Result<()> {
    let grid = load_grid(&a.grid)?;
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.jsonl", grid_stem(&a.grid))));
    let cells = grid.cells().len();
    let bar = super::progress::bar(cells as u64, "cells");
    bar.set_message(a.grid.clone());
    let summary = run_sweep(&grid, &out, shard, &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    eprintln!(
        "{}: {} cells{}, {} already done, {} run -> {}",
        a.grid,
        summary.cells,
        shard.map_or(String::new(), |s| format!(" (shard {}/{})", s.k, s.n)),
        summary.skipped,
        summary.ran,
        out.display()
    );
    if let Some(dir) = &a.report {
        let results: Vec<_> = read_results(&out)?.into_values().collect();
        let header = Header {
            command: command_line(),
            inputs: format!("grid {}", a.grid),
            date: today(),
        };
        write_report(
            dir,
            &report(&results, &format!("Sweep {}", a.grid), &header)?,
        )?;
        eprintln!("report -> {}", dir.join("README.md").display());
    }
    Ok(())
}

pub fn run(a: ReportArgs) -> anyhow::Result<()> {
    if let Some(ReportCmd::Merge { inputs, out }) = a.cmd {
        let refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        let n = merge(&refs, &out)?;
        eprintln!("{n} cells -> {}", out.display());
        return Ok(());
    }
    let (Some(file), Some(out)) = (a.file, a.out) else {
        return Err(super::flags::Usage(
            "report: give FILE.jsonl and --out DIR (or `report merge`)".into(),
        )
        .into());
    };
    let results: Vec<_> = read_results(&file)?.into_values().collect();
    if results.is_empty() {
        return Err(super::flags::Usage(format!("{}: no results", file.display())).into());
    }
    let header = Header {
        command: command_line(),
        inputs: file.display().to_string(),
        date: today(),
    };
    let title = format!("Report of {}", file.display());
    write_report(&out, &report(&results, &title, &header)?)?;
    eprintln!("report -> {}", out.join("README.md").display());
    Ok(())
}

/// `study` arguments.
#[derive(Args, Debug)]
pub struct StudyArgs {
    /// gap, ideal, hbm-emulation, order-pruning, cost-noise or ablation.
    name: String,
    /// Output directory (README.md + SVG plots). Default: results/NAME.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn study(a: StudyArgs) -> anyhow::Result<()> {
    let header = Header {
        command: command_line(),
        inputs: "built-in corpus and models (see the text)".into(),
        date: today(),
    };
    let spinner = super::progress::spinner(format!("study {}", a.name));
    let Some(files) = elk_reports::studies::run(&a.name, &header) else {
        spinner.finish_and_clear();
        return Err(super::flags::Usage(format!(
            "study '{}': expected one of {}",
            a.name,
            elk_reports::studies::STUDIES.join(", ")
        ))
        .into());
    };
    let files = files?;
    spinner.finish_and_clear();
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(&a.name));
    write_report(&out, &files)?;
    eprintln!("study {} -> {}", a.name, out.join("README.md").display());
    Ok(())
}
