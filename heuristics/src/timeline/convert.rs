//! A timeline as stage-model decisions, the way the reference schedules were converted: the
//! options, the load order (the timeline's, operators without HBM data dropped), and the load
//! work — each load's H split over the stages its interval overlaps, in proportion to the
//! overlap (a stretched load spreads its H over its whole interval).
//!
//! Stage spans: stage k ≥ 1 is operator k − 1's execution interval; the prologue is
//! everything before operator 0. A wait before operator m (HBM busy, nothing executing)
//! belongs to operator m's stage for the loads of later operators, and to the stage before it
//! for operator m's own load (which must finish by then: SPEC §4's stage ≤ j rule).

use super::Timeline;
use elk_stage::instance::Instance;
use elk_stage::schedule::{Schedule, Work};
use elk_stage::units::{Cycles, OpId, Stage};

/// The timeline's decisions as a schedule (makespan left at 0: the judge prices it).
pub(crate) fn to_schedule(inst: &Instance, method: &str, t: &Timeline) -> Schedule {
    let load_order: Vec<OpId> = t
        .order
        .iter()
        .copied()
        .map(OpId)
        .filter(|&k| inst.is_load(k))
        .collect();
    let spans = Spans::of(&t.exec);
    let mut load_work = Vec::new();
    for &k in &load_order {
        let h = inst.op(k).hbm_cycles.get();
        let (a, b) = t.load[k.index()];
        let (prefix, tail) = spans.up_to(k.index());
        let pieces = split(prefix, tail, a, b, h);
        load_work.extend(pieces.into_iter().map(|(stage, cycles)| Work {
            op: k,
            stage: Stage(stage),
            cycles: Cycles(cycles),
        }));
    }
    Schedule::new(
        inst,
        method,
        t.options.clone(),
        load_order,
        load_work,
        Cycles::ZERO,
    )
}

/// The time segments of the whole timeline, each with the stage its load work goes to: (end
/// of the segment, stage), in time order (ends never decrease); the first is unbounded below.
/// Built once per timeline: the segments up to operator j's start are a prefix of it, plus
/// j's own wait ([`Spans::up_to`]), so converting n loads costs O(n log n), not O(n²).
/// A time segment: (its end, the stage its load work goes to).
type Segment = (f64, usize);

struct Spans {
    all: Vec<Segment>,
    /// `start[m]`: where operator m's segments (its wait, then its execution) begin in `all`.
    start: Vec<usize>,
    exec: Vec<(f64, f64)>,
}

impl Spans {
    fn of(exec: &[(f64, f64)]) -> Spans {
        let mut all = Vec::with_capacity(2 * exec.len() + 1);
        let mut start = Vec::with_capacity(exec.len());
        all.push((exec[0].0, 0));
        for (m, &(s, e)) in exec.iter().enumerate() {
            start.push(all.len());
            if m > 0 && s > exec[m - 1].1 {
                // The wait before operator m: m's stage for the loads of later operators.
                all.push((s, m + 1));
            }
            all.push((e, m + 1));
        }
        Spans {
            all,
            start,
            exec: exec.to_vec(),
        }
    }

    /// The segments up to operator `j`'s start: a prefix of [`Spans::all`], then the wait
    /// before j, if any, which belongs to the stage before j for j's own load (it must finish
    /// by then).
    fn up_to(&self, j: usize) -> (&[Segment], Option<Segment>) {
        let exec = &self.exec;
        let tail = (j > 0 && exec[j].0 > exec[j - 1].1).then(|| (exec[j].0, j));
        (&self.all[..self.start[j]], tail)
    }
}

/// `h` split over the segments (`prefix`, then `tail`) that `[a, b]` overlaps, in proportion;
/// the pieces sum to `h` exactly (the largest absorbs the rounding). Pieces of one stage are
/// merged. Segments ending by `a` take nothing, so the walk starts at the first one ending
/// after it (found by bisection: the ends never decrease).
fn split(prefix: &[Segment], tail: Option<Segment>, a: f64, b: f64, h: f64) -> Vec<(usize, f64)> {
    let len = b - a;
    let mut pieces: Vec<(usize, f64)> = Vec::new();
    let mut add = |stage: usize, x: f64| match pieces.last_mut() {
        Some(p) if p.0 == stage => p.1 += x,
        _ => pieces.push((stage, x)),
    };
    let mut lo = a;
    let first = if len > 0.0 {
        prefix.partition_point(|&(end, _)| end <= a)
    } else {
        0
    };
    for &(end, stage) in prefix[first..].iter().chain(tail.as_ref()) {
        let hi = end.min(b);
        if len > 0.0 && hi > lo {
            add(stage, h * (hi - lo) / len);
            lo = hi;
        }
        if end >= b {
            break;
        }
    }
    if pieces.is_empty() {
        // Zero length or past every segment (loads end by their operator's start): whole
        // into the last segment it reaches.
        let at = prefix.partition_point(|&(end, _)| end < b);
        let stage = prefix
            .get(at)
            .copied()
            .or(tail)
            .or(prefix.last().copied())
            .map_or(0, |s| s.1);
        return vec![(stage, h)];
    }
    let total: f64 = pieces.iter().map(|p| p.1).sum();
    let big = (0..pieces.len())
        .max_by(|&x, &y| pieces[x].1.total_cmp(&pieces[y].1))
        .unwrap_or(0);
    pieces[big].1 += h - total;
    pieces
}

#[cfg(test)]
mod tests {
    use super::{split, Spans};

    /// The segments up to operator j's start, as one list.
    fn spans(exec: &[(f64, f64)], j: usize) -> Vec<(f64, usize)> {
        let all = Spans::of(exec);
        let (prefix, tail) = all.up_to(j);
        prefix.iter().copied().chain(tail).collect()
    }

    #[test]
    fn a_load_splits_in_proportion_to_its_overlap_with_each_stage() {
        // Segments: prologue up to -10, stage 1 to -6, stage 2 to 0.
        let spans = [(-10.0, 0), (-6.0, 1), (0.0, 2)];
        // [-12, -4] overlaps the prologue by 2, stage 1 by 4, stage 2 by 2; H = 4 (stretched).
        assert_eq!(
            split(&spans, None, -12.0, -4.0, 4.0),
            vec![(0, 1.0), (1, 2.0), (2, 1.0)]
        );
        // Inside one stage: all of it there.
        assert_eq!(split(&spans, None, -9.0, -7.0, 2.0), vec![(1, 2.0)]);
        // Touching a boundary does not make a zero piece.
        assert_eq!(split(&spans, None, -10.0, -6.0, 4.0), vec![(1, 4.0)]);
    }

    #[test]
    fn a_wait_goes_to_the_operators_stage_except_for_its_own_load() {
        // Operator 0 runs [-10, -8], a wait, operator 1 runs [-5, -3], operator 2 [-3, 0].
        let exec = [(-10.0, -8.0), (-5.0, -3.0), (-3.0, 0.0)];
        // Operator 1's own load, in the wait: stage 1 (operator 0's).
        assert_eq!(
            split(&spans(&exec, 1), None, -7.0, -5.0, 2.0),
            vec![(1, 2.0)]
        );
        // Operator 2's load in the same wait: stage 2 (operator 1's), where it is resident.
        assert_eq!(
            split(&spans(&exec, 2), None, -7.0, -5.0, 2.0),
            vec![(2, 2.0)]
        );
        assert_eq!(
            split(&spans(&exec, 2), None, -9.0, -4.0, 5.0),
            vec![(1, 1.0), (2, 4.0)]
        );
    }
}
