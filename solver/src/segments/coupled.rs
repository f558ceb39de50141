//! The **coupled** segment relaxation: the segment problems of `super` in one LP, with the
//! prices replaced by the constraints they price, one per ν value (proof in docs/exact.md,
//! "The coupled relaxation").
//!
//! The priced relaxation charges a load that works before its segment μ per HBM cycle and
//! lets earlier segments absorb *any* later work at the least ν of all later loads. A load
//! with a NoC-heavy option (ν 0.69 where another option has 0.35) can then do much of its
//! work before its segment and have its NoC counted at 0.35 there. Here the absorbed work is
//! split by ν, each class costs its own ν in the absorbing stages, and a coupling row per ν
//! makes the work absorbed in that class equal the work the segments' own loads do in their
//! prologues with options of that ν, as in every schedule. With one class the LP's optimum
//! is the priced bound's maximum over μ (LP duality), so this bound is never weaker.
//!
//! The ν classes may also be refined lazily ([`Classes::Lazy`]; docs/exact.md, "Classes
//! refined lazily"): the LP is solved with the classes merged (ν rounded down to two
//! decimals), each charged at its least ν (a relaxation), and its solution is lifted to one
//! class per ν; while the lift fails, the classes in the rows it breaks are split and the LP
//! is solved again. It proves the same bound but was slower on both whole models measured,
//! so one class per ν stays the default.

use std::ops::Range;
use std::time::{Duration, Instant};

use elk_stage::instance::Instance;
use serde::Serialize;

use super::{groups, nu_values, segments, Group, Segment, SAFETY};
use crate::error::Result;
use crate::milp::{coupled_bound, Absorb, AbsorbClass, Boundary, CoupledPart, Lift, ModelSize};
use crate::prune::{prune, Pruned};

/// One round of the lazy refinement: an LP with merged classes and what its lift found.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    /// Classes in this round's LP.
    pub classes: usize,
    /// The LP's size.
    pub size: ModelSize,
    /// HiGHS's simplex iterations (the LP's; the lift check's are not counted).
    pub iterations: i64,
    /// The LP optimum, cycles (a valid bound in every round).
    pub optimum_cycles: f64,
    /// The solution lifted to one class per ν: this round's optimum is the exact LP's.
    pub proven: bool,
    /// Wall-clock seconds of the round (the LP and the lift check).
    pub seconds: f64,
    /// Of which the lift check's.
    pub lift_seconds: f64,
}

/// The coupled relaxation's result.
#[derive(Clone, Debug, Serialize)]
pub struct CoupledBound {
    /// The LP optimum lowered by [`SAFETY`], cycles.
    pub bound_cycles: f64,
    /// Segments the chain was cut into.
    pub segments: usize,
    /// Distinct segment problems in the LP (identical layers share one).
    pub distinct: usize,
    /// ν classes (one coupling row each) of the last LP solved.
    pub classes: usize,
    /// The last LP's size.
    pub size: ModelSize,
    /// HiGHS's simplex iterations, all rounds.
    pub iterations: i64,
    /// The rounds of the lazy refinement (one, with every class, for the exact LP).
    pub rounds: Vec<Round>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Group {
    /// The group's boundary in the coupled LP: a free prologue unless it opens the chain
    /// (its work is paid where it is absorbed), one absorbed class per class of `partition`
    /// (ranges of [`nu_values`]) unless it closes it, charged at its least ν and capped at
    /// the sum of its members' caps.
    fn coupled_boundary(&self, partition: &[Range<usize>]) -> Boundary {
        Boundary {
            prologue_price: (!self.first).then_some(0.0),
            absorb: (!self.last).then(|| Absorb {
                price: 0.0,
                cap: self.cap,
                classes: partition
                    .iter()
                    .map(|r| AbsorbClass {
                        nu: self.by_nu[r.start].0,
                        cap: self.by_nu[r.clone()].iter().map(|c| c.1).sum::<f64>(),
                    })
                    .collect(),
            }),
        }
    }
}

/// How the coupled LP's ν classes are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classes {
    /// One class per ν value, one LP (the default).
    Exact,
    /// Classes merged to `start_digits` decimals, refined until the solution lifts to one
    /// class per ν: the exact LP's bound.
    Lazy {
        /// The decimals the first round rounds ν down to ([`START_DIGITS`] by default).
        start_digits: i32,
    },
    /// Every ν rounded down to this many decimals, one LP, no lift (a weaker bound; for
    /// measurements).
    Rounded(i32),
}

/// The classes the lazy refinement starts from: ν rounded down to this many decimals.
pub const START_DIGITS: i32 = 2;

impl Classes {
    /// Lazy refinement from [`START_DIGITS`].
    pub const LAZY: Classes = Classes::Lazy {
        start_digits: START_DIGITS,
    };
}

/// The coupled segment relaxation bound of `inst` with `per` layers per segment, or `None`
/// when the chain has too few layers to cut or the LP did not finish within `time_limit`.
/// One class per ν ([`Classes::Exact`]: the lazy refinement proves the same bound, but
/// slower on the main job; docs/exact.md, "Classes refined lazily").
pub fn coupled_segment_bound(
    inst: &Instance,
    per: usize,
    time_limit: Duration,
) -> Result<Option<CoupledBound>> {
    coupled_segment_bound_with(inst, per, time_limit, Classes::Exact)
}

/// [`coupled_segment_bound`] with the classes chosen by `classes`.
pub fn coupled_segment_bound_with(
    inst: &Instance,
    per: usize,
    time_limit: Duration,
    classes: Classes,
) -> Result<Option<CoupledBound>> {
    let Some(segs) = segments(inst, per) else {
        return Ok(None);
    };
    bound_of(inst, &segs, &groups(inst, &segs), time_limit, classes)
}

/// The classes of `nus` (ascending) whose values agree to `digits` decimals after rounding
/// down, as ranges of indices.
pub fn rounded_partition(nus: &[f64], digits: i32) -> Vec<Range<usize>> {
    let key = |nu: f64| (nu * 10f64.powi(digits)).floor();
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, &nu) in nus.iter().enumerate() {
        match out.last_mut() {
            Some(r) if key(nus[r.start]) == key(nu) => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// Splits the class `r` of `nus` (rounded to `digits` decimals) into the classes of the next
/// number of decimals that splits it, or into single values.
fn split(nus: &[f64], r: &Range<usize>, digits: i32) -> Vec<(Range<usize>, i32)> {
    for d in digits + 1..=12 {
        let pieces = rounded_partition(&nus[r.clone()], d);
        if pieces.len() > 1 {
            return pieces
                .into_iter()
                .map(|p| (p.start + r.start..p.end + r.start, d))
                .collect();
        }
    }
    r.clone().map(|i| (i..i + 1, 13)).collect()
}

/// `inst` with every load option's ν lowered to the least ν of the same load's options in
/// its class of `partition` (a load whose options in a class share one ν keeps it).
fn lowered(inst: &Instance, nus: &[f64], partition: &[Range<usize>]) -> Instance {
    let class_of: std::collections::HashMap<u64, usize> = partition
        .iter()
        .enumerate()
        .flat_map(|(c, r)| r.clone().map(move |i| (nus[i].to_bits(), c)))
        .collect();
    let mut out = inst.clone();
    for (j, op) in out.ops.iter_mut().enumerate() {
        if !inst.is_load(elk_stage::units::OpId(j)) {
            continue;
        }
        let options = std::sync::Arc::make_mut(&mut op.options);
        let class = |nu: f64| class_of.get(&nu.to_bits()).copied();
        let least: Vec<Option<f64>> = options
            .iter()
            .map(|o| {
                let c = class(o.noc_per_hbm)?;
                options
                    .iter()
                    .map(|p| p.noc_per_hbm)
                    .filter(|&nu| class(nu) == Some(c))
                    .reduce(f64::min)
            })
            .collect();
        for (o, least) in options.iter_mut().zip(least) {
            if let Some(nu) = least {
                o.noc_per_hbm = nu;
            }
        }
    }
    out
}

/// [`coupled_segment_bound`] of the chain `inst` cut into `segs` and `groups`.
pub(super) fn bound_of(
    inst: &Instance,
    segs: &[Segment],
    groups: &[Group],
    time_limit: Duration,
    classes: Classes,
) -> Result<Option<CoupledBound>> {
    let start = Instant::now();
    let nus = nu_values(inst);
    let singles = || (0..nus.len()).map(|i| (i..i + 1, 13)).collect::<Vec<_>>();
    let mut partition: Vec<(Range<usize>, i32)> = match classes {
        Classes::Exact => singles(),
        Classes::Lazy { start_digits } => rounded_partition(&nus, start_digits)
            .into_iter()
            .map(|r| (r, start_digits))
            .collect(),
        Classes::Rounded(d) => rounded_partition(&nus, d)
            .into_iter()
            .map(|r| (r, d))
            .collect(),
    };
    let pruned: Vec<Pruned> = groups.iter().map(|g| prune(&g.sub)).collect();
    let mut rounds: Vec<Round> = Vec::new();
    loop {
        let round_start = Instant::now();
        let ranges: Vec<Range<usize>> = partition.iter().map(|p| p.0.clone()).collect();
        let exact = ranges.iter().all(|r| r.len() == 1);
        let lift = matches!(classes, Classes::Lazy { .. }) && !exact;
        let coarse: Vec<Instance> = groups
            .iter()
            .map(|g| {
                if exact {
                    g.sub.clone()
                } else {
                    lowered(&g.sub, &nus, &ranges)
                }
            })
            .collect();
        let parts: Vec<CoupledPart> = groups
            .iter()
            .zip(&pruned)
            .zip(&coarse)
            .map(|((g, pruned), coarse)| CoupledPart {
                inst: coarse,
                fine: &g.sub,
                pruned,
                boundary: g.coupled_boundary(&ranges),
                fine_caps: if g.last { Vec::new() } else { g.by_nu.clone() },
                count: g.count as f64,
            })
            .collect();
        let list: Vec<Vec<f64>> = ranges.iter().map(|r| nus[r.clone()].to_vec()).collect();
        let left = time_limit.saturating_sub(start.elapsed());
        let Some(run) = coupled_bound(&parts, &list, Some(left), lift)? else {
            return Ok(None);
        };
        let proven = exact || run.lift == Some(Lift::Proven);
        rounds.push(Round {
            classes: ranges.len(),
            size: run.size,
            iterations: run.iterations,
            optimum_cycles: run.optimum,
            proven,
            seconds: round_start.elapsed().as_secs_f64(),
            lift_seconds: run.lift_seconds,
        });
        let to_split = match run.lift {
            Some(Lift::Split(cs)) => cs,
            _ => Vec::new(),
        };
        if to_split.is_empty() {
            return Ok(Some(CoupledBound {
                bound_cycles: run.optimum - SAFETY * run.optimum.abs(),
                segments: segs.len(),
                distinct: groups.len(),
                classes: ranges.len(),
                size: run.size,
                iterations: rounds.iter().map(|r| r.iterations).sum(),
                rounds,
                seconds: start.elapsed().as_secs_f64(),
            }));
        }
        partition = partition
            .into_iter()
            .enumerate()
            .flat_map(|(c, (r, d))| {
                if to_split.contains(&c) {
                    split(&nus, &r, d)
                } else {
                    vec![(r, d)]
                }
            })
            .collect();
    }
}
