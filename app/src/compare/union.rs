//! `--expert-parallel`'s schedule space (docs/core-groups.md, CG-5): the instance with
//! parallel sets and the one without. A set makes one stage of its members, whose weights must
//! all be resident before it runs, so neither instance's schedules contain the other's; their
//! union does. Each method keeps the faster of its two schedules, and the lower of the two
//! certified bounds bounds them both, so the flag never makes a row slower. `solve --method`
//! keeps its method's faster schedule the same way ([`solve_union`]).

use super::rows::{fill_ratios, ideal_row, run_method, CompareReport, Row};
use elk_sim::Evaluation;
use elk_stage::instance::Instance;
use elk_stage::method::{Method, MethodError};
use elk_stage::schedule::Schedule;

/// The rows of `with_sets` and `without` (on the instances built with and without parallel
/// sets; `without` has no row of a method that only searches sets' group sizes, whose
/// schedule there is its method's, [`elk_heuristics::without_sets`]) merged: each row the
/// faster schedule
/// (the one without sets on a tie), marked with `parallel_sets`; Ideal the smaller figure;
/// the bound the lower one (with that instance's roofline), and every ratio and gap measured
/// again. The rest (instance name, chip) is `with_sets`'s; warnings and notes are both
/// reports', each once, those of one instance only saying which, and a note
/// names the methods with no schedule with sets.
pub fn union(with_sets: CompareReport, without: CompareReport) -> CompareReport {
    let bound_from_sets = with_sets.bound_cycles <= without.bound_cycles;
    let CompareReport {
        methods: with_rows,
        warnings,
        notes,
        ..
    } = with_sets.clone();
    let warnings = merged(&warnings, &without.warnings);
    let mut notes = merged(&notes, &without.notes);
    let pairs = paired(with_rows, &without.methods);
    let none_with: Vec<&str> = pairs
        .iter()
        .filter(|(a, b)| {
            a.method != "ideal"
                && a.makespan_cycles.is_none()
                && b.as_ref().is_some_and(|b| b.makespan_cycles.is_some())
        })
        .map(|(a, _)| a.method.as_str())
        .collect();
    if !none_with.is_empty() {
        notes.push(format!(
            "the instance with parallel sets has no schedule of {}: their rows are of the \
             instance without (a set's load must fit beside the loads resident around it; \
             docs/core-groups.md, CG-5)",
            none_with.join(", ")
        ));
    }
    let mut rows: Vec<Row> = pairs
        .into_iter()
        .map(|(mut a, b)| match b {
            Some(b) => faster(a, b),
            // Not run without sets (a method list of its own): the row with sets.
            None => {
                a.parallel_sets = Some(true);
                a
            }
        })
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

/// A method's row, of `compare` or `gap`.
pub(crate) trait MethodRow: Clone {
    /// The method's name.
    fn method(&self) -> &str;
    /// Names it `name`.
    fn rename(&mut self, name: &str);
}

impl MethodRow for Row {
    fn method(&self) -> &str {
        &self.method
    }

    fn rename(&mut self, name: &str) {
        self.method = name.into();
    }
}

/// Each row of the instance with sets with its method's row of the instance without: its
/// own, or, for a method that only searches sets' group sizes (not run without sets), the
/// row of the method it is there ([`elk_heuristics::without_sets`]), renamed; `None` when
/// `without` has neither.
pub(crate) fn paired<R: MethodRow>(with_sets: Vec<R>, without: &[R]) -> Vec<(R, Option<R>)> {
    let of = |name: &str| without.iter().find(|b| b.method() == name).cloned();
    with_sets
        .into_iter()
        .map(|a| {
            let b = of(a.method()).or_else(|| {
                let mut b = of(elk_heuristics::without_sets(a.method())?)?;
                b.rename(a.method());
                Some(b)
            });
            (a, b)
        })
        .collect()
}

/// The faster of one method's rows with parallel sets (`a`) and without (`b`), marked; the
/// one without on a tie. Ideal (not a schedule) is marked too: its figure is the instance's.
/// The warnings (or notes) of the two instances: one said of both once, as it is; one said of
/// one instance only, saying which (it may be about a schedule the union did not keep).
fn merged(with_sets: &[String], without: &[String]) -> Vec<String> {
    let tagged = |said: &[String], other: &[String], which: &str| -> Vec<String> {
        said.iter()
            .map(|s| match other.contains(s) {
                true => s.clone(),
                false => format!("{which} parallel sets: {s}"),
            })
            .collect::<Vec<_>>()
    };
    let mut out = tagged(with_sets, without, "with");
    for s in tagged(without, with_sets, "without") {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::merged;

    #[test]
    fn a_note_of_one_instance_says_which_and_one_of_both_is_said_once() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            merged(&s(&["both", "a"]), &s(&["b", "both"])),
            s(&["both", "with parallel sets: a", "without parallel sets: b"])
        );
        assert!(merged(&[], &[]).is_empty());
    }
}
