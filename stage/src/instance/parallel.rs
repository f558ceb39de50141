//! Parallel sets in the stage model (docs/core-groups.md): one stage-model operator that runs
//! several independent chains of graph operators at once, each on its own group of cores.
//!
//! The stage model stays a chain of operators: a parallel set is one of them, and each of its
//! options records the group each member runs on ([`super::OpOption::groups`]). What the
//! option's numbers mean (the slowest group's execution, the busiest core's bytes) is
//! docs/core-groups.md §CG-2; this module holds the record and the rules a file must meet.

use super::{InstanceOp, OpOption};
use crate::units::Cycles;
use serde::{Deserialize, Serialize};

/// The format tag of instance files with parallel sets. Files without any are still written
/// as `elk-instance/1` ([`super::INSTANCE_FORMAT`]), so every older tool reads them.
pub const INSTANCE_FORMAT_PARALLEL: &str = "elk-instance/2";

/// What a parallel-set operator runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelSet {
    /// N: the chip's cores, which the groups of one option share.
    pub chip_cores: u64,
    /// The members: each a chain of graph operators, run in order on its group.
    pub members: Vec<Member>,
    /// The allocations that size the groups in proportion to the members' work
    /// (docs/core-groups.md §CG-2.6), each the `groups` of at least one option: Elk's
    /// inductive scheduling and the greedy variants choose among the options with these
    /// groups only, the searching variant and the exact methods among all. A property of the
    /// allocation, not of one option, so options with the same groups cannot disagree.
    /// Absent (empty) in files written before it: every option is then a choice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_work: Vec<Vec<u64>>,
}

impl ParallelSet {
    /// Whether an option with `groups` sizes the set's groups by work.
    pub fn is_by_work(&self, groups: Option<&[u64]>) -> bool {
        groups.is_some_and(|g| self.by_work.iter().any(|w| w == g))
    }
}

/// Where a set option's cycles come from (docs/core-groups.md §CG-2.4): each member's chain
/// on its group, and the dispatch and combine that use the whole chip. The option's
/// `exec_cycles` is the slowest member's execution plus the exchange, its `comm_cycles` the
/// busiest member's NoC cycles plus the exchange; the stage model reads only those, the
/// detailed replay runs each member's shift inside its region and the exchange across the
/// chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemberCycles {
    /// exec_m: each member's chain on its group (compute and its own shifts), in member
    /// order.
    pub exec_cycles: Vec<Cycles>,
    /// comm_m: each member's NoC cycles on its group's links.
    pub comm_cycles: Vec<Cycles>,
    /// D + C: dispatching the members' inputs to their groups and combining their outputs.
    pub exchange_cycles: Cycles,
}

impl MemberCycles {
    /// The set's execution: the slowest member's plus the exchange (CG-2.4).
    pub fn exec(&self) -> Cycles {
        slowest(&self.exec_cycles) + self.exchange_cycles
    }

    /// The set's NoC cycles: the busiest member's plus the exchange (CG-2.4).
    pub fn comm(&self) -> Cycles {
        slowest(&self.comm_cycles) + self.exchange_cycles
    }
}

/// The largest of `c` (0 for none).
fn slowest(c: &[Cycles]) -> Cycles {
    Cycles(c.iter().map(|c| c.get()).fold(0.0, f64::max))
}

/// Relative tolerance of an option's cycles against its members' (decimal files round).
const MEMBER_TOLERANCE: f64 = 1e-9;

/// Why `m` does not give `opt`'s cycles for `members` members, or `None`.
fn member_cycles_violation(opt: &OpOption, m: &MemberCycles, members: usize) -> Option<String> {
    if m.exec_cycles.len() != members || m.comm_cycles.len() != members {
        return Some(format!(
            "members has {} execution and {} NoC entries for {members} members",
            m.exec_cycles.len(),
            m.comm_cycles.len()
        ));
    }
    let all = m.exec_cycles.iter().chain(&m.comm_cycles);
    if let Some(bad) = all
        .chain([&m.exchange_cycles])
        .find(|c| c.get().is_nan() || c.get() < 0.0)
    {
        return Some(format!("members has cycles {}, not ≥ 0", bad.get()));
    }
    if let Some(k) = (0..members).find(|&k| m.comm_cycles[k] > m.exec_cycles[k]) {
        return Some(format!(
            "members[{k}]'s NoC cycles {} exceed its execution {}",
            m.comm_cycles[k].get(),
            m.exec_cycles[k].get()
        ));
    }
    let close = |a: f64, b: f64| (a - b).abs() <= MEMBER_TOLERANCE * a.abs().max(b.abs()).max(1.0);
    for (what, total, expected) in [
        ("exec_cycles", opt.exec_cycles.get(), m.exec().get()),
        ("comm_cycles", opt.comm_cycles.get(), m.comm().get()),
    ] {
        if !close(total, expected) {
            return Some(format!(
                "{what} {total} is not its slowest member's plus the exchange ({expected})"
            ));
        }
    }
    None
}

/// One member of a parallel set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    /// The graph operators it runs, in order.
    pub ops: Vec<String>,
}

/// Why `op` (`ops[i]` of the file) breaks a parallel set's rules, or `None`: at least two
/// members, no operator in two members, and every option with one group per member, each of
/// at least one core, the groups together within the chip's cores (disjoint groups); every
/// by-work allocation the groups of some option; an operator that is not a set has no groups.
pub fn violation(i: usize, op: &InstanceOp) -> Option<String> {
    let at = |detail: String| Some(format!("ops[{i}] ({}): {detail}", op.name));
    let Some(set) = &op.parallel else {
        return op
            .options
            .iter()
            .position(|o| o.groups.is_some() || o.members.is_some())
            .and_then(|o| {
                at(format!(
                    "options[{o}] has groups or members but the operator is not a parallel set"
                ))
            });
    };
    if set.members.len() < 2 {
        return at(format!(
            "a parallel set needs at least two members, it has {}",
            set.members.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (m, member) in set.members.iter().enumerate() {
        if member.ops.is_empty() {
            return at(format!("members[{m}] runs no operator"));
        }
        if let Some(dup) = member.ops.iter().find(|o| !seen.insert(o.as_str())) {
            return at(format!(
                "operator '{dup}' is in two members (members overlap)"
            ));
        }
    }
    for (o, opt) in op.options.iter().enumerate() {
        let Some(groups) = &opt.groups else {
            return at(format!("options[{o}] has no groups"));
        };
        if let Some(why) = allocation_violation(set, groups) {
            return at(format!("options[{o}] {why}"));
        }
        let why = opt
            .members
            .as_ref()
            .and_then(|m| member_cycles_violation(opt, m, set.members.len()));
        if let Some(why) = why {
            return at(format!("options[{o}] {why}"));
        }
    }
    for (w, groups) in set.by_work.iter().enumerate() {
        if !op.options.iter().any(|o| o.groups.as_ref() == Some(groups)) {
            return at(format!(
                "by_work[{w}] ({groups:?}) is the groups of no option"
            ));
        }
    }
    None
}

/// Why `groups` is no allocation of `set`'s members, or `None`: one group per member, each
/// of at least one core, together within the chip's cores.
fn allocation_violation(set: &ParallelSet, groups: &[u64]) -> Option<String> {
    if groups.len() != set.members.len() {
        return Some(format!(
            "has {} groups for {} members",
            groups.len(),
            set.members.len()
        ));
    }
    if groups.contains(&0) {
        return Some("has a group of 0 cores".into());
    }
    let total = groups.iter().try_fold(0u64, |a, &g| a.checked_add(g));
    if total.is_none_or(|t| t > set.chip_cores) {
        let total = total.map_or("more than 2^64".to_string(), |t| t.to_string());
        return Some(format!(
            "takes {total} cores, more than the chip's {} (groups must be disjoint)",
            set.chip_cores
        ));
    }
    None
}

impl InstanceOp {
    /// The graph operators it runs: a set's members' in order, else its own name.
    pub fn graph_ops(&self) -> Vec<&str> {
        match &self.parallel {
            Some(set) => set
                .members
                .iter()
                .flat_map(|m| m.ops.iter().map(String::as_str))
                .collect(),
            None => vec![self.name.as_str()],
        }
    }
}

/// Why the instance's operators name a graph operator twice (in two sets, or in a set and on
/// its own), or `None`: each graph operator runs once.
pub fn duplicate(ops: &[InstanceOp]) -> Option<String> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        for n in op.graph_ops() {
            if let Some(first) = seen.insert(n, i) {
                if first != i {
                    return Some(format!(
                        "ops[{i}] ({}): operator '{n}' also runs in ops[{first}] ({}); each runs once",
                        op.name, ops[first].name
                    ));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::one_set;
    use crate::instance::Instance;

    #[test]
    fn by_work_round_trips_and_is_absent_when_empty() {
        let inst = one_set(vec![vec![1, 3]]);
        assert_eq!(inst.format, INSTANCE_FORMAT_PARALLEL);
        let text = inst.to_json().unwrap();
        assert!(text.contains(r#""by_work":[[1,3]]"#), "{text}");
        let back = Instance::from_json("t", &text).unwrap();
        assert_eq!(back, inst);
        let set = back.ops[1].parallel.as_ref().unwrap();
        let by_work: Vec<bool> = back.ops[1]
            .options
            .iter()
            .map(|o| set.is_by_work(o.groups.as_deref()))
            .collect();
        assert_eq!(by_work, [false, true, false]);
        // A file written before the field: absent is empty, and none is written back.
        let old = one_set(Vec::new());
        let text = old.to_json().unwrap();
        assert!(!text.contains("by_work"), "{text}");
        let back = Instance::from_json("t", &text).unwrap();
        assert!(back.ops[1].parallel.as_ref().unwrap().by_work.is_empty());
        // An operator that is not a set never is by work.
        assert!(!set.is_by_work(None));
    }

    #[test]
    fn member_cycles_must_give_the_options_cycles() {
        // one_set's options: exec as given, comm 10; members that give them round-trip.
        let with = |exec: [f64; 2], comm: [f64; 2], exchange: f64| {
            let mut inst = one_set(Vec::new());
            inst.ops[1].options_mut()[0].members = Some(MemberCycles {
                exec_cycles: exec.map(Cycles).to_vec(),
                comm_cycles: comm.map(Cycles).to_vec(),
                exchange_cycles: Cycles(exchange),
            });
            Instance::from_json("t", &inst.to_json().unwrap()).map_err(|e| e.to_string())
        };
        let back = with([390.0, 200.0], [0.0, 0.0], 10.0).unwrap();
        assert!(back.ops[1].options[0].members.is_some());
        for (exec, comm, exchange, why) in [
            (
                [400.0, 200.0],
                [0.0, 0.0],
                10.0,
                "exec_cycles 400 is not its slowest member's plus the exchange (410)",
            ),
            (
                [390.0, 200.0],
                [0.0, 9.0],
                10.0,
                "comm_cycles 10 is not its slowest member's plus the exchange (19)",
            ),
            (
                [390.0, 3.0],
                [0.0, 4.0],
                10.0,
                "members[1]'s NoC cycles 4 exceed its execution 3",
            ),
            (
                [390.0, -1.0],
                [0.0, 0.0],
                10.0,
                "members has cycles -1, not ≥ 0",
            ),
        ] {
            let err = with(exec, comm, exchange).unwrap_err();
            assert!(
                err.contains(&format!("ops[1] (par[2]:x): options[0] {why}")),
                "{err}"
            );
        }
        // One entry per member, and only on a set.
        let mut inst = one_set(Vec::new());
        inst.ops[1].options_mut()[0].members = Some(MemberCycles {
            exec_cycles: vec![Cycles(390.0)],
            comm_cycles: vec![Cycles(0.0)],
            exchange_cycles: Cycles(10.0),
        });
        let err = Instance::from_json("t", &inst.to_json().unwrap()).unwrap_err();
        assert!(
            err.to_string()
                .contains("members has 1 execution and 1 NoC entries for 2 members"),
            "{err}"
        );
        inst.ops[0].options_mut()[0].members = inst.ops[1].options_mut()[0].members.take();
        let err = Instance::from_json("t", &inst.to_json().unwrap()).unwrap_err();
        assert!(
            err.to_string()
                .contains("ops[0] (before): options[0] has groups or members but the operator is not a parallel set"),
            "{err}"
        );
    }

    #[test]
    fn a_by_work_allocation_must_be_some_options_groups() {
        let mut inst = one_set(vec![vec![1, 3]]);
        if let Some(set) = &mut inst.ops[1].parallel {
            set.by_work = vec![vec![3, 1]];
        }
        let err = Instance::from_json("t", &inst.to_json().unwrap()).unwrap_err();
        let err = err.to_string();
        assert!(
            err.contains("ops[1] (par[2]:x): by_work[0] ([3, 1]) is the groups of no option"),
            "{err}"
        );
    }
}
