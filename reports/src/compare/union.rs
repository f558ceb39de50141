//! `--expert-parallel`'s schedule space (docs/core-groups.md, CG-5): the instance with
//! parallel sets and the one without. A set makes one stage of its members, whose weights must
//! all be resident before it runs, so neither instance's schedules contain the other's; their
//! union does. Each method keeps the faster of its two schedules, and the lower of the two
//! certified bounds bounds them both, so the flag never makes a row slower.

use super::{fill_ratios, CompareReport, Row};

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
