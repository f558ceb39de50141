//! The reference artifact's scheduler core: a continuous-time **backward timeline** (SPEC §5,
//! the faithful-Elk issue). Time runs backwards from 0, the end of the last operator.
//!
//! - Every operator gets an execution interval `[s, e]`; loads form **one serialized HBM
//!   stream** in load order, each ending at min(start of its operator, start of the next load)
//!   — as late as it can, packed against the loads after it. The latency is −(the earliest
//!   start).
//! - For operator n the **candidate deadlines** come from the loads already placed: with the
//!   loads at load-order positions ≥ q starting after n ends, n may end at
//!   e(q) = min(start of n + 1, start of load q) while the loads before q (of operators after n)
//!   are resident. The pass keeps the q that lets n start latest.
//! - A load of option o lasts L = max(H, V/θ), V = ν·H its NoC time (the artifact's *load
//!   stretching*); it takes the NoC fraction V/L. Loads have NoC priority (*delay-comp*): an
//!   executing operator's shifts run on the NoC the overlapping loads leave, so it lasts
//!   max(exec, the time its comm cycles need at that residual rate).
//! - Plans: [`Plans::Argmin`] is the artifact's per-operator rule — among options with cold and
//!   hot ≤ B = SRAM − 1.01·Σ w over the residents, argmin exec + π, π = V/2 (half the load's
//!   NoC time for that cold layout), w = √(c_min·c_chosen). [`Plans::SmallestCold`] is Basic's
//!   (w = c_min), [`Plans::Fixed`] Static's.
//!
//! One guard is ours: a plan must also fit SRAM beside the residents' *actual* cold bytes (the
//! stage model's memory row), so every timeline converts to a valid schedule. On the reference
//! instances the artifact's own schedules all satisfy it.
//!
//! The timeline becomes stage-model decisions in [`convert`]; the simulator judges those.

pub(crate) mod convert;

use elk_stage::instance::{Instance, OpOption};
use elk_stage::units::OpId;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Which loads may be resident while an operator runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Admission {
    /// Basic: only loads up to the next operator with HBM data.
    NextLoad,
    /// Static: loads while their cold bytes fit the preload region (bytes per core).
    Region(u64),
    /// Elk: any, while the memory budget leaves the operator a plan.
    Any,
}

/// How each operator's option is chosen.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plans<'a> {
    /// The artifact's budgeted argmin of exec + π, residents weighed √(c_min·c_chosen)
    /// (Elk-Dyn, Elk-Full); `penalty: false` drops π (an ablation).
    Argmin {
        /// Whether π (half the load's NoC time) is added to exec.
        penalty: bool,
    },
    /// The artifact's Basic: the smallest cold layout that fits the budget, and the largest
    /// hot footprint (its cold→hot table's last entry) within it.
    SmallestCold,
    /// Given options (Static's split).
    Fixed(&'a [usize]),
}

/// Who has priority on the NoC when a load overlaps an executing operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NocPriority {
    /// *delay-comp*: loads; the operator's shifts use the NoC the loads leave (it stretches).
    Loads,
    /// *delay-load*: the executing operator; it keeps its time and loads keep their length
    /// max(H, V/θ), so the overlap is left for the stage model to charge.
    Execution,
}

/// The rules of one pass.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules<'a> {
    /// Load stretching: a load lasts max(H, V/θ).
    pub theta: f64,
    /// NoC priority between loads and execution.
    pub priority: NocPriority,
    /// Which loads may be resident.
    pub admission: Admission,
    /// At most this many operators ahead may be resident (`None`: no cap; an ablation).
    pub max_ahead: Option<usize>,
    /// How options are chosen.
    pub plans: Plans<'a>,
}

/// The artifact's budget slack on resident weights.
const BUDGET_SLACK: f64 = 1.01;

/// A finished timeline: times in cycles, 0 at the end of the last operator.
#[derive(Clone, Debug)]
pub(crate) struct Timeline {
    /// Every operator, in load order (operators without HBM data are zero-length loads).
    pub order: Vec<usize>,
    /// The option of every operator.
    pub options: Vec<usize>,
    /// Execution interval of every operator.
    pub exec: Vec<(f64, f64)>,
    /// Load interval of every operator (zero-length without HBM data).
    pub load: Vec<(f64, f64)>,
}

/// One load's length and NoC fraction under option `o` at stretching θ.
fn stretched(inst: &Instance, k: usize, o: usize, theta: f64) -> (f64, f64) {
    let h = inst.ops[k].hbm_cycles.get();
    let v = inst.ops[k].options[o].noc_per_hbm * h;
    let l = h.max(v / theta);
    (l, if l > 0.0 { v / l } else { 0.0 })
}

/// The placed suffix of the load stream: positions `first..` with their intervals.
struct Stream {
    /// Start and end of the load at each position (valid from `first` on).
    ls: Vec<f64>,
    le: Vec<f64>,
    /// NoC fraction of each placed load.
    frac: Vec<f64>,
    /// The first placed position (`order.len()` when none is).
    first: usize,
}

impl Stream {
    /// The start of the load at position `q` (+∞ past the end).
    fn start(&self, q: usize) -> f64 {
        self.ls.get(q).copied().unwrap_or(f64::INFINITY)
    }

    /// How long an operator ending at `e` with `exec` cycles, `comm` of them on the NoC, runs
    /// when its shifts get only the NoC the placed loads leave (delay-comp). `e` is at most
    /// the start of the load at position `below` (or `below` is past the end).
    fn duration(&self, e: f64, exec: f64, comm: f64, below: usize) -> f64 {
        if comm <= 0.0 {
            return exec;
        }
        // Walk back from e over the placed loads (serialized: disjoint, in position order).
        let mut need = comm;
        let mut t = e;
        // The first placed position whose load starts at or after e. Starts never decrease
        // with the position (each load ends by the next one's start), so it is at or before
        // `below`: found by stepping back over the (few) equal starts, not a binary search.
        let mut q = below.min(self.ls.len());
        while q > self.first && self.ls[q - 1] >= e {
            q -= 1;
        }
        debug_assert_eq!(
            q,
            self.ls[self.first..].partition_point(|&s| s < e) + self.first
        );
        while q > self.first && need > 0.0 {
            q -= 1;
            let (a, b) = (self.ls[q], self.le[q].min(t));
            if b < t {
                // A gap with the whole NoC.
                let gap = t - b;
                if gap >= need {
                    return exec.max(e - (t - need));
                }
                need -= gap;
                t = b;
            }
            if b > a {
                let rate = 1.0 - self.frac[q];
                let avail = (b - a) * rate;
                if avail >= need {
                    return exec.max(e - (t - need / rate));
                }
                need -= avail;
                t = a;
            }
        }
        exec.max(e - (t - need))
    }
}

/// Runs the backward pass for `order` (every operator once, the load order) under `rules`,
/// with `ranked` the options ranked for `rules.plans`. `Err` names the operator no option
/// fits.
fn run(
    inst: &Instance,
    order: &[usize],
    rules: &Rules,
    ranked: &Ranked,
) -> Result<Timeline, String> {
    assert!(
        ranked.rule == Rank::of(&rules.plans),
        "options ranked for another rule"
    );
    let n = inst.ops.len();
    let positions = order.len();
    let mut pos = vec![usize::MAX; n];
    for (q, &k) in order.iter().enumerate() {
        pos[k] = q;
    }
    let sram = inst.sram_bytes.get();
    let c_min: Vec<u64> = inst
        .ops
        .iter()
        .map(|op| op.options.iter().map(|o| o.cold.get()).min().unwrap_or(0))
        .collect();
    let has_load = |k: usize| inst.is_load(OpId(k));
    // next_load[k]: the first operator after k with HBM data (Basic's horizon).
    let mut next_load = vec![usize::MAX; n];
    for k in (0..n.saturating_sub(1)).rev() {
        next_load[k] = if has_load(k + 1) {
            k + 1
        } else {
            next_load[k + 1]
        };
    }
    let mut options = vec![usize::MAX; n];
    let mut exec: Vec<(f64, f64)> = vec![(0.0, 0.0); n];
    let mut load = vec![(0.0, 0.0); n];
    let mut stream = Stream {
        ls: vec![0.0; positions],
        le: vec![0.0; positions],
        frac: vec![0.0; positions],
        first: positions,
    };
    // Scheduled operators whose loads are not placed yet (a later-ordered load blocks them).
    let mut pending: Vec<usize> = Vec::new();
    for i in (0..n).rev() {
        let s_next: f64 = if i + 1 < n { exec[i + 1].0 } else { 0.0 };
        let weight = |k: usize| match rules.plans {
            Plans::Argmin { .. } => {
                ((c_min[k] as f64) * inst.ops[k].options[options[k]].cold.get() as f64).sqrt()
            }
            _ => c_min[k] as f64,
        };
        // Residents: `pending` always, then positions first..q.
        let mut resident_w = 0.0;
        let mut resident_cold = 0u64;
        let admissible = |k: usize, cold_sum: u64| -> bool {
            if !has_load(k) {
                return true;
            }
            // Resident while operator i runs: it starts by stage i + 1 — or, for operator 0,
            // possibly in the prologue (conservatively: every resident of operator 0).
            let latest_start = if i == 0 { 0 } else { i + 1 };
            if inst.window_start(OpId(k)).index() > latest_start
                || rules.max_ahead.is_some_and(|d| k > i + d)
            {
                return false;
            }
            match rules.admission {
                Admission::NextLoad => k <= next_load[i],
                Admission::Region(bytes) => cold_sum <= bytes,
                Admission::Any => cold_sum <= sram,
            }
        };
        let mut ok = true;
        for &k in &pending {
            resident_cold += inst.ops[k].options[options[k]].cold.get();
            resident_w += weight(k);
            ok &= admissible(k, resident_cold);
        }
        let mut best: Option<(f64, f64, usize)> = None; // (start, end, option)
        if ok {
            let mut q = stream.first;
            // Residents only join as q grows, so the budget only shrinks and the memory row
            // only fills: an option out of reach at one deadline is out of reach at every
            // later one. The scan of the ranked options resumes where it stopped, and once
            // none fits, no later deadline has a plan either.
            let mut cursor = 0;
            loop {
                let e = s_next.min(stream.start(q));
                // The stage model keeps the next operator's data in SRAM during this stage
                // (it loads by then), whether or not the timeline counts it resident.
                let next_cold = match i + 1 {
                    m if m < n && has_load(m) && pos[m] >= q => {
                        inst.ops[m].options[options[m]].cold.get()
                    }
                    _ => 0,
                };
                let actual = resident_cold + next_cold;
                let budget = (resident_w, actual);
                let p = plan(
                    inst,
                    rules,
                    (ranked, &mut cursor),
                    &stream,
                    i,
                    (e, q),
                    budget,
                );
                let Some((o, d)) = p else {
                    break;
                };
                if best.is_none_or(|(s, _, _)| e - d > s) {
                    best = Some((e - d, e, o));
                }
                if q >= positions || stream.start(q) >= s_next {
                    break;
                }
                let k = order[q];
                if has_load(k) {
                    resident_cold += inst.ops[k].options[options[k]].cold.get();
                    resident_w += weight(k);
                    if !admissible(k, resident_cold) {
                        break;
                    }
                }
                q += 1;
            }
        }
        let Some((s, e, o)) = best else {
            return Err(format!(
                "operator {} ({}): no option fits beside its resident loads",
                i, inst.ops[i].name
            ));
        };
        options[i] = o;
        exec[i] = (s, e);
        if pos[i] < stream.first {
            pending.push(i);
        }
        // Place every load whose operator is now scheduled, back to front.
        while stream.first > 0 && order[stream.first - 1] >= i {
            let q = stream.first - 1;
            let k = order[q];
            let (l, frac) = stretched(inst, k, options[k], rules.theta);
            let le = exec[k].0.min(stream.start(q + 1));
            stream.ls[q] = le - l;
            stream.le[q] = le;
            stream.frac[q] = frac;
            stream.first = q;
            load[k] = (le - l, le);
            pending.retain(|&p| p != k);
        }
    }
    Ok(Timeline {
        order: order.to_vec(),
        options,
        exec,
        load,
    })
}

/// Which ranking a [`Ranked`] holds: [`Plans`] without the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rank {
    Given,
    SmallestCold,
    Argmin { penalty: bool },
}

impl Rank {
    fn of(plans: &Plans) -> Rank {
        match *plans {
            Plans::Fixed(_) => Rank::Given,
            Plans::SmallestCold => Rank::SmallestCold,
            Plans::Argmin { penalty } => Rank::Argmin { penalty },
        }
    }
}

/// Every operator's options in the order its rule prefers them (the first that fits the
/// budget is its plan), flat: the options of operator `i` are `order[at[i]..at[i + 1]]`.
/// An operator's plan at each candidate deadline is then a scan that stops at the first
/// option within the budget instead of a minimum over all of them; built once per instance
/// and rule, it serves every pass (Elk-Full runs hundreds).
pub(crate) struct Ranked {
    order: Vec<u32>,
    at: Vec<usize>,
    rule: Rank,
}

impl Ranked {
    /// `inst`'s options ranked for `plans`.
    pub(crate) fn new(inst: &Instance, plans: &Plans) -> Ranked {
        let mut order = Vec::new();
        let mut at = Vec::with_capacity(inst.ops.len() + 1);
        at.push(0);
        // Operators of one shape share their options (an MoE step has thousands of experts
        // and a hundred shapes): such an operator with the same load takes the ranking already
        // made, as sorting again would give the same.
        let mut made: HashMap<(*const Vec<OpOption>, u64), usize> = HashMap::default();
        for op in &inst.ops {
            let from = order.len();
            let key = (Arc::as_ptr(&op.options), op.hbm_cycles.get().to_bits());
            if let Some(&earlier) = made.get(&key) {
                order.extend_from_within(earlier..earlier + op.options.len());
                at.push(order.len());
                continue;
            }
            made.insert(key, from);
            order.extend(0..op.options.len() as u32);
            let mine = &mut order[from..];
            match plans {
                // Static's options are given: nothing to rank.
                Plans::Fixed(_) => {}
                // Basic: the smallest cold layout, then the largest hot, then the fastest.
                Plans::SmallestCold => mine.sort_by(|&a, &c| {
                    let (x, y) = (&op.options[a as usize], &op.options[c as usize]);
                    x.cold
                        .cmp(&y.cold)
                        .then(y.hot.cmp(&x.hot))
                        .then(x.exec_cycles.total_cmp(&y.exec_cycles))
                        .then(a.cmp(&c))
                }),
                // The artifact's argmin of exec + π (π = V/2 with the penalty on).
                Plans::Argmin { penalty } => {
                    let h = if *penalty { op.hbm_cycles.get() } else { 0.0 };
                    let cost = |o: u32| {
                        let x = &op.options[o as usize];
                        x.exec_cycles.get() + x.noc_per_hbm * h / 2.0
                    };
                    mine.sort_by(|&a, &c| cost(a).total_cmp(&cost(c)).then(a.cmp(&c)));
                }
            }
            at.push(order.len());
        }
        Ranked {
            order,
            at,
            rule: Rank::of(plans),
        }
    }

    /// Operator `i`'s options, preferred first.
    fn of(&self, i: usize) -> &[u32] {
        &self.order[self.at[i]..self.at[i + 1]]
    }
}

/// Operator `i`'s option and duration when it ends at `e` (at most the start of the load at
/// position `below`) beside residents of weight `resident_w` and `resident_cold` bytes;
/// `None` when no option fits. The ranked options before `cursor` are known not to fit
/// (they did not beside fewer residents); `cursor` is left at the option chosen.
fn plan(
    inst: &Instance,
    rules: &Rules,
    (ranked, cursor): (&Ranked, &mut usize),
    stream: &Stream,
    i: usize,
    (e, below): (f64, usize),
    (resident_w, resident_cold): (f64, u64),
) -> Option<(usize, f64)> {
    let sram = inst.sram_bytes.get();
    let op = &inst.ops[i];
    // The stage model's memory row beside the actual residents (and, for the first operator,
    // its own cold in the prologue).
    let fits = |o: usize| {
        let x = &op.options[o];
        x.hot.get() + resident_cold <= sram && (i > 0 || x.cold.get() + resident_cold <= sram)
    };
    let budget = |w: f64| sram as f64 - BUDGET_SLACK * w;
    let within = |o: usize, b: f64| {
        let x = &op.options[o];
        (x.cold.get() as f64) <= b && (x.hot.get() as f64) <= b && fits(o)
    };
    let o = match rules.plans {
        Plans::Fixed(opts) => Some(opts[i]).filter(|&o| fits(o))?,
        // The first ranked option within the budget: the minimum of the rule's order over
        // those that fit, as [`Ranked`] sorts them.
        Plans::SmallestCold | Plans::Argmin { .. } => {
            let b = budget(resident_w);
            let mine = ranked.of(i);
            // The resumed scan's premise: nothing it skips fits now.
            debug_assert!(mine[..*cursor].iter().all(|&o| !within(o as usize, b)));
            while *cursor < mine.len() && !within(mine[*cursor] as usize, b) {
                *cursor += 1;
            }
            *mine.get(*cursor)? as usize
        }
    };
    let x = &op.options[o];
    let d = match rules.priority {
        NocPriority::Loads => stream.duration(e, x.exec_cycles.get(), x.comm_cycles.get(), below),
        NocPriority::Execution => x.exec_cycles.get(),
    };
    Some((o, d))
}

/// Why a timeline gave no schedule.
#[derive(Debug)]
pub(crate) enum NoSchedule {
    /// Some operator fits in no option (a heuristic's "nothing found").
    NoPlan(String),
    /// The converted decisions break a stage-model rule (the preload window or the load-order
    /// policy can; for a faithful method on a plain instance it is a bug).
    Invalid(String),
}

/// The pass, converted and priced by the simulator (`makespan_cycles` is the simulator's).
pub(crate) fn schedule(
    inst: &Instance,
    method: &str,
    order: &[usize],
    rules: &Rules,
) -> Result<elk_stage::schedule::Schedule, NoSchedule> {
    schedule_ranked(inst, method, order, rules, &Ranked::new(inst, &rules.plans))
}

/// [`schedule`] with the options already ranked for `rules.plans` (for many passes over one
/// instance).
pub(crate) fn schedule_ranked(
    inst: &Instance,
    method: &str,
    order: &[usize],
    rules: &Rules,
    ranked: &Ranked,
) -> Result<elk_stage::schedule::Schedule, NoSchedule> {
    let t = run(inst, order, rules, ranked).map_err(NoSchedule::NoPlan)?;
    let mut s = convert::to_schedule(inst, method, &t);
    if let Some(v) = elk_sim::validate(inst, &s).first() {
        return Err(NoSchedule::Invalid(v.to_string()));
    }
    s.makespan_cycles = elk_sim::evaluate(inst, &s).makespan_cycles;
    Ok(s)
}
