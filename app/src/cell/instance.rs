//! A cell's instance: its model built at its mode, batch and KV length on its variant of the
//! chip, free load order, planned through the plan cache it is given, its NoC and compute
//! scaled.

use crate::grid::{cell_chip_from, Cell};
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{ZooModel, ZooParams};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::units::Cycles;

/// Scales an instance's NoC and compute: shifts and distribution take 1/noc of their cycles,
/// the compute part of exec (exec − comm) 1/compute.
pub fn scale_instance(inst: &mut Instance, noc: f64, compute: f64) {
    for op in &mut inst.ops {
        for o in op.options_mut() {
            let comp = (o.exec_cycles - o.comm_cycles).max(Cycles::ZERO) / compute;
            o.comm_cycles /= noc;
            o.noc_per_hbm /= noc;
            o.exec_cycles = comp + o.comm_cycles;
        }
    }
}

/// The cell's instance (free load order), its chip and model entries read from the current
/// directory. `cache` is the plan cache its plan tables are read from and kept in (`None`: planned
/// afresh), as for every function here that builds an instance.
pub fn cell_instance(cell: &Cell, cache: Option<&PlanCache>) -> elk_model::Result<Instance> {
    cell_instance_on(cell, ChipSpec::load(&cell.chip)?, cache)
}

/// The cell's instance (free load order) on its variant of `chip`, its model entry read from
/// the current directory.
pub fn cell_instance_on(
    cell: &Cell,
    chip: ChipSpec,
    cache: Option<&PlanCache>,
) -> elk_model::Result<Instance> {
    let model = ZooModel::load(&cell.model)?;
    cell_instance_of(cell, &model, chip, cache)
}

/// Instance options of `cell`: free load order, the plan cache `cache`, its parallel sets.
pub(super) fn instance_options(cell: &Cell, cache: Option<&PlanCache>) -> InstanceOptions {
    InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        plan_cache: cache.cloned(),
        parallel: cell.expert_parallel,
        ..InstanceOptions::default()
    }
}

/// The cell's instance (free load order) of `model` on its variant of `chip`.
pub fn cell_instance_of(
    cell: &Cell,
    model: &ZooModel,
    chip: ChipSpec,
    cache: Option<&PlanCache>,
) -> elk_model::Result<Instance> {
    let chip = cell_chip_from(chip, cell)?;
    let mode = Mode::parse(&cell.mode)?;
    let graph = model.build(&ZooParams::new(mode, cell.batch, cell.kv))?;
    let mut inst = build_instance(&graph, &chip, &instance_options(cell, cache))?;
    if cell.noc_scale != 1.0 || cell.compute_scale != 1.0 {
        scale_instance(&mut inst, cell.noc_scale, cell.compute_scale);
    }
    Ok(inst)
}
