//! Pareto pruning of options (SPEC §4): an option no better than another in every one of
//! (cold, hot, exec, comm, ν) can be dropped without losing optimality — replacing it by
//! its dominator in any schedule keeps the schedule valid and no slower.

use elk_stage::instance::{Instance, OpOption};

/// The options kept per operator and where each original option maps.
#[derive(Clone, Debug)]
pub struct Pruned {
    /// Per operator: original indices of the kept options, in original order.
    pub kept: Vec<Vec<usize>>,
    /// Per operator and original option: the position in `kept` of an option that
    /// dominates it (itself when kept).
    pub to_kept: Vec<Vec<usize>>,
}

/// `a` is at least as good as `b` in every term.
fn dominates(a: &OpOption, b: &OpOption) -> bool {
    a.cold <= b.cold
        && a.hot <= b.hot
        && a.exec_cycles <= b.exec_cycles
        && a.comm_cycles <= b.comm_cycles
        && a.noc_per_hbm <= b.noc_per_hbm
}

/// Keeps the non-dominated options of every operator (of identical options, the first).
pub fn prune(inst: &Instance) -> Pruned {
    let mut kept = Vec::with_capacity(inst.ops.len());
    let mut to_kept = Vec::with_capacity(inst.ops.len());
    for op in &inst.ops {
        let opts = &op.options;
        // Option i is dropped when some other option dominates it, strictly or as an
        // earlier duplicate.
        let dropped_by = |i: usize| {
            (0..opts.len()).find(|&j| {
                j != i && dominates(&opts[j], &opts[i]) && (!dominates(&opts[i], &opts[j]) || j < i)
            })
        };
        let keep: Vec<usize> = (0..opts.len())
            .filter(|&i| dropped_by(i).is_none())
            .collect();
        let map = (0..opts.len())
            .map(|i| {
                // A kept option dominating i exists: domination is a preorder and the
                // kept set holds its maximal elements.
                keep.iter()
                    .position(|&k| k == i || dominates(&opts[k], &opts[i]))
                    .unwrap_or(0)
            })
            .collect();
        kept.push(keep);
        to_kept.push(map);
    }
    Pruned { kept, to_kept }
}
