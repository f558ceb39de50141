//! Elk's Ideal baseline, reported as Elk reported it: every operator on its fastest option as
//! if it had the whole SRAM, every load as early as HBM allows, loads never contending with
//! execution for the NoC, SRAM capacity ignored. It is **not a schedule** (it may not fit in
//! SRAM) and **not a proven lower bound** (the stage model's optimum can exceed it — or the
//! other way round when Elk's assumptions are too pessimistic); the exact solvers provide
//! certified bounds.

use elk_stage::instance::Instance;
use elk_stage::schedule::{fill_load_work, Schedule};
use elk_stage::units::{Bytes, Cycles, Stage};

/// Elk's Ideal figure for an instance.
#[derive(Clone, Debug, PartialEq)]
pub struct IdealReport {
    /// Makespan (`None` when even the relaxed loads cannot be placed, which only a preload
    /// window can cause).
    pub cycles: Option<Cycles>,
    /// Σ of each operator's fastest execution.
    pub exec_cycles: Cycles,
    /// Σ H.
    pub hbm_cycles: Cycles,
}

/// Computes Ideal: the fastest option per operator; loads in order from the prologue on,
/// filling spare HBM time; NoC cost of loads and SRAM capacity ignored.
pub fn ideal(inst: &Instance) -> IdealReport {
    let mut relaxed = inst.clone();
    relaxed.sram_bytes = Bytes(u64::MAX);
    for op in &mut relaxed.ops {
        for o in op.options_mut() {
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
    let starts = vec![Stage::PROLOGUE; loads.len()];
    let exec_cycles = options
        .iter()
        .zip(&relaxed.ops)
        .map(|(&o, op)| op.options[o].exec_cycles)
        .sum();
    let hbm_cycles = relaxed.ops.iter().map(|op| op.hbm_cycles).sum();
    let cycles = fill_load_work(&relaxed, &options, &loads, &starts)
        .ok()
        .map(|load_work| {
            let s = Schedule::new(
                &relaxed,
                "ideal",
                options.clone(),
                loads.clone(),
                load_work,
                Cycles::ZERO,
            );
            elk_sim::evaluate(&relaxed, &s).makespan_cycles
        });
    IdealReport {
        cycles,
        exec_cycles,
        hbm_cycles,
    }
}
