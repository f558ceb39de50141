//! `elk-opt solve` and `elk-opt compare`: heuristic methods on an instance built from a graph
//! and a chip (or read from a file), judged by the simulator.

use super::chip_choice::Chip;
use super::compare_table;
use super::flags::Timings;
use super::instance_source::{InstanceSource, Loaded};
use super::method_rows::{ideal_row, method_named, method_parser, run_method};
use clap::Args;
use elk_app::compare::run::{
    every_reader_count, run_reader_counts, CompareOn, CompareOutcome, AUTO_OF_ONE_CHIP,
};
use elk_app::compare::RowStatus;
use elk_app::request::{BoundChoice, CompareRequest, SolveRequest};
use elk_sim::evaluate_with;
use elk_sim::trace::ChromeTrace;
use elk_stage::instance::Instance;
use std::path::PathBuf;

/// `solve` arguments.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// The heuristic method (or `ideal`, Elk's figure); `NAME+retime`: that heuristic's
    /// schedule with its load work re-timed by an LP (same options, order and starts);
    /// `stage-lp+queue`: the stage relaxation LP's options, their loads queued and re-timed.
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
            "whole_model_bound",
            "work_limit"
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

pub fn solve(a: SolveArgs) -> anyhow::Result<()> {
    super::flags::schedule_and_instance_apart(
        a.output.as_deref(),
        a.source.emit_instance.as_deref(),
    )?;
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
    let config = || {
        SolveRequest {
            input: a.source.input(),
            method: method.clone(),
            output: a.output.clone(),
            trace: a.trace.clone(),
            no_timings: a.timings.no_timings,
        }
        .config()
    };
    if method == "ideal" && (a.output.is_some() || a.trace.is_some()) {
        return Err(super::flags::Usage(
            "--method ideal gives a figure, not a schedule: no -o or --trace".into(),
        )
        .into());
    }
    // --expert-parallel: the instance without parallel sets too; the faster schedule is kept,
    // and --emit-instance writes its instance (docs/core-groups.md, CG-5).
    let both = if a.source.expert_parallel() {
        Some(a.source.load_both()?)
    } else {
        None
    };
    if method == "ideal" {
        let (inst, row) = match both {
            Some((sets, plain)) => {
                let row = elk_app::compare::ideal_union(
                    &sets.instance,
                    &plain.instance,
                    a.timings.no_timings,
                );
                let on_sets = row.parallel_sets == Some(true);
                (a.source.keep(sets, plain, on_sets)?.instance, row)
            }
            None => {
                let (inst, _) = a.source.load()?;
                let row = ideal_row(&inst, a.timings.no_timings);
                (inst, row)
            }
        };
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
    let (inst, build_s, mut row, result) = match both {
        Some((sets, plain)) => {
            let spinner = super::progress::spinner(format!(
                "{} on {} and on the instance without parallel sets",
                m.name(),
                sets.instance.name
            ));
            let (row, result) =
                elk_app::compare::solve_union(&sets.instance, &plain.instance, m.as_ref())?;
            spinner.finish_and_clear();
            let kept = a
                .source
                .keep(sets, plain, row.parallel_sets == Some(true))?;
            (kept.instance, kept.build_s, row, result)
        }
        None => {
            let (inst, build_s) = a.source.load()?;
            let spinner = super::progress::spinner(format!("{} on {}", m.name(), inst.name));
            let (row, result) = run_method(&inst, m.as_ref())?;
            spinner.finish_and_clear();
            (inst, build_s, row, result)
        }
    };
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
        let status = row.status.to_string();
        let why = row.notes.last().unwrap_or(&status);
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
        _ if row.status == RowStatus::Infeasible => println!("no schedule: {}", row.status),
        _ => println!("no schedule found"),
    }
    for n in &row.notes {
        println!("note: {n}");
    }
    if let Some(sets) = row.parallel_sets {
        println!(
            "--expert-parallel: the faster of its schedules of the instances with and without parallel sets (docs/core-groups.md, CG-5): this one is {} them, as are -o, --trace and --emit-instance",
            if sets { "with" } else { "without" }
        );
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
    /// heuristic's gap there. The main job (no arguments) uses 10 with `--work-limit 1`, and
    /// proves its layer optimal in under a second (`stage-lp+queue`'s schedule meets the
    /// roofline bound; docs/exact.md).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECONDS",
        value_parser = super::flags::seconds,
        conflicts_with_all = ["instance", "layers", "ops"]
    )]
    layer_exact: Option<f64>,
    /// With --layer-exact: stop the layer's MILP after N branch-and-bound nodes, so that the
    /// section is the same on every machine (the seconds stay a hard stop; docs/exact.md,
    /// "Reproducible certificates").
    #[arg(long, value_name = "N", value_parser = super::flags::work_limit, allow_negative_numbers = true)]
    work_limit: Option<u64>,
    /// The certified lower bound of the `gap ≤ %` column: `roofline` (instant); `stage`, the
    /// stage relaxation LP or the roofline where stronger (under a second on a dense 7B–70B
    /// model, ≈ 6 s on OLMoE-1B-7B; not tried above 10,000 operators; docs/exact.md, "The
    /// stage relaxation"); or `segment`, the best of that and the coupled segment relaxation
    /// LP that `gap`, sweeps with `bound = true` and the main job use (seconds to a minute on
    /// a 7B–70B model, then kept in the bound cache beside the plan tables; docs/exact.md,
    /// "Whole models").
    #[arg(long, value_enum, default_value = "stage")]
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

pub fn compare(a: CompareArgs) -> anyhow::Result<()> {
    refuse_csv_with_sections(&a)?;
    // Flags of the MoE section are checked before any work.
    let moe_args = match a.moe.routing {
        Some(_) => Some(a.source.moe_request(&a.moe)?),
        None => None,
    };
    let request = CompareRequest {
        input: a.source.input(),
        bound: a.bound,
        layer_exact_s: a.layer_exact,
        layer_work_limit: a.work_limit,
        no_timings: a.timings.no_timings,
    };
    request
        .validate()
        .map_err(|e| super::flags::Usage(e.to_string()))?;
    let (loaded, outcome) = if every_reader_count(&request).is_some() {
        if moe_args.is_some() {
            return super::flags::Usage::err(AUTO_OF_ONE_CHIP);
        }
        compare_reader_counts(&a.source, &request)?
    } else {
        let loaded = a.source.load_full()?;
        let worker = match a.layer_exact {
            Some(_) => Some(super::exact::worker()?),
            None => None,
        };
        let outcome = compare_loaded(&a.source, &request, &loaded, worker)?;
        (loaded, outcome)
    };
    let (inst, build_s) = (&loaded.instance, loaded.build_s);
    let chip = loaded.chip.as_ref();
    let moe = moe_args.as_ref().map(super::moe::run_section).transpose()?;
    if a.json {
        let config = request.config();
        return super::json::print_json("compare", &config, &outcome.results(moe.as_ref()));
    }
    let report = &outcome.report;
    if a.csv {
        compare_table::print_csv(inst, chip, &outcome.report);
        return Ok(());
    }
    // A built MoE graph has the balanced routing (docs/moe.md): the header says so.
    let routing = loaded
        .graph
        .as_ref()
        .filter(|g| elk_model::zoo::has_experts(g))
        .map(|_| "balanced");
    compare_table::print_text(
        inst,
        chip,
        (routing, &loaded.rules_suffix()),
        report,
        build_s,
        a.timings.no_timings,
    );
    let computed = (outcome.segment.as_ref(), outcome.stage.as_ref());
    compare_table::print_bound(inst, report, computed, a.bound);
    if let Some((layer, section)) = &outcome.layer {
        super::layer_exact::print(layer, section, &report.methods);
    }
    if let (Some(section), Some(args)) = (&moe, &moe_args) {
        println!(
            "\nMoE load policies (docs/moe.md; the methods above ran on the balanced routing):"
        );
        super::moe::print_section(section, args.batch);
    }
    Ok(())
}

/// `request` answered on `loaded`, built from `source` (with `--expert-parallel`, and the
/// instance without parallel sets, built here): the methods, the bound and the layer section.
fn compare_loaded(
    source: &InstanceSource,
    request: &CompareRequest,
    loaded: &Loaded,
    worker: Option<elk_solver::WorkerCommand>,
) -> anyhow::Result<CompareOutcome> {
    // --expert-parallel: the instance without parallel sets too; each method keeps its
    // faster schedule, the lower bound bounds both (docs/core-groups.md, CG-5).
    let plain = if source.expert_parallel() {
        Some(source.load_without_sets()?)
    } else {
        None
    };
    let on = CompareOn {
        inst: &loaded.instance,
        graph: loaded.graph.as_ref(),
        chip: loaded.chip.as_ref().map(Chip::as_label),
        without: plain.as_ref().map(|p| (&p.instance, p.graph.as_ref())),
    };
    let watch = super::compare_watch::Bars::default();
    elk_app::compare::run::run(
        request,
        on,
        super::plan_cache::bounds().as_ref(),
        worker,
        &watch,
    )
    .map_err(super::notice::app_error)
}

/// `compare --dram-readers auto`: the model compared on the chip with each count of
/// DRAM-reader cores, merged ([`run_reader_counts`]), and the count with the fastest
/// schedule's instance (the header's, `--csv`'s, and `--emit-instance`'s, written here).
fn compare_reader_counts(
    source: &InstanceSource,
    request: &CompareRequest,
) -> anyhow::Result<(Loaded, CompareOutcome)> {
    let counts = run_reader_counts(
        request,
        super::plan_cache::get(),
        &mut super::notice::Stderr::default(),
        super::plan_cache::bounds().as_ref(),
        &super::compare_watch::Bars::default(),
    )
    .map_err(super::notice::app_error)?;
    super::plan_cache::warn_on_write_error(&counts.built.cache);
    let loaded = Loaded {
        instance: counts.built.instance,
        build_s: counts.build_s,
        chip: Some(counts.built.chip),
        graph: Some(counts.built.graph),
    };
    source.emit(&loaded)?;
    Ok((loaded, counts.outcome))
}

/// `--csv` is the methods' table only: refused with the sections it cannot hold.
fn refuse_csv_with_sections(a: &CompareArgs) -> anyhow::Result<()> {
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
    Ok(())
}

/// The instance's name with the chip's HBM bandwidth: `… on ipu-pod4 @ 16 TB/s HBM`.
pub(super) fn header(inst: &Instance, chip: Option<&Chip>) -> String {
    let Some(chip) = chip else {
        return inst.name.clone();
    };
    // A built instance is named `<graph> on <chip label>[, what it covers]`: the label gains
    // the bandwidth.
    let on = format!(" on {}", chip.label());
    match inst.name.split_once(&on) {
        Some((graph, rest)) if rest.is_empty() || rest.starts_with(", ") => {
            format!("{graph} on {}{rest}", chip.label_with_hbm())
        }
        _ => format!("{} (chip {})", inst.name, chip.label_with_hbm()),
    }
}
