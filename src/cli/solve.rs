//! `elk-opt solve` and `elk-opt compare`: heuristic methods on an instance built from a graph
//! and a chip (or read from a file), judged by the simulator.

use super::source::GraphSource;
use clap::{Args, ValueEnum};
use elk_heuristics::{ideal, Basic, ElkDyn, ElkFull, StaticSplit};
use elk_model::chip::ChipSpec;
use elk_model::instance::{build_instance, Instance, InstanceOptions};
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
}

impl MethodName {
    fn method(self) -> &'static dyn Method {
        match self {
            MethodName::Basic => &Basic,
            MethodName::Static => &StaticSplit,
            MethodName::ElkDyn => &ElkDyn,
            MethodName::ElkFull => &ELK_FULL,
        }
    }
}

static ELK_FULL: ElkFull = ElkFull {
    max_displacement: 4,
    max_orders: 128,
};

/// Where the instance comes from.
#[derive(Args, Debug)]
pub struct InstanceSource {
    /// Read this instance (elk-instance/1) instead of building one.
    #[arg(long, conflicts_with_all = ["model", "import"])]
    instance: Option<PathBuf>,
    #[command(flatten)]
    graph: GraphSource,
    /// Chip preset or TOML file.
    #[arg(long, default_value = "ipu-pod4")]
    chip: String,
    /// Override the chip's HBM bandwidth, TB/s (decimal).
    #[arg(long)]
    hbm_tbps: Option<f64>,
    /// Load-order policy of the built instance: free (Elk-Full may permute), fixed, or a
    /// maximum displacement D.
    #[arg(long, default_value = "free")]
    load_order: String,
}

impl InstanceSource {
    /// The instance and the seconds spent building it (plan tables).
    fn load(&self) -> anyhow::Result<(Instance, f64)> {
        let start = Instant::now();
        if let Some(path) = &self.instance {
            return Ok((Instance::read(path)?, start.elapsed().as_secs_f64()));
        }
        let mut chip = ChipSpec::load(&self.chip)?;
        if let Some(tbps) = self.hbm_tbps {
            if !(tbps.is_finite() && tbps > 0.0) {
                return Err(elk_model::ModelError::Invalid(format!(
                    "--hbm-tbps {tbps}: must be positive"
                ))
                .into());
            }
            chip.hbm.bandwidth_bytes_per_s = tbps * 1e12;
        }
        let graph = self.graph.load()?;
        let opts = InstanceOptions {
            load_order: elk_model::instance::LoadOrder::parse(&self.load_order)?,
            ..InstanceOptions::default()
        };
        let inst = build_instance(&graph, &chip, &opts)?;
        Ok((inst, start.elapsed().as_secs_f64()))
    }
}

/// `solve` arguments.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// The method.
    #[arg(long, value_enum)]
    method: MethodName,
    #[command(flatten)]
    source: InstanceSource,
    /// Write the schedule (elk-schedule/1).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Write a Chrome trace.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    method: String,
    status: String,
    makespan_cycles: Option<f64>,
    makespan_ms: Option<f64>,
    speedup_vs_basic: Option<f64>,
    pct_of_ideal: Option<f64>,
    hbm_util: Option<f64>,
    noc_util: Option<f64>,
    tflops: Option<f64>,
    compile_s: f64,
    notes: Vec<String>,
}

fn run_method(
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
        compile_s,
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
    let (inst, build_s) = a.source.load()?;
    let (row, result) = run_method(&inst, a.method.method())?;
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
    println!(
        "instance built in {build_s:.3} s, method ran in {:.3} s",
        row.compile_s
    );
    Ok(())
}

/// `compare` arguments.
#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    source: InstanceSource,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn compare(a: CompareArgs) -> anyhow::Result<()> {
    let (inst, build_s) = a.source.load()?;
    let mut rows = Vec::new();
    for m in [
        MethodName::Basic,
        MethodName::Static,
        MethodName::ElkDyn,
        MethodName::ElkFull,
    ] {
        rows.push(run_method(&inst, m.method())?.0);
    }
    let start = Instant::now();
    let ideal_report = ideal(&inst);
    let ideal_cycles = ideal_report.cycles;
    rows.push(Row {
        method: "ideal".into(),
        status: "not a schedule, not a proven bound".into(),
        makespan_cycles: Some(ideal_cycles),
        makespan_ms: Some(inst.ms(ideal_cycles)),
        speedup_vs_basic: None,
        pct_of_ideal: None,
        hbm_util: Some(ideal_report.hbm_cycles / ideal_cycles),
        noc_util: None,
        tflops: None,
        compile_s: start.elapsed().as_secs_f64(),
        notes: vec![
            "Elk's definition: fastest option per operator, whole SRAM, loads never contend".into(),
        ],
    });
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
            "{:<8} {:>12} {:>9} {:>9} {:>8} {:>8} {:>9} {:>10.3}",
            r.method,
            opt(r.makespan_ms, &|v| format!("{v:.4}")),
            opt(r.speedup_vs_basic, &|v| format!("{v:.3}x")),
            opt(r.pct_of_ideal, &|v| format!("{v:.1}")),
            opt(r.hbm_util, &|v| format!("{:.1}", 100.0 * v)),
            opt(r.noc_util, &|v| format!("{:.1}", 100.0 * v)),
            opt(r.tflops, &|v| format!("{v:.2}")),
            r.compile_s
        );
    }
    println!("ideal: Elk's figure (fastest option per operator with the whole SRAM, loads never contend) — not a schedule and not a proven bound");
    Ok(())
}
