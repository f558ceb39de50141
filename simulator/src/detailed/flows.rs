//! The flows in flight during a replay and the bytes they have moved. Rates are max-min fair
//! ([`super::fair`]) and change only when a flow arrives, departs or has its cap changed, so
//! they are recomputed lazily: every such change marks them stale, and the replay refreshes
//! them once per step before it reads them.

use super::fair;
use elk_model::chip::network::Usage;

/// What a flow carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    /// 1/C of operator `op`'s load, through `controller`'s port.
    Load { op: usize, controller: usize },
    /// Operator `op`'s shift (its ring rotation), or a parallel set's dispatch and combine.
    Shift { op: usize },
    /// A parallel set `op`'s member shifting inside its region, on ring `ring` of the
    /// network.
    MemberShift { op: usize, ring: usize },
}

/// One flow.
pub(super) struct Flow {
    pub kind: Kind,
    /// Bytes still to move.
    pub remaining: f64,
    /// The resources it crosses, with weights.
    pub usage: Usage,
    /// A cap on its rate (`Some(0.0)`: a paused load).
    pub cap: Option<f64>,
    /// When it arrived, cycles (for the trace).
    pub start: f64,
}

impl Flow {
    fn is_load(&self) -> bool {
        matches!(self.kind, Kind::Load { .. })
    }
}

/// The flows in flight, their rates and what they have carried.
pub(super) struct Flows {
    /// In arrival order: departures are processed in this order, so a replay is
    /// deterministic.
    list: Vec<Flow>,
    /// Bytes per cycle of each flow in `list`; stale while `dirty`.
    rates: Vec<f64>,
    dirty: bool,
    /// Bytes carried by each resource (group) so far.
    pub carried: Vec<f64>,
    /// Load bytes moved so far (what the pacer's budget counts).
    pub delivered: f64,
}

impl Flows {
    /// No flows, on `resources` resources.
    pub fn new(resources: usize) -> Flows {
        Flows {
            list: Vec::new(),
            rates: Vec::new(),
            dirty: true,
            carried: vec![0.0; resources],
            delivered: 0.0,
        }
    }

    /// A flow arrives (its rate is set at the next refresh).
    pub fn push(&mut self, flow: Flow) {
        self.list.push(flow);
        self.rates.push(0.0);
        self.dirty = true;
    }

    /// Pauses (or resumes) every load flow: a rate cap of zero.
    pub fn hold_loads(&mut self, hold: bool) {
        for f in self.list.iter_mut().filter(|f| f.is_load()) {
            f.cap = hold.then_some(0.0);
        }
        self.dirty = true;
    }

    /// Recomputes the rates if anything changed since they were last computed.
    pub fn refresh(&mut self, capacity: &[f64]) {
        if self.dirty {
            let spec: Vec<(&Usage, Option<f64>)> =
                self.list.iter().map(|f| (&f.usage, f.cap)).collect();
            self.rates = fair::max_min_rates(capacity, &spec);
            self.dirty = false;
        }
    }

    /// `dt` lowered to the time until the first flow departs at the current rates.
    pub fn until_departure(&self, mut dt: f64) -> f64 {
        for (f, flow) in self.list.iter().enumerate() {
            if self.rates[f] > 0.0 {
                dt = dt.min(flow.remaining / self.rates[f]);
            }
        }
        dt
    }

    /// The loads' total rate, bytes per cycle.
    pub fn load_rate(&self) -> f64 {
        self.list
            .iter()
            .zip(&self.rates)
            .filter(|(f, _)| f.is_load())
            .map(|(_, r)| r)
            .sum()
    }

    /// Moves every flow on by `dt` cycles at its rate.
    pub fn advance(&mut self, dt: f64) {
        for (f, flow) in self.list.iter_mut().enumerate() {
            let moved = self.rates[f] * dt;
            flow.remaining -= moved;
            if matches!(flow.kind, Kind::Load { .. }) {
                self.delivered += moved;
            }
            for &(r, w) in &flow.usage {
                self.carried[r] += moved * w;
            }
        }
    }

    /// Removes the flows that have moved all their bytes (to rounding), in arrival order.
    pub fn take_finished(&mut self) -> Vec<Flow> {
        let mut done = Vec::new();
        let mut k = 0;
        while k < self.list.len() {
            let finished =
                self.list[k].remaining <= 1e-9 * (1.0 + self.rates.get(k).copied().unwrap_or(0.0));
            if !finished {
                k += 1;
                continue;
            }
            done.push(self.list.remove(k));
            self.rates.remove(k);
            self.dirty = true;
        }
        done
    }
}
