//! The replay as a state machine over continuous time. Each step starts whatever may start
//! (the next operator, the next load), advances to the next event at the current fair rates,
//! then settles what that event ended: departed flows, a finished compute phase, a finished
//! operator, a paced DMA that must send what its budget's rounding left. Every step is a
//! method of [`Replay`], called in that fixed order, so a replay is deterministic.

use super::fabric::{Fabric, Utilisation};
use super::flows::{Flow, Flows, Kind};
use super::pacing::{LoadPolicy, Pacer};
use super::regions::SetRun;
use super::{DetailedBreakdown, DetailedConfig, DetailedError, DetailedReport, Overflow};
use crate::trace::{TraceEvent, TraceSink, Track};
use elk_model::chip::ChipSpec;
use elk_stage::instance::{Instance, OpOption};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

/// A replay in progress.
pub(super) struct Replay<'a> {
    inst: &'a Instance,
    s: &'a Schedule,
    /// ρ per unit of ν (the chip the instance was built for against this one).
    rho_per_nu: f64,
    sink: &'a mut dyn TraceSink,
    fabric: Fabric,
    flows: Flows,
    /// Now, cycles.
    t: f64,

    // Operators, executed one at a time in index order.
    /// The next operator to start.
    next_op: usize,
    /// (op, compute end) while it computes.
    running: Option<(usize, f64)>,
    /// (op, shift start) from its compute end until it finishes.
    shifting: Option<(usize, f64)>,
    /// The executing parallel set's members, when it runs region by region.
    set: Option<SetRun>,
    /// (op, when it finishes): its shift's last byte has left and the hops' latency runs.
    pending_done: Option<(usize, f64)>,
    /// The stage the last started operator began (0: the prologue).
    stage_begun: usize,
    /// When the last operator finished.
    last_end: f64,
    op_start: Vec<f64>,
    op_end: Vec<f64>,

    // Loads, one at a time in the schedule's load order.
    /// First stage in which each load has planned work (`usize::MAX`: none).
    start_stage: Vec<usize>,
    /// Position of the next load in the load order.
    qpos: usize,
    /// Loads that have started (their cold bytes are resident).
    load_started: Vec<bool>,
    /// (op, start, flows left) of the load in flight.
    active_load: Option<(usize, f64, usize)>,
    /// Operators whose data is in SRAM (or that have none).
    loaded: Vec<bool>,

    // Pacing (pacing.rs); `None` sends loads greedily.
    pacer: Option<Pacer>,
    /// The DMA has sent the current stage's budget and waits for the next stage.
    paused: bool,
    /// False once an operator has waited with the budget spent, until the next stage.
    budgeted: bool,

    // What the report counts.
    breakdown: DetailedBreakdown,
    overflow: Option<Overflow>,
    events: u64,
    steps: u64,
}

/// The first stage in which each operator's load has planned work.
fn first_load_stages(inst: &Instance, s: &Schedule) -> Vec<usize> {
    let n = inst.ops.len();
    let mut start_stage = vec![usize::MAX; n];
    for w in &s.load_work {
        if w.cycles > Cycles::ZERO && w.op.index() < n {
            start_stage[w.op.index()] = start_stage[w.op.index()].min(w.stage.index());
        }
    }
    start_stage
}

impl<'a> Replay<'a> {
    /// A replay of `s` on `chip` at time 0, nothing started. `Err` when `cfg`'s controllers
    /// are not cores of the chip.
    pub fn new(
        inst: &'a Instance,
        s: &'a Schedule,
        chip: &ChipSpec,
        cfg: &DetailedConfig,
        sink: &'a mut dyn TraceSink,
    ) -> Result<Replay<'a>, DetailedError> {
        let n = inst.ops.len();
        let fabric = Fabric::new(chip, cfg, (inst, s))?;
        let pacer = (cfg.loads == LoadPolicy::Paced).then(|| Pacer::new(inst, s, fabric.b_hbm));
        Ok(Replay {
            inst,
            s,
            rho_per_nu: cfg.rho_per_nu,
            sink,
            flows: Flows::new(fabric.net.capacity.len()),
            fabric,
            t: 0.0,
            next_op: 0,
            running: None,
            shifting: None,
            set: None,
            pending_done: None,
            stage_begun: 0,
            last_end: 0.0,
            op_start: vec![0.0; n],
            op_end: vec![0.0; n],
            start_stage: first_load_stages(inst, s),
            qpos: 0,
            load_started: vec![false; n],
            active_load: None,
            loaded: inst
                .ops
                .iter()
                .map(|o| o.hbm_cycles <= Cycles::ZERO)
                .collect(),
            paused: pacer.as_ref().is_some_and(|p| p.spent(0, 0.0)),
            budgeted: pacer.is_some(),
            pacer,
            breakdown: DetailedBreakdown::default(),
            overflow: None,
            events: 0,
            steps: 0,
        })
    }

    /// Runs the replay to the end of the last operator.
    pub fn run(mut self) -> Result<DetailedReport, DetailedError> {
        while !self.finished() {
            self.start_ready();
            self.start_member_shifts();
            if self.finished() {
                break;
            }
            self.flows.refresh(&self.fabric.net.capacity);
            let dt = self.next_event()?;
            self.advance(dt);
            self.depart();
            self.end_compute();
            self.end_operator();
            self.release_budget();
        }
        Ok(self.report())
    }

    fn option(&self, i: usize) -> &'a OpOption {
        &self.inst.ops[i].options[self.s.options[i]]
    }

    /// No operator computing, shifting or finishing.
    fn idle(&self) -> bool {
        self.running.is_none() && self.shifting.is_none() && self.pending_done.is_none()
    }

    fn finished(&self) -> bool {
        self.next_op >= self.inst.ops.len() && self.idle()
    }

    /// Paced: stage `stage`'s budget is sent.
    fn spent(&self, stage: usize) -> bool {
        self.pacer
            .as_ref()
            .is_some_and(|p| p.spent(stage, self.flows.delivered))
    }

    /// Paced, a stage ends only when its planned loads are done (the stage model's barrier),
    /// unless the DMA has nothing left it may send in it.
    fn dma_idle(&self) -> bool {
        self.active_load.is_none()
            && self.s.load_order.get(self.qpos).is_none_or(|j| {
                self.start_stage
                    .get(j.index())
                    .is_none_or(|&st| st > self.stage_begun)
            })
    }

    /// One interval on a trace track, labelled by operator `op`.
    fn trace(&mut self, track: Track, op: usize, start: f64, stage: usize) {
        self.sink.event(&TraceEvent {
            track,
            name: self.inst.ops[op].name.clone(),
            start_cycles: start,
            cycles: self.t - start,
            stage,
            option: Some(self.s.options[op]),
        });
    }

    /// Starts operators and loads until neither may start (one may enable the other).
    fn start_ready(&mut self) {
        loop {
            let op = self.operator_may_start();
            if op {
                self.start_operator();
            }
            let load = self.start_load();
            if !op && !load {
                break;
            }
        }
    }

    /// Nothing executing, the next operator's data in SRAM and, paced, its stage's budget
    /// sent (or nothing left the DMA may send in it).
    fn operator_may_start(&self) -> bool {
        self.idle()
            && self.next_op < self.inst.ops.len()
            && self.loaded[self.next_op]
            && (self.pacer.is_none() || self.spent(self.stage_begun) || self.dma_idle())
    }

    /// The next operator starts computing; paced, its stage's budget decides whether the
    /// DMA may send.
    fn start_operator(&mut self) {
        let i = self.next_op;
        let t = self.t;
        self.next_op = i + 1;
        self.events += 1;
        self.op_start[i] = t;
        self.breakdown.load_wait += t - self.last_end;
        self.stage_begun = i + 1;
        let mut comp = (self.option(i).exec_cycles - self.option(i).comm_cycles)
            .get()
            .max(0.0);
        let members = self.option(i).members.as_ref();
        if let Some(m) = members.filter(|_| self.fabric.sets.rings_of[i].is_some()) {
            let (run, end) = SetRun::start(i, t, m);
            comp = end - t;
            self.set = Some(run);
        }
        self.running = Some((i, t + comp));
        self.breakdown.compute += comp;
        if self.pacer.is_some() {
            self.budgeted = true;
            self.paused = self.spent(self.stage_begun);
            self.flows.hold_loads(self.paused);
        }
        self.sink.event(&TraceEvent {
            track: Track::Execution,
            name: self.inst.ops[i].name.clone(),
            start_cycles: t,
            cycles: comp,
            stage: i + 1,
            option: Some(self.s.options[i]),
        });
        self.check_memory(Some(i), i, i);
    }

    /// The next load in the load order starts, if none is in flight and its first planned
    /// stage has begun: one flow per controller, held if the DMA is paused.
    fn start_load(&mut self) -> bool {
        if self.active_load.is_some() || self.qpos >= self.s.load_order.len() {
            return false;
        }
        let j = self.s.load_order[self.qpos].index();
        if j >= self.inst.ops.len() || self.start_stage[j] > self.stage_begun {
            return false;
        }
        self.qpos += 1;
        self.load_started[j] = true;
        let controllers = self.fabric.controllers;
        let bytes = self.inst.ops[j].hbm_cycles.get() * self.fabric.b_hbm;
        let rho = self.option(j).noc_per_hbm * self.rho_per_nu;
        for c in 0..controllers {
            self.flows.push(Flow {
                kind: Kind::Load {
                    op: j,
                    controller: c,
                },
                remaining: bytes / controllers as f64,
                usage: self.fabric.load_usage(c, rho),
                cap: self.paused.then_some(0.0),
                start: self.t,
            });
        }
        self.active_load = Some((j, self.t, controllers));
        let executing = self.running.map(|r| r.0).or(self.shifting.map(|r| r.0));
        self.check_memory(executing, self.next_op, j);
        true
    }

    /// Records the first SRAM overflow, blamed on operator `blame`: the hot bytes of
    /// `executing` and the cold bytes of every started load from operator `from` on.
    fn check_memory(&mut self, executing: Option<usize>, from: usize, blame: usize) {
        let hot = executing.map_or(0, |i| self.option(i).hot.get());
        let cold: u64 = (from..self.inst.ops.len())
            .filter(|&j| self.load_started[j] && Some(j) != executing)
            .map(|j| self.option(j).cold.get())
            .sum();
        let used = hot + cold;
        let sram = self.inst.sram_bytes.get();
        if used > sram && self.overflow.is_none() {
            self.overflow = Some(Overflow {
                time_cycles: self.t,
                op: self.inst.ops[blame].name.clone(),
                used,
                sram,
            });
        }
    }

    /// Cycles to the next event: a compute end, an operator's finish, a flow's departure or,
    /// paced, the budget running out. `Err` when nothing will ever happen.
    fn next_event(&self) -> Result<f64, DetailedError> {
        let mut dt = f64::INFINITY;
        if let Some((_, end)) = self.running {
            dt = dt.min(end - self.t);
        }
        if let Some(set) = &self.set {
            dt = dt.min(set.until_due(self.t));
        }
        if let Some((_, at)) = self.pending_done {
            dt = dt.min(at - self.t);
        }
        dt = self.flows.until_departure(dt);
        if let Some(left) = self
            .pacer
            .as_ref()
            .filter(|_| self.budgeted && !self.paused)
            .map(|p| p.left(self.stage_begun, self.flows.delivered))
        {
            let loading = self.flows.load_rate();
            if loading > 0.0 {
                dt = dt.min(left.max(0.0) / loading);
            }
        }
        if !dt.is_finite() {
            return Err(DetailedError(format!(
                "stuck at {:.1} cycles: operator {} waits for a load that cannot start",
                self.t,
                self.inst
                    .ops
                    .get(self.next_op)
                    .map_or("?", |o| o.name.as_str())
            )));
        }
        Ok(dt.max(0.0))
    }

    /// Moves time and every flow on by `dt`; paced, the DMA pauses once the budget is sent.
    fn advance(&mut self, dt: f64) {
        self.flows.advance(dt);
        self.t += dt;
        self.steps += 1;
        if self.budgeted && !self.paused && self.spent(self.stage_begun) {
            self.paused = true;
            self.flows.hold_loads(true);
        }
    }

    /// Settles the flows that have moved all their bytes, in arrival order.
    fn depart(&mut self) {
        for flow in self.flows.take_finished() {
            self.events += 1;
            match flow.kind {
                Kind::Shift { op } => {
                    let at = self.t + self.fabric.net.shift_hops * self.fabric.hop_latency;
                    let members_done = self.set.take().map_or(at, |set| set.latest);
                    self.pending_done = Some((op, at.max(members_done)));
                    self.trace(Track::Noc, op, flow.start, op + 1);
                }
                Kind::MemberShift { op, ring } => {
                    let hops = self.fabric.net.rings[ring].1;
                    let at = self.t + hops * self.fabric.hop_latency;
                    if let Some(set) = &mut self.set {
                        set.flows -= 1;
                        set.latest = set.latest.max(at);
                    }
                    self.members_done(op);
                }
                Kind::Load { op, controller } => {
                    self.trace(Track::Controller(controller as u32), op, flow.start, op + 1);
                    self.load_flow_done();
                }
            }
        }
    }

    /// One flow of the load in flight has departed; after its last, the operator may use
    /// the data.
    fn load_flow_done(&mut self) {
        if let Some((j, start, left)) = self.active_load {
            if left <= 1 {
                // The slice ends when the operator may use the data (its last flow's
                // departure), so loads on the HBM track never overlap.
                self.loaded[j] = true;
                self.active_load = None;
                self.trace(Track::Hbm, j, start, self.start_stage[j]);
            } else {
                self.active_load = Some((j, start, left - 1));
            }
        }
    }

    /// An operator whose compute phase has ended shifts its `comm` cycles' bytes (or, with
    /// none, finishes at once).
    fn end_compute(&mut self) {
        let Some((i, end)) = self.running else {
            return;
        };
        if end > self.t {
            return;
        }
        self.running = None;
        self.events += 1;
        if self.set.is_some() {
            self.shifting = Some((i, self.t));
            self.members_done(i);
            return;
        }
        let comm = self.option(i).comm_cycles.get();
        if comm > 0.0 {
            self.push_chip_shift(i, comm);
            self.shifting = Some((i, self.t));
        } else {
            self.pending_done = Some((i, self.t));
        }
    }

    /// The executing set's members whose compute has ended start shifting inside their
    /// regions: each moves its NoC cycles' bytes at its group's injection rate.
    fn start_member_shifts(&mut self) {
        let Some(i) = self.set.as_ref().map(|set| set.op) else {
            return;
        };
        let option = self.option(i);
        let (Some(set), Some(m), Some(rings)) = (
            self.set.as_mut(),
            option.members.as_ref(),
            self.fabric.sets.rings_of[i].as_ref(),
        ) else {
            return;
        };
        let due = set.due(self.t);
        if due.is_empty() {
            return;
        }
        let groups = option.groups.as_deref().unwrap_or_default();
        for k in due {
            let comm = m.comm_cycles[k].get();
            if comm <= 0.0 {
                continue;
            }
            self.events += 1;
            set.flows += 1;
            let cores = groups.get(k).copied().unwrap_or(1) as f64;
            self.flows.push(Flow {
                kind: Kind::MemberShift {
                    op: i,
                    ring: rings[k],
                },
                remaining: comm * self.fabric.inject_per_core * cores,
                usage: self.fabric.net.rings[rings[k]].0.clone(),
                cap: None,
                start: self.t,
            });
        }
        self.members_done(i);
    }

    /// Once every member of set `i` has computed and shifted, its dispatch and combine move
    /// across the whole chip (or, with none, it finishes when the last member's bytes have
    /// crossed their hops).
    fn members_done(&mut self, i: usize) {
        let Some(set) = &mut self.set else {
            return;
        };
        if self.running.is_some() || !set.waiting.is_empty() || set.flows > 0 || set.exchanging {
            return;
        }
        set.exchanging = true;
        let latest = set.latest.max(self.t);
        if let Some((_, start)) = self.shifting {
            self.trace(Track::Noc, i, start, i + 1);
        }
        let exchange = self
            .option(i)
            .members
            .as_ref()
            .map_or(0.0, |m| m.exchange_cycles.get());
        if exchange > 0.0 {
            self.push_chip_shift(i, exchange);
        } else {
            self.set = None;
            self.pending_done = Some((i, latest));
        }
    }

    /// Operator `i` shifts `cycles` cycles' bytes at every core's injection rate as the
    /// whole chip's ring rotation.
    fn push_chip_shift(&mut self, i: usize, cycles: f64) {
        self.events += 1;
        self.flows.push(Flow {
            kind: Kind::Shift { op: i },
            remaining: cycles * self.fabric.inject,
            usage: self.fabric.net.shift.clone(),
            cap: None,
            start: self.t,
        });
    }

    /// An operator whose shift (and its hops' latency) is over finishes.
    fn end_operator(&mut self) {
        let Some((i, at)) = self.pending_done else {
            return;
        };
        if at > self.t {
            return;
        }
        self.pending_done = None;
        if let Some((_, start)) = self.shifting.take() {
            self.breakdown.shift += self.t - start;
        }
        self.op_end[i] = self.t;
        self.last_end = self.t;
    }

    /// An operator waiting with nothing executing: whatever the budget's rounding left
    /// unsent goes now (the stage model's stage ends only when its loads are done).
    fn release_budget(&mut self) {
        if self.paused
            && self.idle()
            && self.next_op < self.inst.ops.len()
            && !self.loaded[self.next_op]
        {
            self.paused = false;
            self.budgeted = false;
            self.flows.hold_loads(false);
        }
    }

    /// The verdict: the makespan is the last operator's end.
    fn report(self) -> DetailedReport {
        let makespan = self.last_end;
        let util = Utilisation {
            net: &self.fabric.net,
            carried: &self.flows.carried,
            makespan,
        };
        DetailedReport {
            makespan_cycles: Cycles(makespan),
            makespan_ms: self.inst.ms(Cycles(makespan)),
            breakdown: self.breakdown,
            link_utilisation_mean: util.link_mean(),
            hottest_links: util.hottest_links(),
            controller_utilisation: util.controllers(),
            op_start_cycles: self.op_start.into_iter().map(Cycles).collect(),
            op_end_cycles: self.op_end.into_iter().map(Cycles).collect(),
            overflow: self.overflow,
            set_regions: self.fabric.sets.layouts,
            events: self.events,
            steps: self.steps,
        }
    }
}
