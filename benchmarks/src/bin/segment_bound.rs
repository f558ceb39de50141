//! The whole-model segment bound (docs/exact.md, "Whole models") on an instance file, at
//! each price, with its roofline for comparison. A `--timings` report for the bound.
//!
//! `cargo run --release -p elk-benchmarks --bin segment_bound -- FILE [--layers-per-segment L]
//! [--lp] [--time-limit S] [--prices 0.5,0.8,1] [--coupled [--classes C]]` (`--coupled`: the
//! coupled LP of docs/exact.md, "The coupled relaxation", instead of the price search; `C`:
//! `exact` (one class per ν, the default), `lazy` (classes refined lazily from ν rounded down to
//! two decimals; `lazyD` from D decimals) or `D` (ν rounded down to D decimals, one LP, a
//! weaker bound); docs/exact.md, "Classes refined lazily"). `FILE --stage`: the stage
//! relaxation's LP instead (docs/exact.md, "The stage relaxation"; `--spread S` gives it ν
//! classes spanning S, e.g. 1.2; one class by default; `--queue` then also builds the
//! `stage-lp+queue` schedule of the LP's options and prints its makespan, docs/heuristics.md).
#![allow(clippy::unwrap_used)] // a benchmark that cannot load its input should stop loudly

use elk_solver::segments::{coupled_segment_bound_with, segment_bound, Classes, SegmentOptions};
use elk_stage::instance::Instance;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let inst = Instance::read(std::path::Path::new(&args[1])).unwrap();
    let opts = SegmentOptions {
        layers_per_segment: value("--layers-per-segment").map_or(1, |v| v.parse().unwrap()),
        prices: value("--prices").map_or(Vec::new(), |v| {
            v.split(',').map(|p| p.parse().unwrap()).collect()
        }),
        lp_only: args.iter().any(|a| a == "--lp"),
        time_limit: std::time::Duration::from_secs_f64(
            value("--time-limit").map_or(600.0, |v| v.parse().unwrap()),
        ),
        price_search: true,
        coupled: elk_solver::segments::CoupledLp::Solve,
    };
    let roof = elk_solver::bounds::roofline(&inst).best().get();
    println!(
        "{}: roofline {:.1} cycles = {:.4} ms",
        inst.name,
        roof,
        inst.ms(elk_stage::units::Cycles(roof))
    );
    if args.iter().any(|a| a == "--stage") {
        let start = std::time::Instant::now();
        // `--spread S`: ν classes spanning S (default `inf`: one class, as the commands use;
        // `elk_solver::bounds::CLASS_SPREAD` is the one measured beside it).
        let spread = value("--spread").map_or(f64::INFINITY, |v| v.parse().unwrap());
        let b = elk_solver::bounds::stage_bound_with(&inst, opts.time_limit, spread)
            .unwrap()
            .expect("the stage LP did not finish");
        println!(
            "stage: {} ν classes, {} columns, {} rows, {} iterations, {:.2} s\n\
             bound {:.1} cycles = {:.6} ms ({:+.2} % vs roofline)",
            b.classes,
            b.columns,
            b.rows,
            b.iterations,
            start.elapsed().as_secs_f64(),
            b.bound_cycles,
            inst.ms(elk_stage::units::Cycles(b.bound_cycles)),
            100.0 * (b.bound_cycles / roof - 1.0)
        );
        if args.iter().any(|a| a == "--queue") {
            let start = std::time::Instant::now();
            let options = elk_solver::bounds::stage_options_with(&inst, opts.time_limit, spread)
                .unwrap()
                .expect("the stage LP did not finish");
            let lp_s = start.elapsed().as_secs_f64();
            let q = elk_solver::queue_for_options(
                &inst,
                options,
                elk_solver::STAGE_QUEUE,
                elk_solver::REFINEMENTS,
                opts.time_limit,
            )
            .unwrap();
            let t = q.makespan_cycles.get();
            println!(
                "stage LP's options, queued: {t:.1} cycles = {:.6} ms ({:+.3} % vs the bound; LP {lp_s:.2} s, queue {:.2} s, {} LPs)",
                inst.ms(elk_stage::units::Cycles(t)),
                100.0 * (t / b.bound_cycles - 1.0),
                start.elapsed().as_secs_f64() - lp_s,
                q.lps
            );
        }
        return;
    }
    if args.iter().any(|a| a == "--coupled") {
        let classes = match value("--classes").map(String::as_str) {
            None | Some("exact") => Classes::Exact,
            Some("lazy") => Classes::LAZY,
            Some(d) if d.starts_with("lazy") => Classes::Lazy {
                start_digits: d[4..].parse().unwrap(),
            },
            Some(d) => Classes::Rounded(d.parse().unwrap()),
        };
        let Some(b) =
            coupled_segment_bound_with(&inst, opts.layers_per_segment, opts.time_limit, classes)
                .unwrap()
        else {
            println!("no coupled bound (fewer than two segments, or the LP did not finish)");
            return;
        };
        println!(
            "coupled: {} segments ({} distinct), {} ν classes, {} columns, {} rows, {} iterations, {:.1} s\n\
             bound {:.1} cycles = {:.4} ms ({:+.2} % vs roofline)",
            b.segments,
            b.distinct,
            b.classes,
            b.size.variables,
            b.size.constraints,
            b.iterations,
            b.seconds,
            b.bound_cycles,
            inst.ms(elk_stage::units::Cycles(b.bound_cycles)),
            100.0 * (b.bound_cycles / roof - 1.0),
        );
        println!(
            "| round | classes | columns | rows | iterations | s (lift check) | optimum ms | lifted |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---|");
        for (i, r) in b.rounds.iter().enumerate() {
            println!(
                "| {} | {} | {} | {} | {} | {:.1} ({:.1}) | {:.6} | {} |",
                i + 1,
                r.classes,
                r.size.variables,
                r.size.constraints,
                r.iterations,
                r.seconds,
                r.lift_seconds,
                inst.ms(elk_stage::units::Cycles(r.optimum_cycles)),
                r.proven
            );
        }
        return;
    }
    let Some(b) = segment_bound(&inst, &opts).unwrap() else {
        println!("no segment bound (fewer than two segments, or nothing finished in time)");
        return;
    };
    println!(
        "{} segments ({} distinct), {} layer(s) each, {}, {:.1} s",
        b.segments,
        b.distinct,
        b.layers_per_segment,
        if b.lp_only { "LP" } else { "MILP" },
        b.seconds
    );
    if let Some(c) = b.coupled_cycles {
        println!(
            "coupled LP (before the price search): {c:.1} cycles = {:.4} ms",
            inst.ms(elk_stage::units::Cycles(c))
        );
    }
    println!("| μ | bound cycles | bound ms | vs roofline | closed |");
    println!("|---|---|---|---|---|");
    for p in &b.prices {
        println!(
            "| {} | {:.1} | {:.4} | {:+.2} % | {} |",
            p.price,
            p.bound_cycles,
            inst.ms(elk_stage::units::Cycles(p.bound_cycles)),
            100.0 * (p.bound_cycles / roof - 1.0),
            p.closed
        );
    }
}
