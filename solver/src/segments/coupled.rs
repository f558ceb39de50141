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

use std::time::{Duration, Instant};

use elk_stage::instance::Instance;
use serde::Serialize;

use super::{groups, nu_values, segments, Group, Segment, SAFETY};
use crate::error::Result;
use crate::milp::{coupled_bound, Absorb, AbsorbClass, Boundary, CoupledPart, ModelSize};
use crate::prune::prune;

/// The coupled relaxation's result.
#[derive(Clone, Debug, Serialize)]
pub struct CoupledBound {
    /// The LP optimum lowered by [`SAFETY`], cycles.
    pub bound_cycles: f64,
    /// Segments the chain was cut into.
    pub segments: usize,
    /// Distinct segment problems in the LP (identical layers share one).
    pub distinct: usize,
    /// ν classes (one coupling row each).
    pub classes: usize,
    /// The LP's size.
    pub size: ModelSize,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Group {
    /// The group's boundary in the coupled LP: a free prologue unless it opens the chain
    /// (its work is paid where it is absorbed), one absorbed class per ν unless it closes it.
    fn coupled_boundary(&self) -> Boundary {
        Boundary {
            prologue_price: (!self.first).then_some(0.0),
            absorb: (!self.last).then(|| Absorb {
                price: 0.0,
                cap: self.cap,
                classes: self
                    .by_nu
                    .iter()
                    .map(|&(nu, cap)| AbsorbClass { nu, cap })
                    .collect(),
            }),
        }
    }
}

/// The coupled segment relaxation bound of `inst` with `per` layers per segment, or `None`
/// when the chain has too few layers to cut or the LP did not finish within `time_limit`.
pub fn coupled_segment_bound(
    inst: &Instance,
    per: usize,
    time_limit: Duration,
) -> Result<Option<CoupledBound>> {
    let Some(segs) = segments(inst, per) else {
        return Ok(None);
    };
    bound_of(inst, &segs, &groups(inst, &segs), time_limit)
}

/// [`coupled_segment_bound`] of the chain `inst` cut into `segs` and `groups`.
pub(super) fn bound_of(
    inst: &Instance,
    segs: &[Segment],
    groups: &[Group],
    time_limit: Duration,
) -> Result<Option<CoupledBound>> {
    let start = Instant::now();
    let pruned: Vec<_> = groups.iter().map(|g| prune(&g.sub)).collect();
    let parts: Vec<CoupledPart> = groups
        .iter()
        .zip(&pruned)
        .map(|(g, pruned)| CoupledPart {
            inst: &g.sub,
            pruned,
            boundary: g.coupled_boundary(),
            count: g.count as f64,
        })
        .collect();
    let classes = nu_values(inst);
    let Some((optimum, size)) = coupled_bound(&parts, &classes, Some(time_limit))? else {
        return Ok(None);
    };
    Ok(Some(CoupledBound {
        bound_cycles: optimum - SAFETY * optimum.abs(),
        segments: segs.len(),
        distinct: groups.len(),
        classes: classes.len(),
        size,
        seconds: start.elapsed().as_secs_f64(),
    }))
}
