//! The detailed simulator (SPEC §6): replays an `elk-schedule/1` in continuous time on a
//! concrete chip — NoC links or ports with bandwidths, HBM controllers at cores, link
//! bandwidth shared max-min fairly between the executing operator's shifts and the loads'
//! distribution — and reports the realized makespan, utilisation of every link and
//! controller, and SRAM overflows in time.
//!
//! Execution: operator i starts when i−1 has finished and its own load has completed; it
//! computes for `exec − comm` cycles, then shifts `comm` cycles' worth of bytes (at the full
//! injection rate) as a ring rotation, sharing links with any load in flight. Loads run one
//! at a time in the schedule's load order, each no earlier than the stage the schedule
//! starts it in; a load is C flows, one per controller, each carrying 1/C of the bytes
//! through the controller's port (B_HBM/C) and ρ copies over the NoC. Rates are recomputed
//! at every flow arrival and departure; events are processed in (time, sequence) order, so a
//! replay is deterministic. By default the loads are paced to the schedule's plan
//! ([`pacing`]); `LoadPolicy::Greedy` sends them as fast as HBM and links allow.

pub mod fair;
pub mod pacing;
pub mod traffic;

pub use elk_model::chip::network;
pub use network::{controller_cores, HbmLayout, Network};
pub use pacing::LoadPolicy;

use crate::trace::{NoTrace, TraceEvent, TraceSink, Track};
use elk_model::build::noc_distribution_bytes_per_s;
use elk_model::chip::ChipSpec;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use network::Usage;
use serde::Serialize;

/// What to simulate beyond the chip spec.
#[derive(Clone, Debug, PartialEq)]
pub struct DetailedConfig {
    /// Controller placement and delivery.
    pub layout: HbmLayout,
    /// ρ per unit of ν: B_NoC,dist / B_HBM of the chip the instance was built for (ν = ρ ·
    /// B_HBM / B_NoC,dist), so a schedule can be replayed on a variant of that chip.
    pub rho_per_nu: f64,
    /// How loads are sent: paced to the schedule's plan, or greedily.
    pub loads: LoadPolicy,
}

impl DetailedConfig {
    /// The chip's own controllers (count and placement from its spec).
    pub fn from_chip(chip: &ChipSpec) -> DetailedConfig {
        let c = chip.hbm.controllers.max(1) as usize;
        let cores = controller_cores(chip, c);
        let layout = match chip.hbm.placement {
            elk_model::chip::Placement::SingleCore => HbmLayout::SingleBroadcast(cores[0]),
            _ => HbmLayout::Distributed(cores),
        };
        DetailedConfig {
            layout,
            rho_per_nu: noc_distribution_bytes_per_s(chip) / chip.hbm.bandwidth_bytes_per_s,
            loads: LoadPolicy::default(),
        }
    }
}

/// Where the time went, cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DetailedBreakdown {
    /// Operators computing.
    pub compute: f64,
    /// Operators shifting (their NoC phases, slowed by load traffic).
    pub shift: f64,
    /// Waiting for a load before an operator could start.
    pub load_wait: f64,
}

/// One resource's utilisation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkUse {
    /// Its name: `(x,y)+x`, `core k injection`, ….
    pub name: String,
    /// Bytes carried / (capacity × makespan).
    pub utilisation: f64,
}

/// An SRAM overflow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overflow {
    /// When, cycles.
    pub time_cycles: f64,
    /// The operator executing (or about to).
    pub op: String,
    /// Bytes per core in use.
    pub used: u64,
    /// SRAM per core.
    pub sram: u64,
}

/// The detailed simulator's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetailedReport {
    /// Realized makespan.
    pub makespan_cycles: Cycles,
    /// … in milliseconds.
    pub makespan_ms: f64,
    /// Time breakdown.
    pub breakdown: DetailedBreakdown,
    /// Mean NoC link (or port) utilisation.
    pub link_utilisation_mean: f64,
    /// The hottest NoC links, up to 10, hottest first.
    pub hottest_links: Vec<LinkUse>,
    /// Utilisation of each HBM controller's port.
    pub controller_utilisation: Vec<f64>,
    /// Start time of each operator's execution (the prologue ends at `op_start[0]`).
    pub op_start_cycles: Vec<Cycles>,
    /// End time of each operator's execution (`Stage::of_op(j)` ends at `op_end[j]`).
    pub op_end_cycles: Vec<Cycles>,
    /// The first SRAM overflow, if any.
    pub overflow: Option<Overflow>,
    /// Events: operator starts, compute ends, flow arrivals and departures.
    pub events: u64,
    /// Steps of the simulation loop (simultaneous events share a step; rates are
    /// recomputed at most once per step).
    pub steps: u64,
}

/// One stage, analytic against detailed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageDiff {
    /// The stage (0 = prologue).
    pub stage: usize,
    /// Its duration in the stage model.
    pub analytic_cycles: Cycles,
    /// Its duration in the replay: stage 0 ends when operator 0 starts, stage k ≥ 1 when
    /// the operator it executes ends.
    pub detailed_cycles: Cycles,
}

/// Per-stage durations of the analytic evaluation beside the detailed replay's.
pub fn stage_diff(analytic: &crate::Evaluation, report: &DetailedReport) -> Vec<StageDiff> {
    let mut prev = Cycles::ZERO;
    analytic
        .stages
        .iter()
        .enumerate()
        .map(|(k, st)| {
            let end = match elk_stage::units::Stage(k).executing() {
                None => report.op_start_cycles.first().copied().unwrap_or_default(),
                Some(op) => report.op_end_cycles[op.index()],
            };
            let d = StageDiff {
                stage: k,
                analytic_cycles: st.cycles,
                detailed_cycles: (end - prev).max(Cycles::ZERO),
            };
            prev = end.max(prev);
            d
        })
        .collect()
}

/// Why a replay could not finish.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("detailed simulation: {0}")]
pub struct DetailedError(pub String);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Load { op: usize, controller: usize },
    Shift { op: usize },
}

struct Flow {
    kind: Kind,
    remaining: f64,
    usage: Usage,
    cap: Option<f64>,
    start: f64,
}

/// Pauses (or resumes) every load flow: a rate cap of zero.
fn hold_loads(flows: &mut [Flow], hold: bool) {
    for f in flows
        .iter_mut()
        .filter(|f| matches!(f.kind, Kind::Load { .. }))
    {
        f.cap = hold.then_some(0.0);
    }
}

/// Replays `s` (a valid schedule of `inst`) on `chip`.
pub fn simulate_detailed(
    inst: &Instance,
    s: &Schedule,
    chip: &ChipSpec,
    cfg: &DetailedConfig,
) -> Result<DetailedReport, DetailedError> {
    simulate_detailed_with(inst, s, chip, cfg, &mut NoTrace)
}

/// [`simulate_detailed`] with a trace: compute and shift phases per operator, each load
/// overall and per controller.
pub fn simulate_detailed_with(
    inst: &Instance,
    s: &Schedule,
    chip: &ChipSpec,
    cfg: &DetailedConfig,
    sink: &mut dyn TraceSink,
) -> Result<DetailedReport, DetailedError> {
    let n = inst.ops.len();
    let b_hbm = chip.hbm.bandwidth_bytes_per_s / inst.clock_hz; // bytes per cycle
    let inject = chip.noc.injection_bytes_per_s_per_core / inst.clock_hz * chip.cores as f64;
    let (sources, broadcast) = match &cfg.layout {
        HbmLayout::Distributed(c) => (c.clone(), false),
        HbmLayout::SingleBroadcast(c) => (vec![*c], true),
    };
    if sources.is_empty() || sources.iter().any(|&c| c >= chip.cores as usize) {
        return Err(DetailedError(format!(
            "HBM controllers at cores {sources:?}: need at least one, each < {}",
            chip.cores
        )));
    }
    let controllers = sources.len();
    let port = if broadcast {
        b_hbm
    } else {
        b_hbm / controllers as f64
    };
    let net = Network::new(chip, controllers, port).compress(&sources);
    let hop_latency = chip.noc.hop_latency_cycles;
    let (shift_usage, shift_hops) = (net.shift.clone(), net.shift_hops);
    let option = |i: usize| &inst.ops[i].options[s.options[i]];
    let mut start_stage = vec![usize::MAX; n];
    for w in &s.load_work {
        if w.cycles > Cycles::ZERO && w.op.index() < n {
            start_stage[w.op.index()] = start_stage[w.op.index()].min(w.stage.index());
        }
    }
    let mut t = 0.0f64;
    let mut flows: Vec<Flow> = Vec::new();
    let mut carried = vec![0.0f64; net.capacity.len()];
    let mut loaded: Vec<bool> = inst
        .ops
        .iter()
        .map(|o| o.hbm_cycles <= Cycles::ZERO)
        .collect();
    let mut load_started = vec![false; n];
    let mut active_load: Option<(usize, f64, usize)> = None; // (op, start, flows left)
    let mut qpos = 0usize;
    let mut next_op = 0usize;
    let mut running: Option<(usize, f64)> = None; // (op, compute end) while computing
    let mut shifting: Option<(usize, f64)> = None; // (op, shift start)
    let mut pending_done: Option<(usize, f64)> = None; // op finishing after shift latency
    let mut stage_begun = 0usize;
    let mut last_end = 0.0f64;
    let mut op_start = vec![0.0; n];
    let mut op_end = vec![0.0; n];
    let mut breakdown = DetailedBreakdown::default();
    let mut overflow: Option<Overflow> = None;
    let mut events = 0u64;
    let mut steps = 0u64;
    let mut rates: Vec<f64> = Vec::new();
    let mut dirty = true;
    let pacer = (cfg.loads == LoadPolicy::Paced).then(|| pacing::Pacer::new(inst, s, b_hbm));
    // Paced: the load bytes moved so far, and whether the DMA has sent the current stage's
    // budget and waits for the next stage (pacing.rs).
    let mut delivered = 0.0f64;
    let spent =
        |stage: usize, delivered: f64| pacer.as_ref().is_some_and(|p| p.spent(stage, delivered));
    let mut paused = spent(0, 0.0);
    // Paced, a stage ends only when its planned loads are done (the stage model's barrier),
    // unless the DMA has nothing left it may send in it.
    let dma_idle = |loading: bool, qpos: usize, stage: usize| {
        !loading
            && s.load_order
                .get(qpos)
                .is_none_or(|j| start_stage.get(j.index()).is_none_or(|&st| st > stage))
    };
    // False once an operator has waited with the budget spent, until the next stage.
    let mut budgeted = pacer.is_some();
    let sram = inst.sram_bytes.get();
    let memory = |executing: Option<usize>, started: &[bool], next_op: usize| -> u64 {
        let hot = executing.map_or(0, |i| option(i).hot.get());
        let cold: u64 = (next_op..n)
            .filter(|&j| started[j] && Some(j) != executing)
            .map(|j| option(j).cold.get())
            .sum();
        hot + cold
    };
    while next_op < n || running.is_some() || shifting.is_some() || pending_done.is_some() {
        // Start whatever may start now.
        loop {
            let mut progress = false;
            if running.is_none()
                && shifting.is_none()
                && pending_done.is_none()
                && next_op < n
                && loaded[next_op]
                && (pacer.is_none()
                    || spent(stage_begun, delivered)
                    || dma_idle(active_load.is_some(), qpos, stage_begun))
            {
                let i = next_op;
                next_op = i + 1;
                events += 1;
                op_start[i] = t;
                breakdown.load_wait += t - last_end;
                stage_begun = i + 1;
                let comp = (option(i).exec_cycles - option(i).comm_cycles)
                    .get()
                    .max(0.0);
                running = Some((i, t + comp));
                breakdown.compute += comp;
                if pacer.is_some() {
                    budgeted = true;
                    paused = spent(stage_begun, delivered);
                    hold_loads(&mut flows, paused);
                    dirty = true;
                }
                sink.event(&TraceEvent {
                    track: Track::Execution,
                    name: inst.ops[i].name.clone(),
                    start_cycles: t,
                    cycles: comp,
                    stage: i + 1,
                    option: Some(s.options[i]),
                });
                let used = memory(Some(i), &load_started, i);
                if used > sram && overflow.is_none() {
                    overflow = Some(Overflow {
                        time_cycles: t,
                        op: inst.ops[i].name.clone(),
                        used,
                        sram,
                    });
                }
                progress = true;
            }
            if active_load.is_none() && qpos < s.load_order.len() {
                let j = s.load_order[qpos].index();
                if j < n && start_stage[j] <= stage_begun {
                    qpos += 1;
                    load_started[j] = true;
                    let bytes = inst.ops[j].hbm_cycles.get() * b_hbm;
                    let rho = option(j).noc_per_hbm * cfg.rho_per_nu;
                    for c in 0..controllers {
                        let mut usage = if broadcast {
                            net.broadcast(c, rho)
                        } else {
                            net.distribution(c, rho)
                        };
                        usage.push((net.controller[c], 1.0));
                        flows.push(Flow {
                            kind: Kind::Load {
                                op: j,
                                controller: c,
                            },
                            remaining: bytes / controllers as f64,
                            usage,
                            cap: paused.then_some(0.0),
                            start: t,
                        });
                    }
                    active_load = Some((j, t, controllers));
                    let executing = running.map(|r| r.0).or(shifting.map(|r| r.0));
                    let used = memory(executing, &load_started, next_op);
                    if used > sram && overflow.is_none() {
                        overflow = Some(Overflow {
                            time_cycles: t,
                            op: inst.ops[j].name.clone(),
                            used,
                            sram,
                        });
                    }
                    dirty = true;
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
        if next_op >= n && running.is_none() && shifting.is_none() && pending_done.is_none() {
            break;
        }
        if dirty {
            let spec: Vec<(&Usage, Option<f64>)> =
                flows.iter().map(|f| (&f.usage, f.cap)).collect();
            rates = fair::max_min_rates(&net.capacity, &spec);
            dirty = false;
        }
        // The next event.
        let mut dt = f64::INFINITY;
        if let Some((_, end)) = running {
            dt = dt.min(end - t);
        }
        if let Some((_, at)) = pending_done {
            dt = dt.min(at - t);
        }
        for (f, flow) in flows.iter().enumerate() {
            if rates[f] > 0.0 {
                dt = dt.min(flow.remaining / rates[f]);
            }
        }
        if let Some(left) = pacer
            .as_ref()
            .filter(|_| budgeted && !paused)
            .map(|p| p.left(stage_begun, delivered))
        {
            let loading: f64 = flows
                .iter()
                .zip(&rates)
                .filter(|(f, _)| matches!(f.kind, Kind::Load { .. }))
                .map(|(_, r)| r)
                .sum();
            if loading > 0.0 {
                dt = dt.min(left.max(0.0) / loading);
            }
        }
        if !dt.is_finite() {
            return Err(DetailedError(format!(
                "stuck at {t:.1} cycles: operator {} waits for a load that cannot start",
                inst.ops.get(next_op).map_or("?", |o| o.name.as_str())
            )));
        }
        let dt = dt.max(0.0);
        for (f, flow) in flows.iter_mut().enumerate() {
            let moved = rates[f] * dt;
            flow.remaining -= moved;
            if matches!(flow.kind, Kind::Load { .. }) {
                delivered += moved;
            }
            for &(r, w) in &flow.usage {
                carried[r] += moved * w;
            }
        }
        t += dt;
        steps += 1;
        if budgeted && !paused && spent(stage_begun, delivered) {
            paused = true;
            hold_loads(&mut flows, true);
            dirty = true;
        }
        // Completions, in flow order (deterministic).
        let mut k = 0;
        while k < flows.len() {
            let done = flows[k].remaining <= 1e-9 * (1.0 + rates.get(k).copied().unwrap_or(0.0));
            if !done {
                k += 1;
                continue;
            }
            let flow = flows.remove(k);
            rates.remove(k);
            dirty = true;
            events += 1;
            match flow.kind {
                Kind::Shift { op } => {
                    pending_done = Some((op, t + shift_hops * hop_latency));
                    sink.event(&TraceEvent {
                        track: Track::Noc,
                        name: inst.ops[op].name.clone(),
                        start_cycles: flow.start,
                        cycles: t - flow.start,
                        stage: op + 1,
                        option: Some(s.options[op]),
                    });
                }
                Kind::Load { op, controller } => {
                    sink.event(&TraceEvent {
                        track: Track::Controller(controller as u32),
                        name: inst.ops[op].name.clone(),
                        start_cycles: flow.start,
                        cycles: t - flow.start,
                        stage: op + 1,
                        option: Some(s.options[op]),
                    });
                    if let Some((j, start, left)) = active_load {
                        if left <= 1 {
                            // The slice ends when the operator may use the data (its last
                            // flow's departure), so loads on the HBM track never overlap.
                            loaded[j] = true;
                            active_load = None;
                            sink.event(&TraceEvent {
                                track: Track::Hbm,
                                name: inst.ops[j].name.clone(),
                                start_cycles: start,
                                cycles: t - start,
                                stage: start_stage[j],
                                option: Some(s.options[j]),
                            });
                        } else {
                            active_load = Some((j, start, left - 1));
                        }
                    }
                }
            }
        }
        if let Some((i, end)) = running {
            if end <= t {
                running = None;
                events += 1;
                let comm = option(i).comm_cycles.get();
                if comm > 0.0 {
                    events += 1;
                    flows.push(Flow {
                        kind: Kind::Shift { op: i },
                        remaining: comm * inject,
                        usage: shift_usage.clone(),
                        cap: None,
                        start: t,
                    });
                    rates.push(0.0);
                    shifting = Some((i, t));
                    dirty = true;
                } else {
                    pending_done = Some((i, t));
                }
            }
        }
        if let Some((i, at)) = pending_done {
            if at <= t {
                pending_done = None;
                if let Some((_, start)) = shifting.take() {
                    breakdown.shift += t - start;
                }
                op_end[i] = t;
                last_end = t;
            }
        }
        // An operator waiting with nothing executing: whatever the budget's rounding left
        // unsent goes now (the stage model's stage ends only when its loads are done).
        if paused
            && running.is_none()
            && shifting.is_none()
            && pending_done.is_none()
            && next_op < n
            && !loaded[next_op]
        {
            paused = false;
            budgeted = false;
            hold_loads(&mut flows, false);
            dirty = true;
        }
    }
    let makespan = last_end;
    let noc = net.noc_groups;
    let util = |r: usize| {
        if makespan > 0.0 {
            carried[r] / (net.capacity[r] * makespan)
        } else {
            0.0
        }
    };
    let mut order: Vec<usize> = (0..noc).collect();
    order.sort_by(|&a, &b| util(b).total_cmp(&util(a)).then(a.cmp(&b)));
    let hottest = order
        .iter()
        .take(10)
        .filter(|&&r| carried[r] > 0.0)
        .map(|&r| LinkUse {
            name: match net.names[r].1 {
                1 => net.names[r].0.clone(),
                m => format!("{} (and {} alike)", net.names[r].0, m - 1),
            },
            utilisation: util(r),
        })
        .collect();
    let members: usize = (0..noc).map(|g| net.names[g].1).sum();
    Ok(DetailedReport {
        makespan_cycles: Cycles(makespan),
        makespan_ms: inst.ms(Cycles(makespan)),
        breakdown,
        link_utilisation_mean: (0..noc)
            .map(|g| util(g) * net.names[g].1 as f64)
            .sum::<f64>()
            / members.max(1) as f64,
        hottest_links: hottest,
        controller_utilisation: net.controller.iter().map(|&g| util(g)).collect(),
        op_start_cycles: op_start.into_iter().map(Cycles).collect(),
        op_end_cycles: op_end.into_iter().map(Cycles).collect(),
        overflow,
        events,
        steps,
    })
}
