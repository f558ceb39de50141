//! Every rule of the stage model (SPEC §4), each violation a typed value naming the operator,
//! the stage and the numbers.

use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::schedule::Schedule;
use std::fmt;

/// One broken rule.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Violation {
    /// The schedule has the wrong number of options.
    OptionCount {
        /// Operators in the instance.
        expected: usize,
        /// Options in the schedule.
        got: usize,
    },
    /// An option index does not exist.
    NoSuchOption {
        /// Operator name.
        op: String,
        /// The index given.
        index: usize,
        /// How many options it has.
        available: usize,
    },
    /// `load_order` is not a permutation of the operators with HBM data.
    LoadOrderSet {
        /// What is wrong.
        detail: String,
    },
    /// The load order breaks the instance's policy.
    LoadOrderPolicy {
        /// Operator name.
        op: String,
        /// Its position in the load order.
        position: usize,
        /// Its rank in execution order among the loads.
        rank: usize,
        /// The policy.
        policy: String,
    },
    /// A load-work entry is malformed.
    BadWork {
        /// Operator index.
        op: usize,
        /// Stage.
        stage: usize,
        /// What is wrong.
        detail: String,
    },
    /// A load does not add up to its HBM cycles before its operator runs.
    IncompleteLoad {
        /// Operator name.
        op: String,
        /// Cycles of work scheduled.
        loaded: f64,
        /// H.
        required: f64,
    },
    /// A load earlier in the order still works after a later load started.
    OrderOverlap {
        /// The earlier load.
        earlier: String,
        /// The later load.
        later: String,
        /// The stage where the earlier one still works.
        stage: usize,
        /// The later load's start stage.
        later_start: usize,
    },
    /// A stage's SRAM is over-full.
    Memory {
        /// Stage.
        stage: usize,
        /// The operator executing in it, if any.
        op: Option<String>,
        /// Bytes per core in use.
        used: u64,
        /// SRAM per core.
        sram: u64,
    },
    /// A load starts before the preload window allows.
    Window {
        /// Operator name.
        op: String,
        /// Its start stage.
        start: usize,
        /// The earliest stage the window allows.
        earliest: usize,
    },
    /// A load starts before its operator's own window opens (a load released at run time,
    /// such as an MoE expert fetched once its router has run).
    Released {
        /// Operator name.
        op: String,
        /// Its start stage.
        start: usize,
        /// The earliest stage its own window allows.
        earliest: usize,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::OptionCount { expected, got } => {
                write!(f, "options: {got} given for {expected} operators")
            }
            Violation::NoSuchOption { op, index, available } => {
                write!(f, "operator {op}: option {index} does not exist ({available} options)")
            }
            Violation::LoadOrderSet { detail } => write!(f, "load_order: {detail}"),
            Violation::LoadOrderPolicy { op, position, rank, policy } => write!(
                f,
                "load order: {op} is load #{position} but #{rank} in execution order ({policy})"
            ),
            Violation::BadWork { op, stage, detail } => {
                write!(f, "load_work [op {op}, stage {stage}]: {detail}")
            }
            Violation::IncompleteLoad { op, loaded, required } => write!(
                f,
                "operator {op}: load incomplete before it runs: {loaded} of {required} HBM cycles ({} missing)",
                required - loaded
            ),
            Violation::OrderOverlap { earlier, later, stage, later_start } => write!(
                f,
                "load order: {earlier} (earlier) still loads in stage {stage} after {later} started in stage {later_start}"
            ),
            Violation::Memory { stage, op, used, sram } => write!(
                f,
                "stage {stage}{}: {used} B per core in use, SRAM {sram} B ({} B over)",
                op.as_ref().map(|o| format!(" ({o})")).unwrap_or_default(),
                used - sram
            ),
            Violation::Window { op, start, earliest } => write!(
                f,
                "operator {op}: load starts in stage {start}, the preload window allows stage {earliest} at the earliest"
            ),
            Violation::Released { op, start, earliest } => write!(
                f,
                "operator {op}: load starts in stage {start}, before stage {earliest} where its own window (a load released at run time) opens"
            ),
        }
    }
}

/// Relative tolerance for a load adding up to its HBM cycles.
const LOAD_TOLERANCE: f64 = 1e-9;

/// Every rule of SPEC §4 the schedule breaks (empty when valid).
pub fn validate(inst: &Instance, s: &Schedule) -> Vec<Violation> {
    let n = inst.ops.len();
    let mut v = Vec::new();
    if s.options.len() != n {
        v.push(Violation::OptionCount {
            expected: n,
            got: s.options.len(),
        });
        return v;
    }
    for (i, &o) in s.options.iter().enumerate() {
        if o >= inst.ops[i].options.len() {
            v.push(Violation::NoSuchOption {
                op: inst.ops[i].name.clone(),
                index: o,
                available: inst.ops[i].options.len(),
            });
        }
    }
    if !v.is_empty() {
        return v;
    }
    check_order(inst, s, &mut v);
    // Per load: total work, first stage; work entries well-formed.
    let mut loaded = vec![0.0; n];
    let mut start = vec![usize::MAX; n];
    let mut last = vec![0usize; n];
    for w in &s.load_work {
        let (j, k, c) = (w.op.index(), w.stage.index(), w.cycles.get());
        let bad = |detail: String| Violation::BadWork {
            op: j,
            stage: k,
            detail,
        };
        if j >= n {
            v.push(bad(format!("no operator {j}")));
            continue;
        }
        if !(c.is_finite() && c >= 0.0) {
            v.push(bad(format!("cycles {c} must be finite and ≥ 0")));
            continue;
        }
        if inst.ops[j].hbm_cycles.get() == 0.0 && c > 0.0 {
            v.push(bad(format!("{} has no HBM data", inst.ops[j].name)));
        }
        if k > j {
            v.push(bad(format!(
                "{} runs in stage {}: its data must load in stages ≤ {j}",
                inst.ops[j].name,
                j + 1
            )));
            continue;
        }
        if c > 0.0 {
            loaded[j] += c;
            start[j] = start[j].min(k);
            last[j] = last[j].max(k);
        }
    }
    for j in inst.loads().into_iter().map(|j| j.index()) {
        let h = inst.ops[j].hbm_cycles.get();
        if (loaded[j] - h).abs() > LOAD_TOLERANCE * h.max(1.0) {
            v.push(Violation::IncompleteLoad {
                op: inst.ops[j].name.clone(),
                loaded: loaded[j],
                required: h,
            });
        }
        // The oracle's own statement of the window rule (deliberately not
        // `Instance::window_start`): load j may start no earlier than W stages before the
        // stage j + 1 in which its operator runs — W its own (a load released at run time),
        // then the instance's.
        type Make = fn(String, usize, usize) -> Violation;
        let windows: [(Option<u32>, Make); 2] = [
            (inst.ops[j].preload_window, |op, start, earliest| {
                Violation::Released {
                    op,
                    start,
                    earliest,
                }
            }),
            (inst.preload_window, |op, start, earliest| {
                Violation::Window {
                    op,
                    start,
                    earliest,
                }
            }),
        ];
        for (w, make) in windows {
            let Some(w) = w else { continue };
            let earliest = (j + 1).saturating_sub(w as usize);
            if start[j] != usize::MAX && start[j] < earliest {
                v.push(make(inst.ops[j].name.clone(), start[j], earliest));
            }
        }
    }
    // Load order: an earlier load has no work after a later load's start.
    let mut latest_end: Option<(usize, usize)> = None; // (stage, op) of the latest end so far
    for j in s.load_order.iter().map(|j| j.index()) {
        if j >= n || start[j] == usize::MAX {
            continue;
        }
        if let Some((end, e)) = latest_end {
            if end > start[j] {
                v.push(Violation::OrderOverlap {
                    earlier: inst.ops[e].name.clone(),
                    later: inst.ops[j].name.clone(),
                    stage: end,
                    later_start: start[j],
                });
            }
        }
        if latest_end.is_none_or(|(end, _)| last[j] > end) {
            latest_end = Some((last[j], j));
        }
    }
    check_memory(inst, s, &start, &mut v);
    v
}

fn check_order(inst: &Instance, s: &Schedule, v: &mut Vec<Violation>) {
    let loads = inst.loads();
    let mut sorted = s.load_order.clone();
    sorted.sort_unstable();
    if sorted != loads {
        v.push(Violation::LoadOrderSet {
            detail: format!(
                "must list each of the {} operators with HBM data once (got {} entries)",
                loads.len(),
                s.load_order.len()
            ),
        });
        return;
    }
    let (limit, policy) = match inst.load_order {
        LoadOrder::Named(NamedOrder::Free) => return,
        LoadOrder::Named(NamedOrder::Fixed) => (0, "fixed".to_string()),
        LoadOrder::Displacement { max_displacement } => (
            max_displacement as usize,
            format!("max displacement {max_displacement}"),
        ),
    };
    for (position, &id) in s.load_order.iter().enumerate() {
        let rank = loads.binary_search(&id).unwrap_or_default();
        let j = id.index();
        if position.abs_diff(rank) > limit {
            v.push(Violation::LoadOrderPolicy {
                op: inst.ops[j].name.clone(),
                position,
                rank,
                policy: policy.clone(),
            });
        }
    }
}

/// Stage k (0 = prologue, k ≥ 1 executes ops[k-1]) holds the executing operator's hot
/// footprint plus the cold data of every operator j ≥ k whose load started by stage k.
fn check_memory(inst: &Instance, s: &Schedule, start: &[usize], v: &mut Vec<Violation>) {
    let n = inst.ops.len();
    let cold = |j: usize| inst.ops[j].options[s.options[j]].cold.get();
    // Sweep stages, adding each load's cold bytes at its start and dropping them when its
    // operator runs: the loads grouped by start stage (a counting sort, no list per stage).
    let mut first = vec![0usize; n + 2];
    for &k in start.iter().filter(|&&k| k != usize::MAX) {
        first[k + 1] += 1;
    }
    for k in 1..first.len() {
        first[k] += first[k - 1];
    }
    let mut by_start = vec![0usize; first[n + 1]];
    let mut next = first.clone();
    for (j, &k) in start.iter().enumerate().filter(|(_, &k)| k != usize::MAX) {
        by_start[next[k]] = j;
        next[k] += 1;
    }
    let mut resident: u64 = 0;
    for k in 0..=n {
        for &j in &by_start[first[k]..first[k + 1]] {
            resident += cold(j);
        }
        let hot = if k == 0 {
            0
        } else {
            let i = k - 1;
            if start[i] != usize::MAX {
                resident -= cold(i);
            }
            inst.ops[i].options[s.options[i]].hot.get()
        };
        let used = hot + resident;
        if used > inst.sram_bytes.get() {
            v.push(Violation::Memory {
                stage: k,
                op: k.checked_sub(1).map(|i| inst.ops[i].name.clone()),
                used,
                sram: inst.sram_bytes.get(),
            });
        }
    }
}
