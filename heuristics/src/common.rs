//! Pieces every heuristic shares: picking options, building and pricing a schedule.

use elk_stage::instance::{Instance, InstanceOp, OpOption};
use elk_stage::schedule::{fill_load_work, FillError, Schedule};
use elk_stage::units::Stage;

/// The best option by `better` among those with hot ≤ `max_hot` and cold ≤ `max_cold`.
fn pick(
    op: &InstanceOp,
    max_hot: u64,
    max_cold: u64,
    better: impl Fn(&OpOption, &OpOption) -> std::cmp::Ordering,
) -> Option<usize> {
    (0..op.options.len())
        .filter(|&o| op.options[o].hot.get() <= max_hot && op.options[o].cold.get() <= max_cold)
        .min_by(|&a, &b| better(&op.options[a], &op.options[b]))
}

/// The fastest option (ties: smaller hot, then smaller cold) that fits.
pub fn fastest(op: &InstanceOp, max_hot: u64, max_cold: u64) -> Option<usize> {
    pick(op, max_hot, max_cold, |x, y| {
        x.exec_cycles
            .total_cmp(&y.exec_cycles)
            .then(x.hot.cmp(&y.hot))
            .then(x.cold.cmp(&y.cold))
    })
}

/// The smallest cold option (ties: fastest) that fits.
pub fn smallest_cold(op: &InstanceOp, max_hot: u64, max_cold: u64) -> Option<usize> {
    pick(op, max_hot, max_cold, |x, y| {
        x.cold
            .cmp(&y.cold)
            .then(x.exec_cycles.total_cmp(&y.exec_cycles))
    })
}

/// The largest cold option (ties: fastest) that fits.
pub fn largest_cold(op: &InstanceOp, max_hot: u64, max_cold: u64) -> Option<usize> {
    pick(op, max_hot, max_cold, |x, y| {
        y.cold
            .cmp(&x.cold)
            .then(x.exec_cycles.total_cmp(&y.exec_cycles))
    })
}

/// Fills the load work for the decisions (loads in execution order, load q from stage
/// `starts[q]`) and prices the schedule with the simulator.
pub fn build(
    inst: &Instance,
    method: &str,
    options: Vec<usize>,
    starts: &[Stage],
) -> Result<Schedule, FillError> {
    let load_order = inst.loads();
    let load_work = fill_load_work(inst, &options, &load_order, starts)?;
    let mut s = Schedule::new(
        inst,
        method,
        options,
        load_order,
        load_work,
        Default::default(),
    );
    s.makespan_cycles = elk_sim::evaluate(inst, &s).makespan_cycles;
    Ok(s)
}

/// The smallest cold footprint among operator `j`'s options (its c_min), bytes per core.
pub fn c_min(inst: &Instance, j: usize) -> u64 {
    inst.ops[j]
        .options
        .iter()
        .map(|o| o.cold.get())
        .min()
        .unwrap_or(0)
}
