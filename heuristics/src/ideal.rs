//! Elk's Ideal baseline, reported as Elk reported it: every operator on its fastest option as
//! if it had the whole SRAM, every load as early as HBM allows, loads never contending with
//! execution for the NoC, SRAM capacity ignored. It is **not a schedule** (it may not fit in
//! SRAM) and **not a proven lower bound** (the stage model's optimum can exceed it — or the
//! other way round when Elk's assumptions are too pessimistic); the exact solvers provide
//! certified bounds.

use elk_model::instance::Instance;
use elk_model::schedule::{fill_load_work, Schedule, Status, SCHEDULE_FORMAT};

/// Elk's Ideal figure for an instance.
#[derive(Clone, Debug, PartialEq)]
pub struct IdealReport {
    /// Makespan in cycles.
    pub cycles: f64,
    /// Σ of each operator's fastest execution.
    pub exec_cycles: f64,
    /// Σ H.
    pub hbm_cycles: f64,
}

/// Computes Ideal: the fastest option per operator; loads in order from the prologue on,
/// filling spare HBM time; NoC cost of loads and SRAM capacity ignored.
pub fn ideal(inst: &Instance) -> IdealReport {
    let mut relaxed = inst.clone();
    relaxed.sram_bytes = u64::MAX;
    for op in &mut relaxed.ops {
        for o in &mut op.options {
            o.noc_per_hbm = 0.0;
        }
    }
    let options: Vec<usize> = relaxed
        .ops
        .iter()
        .map(|op| {
            (0..op.options.len())
                .min_by(|&a, &b| {
                    op.options[a]
                        .exec_cycles
                        .total_cmp(&op.options[b].exec_cycles)
                })
                .unwrap_or(0)
        })
        .collect();
    let loads = relaxed.loads();
    let starts = vec![0; loads.len()];
    let exec_cycles = options
        .iter()
        .zip(&relaxed.ops)
        .map(|(&o, op)| op.options[o].exec_cycles)
        .sum();
    let hbm_cycles = relaxed.ops.iter().map(|op| op.hbm_cycles).sum();
    let cycles = fill_load_work(&relaxed, &options, &loads, &starts)
        .map(|load_work| {
            let s = Schedule {
                format: SCHEDULE_FORMAT.into(),
                instance: relaxed.name.clone(),
                method: "ideal".into(),
                options: options.clone(),
                load_order: loads.clone(),
                load_work,
                makespan_cycles: 0.0,
                status: Status::Heuristic,
                lower_bound_cycles: None,
            };
            elk_sim::evaluate(&relaxed, &s).makespan_cycles
        })
        .unwrap_or(f64::NAN);
    IdealReport {
        cycles,
        exec_cycles,
        hbm_cycles,
    }
}
