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
//! Depth is bounded by one layer (`max_depth` operators ahead).

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

/// Buffers [`allocate_at`] reuses from one candidate to the next (it runs for every depth of
/// every stage).
#[derive(Default)]
struct Scratch {
    residents: Vec<usize>,
    before: Vec<usize>,
}

/// Cost-aware allocation for the operator of stage `t` at depth `g`: sets its option (and any
/// traded resident options) and returns d_t plus the change in the durations of the residents'
/// stages. `None` when the operator fits in no option. Every change is logged in `undo`.
#[allow(clippy::too_many_arguments)]
fn allocate_at(
    inst: &Instance,
    order: &[usize],
    prefix_max: &[usize],
    st: &mut Stages,
    options: &mut [usize],
    (undo, scratch): (&mut Undo, &mut Scratch),
    t: usize,
    g: usize,
    cost_aware: bool,
) -> Option<f64> {
    let i = t - 1;
    let Scratch { residents, before } = scratch;
    live_loads(order, prefix_max, g, i, residents);
    before.clear();
    before.extend(residents.iter().map(|&j| options[j]));
    let o = allocate(inst, options, i, residents, cost_aware);
    let mut delta = 0.0;
    for (k, &j) in residents.iter().enumerate() {
        if options[j] != before[k] {
            undo.options.push((j, before[k]));
            let old = st.duration(j + 1);
            undo.stage(st, j + 1);
            st.exec[j + 1] = inst.ops[j].options[options[j]].exec_cycles.get();
            st.comm[j + 1] = inst.ops[j].options[options[j]].comm_cycles.get();
            delta += st.duration(j + 1) - old;
        }
    }
    let o = o?;
    undo.options.push((i, options[i]));
    options[i] = o;
    undo.stage(st, t);
    st.exec[t] = inst.ops[i].options[o].exec_cycles.get();
    st.comm[t] = inst.ops[i].options[o].comm_cycles.get();
    Some(st.duration(t) + delta)
}

/// Forces the load at order position `q` to start no earlier than stage `earliest`: placed
/// latest-first before the load behind it (`next_start`). Returns the change in Σ stage
/// durations; logs in `undo`.
#[allow(clippy::too_many_arguments)]
fn force(
    inst: &Instance,
    order: &[usize],
    st: &mut Stages,
    options: &[usize],
    placed: &mut [Pieces],
    undo: &mut Undo,
    earliest: usize,
    q: usize,
    next_start: &mut usize,
) -> f64 {
    let j = order[q];
    let deadline = j.min(*next_start);
    // Never before the preload window opens (the prologue forces from stage 0).
    let window = inst.window_start(OpId(j)).index();
    let from = earliest.max(window).min(deadline);
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

/// The backward pass for load order `order` (operator indices with HBM data) with preload
/// depth bounded by `max_depth` operators. `None` when some operator fits in no option.
fn inductive(
    inst: &Instance,
    order: &[usize],
    max_depth: usize,
    cost_aware: bool,
) -> Option<Schedule> {
    let n = inst.ops.len();
    let nloads = order.len();
    let mut pos = vec![usize::MAX; n];
    for (q, &j) in order.iter().enumerate() {
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
    let mut prefix_max = vec![0usize; nloads + 1];
    for (q, &j) in order.iter().enumerate() {
        prefix_max[q + 1] = prefix_max[q].max(j);
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
    let mut scratch = Scratch::default();
    let mut started = nloads; // g(t+1): loads started by the stage after the current one
    let mut suffix = 0.0; // Σ durations of the stages after the current one
    for t in (1..=n).rev() {
        let i = t - 1;
        // Candidate depths g ∈ [lb, min(started, ub)], ub from the one-layer bound.
        let ub = order
            .iter()
            .position(|&j| j > i + max_depth)
            .unwrap_or(nloads);
        let lo = lb[t].min(started);
        let hi = started.min(ub).max(lo);
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
                order,
                &prefix_max,
                &mut st,
                &mut options,
                (&mut alloc, &mut scratch),
                t,
                g,
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
        let (cost, g) = best?;
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
        allocate_at(
            inst,
            order,
            &prefix_max,
            &mut st,
            &mut options,
            (&mut keep, &mut scratch),
            t,
            g,
            cost_aware,
        )?;
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
    let load_order = order.iter().copied().map(OpId).collect();
    let mut s = Schedule::new(
        inst,
        "elk-dyn-greedy",
        options,
        load_order,
        load_work,
        Cycles::ZERO,
    );
    s.makespan_cycles = elk_sim::evaluate(inst, &s).makespan_cycles;
    Some(s)
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
    residents: &[usize],
    cost_aware: bool,
) -> Option<usize> {
    let sram = inst.sram_bytes.get();
    let resident_cold = |opts: &[usize]| {
        residents
            .iter()
            .map(|&j| inst.ops[j].options[opts[j]].cold.get())
            .sum::<u64>()
    };
    let op = &inst.ops[i];
    let mut o = fastest(op, sram.checked_sub(resident_cold(opts))?, u64::MAX)?;
    if !cost_aware {
        // Ablation: residents keep their smallest-cold layouts; no trades.
        return Some(o);
    }
    loop {
        // The next faster option of i and the room it needs.
        let room = sram - resident_cold(opts);
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
            opts[j] = x;
        }
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

    /// The backward pass for load order `order` (the operators with HBM data). `None` when
    /// some operator fits in no option beside its resident loads.
    pub fn pass(&self, inst: &Instance, order: &[OpId]) -> Option<Schedule> {
        self.pass_at_depth(inst, order, self.depth(inst))
    }

    /// [`Self::pass`] with the preload-depth bound given ([`Self::depth`] detects the layer:
    /// callers making many passes over one instance compute it once).
    pub fn pass_at_depth(&self, inst: &Instance, order: &[OpId], depth: usize) -> Option<Schedule> {
        let order: Vec<usize> = order.iter().map(|j| j.index()).collect();
        inductive(inst, &order, depth, self.cost_aware)
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
        let depth = self.depth(inst);
        let outcome = Outcome::heuristic(
            self.pass(inst, &inst.loads())
                .ok_or_else(|| "some operator fits in no option beside its resident loads".into()),
        );
        Ok(Solved {
            outcome,
            stop: StopReason::Completed,
            notes: vec![format!("preload depth up to {depth} operators")],
        })
    }
}
