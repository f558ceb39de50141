//! Roofline lower bounds on the makespan (SPEC §5), valid for every schedule of the instance:
//! no solver, no tolerance — they hold for any options, load order and load work.
//!
//! Operator j's load ends by stage j, so the loads of operators 0..=p all fall in stages
//! 0..=p, which execute operators 0..p. Hence for every prefix p
//!
//! ```text
//! Σ_{k≤p} d_k ≥ max( Σ_{j≤p} H_j,                         (HBM)
//!                    Σ_{k=1..p} exec_min(k−1),             (execution)
//!                    Σ_{k=1..p} comm_min(k−1) + Σ_{j≤p} ν_min(j)·H_j )   (NoC)
//! Σ_{k>p} d_k ≥ Σ_{k>p} exec_min(k−1)
//! ```
//! and T is at least the best over p of the sum. p = n gives max(Σ H, Σ exec_min).
//!
//! [`stage_bound`] keeps each stage's max of these resources instead of summing them, in one
//! small LP (the stage relaxation, `stage_lp`; docs/exact.md).

mod stage_lp;

use elk_stage::instance::Instance;
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};
pub use stage_lp::{
    stage_bound, stage_bound_and_options, stage_bound_with, stage_fingerprint, stage_options,
    stage_options_with, StageBound, CLASS_SPREAD, STAGE_LIMIT, STAGE_MAX_OPERATORS,
};

/// The roofline bounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Roofline {
    /// Σ H_j: HBM is one serial resource.
    pub hbm_cycles: Cycles,
    /// Σ_i min_o exec: every stage lasts at least its operator's fastest option.
    pub exec_cycles: Cycles,
    /// The best prefix bound (≥ both of the above).
    pub prefix_cycles: Cycles,
}

impl Roofline {
    /// The strongest of the bounds.
    pub fn best(&self) -> Cycles {
        self.prefix_cycles
            .max(self.hbm_cycles)
            .max(self.exec_cycles)
    }
}

fn min_of(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(f64::INFINITY, f64::min)
}

/// Computes the roofline bounds of an instance.
pub fn roofline(inst: &Instance) -> Roofline {
    let n = inst.ops.len();
    let exec_min: Vec<f64> = inst
        .ops
        .iter()
        .map(|op| min_of(op.options.iter().map(|o| o.exec_cycles.get())))
        .collect();
    let comm_min: Vec<f64> = inst
        .ops
        .iter()
        .map(|op| min_of(op.options.iter().map(|o| o.comm_cycles.get())))
        .collect();
    let noc_load: Vec<f64> = inst
        .ops
        .iter()
        .map(|op| op.hbm_cycles.get() * min_of(op.options.iter().map(|o| o.noc_per_hbm)))
        .collect();
    let total_exec: f64 = exec_min.iter().sum();
    let (mut hbm, mut exec, mut comm, mut noc) = (0.0, 0.0, 0.0, 0.0);
    let mut prefix_best: f64 = 0.0;
    // Prefix p covers stages 0..=p: executions of operators 0..p, loads of operators 0..=p.
    for p in 0..=n {
        if p > 0 {
            exec += exec_min[p - 1];
            comm += comm_min[p - 1];
        }
        if p < n {
            hbm += inst.ops[p].hbm_cycles.get();
            noc += noc_load[p];
        }
        let head = hbm.max(exec).max(comm + noc);
        prefix_best = prefix_best.max(head + (total_exec - exec));
    }
    Roofline {
        hbm_cycles: inst.ops.iter().map(|o| o.hbm_cycles).sum(),
        exec_cycles: Cycles(total_exec),
        prefix_cycles: Cycles(prefix_best),
    }
}

/// What proved a lower bound: the name every report prints beside it (`bound_source` in the
/// JSON of `compare`, `gap`, `solve --exact` and the sweeps, as these strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BoundSource {
    /// [`roofline`]: HBM, execution and the best prefix.
    #[serde(rename = "roofline")]
    Roofline,
    /// The whole instance's MILP relaxed to an LP.
    #[serde(rename = "LP relaxation")]
    LpRelaxation,
    /// The segment relaxation ([`crate::segments`]): the coupled LP, or priced segments.
    #[serde(rename = "segment relaxation")]
    SegmentRelaxation,
    /// The stage relaxation ([`stage_bound`]): one LP over the stages.
    #[serde(rename = "stage relaxation")]
    StageRelaxation,
    /// HiGHS's dual bound.
    #[serde(rename = "MILP dual bound")]
    MilpDual,
    /// The largest makespan z3 proved unsatisfiable.
    #[serde(rename = "SMT unsat bound")]
    SmtUnsat,
    /// A worker killed at its hard limit: the best bound its progress told.
    #[serde(rename = "the best bound the worker told before the kill")]
    ToldBeforeKill,
    /// A proven optimum: the makespan itself.
    #[serde(rename = "optimum")]
    Optimum,
}

impl BoundSource {
    /// The name printed and written (the serde name).
    pub fn name(self) -> &'static str {
        match self {
            BoundSource::Roofline => "roofline",
            BoundSource::LpRelaxation => "LP relaxation",
            BoundSource::SegmentRelaxation => "segment relaxation",
            BoundSource::StageRelaxation => "stage relaxation",
            BoundSource::MilpDual => "MILP dual bound",
            BoundSource::SmtUnsat => "SMT unsat bound",
            BoundSource::ToldBeforeKill => "the best bound the worker told before the kill",
            BoundSource::Optimum => "optimum",
        }
    }
}

impl BoundSource {
    /// The name in a sentence: `the roofline`, `the MILP dual bound`, `the best bound the
    /// worker told before the kill`.
    pub fn in_sentence(self) -> String {
        match self {
            BoundSource::ToldBeforeKill => self.name().to_string(),
            _ => format!("the {}", self.name()),
        }
    }
}

impl std::fmt::Display for BoundSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for BoundSource {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::BoundSource;

    #[test]
    fn a_bound_source_is_written_and_read_by_its_printed_name() {
        for s in [
            BoundSource::Roofline,
            BoundSource::LpRelaxation,
            BoundSource::SegmentRelaxation,
            BoundSource::MilpDual,
            BoundSource::SmtUnsat,
            BoundSource::ToldBeforeKill,
            BoundSource::Optimum,
        ] {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<BoundSource>(&json).unwrap(), s);
        }
    }
}
