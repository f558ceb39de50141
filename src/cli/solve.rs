//! `elk-opt solve` and `elk-opt compare`: heuristic methods on an instance built from a graph
//! and a chip (or read from a file), judged by the simulator.

use super::chip_choice::Chip;
use super::flags::Timings;
use super::instance_source::{InstanceSource, SourceConfig};
use super::method_rows::{
    heuristic_names, ideal_row, method_named, method_parser, run_method, RETIME_LEGEND,
};
use clap::Args;
use elk_sim::evaluate_with;
use elk_sim::trace::ChromeTrace;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;
use serde::Serialize;
use std::path::PathBuf;

/// `solve` arguments.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// The heuristic method (or `ideal`, Elk's figure); `NAME+retime`: that heuristic's
    /// schedule with its load work re-timed by an LP (same options, order and starts).
    #[arg(
        long,
        value_parser = method_parser(),
        required_unless_present = "exact",
        conflicts_with_all = [
            "exact",
            "backend",
            "time_limit",
            "linearisation",
            "no_warm_start",
            "no_lp_bound",
            "whole_model_bound"
        ]
    )]
    method: Option<String>,
    /// Solve exactly (MILP or SMT; see --backend, --time-limit).
    #[arg(long)]
    exact: bool,
    #[command(flatten)]
    exact_flags: super::exact::ExactFlags,
    #[command(flatten)]
    source: InstanceSource,
    /// Write the schedule (elk-schedule/1).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Write a Chrome trace.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    timings: Timings,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// `solve --json` (a method, not `--exact`): the inputs.
#[derive(Serialize)]
struct SolveConfig<'a> {
    #[serde(flatten)]
    source: SourceConfig,
    method: &'a str,
    output: Option<&'a std::path::Path>,
    trace: Option<&'a std::path::Path>,
    no_timings: bool,
}

pub fn solve(a: SolveArgs) -> anyhow::Result<()> {
    if a.output.is_some() && a.output == a.source.emit_instance {
        return super::flags::Usage::err(
            "-o and --emit-instance name the same file: the schedule and its instance need two",
        );
    }
    let Some(method) = a.method.clone().filter(|_| !a.exact) else {
        if a.trace.is_some() {
            return Err(super::flags::Usage(
                "--trace with --exact: write the schedule with -o, then `simulate --trace`".into(),
            )
            .into());
        }
        return super::exact::solve(
            &a.source,
            &a.exact_flags,
            a.output.as_ref(),
            a.timings.no_timings,
            a.json,
        );
    };
    let config = || SolveConfig {
        source: a.source.config(),
        method: &method,
        output: a.output.as_deref(),
        trace: a.trace.as_deref(),
        no_timings: a.timings.no_timings,
    };
    let (inst, build_s) = a.source.load()?;
    if method == "ideal" {
        if a.output.is_some() || a.trace.is_some() {
            return Err(super::flags::Usage(
                "--method ideal gives a figure, not a schedule: no -o or --trace".into(),
            )
            .into());
        }
        let row = ideal_row(&inst, a.timings.no_timings);
        if a.json {
            return super::json::print_json("solve", &config(), &row);
        }
        println!(
            "{} — ideal (Elk's figure; not a schedule, not a proven bound)",
            inst.name
        );
        println!(
            "makespan: {:.1} cycles = {:.6} ms",
            row.makespan_cycles.map_or(f64::NAN, |c| c.get()),
            row.makespan_ms.unwrap_or(f64::NAN)
        );
        return Ok(());
    }
    let m = method_named(&method, a.timings.no_timings)?;
    let spinner = super::progress::spinner(format!("{} on {}", m.name(), inst.name));
    let (mut row, result) = run_method(&inst, m.as_ref())?;
    spinner.finish_and_clear();
    if a.timings.no_timings {
        row.compile_s = None;
    }
    if let Some((s, _)) = &result {
        if let Some(path) = &a.output {
            super::output::write_schedule(path, &inst, s)?;
        }
        if let Some(path) = &a.trace {
            let mut trace = ChromeTrace::new(inst.clock_hz);
            evaluate_with(&inst, s, &mut trace);
            super::output::write_atomic(path, &trace.to_json())?;
        }
    }
    // No schedule: the report is printed, then the command fails (exit 1), so a script sees
    // that nothing was scheduled and that no `-o`/`--trace` file was written.
    let no_schedule = || {
        let written = [a.output.as_ref(), a.trace.as_ref()]
            .into_iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>();
        let nothing = if written.is_empty() {
            String::new()
        } else {
            format!("; nothing written to {}", written.join(", "))
        };
        let why = row.notes.last().unwrap_or(&row.status);
        anyhow::anyhow!(
            "{} found no schedule for {}: {why}{nothing}",
            row.method,
            inst.name
        )
    };
    if a.json {
        super::json::print_json("solve", &config(), &row)?;
        return match result {
            Some(_) => Ok(()),
            None => Err(no_schedule()),
        };
    }
    println!("{} — {}", inst.name, row.method);
    match (row.makespan_cycles, row.makespan_ms) {
        (Some(c), Some(ms)) => println!("makespan: {c} = {ms:.6} ms (simulated)"),
        // Proven infeasible, or the heuristic found none (the notes say why).
        _ if row.status.starts_with("infeasible") => println!("no schedule: {}", row.status),
        _ => println!("no schedule found"),
    }
    for n in &row.notes {
        println!("note: {n}");
    }
    if let Some(c) = row.compile_s {
        println!("instance built in {build_s:.3} s, method ran in {c:.3} s");
    }
    match result {
        Some(_) => Ok(()),
        None => Err(no_schedule()),
    }
}

/// `compare` arguments.
#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    source: InstanceSource,
    /// Then cut one layer of the same model (layer 0, as `--layers 0..1`), solve it exactly
    /// with the MILP within SECONDS (one HiGHS thread, warm-started from the best heuristic)
    /// and print its optimum, or its best bound when the limit stops the solve, with every
    /// heuristic's gap there. The main job (no arguments) uses 1: a look at the layer, not
    /// a proof (its gaps are upper bounds; `gap --layers 0..1 --time-limit 60` proves the
    /// main job's layer optimal in 20–35 s on 2 cores).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECONDS",
        value_parser = super::flags::seconds,
        conflicts_with_all = ["instance", "layers", "ops"]
    )]
    layer_exact: Option<f64>,
    /// The certified lower bound of the `gap ≤ %` column: `roofline` (instant), or
    /// `segment`, the segment relaxation `gap` uses on a whole model (one LP per distinct
    /// layer and boundary price: seconds on a 13B model; docs/exact.md, "Whole models"). The
    /// main job uses `segment`.
    #[arg(long, value_enum, default_value = "roofline")]
    bound: BoundChoice,
    #[command(flatten)]
    moe: super::moe::CompareMoe,
    #[command(flatten)]
    timings: Timings,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// The table as CSV on stdout, one row per method, units in the column names as in
    /// `--json` (`makespan_ms`, `gap_le_pct`, …), with the instance, chip and bound on every
    /// row (docs/json.md, "CSV").
    #[arg(long, conflicts_with = "json")]
    csv: bool,
}

/// `compare --bound`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoundChoice {
    /// The roofline bound (HBM, execution, prefix).
    Roofline,
    /// The segment relaxation (LP per distinct layer), or the roofline where it is stronger.
    Segment,
}

/// `compare --json`: the inputs.
#[derive(Serialize)]
struct CompareConfig {
    #[serde(flatten)]
    source: SourceConfig,
    bound: BoundChoice,
    /// `--layer-exact SECONDS` (`null`: no layer section).
    layer_exact_s: Option<f64>,
    no_timings: bool,
}

/// `compare --json`: the results.
#[derive(Serialize)]
struct CompareReport {
    /// Every method's row and the bound (the Python package's `compare()` is this part).
    #[serde(flatten)]
    base: elk_reports::compare::CompareReport,
    /// `--layer-exact`: one layer solved exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    layer: Option<elk_reports::gap::LayerSection>,
    /// `--routing`: the MoE load policies over sampled steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    moe: Option<elk_reports::moe::MoeSection>,
}

pub fn compare(a: CompareArgs) -> anyhow::Result<()> {
    if a.csv && a.layer_exact.is_some() {
        return super::flags::Usage::err(
            "--csv with --layer-exact: the CSV is the whole model's table; the layer's is \
             `elk-opt gap --layers 0..1 --csv`",
        );
    }
    if a.csv && a.moe.routing.is_some() {
        return super::flags::Usage::err(
            "--csv with --routing: the CSV is the methods' table; the policies' is in \
             `elk-opt moe --json`",
        );
    }
    // Flags of the MoE section are checked before any work.
    let moe_args = match a.moe.routing {
        Some(_) => Some(a.source.moe_args(&a.moe)?),
        None => None,
    };
    let loaded = a.source.load_full()?;
    let (inst, build_s) = (&loaded.instance, loaded.build_s);
    let chip = loaded.chip.as_ref();
    let segment = match a.bound {
        BoundChoice::Roofline => None,
        BoundChoice::Segment => segment_bound(inst)?,
    };
    let n = heuristic_names().count() + elk_reports::compare::COMPARE_RETIMED.len();
    let bar = super::progress::bar(n as u64, "methods");
    let report = elk_reports::compare::compare(
        inst,
        chip.map(Chip::as_label),
        a.timings.no_timings,
        segment.as_ref().map(|s| Cycles(s.bound_cycles)),
        &mut |k, _, name| {
            bar.set_position(k as u64 - 1);
            bar.set_message(name.to_string());
        },
    )?;
    bar.finish_and_clear();
    let roof = report.roofline;
    let (bound_ms, bound_source) = (report.bound_ms, report.bound_source);
    let layer = match a.layer_exact {
        Some(seconds) => Some(super::layer_exact::solve(
            &loaded,
            seconds,
            a.timings.no_timings,
        )?),
        None => None,
    };
    let moe = moe_args.as_ref().map(super::moe::run_section).transpose()?;
    if a.json {
        let config = CompareConfig {
            source: a.source.config(),
            bound: a.bound,
            layer_exact_s: a.layer_exact,
            no_timings: a.timings.no_timings,
        };
        return super::json::print_json(
            "compare",
            &config,
            &CompareReport {
                base: report,
                layer: layer.map(|(_, s)| s),
                moe,
            },
        );
    }
    let (rows, warnings, notes) = (&report.methods, &report.warnings, &report.notes);
    if a.csv {
        use super::output::{csv_number as num, csv_row_head};
        let chip_label = chip.map(Chip::label_with_hbm).unwrap_or_default();
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let mut row = csv_row_head(
                    &inst.name,
                    &chip_label,
                    &r.method,
                    r.makespan_ms,
                    r.gap_le_pct,
                );
                row.extend([
                    num(Some(bound_ms)),
                    bound_source.to_string(),
                    num(r.speedup_vs_basic_x),
                    num(r.ideal_pct),
                    num(r.hbm_util_pct),
                    num(r.noc_util_pct),
                    num(r.tflops),
                    num(r.compile_s),
                    r.status.clone(),
                    r.notes.join("; "),
                ]);
                row
            })
            .collect();
        super::output::print_csv(
            &[
                "instance",
                "chip",
                "method",
                "makespan_ms",
                "gap_le_pct",
                "bound_ms",
                "bound_source",
                "speedup_vs_basic_x",
                "ideal_pct",
                "hbm_util_pct",
                "noc_util_pct",
                "tflops",
                "compile_s",
                "status",
                "notes",
            ],
            &rows,
        );
        return Ok(());
    }
    if a.timings.no_timings {
        println!("{}", header(inst, chip));
    } else {
        println!("{} (instance built in {build_s:.2} s)", header(inst, chip));
    }
    for w in warnings {
        println!("warning: {w}");
    }
    let w = rows.iter().map(|r| r.method.len()).max().unwrap_or(6);
    println!(
        "{:<w$} {:>12} {:>10} {:>9} {:>9} {:>8} {:>8} {:>9} {:>10}",
        "method",
        "makespan ms",
        "gap ≤ %",
        "vs Basic",
        "% Ideal",
        "HBM %",
        "NoC %",
        "TFLOP/s",
        "compile s"
    );
    let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
    for r in rows {
        // A method without a schedule says so in its makespan column and why in the rest of
        // its row, never a row of bare "-".
        let makespan = match r.makespan_ms {
            Some(v) => format!("{v:.4}"),
            None if r.status.starts_with("infeasible") => "infeasible".to_string(),
            None if r.method == "ideal" => "no figure".to_string(),
            None => "no schedule".to_string(),
        };
        if r.makespan_ms.is_none() && r.method != "ideal" {
            let why = r.notes.last().map_or("no reason given", String::as_str);
            println!("{:<w$} {makespan:>12}   {why}", r.method);
            continue;
        }
        println!(
            "{:<w$} {:>12} {:>10} {:>9} {:>9} {:>8} {:>8} {:>9} {:>10}",
            r.method,
            makespan,
            opt(r.gap_le_pct, &|v| format!("{v:.2}")),
            opt(r.speedup_vs_basic_x, &|v| format!("{v:.3}x")),
            opt(r.ideal_pct, &|v| format!("{v:.1}")),
            opt(r.hbm_util_pct, &|v| format!("{v:.1}")),
            opt(r.noc_util_pct, &|v| format!("{v:.1}")),
            opt(r.tflops, &|v| format!("{v:.2}")),
            r.compile_s.map_or("-".to_string(), |c| format!("{c:.3}"))
        );
    }
    println!("basic … elk-full: the reference artifact's algorithms; *-fill, *-greedy: elk-opt's named variants (docs/heuristics.md)");
    for n in notes {
        println!("note: {n}");
    }
    println!("{RETIME_LEGEND}");
    println!("ideal: Elk's figure (fastest option per operator with the whole SRAM, loads never contend) — not a schedule and not a proven bound");
    println!("HBM % / NoC %: the share of the makespan the HBM / the NoC is busy");
    let parts = format!(
        "HBM {:.4}, execution {:.4}, prefix {:.4} ms",
        inst.ms(roof.hbm_cycles),
        inst.ms(roof.exec_cycles),
        inst.ms(roof.prefix_cycles)
    );
    let prefix = "prefix: the best cut of the chain into a head, whose stages must hold the loads up to the cut (HBM or NoC time) or its executions, and a tail executed at full speed";
    match &segment {
        Some(s) if bound_source == "segment relaxation" => {
            println!(
                "gap ≤ %: against the certified segment relaxation lower bound {:.4} ms (one LP per distinct layer, {} segments; docs/exact.md, \"Whole models\"), so at least that close to the optimum",
                bound_ms,
                s.segments
            );
            println!(
                "  its best price μ = {:.3}: what one cycle of load work moved across a layer boundary costs in the relaxation",
                s.price
            );
            println!(
                "  the roofline bound is lower: {:.4} ms ({parts}); {prefix}",
                inst.ms(roof.best())
            );
            println!("  a stronger bound may come from `gap --whole-model-bound milp` (MILP dual bounds per segment, slower); `elk-opt gap` adds the window search's schedule as a row");
        }
        _ => {
            println!(
                "gap ≤ %: against the certified roofline lower bound {:.4} ms ({parts}), so at least that close to the optimum; {}",
                bound_ms,
                match a.bound {
                    BoundChoice::Roofline =>
                        "`--bound segment` or `elk-opt gap` tightens it (segment relaxation, docs/exact.md)",
                    BoundChoice::Segment if segment.is_none() =>
                        "the segment relaxation does not apply here (no repeated layers, or no price solved)",
                    BoundChoice::Segment =>
                        "the segment relaxation gives no more here; `elk-opt gap` may (MILP, window search)",
                }
            );
            println!("  {prefix}");
        }
    }
    if let Some((layer, section)) = &layer {
        super::layer_exact::print(layer, section);
    }
    if let (Some(section), Some(args)) = (&moe, &moe_args) {
        println!(
            "\nMoE load policies (docs/moe.md; the methods above ran on the balanced routing):"
        );
        super::moe::print_section(section, args.batch);
    }
    Ok(())
}

/// The segment relaxation's LP bound of `inst` (what `gap` computes on a whole model), from
/// the bound cache or computed with its price search shown on a spinner; `None` when it does
/// not apply (fewer than two layers) or no price was solved within 60 s.
fn segment_bound(inst: &Instance) -> anyhow::Result<Option<elk_solver::segments::SegmentBound>> {
    let opts = elk_solver::segments::SegmentOptions {
        lp_only: true,
        ..elk_solver::segments::SegmentOptions::default()
    };
    super::bound_cache::segment_bound(inst, opts.time_limit.as_secs_f64(), || {
        let progress = super::progress::ExactProgress::start("segment relaxation");
        let roof = elk_solver::bounds::roofline(inst).best();
        let found = elk_solver::segments::segment_bound_with(inst, &opts, &|step| {
            progress.exact(
                "bound",
                inst,
                &elk_solver::ExactEvent::Segment {
                    step: *step,
                    incumbent: None,
                    bound: step.best_bound.map_or(roof, |b| b.max(roof)),
                },
            )
        })?;
        progress.finish();
        Ok(found)
    })
}

/// The instance's name with the chip's HBM bandwidth: `… on ipu-pod4 @ 16 TB/s HBM`.
pub(super) fn header(inst: &Instance, chip: Option<&Chip>) -> String {
    let Some(chip) = chip else {
        return inst.name.clone();
    };
    // A built instance is named `<graph> on <chip label>`: the label gains the bandwidth.
    match inst.name.strip_suffix(&chip.label()) {
        Some(graph) => format!("{graph}{}", chip.label_with_hbm()),
        None => format!("{} (chip {})", inst.name, chip.label_with_hbm()),
    }
}
