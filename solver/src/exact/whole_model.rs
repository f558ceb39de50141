//! The whole-model road of an exact solve: a model too large for the backend is bounded by
//! the segment relaxation ([`crate::segments`]) and its warm start improved by the window
//! search ([`crate::lns`]), each with a share of the time limit, and the report says which
//! ran (`stop`: `window_search` or `not_attempted`).

use crate::error::Result;
use crate::exact::backend::BackendResult;
use crate::exact::solve::{coupled_note, Solve};
use crate::exact::{ExactEvent, ExactReport, Phase, WholeModelBound, WholeModelSearch};
use crate::exact::{Note, NoteAbout, WorkUnit};
use crate::lns::{improve_from_starts, LnsOptions, LnsStep, LnsStop, LnsSummary};
use crate::segments::{segment_bound_with, CoupledLp, PricedBound, SegmentOptions, SegmentStep};
use elk_stage::instance::Instance;
use elk_stage::method::StopReason;
use elk_stage::units::Cycles;
use std::time::Duration;

impl Solve<'_> {
    /// The bound and the search, then the report: the schedule is the warm start's only when
    /// the search improved nothing, and the stop says whether anything ran.
    pub(super) fn whole_model(mut self) -> Result<ExactReport> {
        self.too_large_note();
        let searching =
            self.opts.whole_model_search == WholeModelSearch::Window && self.warm.is_some();
        let price = self.whole_model_bound(searching)?;
        let search = if searching {
            self.window_search(price)?
        } else {
            None
        };
        let mut r = self.finish(BackendResult::nothing())?;
        if let Some(w) = r.work.as_mut() {
            w.unit = WorkUnit::Windows;
        }
        r.from_warm_start = r.schedule.is_some()
            && search
                .as_ref()
                .is_none_or(|s| s.makespan_cycles >= s.input_cycles);
        r.stop = if search.is_some() {
            StopReason::WindowSearch
        } else {
            StopReason::NotAttempted
        };
        r.search = search;
        Ok(r)
    }

    /// The segment relaxation's bound for an instance too large for the backend, recorded in
    /// `self.bounds` with notes, and the best price when one was searched. The coupled LP
    /// is the bound; given in the options, it is not solved again. With LPs the price search
    /// only finds the window search's start (no price beats the coupled LP), so it runs when
    /// the search follows (`searching`) or the coupled LP gave nothing; with MILP dual bounds
    /// it may beat the LP, so it runs. All of it gets a share of what is left of the time
    /// limit (60 s without one): half when the window search follows, else nine tenths (a
    /// tenth is kept for the report, so a hard-limit kill never loses the bound).
    fn whole_model_bound(&mut self, searching: bool) -> Result<Option<f64>> {
        let (inst, opts) = (self.inst, self.opts);
        if opts.whole_model == WholeModelBound::Off {
            return Ok(None);
        }
        let share = if searching { 0.5 } else { 0.9 };
        let time_limit = self.time_share(share).unwrap_or(Duration::from_secs(60));
        let lp_only = opts.whole_model == WholeModelBound::Lp;
        let seg_opts = SegmentOptions {
            lp_only,
            time_limit,
            price_search: searching || !lp_only,
            coupled: opts.coupled,
            ..SegmentOptions::default()
        };
        self.phase("segment relaxation");
        let (on, incumbent, roof) = (self.on, self.incumbent(), self.bound());
        let on_step = |step: &SegmentStep| {
            on(&ExactEvent::Segment {
                step: *step,
                incumbent,
                bound: step.best_bound.map_or(roof, |b| b.max(roof)),
            });
        };
        let found = segment_bound_with(inst, &seg_opts, &on_step)?;
        // Its LPs stop at the time limit only; one that reached it may have been cut.
        let layered = inst.layers().layers >= 2;
        self.time_cut |= match &found {
            Some(b) => b.seconds >= time_limit.as_secs_f64(),
            None => layered,
        };
        match &found {
            Some(b) => {
                let about = if b.price.is_some() {
                    NoteAbout::SegmentPrices
                } else {
                    NoteAbout::SegmentRelaxation
                };
                self.notes.push(Note::about(about, format!(
                    "segment relaxation: {} segments of {} layer(s), {} distinct, {} each{}",
                    b.segments,
                    b.layers_per_segment,
                    b.distinct,
                    if b.lp_only { "LP" } else { "MILP dual bound" },
                    b.price
                        .map(|p| format!(", best price μ = {p:.3}"))
                        .unwrap_or_default()
                )));
                self.phases.push(Phase {
                    what: "segment relaxation".into(),
                    seconds: b.seconds,
                });
                if !b.prices.is_empty() {
                    let (note, steps) = improvements(inst, &b.prices);
                    self.notes.push(note);
                    self.phases.extend(steps);
                }
                // A given coupled bound was noted when the solve started.
                if let (Some(c), None) = (b.coupled_cycles, opts.coupled.known()) {
                    self.notes.push(coupled_note(inst, Cycles(c)));
                }
                self.bounds.segment_cycles = Some(Cycles(b.bound_cycles));
            }
            None if inst.layers().layers < 2 => self.notes.push(Note::about(
                NoteAbout::SegmentRelaxation,
                "segment relaxation: not applicable (no repeated layers to cut the chain at)",
            )),
            None => self.notes.push(Note::about(NoteAbout::SegmentRelaxation, format!(
                "segment relaxation: {} within its share of the time limit ({}); raise --time-limit",
                if opts.coupled == CoupledLp::Skip {
                    "no price solved"
                } else {
                    "neither the coupled LP nor a price solved"
                },
                if searching { "half of it" } else { "nine tenths" }
            ))),
        }
        Ok(found.and_then(|b| b.price))
    }

    /// The window search ([`crate::lns`]) from the best schedule so far and, with the segment
    /// relaxation's `price`, from its options, with nine tenths of what is left of the limit
    /// (60 s without one) and, under a work budget, at most the window MILPs left of it; an
    /// improvement replaces `self.warm`.
    fn window_search(&mut self, price: Option<f64>) -> Result<Option<LnsSummary>> {
        let inst = self.inst;
        let Some((input, _)) = self.warm.clone() else {
            return Ok(None);
        };
        let opts = LnsOptions {
            time_limit: self
                .remaining()
                .map_or(Duration::from_secs(60), |r| r.mul_f64(0.9)),
            lower_bound: Some(self.bound()),
            max_windows: self.work_left(),
            ..LnsOptions::default()
        };
        self.phase("window search");
        let (on, bound, started) = (self.on, self.bound(), self.started);
        let on_step = |step: &LnsStep| {
            self.offer(step.schedule, step.incumbent);
            on(&ExactEvent::Phase {
                what: format!(
                    "window search: sweep {}, window {}/{} (operators {}..{}, loads may start {} stages earlier)",
                    step.sweep,
                    step.window,
                    step.windows,
                    step.ops.start,
                    step.ops.end,
                    step.earlier_stages
                ),
                incumbent: Some(step.incumbent),
                bound,
                elapsed_s: started.elapsed().as_secs_f64(),
            });
        };
        let found = improve_from_starts(inst, &input, price, &opts, &on_step)?;
        let s = &found.summary;
        self.work_used += s.windows_solved as u64;
        // Every step of the search stops at its time limit: one that reached it may be cut.
        self.time_cut |= s.stop == LnsStop::TimeLimit || s.seconds >= opts.time_limit.as_secs_f64();
        self.phases.push(Phase {
            what: "window search".into(),
            seconds: s.seconds,
        });
        // No wall-clock times in notes (the report's `search` has them).
        self.notes.push(Note::general(format!(
            "window search ({}): {:.4} → {:.4} ms in {} window MILPs ({} proven within their node limit), {} sweep(s), {} improvement(s)",
            match s.stop {
                LnsStop::Converged => "converged",
                LnsStop::TimeLimit => "time limit",
                LnsStop::WorkLimit => "work limit",
                LnsStop::MeetsBound => "meets the bound",
            },
            inst.ms(s.input_cycles),
            inst.ms(s.makespan_cycles),
            s.windows_solved,
            s.windows_optimal,
            s.sweeps,
            s.improvements.len()
        )));
        for r in &s.disagreements {
            self.notes.push(Note::about(
                NoteAbout::Bug,
                format!("BUG: window search: {r}"),
            ));
        }
        for r in &s.rejected {
            self.notes.push(Note::about(
                NoteAbout::Bug,
                format!("BUG: the simulator rejected a window search result: {r}"),
            ));
        }
        if s.makespan_cycles.get() < self.warm.as_ref().map_or(f64::INFINITY, |w| w.1) {
            self.warm = Some((found.schedule, s.makespan_cycles.get()));
        }
        Ok(Some(found.summary))
    }
}

/// Each price whose bound beat every earlier one: a note without times ("segment relaxation
/// bound by price: μ = 0 7.1340 ms, μ = 0.345 7.2410 ms") and, for `--timings`, a phase per
/// step whose seconds are those since the search started (notes stay byte-stable).
fn improvements(inst: &Instance, prices: &[PricedBound]) -> (Note, Vec<Phase>) {
    let mut best = f64::NEG_INFINITY;
    let better: Vec<&PricedBound> = prices
        .iter()
        .filter(|p| {
            let better = p.bound_cycles > best;
            best = best.max(p.bound_cycles);
            better
        })
        .collect();
    let ms = |p: &PricedBound| inst.ms(Cycles(p.bound_cycles));
    let steps: Vec<String> = better
        .iter()
        .map(|p| format!("μ = {:.3} {:.4} ms", p.price, ms(p)))
        .collect();
    let phases = better
        .iter()
        .map(|p| Phase {
            what: format!(
                "segment relaxation reached {:.4} ms (μ = {:.3}) after",
                ms(p),
                p.price
            ),
            seconds: p.at_s,
        })
        .collect();
    let note = format!("segment relaxation bound by price: {}", steps.join(", "));
    (Note::about(NoteAbout::SegmentPrices, note), phases)
}
