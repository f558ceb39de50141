//! One certified lower bound per instance, whatever the command. Every gap elk-opt prints is
//! measured against the best of the roofline ([`elk_solver::bounds::roofline`]) and, on a
//! chain of two or more layers, the coupled segment relaxation LP
//! ([`elk_solver::segments::coupled_segment_bound`]; docs/exact.md, "The coupled
//! relaxation"). [`coupled_bound`] is the one road to that LP: `compare --bound segment` and
//! the main job, a sweep cell with `bound = true`, Python's `compare(bound="segment")`, and
//! `gap`/`solve --exact` (which add what their exact part proves) all take it from here, so
//! the same instance gets the same bits from each, and a [`BoundCache`] lets the second of
//! them read what the first solved. [`certified_bound`] is that road with the cache beside a
//! plan cache, as a sweep cell and an MoE step take it.
//!
//! ```
//! use elk_app::bound::{certified, coupled_bound, Beyond, COUPLED_LIMIT};
//! let inst = elk_stage::corpus::random_instance(7, &elk_stage::corpus::RandomSpec::tiny(4, 2));
//! // No layers to cut: the relaxation does not apply, and the roofline is the bound.
//! let found = coupled_bound(&inst, COUPLED_LIMIT, None, &|_| {}).unwrap();
//! assert!(found.bound.is_none() && !found.unfinished);
//! let (_, source) = certified(&inst, Beyond::default());
//! assert_eq!(source, elk_solver::BoundSource::Roofline);
//! ```

mod cache;
mod staged;

pub use cache::BoundCache;
use elk_model::plan::PlanCache;
use elk_solver::segments::{segment_bound_with, SegmentBound, SegmentOptions, SegmentStep};
use elk_solver::BoundSource;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;
pub use staged::{
    stage, stage_cached, stage_cached_with_options, stage_within, Staged, STAGE_LIMIT,
    STAGE_MAX_OPERATORS,
};
use std::time::Duration;

/// The coupled LP's time limit where no budget says otherwise (`compare`, sweeps, Python's
/// `compare`): a 70B model needs ≈ 25 s of one core.
pub const COUPLED_LIMIT: Duration = Duration::from_secs(60);

/// What [`coupled_bound`] found.
#[derive(Debug)]
pub struct Coupled {
    /// The coupled LP's bound (`None`: fewer than two layers, or `unfinished`).
    pub bound: Option<SegmentBound>,
    /// The LP did not finish within its time limit (nothing was cached).
    pub unfinished: bool,
    /// Read from the cache: no LP was solved.
    pub cached: bool,
    /// The cache could not be written (the bound is unaffected), in words.
    pub write_error: Option<String>,
}

/// The coupled LP's bound of `inst` if `cache` already holds it, without solving anything:
/// what `compare` uses by default, so a bound that an earlier `compare --bound segment`,
/// `gap` or sweep paid for is not thrown away (`None`: no entry, or the relaxation does not
/// apply).
pub fn cached_bound(inst: &Instance, cache: &BoundCache) -> Option<Coupled> {
    let bound = cache.read(inst)??;
    Some(Coupled {
        bound: Some(bound),
        unfinished: false,
        cached: true,
        write_error: None,
    })
}

/// The coupled segment LP's bound of `inst` (one layer per segment, no price search): read
/// from `cache` when it holds it, else solved within `time_limit`, `progress` told before each
/// part, and kept in `cache` unless it did not finish.
pub fn coupled_bound(
    inst: &Instance,
    time_limit: Duration,
    cache: Option<&BoundCache>,
    progress: &dyn Fn(&SegmentStep),
) -> elk_solver::Result<Coupled> {
    let nothing = Coupled {
        bound: None,
        unfinished: false,
        cached: false,
        write_error: None,
    };
    if inst.layers().layers < 2 {
        // No layers to cut the chain at: nothing to solve, nothing worth a cache entry.
        return Ok(nothing);
    }
    if let Some(bound) = cache.and_then(|c| c.read(inst)) {
        return Ok(Coupled {
            bound,
            cached: true,
            ..nothing
        });
    }
    let opts = SegmentOptions {
        lp_only: true,
        price_search: false,
        time_limit,
        ..SegmentOptions::default()
    };
    let bound = segment_bound_with(inst, &opts, progress)?;
    // With two layers or more, no bound means the LP ran out of time (the price search it
    // falls back to gets none left).
    let unfinished = bound.is_none();
    let write_error = cache
        .filter(|_| !unfinished)
        .and_then(|c| c.write(inst, bound.as_ref()).err());
    Ok(Coupled {
        bound,
        unfinished,
        cached: false,
        write_error,
    })
}

/// The bounds beyond the roofline a caller computed for one instance.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Beyond {
    /// The segment relaxation's (from [`coupled_bound`]).
    pub segment: Option<Cycles>,
    /// The stage relaxation's (from [`stage`]).
    pub stage: Option<Cycles>,
}

/// The certified lower bound of `inst` given the bounds `beyond` the roofline: the best of
/// them and the roofline, and which that is (on a tie the roofline, then the segment
/// relaxation).
pub fn certified(inst: &Instance, beyond: Beyond) -> (Cycles, BoundSource) {
    let roof = elk_solver::bounds::roofline(inst).best();
    [
        (beyond.segment, BoundSource::SegmentRelaxation),
        (beyond.stage, BoundSource::StageRelaxation),
    ]
    .into_iter()
    .filter_map(|(b, source)| b.map(|b| (b, source)))
    .fold((roof, BoundSource::Roofline), |best, (b, source)| {
        if b > best.0 {
            (b, source)
        } else {
            best
        }
    })
}

/// The certified lower bound of `inst`, the strongest of what `compare --bound segment`
/// computes: the coupled segment LP's ([`coupled_bound`], read from or kept in the bound
/// cache beside the plan cache), the stage relaxation's ([`stage`]; it needs no repeated
/// layers, so it also bounds an MoE step under sampled routing), or the roofline's.
pub fn certified_bound(
    inst: &Instance,
    plans: Option<&PlanCache>,
) -> elk_solver::Result<(Cycles, BoundSource)> {
    let cache = plans.map(BoundCache::beside);
    let found = coupled_bound(inst, COUPLED_LIMIT, cache.as_ref(), &|_| {})?;
    let beyond = Beyond {
        segment: found.bound.map(|b| Cycles(b.bound_cycles)),
        stage: stage_cached(inst, cache.as_ref())?.cycles().map(Cycles),
    };
    Ok(certified(inst, beyond))
}

/// The certified lower bound of `inst` that `compare`'s default computes: the stage
/// relaxation's ([`stage_cached`], read from or kept in the bound cache beside the plan
/// cache) or the roofline's, whichever is stronger (`moe --bound stage`).
pub fn certified_stage_bound(
    inst: &Instance,
    plans: Option<&PlanCache>,
) -> elk_solver::Result<(Cycles, BoundSource)> {
    let cache = plans.map(BoundCache::beside);
    let beyond = Beyond {
        segment: None,
        stage: stage_cached(inst, cache.as_ref())?.cycles().map(Cycles),
    };
    Ok(certified(inst, beyond))
}
