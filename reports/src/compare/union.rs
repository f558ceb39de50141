//! `--expert-parallel`'s schedule space (docs/core-groups.md, CG-5): the instance with
//! parallel sets and the one without. A set makes one stage of its members, whose weights must
//! all be resident before it runs, so neither instance's schedules contain the other's; their
//! union does. Each method keeps the faster of its two schedules, and the lower of the two
//! certified bounds bounds them both, so the flag never makes a row slower. `solve --method`
//! keeps its method's faster schedule the same way ([`solve_union`]).

use super::{fill_ratios, ideal_row, run_method, CompareReport, Row};
use elk_sim::Evaluation;
use elk_stage::instance::Instance;
use elk_stage::method::{Method, MethodError};
use elk_stage::schedule::Schedule;

/// The rows of `with_sets` and `without` (the same methods in the same order, on the
/// instances built with and without parallel sets) merged: each row the faster schedule
/// (the one without sets on a tie), marked with `parallel_sets`; Ideal the smaller figure;
/// the bound the lower one (with that instance's roofline), and every ratio and gap measured
/// again. The rest (instance name, chip) is `with_sets`'s; warnings and notes are both
/// reports', each once (a note may be about the instance whose row was not kept).
pub fn union(with_sets: CompareReport, without: CompareReport) -> CompareReport {
    let bound_from_sets = with_sets.bound_cycles <= without.bound_cycles;
    let CompareReport {
        methods: with_rows,
        mut warnings,
        mut notes,
        ..
    } = with_sets.clone();
    for w in &without.warnings {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    for n in &without.notes {
        if !notes.contains(n) {
            notes.push(n.clone());
        }
    }
    let mut rows: Vec<Row> = with_rows
        .into_iter()
        .zip(without.methods.iter().cloned())
        .map(|(a, b)| faster(a, b))
        .collect();
    // The bound and its roofline parts from one instance, the one with the lower bound, so
    // the footer's parts and `bound_source` describe the bound printed.
    let bounded = if bound_from_sets {
        &with_sets
    } else {
        &without
    };
    fill_ratios(&mut rows, bounded.bound_cycles);
    CompareReport {
        warnings,
        notes,
        bound_ms: bounded.bound_ms,
        bound_source: bounded.bound_source,
        bound_cycles: bounded.bound_cycles,
        roofline_bound_ms: bounded.roofline_bound_ms,
        roofline: bounded.roofline,
        methods: rows,
        ..with_sets
    }
}

/// The faster of one method's rows with parallel sets (`a`) and without (`b`), marked; the
/// one without on a tie. Ideal (not a schedule) is marked too: its figure is the instance's.
fn faster(a: Row, b: Row) -> Row {
    debug_assert_eq!(a.method, b.method);
    let a_faster = match (a.makespan_cycles, b.makespan_cycles) {
        (Some(x), Some(y)) => x < y,
        (Some(_), None) => true,
        _ => false,
    };
    let mut row = if a_faster { a } else { b };
    row.parallel_sets = Some(a_faster);
    row
}

/// `solve --method M --expert-parallel`: `m` run and judged on `with_sets` and on `without`,
/// and the faster of the two (the one without sets on a tie), its row marked with
/// `parallel_sets`; with the schedule and evaluation of that row's instance.
pub fn solve_union(
    with_sets: &Instance,
    without: &Instance,
    m: &dyn Method,
) -> Result<(Row, Option<(Schedule, Evaluation)>), MethodError> {
    let a = run_method(with_sets, m)?;
    let b = run_method(without, m)?;
    let (a_row, a_result) = a;
    let (b_row, b_result) = b;
    let row = faster(a_row, b_row);
    let result = if row.parallel_sets == Some(true) {
        a_result
    } else {
        b_result
    };
    Ok((row, result))
}

/// `solve --method ideal --expert-parallel`: the smaller of the two instances' Ideal figures,
/// marked as [`union()`] marks its Ideal row.
pub fn ideal_union(with_sets: &Instance, without: &Instance, no_timings: bool) -> Row {
    faster(
        ideal_row(with_sets, no_timings),
        ideal_row(without, no_timings),
    )
}
