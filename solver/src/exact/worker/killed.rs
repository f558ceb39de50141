//! The report of a worker killed at its hard limit: what it had told before the kill (the
//! last incumbent, the best bound), judged again here, never anything it had not.

use super::Told;
use crate::bounds::BoundSource;
use crate::exact::solve::coupled_note;
use crate::exact::{gap_pct, too_large, Bounds, ExactOptions, ExactReport, ModelStats, Phase};
use crate::exact::{Note, Work, WorkUnit};
use crate::tolerance::meets_bound;
use elk_stage::instance::Instance;
use elk_stage::method::{StopReason, Verdict};
use elk_stage::schedule::Schedule;

/// What is known without the worker: `warm` (if any) judged by the simulator, the roofline
/// bound and the coupled segment bound the worker was given.
fn killed_with(
    inst: &Instance,
    options: &ExactOptions,
    warm: Option<Schedule>,
    seconds: f64,
) -> ExactReport {
    let backend = options.backend;
    let bounds = Bounds {
        segment_cycles: options.coupled.known(),
        stage_cycles: options.stage,
        ..Bounds::roofline(inst)
    };
    let (lower, source) = bounds.best(backend);
    let makespan = warm
        .as_ref()
        .and_then(|s| elk_sim::judged_makespan(inst, s).ok());
    let mut status = if makespan.is_some() {
        Verdict::Feasible
    } else {
        Verdict::Unknown
    };
    if makespan.is_some_and(|t| meets_bound(t, lower)) {
        status = Verdict::Optimal;
    }
    let what = if too_large(inst, backend) {
        format!(
            "the worker overran its time limit and was killed in the whole-model search (segment relaxation, window search; the model is too large for the {} backend)",
            backend.name()
        )
    } else {
        format!(
            "the {} backend overran its time limit and was killed",
            backend.name()
        )
    };
    ExactReport {
        backend,
        status,
        stop: StopReason::Killed,
        from_warm_start: makespan.is_some(),
        schedule: warm.filter(|_| makespan.is_some()).map(|mut s| {
            s.lower_bound_cycles = Some(lower);
            s.status = status.schedule_status();
            s
        }),
        makespan_cycles: makespan,
        objective_cycles: None,
        lower_bound_cycles: lower,
        bound_source: source,
        bounds,
        gap_pct: makespan.and_then(|t| gap_pct(t, lower)),
        solve_s: seconds,
        model: ModelStats::default(),
        notes: std::iter::once(Note::general(what))
            .chain(options.coupled.known().map(|c| coupled_note(inst, c)))
            .collect(),
        phases: vec![Phase {
            what: "killed worker".into(),
            seconds,
        }],
        search: None,
        // Killed at the hard time limit: whatever the budget, time stopped it.
        work: options.work_limit.map(|limit| Work {
            limit,
            used: None,
            unit: if too_large(inst, backend) {
                WorkUnit::Windows
            } else {
                WorkUnit::Nodes
            },
            cut_by_time: true,
            iterations_capped: false,
        }),
    }
}

/// The report of a worker killed at its hard limit: the better of the warm start and the
/// last incumbent its progress told (each judged again here; one the simulator rejects
/// is not used), and the best of the roofline and the bounds it told.
pub(crate) fn after_kill(
    inst: &Instance,
    options: &ExactOptions,
    told: Told,
    seconds: f64,
) -> ExactReport {
    let warm = options.warm_start.clone();
    let judged = |s: &Schedule| elk_sim::judged_makespan(inst, s).ok();
    let warm_t = warm.as_ref().and_then(judged);
    let found = told
        .incumbent
        .and_then(|s| judged(&s).map(|t| (s, t)))
        .filter(|(_, t)| warm_t.is_none_or(|w| *t < w));
    let from_progress = found.is_some();
    let start = found.map(|(s, _)| *s).or(warm);
    let mut report = killed_with(inst, options, start, seconds);
    if from_progress {
        report.from_warm_start = false;
        report.notes.push(Note::general(
            "the schedule is the last incumbent the worker told before the kill",
        ));
    }
    if let Some(b) = told.bound.filter(|b| *b > report.lower_bound_cycles) {
        report.lower_bound_cycles = b;
        report.bound_source = BoundSource::ToldBeforeKill;
        report.gap_pct = report.makespan_cycles.and_then(|t| gap_pct(t, b));
        if report.makespan_cycles.is_some_and(|t| meets_bound(t, b)) {
            report.status = Verdict::Optimal;
        }
        let status = report.status;
        if let Some(s) = report.schedule.as_mut() {
            s.lower_bound_cycles = Some(b);
            s.status = status.schedule_status();
        }
    }
    report
}
