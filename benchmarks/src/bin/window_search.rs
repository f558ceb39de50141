//! The whole-model window search (`elk_solver::lns`) from a schedule file: each improvement
//! with its time, and the gap to a bound when one is given. A `--timings` report for issue 15
//! item 5.
//!
//! `cargo run --release -p elk-benchmarks --bin window_search -- INSTANCE SCHEDULE
//! [--time-limit S] [--window-ops N] [--earlier STAGES] [--max-nodes N] [--bound-ms B] [-o OUT]
//! [--relaxed-options MU] [--queue R]`
//! (`--relaxed-options MU`: start instead from the queue schedule of the options the segment
//! relaxation picks at price MU, `elk_solver::segments::relaxation_options`; `--queue R`: queue
//! re-timing with R refinements first, `elk_solver::requeue`)
#![allow(clippy::unwrap_used)] // a benchmark that cannot load its input should stop loudly

use elk_solver::lns::{improve, LnsOptions};
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let inst = Instance::read(std::path::Path::new(&args[1])).unwrap();
    let text = std::fs::read_to_string(&args[2]).unwrap();
    let mut input = Schedule::from_json(&args[2], &text).unwrap();
    if let Some(price) = value("--relaxed-options").map(|v| v.parse::<f64>().unwrap()) {
        let t = std::time::Instant::now();
        let options = elk_solver::segments::relaxation_options(
            &inst,
            price,
            std::time::Duration::from_secs(120),
        )
        .unwrap()
        .unwrap();
        let q = elk_solver::queue_for_options(
            &inst,
            options,
            "relaxed",
            3,
            std::time::Duration::from_secs(60),
        )
        .unwrap();
        println!(
            "relaxation's options (μ = {price}): queue {:.4} ms, {} LPs, {:.1} s, rejected {:?}",
            inst.ms(q.makespan_cycles),
            q.lps,
            t.elapsed().as_secs_f64(),
            q.rejected
        );
        input = q.schedule;
    }
    if let Some(refinements) = value("--queue").map(|v| v.parse().unwrap()) {
        let t = std::time::Instant::now();
        let q = elk_solver::requeue(
            &inst,
            &input,
            "queue",
            refinements,
            std::time::Duration::from_secs(60),
        )
        .unwrap();
        println!(
            "queue re-timing: {:.4} → {:.4} ms, {} LPs, {:.1} s, rejected {:?}",
            inst.ms(q.input_cycles),
            inst.ms(q.makespan_cycles),
            q.lps,
            t.elapsed().as_secs_f64(),
            q.rejected
        );
        input = q.schedule;
    }
    let defaults = LnsOptions::default();
    let opts = LnsOptions {
        window_ops: value("--window-ops").map(|v| v.parse().unwrap()),
        time_limit: std::time::Duration::from_secs_f64(
            value("--time-limit").map_or(60.0, |v| v.parse().unwrap()),
        ),
        earlier_stages: value("--earlier").map(|v| v.parse().unwrap()),
        max_nodes: value("--max-nodes").map_or(defaults.max_nodes, |v| v.parse().unwrap()),
        ..defaults
    };
    let bound_ms: Option<f64> = value("--bound-ms").map(|v| v.parse().unwrap());
    let gap = |ms: f64| {
        bound_ms.map_or(String::new(), |b| {
            format!(", gap ≤ {:.2} %", 100.0 * (ms / b - 1.0))
        })
    };
    let found = improve(&inst, &input, &opts, &|step| {
        eprintln!(
            "sweep {} window {}/{} ops {}..{} · {:.1} s · incumbent {:.4} ms",
            step.sweep,
            step.window,
            step.windows,
            step.ops.start,
            step.ops.end,
            step.elapsed_s,
            inst.ms(step.incumbent)
        );
    })
    .unwrap();
    if let Some(out) = value("-o") {
        std::fs::write(out, found.schedule.to_json().unwrap()).unwrap();
    }
    let r = found.summary;
    let input_ms = inst.ms(r.input_cycles);
    println!("{}: input {:.4} ms{}", inst.name, input_ms, gap(input_ms));
    for i in &r.improvements {
        let ms = inst.ms(i.makespan_cycles);
        println!("{:.1} s {:.4} ms{} ({})", i.at_s, ms, gap(ms), i.by);
    }
    let ms = inst.ms(r.makespan_cycles);
    println!(
        "best {:.4} ms{} · {:?} after {} sweep(s), {} windows ({} proven), {} rejected, {:.1} s; largest window model {} columns ({} binary), {} rows",
        ms,
        gap(ms),
        r.stop,
        r.sweeps,
        r.windows_solved,
        r.windows_optimal,
        r.rejected.len(),
        r.seconds,
        r.window_columns,
        r.window_binaries,
        r.window_rows
    );
    for line in &r.rejected {
        println!("rejected: {line}");
    }
    for line in &r.disagreements {
        println!("disagrees: {line}");
    }
}
