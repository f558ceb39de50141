//! The window search: a large-neighbourhood search for whole models that starts from a
//! schedule (the best heuristic's) and improves it one window of consecutive operators at a
//! time (issue 15 item 2).
//!
//! Each step solves the MILP of `window`: the whole model's load work as in re-timing, with
//! the options of the window's operators free and, in the larger neighbourhood, the window's
//! loads allowed to start earlier. A step's result is kept only if the simulator judges it
//! valid and faster; its changes are then copied to every identical layer (`replicate`).
//! The windows are fixed (`sweep_order`); the neighbourhood grows when a sweep improves
//! nothing. Each window MILP is limited in branch-and-bound nodes and solved on one thread
//! with a fixed seed, so the sequence of schedules does not depend on the machine's speed —
//! only where the time limit cuts it does (a window budget, [`LnsOptions::max_windows`],
//! stops it at the same window on every machine). docs/exact.md, "The window search", has the model
//! and measurements.

mod replicate;
mod starts;
mod window;

pub use starts::improve_from_starts;

use std::ops::Range;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::prune::prune;
use crate::retime::retime;
use crate::tolerance::OBJECTIVE_TOLERANCE;
use elk_stage::instance::Instance;
use elk_stage::period::LayerStructure;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};

/// How to search.
#[derive(Clone, Debug)]
pub struct LnsOptions {
    /// Operators per window, windows half a window apart; `None`: one layer, aligned with
    /// the layers (32 operators without repeated layers).
    pub window_ops: Option<usize>,
    /// Wall-clock limit for the whole search (re-timing, every window, judging).
    pub time_limit: Duration,
    /// Stages before its input start a window load may start in; `None`: one layer's
    /// operators (32 without repeated layers).
    pub earlier_stages: Option<usize>,
    /// Branch-and-bound nodes per window MILP.
    pub max_nodes: i32,
    /// Most sweeps in all.
    pub max_sweeps: usize,
    /// A proven lower bound: the search stops when the incumbent meets it (it is optimal).
    pub lower_bound: Option<Cycles>,
    /// At most this many window MILPs (`--work-limit`): where the search stops then does
    /// not depend on the machine's speed, and the time limit is only a hard stop on top
    /// (the LPs around the windows — re-timing, the starts' queues — get all of it).
    pub max_windows: Option<u64>,
}

impl Default for LnsOptions {
    fn default() -> Self {
        LnsOptions {
            window_ops: None,
            earlier_stages: None,
            time_limit: Duration::from_secs(60),
            max_nodes: 200,
            max_sweeps: 12,
            lower_bound: None,
            max_windows: None,
        }
    }
}

/// The method name of the search's schedules.
pub const LNS_METHOD: &str = "window-search";

/// A step of the search, as it starts (for a progress display; nothing depends on it).
#[derive(Clone, Debug, Serialize)]
pub struct LnsStep<'a> {
    /// Sweep number, from 1.
    pub sweep: usize,
    /// Window number in the sweep, from 1.
    pub window: usize,
    /// Windows per sweep.
    pub windows: usize,
    /// The window's operators.
    pub ops: Range<usize>,
    /// How many stages before its input start a window load may start.
    pub earlier_stages: usize,
    /// The incumbent's makespan.
    pub incumbent: Cycles,
    /// The incumbent (valid, judged: its makespan is `incumbent`).
    pub schedule: &'a Schedule,
    /// Seconds since the search started.
    pub elapsed_s: f64,
}

/// An improvement of the incumbent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LnsImprovement {
    /// Seconds since the search started.
    pub at_s: f64,
    /// The new makespan (the simulator's).
    pub makespan_cycles: Cycles,
    /// What produced it: "re-timing" or "window OPS (sweep S)".
    pub by: String,
}

/// How the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LnsStop {
    /// A sweep of the largest neighbourhood improved nothing (or the sweep limit was
    /// reached).
    Converged,
    /// The time limit was reached.
    TimeLimit,
    /// The window budget ([`LnsOptions::max_windows`]) was used up.
    WorkLimit,
    /// The incumbent meets the lower bound it was given: optimal.
    MeetsBound,
}

/// What the search found.
#[derive(Clone, Debug)]
pub struct LnsReport {
    /// The best schedule: the input (renamed) when nothing improved it. Judged valid.
    pub schedule: Schedule,
    /// What the search did.
    pub summary: LnsSummary,
}

/// What the search did (in [`crate::ExactReport::search`] for whole models).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LnsSummary {
    /// The input's makespan (the simulator's).
    pub input_cycles: Cycles,
    /// The best schedule's makespan (the simulator's).
    pub makespan_cycles: Cycles,
    /// Each improvement in order.
    pub improvements: Vec<LnsImprovement>,
    /// Window MILPs solved.
    pub windows_solved: usize,
    /// Of which proven optimal within their node limit.
    pub windows_optimal: usize,
    /// Window results the simulator rejected (a bug: reported, never kept).
    pub rejected: Vec<String>,
    /// Window results whose MILP objective differs from the simulator's makespan by more
    /// than solver tolerance (a bug: reported; the simulator's makespan is the one used).
    pub disagreements: Vec<String>,
    /// Sweeps started.
    pub sweeps: usize,
    /// The largest window model: columns, of which binary, and rows.
    pub window_columns: usize,
    /// See `window_columns`.
    pub window_binaries: usize,
    /// See `window_columns`.
    pub window_rows: usize,
    /// How it ended.
    pub stop: LnsStop,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The windows of one sweep, in the order they are tried. With repeated layers: windows of
/// one layer's length starting at each layer's first operator and half a layer later, one
/// from operator 0 when there is a prologue, and one ending at the last operator. Those of the
/// first layer, the prologue's and the last two come first: their improvements are copied to
/// every layer, so the windows of the middle layers, which would find them again, come last.
/// Without repeated layers: [`windows`] of `len` (default 32) operators. Also returns how
/// many windows lead the order (all of them without repeated layers).
fn sweep_order(
    n: usize,
    len: Option<usize>,
    layers: &LayerStructure,
) -> (Vec<Range<usize>>, usize) {
    if layers.layers < 2 || len.is_some() {
        let all = windows(n, len.unwrap_or(32));
        let count = all.len();
        return (all, count);
    }
    let period = layers.ops_per_layer.max(1);
    let half = (period / 2).max(1);
    let clip = |s: usize| s..(s + period).min(n);
    let mut body: Vec<Range<usize>> = (0..layers.layers)
        .flat_map(|l| {
            let s = layers.prologue + l * period;
            [clip(s), clip(s + half)]
        })
        .filter(|w| w.start < n)
        .collect();
    let mut first: Vec<Range<usize>> = body.drain(..2.min(body.len())).collect();
    if layers.prologue > 0 {
        first.push(clip(0));
    }
    let last = n.saturating_sub(period)..n;
    let tail: Vec<Range<usize>> = body.drain(body.len().saturating_sub(1)..).collect();
    first.extend(tail);
    first.push(last);
    first.dedup();
    let distinct = first.len();
    first.extend(body);
    (first, distinct)
}

/// `len` operators, `len / 2` apart, the last ending at `n`.
fn windows(n: usize, len: usize) -> Vec<Range<usize>> {
    let len = len.clamp(1, n.max(1));
    let step = (len / 2).max(1);
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + len).min(n);
        out.push(start..end);
        if end == n {
            return out;
        }
        start += step;
    }
}

/// `t` is faster than `than` by more than solver tolerance.
fn better(t: Cycles, than: Cycles) -> bool {
    t.get() < than.get() * (1.0 - 1e-9)
}

/// `after`'s option changes copied to every layer and re-timed, if that is faster.
fn copied(
    inst: &Instance,
    before: &Schedule,
    after: &Schedule,
    left: Duration,
) -> Result<Option<(Schedule, Cycles)>> {
    // Options alone (re-timing then moves the work), and options with the window's work.
    let mut best: Option<(Schedule, Cycles)> = None;
    for with_work in [false, true] {
        let Some(copy) = replicate::copy_to_layers(inst, before, after, with_work) else {
            continue;
        };
        let r = retime(inst, &copy, LNS_METHOD, Some(left))?;
        let to_beat = best.as_ref().map_or(after.makespan_cycles, |b| b.1);
        if better(r.makespan_cycles, to_beat) {
            best = Some((r.schedule, r.makespan_cycles));
        }
    }
    Ok(best)
}

/// Searches from `input` (a valid schedule of `inst`) for `opts.time_limit`, telling `on` of
/// each window as it starts.
pub fn improve(
    inst: &Instance,
    input: &Schedule,
    opts: &LnsOptions,
    on: &dyn Fn(&LnsStep),
) -> Result<LnsReport> {
    let started = Instant::now();
    let left = || opts.time_limit.saturating_sub(started.elapsed());
    let first = retime(inst, input, LNS_METHOD, Some(left()))?;
    let retimed = first.improved();
    let mut schedule = first.schedule;
    let mut report = LnsSummary {
        input_cycles: first.input_cycles,
        makespan_cycles: first.makespan_cycles,
        improvements: Vec::new(),
        windows_solved: 0,
        windows_optimal: 0,
        rejected: Vec::new(),
        disagreements: Vec::new(),
        sweeps: 0,
        window_columns: 0,
        window_binaries: 0,
        window_rows: 0,
        stop: LnsStop::Converged,
        seconds: 0.0,
    };
    if retimed {
        report.improvements.push(LnsImprovement {
            at_s: started.elapsed().as_secs_f64(),
            makespan_cycles: first.makespan_cycles,
            by: "re-timing".into(),
        });
    }
    let layers = inst.layers();
    let (plan, distinct) = sweep_order(inst.ops.len(), opts.window_ops, &layers);
    let pruned = prune(inst);
    let earlier = opts.earlier_stages.unwrap_or(if layers.layers >= 2 {
        layers.ops_per_layer
    } else {
        32
    });
    // Neighbourhoods from small to large: (windows of the plan, stages a load may start
    // earlier). A sweep that improves nothing moves on to the next; the last one ends it.
    let mut levels = vec![(distinct, 0), (distinct, earlier)];
    if distinct < plan.len() {
        levels.extend([(plan.len(), 0), (plan.len(), earlier)]);
    }
    levels.dedup();
    let mut level = 0;
    'sweeps: for sweep in 1..=opts.max_sweeps {
        let Some(&(count, earlier)) = levels.get(level) else {
            break;
        };
        report.sweeps = sweep;
        let mut improved = false;
        for (i, ops) in plan[..count].iter().enumerate() {
            if opts
                .lower_bound
                .is_some_and(|b| crate::meets_bound(report.makespan_cycles, b))
            {
                report.stop = LnsStop::MeetsBound;
                break 'sweeps;
            }
            if opts
                .max_windows
                .is_some_and(|m| report.windows_solved as u64 >= m)
            {
                report.stop = LnsStop::WorkLimit;
                break 'sweeps;
            }
            if left().is_zero() {
                report.stop = LnsStop::TimeLimit;
                break 'sweeps;
            }
            on(&LnsStep {
                sweep,
                window: i + 1,
                windows: count,
                ops: ops.clone(),
                earlier_stages: earlier,
                incumbent: report.makespan_cycles,
                schedule: &schedule,
                elapsed_s: started.elapsed().as_secs_f64(),
            });
            let model = window::build(inst, &schedule, &pruned, ops.clone(), earlier)?;
            report.window_columns = report.window_columns.max(model.columns);
            report.window_binaries = report.window_binaries.max(model.binaries);
            report.window_rows = report.window_rows.max(model.rows);
            let limit = left().as_secs_f64();
            let result = model.solve(inst, &schedule, LNS_METHOD, limit, opts.max_nodes)?;
            report.windows_solved += 1;
            report.windows_optimal += usize::from(result.optimal);
            let Some(mut s) = result.schedule else {
                continue;
            };
            let objective = s.makespan_cycles;
            let judged = elk_sim::judged_makespan(inst, &s);
            if let Ok(t) = judged {
                let rel = (t.get() - objective.get()).abs() / objective.get().max(1.0);
                if rel > OBJECTIVE_TOLERANCE {
                    report.disagreements.push(format!(
                        "window {}..{}: MILP objective {:.4} cycles vs simulator {:.4} (relative {rel:.2e})",
                        ops.start,
                        ops.end,
                        objective.get(),
                        t.get()
                    ));
                }
            }
            match judged {
                Ok(t) if better(t, report.makespan_cycles) => {
                    s.makespan_cycles = t;
                    let before = std::mem::replace(&mut schedule, s);
                    report.makespan_cycles = t;
                    improved = true;
                    let at_s = started.elapsed().as_secs_f64();
                    let by = format!("window {}..{} (sweep {sweep})", ops.start, ops.end);
                    report.improvements.push(LnsImprovement {
                        at_s,
                        makespan_cycles: t,
                        by,
                    });
                    if let Some((copy, t)) = copied(inst, &before, &schedule, left())? {
                        schedule = copy;
                        report.makespan_cycles = t;
                        report.improvements.push(LnsImprovement {
                            at_s: started.elapsed().as_secs_f64(),
                            makespan_cycles: t,
                            by: format!(
                                "window {}..{}'s changes copied to every layer",
                                ops.start, ops.end
                            ),
                        });
                    }
                }
                Ok(_) => {}
                Err(v) => report
                    .rejected
                    .push(format!("window {}..{}: {v}", ops.start, ops.end)),
            }
        }
        if !improved {
            level += 1;
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(LnsReport {
        schedule,
        summary: report,
    })
}

#[cfg(test)]
mod tests {
    use super::{sweep_order, windows};
    use elk_stage::period::LayerStructure;

    #[test]
    fn windows_overlap_by_half_and_cover_every_operator() {
        assert_eq!(windows(10, 4), vec![0..4, 2..6, 4..8, 6..10]);
        assert_eq!(windows(9, 4), vec![0..4, 2..6, 4..8, 6..9]);
        assert_eq!(windows(3, 8), vec![0..3]);
        assert_eq!(windows(5, 1), vec![0..1, 1..2, 2..3, 3..4, 4..5]);
    }

    #[test]
    fn a_sweep_tries_the_first_layer_and_the_ends_first() {
        // 2 prologue operators, 4 layers of 4, 1 epilogue operator: 19 operators.
        let layers = LayerStructure {
            prologue: 2,
            ops_per_layer: 4,
            layers: 4,
            epilogue: 1,
        };
        let (plan, distinct) = sweep_order(19, None, &layers);
        assert_eq!(distinct, 5);
        assert_eq!(
            plan,
            vec![
                2..6,
                4..8,
                0..4,
                16..19,
                15..19,
                6..10,
                8..12,
                10..14,
                12..16,
                14..18
            ]
        );
        // Every operator is in some window.
        assert!((0..19).all(|i| plan.iter().any(|w| w.contains(&i))));
    }
}
