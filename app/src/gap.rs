//! The certified gap, shared by the CLI's `gap`, `solve --exact` and `compare --layer-exact`
//! and by the Python package: every heuristic, then the exact backend warm-started from the
//! best of them, and each one's distance from the optimum (or from the best proven lower
//! bound). [`gap_report`] is the whole of `elk-opt gap --json`'s results and [`solve_exact`]
//! those of `solve --exact --json`, so the CLI and Python's `gap()`/`solve(exact=True)` are
//! one computation; the callers only say where the worker process runs ([`WorkerCommand`]:
//! the CLI's own `exact-worker`, Python's interpreter) and show the progress.
//!
//! The summary's JSON shapes and words are in `gap/summary.rs`, the coupled segment LP that
//! comes first in `gap/first_bound.rs`, and the union of two instances in `gap/union.rs`.
//!
//! ```
//! use elk_app::gap::{gap_report, ExactSettings};
//! let inst = elk_stage::corpus::random_instance(7, &elk_stage::corpus::RandomSpec::tiny(4, 2));
//! // In this process (no worker), the MILP within 5 s.
//! let report = gap_report(&inst, &ExactSettings::milp_within(5.0), true, None, &|_| {}).unwrap();
//! assert_eq!(report.rows[0].method, "basic");
//! // Every gap is measured against the same reference, and none is negative.
//! assert!(report.rows.iter().all(|r| r.gap_pct.is_none_or(|g| g >= -1e-9)));
//! ```

use crate::bound::BoundCache;
use crate::compare::{all_heuristics, Row};
use elk_solver::milp::Linearisation;
use elk_solver::segments::CoupledLp;
use elk_solver::{
    gap_pct, Backend, BoundSource, Exact, ExactEvent, ExactOptions, ExactReport, WholeModelBound,
    WholeModelSearch, WorkerCommand,
};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, MethodError};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;
use std::time::{Duration, Instant};

mod first_bound;
mod summary;
mod union;

use first_bound::{coupled_first, coupled_share};
pub use first_bound::{CoupledStatus, COUPLED_SHARE_WHOLE_MODEL, COUPLED_SHARE_WITH_BACKEND};
pub use summary::{
    bound_name, status_word, ExactSummary, ImprovementJson, ModelJson, OptionsKept, PhaseJson,
    SearchJson,
};
use summary::{exact_row_name, summary, what_ran};
pub use union::{gap_union, solve_exact_union, ExactUnion, UnionPart};

/// Seconds after the time limit before the worker is killed.
pub const WORKER_GRACE: Duration = Duration::from_millis(1000);

/// The exact solver's settings: the flags of `solve --exact` and `gap`, as their `--json`
/// prints them in `config`.
#[derive(Clone, Debug, Serialize)]
pub struct ExactSettings {
    /// The backend (`--backend`).
    pub backend: Backend,
    /// Seconds the backend may run (`--time-limit`); a worker is killed [`WORKER_GRACE`]
    /// after.
    pub time_limit_s: f64,
    /// The MILP's memory-row linearisation (`--linearisation`).
    pub linearisation: Linearisation,
    /// Warm-start from the best heuristic (not `--no-warm-start`).
    pub warm_start: bool,
    /// Compute the LP-relaxation bound (not `--no-lp-bound`).
    pub lp_bound: bool,
    /// A model too large for the backend: its bound (`--whole-model-bound`).
    pub whole_model_bound: WholeModelBound,
    /// A model too large for the backend: improve the warm start by the window search (not
    /// `--no-window-search`).
    pub window_search: bool,
    /// Where the coupled segment LP's bound is read and kept (the CLI's, beside its plan
    /// cache; `None`: solved every time).
    #[serde(skip)]
    pub bound_cache: Option<BoundCache>,
}

impl ExactSettings {
    /// The MILP with the defaults (big-M rows, LP bound, warm start, the segment LP bound and
    /// the window search) within `seconds`: `gap`'s defaults with `--time-limit seconds`, and
    /// the one-layer solve of `compare --layer-exact`.
    pub fn milp_within(seconds: f64) -> ExactSettings {
        ExactSettings {
            backend: Backend::Milp,
            time_limit_s: seconds,
            linearisation: Linearisation::BigM,
            warm_start: true,
            lp_bound: true,
            whole_model_bound: WholeModelBound::Lp,
            window_search: true,
            bound_cache: None,
        }
    }

    /// The time limit is a positive number of seconds and the backend is in this build (the
    /// Python wheel has no z3); the message names the CLI's flag.
    pub fn check(&self) -> Result<(), String> {
        if !(self.time_limit_s.is_finite() && self.time_limit_s > 0.0) {
            return Err(format!(
                "--time-limit {}: must be a positive number of seconds",
                self.time_limit_s
            ));
        }
        if let Some(why) = self.backend.missing() {
            return Err(format!("--backend {}: {why}", self.backend.name()));
        }
        Ok(())
    }

    /// The exact method these settings describe, warm-started from `warm`, given the coupled
    /// segment LP's bound `coupled`, run in `worker` (`None`: in this process).
    fn method(
        &self,
        warm: Option<Schedule>,
        coupled: CoupledLp,
        worker: Option<WorkerCommand>,
    ) -> Exact {
        Exact {
            options: ExactOptions {
                backend: self.backend,
                linearisation: self.linearisation,
                time_limit: None,
                warm_start: warm,
                lp_bound: self.lp_bound,
                whole_model: self.whole_model_bound,
                whole_model_search: if self.window_search {
                    WholeModelSearch::Window
                } else {
                    WholeModelSearch::Off
                },
                coupled,
            },
            worker,
        }
    }
}

/// What a gap or exact solve is doing, for a progress display.
#[derive(Debug)]
pub enum GapStep<'a> {
    /// Heuristic `k` of `n` starts.
    Heuristic {
        /// 1-based.
        k: usize,
        /// How many.
        n: usize,
        /// Its name.
        name: &'a str,
    },
    /// The exact backend (`label`: backend and limit) is starting (its worker, if any).
    Starting {
        /// `exact milp (limit 60 s)`.
        label: &'a str,
    },
    /// The exact solve (or the coupled segment LP before it) reported `event`.
    Exact {
        /// As in [`GapStep::Starting`], or the coupled LP's.
        label: &'a str,
        /// What it reported.
        event: &'a ExactEvent,
    },
    /// Something the user should know that changes no result (the bound cache could not be
    /// written), in one line.
    Warning {
        /// The line.
        message: &'a str,
    },
}

/// Runs the exact backend described by `settings` on `inst` (in `worker`, with a hard limit,
/// or in this process), warm-started from `warm`, through the same
/// [`elk_stage::method::Method`] road as every method, its phases told to `progress`. On a
/// chain of layers the coupled segment LP comes first ([`COUPLED_SHARE_WHOLE_MODEL`],
/// [`COUPLED_SHARE_WITH_BACKEND`]; from the bound
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
    let first = coupled_first(inst, settings, warm.as_ref(), progress)?;
    let floor_s = (1.0 - coupled_share(inst, settings)) * limit_s;
    let left_s = (limit_s - started.elapsed().as_secs_f64()).max(floor_s);
    let exact = settings.method(warm, first.given, worker);
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
    if let Some(phase) = first.phase {
        report.solve_s += phase.seconds;
        report.phases.insert(0, phase);
    }
    report.notes.extend(first.note);
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
    /// (`false`: the one without was faster, [`gap_union`]); absent otherwise.
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
    /// `--expert-parallel` ([`gap_union`]): which instance `exact` and the last row are of,
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
    /// The exact solve's status in words ([`status_word`]).
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

/// The layer `compare --layer-exact` cuts: layer 0 is the first transformer layer (the zoo's
/// and the importer's layer structure puts the embeddings in a prologue before it).
pub const LAYER: usize = 0;

/// `compare --layer-exact SECONDS`'s section as `--json` prints it: one layer of the model
/// (as `--layers 0..1` cuts it) solved exactly by the MILP within SECONDS, and every
/// heuristic's gap there.
#[derive(Serialize)]
pub struct LayerSection {
    /// The layer cut (`--layers 0..1`).
    pub layer: usize,
    /// Its operators.
    pub operators: usize,
    /// The MILP's time limit.
    pub time_limit_s: f64,
    /// The exact solve's status in words.
    pub status: String,
    /// The proven optimum, or the best proven lower bound when `gap.reference` says so.
    pub reference_ms: f64,
    /// Wall-clock seconds of the exact solve (`null` with `--no-timings`).
    pub solve_s: Option<f64>,
    /// What `gap --layers 0..1 --time-limit SECONDS --json` prints for this layer.
    pub gap: GapReport,
}

/// The section of [`LAYER`], already cut from the model (`layer`): [`gap_report`] with the
/// MILP's defaults within `seconds`.
pub fn layer_section(
    layer: &Instance,
    seconds: f64,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<LayerSection, MethodError> {
    let gap = gap_report(
        layer,
        &ExactSettings::milp_within(seconds),
        no_timings,
        worker,
        progress,
    )?;
    Ok(section_of(layer, seconds, gap))
}

/// [`layer_section`] with `--expert-parallel`: the layer cut from the instance with parallel
/// sets (`layer`) and from the one without (`without`), their union ([`gap_union`]: each row
/// the faster, the lower reference; docs/core-groups.md, CG-5). `progress` is told which
/// instance (`true`: with sets) each step is of.
pub fn layer_section_union(
    layer: &Instance,
    without: &Instance,
    seconds: f64,
    no_timings: bool,
    worker: Option<WorkerCommand>,
    progress: &dyn Fn(bool, GapStep<'_>),
) -> Result<LayerSection, MethodError> {
    let settings = ExactSettings::milp_within(seconds);
    let gap = gap_union(layer, without, &settings, no_timings, worker, progress)?;
    Ok(section_of(layer, seconds, gap))
}

/// The section of `gap`, the report of `layer` (or of the union it is the sets' side of).
fn section_of(layer: &Instance, seconds: f64, gap: GapReport) -> LayerSection {
    LayerSection {
        layer: LAYER,
        operators: layer.ops.len(),
        time_limit_s: seconds,
        status: gap.status(),
        reference_ms: layer.ms(gap.reference_cycles),
        solve_s: gap.exact.solve_s,
        gap,
    }
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

    #[test]
    fn a_time_limit_must_be_positive() {
        assert!(ExactSettings::milp_within(1.0).check().is_ok());
        let err = ExactSettings::milp_within(0.0).check().unwrap_err();
        assert_eq!(err, "--time-limit 0: must be a positive number of seconds");
        assert!(ExactSettings::milp_within(f64::NAN).check().is_err());
    }
}
