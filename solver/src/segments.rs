//! A lower bound for whole models, stronger than the roofline: the **segment relaxation with
//! priced boundaries** (proof in docs/exact.md, "Whole models").
//!
//! The chain is cut into segments of whole layers (the first takes the embeddings, the last
//! the head). Segment s is solved on its own, with two changes at its edges, both priced at
//! the same μ ∈ [0, 1]:
//! - its stage 0 stands for every stage before it: its own loads' work done there costs μ
//!   per HBM cycle (and is limited by SRAM through the memory rows of its stages);
//! - later segments' loads may be absorbed into its stages as HBM cycles that cost the least
//!   NoC any of them can (ν_min of their options) and no memory, credited μ per cycle, at
//!   most their total.
//!
//! Over the whole chain the cycles absorbed equal the cycles charged, so for any schedule
//! T = Σ_s (its stages − μ·absorbed + μ·charged) ≥ Σ_s L_s(μ), where L_s is the segment
//! problem's optimum — or any lower bound of it, such as its LP relaxation or a MILP dual
//! bound. Identical middle layers give one problem, solved once.
//!
//! [`coupled_segment_bound`] solves the same problems as one LP with the priced equation
//! kept, one per ν value: at least as tight as every price, and what [`segment_bound`]
//! reports when it searches the prices.

use std::ops::Range;
use std::time::{Duration, Instant};

use elk_stage::instance::{Instance, InstanceOp, LoadOrder, NamedOrder};
use elk_stage::units::{Cycles, OpId};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::milp::{boundary_bound, boundary_lp_options, Absorb, AbsorbClass, Boundary};

mod coupled;
pub use coupled::{
    coupled_segment_bound, coupled_segment_bound_with, rounded_partition, Classes, CoupledBound,
    Round, START_DIGITS,
};

/// How to compute the bound.
#[derive(Clone, Debug)]
pub struct SegmentOptions {
    /// Layers per segment (≥ 1): longer segments are tighter and slower.
    pub layers_per_segment: usize,
    /// The prices μ ∈ [0, 1] to try (the best total is the bound); empty: a search
    /// (cutting planes for LPs, golden section for MILPs).
    pub prices: Vec<f64>,
    /// Solve each segment's LP relaxation only (fast, weaker) instead of its MILP.
    pub lp_only: bool,
    /// Wall-clock limit for all segment solves together.
    pub time_limit: Duration,
    /// With `prices` empty and `lp_only`: also search the best price after the coupled LP
    /// (its options start the window search; the bound stays the coupled LP's). When false,
    /// the price search runs only if the coupled LP gives nothing.
    pub price_search: bool,
    /// The coupled LP (with `prices` empty): solved here, known already, or skipped.
    pub coupled: CoupledLp,
}

/// The coupled LP's part in a segment bound: what a caller that dealt with it first says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoupledLp {
    /// Solve it (with the time limit of the whole).
    #[default]
    Solve,
    /// Its bound of this instance with these layers per segment, computed already (read
    /// from a cache, or by the caller): used instead of solving the LP again.
    Known(Cycles),
    /// The caller's attempt ran out of time: not tried again, the price search is the bound.
    Skip,
}

impl CoupledLp {
    /// The bound, when known.
    pub fn known(self) -> Option<Cycles> {
        match self {
            CoupledLp::Known(c) => Some(c),
            _ => None,
        }
    }
}

impl Default for SegmentOptions {
    fn default() -> Self {
        SegmentOptions {
            layers_per_segment: 1,
            prices: Vec::new(),
            lp_only: false,
            time_limit: Duration::from_secs(60),
            price_search: true,
            coupled: CoupledLp::Solve,
        }
    }
}

/// `fnv1a64:…` of everything a segment bound depends on besides its instance: this module,
/// the MILP encoding it solves (LPs included) and the lock file (HiGHS's version), so a bound
/// cached under it is never reused by code that would compute another.
pub fn fingerprint() -> &'static str {
    static FINGERPRINT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        sources_fingerprint(&[
            include_str!("segments.rs"),
            include_str!("segments/coupled.rs"),
            include_str!("milp.rs"),
            include_str!("milp/encode.rs"),
            include_str!("milp/encode/columns.rs"),
            include_str!("milp/encode/rows.rs"),
            include_str!("milp/encode/order.rs"),
            include_str!("milp/encode/lift.rs"),
            include_str!("milp/warm.rs"),
            include_str!("../../Cargo.lock"),
        ])
    })
}

/// `fnv1a64:…` of `sources`, each followed by a 0 byte: the code part of a cached bound's key.
pub(crate) fn sources_fingerprint(sources: &[&str]) -> String {
    let mut h = elk_stage::hash::Fnv1a64::default();
    for s in sources {
        h.update(s.as_bytes());
        h.update(&[0]);
    }
    h.finish()
}

/// Every segment bound is lowered by this relative amount before it is summed.
pub const SAFETY: f64 = 1e-6;

/// The bound at one price.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PricedBound {
    /// μ.
    pub price: f64,
    /// Σ_s L_s(μ), cycles.
    pub bound_cycles: f64,
    /// Every segment problem was solved to optimality (MILP closed).
    pub closed: bool,
    /// Seconds from the start of the search to this price's bound (wall clock).
    pub at_s: f64,
}

/// The segment relaxation's result.
#[derive(Clone, Debug, Serialize)]
pub struct SegmentBound {
    /// The best bound: of the prices tried and the coupled LP, cycles.
    pub bound_cycles: f64,
    /// The coupled LP's bound ([`coupled_segment_bound`]), computed before the price search
    /// when the prices are searched (`None`: not computed, or not finished in time).
    pub coupled_cycles: Option<f64>,
    /// The price that gave the best priced bound (`None`: no price was searched, the bound is
    /// the coupled LP's).
    pub price: Option<f64>,
    /// Segments the chain was cut into.
    pub segments: usize,
    /// Distinct segment problems (identical layers share one).
    pub distinct: usize,
    /// Layers per segment.
    pub layers_per_segment: usize,
    /// LP relaxations only.
    pub lp_only: bool,
    /// Every price tried that finished in time.
    pub prices: Vec<PricedBound>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Where the search is, reported to the callback of [`segment_bound_with`] just before each
/// segment problem is solved (a progress display; nothing is computed from it).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentStep {
    /// The price μ being evaluated.
    pub price: f64,
    /// Which price this is, from 1.
    pub price_index: usize,
    /// The most prices the search tries ([`GOLDEN_STEPS`], or the prices given).
    pub max_prices: usize,
    /// The segment problem about to be solved, from 1 (identical layers share one).
    pub problem: usize,
    /// Distinct segment problems per price.
    pub problems: usize,
    /// The best bound of the prices finished so far.
    pub best_bound: Option<Cycles>,
    /// Wall-clock seconds since the search started.
    pub elapsed_s: f64,
}

/// One segment of the chain.
struct Segment {
    ops: Range<usize>,
    first: bool,
    last: bool,
    /// HBM cycles of loads after the segment that may work inside it (the absorption cap).
    later_hbm: f64,
    /// Per ν of the chain's loads ([`nu_values`], ascending), the HBM cycles of those loads
    /// with an option of that ν.
    later_by_nu: Vec<(f64, f64)>,
}

/// Identical segments, solved once.
struct Group {
    sub: Instance,
    first: bool,
    last: bool,
    cap: f64,
    /// Per ν value, the largest of the members' `later_by_nu`.
    by_nu: Vec<(f64, f64)>,
    count: usize,
}

impl Group {
    /// The least ν of any later load's option of any member (0 when nothing comes later):
    /// the least ν with later work.
    fn least_later_nu(&self) -> f64 {
        self.by_nu
            .iter()
            .find(|(_, cap)| *cap > 0.0)
            .map_or(0.0, |&(nu, _)| nu)
    }

    /// The group's boundary terms at `price`: a priced prologue unless it opens the chain, a
    /// priced absorption unless it closes it.
    fn boundary(&self, price: f64) -> Boundary {
        Boundary {
            prologue_price: (!self.first).then_some(price),
            absorb: (!self.last).then(|| Absorb {
                price,
                cap: self.cap,
                classes: vec![AbsorbClass {
                    nu: self.least_later_nu(),
                    cap: self.cap,
                }],
            }),
        }
    }
}

/// Cuts the chain into segments of `per` layers; `None` when it has fewer than two layers
/// or segments (the exact model of a single segment is the instance itself).
fn segments(inst: &Instance, per: usize) -> Option<Vec<Segment>> {
    let layers = inst.layers();
    if layers.layers < 2 || per == 0 {
        return None;
    }
    let count = layers.layers.div_ceil(per);
    if count < 2 {
        return None;
    }
    let n = inst.ops.len();
    let mut cuts: Vec<usize> = (1..count)
        .map(|s| layers.prologue + s * per * layers.ops_per_layer)
        .collect();
    cuts.insert(0, 0);
    cuts.push(n);
    let nus = nu_values(inst);
    let out = cuts
        .windows(2)
        .enumerate()
        .map(|(s, w)| {
            let end = w[1];
            // Later loads that may work in a stage ≤ end (the segment's last stage).
            let later: Vec<usize> = (end..n)
                .filter(|&j| inst.is_load(OpId(j)) && inst.window_start(OpId(j)).index() <= end)
                .collect();
            Segment {
                ops: w[0]..end,
                first: s == 0,
                last: s + 1 == count,
                later_hbm: later.iter().map(|&j| inst.ops[j].hbm_cycles.get()).sum(),
                later_by_nu: hbm_by_nu(inst, &nus, &later),
            }
        })
        .collect();
    Some(out)
}

/// Every ν of any load's option in `inst`, ascending, each once.
fn nu_values(inst: &Instance) -> Vec<f64> {
    let mut nus: Vec<f64> = inst
        .ops
        .iter()
        .enumerate()
        .filter(|(j, _)| inst.is_load(OpId(*j)))
        .flat_map(|(_, op)| op.options.iter().map(|o| o.noc_per_hbm))
        .collect();
    nus.sort_by(f64::total_cmp);
    nus.dedup_by(|a, b| a.to_bits() == b.to_bits());
    nus
}

/// Per ν of `nus` (ascending), the HBM cycles of the loads `later` with an option of that ν.
fn hbm_by_nu(inst: &Instance, nus: &[f64], later: &[usize]) -> Vec<(f64, f64)> {
    let mut hbm = vec![0.0; nus.len()];
    for &j in later {
        let op = &inst.ops[j];
        let mut seen: Vec<usize> = op
            .options
            .iter()
            .filter_map(|o| nus.binary_search_by(|nu| nu.total_cmp(&o.noc_per_hbm)).ok())
            .collect();
        seen.sort_unstable();
        seen.dedup();
        for c in seen {
            hbm[c] += op.hbm_cycles.get();
        }
    }
    nus.iter().copied().zip(hbm).collect()
}

/// The segment as an instance of its own. A displacement-bounded order is relaxed to a free
/// one (its restriction to a segment need not respect the bound's ranks).
fn sub_instance(inst: &Instance, ops: Range<usize>) -> Instance {
    let load_order = match inst.load_order {
        LoadOrder::Named(NamedOrder::Fixed) => LoadOrder::Named(NamedOrder::Fixed),
        _ => LoadOrder::Named(NamedOrder::Free),
    };
    Instance {
        name: format!("{}, ops {}..{}", inst.name, ops.start, ops.end),
        load_order,
        ops: inst.ops[ops]
            .iter()
            .map(|op| InstanceOp {
                name: String::new(),
                ..op.clone()
            })
            .collect(),
        ..inst.clone()
    }
}

fn groups(inst: &Instance, segs: &[Segment]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for seg in segs {
        let sub = sub_instance(inst, seg.ops.clone());
        match groups
            .iter_mut()
            .find(|g| g.first == seg.first && g.last == seg.last && g.sub.ops == sub.ops)
        {
            // A larger cap and a smaller ν only relax: the group's problem is valid for
            // every member.
            Some(g) => {
                g.count += 1;
                g.cap = g.cap.max(seg.later_hbm);
                for (mine, theirs) in g.by_nu.iter_mut().zip(&seg.later_by_nu) {
                    mine.1 = mine.1.max(theirs.1);
                }
            }
            None => groups.push(Group {
                sub,
                first: seg.first,
                last: seg.last,
                cap: seg.later_hbm,
                by_nu: seg.later_by_nu.clone(),
                count: 1,
            }),
        }
    }
    groups
}

/// The segment relaxation bound of `inst`, or `None` when the chain has too few layers to
/// cut or no price finished within the time limit. Prices: `opts.prices` when given, else a
/// search over [0, 1] with at most [`GOLDEN_STEPS`] evaluations: cutting planes on the LP's
/// slopes, golden section for MILP dual bounds (the LP bound is concave in μ, so both find
/// its maximum; every price tried is a valid bound).
pub fn segment_bound(inst: &Instance, opts: &SegmentOptions) -> Result<Option<SegmentBound>> {
    segment_bound_with(inst, opts, &|_| {})
}

/// [`segment_bound`], calling `progress` before each segment problem is solved (the bound
/// is the same: the callback only watches).
pub fn segment_bound_with(
    inst: &Instance,
    opts: &SegmentOptions,
    progress: &dyn Fn(&SegmentStep),
) -> Result<Option<SegmentBound>> {
    let start = Instant::now();
    let Some(segs) = segments(inst, opts.layers_per_segment) else {
        return Ok(None);
    };
    let groups = groups(inst, &segs);
    // The coupled LP is at least the priced LPs' maximum (docs/exact.md) and takes seconds,
    // so it goes first; the price search still runs for its price (the window search's start).
    let coupled = match (opts.coupled, opts.prices.is_empty()) {
        (CoupledLp::Known(c), true) => Some(c.get()),
        (CoupledLp::Solve, true) => coupled::bound_of(
            inst,
            &segs,
            &groups,
            opts.time_limit,
            coupled::Classes::LAZY,
        )?
        .map(|c| c.bound_cycles),
        _ => None,
    };
    let found = |bound_cycles: f64, price: Option<f64>, prices: Vec<PricedBound>| SegmentBound {
        bound_cycles,
        coupled_cycles: coupled,
        price,
        segments: segs.len(),
        distinct: groups.len(),
        layers_per_segment: opts.layers_per_segment,
        lp_only: opts.lp_only,
        prices,
        seconds: start.elapsed().as_secs_f64(),
    };
    if let (Some(c), false, true) = (coupled, opts.price_search, opts.lp_only) {
        return Ok(Some(found(c, None, Vec::new())));
    }
    let planned = if opts.prices.is_empty() {
        GOLDEN_STEPS
    } else {
        opts.prices.len()
    };
    let mut eval = Evaluator {
        groups: &groups,
        lp_only: opts.lp_only,
        started: start,
        deadline: start + opts.time_limit,
        solves_left: planned * groups.len(),
        tried: Vec::new(),
        planned,
        progress,
    };
    if opts.prices.is_empty() && opts.lp_only {
        cutting_planes(&mut eval)?;
    } else if opts.prices.is_empty() {
        golden(&mut eval)?;
    } else {
        for &price in &opts.prices {
            eval.at(price)?;
        }
    }
    let prices = eval.tried;
    let best = prices
        .iter()
        .copied()
        .max_by(|a, b| a.bound_cycles.total_cmp(&b.bound_cycles));
    // With LPs the coupled LP is the bound whenever it was solved: no price can beat it (the
    // theorem of docs/exact.md), and a price a tolerance above it would make this bound differ
    // from the one `compare` and the sweeps report. MILP dual bounds may beat it.
    let bound = match (coupled, best) {
        (Some(c), _) if opts.lp_only => c,
        (Some(c), Some(b)) => c.max(b.bound_cycles),
        (Some(c), None) => c,
        (None, Some(b)) => b.bound_cycles,
        (None, None) => return Ok(None),
    };
    Ok(Some(found(bound, best.map(|b| b.price), prices)))
}

/// The options the segment relaxation picks at `price` for every operator of `inst`: each
/// segment takes its group's LP solution, option columns rounded to the largest (the
/// segment MILPs' pick the same options on Llama2-70B at 12 TB/s, in 257 s instead of 4 s);
/// `None` when the chain has too few layers or an LP found no solution within `time_limit`.
pub fn relaxation_options(
    inst: &Instance,
    price: f64,
    time_limit: Duration,
) -> Result<Option<Vec<usize>>> {
    let Some(segs) = segments(inst, 1) else {
        return Ok(None);
    };
    let groups = groups(inst, &segs);
    let mut chosen = Vec::new();
    for g in &groups {
        let Some(o) = boundary_lp_options(&g.sub, g.boundary(price), time_limit)? else {
            return Ok(None);
        };
        chosen.push(o);
    }
    let mut options = vec![0; inst.ops.len()];
    for seg in &segs {
        let sub = sub_instance(inst, seg.ops.clone());
        let Some(k) = groups
            .iter()
            .position(|g| g.first == seg.first && g.last == seg.last && g.sub.ops == sub.ops)
        else {
            return Ok(None);
        };
        options[seg.ops.clone()].copy_from_slice(&chosen[k]);
    }
    Ok(Some(options))
}

/// Prices evaluated by the golden-section search.
pub const GOLDEN_STEPS: usize = 7;

/// Evaluates Σ_s L_s(μ) within the time limit.
struct Evaluator<'a> {
    groups: &'a [Group],
    lp_only: bool,
    started: Instant,
    deadline: Instant,
    /// Segment solves still planned (each gets an even share of the time left).
    solves_left: usize,
    tried: Vec<PricedBound>,
    /// Prices the search may try (for the progress display).
    planned: usize,
    progress: &'a dyn Fn(&SegmentStep),
}

impl Evaluator<'_> {
    /// The bound at `price`, or `None` when a segment was not solved in time.
    fn at(&mut self, price: f64) -> Result<Option<f64>> {
        Ok(self.with_slope(price)?.map(|b| b.0))
    }

    /// The bound at `price` and, for LPs, its slope in the price (a supergradient of the
    /// concave Σ_s L_s(μ)); `None` when a segment was not solved in time.
    fn with_slope(&mut self, price: f64) -> Result<Option<(f64, Option<f64>)>> {
        let price = price.clamp(0.0, 1.0);
        let mut total = 0.0;
        let mut slope = Some(0.0);
        let mut closed = true;
        let best_bound = self
            .tried
            .iter()
            .map(|p| p.bound_cycles)
            .reduce(f64::max)
            .map(Cycles);
        for (k, g) in self.groups.iter().enumerate() {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            (self.progress)(&SegmentStep {
                price,
                price_index: self.tried.len() + 1,
                max_prices: self.planned.max(self.tried.len() + 1),
                problem: k + 1,
                problems: self.groups.len(),
                best_bound,
                elapsed_s: self.started.elapsed().as_secs_f64(),
            });
            // LPs take the time they need (seconds each), so each may use all that is left;
            // MILPs would take all of it, so they share it evenly.
            let share = if self.lp_only {
                left
            } else {
                left / self.solves_left.max(1) as u32
            };
            self.solves_left = self.solves_left.saturating_sub(1);
            let Some(run) = boundary_bound(&g.sub, g.boundary(price), self.lp_only, Some(share))?
            else {
                return Ok(None);
            };
            // HiGHS's tolerances must not lift a bound above an optimum.
            let safe = run.bound_cycles - SAFETY * run.bound_cycles.abs();
            total += g.count as f64 * safe;
            slope = slope
                .zip(run.slope_cycles)
                .map(|(a, b)| a + g.count as f64 * b);
            closed &= run.proven_optimal;
        }
        self.tried.push(PricedBound {
            price,
            bound_cycles: total,
            closed,
            at_s: self.started.elapsed().as_secs_f64(),
        });
        Ok(Some((total, slope)))
    }
}

/// Stop the LP search when the best bound is this close (relative) to the most any price
/// could still give.
pub const PRICE_TOLERANCE: f64 = 1e-4;

/// The LP search for the best price on [0, 1], at most [`GOLDEN_STEPS`] prices. L(μ) is
/// concave and piecewise linear, and each LP gives its value and a supergradient b (its slope
/// d₀ − Σ absorbed at the optimum): the maximum lies right of μ when b > 0, left when b < 0.
/// The tangents at the two ends of the bracket bound L from above, so the next price is
/// where they meet (Kelley's cutting plane; the bracket's middle when that is near an end or
/// one side has no tangent yet), and the search stops once the best bound is within
/// [`PRICE_TOLERANCE`] of where they meet. Every price tried is a valid bound either way.
fn cutting_planes(eval: &mut Evaluator) -> Result<()> {
    // (μ, L, b) at the bracket's ends.
    type Tangent = (f64, f64, f64);
    let (mut left, mut right): (Option<Tangent>, Option<Tangent>) = (None, None);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut best = f64::NEG_INFINITY;
    let mut price = 0.5;
    for _ in 0..GOLDEN_STEPS {
        let Some((value, slope)) = eval.with_slope(price)? else {
            break;
        };
        best = best.max(value);
        let Some(b) = slope else { break };
        // A slope pointing out of [0, 1] at an end, or a flat piece: this price is a maximum.
        if b == 0.0 || (b > 0.0 && price >= 1.0) || (b < 0.0 && price <= 0.0) {
            break;
        }
        if b > 0.0 {
            (lo, left) = (price, Some((price, value, b)));
        } else {
            (hi, right) = (price, Some((price, value, b)));
        }
        // With a tangent on one side only, the far end of [0, 1] comes next: the maximum is
        // often there (where HBM or compute clearly binds).
        let (next, ceiling) = match (left, right) {
            (Some((m1, l1, b1)), Some((m2, l2, b2))) => {
                let m = (l2 - l1 + b1 * m1 - b2 * m2) / (b1 - b2);
                let span = hi - lo;
                let inside = m > lo + 0.1 * span && m < hi - 0.1 * span;
                (if inside { m } else { 0.5 * (lo + hi) }, l1 + b1 * (m - m1))
            }
            (Some((m1, l1, b1)), None) => (1.0, l1 + b1 * (1.0 - m1)),
            (None, Some((m2, l2, b2))) => (0.0, l2 + b2 * (0.0 - m2)),
            (None, None) => break,
        };
        if ceiling - best <= PRICE_TOLERANCE * best.abs() {
            break;
        }
        price = next;
    }
    Ok(())
}

/// Golden-section search for the best price on [0, 1] (MILP dual bounds: no slopes).
fn golden(eval: &mut Evaluator) -> Result<()> {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (0.0f64, 1.0f64);
    let mut c = b - ratio * (b - a);
    let mut d = a + ratio * (b - a);
    let (Some(mut fc), Some(mut fd)) = (eval.at(c)?, eval.at(d)?) else {
        return Ok(());
    };
    for _ in 2..GOLDEN_STEPS {
        if fc >= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - ratio * (b - a);
            let Some(v) = eval.at(c)? else { break };
            fc = v;
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + ratio * (b - a);
            let Some(v) = eval.at(d)? else { break };
            fd = v;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use elk_stage::instance::OpOption;
    use elk_stage::units::Bytes;
    use std::cell::RefCell;

    /// An embedding, four identical two-operator layers and a head.
    fn layered() -> Instance {
        let layer = [
            (60.0, OpOption::new(10, 30, 80.0, 20.0, 0.5)),
            (40.0, OpOption::new(20, 50, 50.0, 10.0, 0.25)),
        ];
        let mut b = Instance::builder("layered", Bytes(120), 1e9).op(
            "embed",
            Cycles(30.0),
            vec![OpOption::new(5, 10, 20.0, 0.0, 0.0)],
        );
        for l in 0..4 {
            for (i, (hbm, o)) in layer.iter().enumerate() {
                b = b.op(&format!("l{l}.op{i}"), Cycles(*hbm), vec![o.clone()]);
            }
        }
        b.op(
            "head",
            Cycles(10.0),
            vec![OpOption::new(5, 10, 15.0, 0.0, 0.0)],
        )
        .build()
        .unwrap()
    }

    #[test]
    fn a_known_coupled_bound_is_the_bound_and_survives_a_price_search_out_of_time() {
        let inst = layered();
        let solved = coupled_segment_bound(&inst, 1, Duration::from_secs(60))
            .unwrap()
            .unwrap()
            .bound_cycles;
        // A value no LP here gives: were the LP solved again, its bound would show.
        let known = 0.999 * solved;
        let alone = SegmentOptions {
            lp_only: true,
            price_search: false,
            coupled: CoupledLp::Known(Cycles(known)),
            ..SegmentOptions::default()
        };
        let b = segment_bound(&inst, &alone).unwrap().unwrap();
        assert_eq!((b.bound_cycles, b.coupled_cycles), (known, Some(known)));
        assert_eq!((b.price, b.prices.len()), (None, 0));
        // The price search for the window search's start: its price is reported, the bound
        // stays the coupled LP's.
        let searched = SegmentOptions {
            price_search: true,
            ..alone.clone()
        };
        let b = segment_bound(&inst, &searched).unwrap().unwrap();
        assert_eq!(b.bound_cycles, known);
        assert!(b.price.is_some() && !b.prices.is_empty(), "{b:?}");
        // No time for a price: the coupled LP's bound is still the answer.
        let no_time = SegmentOptions {
            time_limit: Duration::ZERO,
            ..searched
        };
        let b = segment_bound(&inst, &no_time).unwrap().unwrap();
        assert_eq!((b.bound_cycles, b.price), (known, None));
    }

    #[test]
    fn the_coupled_lps_time_limit_holds_while_its_rows_are_built() {
        // No time at all: the rows stop at the deadline and nothing is solved (before, the
        // model was built whatever the limit, minutes on an MoE model, and HiGHS's 10 ms
        // floor solved this small one).
        let inst = layered();
        assert!(coupled_segment_bound(&inst, 1, Duration::ZERO)
            .unwrap()
            .is_none());
        assert!(coupled_segment_bound(&inst, 1, Duration::from_secs(60))
            .unwrap()
            .is_some());
    }

    #[test]
    fn progress_reports_every_segment_problem_and_changes_nothing() {
        let inst = layered();
        let opts = SegmentOptions {
            lp_only: true,
            ..SegmentOptions::default()
        };
        let steps = RefCell::new(Vec::new());
        let watched = segment_bound_with(&inst, &opts, &|s| steps.borrow_mut().push(*s))
            .unwrap()
            .unwrap();
        let plain = segment_bound(&inst, &opts).unwrap().unwrap();
        assert_eq!(watched.bound_cycles, plain.bound_cycles);
        assert_eq!(watched.price, plain.price);
        assert!(watched.price.is_some());
        let steps = steps.into_inner();
        // One step per (price, distinct problem), in order, each naming the bound so far.
        assert_eq!(
            steps.len(),
            watched.prices.len() * watched.distinct,
            "{steps:?}"
        );
        for (n, s) in steps.iter().enumerate() {
            assert_eq!(s.problems, watched.distinct);
            assert_eq!(s.problem, n % watched.distinct + 1);
            assert_eq!(s.price_index, n / watched.distinct + 1);
            assert_eq!(s.price, watched.prices[s.price_index - 1].price);
            let best = watched.prices[..s.price_index - 1]
                .iter()
                .map(|p| p.bound_cycles)
                .reduce(f64::max);
            assert_eq!(s.best_bound, best.map(Cycles));
            assert!(s.max_prices >= s.price_index && s.max_prices <= GOLDEN_STEPS);
        }
    }
}
