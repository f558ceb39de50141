//! `elk-dyn-greedy`: elk-opt's Elk-Dyn before the faithful one, kept as a named variant — the
//! paper's greedy cost-aware allocator (which the artifact never runs) on a stage-by-stage
//! backward pass. Inductive scheduling — a backward pass from the last operator. For the
//! operator executing in stage t it chooses the *preload depth*: how many loads (a prefix of
//! the load order) have started by stage t. Loads that the chosen depth excludes but that
//! started by stage t+1 are "forced": they are placed now, in stages ≥ t+1, each as late as
//! its deadline allows, filling spare HBM/NoC capacity and extending a stage only when a load
//! must finish. The operator's option comes from cost-aware allocation: it gets the SRAM the
//! resident cold data leaves, and resident operators' cold layouts are traded greedily,
//! smallest Δcycles/Δbytes first, while that pays. The depth kept is the one that lets the
//! suffix start latest (smallest Σ of stage durations from t on); ties go to the shallower.
//! Depth is bounded by one layer (`max_depth` operators ahead), by SRAM (a depth whose
//! resident cold data leaves the operator no option is skipped without being tried) and by the
//! preload windows: a load starts no earlier than its own window opens
//! ([`Instance::window_start`]) nor than any load ordered before it may start (the loads
//! follow their order), so a depth counts only loads that may have started.

use crate::common::fastest;
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::schedule::{Schedule, Work};
use elk_stage::units::{Cycles, OpId, Stage};

/// Per-stage resource use while the backward pass places loads.
#[derive(Clone)]
struct Stages {
    exec: Vec<f64>,
    comm: Vec<f64>,
    hbm: Vec<f64>,
    noc: Vec<f64>,
}

impl Stages {
    fn duration(&self, t: usize) -> f64 {
        self.exec[t]
            .max(self.comm[t] + self.noc[t])
            .max(self.hbm[t])
    }
}

/// A load placement: (stage, cycles) pieces.
type Pieces = Vec<(usize, f64)>;

/// Places load `h` cycles with NoC factor `nu` in stages `lo..=hi`, latest stage first, into
/// spare capacity; what is left goes into stage `lo` (extending it). Returns the pieces.
fn place_late(st: &mut Stages, lo: usize, hi: usize, h: f64, nu: f64) -> Pieces {
    let mut pieces = Vec::new();
    let mut left = h;
    let mut t = hi;
    loop {
        let d = st.duration(t);
        let mut spare = d - st.hbm[t];
        if nu > 0.0 {
            spare = spare.min((d - st.comm[t] - st.noc[t]) / nu);
        }
        let take = if t == lo {
            left
        } else {
            spare.max(0.0).min(left)
        };
        if take > 0.0 {
            st.hbm[t] += take;
            st.noc[t] += take * nu;
            pieces.push((t, take));
            left -= take;
        }
        if left <= 1e-12 * h || t == lo {
            if left > 0.0 {
                if let Some(p) = pieces.last_mut() {
                    p.1 += left;
                    st.hbm[p.0] += left;
                    st.noc[p.0] += left * nu;
                }
            }
            break;
        }
        t -= 1;
    }
    pieces.reverse();
    pieces
}

/// What a candidate changed, to take it back.
#[derive(Default)]
struct Undo {
    stages: Vec<(usize, [f64; 4])>,
    options: Vec<(usize, usize)>,
    placed: Vec<usize>,
}

impl Undo {
    fn stage(&mut self, st: &Stages, t: usize) {
        self.stages
            .push((t, [st.exec[t], st.comm[t], st.hbm[t], st.noc[t]]));
    }

    /// Takes every logged change back, newest first, and empties the log (keeping its
    /// buffers for the next candidate).
    fn revert(&mut self, st: &mut Stages, options: &mut [usize], placed: &mut [Pieces]) {
        for (t, [e, c, h, n]) in self.stages.drain(..).rev() {
            st.exec[t] = e;
            st.comm[t] = c;
            st.hbm[t] = h;
            st.noc[t] = n;
        }
        for (j, o) in self.options.drain(..).rev() {
            options[j] = o;
        }
        for q in self.placed.drain(..) {
            placed[q].clear();
        }
    }

    /// Forgets the log: its changes stay.
    fn keep(&mut self) {
        self.stages.clear();
        self.options.clear();
        self.placed.clear();
    }
}

/// Loads among the first `g` of the order whose operator runs after `i`, found by walking back
/// from position g − 1 until no later operator remains (`prefix_max[p]` = largest operator in
/// `order[..p]`), so the cost is the window of live loads, not the whole prefix. Written into
/// `live`.
fn live_loads(order: &[usize], prefix_max: &[usize], g: usize, i: usize, live: &mut Vec<usize>) {
    live.clear();
    let mut p = g;
    while p > 0 && prefix_max[p] > i {
        p -= 1;
        if order[p] > i {
            live.push(order[p]);
        }
    }
    live.reverse();
}

/// The loads resident while the operator of a stage runs at some depth g — the live loads
/// among the first g of the order — and their cold bytes at their current options. The depth
/// sweep keeps one and drops a load per step ([`Residents::shallower`]) instead of collecting
/// and summing them again for every depth.
#[derive(Default)]
struct Residents {
    loads: Vec<usize>,
    cold: u64,
}

impl Residents {
    /// The residents of operator `i` at depth `g`.
    fn at(&mut self, inst: &Instance, order: &Order, options: &[usize], g: usize, i: usize) {
        live_loads(order.loads, &order.prefix_max, g, i, &mut self.loads);
        self.cold = self.loads.iter().map(|&j| cold_of(inst, options, j)).sum();
    }

    /// From depth g to g − 1 for operator `i`: the load at position g − 1, if it is live, is
    /// the last resident.
    fn shallower(&mut self, inst: &Instance, order: &Order, options: &[usize], g: usize, i: usize) {
        let j = order.loads[g - 1];
        if j > i {
            debug_assert_eq!(self.loads.last(), Some(&j));
            self.loads.pop();
            self.cold -= cold_of(inst, options, j);
        }
    }
}

/// Operator `j`'s cold bytes at its option in `options`.
fn cold_of(inst: &Instance, options: &[usize], j: usize) -> u64 {
    inst.ops[j].options[options[j]].cold.get()
}

/// Cost-aware allocation for the operator of stage `t` beside `residents`: sets its option
/// (and any traded resident options) and returns d_t plus the change in the durations of the
/// residents' stages. `None` when the operator fits in no option. Every change is logged in
/// `undo`; `traded` is a buffer.
fn allocate_at(
    inst: &Instance,
    st: &mut Stages,
    options: &mut [usize],
    (undo, traded): (&mut Undo, &mut Vec<(usize, usize)>),
    residents: &Residents,
    t: usize,
    cost_aware: bool,
) -> Option<f64> {
    let i = t - 1;
    traded.clear();
    let o = allocate(inst, options, i, residents, cost_aware, traded)?;
    let mut delta = 0.0;
    if !traded.is_empty() {
        // In resident order, so the sum is the same whichever order the trades came in.
        for &j in &residents.loads {
            let Some(&(_, before)) = traded.iter().find(|&&(k, _)| k == j) else {
                continue;
            };
            undo.options.push((j, before));
            let old = st.duration(j + 1);
            undo.stage(st, j + 1);
            st.exec[j + 1] = inst.ops[j].options[options[j]].exec_cycles.get();
            st.comm[j + 1] = inst.ops[j].options[options[j]].comm_cycles.get();
            delta += st.duration(j + 1) - old;
        }
    }
    undo.options.push((i, options[i]));
    options[i] = o;
    undo.stage(st, t);
    st.exec[t] = inst.ops[i].options[o].exec_cycles.get();
    st.comm[t] = inst.ops[i].options[o].comm_cycles.get();
    Some(st.duration(t) + delta)
}

/// A load order with the stage from which each of its loads may start.
struct Order<'a> {
    /// Operator indices with HBM data, in load order.
    loads: &'a [usize],
    /// `opens[q]`: the earliest stage load `q` may start — the latest window opening among
    /// loads `0..=q` (a load cannot start before one ordered ahead of it).
    opens: Vec<usize>,
    /// `prefix_max[p]`: the largest operator among the first p loads (for [`live_loads`]).
    prefix_max: Vec<usize>,
}

impl<'a> Order<'a> {
    /// `loads` with their release stages, or why no schedule can follow this order: a load
    /// that must finish before a load ordered ahead of it may start.
    fn new(inst: &Instance, loads: &'a [usize]) -> Result<Order<'a>, String> {
        let mut opens = Vec::with_capacity(loads.len());
        // The latest window opening so far and whose it is.
        let mut latest = (0, loads.first().copied().unwrap_or_default());
        for &j in loads {
            let w = inst.window_start(OpId(j)).index();
            if w > latest.0 {
                latest = (w, j);
            }
            let (open, by) = latest;
            if open > j {
                return Err(format!(
                    "the load order puts {}'s load (due by stage {j}) after {}'s, which may \
                     not start before stage {open}",
                    inst.ops[j].name, inst.ops[by].name
                ));
            }
            opens.push(open);
        }
        let mut prefix_max = vec![0usize; loads.len() + 1];
        for (q, &j) in loads.iter().enumerate() {
            prefix_max[q + 1] = prefix_max[q].max(j);
        }
        Ok(Order {
            loads,
            opens,
            prefix_max,
        })
    }

    /// How many of the first loads come before the first load of an operator after `last`
    /// (all of them if there is none): a binary search of [`Order::prefix_max`], as a scan
    /// of the order for every stage cost time quadratic in the model's size.
    fn ahead_of(&self, last: usize) -> usize {
        self.prefix_max[1..].partition_point(|&m| m <= last)
    }

    /// How many of the first loads may have started by stage `t`.
    fn startable_by(&self, t: usize) -> usize {
        self.opens.partition_point(|&s| s <= t)
    }
}

/// Forces the load at order position `q` to start no earlier than stage `earliest` (nor
/// before it may start): placed latest-first before the load behind it (`next_start`).
/// Returns the change in Σ stage durations; logs in `undo`.
#[allow(clippy::too_many_arguments)]
fn force(
    inst: &Instance,
    order: &Order,
    st: &mut Stages,
    options: &[usize],
    placed: &mut [Pieces],
    undo: &mut Undo,
    earliest: usize,
    q: usize,
    next_start: &mut usize,
) -> f64 {
    let j = order.loads[q];
    let deadline = j.min(*next_start);
    // Never before it may start (the prologue forces from stage 0). `Order::new` checked
    // that this is no later than the deadline: j ≥ opens[q], and the load behind starts at
    // ≥ opens[q + 1] ≥ opens[q].
    debug_assert!(order.opens[q] <= deadline);
    let from = earliest.max(order.opens[q]).min(deadline);
    let nu = inst.ops[j].options[options[j]].noc_per_hbm;
    let old: f64 = (from..=deadline).map(|u| st.duration(u)).sum();
    for u in from..=deadline {
        undo.stage(st, u);
    }
    let pieces = place_late(st, from, deadline, inst.ops[j].hbm_cycles.get(), nu);
    *next_start = pieces.first().map_or(*next_start, |p| p.0);
    placed[q] = pieces;
    undo.placed.push(q);
    (from..=deadline).map(|u| st.duration(u)).sum::<f64>() - old
}

/// The deepest depth in `lo..=hi` at which the operator of stage `t` still has an option,
/// with `residents` set to that depth's: the resident cold data grows with the depth, and
/// [`allocate`] fails as soon as it leaves no room for the operator's smallest hot footprint,
/// so every deeper depth would be tried for nothing. `Err`: not even `lo`.
fn deepest_fitting(
    inst: &Instance,
    order: &Order,
    options: &[usize],
    residents: &mut Residents,
    t: usize,
    (lo, hi): (usize, usize),
) -> Result<usize, String> {
    let i = t - 1;
    let sram = inst.sram_bytes.get();
    let least_hot = inst.ops[i].options.iter().map(|o| o.hot.get()).min();
    let fits = |cold: u64| least_hot.is_some_and(|h| cold.saturating_add(h) <= sram);
    residents.at(inst, order, options, lo, i);
    if !fits(residents.cold) {
        let n = residents.loads.len();
        return Err(format!(
            "operator {} (stage {t}) fits in no option beside {} B per core of cold data ({n} \
             load{} that must be resident by then)",
            inst.ops[i].name,
            residents.cold,
            if n == 1 { "" } else { "s" }
        ));
    }
    let mut g = lo;
    while g < hi {
        let j = order.loads[g];
        if j > i {
            let cold = residents.cold.saturating_add(cold_of(inst, options, j));
            if !fits(cold) {
                break;
            }
            residents.loads.push(j);
            residents.cold = cold;
        }
        g += 1;
    }
    Ok(g)
}

/// The backward pass for `order` with preload depth bounded by `max_depth` operators. `Err`
/// says why it found no schedule (an operator that fits in no option beside its resident
/// loads).
fn inductive(
    inst: &Instance,
    order: &Order,
    max_depth: usize,
    cost_aware: bool,
) -> Result<Schedule, String> {
    let n = inst.ops.len();
    let nloads = order.loads.len();
    let mut pos = vec![usize::MAX; n];
    for (q, &j) in order.loads.iter().enumerate() {
        pos[j] = q;
    }
    // lb[t]: loads that must have started by stage t (every load whose operator runs by t+1).
    let mut lb = vec![0usize; n + 2];
    for t in 0..=n {
        let own = if t < n && pos[t] != usize::MAX {
            pos[t] + 1
        } else {
            0
        };
        lb[t] = own.max(if t > 0 { lb[t - 1] } else { 0 });
    }
    let mut options = vec![usize::MAX; n];
    let mut st = Stages {
        exec: vec![0.0; n + 1],
        comm: vec![0.0; n + 1],
        hbm: vec![0.0; n + 1],
        noc: vec![0.0; n + 1],
    };
    let mut placed: Vec<Pieces> = vec![Vec::new(); nloads];
    // Change logs: of the depth sweep, of one candidate's allocation, of the depth kept.
    let (mut sweep, mut alloc, mut keep) = (Undo::default(), Undo::default(), Undo::default());
    let (mut residents, mut traded) = (Residents::default(), Vec::new());
    let mut started = nloads; // g(t+1): loads started by the stage after the current one
    let mut suffix = 0.0; // Σ durations of the stages after the current one
    for t in (1..=n).rev() {
        let i = t - 1;
        // Candidate depths g ∈ [lb, min(started, ub)], ub from the one-layer bound and the
        // loads that may have started by stage t (`Order::new` made sure lb is among them),
        // then cut to the depths whose residents leave the operator room.
        let ub = order.ahead_of(i + max_depth).min(order.startable_by(t));
        let lo = lb[t].min(started);
        let hi = started.min(ub).max(lo);
        let hi = deepest_fitting(inst, order, &options, &mut residents, t, (lo, hi))?;
        // Sweep the depth from deep to shallow: each step forces one more load (placed on top
        // of the previous ones), and the allocation is evaluated on top and taken back.
        let first_placed = |placed: &[Pieces]| {
            (started..nloads)
                .find_map(|q| placed[q].first().map(|p| p.0))
                .unwrap_or(n)
        };
        let mut next_start = first_placed(&placed);
        let mut place_delta = 0.0;
        for q in (hi..started).rev() {
            place_delta += force(
                inst,
                order,
                &mut st,
                &options,
                &mut placed,
                &mut sweep,
                t + 1,
                q,
                &mut next_start,
            );
        }
        let mut best: Option<(f64, usize)> = None;
        let mut g = hi;
        loop {
            if let Some(c) = allocate_at(
                inst,
                &mut st,
                &mut options,
                (&mut alloc, &mut traded),
                &residents,
                t,
                cost_aware,
            ) {
                let cost = suffix + place_delta + c;
                // Ties go to the shallower depth (evaluated later in this sweep).
                if best.is_none_or(|(b, _)| cost <= b) {
                    best = Some((cost, g));
                }
            }
            alloc.revert(&mut st, &mut options, &mut placed);
            if g == lo {
                break;
            }
            residents.shallower(inst, order, &options, g, i);
            g -= 1;
            place_delta += force(
                inst,
                order,
                &mut st,
                &options,
                &mut placed,
                &mut sweep,
                t + 1,
                g,
                &mut next_start,
            );
        }
        sweep.revert(&mut st, &mut options, &mut placed);
        let no_option = || {
            format!(
                "operator {} (stage {t}) fits in no option beside its resident loads",
                inst.ops[i].name
            )
        };
        let (cost, g) = best.ok_or_else(no_option)?;
        // Apply the chosen depth for good: the same placements, then the allocation.
        let mut next_start = first_placed(&placed);
        for q in (g..started).rev() {
            force(
                inst,
                order,
                &mut st,
                &options,
                &mut placed,
                &mut keep,
                t + 1,
                q,
                &mut next_start,
            );
        }
        residents.at(inst, order, &options, g, i);
        allocate_at(
            inst,
            &mut st,
            &mut options,
            (&mut keep, &mut traded),
            &residents,
            t,
            cost_aware,
        )
        .ok_or_else(no_option)?;
        keep.keep();
        started = g;
        suffix = cost;
    }
    // Prologue: the loads started by stage 0 (positions < started) go in stages ≥ 0.
    let mut next_start = (started..nloads)
        .find_map(|q| placed[q].first().map(|p| p.0))
        .unwrap_or(n);
    let mut done = Undo::default();
    for q in (0..started).rev() {
        force(
            inst,
            order,
            &mut st,
            &options,
            &mut placed,
            &mut done,
            0,
            q,
            &mut next_start,
        );
    }
    let load_work: Vec<Work> = order
        .loads
        .iter()
        .zip(&placed)
        .flat_map(|(&j, pieces)| {
            pieces.iter().map(move |&(t, c)| Work {
                op: OpId(j),
                stage: Stage(t),
                cycles: Cycles(c),
            })
        })
        .collect();
    let load_order = order.loads.iter().copied().map(OpId).collect();
    let mut s = Schedule::new(
        inst,
        "elk-dyn-greedy",
        options,
        load_order,
        load_work,
        Cycles::ZERO,
    );
    s.makespan_cycles = elk_sim::evaluate(inst, &s).makespan_cycles;
    Ok(s)
}

/// Cost-aware allocation for operator `i` with `residents` waiting in SRAM: its fastest option
/// in the room their cold data leaves; then, while a faster option of `i` needs more room,
/// shrink residents' cold layouts, cheapest Δexec/Δcold first, if the gain beats the loss.
/// Residents' new options must still fit their own execution stage beside the same residents
/// (a conservative check: the residents of their stage are a subset of `residents` plus the
/// loads behind them, whose colds only shrink here).
fn allocate(
    inst: &Instance,
    opts: &mut [usize],
    i: usize,
    Residents {
        loads: residents,
        cold,
    }: &Residents,
    cost_aware: bool,
    traded: &mut Vec<(usize, usize)>,
) -> Option<usize> {
    let sram = inst.sram_bytes.get();
    let mut resident_cold = *cold;
    let op = &inst.ops[i];
    let mut o = fastest(op, sram.checked_sub(resident_cold)?, u64::MAX)?;
    if !cost_aware {
        // Ablation: residents keep their smallest-cold layouts; no trades.
        return Some(o);
    }
    loop {
        // The next faster option of i and the room it needs.
        let room = sram - resident_cold;
        let Some(faster) = (0..op.options.len())
            .filter(|&x| {
                op.options[x].exec_cycles < op.options[o].exec_cycles
                    && op.options[x].hot.get() > room
            })
            .min_by_key(|&x| op.options[x].hot)
        else {
            return Some(o);
        };
        let need = op.options[faster].hot.get() - room;
        let gain = (op.options[o].exec_cycles - op.options[faster].exec_cycles).get();
        // Quick exit: even every resident at its smallest admissible cold frees too little.
        let freeable: u64 = residents
            .iter()
            .map(|&j| {
                let cur = &inst.ops[j].options[opts[j]];
                let least = inst.ops[j]
                    .options
                    .iter()
                    .filter(|alt| alt.hot <= cur.hot)
                    .map(|alt| alt.cold)
                    .min()
                    .unwrap_or(cur.cold);
                (cur.cold - least.min(cur.cold)).get()
            })
            .sum();
        if freeable < need {
            return Some(o);
        }
        // Cheapest trades: for each resident, its smallest-cold option that is not slower per
        // byte than needed; greedy by Δexec/Δcold.
        let mut trades: Vec<(f64, usize, usize, u64, f64)> = Vec::new();
        for &j in residents {
            let cur = &inst.ops[j].options[opts[j]];
            for (x, alt) in inst.ops[j].options.iter().enumerate() {
                if alt.cold < cur.cold && alt.hot <= cur.hot {
                    let freed = (cur.cold - alt.cold).get();
                    let loss = (alt.exec_cycles - cur.exec_cycles).get().max(0.0);
                    trades.push((loss / freed as f64, j, x, freed, loss));
                }
            }
        }
        trades.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let (mut freed, mut loss) = (0u64, 0.0);
        let mut chosen: Vec<(usize, usize)> = Vec::new();
        for &(_, j, x, f, l) in &trades {
            if freed >= need {
                break;
            }
            if chosen.iter().any(|&(cj, _)| cj == j) {
                continue;
            }
            chosen.push((j, x));
            freed += f;
            loss += l;
        }
        if freed < need || loss >= gain {
            return Some(o);
        }
        for (j, x) in chosen {
            if !traded.iter().any(|&(k, _)| k == j) {
                traded.push((j, opts[j]));
            }
            opts[j] = x;
        }
        resident_cold -= freed;
        o = faster;
    }
}

/// The greedy-allocation Elk-Dyn with loads in execution order. Its knobs are fields, so ablations run through
/// the [`Method`] trait like every other method.
#[derive(Clone, Copy, Debug)]
pub struct ElkDynGreedy {
    /// Cost-aware allocation (off: resident loads keep their smallest-cold layouts and the
    /// executing operator takes the fastest option that fits — the ablation of SPEC §7).
    pub cost_aware: bool,
    /// A cap on the preload depth in operators (`None`: one layer, and never beyond the
    /// preload window — see [`max_depth`]).
    pub max_depth: Option<usize>,
}

impl Default for ElkDynGreedy {
    fn default() -> ElkDynGreedy {
        ElkDynGreedy {
            cost_aware: true,
            max_depth: None,
        }
    }
}

impl ElkDynGreedy {
    /// The preload-depth bound this configuration uses on `inst`.
    pub fn depth(&self, inst: &Instance) -> usize {
        let bound = max_depth(inst);
        self.max_depth.map_or(bound, |d| d.min(bound))
    }

    /// The backward pass for load order `order` (the operators with HBM data). `Err` says
    /// why it found no schedule: some operator fits in no option beside its resident loads,
    /// or the order puts a load after one whose window opens too late for it.
    pub fn pass(&self, inst: &Instance, order: &[OpId]) -> Result<Schedule, String> {
        self.pass_at_depth(inst, order, self.depth(inst))
    }

    /// [`Self::pass`] with the preload-depth bound given ([`Self::depth`] detects the layer:
    /// callers making many passes over one instance compute it once).
    pub fn pass_at_depth(
        &self,
        inst: &Instance,
        order: &[OpId],
        depth: usize,
    ) -> Result<Schedule, String> {
        let loads: Vec<usize> = order.iter().map(|j| j.index()).collect();
        inductive(inst, &Order::new(inst, &loads)?, depth, self.cost_aware)
    }
}

/// Preload depth bound: one layer (detected), and never beyond the preload window.
pub fn max_depth(inst: &Instance) -> usize {
    let layer = inst.layers().ops_per_layer.max(1);
    inst.preload_window.map_or(layer, |w| layer.min(w as usize))
}

impl Method for ElkDynGreedy {
    fn name(&self) -> &str {
        "elk-dyn-greedy"
    }

    fn schedule(&self, inst: &Instance, _budget: &Budget) -> Result<Solved, MethodError> {
        crate::sizing::by_work(inst, |inst| self.run_on(inst))
    }
}

impl ElkDynGreedy {
    /// The method on `inst` as given, every option a choice (`schedule` gives it the
    /// instance with parallel sets sized by work).
    fn run_on(&self, inst: &Instance) -> Result<Solved, MethodError> {
        let depth = self.depth(inst);
        let outcome = Outcome::heuristic(self.pass(inst, &inst.loads()));
        Ok(Solved {
            outcome,
            stop: StopReason::Completed,
            notes: vec![format!("preload depth up to {depth} operators")],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elk_stage::instance::OpOption;
    use elk_stage::units::Bytes;

    /// x, then a and b with loads; b's load is released one stage before it runs (stage 2).
    fn released() -> Instance {
        let op = || vec![OpOption::new(10, 20, 50.0, 0.0, 0.0)];
        let mut inst = Instance::builder("released", Bytes(1000), 1e9)
            .op("x", Cycles(0.0), op())
            .op("a", Cycles(40.0), op())
            .op("b", Cycles(40.0), op())
            .build()
            .unwrap();
        inst.ops[2].preload_window = Some(1);
        inst
    }

    #[test]
    fn a_load_ordered_behind_a_released_one_starts_no_earlier() {
        let inst = released();
        let pass = ElkDynGreedy::default();
        // Execution order: valid, and b's load starts where its window opens.
        let s = pass.pass(&inst, &[OpId(1), OpId(2)]).unwrap();
        assert_eq!(elk_sim::validate(&inst, &s), vec![]);
        let b_start = s
            .load_work
            .iter()
            .filter(|w| w.op == OpId(2))
            .map(|w| w.stage);
        assert_eq!(b_start.min(), Some(Stage(2)));
        // b ahead of a: a is due by stage 1 but may not start before b's window opens.
        assert_eq!(
            pass.pass(&inst, &[OpId(2), OpId(1)]).unwrap_err(),
            "the load order puts a's load (due by stage 1) after b's, which may not start \
             before stage 2"
        );
    }
}
