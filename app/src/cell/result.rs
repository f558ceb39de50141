//! A cell's line in the results file ([`CellResult`]): each method's verdict and numbers, the
//! cell's certified bound, and why it has no results when it has none. The contract the
//! sweeps write, the reports read and scripts parse; apart from the run in `cell.rs`.

use crate::grid::Cell;
use elk_stage::method::Verdict;
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};

/// Whether a method produced a schedule: [`Verdict`] as a grid line records it (kebab-case
/// in the results files, so it stays its own type; `From<Verdict>` is the one mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MethodStatus {
    /// A schedule, judged by the simulator.
    Scheduled,
    /// The method found no schedule (a heuristic that cannot fit an operator, say).
    NoSchedule,
    /// Proven: no schedule exists.
    Infeasible,
}

/// A grid line records only whether there is a schedule: the one mapping from the verdict
/// every method returns.
impl From<Verdict> for MethodStatus {
    fn from(v: Verdict) -> MethodStatus {
        match v {
            Verdict::Optimal | Verdict::Feasible => MethodStatus::Scheduled,
            Verdict::Infeasible => MethodStatus::Infeasible,
            Verdict::Unknown => MethodStatus::NoSchedule,
        }
    }
}

/// One method's verdict in a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MethodResult {
    /// Method name.
    pub method: String,
    /// Whether it scheduled (absent in lines written before elk-opt recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MethodStatus>,
    /// Why there is no schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Makespan in ms (None: no schedule).
    pub makespan_ms: Option<f64>,
    /// Σ H / T.
    pub hbm_util: Option<f64>,
    /// NoC busy / T.
    pub noc_util: Option<f64>,
    /// Achieved TFLOP/s.
    pub tflops: Option<f64>,
    /// Fig-18 breakdown.
    pub breakdown: Option<BreakdownCycles>,
    /// 100·(makespan − bound)/bound against the cell's certified bound (grids with
    /// `bound = true`): an upper bound on the gap to the optimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_le_pct: Option<f64>,
    /// MoE cells: the median of the steps' makespans, ms (`makespan_ms` is their mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    /// MoE cells: their 99th percentile (nearest rank), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    /// Cells with `expert_parallel`: whether the schedule is of the instance with parallel
    /// sets (`false`: the one without was faster; docs/core-groups.md, CG-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_sets: Option<bool>,
}

impl MethodResult {
    /// A method's row before it ran: no status, nothing measured.
    pub fn named(method: &str) -> MethodResult {
        MethodResult {
            method: method.into(),
            status: None,
            reason: None,
            makespan_ms: None,
            hbm_util: None,
            noc_util: None,
            tflops: None,
            breakdown: None,
            gap_le_pct: None,
            p50_ms: None,
            p99_ms: None,
            parallel_sets: None,
        }
    }
}

/// Where a schedule's time goes (Fig 18), in cycles; the four parts sum to the makespan.
/// The simulator's [`elk_sim::Breakdown`] with its unit in every key (lines written before
/// the keys had it still read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BreakdownCycles {
    /// Stages with no load work.
    #[serde(alias = "execute_only")]
    pub execute_only_cycles: Cycles,
    /// Load time not hidden under execution.
    #[serde(alias = "preload_only")]
    pub preload_only_cycles: Cycles,
    /// Execution with loads under it.
    #[serde(alias = "overlapped")]
    pub overlapped_cycles: Cycles,
    /// NoC-bound stages beyond their execution.
    #[serde(alias = "noc_bound")]
    pub noc_bound_cycles: Cycles,
}

impl From<elk_sim::Breakdown> for BreakdownCycles {
    fn from(b: elk_sim::Breakdown) -> BreakdownCycles {
        BreakdownCycles {
            execute_only_cycles: b.execute_only,
            preload_only_cycles: b.preload_only,
            overlapped_cycles: b.overlapped,
            noc_bound_cycles: b.noc_bound,
        }
    }
}

impl BreakdownCycles {
    /// The four parts' sum: the makespan.
    pub fn total(&self) -> Cycles {
        self.execute_only_cycles
            + self.preload_only_cycles
            + self.overlapped_cycles
            + self.noc_bound_cycles
    }
}

/// A cell's certified lower bound on every schedule's makespan (grids with `bound = true`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellBound {
    /// The bound, ms. MoE cells: the mean of the steps' bounds, a bound on the mean makespan.
    pub bound_ms: f64,
    /// `segment relaxation` or `roofline`, whichever is stronger (MoE cells: of every step;
    /// `segment relaxation on K of N steps, else roofline` when they differ).
    pub source: String,
    /// MoE cells: the lowest step's bound, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ms: Option<f64>,
    /// MoE cells: the highest step's bound, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ms: Option<f64>,
}

/// A cell's line in the results file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    /// The grid's figure type.
    pub figure: String,
    /// The cell.
    pub cell: Cell,
    /// Operators in the instance.
    pub ops: usize,
    /// Elk's Ideal figure, ms.
    pub ideal_ms: Option<f64>,
    /// Every method.
    pub methods: Vec<MethodResult>,
    /// The certified lower bound (grids with `bound = true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<CellBound>,
    /// Why Ideal is out of reach on the cell's chip, when it is: its NoC distributes HBM data
    /// slower than the HBM delivers it, and Ideal assumes loads never contend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ideal_unreachable: Option<String>,
    /// Why the cell has no results (bad model name, nothing fits, …).
    pub error: Option<String>,
    /// The configuration cannot run: an operator has no plan that fits SRAM (`error` says
    /// which). A result, not a failure: a rerun does not retry it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub does_not_fit: bool,
}

impl CellResult {
    /// The cell failed: no results, and not because the configuration does not fit.
    pub fn failed(&self) -> bool {
        self.error.is_some() && !self.does_not_fit
    }
}

/// Every method's `gap_le_pct` against `bound`: 100·(makespan − bound)/bound.
pub(super) fn set_gaps(methods: &mut [MethodResult], bound: &CellBound) {
    let b = bound.bound_ms;
    for r in methods {
        r.gap_le_pct = r.makespan_ms.map(|t| 100.0 * (t - b) / b);
    }
}

#[cfg(test)]
mod tests {
    use super::BreakdownCycles;

    #[test]
    fn breakdown_keys_carry_their_unit_and_old_lines_still_read() {
        let b = BreakdownCycles {
            execute_only_cycles: elk_stage::units::Cycles(1.0),
            preload_only_cycles: elk_stage::units::Cycles(2.0),
            overlapped_cycles: elk_stage::units::Cycles(3.0),
            noc_bound_cycles: elk_stage::units::Cycles(4.0),
        };
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(
            json,
            r#"{"execute_only_cycles":1.0,"preload_only_cycles":2.0,"overlapped_cycles":3.0,"noc_bound_cycles":4.0}"#
        );
        let old = r#"{"execute_only":1.0,"preload_only":2.0,"overlapped":3.0,"noc_bound":4.0}"#;
        assert_eq!(serde_json::from_str::<BreakdownCycles>(old).unwrap(), b);
        assert_eq!(b.total().get(), 10.0);
    }
}
