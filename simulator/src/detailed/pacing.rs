//! How the replay's DMA moves load bytes: as fast as HBM and links allow (greedy), or paced
//! to the schedule's plan (the default).
//!
//! The stage model (SPEC §4) plans, for every stage k, the HBM work `w[j][k]` of each load j
//! in it. A greedy DMA ignores that plan: a load starts in its first planned stage and then
//! runs at full rate into later stages, where it takes link bandwidth from those operators'
//! shifts. Comparing a greedy replay with the stage model therefore mixes two questions: "is
//! this schedule achievable?" and "which DMA policy?". The paced policy answers the first: in
//! stage k the DMA may send the work planned for stages 0..=k and no more,
//!
//! ```text
//!     delivered ≤ P_k = Σ_{k' ≤ k} Σ_j w[j][k']      (bytes; work not done carries over)
//! ```
//!
//! as fast as HBM and links allow, in the schedule's load order. It then pauses until the next
//! stage begins (the next operator starts). A paced load still waits for its data and its
//! links; pacing only holds it back. And a stage ends only when its planned work is done, as
//! in the stage model (and as a bulk-synchronous chip's superstep does): the next operator
//! starts when the previous one has finished, its own load is complete and P_k is delivered
//! (or the DMA has nothing left it may send). Without that barrier a stage's planned work
//! spills into the next stages: the replay's prologue of two Llama2-13B layers ends at 27,150
//! cycles instead of the planned 50,312 and the loads it left slow eight later stages'
//! shifts, so the replay cannot say whether the plan itself is achievable. Sending each stage's budget at once (rather than
//! spreading it at P_k's average rate over the stage) is what the stage model's NoC row
//! assumes: it charges loads only the NoC time the operator's shifts leave free, and the
//! operator computes before it shifts, so loads sent at the start of a stage mostly use links
//! that are idle. A constant rate cap instead runs loads during every shift and slows it:
//! measured on Llama2-13B decode (ipu-pod4, 16 TB/s) Elk-Full, +11.1 % against the stage
//! model with the cap, against +12.1 % greedy and +7.65 % with the budget, which is within
//! 0.05 % of the phased stage model (`crate::phased`; docs/detailed.md).
//!
//! The budget never blocks the next operator: operator i's load and every load before it in
//! the load order have all their work in stages ≤ i (SPEC §4's load-order rule), so P_i
//! covers them once operator i − 1 has started.

use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use serde::Serialize;

/// The replay's DMA policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadPolicy {
    /// In each stage the loads send the schedule's planned work through that stage, no more.
    #[default]
    Paced,
    /// Loads run as fast as HBM and the NoC allow.
    Greedy,
}

impl LoadPolicy {
    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            LoadPolicy::Paced => "paced",
            LoadPolicy::Greedy => "greedy",
        }
    }
}

/// The paced policy's plan: the cumulative planned bytes per stage.
pub(crate) struct Pacer {
    /// P_k: planned HBM bytes of stages 0..=k.
    planned_through: Vec<f64>,
}

impl Pacer {
    /// The plan of `s` on `inst`, with `bytes_per_cycle` of HBM.
    pub(crate) fn new(inst: &Instance, s: &Schedule, bytes_per_cycle: f64) -> Pacer {
        let stages = inst.ops.len() + 1;
        let mut planned = vec![0.0; stages];
        for w in &s.load_work {
            if let Some(p) = planned.get_mut(w.stage.index()) {
                *p += w.cycles.get() * bytes_per_cycle;
            }
        }
        let mut total = 0.0;
        let planned_through = planned
            .into_iter()
            .map(|p| {
                total += p;
                total
            })
            .collect();
        Pacer { planned_through }
    }

    /// P_k, bytes (the whole plan beyond the last stage).
    fn budget_through(&self, k: usize) -> f64 {
        let last = self.planned_through.len().saturating_sub(1);
        self.planned_through
            .get(k.min(last))
            .copied()
            .unwrap_or(0.0)
    }

    /// Bytes stage `k` may still send when `delivered` have been sent (may be negative).
    pub(crate) fn left(&self, k: usize, delivered: f64) -> f64 {
        self.budget_through(k) - delivered
    }

    /// Stage `k`'s budget is sent (to a relative 1e-9).
    pub(crate) fn spent(&self, k: usize, delivered: f64) -> bool {
        let budget = self.budget_through(k);
        budget - delivered <= 1e-9 * budget.max(1.0)
    }
}
