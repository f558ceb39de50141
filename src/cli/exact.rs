//! `elk-opt solve --exact` and `elk-opt gap`: the exact backends, run in a child process
//! (`elk-opt exact-worker`) so that `--time-limit` is hard, warm-started from the best heuristic, and
//! every heuristic's distance from the optimum (or from the certified bound).

use super::flags::Timings;
use super::instance_source::{InstanceSource, SourceConfig};
use super::method_rows::all_heuristics;
use super::progress::ExactProgress;
use clap::{Args, ValueEnum};
use elk_solver::lns::{LnsStop, LnsSummary};
use elk_solver::milp::Linearisation;
use elk_solver::RETIME_SUFFIX;
use elk_solver::{
    gap_pct, Backend, Bounds, Exact, ExactOptions, ExactReport, ExactStatus, ExactStop, ModelStats,
    WholeModelBound, WholeModelSearch, WorkerCommand,
};
use elk_stage::instance::Instance;
use elk_stage::method::Budget;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// The exact backends on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendName {
    /// HiGHS MILP.
    Milp,
    /// z3 SMT (tiny instances).
    Smt,
}

/// Memory-row linearisation of the MILP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinearisationName {
    /// One big-M row pair per (load, stage).
    BigM,
    /// One product variable per (load, stage, option).
    PerOption,
}

/// Flags of the exact methods.
#[derive(Args, Debug, Clone)]
pub struct ExactFlags {
    /// Exact backend.
    #[arg(long, value_enum, default_value = "milp")]
    backend: BackendName,
    /// Seconds the exact backend may run; enforced by killing it 1 s after.
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    time_limit: f64,
    /// MILP memory-row linearisation.
    #[arg(long, value_enum, default_value = "big-m")]
    linearisation: LinearisationName,
    /// Do not warm-start from the best heuristic schedule.
    #[arg(long)]
    no_warm_start: bool,
    /// Skip the LP-relaxation bound.
    #[arg(long)]
    no_lp_bound: bool,
    /// For a model too large for the backend: bound it by the segment relaxation with one
    /// LP per distinct layer (`lp`), one MILP dual bound per layer (`milp`), or not (`off`:
    /// the roofline only). See docs/exact.md, "Whole models".
    #[arg(long, value_enum, default_value = "lp")]
    whole_model_bound: WholeModelBoundName,
    /// For a model too large for the backend: return the warm start as it is instead of
    /// improving it by the window search (docs/exact.md, "The window search").
    #[arg(long)]
    no_window_search: bool,
}

/// The exact solver's flags as `--json` prints them in `config`.
#[derive(Serialize)]
pub(super) struct ExactConfig {
    backend: BackendName,
    time_limit_s: f64,
    linearisation: LinearisationName,
    warm_start: bool,
    lp_bound: bool,
    whole_model_bound: WholeModelBoundName,
    window_search: bool,
}

/// `solve --exact --json` and `gap --json`: the inputs.
#[derive(Serialize)]
struct Config<'a> {
    #[serde(flatten)]
    source: SourceConfig,
    #[serde(flatten)]
    exact: ExactConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a std::path::Path>,
    no_timings: bool,
}

impl ExactFlags {
    /// The flags as `--json` prints them.
    pub(super) fn config(&self) -> ExactConfig {
        ExactConfig {
            backend: self.backend,
            time_limit_s: self.time_limit,
            linearisation: self.linearisation,
            warm_start: !self.no_warm_start,
            lp_bound: !self.no_lp_bound,
            whole_model_bound: self.whole_model_bound,
            window_search: !self.no_window_search,
        }
    }

    /// The MILP with the defaults above (big-M rows, LP bound, warm start) within `seconds`:
    /// the one-layer solve of `compare --layer-exact`.
    pub(super) fn milp_within(seconds: f64) -> ExactFlags {
        ExactFlags {
            backend: BackendName::Milp,
            time_limit: seconds,
            linearisation: LinearisationName::BigM,
            no_warm_start: false,
            no_lp_bound: false,
            whole_model_bound: WholeModelBoundName::Lp,
            no_window_search: false,
        }
    }
}

/// `--whole-model-bound` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WholeModelBoundName {
    /// Segment LP relaxations.
    Lp,
    /// Segment MILP dual bounds.
    Milp,
    /// Roofline only.
    Off,
}

/// Seconds after the time limit before the worker is killed.
const GRACE: Duration = Duration::from_millis(1000);

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
}

/// The exact solve's summary as printed with `--json`.
#[derive(Serialize)]
struct ExactSummary {
    instance: String,
    backend: &'static str,
    status: ExactStatus,
    stop: ExactStop,
    /// What actually ran and what it did, in words (the exact row's status in `gap`).
    ran: String,
    makespan_cycles: Option<Cycles>,
    makespan_ms: Option<f64>,
    lower_bound_cycles: Cycles,
    bound_source: String,
    gap_pct: Option<f64>,
    solve_s: Option<f64>,
    model: ModelJson,
    warm_start: Option<String>,
    from_warm_start: bool,
    bounds: Bounds,
    notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phases: Option<Vec<PhaseJson>>,
    /// The window search of a whole model (times left out with `--no-timings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    search: Option<SearchJson>,
}

/// What the window search did, times left out with `--no-timings`.
#[derive(Serialize)]
struct SearchJson {
    stop: LnsStop,
    input_cycles: Cycles,
    input_ms: f64,
    makespan_cycles: Cycles,
    makespan_ms: f64,
    solved_windows: usize,
    proven_windows: usize,
    sweeps: usize,
    improvements: Vec<ImprovementJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_s: Option<f64>,
}

/// One improvement of the window search's incumbent.
#[derive(Serialize)]
struct ImprovementJson {
    makespan_cycles: Cycles,
    makespan_ms: f64,
    by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    at_s: Option<f64>,
}

impl SearchJson {
    fn new(inst: &Instance, s: &LnsSummary, no_timings: bool) -> SearchJson {
        let time = |v: f64| (!no_timings).then_some(v);
        SearchJson {
            stop: s.stop,
            input_cycles: s.input_cycles,
            input_ms: inst.ms(s.input_cycles),
            makespan_cycles: s.makespan_cycles,
            makespan_ms: inst.ms(s.makespan_cycles),
            solved_windows: s.windows_solved,
            proven_windows: s.windows_optimal,
            sweeps: s.sweeps,
            improvements: s
                .improvements
                .iter()
                .map(|i| ImprovementJson {
                    makespan_cycles: i.makespan_cycles,
                    makespan_ms: inst.ms(i.makespan_cycles),
                    by: i.by.clone(),
                    at_s: time(i.at_s),
                })
                .collect(),
            wall_s: time(s.seconds),
        }
    }
}

/// The backend's model size, every count named.
#[derive(Serialize)]
struct ModelJson {
    variables: usize,
    binaries: usize,
    constraints: usize,
    /// Options kept after Pareto pruning (MILP), of all options.
    options_kept: Option<OptionsKept>,
}

/// Options kept after Pareto pruning, of all options.
#[derive(Serialize)]
struct OptionsKept {
    kept_options: usize,
    total_options: usize,
}

impl From<&ModelStats> for ModelJson {
    fn from(m: &ModelStats) -> ModelJson {
        ModelJson {
            variables: m.variables,
            binaries: m.binaries,
            constraints: m.constraints,
            options_kept: m.options_kept.map(|(kept, total)| OptionsKept {
                kept_options: kept,
                total_options: total,
            }),
        }
    }
}

/// A timed phase of the solve.
#[derive(Serialize)]
struct PhaseJson {
    what: String,
    wall_s: f64,
}

pub(super) fn check_flags(f: &ExactFlags) -> anyhow::Result<()> {
    if !(f.time_limit.is_finite() && f.time_limit > 0.0) {
        return Err(super::flags::Usage(format!(
            "--time-limit {}: must be a positive number of seconds",
            f.time_limit
        ))
        .into());
    }
    Ok(())
}

/// Runs the exact backend in a worker process (this binary's `exact-worker`) with a hard
/// limit, through the same [`elk_stage::method::Method`] road as every method, its phases
/// shown on `progress`.
fn run_exact(
    inst: &Instance,
    flags: &ExactFlags,
    warm: Option<Schedule>,
    progress: &ExactProgress,
) -> anyhow::Result<ExactReport> {
    let exact = Exact {
        options: ExactOptions {
            backend: match flags.backend {
                BackendName::Milp => Backend::Milp,
                BackendName::Smt => Backend::Smt,
            },
            linearisation: match flags.linearisation {
                LinearisationName::BigM => Linearisation::BigM,
                LinearisationName::PerOption => Linearisation::PerOption,
            },
            time_limit: None,
            warm_start: warm,
            lp_bound: !flags.no_lp_bound,
            whole_model: match flags.whole_model_bound {
                WholeModelBoundName::Lp => WholeModelBound::Lp,
                WholeModelBoundName::Milp => WholeModelBound::Milp,
                WholeModelBoundName::Off => WholeModelBound::Off,
            },
            whole_model_search: if flags.no_window_search {
                WholeModelSearch::Off
            } else {
                WholeModelSearch::Window
            },
        },
        worker: Some(WorkerCommand {
            program: std::env::current_exe()?,
            args: vec!["exact-worker".into()],
            grace: GRACE,
        }),
    };
    let label = format!(
        "exact {} (limit {} s)",
        exact.options.backend.name(),
        flags.time_limit
    );
    progress.say(format!("{label}: starting the worker"));
    let report = exact.report_with(inst, &Budget::seconds(flags.time_limit), &|e| {
        progress.exact(&label, inst, e)
    });
    Ok(report?)
}

/// Every heuristic on `inst` (their rows and the best schedule), each shown on `progress`.
fn heuristics_shown(
    inst: &Instance,
    progress: &ExactProgress,
) -> anyhow::Result<(Vec<super::method_rows::Row>, Option<Schedule>)> {
    Ok(all_heuristics(inst, &|k, n, name| {
        progress.heuristic(k, n, name)
    })?)
}

/// What ran in an exact solve and what it did, in one phrase: the `ran` of `--json` and the
/// status of `gap`'s exact row. Never "not attempted" when the window search ran, and never a
/// MILP when only the warm start was checked against a bound.
fn what_ran(inst: &Instance, r: &ExactReport, warm: Option<(&str, Cycles)>) -> String {
    // A backend whose schedule is no faster than the warm start found nothing better, even
    // when it returns a copy of its own.
    let no_better = r.from_warm_start
        || warm
            .zip(r.makespan_cycles)
            .is_some_and(|((_, w), t)| t.get() >= w.get() * (1.0 - 1e-12));
    let warm = warm.map_or("the warm start", |w| w.0);
    let backend = match r.backend {
        elk_solver::Backend::Milp => "MILP (HiGHS)",
        elk_solver::Backend::Smt => "SMT (z3)",
    };
    let kept = if no_better {
        format!("; it found nothing better than {warm}")
    } else {
        String::new()
    };
    match r.stop {
        ExactStop::WindowSearch => match &r.search {
            Some(s) => format!(
                "window search ({}): improved {warm} {:.4} → {:.4} ms",
                match s.stop {
                    LnsStop::Converged => "converged",
                    LnsStop::TimeLimit => "time limit",
                    LnsStop::MeetsBound => "meets the bound: optimal",
                },
                inst.ms(s.input_cycles),
                inst.ms(s.makespan_cycles)
            ),
            None => "window search".into(),
        },
        ExactStop::NotAttempted => format!(
            "nothing ran: the model is too large to build and the window search did not run; {warm} is reported as it is"
        ),
        ExactStop::WarmStartMeetsBound => format!(
            "no MILP ran: {warm} meets the {} bound, so it is optimal",
            bound_name(&r.bounds, &r.bound_source)
        ),
        ExactStop::Killed if elk_solver::too_large(inst, r.backend) => format!(
            "the whole-model search (segment relaxation, window search) overran its time limit and was killed; {}",
            if r.from_warm_start {
                format!("{warm} is reported as it is")
            } else {
                "its last incumbent is reported".into()
            }
        ),
        ExactStop::Killed => format!("{backend} overran its time limit and was killed{kept}"),
        ExactStop::Completed if r.status == ExactStatus::Optimal => {
            format!("{backend}: optimal (proof completed){kept}")
        }
        ExactStop::Completed => format!("{backend}: completed"),
        ExactStop::TimeLimit if r.status == ExactStatus::Optimal => format!(
            "{backend}: time limit, optimal (meets the {} bound){kept}",
            bound_name(&r.bounds, &r.bound_source)
        ),
        ExactStop::TimeLimit => format!("{backend}: time limit{kept}"),
    }
}

/// The name of `gap`'s exact row: the method whose schedule it is (`None`: no row, the
/// schedule is the warm start's, already a row).
fn exact_row_name(r: &ExactReport) -> Option<String> {
    match r.stop {
        ExactStop::NotAttempted => None,
        ExactStop::WindowSearch => Some(elk_solver::lns::LNS_METHOD.into()),
        ExactStop::WarmStartMeetsBound => Some("warm-start".into()),
        _ => Some(format!("exact-{}", r.backend.name())),
    }
}

fn summary(
    inst: &Instance,
    r: &ExactReport,
    warm: Option<(&str, Cycles)>,
    no_timings: bool,
) -> ExactSummary {
    ExactSummary {
        instance: inst.name.clone(),
        backend: r.backend.name(),
        status: r.status,
        stop: r.stop,
        ran: what_ran(inst, r, warm),
        makespan_cycles: r.makespan_cycles,
        makespan_ms: r.makespan_cycles.map(|t| inst.ms(t)),
        lower_bound_cycles: r.lower_bound_cycles,
        bound_source: r.bound_source.clone(),
        gap_pct: r.gap_pct,
        solve_s: (!no_timings).then_some(r.solve_s),
        model: ModelJson::from(&r.model),
        warm_start: warm.map(|w| w.0.to_string()),
        from_warm_start: r.from_warm_start,
        bounds: r.bounds.clone(),
        notes: r.notes.clone(),
        phases: (!no_timings).then(|| {
            r.phases
                .iter()
                .map(|p| PhaseJson {
                    what: p.what.clone(),
                    wall_s: p.seconds,
                })
                .collect()
        }),
        search: r
            .search
            .as_ref()
            .map(|s| SearchJson::new(inst, s, no_timings)),
    }
}

/// `solve --exact`.
pub fn solve(
    source: &InstanceSource,
    flags: &ExactFlags,
    output: Option<&PathBuf>,
    no_timings: bool,
    json: bool,
) -> anyhow::Result<()> {
    check_flags(flags)?;
    let (inst, build_s) = source.load()?;
    let progress = ExactProgress::start(if flags.no_warm_start {
        "exact solve"
    } else {
        "heuristics (the warm start)"
    });
    let warm = if flags.no_warm_start {
        None
    } else {
        heuristics_shown(&inst, &progress)?.1
    };
    let warm_is = warm.as_ref().map(|s| (s.method.clone(), s.makespan_cycles));
    let report = run_exact(&inst, flags, warm, &progress)?;
    progress.finish();
    if let (Some(path), Some(s)) = (output, &report.schedule) {
        super::output::write_schedule(path, &inst, s)?;
    }
    let warm_is = warm_is.as_ref().map(|(n, t)| (n.as_str(), *t));
    let sum = summary(&inst, &report, warm_is, no_timings);
    if json {
        let config = Config {
            source: source.config(),
            exact: flags.config(),
            output: output.map(PathBuf::as_path),
            no_timings,
        };
        return super::print_json("solve-exact", &config, &sum);
    }
    println!("{} — exact ({})", inst.name, sum.backend);
    println!(
        "status: {}",
        status_word(
            sum.status,
            sum.stop,
            sum.search.as_ref().map(|s| s.stop),
            sum.gap_pct,
            &bound_name(&sum.bounds, &sum.bound_source)
        )
    );
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
        ExactStop::NotAttempted | ExactStop::WindowSearch => {
            println!("model: not built (too large; see the note)")
        }
        ExactStop::Killed => println!("model: size unknown (the worker was killed)"),
        ExactStop::WarmStartMeetsBound => {
            println!("model: not built (the warm start meets the lower bound)")
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
                None if sum.stop == ExactStop::WarmStartMeetsBound =>
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
    Ok(())
}

/// The status in words: what was proven, and why the solve stopped.
fn status_word(
    s: ExactStatus,
    stop: ExactStop,
    search: Option<LnsStop>,
    gap: Option<f64>,
    bound: &str,
) -> String {
    let gap = gap.map_or("no schedule".into(), |g| format!("gap {g:.3} %"));
    match (s, stop) {
        (ExactStatus::Optimal, ExactStop::Completed) => "optimal".into(),
        (ExactStatus::Optimal, _) => format!("optimal (meets the {bound} bound)"),
        (ExactStatus::Infeasible, _) => "infeasible (proven: no schedule fits)".into(),
        (_, ExactStop::WindowSearch) if search == Some(LnsStop::TimeLimit) => format!(
            "time limit in the window search ({gap} against the {bound} bound; the whole-model MILP is too large to build)"
        ),
        (_, ExactStop::WindowSearch) if search == Some(LnsStop::Converged) => format!(
            "window search converged: no window improves ({gap} against the {bound} bound; the whole-model MILP is too large to build)"
        ),
        (_, ExactStop::NotAttempted | ExactStop::WindowSearch) => format!(
            "not attempted (model too large; {gap} against the bound; cut it with --layers/--ops or --window)"
        ),
        (_, ExactStop::Killed) => format!("time limit, worker killed ({gap})"),
        (ExactStatus::Feasible, _) => format!("time limit ({gap})"),
        (ExactStatus::Unknown, _) => "time limit (no schedule found)".into(),
    }
}

/// The bound that certified an optimum: its source, which after a proof reads "optimum", is
/// then the best bound other than the schedule itself.
fn bound_name(b: &Bounds, source: &str) -> String {
    if source != "optimum" {
        return source.to_string();
    }
    let roof = b.roofline_best();
    let candidates = [
        (b.lp_cycles, "LP relaxation"),
        (b.segment_cycles, "segment relaxation"),
        (b.backend_cycles, "backend dual"),
    ];
    candidates
        .iter()
        .filter_map(|(v, name)| v.filter(|&v| v > roof).map(|v| (v, *name)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or("roofline", |(_, name)| name)
        .to_string()
}

/// One row of `gap`.
#[derive(Serialize)]
struct GapRow {
    method: String,
    makespan_cycles: Option<Cycles>,
    makespan_ms: Option<f64>,
    /// 100·(T − reference)/reference.
    gap_pct: Option<f64>,
    /// The reference is a proven optimum, so the gap is exact; otherwise it is a proven lower
    /// bound and the gap a certified upper bound on the true one.
    reference_is_optimum: bool,
    compile_s: Option<f64>,
    /// The exact row only: what ran to find its schedule (the summary's `ran`).
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
}

/// `gap` output.
#[derive(Serialize)]
pub(super) struct GapReport {
    instance: String,
    reference: &'static str,
    reference_cycles: Cycles,
    exact: ExactSummary,
    rows: Vec<GapRow>,
    ideal_cycles: Option<Cycles>,
}

impl GapReport {
    /// The exact solve's status in words ([`status_word`]).
    pub(super) fn status(&self) -> String {
        let e = &self.exact;
        status_word(
            e.status,
            e.stop,
            e.search.as_ref().map(|s| s.stop),
            e.gap_pct,
            &bound_name(&e.bounds, &e.bound_source),
        )
    }

    /// The proven optimum or the best proven lower bound the gaps are measured against.
    pub(super) fn reference_cycles(&self) -> Cycles {
        self.reference_cycles
    }

    /// Seconds the exact solve took (`None` with `--no-timings`).
    pub(super) fn solve_s(&self) -> Option<f64> {
        self.exact.solve_s
    }

    /// The reference is a proven optimum (else a lower bound).
    pub(super) fn reference_is_optimum(&self) -> bool {
        self.reference == "optimum"
    }

    /// The heuristic the solve was warm-started from.
    pub(super) fn warm_start(&self) -> Option<&str> {
        self.exact.warm_start.as_deref()
    }
}

/// `gap`.
pub fn gap(a: GapArgs) -> anyhow::Result<()> {
    check_flags(&a.exact)?;
    let loaded = a.source.load_full()?;
    let inst = loaded.instance;
    let out = gap_report(&inst, &a.exact, a.timings.no_timings)?;
    if a.json {
        let config = Config {
            source: a.source.config(),
            exact: a.exact.config(),
            output: None,
            no_timings: a.timings.no_timings,
        };
        return super::print_json("gap", &config, &out);
    }
    if a.csv {
        print_gap_csv(&inst, loaded.chip.as_ref(), &out);
        return Ok(());
    }
    println!("{}", super::solve::header(&inst, loaded.chip.as_ref()));
    print_gap(&inst, &out, "--time-limit");
    Ok(())
}

/// Every heuristic, then the exact backend warm-started from the best of them, on `inst`,
/// with each one's gap to the optimum (or to the best proven bound): `gap`, and the layer
/// section of `compare --layer-exact`.
pub(super) fn gap_report(
    inst: &Instance,
    flags: &ExactFlags,
    no_timings: bool,
) -> anyhow::Result<GapReport> {
    let progress = ExactProgress::start("heuristics");
    let (heuristic_rows, best) = heuristics_shown(inst, &progress)?;
    let warm = if flags.no_warm_start { None } else { best };
    let warm_is = warm.as_ref().map(|s| (s.method.clone(), s.makespan_cycles));
    let warm_is = warm_is.as_ref().map(|(n, t)| (n.as_str(), *t));
    let report = run_exact(inst, flags, warm, &progress)?;
    progress.finish();
    let mut rows: Vec<GapRow> = heuristic_rows
        .into_iter()
        .map(|row| GapRow {
            method: row.method,
            makespan_cycles: row.makespan_cycles,
            makespan_ms: row.makespan_ms,
            gap_pct: None,
            reference_is_optimum: false,
            compile_s: if no_timings { None } else { row.compile_s },
            status: None,
        })
        .collect();
    let reference = report.gap_reference();
    let certified = reference.optimum;
    let reference = reference.cycles;
    // The best schedule the exact part found is a row, named for what found it (not
    // attempted, it would only repeat the warm start).
    if let Some(method) = exact_row_name(&report) {
        rows.push(GapRow {
            method,
            makespan_cycles: report.makespan_cycles,
            makespan_ms: report.makespan_cycles.map(|t| inst.ms(t)),
            gap_pct: None,
            reference_is_optimum: certified,
            compile_s: if no_timings {
                None
            } else {
                Some(report.solve_s)
            },
            status: Some(what_ran(inst, &report, warm_is)),
        });
    }
    for r in &mut rows {
        r.gap_pct = r.makespan_cycles.and_then(|t| gap_pct(t, reference));
        r.reference_is_optimum = certified;
    }
    Ok(GapReport {
        instance: inst.name.clone(),
        reference: if certified { "optimum" } else { "lower bound" },
        reference_cycles: reference,
        exact: summary(inst, &report, warm_is, no_timings),
        rows,
        ideal_cycles: elk_heuristics::ideal(inst).cycles,
    })
}

/// `gap --csv`: every row with the reference it is measured against.
fn print_gap_csv(inst: &Instance, chip: Option<&super::chip_choice::Chip>, out: &GapReport) {
    use super::output::{csv_number as num, csv_row_head};
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
                out.exact.bound_source.clone(),
                num(r.compile_s),
                r.status.clone().unwrap_or_default(),
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
        ],
        &rows,
    );
}

/// The body of `gap`'s table: the reference, every row with its gap, Ideal, the legend.
pub(super) fn print_gap(inst: &Instance, out: &GapReport, limit_flag: &str) {
    let reference = out.reference_cycles;
    println!(
        "reference: {} = {} = {:.6} ms ({}; exact status {})",
        out.reference,
        reference,
        inst.ms(reference),
        out.exact.bound_source,
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
            "ideal (Elk's figure, not a bound): {:.6} ms, {ideal_vs:+.3} % vs the {}",
            inst.ms(ideal),
            out.reference
        );
    }
    println!(
        "gap % = 100·(makespan − reference)/reference: exact against an optimum; '≤' marks a certified upper bound on the gap, measured against a proven lower bound"
    );
    if out.rows.iter().any(|r| r.method.ends_with(RETIME_SUFFIX)) {
        println!("{}", super::method_rows::RETIME_LEGEND);
    }
    // How the whole-model bound was reached, and when it improved.
    let segment_notes: Vec<&String> = out
        .exact
        .notes
        .iter()
        .filter(|n| n.starts_with("segment relaxation"))
        .collect();
    for n in &segment_notes {
        println!("{n}");
    }
    if out.exact.bounds.segment_cycles.is_some() {
        println!("μ: the price the segment relaxation puts on one cycle of load work moved across a layer boundary; every price gives a valid bound and the best is kept (docs/exact.md, \"Whole models\")");
    }
    if let Some(hint) = stronger_bound(out, limit_flag) {
        println!("{hint}");
    }
}

/// Where a stronger reference than `out`'s would come from, when one may exist: the line
/// under `gap`'s table that says a proven lower bound is not the last word.
fn stronger_bound(out: &GapReport, limit_flag: &str) -> Option<String> {
    let e = &out.exact;
    if out.reference == "optimum" {
        return None;
    }
    let time_limited = matches!(e.stop, ExactStop::TimeLimit | ExactStop::Killed)
        || e.search
            .as_ref()
            .is_some_and(|s| s.stop == LnsStop::TimeLimit);
    let mut ways = Vec::new();
    // Only the segment relaxation's LP flavour is cheap enough to be the default.
    if e.bound_source == "segment relaxation" && e.notes.iter().any(|n| n.contains(", LP each,")) {
        ways.push("`--whole-model-bound milp` (MILP dual bounds per segment, slower)");
    }
    let longer = format!("a longer {limit_flag}");
    if time_limited {
        ways.push(&longer);
    }
    (!ways.is_empty()).then(|| {
        format!(
            "a stronger bound may exist: the {} bound is the best proven within this run; try {}",
            e.bound_source,
            ways.join(" or ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optimum_proven_by_a_bound_names_the_bound() {
        let b = Bounds {
            prefix_cycles: Cycles(100.0),
            lp_cycles: Some(Cycles(120.0)),
            ..Bounds::default()
        };
        let word = status_word(
            ExactStatus::Optimal,
            ExactStop::TimeLimit,
            None,
            Some(0.0),
            &bound_name(&b, "optimum"),
        );
        assert_eq!(word, "optimal (meets the LP relaxation bound)");
        let roof = Bounds {
            prefix_cycles: Cycles(100.0),
            ..Bounds::default()
        };
        assert_eq!(bound_name(&roof, "optimum"), "roofline");
        assert_eq!(
            status_word(
                ExactStatus::Feasible,
                ExactStop::TimeLimit,
                None,
                Some(2.5),
                "x"
            ),
            "time limit (gap 2.500 %)"
        );
        assert!(status_word(
            ExactStatus::Unknown,
            ExactStop::NotAttempted,
            None,
            Some(1.0),
            "x"
        )
        .starts_with("not attempted (model too large"));
    }
}
