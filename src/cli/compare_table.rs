//! `elk-opt compare`'s text table and CSV: one row per method (makespan, gap to the
//! certified bound, speedup over Basic, share of Ideal, HBM and NoC busy shares, TFLOP/s,
//! compile time), the legends, and what the bound is and how to tighten it.

use super::chip_choice::Chip;
use super::method_rows::{RETIME_LEGEND, STAGE_QUEUE_LEGEND};
use super::solve::header;
use elk_app::bound::{Coupled, Staged, COUPLED_LIMIT, STAGE_MAX_OPERATORS};
use elk_app::compare::{CompareReport, RowStatus};
use elk_app::request::BoundChoice;
use elk_solver::segments::SegmentBound;
use elk_solver::BoundSource;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;

/// The methods' table as CSV (every number in its unit's column, the bound on every row).
pub fn print_csv(inst: &Instance, chip: Option<&Chip>, report: &CompareReport) {
    let (rows, bound_ms, bound_source) = (&report.methods, report.bound_ms, &report.bound_source);
    use super::output::{csv_flag, csv_number as num, csv_row_head};
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
                r.status.to_string(),
                r.notes.join("; "),
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
            "parallel_sets",
        ],
        &rows,
    );
}

/// The header (with the routing of an MoE graph), the warnings, one row per method and the
/// legends.
pub fn print_text(
    inst: &Instance,
    chip: Option<&Chip>,
    (routing, rules): (Option<&str>, &str),
    report: &CompareReport,
    build_s: f64,
    no_timings: bool,
) {
    let (rows, warnings, notes) = (&report.methods, &report.warnings, &report.notes);
    let routing = routing.map_or(String::new(), |r| format!(", {r} routing"));
    if no_timings {
        println!("{}{routing}{rules}", header(inst, chip));
    } else {
        println!(
            "{}{routing}{rules} (instance built in {build_s:.2} s)",
            header(inst, chip)
        );
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
            None if r.status == RowStatus::Infeasible => "infeasible".to_string(),
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
    println!("{STAGE_QUEUE_LEGEND}");
    println!("ideal: Elk's figure (fastest option per operator with the whole SRAM, loads never contend) — not a schedule and not a proven bound");
    println!("{}", ideal_pct_legend(report));
    println!("HBM % / NoC %: the share of the makespan the HBM / the NoC is busy");
    if let Some(legend) = parallel_sets_legend(rows) {
        println!("{legend}");
    }
    print_reader_counts(report);
}

/// With `--dram-readers auto`, every count tried and which count each row's schedule is of.
fn print_reader_counts(report: &CompareReport) {
    if report.dram_reader_counts.is_empty() {
        return;
    }
    println!(
        "\n--dram-readers auto: each method's fastest schedule over the counts of DRAM-reader \
         cores, the lowest of their bounds (docs/chips.md, \"DRAM-reader cores\"):"
    );
    println!(
        "{:>8} {:>14} {:>10} {:>14} {:>12} {:>12}",
        "readers", "compute cores", "DRAM GB/s", "best method", "best ms", "bound ms"
    );
    for c in &report.dram_reader_counts {
        println!(
            "{:>8} {:>14} {:>10.1} {:>14} {:>12} {:>12.4}",
            c.readers,
            c.compute_cores,
            c.dram_gb_per_s,
            c.best_method.as_deref().unwrap_or("none"),
            c.best_ms.map_or("-".to_string(), |t| format!("{t:.4}")),
            c.bound_ms
        );
    }
    let rows: Vec<String> = report
        .methods
        .iter()
        .filter(|r| r.method != "ideal")
        .filter_map(|r| Some(format!("{} {}", r.method, r.dram_readers?)))
        .collect();
    println!("readers of each row's schedule: {}", rows.join(", "));
    let best = report
        .best()
        .and_then(|r| r.makespan_ms)
        .unwrap_or(f64::INFINITY);
    let ruled_out: Vec<String> = report
        .dram_reader_counts
        .iter()
        .filter(|c| c.bound_ms > best)
        .map(|c| format!("{} ({:.4} ms)", c.readers, c.bound_ms))
        .collect();
    if !ruled_out.is_empty() {
        println!(
            "certified: no schedule with {} reader cores can match the best one ({best:.4} ms): \
             their bounds are above it",
            ruled_out.join(" or ")
        );
    }
}

/// With `--expert-parallel`, which rows' schedules ran with parallel sets and which without
/// (faster there); `None` without the flag.
fn parallel_sets_legend(rows: &[elk_app::compare::Row]) -> Option<String> {
    let marked: Vec<(&str, bool)> = rows
        .iter()
        .filter(|r| r.method != "ideal" && r.makespan_ms.is_some())
        .filter_map(|r| r.parallel_sets.map(|p| (r.method.as_str(), p)))
        .collect();
    if marked.is_empty() && rows.iter().all(|r| r.parallel_sets.is_none()) {
        return None;
    }
    let without: Vec<&str> = marked.iter().filter(|m| !m.1).map(|m| m.0).collect();
    let which = if without.is_empty() {
        "every schedule above has them".to_string()
    } else {
        format!(
            "run without them (faster there, or no schedule with them: see the notes): {}",
            without.join(", ")
        )
    };
    Some(format!(
        "--expert-parallel: each method's faster schedule of the instance with parallel sets and the one without, the lower bound of the two (docs/core-groups.md); {which}"
    ))
}

/// What `% Ideal` is relative to, and, when Ideal lies below the certified bound by enough to
/// show at the table's precision (0.1 %), that no schedule reaches 100. (Closer, a row may
/// print 100.0: Ideal and the best schedule can meet the bound to the last float bits.)
fn ideal_pct_legend(report: &CompareReport) -> String {
    let legend = "% Ideal: 100 · Ideal's makespan / the method's, a share of Elk's figure, not a distance to the optimum (that is gap ≤ %)";
    let ideal = report
        .methods
        .iter()
        .find(|r| r.method == "ideal")
        .and_then(|r| r.makespan_ms);
    match ideal {
        Some(i) if 100.0 * (report.bound_ms - i) / report.bound_ms >= 0.05 => format!(
            "{legend}; here Ideal is {:.1} % below the certified lower bound {:.4} ms, so no schedule reaches 100",
            100.0 * (report.bound_ms - i) / report.bound_ms,
            report.bound_ms
        ),
        _ => legend.to_string(),
    }
}

/// What the gaps are measured against (the coupled segment LP, the stage relaxation or the
/// roofline, with its parts) and, when a stronger certified bound may exist, how to get it:
/// `segment` is the coupled LP's result with `--bound segment`; otherwise (`asked`), the
/// bound cache's entry if it holds one, else `None`; `stage` the stage relaxation's LP with
/// `--bound stage` (the default) or `segment`. Only a bound the user did not ask for is said
/// to come from the cache: `--bound segment` prints the same bytes whether it solved the LP
/// or read it.
pub fn print_bound(
    inst: &Instance,
    report: &CompareReport,
    (segment, stage): (Option<&Coupled>, Option<&Staged>),
    asked: BoundChoice,
) {
    let roof = report.roofline;
    let parts = format!(
        "HBM {:.4}, execution {:.4}, prefix {:.4} ms",
        inst.ms(roof.hbm_cycles),
        inst.ms(roof.exec_cycles),
        inst.ms(roof.prefix_cycles)
    );
    let prefix = "prefix: the best cut of the chain into a head, whose stages must hold the loads up to the cut (HBM or NoC time) or its executions, and a tail executed at full speed";
    let found = segment.and_then(|c| c.bound.as_ref());
    let roof_lower = format!(
        "  the roofline bound is lower: {:.4} ms ({parts}); {prefix}",
        inst.ms(roof.best())
    );
    match (found, report.bound_source) {
        (Some(s), BoundSource::SegmentRelaxation) => {
            let coupled = s.coupled_cycles.is_some_and(|c| c >= s.bound_cycles);
            println!(
                "gap ≤ %: against the certified segment relaxation lower bound {:.4} ms ({}, {} segments; docs/exact.md, \"Whole models\"), so at least that close to the optimum",
                report.bound_ms,
                if coupled {
                    "one LP over the distinct layers in which the load work moved across layer boundaries balances per NoC-per-HBM ratio"
                } else {
                    "one LP per distinct layer at the best price"
                },
                s.segments
            );
            if let Some(cycles) = stage.and_then(|s| s.cycles()) {
                println!(
                    "  the stage relaxation is lower: {:.4} ms",
                    inst.ms(Cycles(cycles))
                );
            }
            println!("{roof_lower}");
            if asked != BoundChoice::Segment && segment.is_some_and(|c| c.cached) {
                println!(
                    "  the segment bound was read from the bound cache, where an earlier `--bound segment`, `gap` or sweep on this instance kept it (`--no-cache`: without it)"
                );
            }
        }
        (_, BoundSource::StageRelaxation) => {
            println!(
                "gap ≤ %: against the certified stage relaxation lower bound {:.4} ms (one LP over the stages: each pays the most of its HBM work, its execution and its NoC, with the load work moved to earlier stages and held in SRAM; docs/exact.md, \"The stage relaxation\"), so at least that close to the optimum{}",
                report.bound_ms,
                segment_why(segment, found, inst)
            );
            println!("{roof_lower}");
        }
        _ => {
            let mut why = segment_why(segment, found, inst);
            match stage {
                Some(Staged::Solved(b)) => why.push_str(&format!(
                    "; the stage relaxation gives no more here ({:.4} ms)",
                    inst.ms(Cycles(b.bound_cycles))
                )),
                Some(other) => why.push_str(&format!("; {}", other.missing().unwrap_or_default())),
                None => {}
            }
            println!(
                "gap ≤ %: against the certified roofline lower bound {:.4} ms ({parts}), so at least that close to the optimum{why}",
                report.bound_ms,
            );
            println!("  {prefix}");
        }
    }
    for hint in stronger_bounds(inst, segment, asked) {
        println!("  {hint}");
    }
}

/// Why the segment relaxation is not the bound, when it was asked for or cached (empty
/// otherwise): unfinished, no stronger, or not applicable.
fn segment_why(segment: Option<&Coupled>, found: Option<&SegmentBound>, inst: &Instance) -> String {
    match (segment, found) {
        (Some(c), _) if c.unfinished => format!(
            "; the coupled segment LP did not finish within {} s",
            COUPLED_LIMIT.as_secs()
        ),
        (Some(_), Some(s)) => format!(
            "; the segment relaxation gives no more here ({:.4} ms)",
            inst.ms(Cycles(s.bound_cycles))
        ),
        (Some(_), None) => {
            "; the segment relaxation does not apply here (fewer than two layers)".into()
        }
        (None, _) => String::new(),
    }
}

/// How a stronger certified bound than `compare`'s may be had, when one may: under
/// `--bound roofline`, the stage relaxation (the default) where the instance is within its
/// operator rule; then the coupled segment LP (`--bound segment`) where it was not asked for
/// and applies, else `gap`'s exact part (the MILP's dual bound or an optimum on an instance it
/// can build; segment MILP dual bounds on a model too large for it). The times quoted are
/// docs/exact.md's measurements, so a reader can judge the wait before asking.
fn stronger_bounds(inst: &Instance, segment: Option<&Coupled>, asked: BoundChoice) -> Vec<String> {
    let mut hints = Vec::new();
    if asked == BoundChoice::Roofline && inst.ops.len() <= STAGE_MAX_OPERATORS {
        hints.push(
            "a stronger bound may come from `--bound stage`, the default (the stage relaxation: one LP over the stages, 0.4 s on Llama2-13B, 6–15 s on an MoE model; docs/exact.md, \"The stage relaxation\")"
                .to_string(),
        );
    }
    let layered = inst.layers().layers >= 2;
    let next = if segment.is_some_and(|c| c.unfinished) {
        Some(
            "a stronger bound may come from the coupled segment LP with more time (it needs more than 60 s on a loaded host): `elk-opt gap --time-limit S` gives it 90 % of S on a model too large for the MILP (25 % beside a MILP) and keeps it in the bound cache, where `compare` then reads it"
                .to_string(),
        )
    } else if layered && segment.is_none() {
        Some(
            "a stronger bound may come from `--bound segment` (the coupled segment LP that `gap`, sweeps with `bound = true` and the main job use: 13–16 s on Llama2-13B, more than its 60-s limit on an MoE model such as OLMoE-1B-7B; then kept in the bound cache; docs/exact.md, \"Whole models\")"
                .to_string(),
        )
    } else if !elk_solver::too_large(inst, elk_solver::Backend::Milp) {
        Some("a stronger bound may come from `elk-opt gap` (the MILP: its dual bound, or the optimum; it adds its schedule as a row)".to_string())
    } else {
        layered.then(|| {
            "a stronger bound may come from `elk-opt gap --whole-model-bound milp` (segment MILP dual bounds, minutes); `elk-opt gap` adds the window search's schedule as a row".to_string()
        })
    };
    hints.extend(next);
    hints
}
