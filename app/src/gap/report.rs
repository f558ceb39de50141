//! The gap's run: every heuristic, then the exact backend warm-started from the best of them
//! ([`run_exact`]), and each one's distance from the optimum or the best proven lower bound
//! ([`gap_report`], [`GapReport`]); `solve --exact`'s results ([`solve_exact`]).

use super::first_bound::{coupled_first, coupled_share, stage_first, CoupledStatus};
use super::settings::{ExactSettings, GapStep};
use super::summary::{exact_row_name, summary, what_ran, ExactSummary, UnionPart};
use crate::compare::{all_heuristics, Row};
use elk_solver::{gap_pct, BoundSource, ExactReport, WorkerCommand};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, MethodError};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;
use std::time::Instant;

/// Runs the exact backend described by `settings` on `inst` (in `worker`, with a hard limit,
/// or in this process), warm-started from `warm`, through the same
/// [`elk_stage::method::Method`] road as every method, its phases told to `progress`. On a
/// model too large for the backend the stage relaxation comes first, then on a
/// chain of layers the coupled segment LP ([`super::COUPLED_SHARE_WHOLE_MODEL`],
/// [`super::COUPLED_SHARE_WITH_BACKEND`]; from the bound
/// cache when it holds it), so the exact part holds the bound every other command reports,
/// a killed worker included.
pub fn run_exact(
    inst: &Instance,
    settings: &ExactSettings,
    warm: Option<Schedule>,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<(ExactReport, CoupledStatus), MethodError> {
    let started = Instant::now();
    let limit_s = settings.time_limit_s;
    let stage = stage_first(inst, settings, warm.as_ref(), progress)?;
    let first = coupled_first(inst, settings, warm.as_ref(), progress)?;
    // Under a work budget the coupled LP may take the whole limit; the exact part still gets
    // a tenth as its hard stop (what time cuts is reported as not reproducible).
    let floor_s = (1.0 - coupled_share(inst, settings)).max(0.1) * limit_s;
    let left_s = (limit_s - started.elapsed().as_secs_f64()).max(floor_s);
    let exact = settings.method(warm, (first.given, stage.bound), worker);
    // The limit the backend really has: what the coupled LP left of --time-limit.
    let limit = if left_s < limit_s - 0.05 {
        format!("{left_s:.1} s of the {limit_s} s")
    } else {
        format!("{limit_s} s")
    };
    let label = format!("exact {} (limit {limit})", exact.options.backend.name());
    progress(GapStep::Starting { label: &label });
    let mut report = exact.report_with(inst, &Budget::seconds(left_s), &|e| {
        progress(GapStep::Exact {
            label: &label,
            event: e,
        })
    })?;
    for phase in [first.phase, stage.phase].into_iter().flatten() {
        report.solve_s += phase.seconds;
        report.phases.insert(0, phase);
    }
    report.notes.extend(stage.note);
    report.notes.extend(first.note);
    if let (Some(work), CoupledStatus::Unfinished { .. }) = (report.work.as_mut(), first.how) {
        work.cut_by_time = true;
    }
    Ok((report, first.how))
}

/// Every heuristic on `inst` (their rows and the best schedule), each told to `progress`.
fn heuristics_told(
    inst: &Instance,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<(Vec<Row>, Option<Schedule>), MethodError> {
    all_heuristics(inst, &|k, n, name| {
        progress(GapStep::Heuristic { k, n, name })
    })
}

/// `solve --exact`: the heuristics (unless the settings turn the warm start off), then the
/// exact backend warm-started from the best of them; the summary `--json` prints and the
/// schedule found, if any.
pub fn solve_exact(
    inst: &Instance,
    settings: &ExactSettings,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<(ExactSummary, Option<Schedule>), MethodError> {
    let warm = if settings.warm_start {
        heuristics_told(inst, progress)?.1
    } else {
        None
    };
    let warm_is = warm.as_ref().map(|s| (s.method.clone(), s.makespan_cycles));
    let (report, coupled) = run_exact(inst, settings, warm, worker, progress)?;
    let warm_is = warm_is.as_ref().map(|(n, t)| (n.as_str(), *t));
    let sum = summary(inst, &report, coupled, warm_is, no_timings);
    Ok((sum, report.schedule))
}

/// One row of `gap`.
#[derive(Serialize, Clone)]
pub struct GapRow {
    /// The method (the exact part's row: `exact-milp`, `window-search`, `warm-start`).
    pub method: String,
    /// The simulator's makespan.
    pub makespan_cycles: Option<Cycles>,
    /// The same in milliseconds.
    pub makespan_ms: Option<f64>,
    /// 100·(T − reference)/reference.
    pub gap_pct: Option<f64>,
    /// The reference is a proven optimum, so the gap is exact; otherwise it is a proven lower
    /// bound and the gap a certified upper bound on the true one.
    pub reference_is_optimum: bool,
    /// Seconds the method ran (`None` with `--no-timings`).
    pub compile_s: Option<f64>,
    /// The exact row only: what ran to find its schedule (the summary's `ran`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `--expert-parallel`: whether the row's schedule is of the instance with parallel sets
    /// (`false`: the one without was faster, [`super::gap_union`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_sets: Option<bool>,
    /// A heuristic's first stage, ms (the compare row's, not in `--json`).
    #[serde(skip)]
    pub first_stage_ms: Option<f64>,
}

/// What a gap is measured against: written `optimum` or `lower bound` in `--json`.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapReference {
    /// A proven optimum: the gaps are exact.
    #[serde(rename = "optimum")]
    Optimum,
    /// A proven lower bound: each gap is a certified upper bound on the true one.
    #[serde(rename = "lower bound")]
    LowerBound,
}

impl GapReference {
    /// The optimum when `proven`, else the lower bound.
    pub fn of(proven: bool) -> GapReference {
        if proven {
            GapReference::Optimum
        } else {
            GapReference::LowerBound
        }
    }
}

impl std::fmt::Display for GapReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GapReference::Optimum => "optimum",
            GapReference::LowerBound => "lower bound",
        })
    }
}

/// `gap --json`'s results.
#[derive(Serialize)]
pub struct GapReport {
    /// The instance's name.
    pub instance: String,
    /// What the gaps are measured against.
    pub reference: GapReference,
    /// Its value.
    pub reference_cycles: Cycles,
    /// The exact solve.
    pub exact: ExactSummary,
    /// Every heuristic, then the exact part's schedule.
    pub rows: Vec<GapRow>,
    /// Elk's Ideal figure (not a bound).
    pub ideal_cycles: Option<Cycles>,
    /// `--expert-parallel` ([`super::gap_union`]): which instance `exact` and the last row are of,
    /// the union's reference, and the other instance's exact solve; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub union: Option<UnionPart>,
    /// The best schedule the exact part ends with (its optimum, the window search's result or
    /// the warm start), for `gap -o`; not in `--json`, which has its numbers.
    #[serde(skip)]
    pub schedule: Option<Schedule>,
    /// `rows` ends with the exact part's row (after the heuristics'); not in `--json`.
    #[serde(skip)]
    pub exact_row: bool,
}

impl GapReport {
    /// The exact solve's status in words ([`super::status_word`]).
    pub fn status(&self) -> String {
        self.exact.status_word()
    }

    /// The reference is a proven optimum (else a lower bound).
    pub fn reference_is_optimum(&self) -> bool {
        self.reference == GapReference::Optimum
    }

    /// What proved the reference: the exact part's bound source, or with `--expert-parallel`
    /// the other instance's when the reference is its ([`UnionPart::bound_parallel_sets`]).
    pub fn bound_source(&self) -> BoundSource {
        match &self.union {
            Some(u) if u.bound_parallel_sets != u.parallel_sets => u.other.bound_source,
            _ => self.exact.bound_source,
        }
    }
}

/// Every heuristic, then the exact backend warm-started from the best of them, on `inst`,
/// with each one's gap to the optimum (or to the best proven bound): `gap`, and the layer
/// section of `compare --layer-exact`. The exact part runs in `worker` (`None`: in this
/// process, where HiGHS may overrun the limit).
pub fn gap_report(
    inst: &Instance,
    settings: &ExactSettings,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<GapReport, MethodError> {
    let (heuristic_rows, best) = heuristics_told(inst, progress)?;
    let warm = if settings.warm_start { best } else { None };
    let warm_is = warm.as_ref().map(|s| (s.method.clone(), s.makespan_cycles));
    let warm_is = warm_is.as_ref().map(|(n, t)| (n.as_str(), *t));
    let (report, coupled) = run_exact(inst, settings, warm, worker, progress)?;
    let heuristics = heuristic_rows.len();
    let mut rows: Vec<GapRow> = heuristic_rows
        .into_iter()
        .map(|row| GapRow {
            method: row.method,
            makespan_cycles: row.makespan_cycles,
            makespan_ms: row.makespan_ms,
            gap_pct: None,
            reference_is_optimum: false,
            compile_s: if no_timings { None } else { row.compile_s },
            // A heuristic without a schedule says why (`compare::row_of` notes the reason
            // last).
            status: row
                .makespan_cycles
                .is_none()
                .then(|| match row.notes.last() {
                    Some(why) => format!("{}: {why}", row.status),
                    None => row.status.to_string(),
                }),
            parallel_sets: None,
            first_stage_ms: row.first_stage_ms,
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
            parallel_sets: None,
            first_stage_ms: None,
        });
    }
    let exact_row = rows.len() > heuristics;
    for r in &mut rows {
        r.gap_pct = r.makespan_cycles.and_then(|t| gap_pct(t, reference));
        r.reference_is_optimum = certified;
    }
    Ok(GapReport {
        instance: inst.name.clone(),
        reference: GapReference::of(certified),
        reference_cycles: reference,
        exact: summary(inst, &report, coupled, warm_is, no_timings),
        rows,
        ideal_cycles: elk_heuristics::ideal(inst).cycles,
        union: None,
        schedule: report.schedule,
        exact_row,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heuristic_without_a_schedule_says_why() {
        let inst = elk_stage::corpus::no_schedule_fits();
        let report =
            gap_report(&inst, &ExactSettings::milp_within(5.0), true, None, &|_| {}).unwrap();
        let status = |m: &str| {
            let row = report.rows.iter().find(|r| r.method == m).unwrap();
            row.status.clone().unwrap_or_default()
        };
        assert!(
            status("basic").starts_with("no schedule found: "),
            "{}",
            status("basic")
        );
        assert_eq!(
            status("elk-dyn-greedy"),
            "no schedule found: operator a (stage 1) fits in no option beside 50 B per core of \
             cold data (1 load that must be resident by then)"
        );
    }
}
