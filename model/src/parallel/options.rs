//! A parallel set's stage-model operator (docs/core-groups.md §CG-2): its options are the
//! group sizes of its members, each member's chain planned for its group, with the slowest
//! group's execution and the busiest core's bytes.

use crate::chip::ChipSpec;
use crate::graph::{Graph, Residency};
use crate::plan::{spatial, table_on, CostModel, OpShape, OptionEntry, PlanCache};
use elk_stage::instance::{InstanceOp, Member, MemberCycles, OpOption, ParallelSet};
use elk_stage::units::{Bytes, Cycles};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Plans operator shapes on groups of cores, each (shape, group) once.
pub struct GroupPlanner<'a> {
    chip: &'a ChipSpec,
    model: &'a dyn CostModel,
    cache: Option<&'a PlanCache>,
    tables: GroupTables,
}

/// The tables a [`GroupPlanner`] has built, per (operator shape, group cores), kept between
/// planners of one chip and cost model (an MoE run's steps, [`crate::build::InstanceMemo`]).
#[derive(Default)]
pub struct GroupTables(HashMap<(OpShape, u64), Option<Arc<Front>>>);

/// One operator's options on one group, by increasing hot footprint, each with the index of
/// the fastest option at or below its hot footprint.
struct Front {
    options: Vec<OptionEntry>,
    fastest_up_to: Vec<usize>,
}

impl Front {
    fn new(mut options: Vec<OptionEntry>) -> Front {
        options.sort_by(|a, b| {
            (a.hot, a.cold)
                .cmp(&(b.hot, b.cold))
                .then(a.exec().total_cmp(&b.exec()))
        });
        let mut fastest_up_to: Vec<usize> = Vec::with_capacity(options.len());
        for (i, o) in options.iter().enumerate() {
            let best = match fastest_up_to.last() {
                Some(&b) if options[b].exec() <= o.exec() => b,
                _ => i,
            };
            fastest_up_to.push(best);
        }
        Front {
            options,
            fastest_up_to,
        }
    }

    /// The fastest option with a hot footprint of at most `budget` bytes per core.
    fn fastest_within(&self, budget: u64) -> Option<&OptionEntry> {
        let n = self.options.partition_point(|o| o.hot <= budget);
        (n > 0).then(|| &self.options[self.fastest_up_to[n - 1]])
    }
}

impl<'a> GroupPlanner<'a> {
    /// A planner for `chip`, pricing with `model` and reading `cache` when given.
    pub fn new(
        chip: &'a ChipSpec,
        model: &'a dyn CostModel,
        cache: Option<&'a PlanCache>,
    ) -> GroupPlanner<'a> {
        GroupPlanner::resume(chip, model, cache, GroupTables::default())
    }

    /// A planner that starts from `tables`, built before for the same chip and cost model.
    pub fn resume(
        chip: &'a ChipSpec,
        model: &'a dyn CostModel,
        cache: Option<&'a PlanCache>,
        tables: GroupTables,
    ) -> GroupPlanner<'a> {
        GroupPlanner {
            chip,
            model,
            cache,
            tables,
        }
    }

    /// The tables built so far, for [`GroupPlanner::resume`].
    pub fn into_tables(self) -> GroupTables {
        self.tables
    }

    fn front(&mut self, shape: &OpShape, group: u64) -> Option<Arc<Front>> {
        let (chip, model, cache) = (self.chip, self.model, self.cache);
        self.tables
            .0
            .entry((shape.clone(), group))
            .or_insert_with(|| {
                table_on(shape, group, chip.sram_bytes_per_core, model, cache)
                    .map(|t| Arc::new(Front::new(t.options)))
            })
            .clone()
    }
}

/// One member chain's numbers on its group under one budget.
#[derive(Clone, Copy)]
struct Chain {
    cold: u64,
    hot: u64,
    exec: f64,
    comm: f64,
}

/// The chain `fronts` (its operators' options on its group), each operator at its fastest
/// option within `budget`: its cold bytes wait together, each operator runs with the later
/// ones' cold bytes beside it.
fn chain(fronts: &[Arc<Front>], budget: u64) -> Option<Chain> {
    let picked: Vec<&OptionEntry> = fronts
        .iter()
        .map(|f| f.fastest_within(budget))
        .collect::<Option<_>>()?;
    let mut later_cold = 0;
    let mut hot = 0;
    for o in picked.iter().rev() {
        hot = hot.max(o.hot + later_cold);
        later_cold += o.cold;
    }
    Some(Chain {
        cold: later_cold,
        hot,
        exec: picked.iter().map(|o| o.exec()).sum(),
        comm: picked.iter().map(|o| o.comm).sum(),
    })
}

/// The group sizes tried for members of work `work` on `cores` cores, from the ladder
/// [`spatial::groups`]: every member on the same group, for each rung the members fit on
/// together; and groups in proportion to work, at the whole chip and each halving, each
/// rounded down to a rung (at least one core) and each rounded to the nearest rung (by
/// ratio), those that fit. Sorted, each once, with whether it is one in proportion to work
/// (Elk's sizing, docs/core-groups.md §CG-2.6): by the allocation, so an equal rung that the
/// proportional rule also gives (members of equal work) is by work too.
///
/// *Why the nearest rung too:* rounded down alone, members of almost equal work (an MoE
/// layer's experts, the first of which also runs the combine) get one rung each below their
/// share but the heaviest: 64 such experts on 5,888 cores get 92 cores for the first and 46
/// for the rest, half the chip idle. Rounded to the nearest, they get 92 each.
pub fn allocations(work: &[f64], cores: u64) -> Vec<(Vec<u64>, bool)> {
    let ladder = spatial::groups(cores);
    let k = work.len() as u64;
    let mut out = BTreeSet::new();
    for &g in &ladder {
        if g * k <= cores {
            out.insert(vec![g; work.len()]);
        }
    }
    let mut by_work = BTreeSet::new();
    let total: f64 = work.iter().sum();
    if total > 0.0 {
        // The ladder descends: the first rung at or below x, and the one above it.
        let down = |x: f64| ladder.iter().position(|&g| g as f64 <= x);
        let floor = |x: f64| down(x).map_or(1, |i| ladder[i]);
        let nearest = |x: f64| match down(x) {
            Some(0) => ladder[0],
            Some(i) if (ladder[i - 1] as f64) / x < x / ladder[i] as f64 => ladder[i - 1],
            Some(i) => ladder[i],
            None => 1,
        };
        for halvings in 0..ladder.len() {
            let scale = cores as f64 / total / f64::powi(2.0, halvings as i32);
            let floored: Vec<u64> = work.iter().map(|w| floor(w * scale)).collect();
            let rounded: Vec<u64> = work.iter().map(|w| nearest(w * scale)).collect();
            let done = floored.iter().all(|&g| g == 1);
            for groups in [floored, rounded] {
                if groups.iter().sum::<u64>() <= cores {
                    by_work.insert(groups);
                }
            }
            if done {
                break;
            }
        }
    }
    out.extend(by_work.iter().cloned());
    out.into_iter()
        .map(|g| {
            let w = by_work.contains(&g);
            (g, w)
        })
        .collect()
}

/// Bytes each member receives from outside it (its on-chip inputs: the dispatch) and sends
/// out (outputs read by an operator outside it: the combine).
fn traffic(graph: &Graph, members: &[Vec<usize>]) -> Vec<(u64, u64)> {
    let by_source = graph.producers_by_source();
    let producer = |source: &str| by_source.get(source).copied();
    let mut readers: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, op) in graph.ops.iter().enumerate() {
        for t in op.inputs() {
            if let Some(p) = producer(&t.source) {
                readers.entry(p).or_default().push(i);
            }
        }
    }
    members
        .iter()
        .map(|m| {
            let mut seen = BTreeSet::new();
            let mut inbound = 0;
            for &o in m {
                for t in graph.ops[o].inputs() {
                    let inside = producer(&t.source).is_some_and(|p| m.contains(&p));
                    if t.residency == Residency::OnChip && !inside && seen.insert(&t.source) {
                        inbound += t.bytes().0;
                    }
                }
            }
            let outbound = m
                .iter()
                .filter(|o| {
                    readers
                        .get(o)
                        .is_some_and(|r| r.iter().any(|x| !m.contains(x)))
                })
                .map(|&o| graph.ops[o].output().bytes().0)
                .sum();
            (inbound, outbound)
        })
        .collect()
}

/// The operator shapes of each member of a set: sets with the same are priced the same.
pub fn member_shapes(graph: &Graph, members: &[Vec<usize>]) -> Vec<Vec<OpShape>> {
    members
        .iter()
        .map(|m| {
            m.iter()
                .map(|&o| OpShape::of(&graph.ops[o], graph.plan_rules))
                .collect()
        })
        .collect()
}

/// The parallel set `members` of `graph` as one stage-model operator, or `None` when no
/// allocation of groups has a plan for every member. `work[o]` and `hbm_bytes[o]` are graph
/// operator o's fastest execution (cycles) and HBM bytes on the whole chip (its table's);
/// `b_noc` the NoC's distribution rate.
pub fn set_op(
    graph: &Graph,
    members: &[Vec<usize>],
    (work, hbm_bytes): (&[f64], &[u64]),
    planner: &mut GroupPlanner,
    b_noc: f64,
) -> Option<InstanceOp> {
    let chip = planner.chip;
    let n = chip.cores;
    let hbm_bytes: u64 = members.iter().flatten().map(|&o| hbm_bytes[o]).sum();
    let work: Vec<f64> = members
        .iter()
        .map(|m| m.iter().map(|&o| work[o]).sum())
        .collect();
    let shapes = member_shapes(graph, members);
    let moved = traffic(graph, members);
    let per_core = chip.noc.injection_bytes_per_s_per_core;
    let mut found: Vec<(OpOption, bool)> = Vec::new();
    for (groups, by_work) in allocations(&work, n) {
        let fronts: Option<Vec<Vec<Arc<Front>>>> = shapes
            .iter()
            .zip(&groups)
            .map(|(ss, &g)| ss.iter().map(|s| planner.front(s, g)).collect())
            .collect();
        let Some(fronts) = fronts else { continue };
        // Dispatch and combine: each group receives (sends) its bytes at its cores' rate,
        // all of them together at the chip's.
        let shift = |bytes: &dyn Fn(usize) -> u64| -> f64 {
            let slowest = (0..members.len())
                .map(|i| bytes(i) as f64 / (groups[i] as f64 * per_core))
                .fold(0.0, f64::max);
            let all: u64 = (0..members.len()).map(bytes).sum();
            slowest.max(all as f64 / (n as f64 * per_core)) * chip.clock_hz
        };
        let moving = shift(&|i| moved[i].0) + shift(&|i| moved[i].1);
        let budgets: BTreeSet<u64> = fronts
            .iter()
            .flatten()
            .flat_map(|f| f.options.iter().map(|o| o.hot))
            .collect();
        for b in budgets {
            let Some(chains): Option<Vec<Chain>> = fronts.iter().map(|f| chain(f, b)).collect()
            else {
                continue;
            };
            let hot = chains.iter().map(|c| c.hot).max().unwrap_or(0);
            if hot > chip.sram_bytes_per_core {
                continue;
            }
            let cold = chains.iter().map(|c| c.cold).max().unwrap_or(0);
            let members = MemberCycles {
                exec_cycles: chains.iter().map(|c| Cycles(c.exec)).collect(),
                comm_cycles: chains.iter().map(|c| Cycles(c.comm)).collect(),
                exchange_cycles: Cycles(moving),
            };
            let (exec, comm) = (members.exec(), members.comm());
            let rho = if hbm_bytes > 0 {
                cold as f64 * n as f64 / hbm_bytes as f64
            } else {
                0.0
            };
            let option = OpOption {
                cold: Bytes(cold),
                hot: Bytes(hot),
                exec_cycles: exec,
                comm_cycles: comm,
                noc_per_hbm: rho * chip.hbm.bandwidth_bytes_per_s / b_noc,
                groups: Some(groups.clone()),
                members: Some(members),
            };
            found.push((option, by_work));
        }
    }
    let (options, by_work) = pareto(found);
    if options.is_empty() {
        return None;
    }
    Some(InstanceOp {
        name: set_name(graph, members),
        hbm_cycles: Cycles(hbm_bytes as f64 / chip.hbm.bandwidth_bytes_per_s * chip.clock_hz),
        options: options.into(),
        flops: Some(
            members
                .iter()
                .flatten()
                .map(|&o| graph.ops[o].flops().0 as f64)
                .sum(),
        ),
        preload_window: None,
        parallel: Some(ParallelSet {
            chip_cores: n,
            members: members.iter().map(|m| member(graph, m)).collect(),
            by_work,
        }),
    })
}

/// `op` (built for another set with the same members' shapes) renamed for `members` of
/// `graph`.
pub fn renamed(op: &InstanceOp, graph: &Graph, members: &[Vec<usize>]) -> InstanceOp {
    let mut op = op.clone();
    op.name = set_name(graph, members);
    if let Some(set) = &mut op.parallel {
        set.members = members.iter().map(|m| member(graph, m)).collect();
    }
    op
}

/// `par[k]:` and the first member's first operator's name.
fn set_name(graph: &Graph, members: &[Vec<usize>]) -> String {
    format!("par[{}]:{}", members.len(), graph.ops[members[0][0]].name)
}

fn member(graph: &Graph, m: &[usize]) -> Member {
    Member {
        ops: m.iter().map(|&o| graph.ops[o].name.clone()).collect(),
    }
}

/// The options no other option matches or beats in cold, hot, execution and NoC cycles, in
/// a fixed order (hot, cold, execution); and, among the options sized by work (the flag
/// beside each), those no other option sized by work matches or beats: Elk chooses among
/// these only and does not know an option of another allocation that beats one. With the
/// by-work allocations that some kept option has.
fn pareto(mut all: Vec<(OpOption, bool)>) -> (Vec<OpOption>, Vec<Vec<u64>>) {
    let key = |o: &OpOption| (o.hot.0, o.cold.0, o.exec_cycles.get(), o.comm_cycles.get());
    all.sort_by(|(a, _), (b, _)| {
        let (x, y) = (key(a), key(b));
        (x.0, x.1)
            .cmp(&(y.0, y.1))
            .then(x.2.total_cmp(&y.2))
            .then(x.3.total_cmp(&y.3))
    });
    let beats = |k: &OpOption, o: &OpOption| {
        k.cold <= o.cold
            && k.hot <= o.hot
            && k.exec_cycles <= o.exec_cycles
            && k.comm_cycles <= o.comm_cycles
    };
    // The sort puts every option after those that could beat it.
    let (mut kept, mut front, mut front_by_work): (Vec<OpOption>, Vec<usize>, Vec<usize>) =
        Default::default();
    for (o, by_work) in all {
        let on_front = !front.iter().any(|&k| beats(&kept[k], &o));
        let on_by_work = by_work && !front_by_work.iter().any(|&k| beats(&kept[k], &o));
        if on_front || on_by_work {
            if on_front {
                front.push(kept.len());
            }
            if on_by_work {
                front_by_work.push(kept.len());
            }
            kept.push(o);
        }
    }
    let by_work: BTreeSet<Vec<u64>> = front_by_work
        .iter()
        .filter_map(|&k| kept[k].groups.clone())
        .collect();
    (kept, by_work.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_fit_the_chip_and_follow_the_work() {
        let a = allocations(&[1.0, 1.0, 2.0], 16);
        assert!(a.iter().all(|(g, _)| g.iter().sum::<u64>() <= 16));
        // Equal rungs (4 = 16/4 is not a share of work here) and shares of work.
        assert!(a.contains(&(vec![4, 4, 4], false)), "{a:?}");
        assert!(a.contains(&(vec![4, 4, 8], true)), "{a:?}");
        assert!(a.contains(&(vec![2, 2, 4], true)), "{a:?}");
        assert!(a.contains(&(vec![1, 1, 1], true)), "{a:?}");
        // Sixty-four equal experts on 5,888 cores: 92 each, and every smaller rung, all of
        // them shares of work (5,888 / 64 / 8 = 11.5 rounds down to 6 and to 12 nearest).
        let a = allocations(&[3.0; 64], 5888);
        assert_eq!(a.iter().map(|(g, _)| g[0]).max(), Some(92));
        assert!(a.iter().all(|(g, _)| g.iter().all(|&x| x == g[0])));
        let by_work: Vec<u64> = a.iter().filter(|(_, w)| *w).map(|(g, _)| g[0]).collect();
        assert_eq!(by_work, [1, 2, 3, 6, 12, 23, 46, 92]);
        // Almost equal work (the first expert also runs the combine): rounded down, the
        // others would get 46 cores beside the first's 92; to the nearest rung all get 92.
        let mut work = vec![3.0; 64];
        work[0] = 3.1;
        let a = allocations(&work, 5888);
        assert!(a.contains(&(vec![92; 64], true)), "{a:?}");
        let mut half = vec![46; 64];
        half[0] = 92;
        assert!(a.contains(&(half, true)), "{a:?}");
        // Unequal work: 2,048 cores in proportion 1 : 3 : 12 are 128, 384 and 1,536 cores;
        // on rungs, 128, 256 and 1,024 rounded down, 128, 512 and 2,048 nearest (too many).
        let a = allocations(&[1.0, 3.0, 12.0], 2048);
        assert!(a.contains(&(vec![128, 256, 1024], true)), "{a:?}");
        assert!(a.iter().all(|(g, _)| g != &vec![128, 512, 2048]), "{a:?}");
    }

    #[test]
    fn the_reduction_keeps_the_best_options_sized_by_work() {
        let opt = |groups: Vec<u64>, exec: f64| OpOption {
            groups: Some(groups),
            ..OpOption::new(100, 200, exec, 0.0, 0.0)
        };
        let (kept, by_work) = pareto(vec![
            (opt(vec![1, 1], 30.0), true),
            (opt(vec![2, 2], 10.0), false),
            (opt(vec![4, 4], 11.0), false),
            (opt(vec![1, 3], 20.0), true),
        ]);
        let groups: Vec<Vec<u64>> = kept.iter().filter_map(|o| o.groups.clone()).collect();
        // (2, 2) beats every other option; (1, 3), sized by work, beats (1, 1), the other
        // by-work one, and is kept beside it: Elk chooses among these, not knowing (2, 2).
        assert_eq!(groups, [vec![2, 2], vec![1, 3]]);
        assert_eq!(by_work, [vec![1, 3]]);
    }
}
