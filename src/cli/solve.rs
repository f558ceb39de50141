//! `elk-opt solve` and `elk-opt compare`: heuristic methods on an instance built from a graph
//! and a chip (or read from a file), judged by the simulator.

use super::instance_source::InstanceSource;
use clap::{Args, ValueEnum};
use elk_heuristics::{ideal, Basic, ElkDyn, ElkFull, StaticSplit};
use elk_model::instance::Instance;
use elk_model::method::{Budget, Method, Outcome};
use elk_sim::trace::ChromeTrace;
use elk_sim::{evaluate_with, validate, Evaluation};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// The heuristic methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodName {
    /// Double buffering.
    Basic,
    /// One SRAM split for all operators.
    Static,
    /// Elk's inductive scheduling with cost-aware allocation.
    ElkDyn,
    /// Elk-Dyn over preload-order permutations.
    ElkFull,
    /// Elk's Ideal figure (not a schedule).
    Ideal,
}

impl MethodName {
    pub(super) fn method(self) -> &'static dyn Method {
        match self {
            MethodName::Ideal => unreachable_ideal(),
            MethodName::Basic => &Basic,
            MethodName::Static => &StaticSplit,
            MethodName::ElkDyn => &ElkDyn,
            MethodName::ElkFull => &ELK_FULL,
        }
    }
}

/// Ideal is handled before `method()` is called; this keeps the match total.
fn unreachable_ideal() -> &'static dyn Method {
    &Basic
}

static ELK_FULL: ElkFull = ElkFull {
    max_displacement: 4,
    max_orders: 128,
};

/// `solve` arguments.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// The heuristic method.
    #[arg(
        long,
        value_enum,
        required_unless_present = "exact",
        conflicts_with = "exact"
    )]
    method: Option<MethodName>,
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

#[derive(Serialize)]
pub(super) struct Row {
    pub(super) method: String,
    pub(super) status: String,
    pub(super) makespan_cycles: Option<f64>,
    pub(super) makespan_ms: Option<f64>,
    pub(super) speedup_vs_basic: Option<f64>,
    pub(super) pct_of_ideal: Option<f64>,
    pub(super) hbm_util: Option<f64>,
    pub(super) noc_util: Option<f64>,
    pub(super) tflops: Option<f64>,
    pub(super) compile_s: Option<f64>,
    pub(super) notes: Vec<String>,
}

/// `--no-timings`: leave wall-clock times out of the output (for byte-identical reruns).
#[derive(Args, Debug, Clone, Copy)]
pub struct Timings {
    /// Print null instead of compile times, so two runs give byte-identical JSON.
    #[arg(long)]
    pub(super) no_timings: bool,
}

fn ideal_row(inst: &Instance, no_timings: bool) -> Row {
    let start = Instant::now();
    let report = ideal(inst);
    Row {
        method: "ideal".into(),
        status: "not a schedule, not a proven bound".into(),
        makespan_cycles: Some(report.cycles),
        makespan_ms: Some(inst.ms(report.cycles)),
        speedup_vs_basic: None,
        pct_of_ideal: Some(100.0),
        hbm_util: Some(report.hbm_cycles / report.cycles),
        noc_util: None,
        tflops: None,
        compile_s: (!no_timings).then(|| start.elapsed().as_secs_f64()),
        notes: vec![
            "Elk's definition: fastest option per operator, whole SRAM, loads never contend".into(),
        ],
    }
}

pub(super) fn run_method(
    inst: &Instance,
    m: &dyn Method,
) -> anyhow::Result<(Row, Option<(elk_model::schedule::Schedule, Evaluation)>)> {
    let start = Instant::now();
    let solved = m.schedule(inst, &Budget::default())?;
    let compile_s = start.elapsed().as_secs_f64();
    let mut row = Row {
        method: m.name().into(),
        status: "infeasible".into(),
        makespan_cycles: None,
        makespan_ms: None,
        speedup_vs_basic: None,
        pct_of_ideal: None,
        hbm_util: None,
        noc_util: None,
        tflops: None,
        compile_s: Some(compile_s),
        notes: solved.notes.clone(),
    };
    if let Outcome::Infeasible { reason } = &solved.outcome {
        row.notes.push(reason.clone());
    }
    let Some(s) = solved.outcome.schedule() else {
        return Ok((row, None));
    };
    let violations = validate(inst, s);
    if !violations.is_empty() {
        anyhow::bail!(
            "{} returned an invalid schedule: {}",
            m.name(),
            violations[0]
        );
    }
    let e = elk_sim::evaluate(inst, s);
    if (e.makespan_cycles - s.makespan_cycles).abs() > 1e-6 * e.makespan_cycles {
        row.notes.push(format!(
            "method's own estimate {:.1} cycles",
            s.makespan_cycles
        ));
    }
    row.status = "heuristic".into();
    row.makespan_cycles = Some(e.makespan_cycles);
    row.makespan_ms = Some(e.makespan_ms);
    row.hbm_util = Some(e.hbm_utilisation);
    row.noc_util = Some(e.noc_utilisation);
    row.tflops = e.tflops;
    Ok((row, Some((s.clone(), e))))
}

pub fn solve(a: SolveArgs) -> anyhow::Result<()> {
    let Some(method) = a.method.filter(|_| !a.exact) else {
        if a.trace.is_some() {
            return Err(elk_model::ModelError::Invalid(
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
    let (inst, build_s) = a.source.load()?;
    if method == MethodName::Ideal {
        if a.output.is_some() || a.trace.is_some() {
            return Err(elk_model::ModelError::Invalid(
                "--method ideal gives a figure, not a schedule: no -o or --trace".into(),
            )
            .into());
        }
        let row = ideal_row(&inst, a.timings.no_timings);
        if a.json {
            return super::print_json(&row);
        }
        println!(
            "{} — ideal (Elk's figure; not a schedule, not a proven bound)",
            inst.name
        );
        println!(
            "makespan: {:.1} cycles = {:.6} ms",
            row.makespan_cycles.unwrap_or(f64::NAN),
            row.makespan_ms.unwrap_or(f64::NAN)
        );
        return Ok(());
    }
    let spinner = super::progress::spinner(format!("{} on {}", method.method().name(), inst.name));
    let (mut row, result) = run_method(&inst, method.method())?;
    spinner.finish_and_clear();
    if a.timings.no_timings {
        row.compile_s = None;
    }
    if let Some((s, _)) = &result {
        if let Some(path) = &a.output {
            super::output::write_atomic(path, &s.to_json())?;
        }
        if let Some(path) = &a.trace {
            let mut trace = ChromeTrace::new(inst.clock_hz);
            evaluate_with(&inst, s, &mut trace);
            super::output::write_atomic(path, &trace.to_json())?;
        }
    }
    if a.json {
        return super::print_json(&row);
    }
    println!("{} — {}", inst.name, row.method);
    match (row.makespan_cycles, row.makespan_ms) {
        (Some(c), Some(ms)) => println!("makespan: {c:.1} cycles = {ms:.6} ms (simulated)"),
        _ => println!("no schedule"),
    }
    for n in &row.notes {
        println!("note: {n}");
    }
    if let Some(c) = row.compile_s {
        println!("instance built in {build_s:.3} s, method ran in {c:.3} s");
    }
    Ok(())
}

/// `compare` arguments.
#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    source: InstanceSource,
    #[command(flatten)]
    timings: Timings,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn compare(a: CompareArgs) -> anyhow::Result<()> {
    let (inst, build_s) = a.source.load()?;
    let mut rows = Vec::new();
    let methods = [
        MethodName::Basic,
        MethodName::Static,
        MethodName::ElkDyn,
        MethodName::ElkFull,
    ];
    let bar = super::progress::bar(methods.len() as u64, "methods");
    for m in methods {
        bar.set_message(m.method().name());
        let mut row = run_method(&inst, m.method())?.0;
        if a.timings.no_timings {
            row.compile_s = None;
        }
        rows.push(row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    rows.push(ideal_row(&inst, a.timings.no_timings));
    let ideal_cycles = rows[rows.len() - 1].makespan_cycles.unwrap_or(f64::NAN);
    let basic = rows[0].makespan_cycles;
    for r in &mut rows {
        if let (Some(b), Some(t)) = (basic, r.makespan_cycles) {
            r.speedup_vs_basic = Some(b / t);
            r.pct_of_ideal = Some(100.0 * ideal_cycles / t);
        }
    }
    if a.json {
        return super::print_json(&rows);
    }
    println!("{} (instance built in {build_s:.2} s)", inst.name);
    println!(
        "{:<8} {:>12} {:>9} {:>9} {:>8} {:>8} {:>9} {:>10}",
        "method", "makespan ms", "vs Basic", "% Ideal", "HBM %", "NoC %", "TFLOP/s", "compile s"
    );
    let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
    for r in &rows {
        println!(
            "{:<8} {:>12} {:>9} {:>9} {:>8} {:>8} {:>9} {:>10}",
            r.method,
            opt(r.makespan_ms, &|v| format!("{v:.4}")),
            opt(r.speedup_vs_basic, &|v| format!("{v:.3}x")),
            opt(r.pct_of_ideal, &|v| format!("{v:.1}")),
            opt(r.hbm_util, &|v| format!("{:.1}", 100.0 * v)),
            opt(r.noc_util, &|v| format!("{:.1}", 100.0 * v)),
            opt(r.tflops, &|v| format!("{v:.2}")),
            r.compile_s.map_or("-".to_string(), |c| format!("{c:.3}"))
        );
    }
    println!("ideal: Elk's figure (fastest option per operator with the whole SRAM, loads never contend) — not a schedule and not a proven bound");
    Ok(())
}
