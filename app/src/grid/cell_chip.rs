//! A grid cell's chip: the chip its entry names with the cell's HBM, core-count and topology
//! overrides applied and validated. In the grid, not in `cell`, because the grid checks every
//! cell's chip when it is read, and a cell runs on it: both read it from here.

use super::cell::Cell;
use elk_model::chip::{ChipOverrides, ChipSpec, Topology};

/// A near-square W × H with W·H = cores (W ≥ H).
fn mesh_dims(cores: u64) -> (u64, u64) {
    let mut h = (cores as f64).sqrt() as u64;
    while h > 1 && cores % h != 0 {
        h -= 1;
    }
    (cores / h.max(1), h.max(1))
}

/// The chip of a cell (HBM, cores, topology overrides applied and validated), its chip
/// entry read from the current directory.
pub fn cell_chip(cell: &Cell) -> elk_model::Result<ChipSpec> {
    cell_chip_from(ChipSpec::load(&cell.chip)?, cell)
}

/// The cell's variant of `chip` (the chip its entry names).
pub fn cell_chip_from(chip: ChipSpec, cell: &Cell) -> elk_model::Result<ChipSpec> {
    // Only "mesh" changes the topology ("all-to-all" keeps the chip's own).
    let mesh = cell.topology.as_deref() == Some("mesh");
    let cores = cell.cores.unwrap_or(chip.cores);
    // A near-square mesh when the topology becomes one, or when the core count of a mesh
    // or torus changes.
    let dims = (mesh || (cell.cores.is_some() && chip.noc.topology != Topology::AllToAll))
        .then(|| mesh_dims(cores));
    chip.with_overrides(&ChipOverrides {
        file: format!("chip of cell {} ({})", cell.index, cell.chip),
        hbm_tbps: cell.hbm_tbps,
        cores: cell.cores,
        topology: mesh.then_some(Topology::Mesh),
        width: dims.map(|(w, _)| w),
        height: dims.map(|(_, h)| h),
        ..ChipOverrides::default()
    })
}
