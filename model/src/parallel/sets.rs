//! Which operators form a parallel set (docs/core-groups.md §CG-1), from the graph's data
//! dependences alone: no operator name is read.
//!
//! A *window* starting at operator h takes the operators after it in execution order and
//! sorts each into a component: one that depends on no operator of the window starts a new
//! component, one that depends on exactly one component joins it, and one that depends on
//! two or more (a join, such as the combine of two experts' outputs) or on a deferred one is
//! *deferred*: it runs after the set, in its old order. The components are the set's members;
//! each runs its operators in their old order. A window ends after 64 (`DEFERRED_RUN`) deferred
//! operators in a row (everything after a full join depends on it) or 4,096 (`MAX_WINDOW`)
//! operators.
//!
//! Which window to take: the one that saves the most, Σ work − max work over its members
//! (work: each operator's fastest execution on the whole chip), taken at h unless one of the
//! next 32 (`LOOK_AHEAD`) starts saves more. So an MoE layer's experts form one set after the
//! top-k step (each expert waits for it, [`crate::graph::Operator::after`]) rather than a set
//! of the router beside them.

use crate::graph::Graph;
use std::collections::HashMap;

/// One step of the execution order: an operator, or a parallel set of member chains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Graph operator `i`, on its own.
    Op(usize),
    /// Members, each a chain of graph operators in order.
    Set(Vec<Vec<usize>>),
}

/// Deferred operators in a row that end a window.
const DEFERRED_RUN: usize = 64;
/// The most operators a window scans.
const MAX_WINDOW: usize = 4096;
/// Later starts a window is compared with.
const LOOK_AHEAD: usize = 32;

/// The operators each operator of `graph` depends on: its inputs' producers and the
/// operators it waits for ([`crate::graph::Operator::after`]), found by source name (so a
/// cut of a graph, whose `producer` indices are the whole graph's, works too).
pub fn dependences(graph: &Graph) -> Vec<Vec<usize>> {
    let by_source = graph.producers_by_source();
    graph
        .ops
        .iter()
        .map(|op| {
            let read = op.inputs().iter().map(|t| t.source.as_str());
            let waited = op.after.iter().map(String::as_str);
            let mut d: Vec<usize> = read
                .chain(waited)
                .filter_map(|s| by_source.get(s).copied())
                .collect();
            d.sort_unstable();
            d.dedup();
            d
        })
        .collect()
}

/// A window's members, the operators it scanned but left for after the set (in their old
/// order), how many queue places it scanned, and what it saves.
struct Window {
    members: Vec<Vec<usize>>,
    after: Vec<usize>,
    scanned: usize,
    /// One past the last member's place: later starts before it compete for its operators.
    span: usize,
    saves: f64,
}

/// The window of `queue` starting at its first operator.
fn window(queue: &[usize], deps: &[Vec<usize>], work: &[f64]) -> Window {
    // Member(c) or deferred (None), for the operators scanned so far.
    let mut place: HashMap<usize, Option<usize>> = HashMap::new();
    // Each member's queue places.
    let mut members: Vec<Vec<usize>> = Vec::new();
    let (mut run, mut scanned) = (0, 0);
    for (p, &o) in queue.iter().enumerate().take(MAX_WINDOW) {
        scanned = p + 1;
        let mut component = None;
        let mut defer = false;
        for d in &deps[o] {
            match place.get(d) {
                None => {}
                Some(None) => defer = true,
                Some(&Some(c)) => match component {
                    Some(x) if x != c => defer = true,
                    _ => component = Some(c),
                },
            }
        }
        if defer {
            place.insert(o, None);
            run += 1;
            if run >= DEFERRED_RUN {
                break;
            }
            continue;
        }
        run = 0;
        let c = component.unwrap_or_else(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[c].push(p);
        place.insert(o, Some(c));
    }
    cut_the_longest(&mut members, |p| work[queue[p]]);
    let span = members.iter().flatten().max().map_or(0, |&p| p + 1);
    let mut member_at = vec![false; scanned];
    for &p in members.iter().flatten() {
        member_at[p] = true;
    }
    let after = (0..scanned)
        .filter(|&p| !member_at[p])
        .map(|p| queue[p])
        .collect();
    let members: Vec<Vec<usize>> = members
        .into_iter()
        .map(|m| m.into_iter().map(|p| queue[p]).collect())
        .collect();
    let each: Vec<f64> = members
        .iter()
        .map(|m| m.iter().map(|&o| work[o]).sum())
        .collect();
    let saves = if members.len() < 2 {
        0.0
    } else {
        each.iter().sum::<f64>() - each.iter().copied().fold(0.0, f64::max)
    };
    Window {
        members,
        after,
        scanned,
        span,
        saves,
    }
}

/// Ends the member with the most work once it has twice the work of the next: beside the
/// others it gains nothing after they end (their cores idle) and runs on fewer cores. In a
/// decode layer the query's chain goes on through the attention (the keys and values only
/// feed the cache), so only its part beside the keys' and values' chains stays in the set.
/// `members` holds queue places, each member in order; `work_at` is a place's work. The
/// member keeps at least its first operator.
fn cut_the_longest(members: &mut [Vec<usize>], work_at: impl Fn(usize) -> f64) {
    if members.len() < 2 {
        return;
    }
    let total = |m: &Vec<usize>| m.iter().map(|&p| work_at(p)).sum::<f64>();
    let each: Vec<f64> = members.iter().map(total).collect();
    let longest = (0..members.len())
        .max_by(|&a, &b| each[a].total_cmp(&each[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    let next = (0..members.len())
        .filter(|&c| c != longest)
        .map(|c| each[c])
        .fold(0.0, f64::max);
    let mut sum = 0.0;
    let keep = members[longest]
        .iter()
        .take_while(|&&p| {
            sum += work_at(p);
            sum <= 2.0 * next
        })
        .count()
        .max(1);
    members[longest].truncate(keep);
}

/// The execution order of `graph` with parallel sets: `work[i]` is operator i's work (its
/// fastest execution on the whole chip), `deps` its [`dependences`]. Deterministic; every
/// operator appears once, after every operator it depends on.
pub fn steps(deps: &[Vec<usize>], work: &[f64]) -> Vec<Step> {
    let mut queue: Vec<usize> = (0..deps.len()).collect();
    let mut head = 0;
    let mut out = Vec::new();
    // Each start's savings and span on the current queue (cleared when a set reorders it).
    let mut memo: HashMap<usize, (f64, usize)> = HashMap::new();
    while head < queue.len() {
        let mut at = |p: usize| -> (f64, usize) {
            *memo.entry(p).or_insert_with(|| {
                let w = window(&queue[p..], deps, work);
                (w.saves, w.span)
            })
        };
        let (here, span) = at(head);
        // Only the starts inside this window compete with it for its operators.
        let last = queue.len().min(head + span).min(head + 1 + LOOK_AHEAD);
        let later = (head + 1..last).map(|p| at(p).0).fold(0.0, f64::max);
        if here <= 0.0 || later > here {
            out.push(Step::Op(queue[head]));
            head += 1;
            continue;
        }
        let w = window(&queue[head..], deps, work);
        let rest = queue[head + w.scanned..].to_vec();
        out.push(Step::Set(w.members));
        queue = w.after.into_iter().chain(rest).collect();
        head = 0;
        memo.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operator once, each after its dependences.
    fn topological(steps: &[Step], deps: &[Vec<usize>]) {
        let mut done = vec![false; deps.len()];
        for s in steps {
            let ops: Vec<usize> = match s {
                Step::Op(i) => vec![*i],
                Step::Set(m) => m.concat(),
            };
            if let Step::Set(members) = s {
                // No member depends on another member.
                for (a, ma) in members.iter().enumerate() {
                    for &o in ma {
                        for (b, mb) in members.iter().enumerate() {
                            if a != b {
                                assert!(deps[o].iter().all(|d| !mb.contains(d)), "{s:?}");
                            }
                        }
                    }
                }
            }
            for &o in &ops {
                for &d in &deps[o] {
                    assert!(done[d] || ops.contains(&d), "{o} before {d}: {steps:?}");
                }
            }
            for o in ops {
                assert!(!done[o]);
                done[o] = true;
            }
        }
        assert!(done.iter().all(|&d| d));
    }

    #[test]
    fn a_fork_join_becomes_one_set_and_the_join_runs_after_it() {
        // 0 → {1 → 2, 3 → 4, 5} → 6 (joins 2 and 4) → 7 (joins 6 and 5).
        let deps = vec![
            vec![],
            vec![0],
            vec![1],
            vec![0],
            vec![3],
            vec![0],
            vec![2, 4],
            vec![6, 5],
        ];
        let work = vec![1.0; 8];
        let s = steps(&deps, &work);
        topological(&s, &deps);
        assert_eq!(
            s,
            vec![
                Step::Op(0),
                Step::Set(vec![vec![1, 2], vec![3, 4], vec![5]]),
                Step::Op(6),
                Step::Op(7)
            ]
        );
    }

    #[test]
    fn a_chain_has_no_set_and_a_router_is_not_beside_its_experts() {
        let chain: Vec<Vec<usize>> = (0..6)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let s = steps(&chain, &[1.0; 6]);
        assert_eq!(s, (0..6).map(Step::Op).collect::<Vec<_>>());
        // x=0; router 1 (x), top-k 2 (1); experts 3→4 and 5→6 read x and wait for 2;
        // combine 7 (4, 2), 8 (6, 7). Without the wait the router would be a member.
        let deps = vec![
            vec![],
            vec![0],
            vec![1],
            vec![0, 2],
            vec![3],
            vec![0, 2],
            vec![5],
            vec![2, 4],
            vec![5, 6, 7],
        ];
        let s = steps(&deps, &[1.0; 9]);
        topological(&s, &deps);
        assert_eq!(s[3], Step::Set(vec![vec![3, 4, 7], vec![5, 6]]), "{s:?}");
    }

    #[test]
    fn a_member_that_runs_on_alone_is_cut_at_twice_the_next_members_work() {
        // 0 → q: 1 → 3 → 4 → 5 → 6 (the attention, on and on); k: 2 → 7.
        let deps = vec![
            vec![],
            vec![0],
            vec![0],
            vec![1],
            vec![3],
            vec![4],
            vec![5],
            vec![2],
        ];
        let s = steps(&deps, &[1.0; 8]);
        topological(&s, &deps);
        assert_eq!(
            s,
            vec![
                Step::Op(0),
                Step::Set(vec![vec![1, 3, 4, 5], vec![2, 7]]),
                Step::Op(6)
            ]
        );
    }
}
