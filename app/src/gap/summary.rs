//! The exact solve's summary as `--json` prints it (`solve --exact`'s results, `gap`'s
//! `exact`), and the words that say what ran and what it proved. It is apart from the gap's
//! computation in `gap.rs` because it is the contract scripts and Python read: its types and
//! phrases change only with the JSON schema, whatever the computation does.

use super::first_bound::CoupledStatus;
use elk_solver::lns::{LnsStop, LnsSummary};
use elk_solver::{Backend, BoundSource, Bounds, ExactReport, ModelStats, Note};
use elk_stage::instance::Instance;
use elk_stage::method::{StopReason, Verdict};
use elk_stage::units::Cycles;
use serde::Serialize;

/// The exact solve's summary as printed with `--json` (`solve --exact`'s results, `gap`'s
/// `exact`).
#[derive(Serialize)]
pub struct ExactSummary {
    /// The instance's name.
    pub instance: String,
    /// `milp` or `smt`.
    pub backend: Backend,
    /// The verdict.
    pub status: Verdict,
    /// Why it stopped.
    pub stop: StopReason,
    /// What actually ran and what it did, in words (the exact row's status in `gap`).
    pub ran: String,
    /// The simulator's makespan of the schedule found.
    pub makespan_cycles: Option<Cycles>,
    /// The same in milliseconds.
    pub makespan_ms: Option<f64>,
    /// The best proven lower bound.
    pub lower_bound_cycles: Cycles,
    /// What proved it.
    pub bound_source: BoundSource,
    /// 100·(makespan − bound)/bound.
    pub gap_pct: Option<f64>,
    /// Wall-clock seconds of the solve (`None` with `--no-timings`).
    pub solve_s: Option<f64>,
    /// The backend's model size.
    pub model: ModelJson,
    /// The heuristic the solve was warm-started from.
    pub warm_start: Option<String>,
    /// The schedule is the warm start's.
    pub from_warm_start: bool,
    /// Every lower bound computed.
    pub bounds: Bounds,
    /// Notes of the solve, each with what it is about (`--json` prints their lines).
    #[serde(serialize_with = "note_lines")]
    pub notes: Vec<Note>,
    /// The timed phases (left out with `--no-timings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<PhaseJson>>,
    /// The window search of a whole model (times left out with `--no-timings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchJson>,
    /// `--work-limit`: the budget and what it bought (`work_limit`, `work_used`, `work_unit`,
    /// `cut_by_time`; absent without a budget).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub work: Option<elk_solver::Work>,
    /// How the coupled segment LP's bound was had (the notes say it in words).
    #[serde(skip)]
    pub coupled: CoupledStatus,
}

/// What the window search did, times left out with `--no-timings`.
#[derive(Serialize)]
pub struct SearchJson {
    /// Why it stopped.
    pub stop: LnsStop,
    /// The warm start's makespan.
    pub input_cycles: Cycles,
    /// The same in milliseconds.
    pub input_ms: f64,
    /// The makespan it reached.
    pub makespan_cycles: Cycles,
    /// The same in milliseconds.
    pub makespan_ms: f64,
    /// Windows solved.
    pub solved_windows: usize,
    /// Windows proven optimal.
    pub proven_windows: usize,
    /// Sweeps over the model.
    pub sweeps: usize,
    /// Each improvement of the incumbent.
    pub improvements: Vec<ImprovementJson>,
    /// Wall-clock seconds (`None` with `--no-timings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
}

/// One improvement of the window search's incumbent.
#[derive(Serialize)]
pub struct ImprovementJson {
    /// The new makespan.
    pub makespan_cycles: Cycles,
    /// The same in milliseconds.
    pub makespan_ms: f64,
    /// What found it.
    pub by: String,
    /// Seconds into the search (`None` with `--no-timings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
}

impl SearchJson {
    fn new(inst: &Instance, s: &LnsSummary, no_timings: bool) -> SearchJson {
        let time = |v: f64| (!no_timings).then_some(v);
        SearchJson {
            stop: s.stop,
            input_cycles: s.input_cycles,
            input_ms: inst.ms(s.input_cycles),
            makespan_cycles: s.makespan_cycles,
            makespan_ms: inst.ms(s.makespan_cycles),
            solved_windows: s.windows_solved,
            proven_windows: s.windows_optimal,
            sweeps: s.sweeps,
            improvements: s
                .improvements
                .iter()
                .map(|i| ImprovementJson {
                    makespan_cycles: i.makespan_cycles,
                    makespan_ms: inst.ms(i.makespan_cycles),
                    by: i.by.clone(),
                    at_s: time(i.at_s),
                })
                .collect(),
            wall_s: time(s.seconds),
        }
    }
}

/// The backend's model size, every count named.
#[derive(Serialize)]
pub struct ModelJson {
    /// Variables.
    pub variables: usize,
    /// Binary variables.
    pub binaries: usize,
    /// Constraints.
    pub constraints: usize,
    /// Options kept after Pareto pruning (MILP), of all options.
    pub options_kept: Option<OptionsKept>,
}

/// Options kept after Pareto pruning, of all options.
#[derive(Serialize)]
pub struct OptionsKept {
    /// Kept.
    pub kept_options: usize,
    /// All.
    pub total_options: usize,
}

impl From<&ModelStats> for ModelJson {
    fn from(m: &ModelStats) -> ModelJson {
        ModelJson {
            variables: m.variables,
            binaries: m.binaries,
            constraints: m.constraints,
            options_kept: m.options_kept.map(|(kept, total)| OptionsKept {
                kept_options: kept,
                total_options: total,
            }),
        }
    }
}

/// A timed phase of the solve.
#[derive(Serialize)]
pub struct PhaseJson {
    /// What ran.
    pub what: String,
    /// Its wall-clock seconds.
    pub wall_s: f64,
}

impl ExactSummary {
    /// The status in words ([`status_word`]).
    pub fn status_word(&self) -> String {
        status_word(
            self.status,
            self.stop,
            self.search.as_ref().map(|s| s.stop),
            self.gap_pct,
            bound_name(&self.bounds, self.backend, self.bound_source),
        )
    }
}

/// What ran in an exact solve and what it did, in one phrase: the `ran` of `--json` and the
/// status of `gap`'s exact row. Never "not attempted" when the window search ran, and never a
/// MILP when only the warm start was checked against a bound.
pub(super) fn what_ran(inst: &Instance, r: &ExactReport, warm: Option<(&str, Cycles)>) -> String {
    // A backend whose schedule is no faster than the warm start found nothing better, even
    // when it returns a copy of its own.
    let no_better = r.from_warm_start
        || warm
            .zip(r.makespan_cycles)
            .is_some_and(|((_, w), t)| t.get() >= w.get() * (1.0 - 1e-12));
    let warm = warm.map_or("the warm start", |w| w.0);
    let backend = r.backend.phase();
    let kept = if no_better {
        format!("; it found nothing better than {warm}")
    } else {
        String::new()
    };
    match r.stop {
        StopReason::WindowSearch => match &r.search {
            Some(s) => {
                let stop = match s.stop {
                    LnsStop::Converged => "converged",
                    LnsStop::TimeLimit => "time limit",
                    LnsStop::WorkLimit => "work limit",
                    LnsStop::MeetsBound => "meets the bound: optimal",
                };
                if s.makespan_cycles.get() < s.input_cycles.get() * (1.0 - 1e-12) {
                    format!(
                        "window search ({stop}): improved {warm} {:.4} → {:.4} ms",
                        inst.ms(s.input_cycles),
                        inst.ms(s.makespan_cycles)
                    )
                } else {
                    format!(
                        "window search ({stop}): found nothing better than {warm} ({:.4} ms)",
                        inst.ms(s.input_cycles)
                    )
                }
            }
            None => "window search".into(),
        },
        StopReason::NotAttempted => format!(
            "nothing ran: the model is too large to build and the window search did not run; {warm} is reported as it is"
        ),
        StopReason::WarmStartMeetsBound => format!(
            "no {} ran: {warm} meets the {} bound, so it is optimal",
            r.backend.model_noun(),
            bound_name(&r.bounds, r.backend, r.bound_source)
        ),
        StopReason::LpOptionsMeetBound => format!(
            "no {} ran: the LP relaxation's options, queued and re-timed, meet the {} bound, so that schedule is optimal",
            r.backend.model_noun(),
            bound_name(&r.bounds, r.backend, r.bound_source)
        ),
        StopReason::Killed if elk_solver::too_large(inst, r.backend) => format!(
            "the whole-model search (segment relaxation, window search) overran its time limit and was killed; {}",
            if r.from_warm_start {
                format!("{warm} is reported as it is")
            } else {
                "its last incumbent is reported".into()
            }
        ),
        StopReason::Killed => format!("{backend} overran its time limit and was killed{kept}"),
        StopReason::Completed if r.status == Verdict::Optimal => {
            format!("{backend}: optimal (proof completed){kept}")
        }
        StopReason::Completed => format!("{backend}: completed"),
        StopReason::TimeLimit if r.status == Verdict::Optimal => format!(
            "{backend}: time limit, optimal (meets the {} bound){kept}",
            bound_name(&r.bounds, r.backend, r.bound_source)
        ),
        StopReason::TimeLimit => format!("{backend}: time limit{kept}"),
        StopReason::WorkLimit if r.status == Verdict::Optimal => format!(
            "{backend}: work limit, optimal (meets the {} bound){kept}",
            bound_name(&r.bounds, r.backend, r.bound_source)
        ),
        StopReason::WorkLimit => format!("{backend}: work limit{kept}"),
    }
}

/// The name of `gap`'s exact row: the method whose schedule it is (`None`: no row, the
/// schedule is the warm start's, already a row).
pub(super) fn exact_row_name(r: &ExactReport) -> Option<String> {
    match r.stop {
        StopReason::NotAttempted => None,
        StopReason::WindowSearch => Some(elk_solver::lns::LNS_METHOD.into()),
        StopReason::WarmStartMeetsBound => Some("warm-start".into()),
        // A killed worker's schedule is the last incumbent it told: named for what found it
        // (the window search, on a model too large for the backend), not for the backend.
        StopReason::Killed => Some(match &r.schedule {
            Some(s) if !r.from_warm_start => s.method.clone(),
            _ => r.backend.method_name().into(),
        }),
        _ => Some(r.backend.method_name().into()),
    }
}

/// The summary of exact report `r` on `inst`, as `--json` prints it.
pub(super) fn summary(
    inst: &Instance,
    r: &ExactReport,
    coupled: CoupledStatus,
    warm: Option<(&str, Cycles)>,
    no_timings: bool,
) -> ExactSummary {
    ExactSummary {
        instance: inst.name.clone(),
        backend: r.backend,
        status: r.status,
        stop: r.stop,
        ran: what_ran(inst, r, warm),
        makespan_cycles: r.makespan_cycles,
        makespan_ms: r.makespan_cycles.map(|t| inst.ms(t)),
        lower_bound_cycles: r.lower_bound_cycles,
        bound_source: r.bound_source,
        gap_pct: r.gap_pct,
        solve_s: (!no_timings).then_some(r.solve_s),
        model: ModelJson::from(&r.model),
        warm_start: warm.map(|w| w.0.to_string()),
        from_warm_start: r.from_warm_start,
        bounds: r.bounds.clone(),
        // The budget's account is a note too, so the text says what --json's fields say.
        notes: r
            .notes
            .iter()
            .cloned()
            .chain(r.work.map(|w| Note::general(w.sentence(r.status.proven()))))
            .collect(),
        phases: (!no_timings).then(|| {
            r.phases
                .iter()
                .map(|p| PhaseJson {
                    what: p.what.clone(),
                    wall_s: p.seconds,
                })
                .collect()
        }),
        search: r
            .search
            .as_ref()
            .map(|s| SearchJson::new(inst, s, no_timings)),
        work: r.work,
        coupled,
    }
}

/// The status in words: what was proven, and why the solve stopped.
pub fn status_word(
    s: Verdict,
    stop: StopReason,
    search: Option<LnsStop>,
    gap: Option<f64>,
    bound: BoundSource,
) -> String {
    let gap = gap.map_or("no schedule".into(), |g| format!("gap {g:.3} %"));
    match (s, stop) {
        (Verdict::Optimal, StopReason::Completed) => "optimal".into(),
        (Verdict::Optimal, _) => format!("optimal (meets the {bound} bound)"),
        (Verdict::Infeasible, _) => "infeasible (proven: no schedule fits)".into(),
        (_, StopReason::WindowSearch) if search == Some(LnsStop::TimeLimit) => format!(
            "time limit in the window search ({gap} against the {bound} bound; the whole-model MILP is too large to build)"
        ),
        (_, StopReason::WindowSearch) if search == Some(LnsStop::WorkLimit) => format!(
            "work limit in the window search ({gap} against the {bound} bound; the whole-model MILP is too large to build)"
        ),
        (_, StopReason::WindowSearch) if search == Some(LnsStop::Converged) => format!(
            "window search converged: no window improves ({gap} against the {bound} bound; the whole-model MILP is too large to build)"
        ),
        (_, StopReason::NotAttempted | StopReason::WindowSearch) => format!(
            "not attempted (model too large; {gap} against the bound; cut it with --layers/--ops or --window)"
        ),
        (_, StopReason::Killed) => format!("time limit, worker killed ({gap})"),
        (Verdict::Feasible, StopReason::WorkLimit) => format!("work limit ({gap})"),
        (Verdict::Unknown, StopReason::WorkLimit) => "work limit (no schedule found)".into(),
        (Verdict::Feasible, _) => format!("time limit ({gap})"),
        (Verdict::Unknown, _) => "time limit (no schedule found)".into(),
    }
}

/// The bound that certified an optimum: its source, which after a proof is
/// [`BoundSource::Optimum`], is then the best bound other than the schedule itself
/// (`backend`'s dual bound among them).
pub fn bound_name(b: &Bounds, backend: Backend, source: BoundSource) -> BoundSource {
    match source {
        BoundSource::Optimum => b.best(backend).1,
        other => other,
    }
}

/// What `--expert-parallel` adds to an exact result: which instance the kept schedule is of,
/// the union's reference, and the other instance's exact solve (`gap --json`'s `union`,
/// `solve --exact --json`'s `union`).
#[derive(Serialize)]
pub struct UnionPart {
    /// The kept exact result (the summary beside this: `exact` in `gap`, the results of
    /// `solve --exact`; the schedule of `-o`; the instance of `--emit-instance`) is of the
    /// instance with parallel sets (`false`: of the one without, whose schedule was faster or
    /// as fast).
    pub parallel_sets: bool,
    /// The union's reference: the lower of the two instances' (each its proven optimum or its
    /// best proven lower bound), so a lower bound on every schedule of both.
    pub lower_bound_cycles: Cycles,
    /// That reference is the instance with parallel sets'.
    pub bound_parallel_sets: bool,
    /// It is a proven optimum of the union: the kept schedule is optimal over both instances.
    pub optimal: bool,
    /// 100·(the kept makespan − the reference)/the reference (`null`: no schedule).
    pub gap_pct: Option<f64>,
    /// The other instance's exact solve, as `solve --exact --json` prints it.
    pub other: ExactSummary,
}

/// Notes as `--json` prints them: their lines.
fn note_lines<S: serde::Serializer>(notes: &[Note], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(notes.iter().map(|n| n.text.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optimum_proven_by_a_bound_names_the_bound() {
        let b = Bounds {
            prefix_cycles: Cycles(100.0),
            lp_cycles: Some(Cycles(120.0)),
            ..Bounds::default()
        };
        let word = status_word(
            Verdict::Optimal,
            StopReason::TimeLimit,
            None,
            Some(0.0),
            bound_name(&b, Backend::Milp, BoundSource::Optimum),
        );
        assert_eq!(word, "optimal (meets the LP relaxation bound)");
        let roof = Bounds {
            prefix_cycles: Cycles(100.0),
            ..Bounds::default()
        };
        assert_eq!(
            bound_name(&roof, Backend::Milp, BoundSource::Optimum),
            BoundSource::Roofline
        );
        assert_eq!(
            status_word(
                Verdict::Feasible,
                StopReason::TimeLimit,
                None,
                Some(2.5),
                BoundSource::Roofline
            ),
            "time limit (gap 2.500 %)"
        );
        assert!(status_word(
            Verdict::Unknown,
            StopReason::NotAttempted,
            None,
            Some(1.0),
            BoundSource::Roofline
        )
        .starts_with("not attempted (model too large"));
    }

    #[test]
    fn a_window_search_that_improved_nothing_does_not_say_it_improved() {
        let inst =
            elk_stage::instance::Instance::builder("x", elk_stage::units::Bytes(1 << 20), 1e9)
                .op(
                    "a",
                    Cycles(10.0),
                    vec![elk_stage::instance::OpOption::new(1, 1, 10.0, 0.0, 0.0)],
                )
                .build()
                .unwrap();
        let schedule = r#"{"format":"elk-schedule/1","instance":"x","method":"window-search","options":[0],"load_order":[0],"load_work":[[0,0,10.0]],"makespan_cycles":20,"status":"feasible","lower_bound_cycles":null}"#;
        let json = format!(
            r#"{{"backend":"milp","status":"feasible","stop":"window_search","schedule":{schedule},"makespan_cycles":20,"objective_cycles":null,"lower_bound_cycles":5,"bound_source":"roofline","bounds":{{"hbm_cycles":0,"exec_cycles":0,"prefix_cycles":5,"lp_cycles":null,"backend_cycles":null}},"gap_pct":null,"solve_s":1,"model":{{"variables":0,"binaries":0,"constraints":0,"options_kept":null}},"from_warm_start":false,"notes":[],"phases":[]}}"#
        );
        let mut report: ExactReport = serde_json::from_str(&json).unwrap();
        let searched = |input: f64, best: f64| elk_solver::lns::LnsSummary {
            input_cycles: Cycles(input),
            makespan_cycles: Cycles(best),
            improvements: Vec::new(),
            windows_solved: 4,
            windows_optimal: 4,
            rejected: Vec::new(),
            disagreements: Vec::new(),
            sweeps: 1,
            window_columns: 0,
            window_binaries: 0,
            window_rows: 0,
            stop: elk_solver::lns::LnsStop::WorkLimit,
            seconds: 0.0,
        };
        let warm = Some(("elk-full", Cycles(25.0)));
        report.search = Some(searched(25e6, 20e6));
        assert_eq!(
            what_ran(&inst, &report, warm),
            "window search (work limit): improved elk-full 25.0000 → 20.0000 ms"
        );
        report.search = Some(searched(25e6, 25e6));
        assert_eq!(
            what_ran(&inst, &report, warm),
            "window search (work limit): found nothing better than elk-full (25.0000 ms)"
        );
    }

    #[test]
    fn a_killed_workers_row_is_named_for_what_found_its_schedule() {
        let report = |method: &str, from_warm_start: bool| -> ExactReport {
            let schedule = format!(
                r#"{{"format":"elk-schedule/1","instance":"x","method":"{method}","options":[0],"load_order":[0],"load_work":[[0,0,10.0]],"makespan_cycles":11,"status":"feasible","lower_bound_cycles":null}}"#
            );
            let json = format!(
                r#"{{"backend":"milp","status":"feasible","stop":"killed","schedule":{schedule},"makespan_cycles":11,"objective_cycles":null,"lower_bound_cycles":5,"bound_source":"roofline","bounds":{{"hbm_cycles":0,"exec_cycles":0,"prefix_cycles":5,"lp_cycles":null,"backend_cycles":null}},"gap_pct":null,"solve_s":1,"model":{{"variables":0,"binaries":0,"constraints":0,"options_kept":null}},"from_warm_start":{from_warm_start},"notes":[],"phases":[]}}"#
            );
            serde_json::from_str(&json).unwrap()
        };
        let window = elk_solver::lns::LNS_METHOD;
        assert_eq!(
            exact_row_name(&report(window, false)).as_deref(),
            Some(window)
        );
        // The warm start kept: the exact part's own row, as before the kill.
        assert_eq!(
            exact_row_name(&report("elk-full+retime", true)).as_deref(),
            Some("exact-milp")
        );
    }
}
