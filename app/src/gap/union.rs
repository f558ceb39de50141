//! `gap --expert-parallel` and `solve --exact --expert-parallel`: the union of the instances
//! with and without parallel sets (docs/core-groups.md, CG-5), as `compare`'s
//! ([`crate::compare::union()`]). Each instance gets the whole gap (heuristics, then the exact
//! part within the whole time limit); each method keeps its faster schedule, the exact part
//! the faster of its two, and the union's reference is the lower of the two instances'.
//!
//! *Why the lower reference bounds the union.* Each instance's reference r lies at or below
//! its own optimum (it is that optimum or a proven lower bound), and the union's optimum is the
//! smaller of the two optima, so min(r_with, r_without) ≤ min(OPT_with, OPT_without). It is
//! the union's optimum when it is a proven optimum: then the other instance's optimum lies at
//! or above the other reference, hence at or above it.

use super::report::{gap_report, solve_exact, GapReference, GapReport, GapRow};
use super::settings::{ExactSettings, GapStep};
use super::summary::{ExactSummary, UnionPart};
use crate::compare::{paired, MethodRow};
use elk_solver::{gap_pct, WorkerCommand};
use elk_stage::instance::Instance;
use elk_stage::method::{MethodError, Verdict};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;

// `UnionPart` is defined with the other JSON shapes in `gap/summary.rs`; its constructor
// is the union's.
impl UnionPart {
    /// The union of `kept` (the faster exact result, of the instance with parallel sets when
    /// `kept_sets`) and `other`.
    fn new(kept: &ExactSummary, other: ExactSummary, kept_sets: bool) -> UnionPart {
        let (rk, ok) = reference(kept);
        let (ro, oo) = reference(&other);
        // The lower reference; on a tie the one that is an optimum, else the kept one's.
        let from_kept = rk < ro || (rk == ro && (ok || !oo));
        let (bound, optimal) = if from_kept { (rk, ok) } else { (ro, oo) };
        UnionPart {
            parallel_sets: kept_sets,
            lower_bound_cycles: bound,
            bound_parallel_sets: from_kept == kept_sets,
            optimal,
            gap_pct: kept.makespan_cycles.and_then(|t| gap_pct(t, bound)),
            other,
        }
    }
}

/// An exact solve's reference, as [`elk_solver::ExactReport::gap_reference`] reads it: the
/// optimum when proven (with a schedule), else the best proven lower bound; and whether it is
/// the optimum.
fn reference(s: &ExactSummary) -> (Cycles, bool) {
    match (s.status, s.makespan_cycles) {
        (Verdict::Optimal, Some(t)) => (t, true),
        _ => (s.lower_bound_cycles, false),
    }
}

/// `a` (with parallel sets) is strictly faster than `b` (without): the one without is kept on
/// a tie, as in `compare`.
fn sets_faster(a: Option<Cycles>, b: Option<Cycles>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x < y,
        (Some(_), None) => true,
        _ => false,
    }
}

/// [`gap_report`] on `with_sets` and on `without` (in that order, each within the whole time
/// limit, each told to `progress` with `true` for the instance with sets), and their union:
/// each heuristic's faster row, marked with `parallel_sets`; the exact part's faster result
/// (its summary `exact`, its row last, its schedule) with the other's in `union.other`; the
/// reference the lower of the two; every gap measured against it. The name is `with_sets`'.
pub fn gap_union(
    with_sets: &Instance,
    without: &Instance,
    settings: &ExactSettings,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(bool, GapStep<'_>),
) -> Result<GapReport, MethodError> {
    let a = gap_report(with_sets, settings, no_timings, worker.clone(), &|s| {
        progress(true, s)
    })?;
    let b = gap_report(without, settings, no_timings, worker, &|s| {
        progress(false, s)
    })?;
    Ok(union(a, b))
}

/// The heuristics' rows and the exact part's row (if any) of `report`.
fn split(report_rows: Vec<GapRow>, exact_row: bool) -> (Vec<GapRow>, Option<GapRow>) {
    let mut rows = report_rows;
    let exact = if exact_row { rows.pop() } else { None };
    (rows, exact)
}

impl MethodRow for GapRow {
    fn method(&self) -> &str {
        &self.method
    }

    fn rename(&mut self, name: &str) {
        self.method = name.into();
    }
}

/// The union of two gap reports ([`gap_union`]): the same methods, but a method that only
/// searches sets' group sizes, paired with the row of the method it is without sets.
fn union(with_sets: GapReport, without: GapReport) -> GapReport {
    let kept_sets = sets_faster(
        with_sets.exact.makespan_cycles,
        without.exact.makespan_cycles,
    );
    let (heuristics_a, exact_a) = split(with_sets.rows, with_sets.exact_row);
    let (heuristics_b, exact_b) = split(without.rows, without.exact_row);
    let mut rows: Vec<GapRow> = paired(heuristics_a, &heuristics_b)
        .into_iter()
        .map(|(a, b)| {
            // A row without its pair (none today) is the instance with sets'.
            let a_faster = b
                .as_ref()
                .is_none_or(|b| sets_faster(a.makespan_cycles, b.makespan_cycles));
            let mut row = match b {
                Some(b) if !a_faster => b,
                _ => a,
            };
            row.parallel_sets = Some(a_faster);
            row
        })
        .collect();
    let (kept, other, exact_row, schedule) = if kept_sets {
        (with_sets.exact, without.exact, exact_a, with_sets.schedule)
    } else {
        (without.exact, with_sets.exact, exact_b, without.schedule)
    };
    // The exact part's row is the kept result's, so the last row stays the schedule `-o`
    // writes.
    let has_exact_row = exact_row.is_some();
    if let Some(mut row) = exact_row {
        row.parallel_sets = Some(kept_sets);
        rows.push(row);
    }
    let part = UnionPart::new(&kept, other, kept_sets);
    for r in &mut rows {
        r.gap_pct = r
            .makespan_cycles
            .and_then(|t| gap_pct(t, part.lower_bound_cycles));
        r.reference_is_optimum = part.optimal;
    }
    let ideal_cycles = match (with_sets.ideal_cycles, without.ideal_cycles) {
        (Some(x), Some(y)) => Some(if x < y { x } else { y }),
        (x, y) => x.or(y),
    };
    GapReport {
        instance: with_sets.instance,
        reference: GapReference::of(part.optimal),
        reference_cycles: part.lower_bound_cycles,
        exact: kept,
        rows,
        ideal_cycles,
        union: Some(part),
        schedule,
        exact_row: has_exact_row,
    }
}

/// `solve --exact --expert-parallel`'s results: the faster exact result of the two instances
/// (its summary, flattened as `solve --exact --json` prints one) and the union's part.
#[derive(Serialize)]
pub struct ExactUnion {
    /// The kept instance's exact solve.
    #[serde(flatten)]
    pub kept: ExactSummary,
    /// Which instance it is of, the union's reference, the other instance's solve.
    pub union: UnionPart,
    /// The kept schedule (`solve -o`); not in `--json`.
    #[serde(skip)]
    pub schedule: Option<Schedule>,
}

/// [`solve_exact`] on `with_sets` and on `without` (in that order, each within the whole time
/// limit, each told to `progress` with `true` for the instance with sets), and the faster of
/// the two results (the one without sets on a tie) with the union's reference.
pub fn solve_exact_union(
    with_sets: &Instance,
    without: &Instance,
    settings: &ExactSettings,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(bool, GapStep<'_>),
) -> Result<ExactUnion, MethodError> {
    let (sa, a) = solve_exact(with_sets, settings, no_timings, worker.clone(), &|s| {
        progress(true, s)
    })?;
    let (sb, b) = solve_exact(without, settings, no_timings, worker, &|s| {
        progress(false, s)
    })?;
    let kept_sets = sets_faster(sa.makespan_cycles, sb.makespan_cycles);
    let (kept, other, schedule) = if kept_sets { (sa, sb, a) } else { (sb, sa, b) };
    let union = UnionPart::new(&kept, other, kept_sets);
    Ok(ExactUnion {
        kept,
        union,
        schedule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gap::{ExactSettings, GapReport};
    use elk_stage::corpus::{random_instance, RandomSpec};

    fn gap(inst: &Instance) -> GapReport {
        gap_report(inst, &ExactSettings::milp_within(5.0), true, None, &|_| {}).unwrap()
    }

    /// Two unrelated random instances stand for the two sides: whichever is faster per row
    /// is kept, the reference is the lower one, and the exact part's row is the kept one's.
    #[test]
    fn the_union_keeps_each_rows_faster_schedule_and_the_lower_reference() {
        let a = random_instance(7, &RandomSpec::tiny(5, 2));
        let b = random_instance(11, &RandomSpec::tiny(5, 2));
        let (ga, gb) = (gap(&a), gap(&b));
        let (ra, rb) = (ga.reference_cycles, gb.reference_cycles);
        let rows: Vec<_> = ga
            .rows
            .iter()
            .zip(&gb.rows)
            .map(|(x, y)| (x.makespan_cycles, y.makespan_cycles))
            .collect();
        let (ea, eb) = (ga.exact.makespan_cycles, gb.exact.makespan_cycles);
        let u = union(ga, gb);
        let part = u.union.as_ref().unwrap();
        assert_eq!(u.reference_cycles, if ra <= rb { ra } else { rb });
        assert_eq!(part.lower_bound_cycles, u.reference_cycles);
        assert_eq!(part.parallel_sets, sets_faster(ea, eb));
        for (r, (x, y)) in u.rows.iter().zip(rows) {
            let best = match (x, y) {
                (Some(x), Some(y)) => Some(if x < y { x } else { y }),
                (x, y) => x.or(y),
            };
            assert_eq!(r.makespan_cycles, best, "{}", r.method);
            assert!(r.parallel_sets.is_some());
            if let Some(t) = r.makespan_cycles {
                assert!(t >= u.reference_cycles, "{} below the reference", r.method);
            }
        }
        let last = u.rows.last().unwrap();
        assert_eq!(last.makespan_cycles, u.exact.makespan_cycles);
        assert_eq!(
            u.schedule.as_ref().map(|s| s.makespan_cycles),
            u.exact.makespan_cycles
        );
    }

    #[test]
    fn the_lower_reference_is_an_optimum_only_when_its_own_instance_proved_it() {
        let summary = |status: Verdict, makespan: f64, bound: f64| -> ExactSummary {
            let mut s = solve_exact(
                &random_instance(7, &RandomSpec::tiny(3, 1)),
                &ExactSettings::milp_within(5.0),
                true,
                None,
                &|_| {},
            )
            .unwrap()
            .0;
            s.status = status;
            s.makespan_cycles = Some(Cycles(makespan));
            s.lower_bound_cycles = Cycles(bound);
            s
        };
        // Kept: proven optimal at 100; the other's bound 90 lies below: a lower bound only.
        let p = UnionPart::new(
            &summary(Verdict::Optimal, 100.0, 100.0),
            summary(Verdict::Feasible, 120.0, 90.0),
            true,
        );
        assert_eq!(
            (p.lower_bound_cycles, p.optimal, p.bound_parallel_sets),
            (Cycles(90.0), false, false)
        );
        // The other's bound 105 lies above the kept optimum: that optimum is the union's.
        let p = UnionPart::new(
            &summary(Verdict::Optimal, 100.0, 100.0),
            summary(Verdict::Feasible, 120.0, 105.0),
            false,
        );
        assert_eq!(
            (p.lower_bound_cycles, p.optimal, p.bound_parallel_sets),
            (Cycles(100.0), true, false)
        );
        assert_eq!(p.gap_pct, Some(0.0));
    }
}
