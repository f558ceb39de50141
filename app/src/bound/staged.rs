//! The stage relaxation as a command's bound: `compare`'s default, and beside the coupled LP
//! with `--bound segment` ([`elk_solver::bounds::stage_bound`]; proof in docs/exact.md, "The
//! stage relaxation").
//!
//! Unlike the coupled LP it needs no repeated layers, so it also bounds a single layer, a
//! model cut by `--ops`, and an MoE model under any routing. It costs well under a second on
//! a dense 7B–70B model (0.4 s on Llama2-13B, 0.6 s on 70B) and ≈ 6 s on OLMoE-1B-7B's 8,017
//! operators; its simplex grows faster than the chain, so above [`STAGE_MAX_OPERATORS`] it is
//! not tried (a rule on the instance, not on the clock, so the same input gets the same
//! bound on every machine).

use super::cache::BoundCache;
use elk_solver::bounds::{stage_bound_and_options, StageBound};
use elk_stage::instance::Instance;

pub use elk_solver::bounds::{STAGE_LIMIT, STAGE_MAX_OPERATORS};

/// What [`stage`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Staged {
    /// The LP's bound.
    Solved(StageBound),
    /// Not tried: the instance has more operators than the rule allows (their count).
    TooLarge(usize),
    /// HiGHS did not reach the optimum within [`STAGE_LIMIT`].
    Unfinished,
}

impl Staged {
    /// The bound, cycles, when the LP was solved.
    pub fn cycles(&self) -> Option<f64> {
        match self {
            Staged::Solved(b) => Some(b.bound_cycles),
            _ => None,
        }
    }

    /// Why there is no bound, in words for a footer (`None`: there is one).
    pub fn missing(&self) -> Option<String> {
        match self {
            Staged::Solved(_) => None,
            Staged::TooLarge(n) => Some(format!(
                "the stage relaxation is not tried on {n} operators (above {STAGE_MAX_OPERATORS})"
            )),
            Staged::Unfinished => Some(format!(
                "the stage relaxation's LP did not finish within {} s",
                STAGE_LIMIT.as_secs()
            )),
        }
    }
}

/// The stage relaxation's bound of `inst`, unless it has more than `max_operators`.
pub fn stage_within(inst: &Instance, max_operators: usize) -> elk_solver::Result<Staged> {
    Ok(stage_and_options(inst, max_operators)?.0)
}

/// [`stage_within`], and the LP's options when it was solved (`stage-lp+queue`'s).
fn stage_and_options(
    inst: &Instance,
    max_operators: usize,
) -> elk_solver::Result<(Staged, Option<Vec<usize>>)> {
    if inst.ops.len() > max_operators {
        return Ok((Staged::TooLarge(inst.ops.len()), None));
    }
    Ok(match stage_bound_and_options(inst, STAGE_LIMIT)? {
        Some((b, options)) => (Staged::Solved(b), Some(options)),
        None => (Staged::Unfinished, None),
    })
}

/// The stage relaxation's bound of `inst` under [`STAGE_MAX_OPERATORS`].
pub fn stage(inst: &Instance) -> elk_solver::Result<Staged> {
    stage_within(inst, STAGE_MAX_OPERATORS)
}

/// [`stage`], read from `cache` when it holds `inst`'s bound, else solved and kept there
/// (only a solved LP: one cut by its time limit depends on the machine). A cache that cannot
/// be written costs the next run the LP again and nothing else; its directory is the plan
/// cache's, whose own write failure the commands already warn of.
pub fn stage_cached(inst: &Instance, cache: Option<&BoundCache>) -> elk_solver::Result<Staged> {
    Ok(stage_cached_with_options(inst, cache)?.0)
}

/// [`stage_cached`], and the LP's options (kept in the same entry) when it was solved, for
/// `compare`'s `stage-lp+queue` row: one LP for both.
pub fn stage_cached_with_options(
    inst: &Instance,
    cache: Option<&BoundCache>,
) -> elk_solver::Result<(Staged, Option<Vec<usize>>)> {
    if inst.ops.len() > STAGE_MAX_OPERATORS {
        return Ok((Staged::TooLarge(inst.ops.len()), None));
    }
    if let Some((b, options)) = cache.and_then(|c| c.read_stage(inst)) {
        return Ok((Staged::Solved(b), Some(options)));
    }
    let found = stage_and_options(inst, STAGE_MAX_OPERATORS)?;
    if let (Some(c), (Staged::Solved(b), Some(options))) = (cache, &found) {
        let _ = c.write_stage(inst, b, options);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::{certified, Beyond};
    use elk_solver::BoundSource;
    use elk_stage::corpus::{random_instance, RandomSpec};
    use elk_stage::units::Cycles;

    #[test]
    fn an_instance_above_the_rule_is_not_tried_and_says_why() {
        let inst = random_instance(3, &RandomSpec::tiny(5, 2));
        let n = inst.ops.len();
        let skipped = stage_within(&inst, n - 1).unwrap();
        assert_eq!(skipped, Staged::TooLarge(n));
        assert_eq!(skipped.cycles(), None);
        assert!(skipped
            .missing()
            .unwrap()
            .contains(&format!("on {n} operators")));
        let solved = stage_within(&inst, n).unwrap();
        let roof = elk_solver::bounds::roofline(&inst).best().get();
        // The LP keeps the roofline's HBM and execution sums, less its safety margin.
        assert!(
            solved.cycles().unwrap() >= roof * (1.0 - 1e-5),
            "{solved:?} vs {roof}"
        );
        assert_eq!(solved.missing(), None);
    }

    #[test]
    fn a_cached_stage_bound_is_read_back_to_the_bit_and_a_stale_entry_is_solved_again() {
        let inst = random_instance(3, &RandomSpec::tiny(5, 2));
        let dir = std::env::temp_dir().join(format!("elk-stage-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = BoundCache::at(&dir);
        let solved = stage_cached(&inst, Some(&cache)).unwrap();
        assert_eq!(solved, stage(&inst).unwrap());
        let path = cache.stage_path(&inst);
        assert!(path.exists(), "the solved bound is kept");
        // With the LP's options, which a hit returns as the LP gives them.
        let (_, kept) = stage_cached_with_options(&inst, Some(&cache)).unwrap();
        let lp = elk_solver::bounds::stage_options(&inst, STAGE_LIMIT).unwrap();
        assert!(kept.is_some() && kept == lp, "{kept:?} vs {lp:?}");
        // A hit is what the file says, not a new solve: plant other bits under the same key.
        let text = std::fs::read_to_string(&path).unwrap();
        let bits = solved.cycles().unwrap().to_bits();
        let planted = (solved.cycles().unwrap() - 1.0).to_bits();
        std::fs::write(&path, text.replace(&bits.to_string(), &planted.to_string())).unwrap();
        let read = stage_cached(&inst, Some(&cache)).unwrap();
        assert_eq!(read.cycles().map(f64::to_bits), Some(planted));
        // Another key (as after a change to the LP's code) is solved again and rewritten.
        std::fs::write(&path, text.replace("\"key\":\"", "\"key\":\"x")).unwrap();
        assert_eq!(stage_cached(&inst, Some(&cache)).unwrap(), solved);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        // Above the rule nothing is read or solved.
        let mut big = inst.clone();
        big.ops = std::iter::repeat_n(inst.ops[0].clone(), STAGE_MAX_OPERATORS + 1).collect();
        assert_eq!(
            stage_cached(&big, Some(&cache)).unwrap(),
            Staged::TooLarge(STAGE_MAX_OPERATORS + 1)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_certified_bound_is_the_strongest_and_a_tie_keeps_the_earlier_source() {
        let inst = random_instance(3, &RandomSpec::tiny(5, 2));
        let roof = elk_solver::bounds::roofline(&inst).best();
        let above = Cycles(roof.get() + 10.0);
        let higher = Cycles(roof.get() + 20.0);
        let pick = |segment, stage| certified(&inst, Beyond { segment, stage });
        assert_eq!(pick(None, None), (roof, BoundSource::Roofline));
        assert_eq!(pick(None, Some(roof)), (roof, BoundSource::Roofline));
        let stage = (above, BoundSource::StageRelaxation);
        assert_eq!(pick(None, Some(above)), stage);
        assert_eq!(pick(Some(roof), Some(above)), stage);
        let segment = (above, BoundSource::SegmentRelaxation);
        assert_eq!(pick(Some(above), Some(above)), segment);
        assert_eq!(
            pick(Some(above), Some(higher)).1,
            BoundSource::StageRelaxation
        );
    }
}
