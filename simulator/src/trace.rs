//! Trace sinks: the simulator reports what happens to a [`TraceSink`]; the Chrome-trace writer
//! is one sink (open the file in Perfetto or chrome://tracing).

use serde::Serialize;

/// Which track an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// Operator execution (one event per stage).
    Execution,
    /// HBM loads (one event per load segment).
    Hbm,
    /// NoC busy time (executing operator's shifts plus HBM distribution).
    Noc,
    /// One HBM controller (detailed simulator).
    Controller(u32),
}

impl Track {
    fn tid(self) -> u32 {
        match self {
            Track::Execution => 1,
            Track::Hbm => 2,
            Track::Noc => 3,
            Track::Controller(c) => 10 + c,
        }
    }

    fn name(self) -> String {
        match self {
            Track::Execution => "execution".into(),
            Track::Hbm => "HBM loads".into(),
            Track::Noc => "NoC".into(),
            Track::Controller(c) => format!("HBM controller {c}"),
        }
    }
}

/// One interval of activity.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// The track.
    pub track: Track,
    /// Label (operator name).
    pub name: String,
    /// Start, cycles from the beginning of the prologue.
    pub start_cycles: f64,
    /// Duration in cycles.
    pub cycles: f64,
    /// Stage index.
    pub stage: usize,
    /// The option index of the operator concerned, if any.
    pub option: Option<usize>,
}

/// Receives events in time order per track.
pub trait TraceSink {
    /// One event.
    fn event(&mut self, e: &TraceEvent);

    /// Whether this sink keeps events: when not, the evaluation skips building them (their
    /// names are allocated strings, one per stage and load).
    fn wants_events(&self) -> bool {
        true
    }
}

/// A sink that drops everything.
pub struct NoTrace;

impl TraceSink for NoTrace {
    fn event(&mut self, _e: &TraceEvent) {}

    fn wants_events(&self) -> bool {
        false
    }
}

/// Collects Chrome-trace complete events (`"ph":"X"`, times in µs).
pub struct ChromeTrace {
    clock_hz: f64,
    events: Vec<ChromeEvent>,
    /// Controller tracks seen, in first-seen order.
    controllers: Vec<u32>,
}

#[derive(Serialize)]
struct ChromeEvent {
    name: String,
    ph: &'static str,
    ts: f64,
    dur: f64,
    pid: u32,
    tid: u32,
    args: serde_json::Value,
}

impl ChromeTrace {
    /// A writer for an instance with this clock.
    pub fn new(clock_hz: f64) -> ChromeTrace {
        ChromeTrace {
            clock_hz,
            events: Vec::new(),
            controllers: Vec::new(),
        }
    }

    /// Number of events collected.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no event was collected.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The trace as JSON text: thread-name metadata, then the events.
    pub fn to_json(&self) -> String {
        let mut tracks = vec![Track::Execution, Track::Hbm, Track::Noc];
        tracks.extend(self.controllers.iter().map(|&c| Track::Controller(c)));
        let mut all: Vec<serde_json::Value> = tracks
            .iter()
            .map(|t| {
                serde_json::json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": t.tid(),
                                   "args": {"name": t.name()}})
            })
            .collect();
        all.extend(
            self.events
                .iter()
                .filter_map(|e| serde_json::to_value(e).ok()),
        );
        serde_json::to_string(&all).unwrap_or_default()
    }
}

impl TraceSink for ChromeTrace {
    fn event(&mut self, e: &TraceEvent) {
        let us = 1e6 / self.clock_hz;
        if let Track::Controller(c) = e.track {
            if !self.controllers.contains(&c) {
                self.controllers.push(c);
            }
        }
        self.events.push(ChromeEvent {
            name: e.name.clone(),
            ph: "X",
            ts: e.start_cycles * us,
            dur: e.cycles * us,
            pid: 1,
            tid: e.track.tid(),
            args: serde_json::json!({"stage": e.stage, "option": e.option, "cycles": e.cycles}),
        });
    }
}
