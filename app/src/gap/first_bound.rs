//! The coupled segment LP before an exact solve ([`super::report::run_exact`]): read from the bound
//! cache or solved within a share of the time limit, so that `gap` and `solve --exact` hold
//! the bound `compare --bound segment`, the main job and the sweeps report, and hand it to the
//! exact part as known (docs/exact.md, "One bound, whatever the command").

use super::settings::{ExactSettings, GapStep};
use crate::bound::{coupled_bound, Staged};
use elk_solver::segments::CoupledLp;
use elk_solver::{ExactEvent, Note, NoteAbout, Phase, WholeModelBound};
use elk_stage::instance::Instance;
use elk_stage::method::MethodError;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use std::time::{Duration, Instant};

/// The share of the time limit the coupled segment LP may take before the exact part starts,
/// when the bound cache does not hold it, on a model too large for the backend: there it is
/// the one bound beyond the roofline (the window search only improves the schedule), the
/// bound `compare`, the main job and the sweeps report, and a certified gap is only as good
/// as its bound; the exact part gets the rest, at least a tenth.
pub const COUPLED_SHARE_WHOLE_MODEL: f64 = 0.9;

/// The same on an instance the backend can build: the LP relaxation's share, since there the
/// MILP's own bounds compete with it (its LP relaxation is at least as tight, its dual bound
/// may prove the optimum), and the backend keeps at least three quarters.
pub const COUPLED_SHARE_WITH_BACKEND: f64 = 0.25;

/// The share of `settings`' time limit the coupled LP of `inst` may take: all of it under a
/// work budget (one LP is the same work on every machine, so only the hard stop may cut it;
/// the work budget splits what follows).
pub(super) fn coupled_share(inst: &Instance, settings: &ExactSettings) -> f64 {
    if settings.work_limit.is_some() {
        1.0
    } else if elk_solver::too_large(inst, settings.backend) {
        COUPLED_SHARE_WHOLE_MODEL
    } else {
        COUPLED_SHARE_WITH_BACKEND
    }
}

/// How the exact part got the coupled segment LP's bound (what the footer under `gap` says;
/// in the JSON the notes say it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CoupledStatus {
    /// Not used: `--whole-model-bound off`, a chain without two layers, or a warm start
    /// that meets the roofline.
    #[default]
    NotUsed,
    /// Solved before the exact part, or read from the bound cache.
    Held,
    /// It did not finish within its share of the time limit.
    Unfinished {
        /// Its limit, seconds.
        limit_s: f64,
    },
}

/// `s` seconds as a note prints them: three significant digits at most (27, 4.5, 0.045).
fn seconds_text(s: f64) -> String {
    let decimals = if s >= 10.0 {
        0
    } else if s >= 1.0 {
        1
    } else {
        3
    };
    format!("{s:.decimals$}")
}

/// No bound before the exact part could add anything: none asked for (`--whole-model-bound
/// off`), or a warm start (makespan `incumbent`) that meets the roofline `roof` (it is optimal
/// already).
fn adds_nothing(settings: &ExactSettings, incumbent: Option<Cycles>, roof: Cycles) -> bool {
    settings.whole_model_bound == WholeModelBound::Off
        || incumbent.is_some_and(|t| elk_solver::meets_bound(t, roof))
}

/// The coupled segment LP before the exact part: its bound, how it was had, its phase and a
/// note when it did not finish.
pub(super) struct CoupledFirst {
    pub(super) given: CoupledLp,
    pub(super) how: CoupledStatus,
    pub(super) phase: Option<Phase>,
    pub(super) note: Option<Note>,
}

/// Reads the coupled LP's bound of `inst` from the settings' bound cache or solves it within
/// its share of the time limit ([`coupled_share`]). Skipped when there is nothing it could add: no
/// segment bound asked for (`--whole-model-bound off`), or a warm start that meets the
/// roofline (it is optimal already).
pub(super) fn coupled_first(
    inst: &Instance,
    settings: &ExactSettings,
    warm: Option<&Schedule>,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<CoupledFirst, MethodError> {
    let not_used = CoupledFirst {
        given: CoupledLp::Solve,
        how: CoupledStatus::NotUsed,
        phase: None,
        note: None,
    };
    let roof = elk_solver::bounds::roofline(inst).best();
    let incumbent = warm.map(|s| s.makespan_cycles);
    if adds_nothing(settings, incumbent, roof) {
        return Ok(not_used);
    }
    let share = coupled_share(inst, settings);
    let limit_s = share * settings.time_limit_s;
    let label = "segment relaxation";
    progress(GapStep::Exact {
        label,
        event: &ExactEvent::Phase {
            what: format!("the coupled LP (limit {} s)", seconds_text(limit_s)),
            incumbent,
            bound: roof,
            elapsed_s: 0.0,
        },
    });
    let started = Instant::now();
    let found = coupled_bound(
        inst,
        Duration::from_secs_f64(limit_s),
        settings.bound_cache.as_ref(),
        &|step| {
            progress(GapStep::Exact {
                label,
                event: &ExactEvent::Segment {
                    step: *step,
                    incumbent,
                    bound: step.best_bound.map_or(roof, |b| b.max(roof)),
                },
            })
        },
    )
    .map_err(|e| e.for_method(settings.backend.method_name()))?;
    if let Some(e) = &found.write_error {
        progress(GapStep::Warning {
            message: &format!("bound cache not updated: {e} (pass --no-cache to skip it)"),
        });
    }
    let seconds = started.elapsed().as_secs_f64();
    let phase = |what: &str| Phase {
        what: what.into(),
        seconds,
    };
    Ok(match found.bound {
        Some(b) => CoupledFirst {
            given: CoupledLp::Known(Cycles(b.bound_cycles)),
            how: CoupledStatus::Held,
            phase: Some(phase(if found.cached {
                "segment relaxation, the coupled LP (read from the bound cache)"
            } else {
                "segment relaxation, the coupled LP"
            })),
            note: None,
        },
        None if found.unfinished => CoupledFirst {
            given: CoupledLp::Skip,
            how: CoupledStatus::Unfinished { limit_s },
            phase: Some(phase("segment relaxation, the coupled LP (unfinished)")),
            note: Some(Note::about(NoteAbout::SegmentRelaxation, format!(
                "segment relaxation: the coupled LP did not finish within {} s ({:.0} % of the time limit): the bound is weaker than `compare --bound segment`'s; raise --time-limit{}",
                seconds_text(limit_s),
                100.0 * share,
                if settings.bound_cache.is_some() {
                    ", or run `elk-opt compare --bound segment` once (it has 60 s and keeps the bound in the bound cache, where `gap` reads it)"
                } else {
                    ""
                }
            ))),
        },
        None => not_used,
    })
}

/// The stage relaxation before the exact part: its bound, its phase and its note.
pub(super) struct StageFirst {
    pub(super) bound: Option<Cycles>,
    pub(super) phase: Option<Phase>,
    pub(super) note: Option<Note>,
}

/// The stage relaxation's LP of `inst` ([`crate::bound::stage`]; docs/exact.md, "The stage
/// relaxation") on a model too large for the backend, where the MILP's own LP relaxation, at
/// least as strong, is not built: the bound `compare` reports by default, and the one beyond
/// the roofline where the coupled LP does not apply (no repeated layers, as under sampled
/// MoE routing) or does not finish (an MoE model). Skipped where it cannot add anything, as
/// the coupled LP is: `--whole-model-bound off`, or a warm start that meets the roofline.
pub(super) fn stage_first(
    inst: &Instance,
    settings: &ExactSettings,
    warm: Option<&Schedule>,
    progress: &dyn Fn(GapStep<'_>),
) -> Result<StageFirst, MethodError> {
    let roof = elk_solver::bounds::roofline(inst).best();
    let incumbent = warm.map(|s| s.makespan_cycles);
    if !elk_solver::too_large(inst, settings.backend) || adds_nothing(settings, incumbent, roof) {
        return Ok(StageFirst {
            bound: None,
            phase: None,
            note: None,
        });
    }
    progress(GapStep::Exact {
        label: "stage relaxation",
        event: &ExactEvent::Phase {
            what: format!("one LP over {} stages", inst.ops.len() + 1),
            incumbent,
            bound: roof,
            elapsed_s: 0.0,
        },
    });
    let started = Instant::now();
    let found = crate::bound::stage_cached(inst, settings.bound_cache.as_ref())
        .map_err(|e| e.for_method(settings.backend.method_name()))?;
    let text = match (&found, found.missing()) {
        (Staged::Solved(b), _) => format!(
            "stage relaxation (one LP over the stages, each paying the most of its HBM work, execution and NoC, within SRAM): {:.4} ms",
            inst.ms(Cycles(b.bound_cycles))
        ),
        (_, why) => why.unwrap_or_default(),
    };
    Ok(StageFirst {
        bound: found.cycles().map(Cycles),
        phase: Some(Phase {
            what: "stage relaxation".into(),
            seconds: started.elapsed().as_secs_f64(),
        }),
        note: Some(Note::general(text)),
    })
}
