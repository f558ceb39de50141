//! How a heuristic sizes a parallel set's groups (docs/core-groups.md §CG-2.6, issue 46).
//!
//! A parallel set is one operator whose options are allocations of core groups to its
//! members. Elk's inductive scheduling does not search them: it sizes the groups by work (in
//! proportion to each member's FLOPs, or tokens for experts), and so do the greedy variants.
//! Every heuristic therefore runs on the instance as Elk sees it, [`by_work_instance`]: each set with
//! only its options sized by work (`ParallelSet::by_work`; all of them when it has none).
//! Restricting the instance, not each method's loops, keeps one statement of the rule for
//! every place a method reads options (its ranking, its smallest cold layout, its budgets,
//! its trades). The named variant `elk-full-groups` ([`Sizing::Search`]) searches all of a
//! set's options, as the exact methods do.

use elk_stage::instance::Instance;
use elk_stage::method::{MethodError, Outcome, Solved};

/// How a method chooses a parallel set's allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sizing {
    /// Among the allocations in proportion to work (Elk's sizing; every faithful method and
    /// the greedy variants).
    #[default]
    ByWork,
    /// Among all of the set's options (a search over group sizes).
    Search,
}

/// `inst` as a method sizing groups by work sees it, with the indices in `inst` of each
/// operator's options in it; `None` when it is `inst` (no set has an option that is not
/// sized by work, or one sized by work: nothing to restrict).
pub fn by_work_instance(inst: &Instance) -> Option<(Instance, Vec<Vec<usize>>)> {
    let kept: Vec<Option<Vec<usize>>> = inst
        .ops
        .iter()
        .map(|op| {
            let set = op.parallel.as_ref()?;
            let by_work: Vec<usize> = (0..op.options.len())
                .filter(|&o| set.is_by_work(op.options[o].groups.as_deref()))
                .collect();
            (!by_work.is_empty() && by_work.len() < op.options.len()).then_some(by_work)
        })
        .collect();
    if kept.iter().all(Option::is_none) {
        return None;
    }
    let mut view = inst.clone();
    let kept = view
        .ops
        .iter_mut()
        .zip(kept)
        .map(|(op, kept)| match kept {
            Some(kept) => {
                op.options = kept
                    .iter()
                    .map(|&o| op.options[o].clone())
                    .collect::<Vec<_>>()
                    .into();
                kept
            }
            None => (0..op.options.len()).collect(),
        })
        .collect();
    Some((view, kept))
}

/// Runs `method` on the instance a method of `sizing` sees, with its schedule's options
/// mapped back to `inst`'s. On an instance without sets (or with nothing to restrict) it is
/// `method(inst)`.
pub(crate) fn sized(
    inst: &Instance,
    sizing: Sizing,
    method: impl FnOnce(&Instance) -> Result<Solved, MethodError>,
) -> Result<Solved, MethodError> {
    let view = match sizing {
        Sizing::ByWork => by_work_instance(inst),
        Sizing::Search => None,
    };
    let Some((view, kept)) = view else {
        return method(inst);
    };
    let mut solved = method(&view)?;
    if let Outcome::Optimal(s) | Outcome::Feasible { schedule: s, .. } = &mut solved.outcome {
        for (o, kept) in s.options.iter_mut().zip(&kept) {
            *o = kept[*o];
        }
    }
    Ok(solved)
}

/// [`sized`] by work: how every faithful method and greedy variant runs.
pub(crate) fn by_work(
    inst: &Instance,
    method: impl FnOnce(&Instance) -> Result<Solved, MethodError>,
) -> Result<Solved, MethodError> {
    sized(inst, Sizing::ByWork, method)
}
