//! The window search from several starting points: the input, the queue re-timings of its
//! options ([`crate::queue`]) and, given the segment relaxation's price, the queue schedule of
//! the options the relaxation picks ([`crate::segments::relaxation_options`]). Which start leads the search furthest is not predictable from
//! the starts' own makespans (Llama2-13B at 12 TB/s: the mean-ν queue start ends 1.0 % above
//! the bound, the refined one 1.7 %, the input 2.1 %; Llama2-70B: the refined one best), so
//! each start gets an equal first round of half the time, and the best result so far the
//! rest (under a window budget, half of the windows and the rest, in the same way). docs/exact.md, "Queue re-timing", has the measurements.

use super::{
    improve, LnsImprovement, LnsOptions, LnsReport, LnsStep, LnsStop, LnsSummary, LNS_METHOD,
};
use crate::error::Result;
use crate::queue::{queue_for_options, requeue, REFINEMENTS};
use crate::segments::relaxation_options;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use std::time::Instant;

/// The window search from `input`, from its queue re-timings and, with `relaxation_price`
/// (the segment relaxation's best μ), from the relaxation's options (module docs), within
/// `opts.time_limit`. The summary's input is `input`'s makespan, its improvements are those
/// of every round that beat the best so far (each named by its start), and its counts add up
/// over the rounds.
pub fn improve_from_starts(
    inst: &Instance,
    input: &Schedule,
    relaxation_price: Option<f64>,
    opts: &LnsOptions,
    on: &dyn Fn(&LnsStep),
) -> Result<LnsReport> {
    let started = Instant::now();
    let left = || opts.time_limit.saturating_sub(started.elapsed());
    // A share of what is left, or all of it under a window budget: there windows split the
    // search, and time is only a hard stop (these LPs are the same work on every machine).
    let share = |f: f64| match opts.max_windows {
        Some(_) => left(),
        None => left().mul_f64(f),
    };
    let queued = requeue(inst, input, LNS_METHOD, REFINEMENTS, share(0.1))?;
    let mut starts: Vec<(&str, Schedule)> = vec![("input", input.clone())];
    let names = ["queue re-timing, mean ν", "queue re-timing, refined ν"];
    for (name, (s, _)) in names.iter().zip(queued.seeds) {
        starts.push((name, s));
    }
    if let Some(price) = relaxation_price {
        if let Some(options) = relaxation_options(inst, price, share(0.05))? {
            let q = queue_for_options(inst, options, LNS_METHOD, REFINEMENTS, share(0.1))?;
            if q.makespan_cycles.get().is_finite() {
                starts.push(("queue schedule of the relaxation's options", q.schedule));
            }
        }
    }
    let first_round = left().mul_f64(0.5).div_f64(starts.len() as f64);
    // Under a window budget, each start gets an equal part of half of it (time only stops).
    let round_windows = opts.max_windows.map(|w| w / 2 / starts.len() as u64);
    let mut rounds = Rounds::default();
    for (name, start) in &starts {
        let at = started.elapsed().as_secs_f64();
        let round = LnsOptions {
            time_limit: if round_windows.is_some() {
                left()
            } else {
                first_round.min(left())
            },
            max_windows: round_windows,
            ..opts.clone()
        };
        rounds.keep(improve(inst, start, &round, on)?, name, at);
        if rounds.met_bound() || left().is_zero() {
            break;
        }
    }
    let met = rounds.met_bound();
    let (mut best, mut summary) = rounds.best.expect("the input is always a start");
    let windows_left = opts
        .max_windows
        .map(|w| w.saturating_sub(summary.windows_solved as u64));
    if !met && !left().is_zero() && windows_left != Some(0) {
        let at = started.elapsed().as_secs_f64();
        let rest = LnsOptions {
            time_limit: left(),
            max_windows: windows_left,
            ..opts.clone()
        };
        let r = improve(inst, &best, &rest, on)?;
        let mut last = Rounds {
            best: Some((best, summary)),
        };
        last.keep(r, "best start, continued", at);
        (best, summary) = last.best.expect("kept");
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(LnsReport {
        schedule: best,
        summary,
    })
}

/// The best schedule over the rounds so far, and their summary added up.
#[derive(Default)]
struct Rounds {
    best: Option<(Schedule, LnsSummary)>,
}

impl Rounds {
    fn met_bound(&self) -> bool {
        self.best
            .as_ref()
            .is_some_and(|b| b.1.stop == LnsStop::MeetsBound)
    }

    /// Folds in round `r` from start `name`, begun `at` seconds after the first: counts add
    /// up, the improvements that beat the best so far are kept (named by their start), the
    /// best schedule is kept, and the stop is the last round's (a met bound stays).
    fn keep(&mut self, r: LnsReport, name: &str, at: f64) {
        let Some((schedule, total)) = &mut self.best else {
            let mut summary = r.summary;
            for i in &mut summary.improvements {
                i.by = format!("{} (from the {name})", i.by);
                i.at_s += at;
            }
            self.best = Some((r.schedule, summary));
            return;
        };
        let s = r.summary;
        let mut best = total.makespan_cycles;
        // The start itself may beat the best so far.
        let start = LnsImprovement {
            at_s: 0.0,
            makespan_cycles: s.input_cycles,
            by: "the start".into(),
        };
        for i in std::iter::once(start).chain(s.improvements) {
            if i.makespan_cycles < best {
                best = i.makespan_cycles;
                total.improvements.push(LnsImprovement {
                    at_s: at + i.at_s,
                    makespan_cycles: i.makespan_cycles,
                    by: format!("{} (from the {name})", i.by),
                });
            }
        }
        total.windows_solved += s.windows_solved;
        total.windows_optimal += s.windows_optimal;
        total.rejected.extend(s.rejected);
        total.disagreements.extend(s.disagreements);
        total.sweeps += s.sweeps;
        total.window_columns = total.window_columns.max(s.window_columns);
        total.window_binaries = total.window_binaries.max(s.window_binaries);
        total.window_rows = total.window_rows.max(s.window_rows);
        if total.stop != LnsStop::MeetsBound {
            total.stop = s.stop;
        }
        if s.makespan_cycles < total.makespan_cycles {
            total.makespan_cycles = s.makespan_cycles;
            *schedule = r.schedule;
        }
    }
}
