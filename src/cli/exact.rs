//! `elk-opt solve --exact` and `elk-opt gap`: the flags and the printing. The computation is
//! [`elk_app::gap`] (the Python package runs the same): the exact backends, run in a child
//! process (`elk-opt exact-worker`) so that `--time-limit` is hard, warm-started from the best
//! heuristic, and every heuristic's distance from the optimum (or from the certified bound).

use super::flags::Timings;
use super::instance_source::{InstanceSource, Loaded};
use super::progress::ExactProgress;
use clap::Args;
use elk_app::gap::{CoupledStatus, ExactSettings, GapReport, GapStep, WORKER_GRACE};
use elk_app::request::ExactRequest;
use elk_solver::milp::Linearisation;
use elk_solver::RETIME_SUFFIX;
use elk_solver::{gap_pct, Backend, Note, NoteAbout, WholeModelBound, WorkerCommand};
use elk_stage::instance::Instance;
use elk_stage::method::StopReason;
use std::path::PathBuf;

/// Flags of the exact methods.
#[derive(Args, Debug, Clone)]
pub struct ExactFlags {
    /// Exact backend.
    #[arg(long, value_enum, default_value = "milp")]
    backend: Backend,
    /// Seconds the exact backend may run; enforced by killing it 1 s after.
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    time_limit: f64,
    /// MILP memory-row linearisation.
    #[arg(long, value_enum, default_value = "big-m")]
    linearisation: Linearisation,
    /// Do not warm-start from the best heuristic schedule.
    #[arg(long)]
    no_warm_start: bool,
    /// Skip the LP-relaxation bound.
    #[arg(long)]
    no_lp_bound: bool,
    /// The segment relaxation's bound: the coupled LP (`lp`: the bound `compare --bound
    /// segment` reports, solved first unless the bound cache holds it, with up to 90 % of
    /// --time-limit on a model too large for the backend, 25 % beside it), the coupled LP and MILP dual bounds per distinct layer on a model too large
    /// for the backend (`milp`: slower), or none (`off`: the roofline and the backend's own).
    /// See docs/exact.md, "Whole models".
    #[arg(long, value_enum, default_value = "lp")]
    whole_model_bound: WholeModelBound,
    /// For a model too large for the backend: return the warm start as it is instead of
    /// improving it by the window search (docs/exact.md, "The window search").
    #[arg(long)]
    no_window_search: bool,
    /// A deterministic budget in solver work, so that the same command gives the same
    /// result on any machine: N branch-and-bound nodes of the MILP (40 % for its fixed-order
    /// restriction), or N window MILPs on a model too large for it. --time-limit stays a
    /// hard stop on top; when it stops the solve first the output says the result is not
    /// reproducible (docs/exact.md, "Reproducible certificates").
    #[arg(long, value_name = "N", value_parser = super::flags::work_limit, allow_negative_numbers = true)]
    work_limit: Option<u64>,
}

/// `solve --exact --json` and `gap --json`: the inputs.
fn config(
    source: &InstanceSource,
    exact: ExactSettings,
    output: Option<&std::path::Path>,
    no_timings: bool,
) -> elk_app::request::ExactConfig {
    ExactRequest {
        input: source.input(),
        exact,
        output: output.map(PathBuf::from),
        no_timings,
        union: source.expert_parallel(),
    }
    .config()
}

impl ExactFlags {
    /// The settings the flags give (`--json` prints them in `config`); a time limit that is
    /// not a positive number of seconds is a usage error.
    pub(super) fn settings(&self) -> anyhow::Result<ExactSettings> {
        let settings = ExactSettings {
            backend: self.backend,
            time_limit_s: self.time_limit,
            linearisation: self.linearisation,
            warm_start: !self.no_warm_start,
            lp_bound: !self.no_lp_bound,
            whole_model_bound: self.whole_model_bound,
            window_search: !self.no_window_search,
            bound_cache: super::plan_cache::bounds(),
            work_limit: self.work_limit,
        };
        settings.check().map_err(super::flags::Usage)?;
        Ok(settings)
    }
}

/// `gap` arguments.
#[derive(Args, Debug)]
pub struct GapArgs {
    #[command(flatten)]
    source: InstanceSource,
    #[command(flatten)]
    exact: ExactFlags,
    #[command(flatten)]
    timings: Timings,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// The table as CSV on stdout, one row per method (the exact part's schedule last, with
    /// its status), units in the column names as in `--json` (docs/json.md, "CSV").
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// Write the schedule the exact part ends with (elk-schedule/1): its optimum, the window
    /// search's result or, when neither ran, the warm start (the best heuristic's); the last
    /// row of the table. `simulate --schedule` re-judges it.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
}

/// This binary's `exact-worker`: where the exact backend runs, killed [`WORKER_GRACE`] after
/// its time limit.
pub(super) fn worker() -> anyhow::Result<WorkerCommand> {
    Ok(WorkerCommand {
        program: std::env::current_exe()?,
        args: vec!["exact-worker".into()],
        grace: WORKER_GRACE,
    })
}

/// Shows a step of the gap or exact solve on `progress`.
pub(super) fn show(progress: &ExactProgress, inst: &Instance, step: GapStep<'_>) {
    match step {
        GapStep::Heuristic { k, n, name } => progress.heuristic(k, n, name),
        GapStep::Starting { label } => progress.say(format!("{label}: starting the worker")),
        GapStep::Exact { label, event } => progress.exact(label, inst, event),
        GapStep::Warning { message } => progress.warn(message),
    }
}

/// `--expert-parallel`: a step on the instance with parallel sets (`on_sets`) or the one
/// without, of `(sets, plain)`, shown as [`show`] shows it, the instance named.
fn show_on(
    progress: &ExactProgress,
    (sets, plain): (&Loaded, &Loaded),
    on_sets: bool,
    step: GapStep<'_>,
) {
    progress.on_instance(on_sets);
    let inst = if on_sets { sets } else { plain };
    show(progress, &inst.instance, step)
}

/// `solve --exact`.
pub fn solve(
    source: &InstanceSource,
    flags: &ExactFlags,
    output: Option<&PathBuf>,
    no_timings: bool,
    json: bool,
) -> anyhow::Result<()> {
    let settings = flags.settings()?;
    let progress = || {
        ExactProgress::start(if flags.no_warm_start {
            "exact solve"
        } else {
            "heuristics (the warm start)"
        })
    };
    // --expert-parallel: both instances solved, the faster result kept (CG-5).
    let (loaded, sum, union, schedule) = if source.expert_parallel() {
        let (sets, plain) = source.load_both()?;
        let progress = progress();
        let out = elk_app::gap::solve_exact_union(
            &sets.instance,
            &plain.instance,
            &settings,
            no_timings,
            Some(worker()?),
            &|on_sets, step| show_on(&progress, (&sets, &plain), on_sets, step),
        )?;
        progress.finish();
        let kept = source.keep(sets, plain, out.union.parallel_sets)?;
        (kept, out.kept, Some(out.union), out.schedule)
    } else {
        let loaded = source.load_full()?;
        let progress = progress();
        let (sum, schedule) = elk_app::gap::solve_exact(
            &loaded.instance,
            &settings,
            no_timings,
            Some(worker()?),
            &|step| show(&progress, &loaded.instance, step),
        )?;
        progress.finish();
        (loaded, sum, None, schedule)
    };
    let (inst, build_s) = (&loaded.instance, loaded.build_s);
    if let (Some(path), Some(s)) = (output, &schedule) {
        super::output::write_schedule(path, inst, s)?;
    }
    if json {
        let config = config(source, settings, output.map(PathBuf::as_path), no_timings);
        return match union {
            Some(union) => {
                let out = elk_app::gap::ExactUnion {
                    kept: sum,
                    union,
                    schedule: None,
                };
                super::json::print_json("solve-exact", &config, &out)
            }
            None => super::json::print_json("solve-exact", &config, &sum),
        };
    }
    println!("{} — exact ({})", inst.name, sum.backend.name());
    println!("status: {}", sum.status_word());
    match (sum.makespan_cycles, sum.makespan_ms) {
        (Some(c), Some(ms)) => println!("makespan: {c} = {ms:.6} ms (simulated)"),
        _ => println!("makespan: no schedule"),
    }
    println!(
        "lower bound: {} = {:.6} ms ({})",
        sum.lower_bound_cycles,
        inst.ms(sum.lower_bound_cycles),
        sum.bound_source
    );
    if let Some(g) = sum.gap_pct {
        println!("gap: {g:.4} % (makespan over bound)");
    }
    let m = &sum.model;
    match sum.stop {
        StopReason::NotAttempted | StopReason::WindowSearch => {
            println!("model: not built (too large; see the note)")
        }
        StopReason::Killed => println!("model: size unknown (the worker was killed)"),
        StopReason::WarmStartMeetsBound => {
            println!("model: not built (the warm start meets the lower bound)")
        }
        StopReason::LpOptionsMeetBound => {
            println!("model: not built (the LP relaxation's options, queued, meet the lower bound)")
        }
        _ => println!(
            "model: {} variables ({} binary), {} constraints{}",
            m.variables,
            m.binaries,
            m.constraints,
            m.options_kept
                .as_ref()
                .map(|o| format!(
                    ", {} of {} options after Pareto pruning",
                    o.kept_options, o.total_options
                ))
                .unwrap_or_default(),
        ),
    }
    if let Some(w) = &sum.warm_start {
        let searched = sum
            .search
            .as_ref()
            .filter(|s| s.makespan_cycles < s.input_cycles);
        println!(
            "warm start: {w}{}",
            match searched {
                Some(s) => format!(
                    " ({:.6} ms, improved by the window search to the makespan above)",
                    s.input_ms
                ),
                None if sum.stop == StopReason::WarmStartMeetsBound =>
                    " (returned: it meets the lower bound, so no backend ran)".into(),
                None if sum.from_warm_start =>
                    " (returned: the backend found nothing better)".into(),
                None => String::new(),
            }
        );
    }
    for n in &sum.notes {
        println!("note: {n}");
    }
    if let Some(s) = &sum.search {
        for i in &s.improvements {
            let at = i.at_s.map_or(String::new(), |t| format!(" at {t:.1} s"));
            println!("search: {:.6} ms{at} ({})", i.makespan_ms, i.by);
        }
    }
    for p in sum.phases.iter().flatten() {
        println!("time: {} {:.3} s", p.what, p.wall_s);
    }
    if let Some(s) = sum.solve_s {
        println!("instance built in {build_s:.3} s, exact solve {s:.3} s");
    }
    if let Some(u) = &union {
        print_union(
            inst,
            u,
            &format!("--time-limit {}", settings.time_limit_s),
            true,
        );
    }
    Ok(())
}

/// What `--expert-parallel` adds under `solve --exact`'s and `gap`'s text: which instance the
/// kept result is of, the union's reference, and the other instance's exact part.
/// What `--expert-parallel` adds under an exact result: `limit` names the time limit
/// (`--time-limit 60`), `files` whether `-o` and `--emit-instance` follow the kept result.
pub(super) fn print_union(inst: &Instance, u: &elk_app::gap::UnionPart, limit: &str, files: bool) {
    let which = |sets: bool| if sets { "with" } else { "without" };
    println!(
        "--expert-parallel: the union of the instances with and without parallel sets (docs/core-groups.md, CG-5), each solved within {limit} s; the exact result above{} is of the instance {} them",
        if files { " (and -o, --emit-instance)" } else { "" },
        which(u.parallel_sets)
    );
    println!(
        "union's {}: {:.6} ms, the instance {} parallel sets' (the lower of the two){}",
        if u.optimal { "optimum" } else { "lower bound" },
        inst.ms(u.lower_bound_cycles),
        which(u.bound_parallel_sets),
        u.gap_pct
            .map_or(String::new(), |g| format!("; gap {g:.4} %"))
    );
    let o = &u.other;
    println!(
        "the instance {} parallel sets: {} ({}; status {})",
        which(!u.parallel_sets),
        o.makespan_ms
            .map_or("no schedule".into(), |ms| format!("{ms:.6} ms")),
        o.ran,
        o.status_word()
    );
}

/// `gap`.
pub fn gap(a: GapArgs) -> anyhow::Result<()> {
    super::flags::schedule_and_instance_apart(
        a.output.as_deref(),
        a.source.emit_instance.as_deref(),
    )?;
    let settings = a.exact.settings()?;
    let (loaded, out) = if a.source.expert_parallel() {
        gap_union(&a.source, &settings, a.timings.no_timings)?
    } else {
        let loaded = a.source.load_full()?;
        let out = gap_report(&loaded.instance, &settings, a.timings.no_timings)?;
        (loaded, out)
    };
    let rules = loaded.rules_suffix();
    let inst = &loaded.instance;
    // The schedule is written before the table is printed, so a table never names a file
    // that is not there; with no schedule to write, the table still prints and the run fails.
    if let (Some(path), Some(s)) = (&a.output, &out.schedule) {
        super::output::write_schedule(path, inst, s)?;
    }
    if a.json {
        let config = config(
            &a.source,
            settings,
            a.output.as_deref(),
            a.timings.no_timings,
        );
        super::json::print_json("gap", &config, &out)?;
    } else if a.csv {
        print_gap_csv(inst, loaded.chip.as_ref(), &out);
    } else {
        println!(
            "{}{}",
            super::solve::header(inst, loaded.chip.as_ref()),
            rules
        );
        print_gap(inst, &out, "--time-limit", settings.whole_model_bound);
        if let Some(u) = &out.union {
            let without: Vec<&str> = out
                .rows
                .iter()
                .filter(|r| r.parallel_sets == Some(false) && r.makespan_ms.is_some())
                .map(|r| r.method.as_str())
                .collect();
            println!(
                "each row: its method's faster schedule of the two instances; {}",
                if without.is_empty() {
                    "every one has parallel sets".to_string()
                } else {
                    format!("faster without parallel sets: {}", without.join(", "))
                }
            );
            print_union(
                inst,
                u,
                &format!("--time-limit {}", settings.time_limit_s),
                true,
            );
        }
        if let (Some(path), Some(_)) = (&a.output, &out.schedule) {
            println!("schedule: written to {}", path.display());
        }
    }
    match (&a.output, &out.schedule) {
        (Some(path), None) => anyhow::bail!(
            "-o {}: the exact part ended without a schedule (status {}); nothing written",
            path.display(),
            out.status()
        ),
        _ => Ok(()),
    }
}

/// `gap --expert-parallel`: [`elk_app::gap::gap_union`] in this binary's worker, the
/// spinner naming the instance solved; the instance the kept exact result is of (written to
/// `--emit-instance`) and the report.
fn gap_union(
    source: &InstanceSource,
    settings: &ExactSettings,
    no_timings: bool,
) -> anyhow::Result<(Loaded, GapReport)> {
    let (sets, plain) = source.load_both()?;
    let progress = ExactProgress::start("heuristics");
    let out = elk_app::gap::gap_union(
        &sets.instance,
        &plain.instance,
        settings,
        no_timings,
        Some(worker()?),
        &|on_sets, step| show_on(&progress, (&sets, &plain), on_sets, step),
    )?;
    progress.finish();
    let on_sets = out.union.as_ref().is_some_and(|u| u.parallel_sets);
    Ok((source.keep(sets, plain, on_sets)?, out))
}

/// [`elk_app::gap::gap_report`] in this binary's worker, shown on a spinner: `gap`, and
/// the layer section of `compare --layer-exact`.
fn gap_report(
    inst: &Instance,
    settings: &ExactSettings,
    no_timings: bool,
) -> anyhow::Result<GapReport> {
    let progress = ExactProgress::start("heuristics");
    let report = elk_app::gap::gap_report(inst, settings, no_timings, Some(worker()?), &|step| {
        show(&progress, inst, step)
    })?;
    progress.finish();
    Ok(report)
}

/// `gap --csv`: every row with the reference it is measured against.
fn print_gap_csv(inst: &Instance, chip: Option<&super::chip_choice::Chip>, out: &GapReport) {
    use super::output::{csv_flag, csv_number as num, csv_row_head};
    let chip = chip.map(|c| c.label_with_hbm()).unwrap_or_default();
    let reference_ms = inst.ms(out.reference_cycles);
    let rows: Vec<Vec<String>> = out
        .rows
        .iter()
        .map(|r| {
            let mut row = csv_row_head(&inst.name, &chip, &r.method, r.makespan_ms, r.gap_pct);
            row.extend([
                (!r.reference_is_optimum).to_string(),
                out.reference.to_string(),
                num(Some(reference_ms)),
                out.bound_source().to_string(),
                num(r.compile_s),
                r.status.clone().unwrap_or_default(),
                csv_flag(r.parallel_sets),
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
            "gap_pct",
            "gap_is_upper_bound",
            "reference",
            "reference_ms",
            "bound_source",
            "time_s",
            "status",
            "parallel_sets",
        ],
        &rows,
    );
}

/// The body of `gap`'s table: the reference, every row with its gap, Ideal, the legends and
/// how a stronger bound may be had (`limit_flag` and `whole_model_bound`: what ran it).
pub(super) fn print_gap(
    inst: &Instance,
    out: &GapReport,
    limit_flag: &str,
    whole_model_bound: WholeModelBound,
) {
    let reference = out.reference_cycles;
    println!(
        "reference: {} = {} = {:.6} ms ({}; exact status {})",
        out.reference,
        reference,
        inst.ms(reference),
        out.bound_source(),
        out.status()
    );
    let width = out
        .rows
        .iter()
        .map(|r| r.method.len())
        .max()
        .unwrap_or(6)
        .max(6);
    println!(
        "{:<width$} {:>14} {:>12} {:>10}",
        "method", "makespan ms", "gap %", "time s"
    );
    for r in &out.rows {
        let status = r
            .status
            .as_ref()
            .map_or(String::new(), |s| format!("  {s}"));
        println!(
            "{:<width$} {:>14} {:>12} {:>10}{status}",
            r.method,
            r.makespan_ms.map_or("-".into(), |v| format!("{v:.6}")),
            r.gap_pct.map_or("-".into(), |g| {
                if r.reference_is_optimum {
                    format!("{g:.3}")
                } else {
                    format!("≤ {g:.3}")
                }
            }),
            r.compile_s.map_or("-".into(), |c| format!("{c:.3}"))
        );
    }
    if let Some(ideal) = out.ideal_cycles {
        let ideal_vs = gap_pct(ideal, reference).unwrap_or(f64::NAN);
        println!(
            "ideal (Elk's figure, not a bound): {:.6} ms, {} % vs the {}",
            inst.ms(ideal),
            super::output::signed(ideal_vs, 3),
            out.reference
        );
    }
    println!(
        "gap % = 100·(makespan − reference)/reference: exact against an optimum; '≤' marks a certified upper bound on the gap, measured against a proven lower bound"
    );
    if out.rows.iter().any(|r| r.method.ends_with(RETIME_SUFFIX)) {
        println!("{}", super::method_rows::RETIME_LEGEND);
    }
    if out.rows.iter().any(|r| r.method == elk_solver::STAGE_QUEUE) {
        println!("{}", super::method_rows::STAGE_QUEUE_LEGEND);
    }
    // How the whole-model bound was reached, and when it improved.
    let segment_notes: Vec<&Note> = out.exact.notes.iter().filter(|n| n.is_segment()).collect();
    for n in &segment_notes {
        println!("{n}");
    }
    if segment_notes
        .iter()
        .any(|n| n.about == NoteAbout::SegmentPrices)
    {
        println!("μ: the price the segment relaxation puts on one cycle of load work moved across a layer boundary; every price gives a valid bound and the best is kept (docs/exact.md, \"Whole models\")");
    }
    if out.exact.coupled == CoupledStatus::Held {
        println!("ν: NoC cycles per HBM cycle of a load's option; the coupled LP balances the load work moved across layer boundaries per ν instead of pricing it, so it is at least as tight as every μ (docs/exact.md, \"The coupled relaxation\")");
    }
    if let Some(w) = &out.exact.work {
        println!("{}", w.sentence(out.exact.status.proven()));
    }
    if let Some(hint) = stronger_bound(inst, out, limit_flag, whole_model_bound) {
        println!("{hint}");
    }
}

/// How a stronger reference than `out`'s may be had, when one may: the line under `gap`'s
/// table that says a proven lower bound is not the last word. Each way named is one that can
/// raise the bound (a longer search of a whole model only improves the schedule).
fn stronger_bound(
    inst: &Instance,
    out: &GapReport,
    limit_flag: &str,
    whole_model_bound: WholeModelBound,
) -> Option<String> {
    let e = &out.exact;
    if out.reference_is_optimum() {
        return None;
    }
    let whole_model = elk_solver::too_large(inst, e.backend);
    let layered = inst.layers().layers >= 2;
    let mut ways: Vec<String> = Vec::new();
    if let CoupledStatus::Unfinished { .. } = e.coupled {
        ways.push(format!(
            "a longer {limit_flag} (the coupled segment LP did not finish within its share)"
        ));
    } else if !whole_model && e.stop.time_limited() {
        ways.push(format!(
            "a longer {limit_flag} (the {} may prove more)",
            e.backend.model_noun()
        ));
    } else if !whole_model && e.stop == StopReason::WorkLimit {
        ways.push(format!(
            "a larger --work-limit (the {} may prove more)",
            e.backend.model_noun()
        ));
    }
    match whole_model_bound {
        WholeModelBound::Off if layered => {
            ways.push("`--whole-model-bound lp` (the coupled segment LP)".into())
        }
        WholeModelBound::Lp if whole_model && layered => {
            ways.push("`--whole-model-bound milp` (segment MILP dual bounds, slower)".into())
        }
        _ => {}
    }
    // "the roofline", "the MILP dual bound", "the best bound the worker told before the kill".
    let source = out.bound_source().in_sentence();
    (!ways.is_empty()).then(|| {
        format!(
            "a stronger bound may exist: the best proven within this run is {source}; try {}",
            ways.join(" or ")
        )
    })
}
