//! The deterministic budget of an exact solve (`--work-limit N`): what one unit of work is on
//! each road, and what a report says about it. A time limit stops a solve wherever the
//! machine's speed has brought it, so two runs differ; a work budget stops it after the same
//! solver work every time, so the same command gives the same bytes (docs/exact.md,
//! "Reproducible certificates"). The time limit stays a hard stop on top: when it fires
//! first, the report says so and that the result is not reproducible.
//!
//! One unit is
//! - on an instance the MILP can build: one HiGHS branch-and-bound node, summed over the
//!   fixed-order restriction (at most 40 % of the budget) and the MILP (the rest). The root
//!   (presolve, root LP, cuts, root heuristics) is not a node; each unit also allows
//!   [`crate::milp::LP_ITERATIONS_PER_NODE`] simplex iterations, root included, so a long
//!   root stops at the same iteration on every machine (between its cut rounds and
//!   heuristics, where HiGHS checks). The LP relaxation bound is one LP, run to its end
//!   (only the time limit stops it);
//! - on a model too large for it: one window MILP of the window search (each at most 200
//!   nodes); the starts share half of the windows equally and the best start continues with
//!   the rest. The segment relaxation's LPs and the starts' queue LPs run to their end.

use serde::{Deserialize, Serialize};

/// What a unit of work is on the road a solve took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkUnit {
    /// HiGHS branch-and-bound nodes (fixed-order restriction and MILP together).
    Nodes,
    /// Window MILPs of the window search (a model too large for the MILP).
    Windows,
}

impl WorkUnit {
    /// The unit in prose, plural: "branch-and-bound nodes", "window MILPs".
    pub fn plural(self) -> &'static str {
        match self {
            WorkUnit::Nodes => "branch-and-bound nodes",
            WorkUnit::Windows => "window MILPs",
        }
    }
}

/// The budget of a solve run under `--work-limit` and what it used (`--json`: `work_limit`,
/// `work_used`, `work_unit`, `cut_by_time`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// The budget, in `unit`s.
    #[serde(rename = "work_limit")]
    pub limit: u64,
    /// The units used (`None`: the worker was killed before it could say).
    #[serde(rename = "work_used")]
    pub used: Option<u64>,
    /// What a unit is.
    #[serde(rename = "work_unit")]
    pub unit: WorkUnit,
    /// A time limit stopped some part of the solve (or the worker was killed) before the
    /// budget did: the result depends on the machine's speed and is not reproducible.
    pub cut_by_time: bool,
    /// The budget's simplex-iteration cap ([`crate::milp::LP_ITERATIONS_PER_NODE`] per
    /// node) stopped a MILP before its nodes were spent: its root, which is not a node.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub iterations_capped: bool,
}

impl Work {
    /// The budget reached its end (every unit used): the solve stopped on work, not by
    /// finishing.
    pub fn exhausted(&self) -> bool {
        self.used.is_some_and(|u| u >= self.limit)
    }

    /// One sentence for the notes: the budget, what was used and whether the result is
    /// reproducible. `proven`: the solve proved its result (optimal or infeasible), so a
    /// budget spent to its last unit did not stop it (HiGHS may prove the optimum on the
    /// last node it is allowed).
    pub fn sentence(&self, proven: bool) -> String {
        let used = self
            .used
            .map_or("an unknown number".to_string(), |u| u.to_string());
        let head = format!(
            "work budget (--work-limit): {used} of {} {} used",
            self.limit,
            self.unit.plural()
        );
        if self.cut_by_time {
            format!(
                "{head}; cut by the time limit before the budget: NOT reproducible (where a time limit stops depends on the machine's speed; raise --time-limit)"
            )
        } else if proven {
            format!("{head}; finished within the budget: reproducible (the same command gives the same result)")
        } else if self.iterations_capped {
            format!(
                "{head}; stopped by the budget's cap of {} simplex iterations per node (the MILP's root is not a node): reproducible (the same command gives the same result)",
                crate::milp::LP_ITERATIONS_PER_NODE
            )
        } else if self.exhausted() {
            format!("{head}; stopped by the budget: reproducible (the same command gives the same result)")
        } else {
            format!("{head}; finished within the budget: reproducible (the same command gives the same result)")
        }
    }
}

/// The units left of `limit` after `used`.
pub(crate) fn left(limit: u64, used: u64) -> u64 {
    limit.saturating_sub(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_says_whether_the_result_is_reproducible() {
        let w = Work {
            limit: 10,
            used: Some(10),
            unit: WorkUnit::Nodes,
            cut_by_time: false,
            iterations_capped: false,
        };
        assert!(w.exhausted());
        assert!(w
            .sentence(false)
            .contains("10 of 10 branch-and-bound nodes used; stopped by the budget: reproducible"));
        // The last node proved the optimum: the budget did not stop the solve.
        assert!(w
            .sentence(true)
            .contains("10 of 10 branch-and-bound nodes used; finished within the budget"));
        let cut = Work {
            cut_by_time: true,
            used: None,
            ..w
        };
        assert!(!cut.exhausted());
        assert!(cut.sentence(false).contains("an unknown number of 10"));
        assert!(cut.sentence(false).contains("NOT reproducible"));
        let done = Work { used: Some(3), ..w };
        assert!(done.sentence(false).contains("finished within the budget"));
        let root = Work {
            used: Some(0),
            iterations_capped: true,
            ..w
        };
        assert!(root
            .sentence(false)
            .contains("0 of 10 branch-and-bound nodes used; stopped by the budget's cap of 10000 simplex iterations per node"));
    }
}
