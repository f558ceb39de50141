//! Study `replay-fidelity`: is the stage model's makespan achievable on the chip? Every
//! Fig-17 method's schedule, on every Fig-17 cell (all-to-all ipu-pod4), is replayed by the
//! detailed simulator with paced and with greedy loads and set beside the stage model with
//! SPEC §4's NoC row and with the phased one (`elk_sim::phased`), the judge of built
//! instances. The methods schedule against the judge (the cells' instances are phased). This
//! is its run ([`Fidelity`]); its report is `elk_reports::studies::replay_fidelity`.

use super::{OnStep, Steps};
use crate::cell::{cell_chip, cell_instance};
use crate::grid::Grid;
use crate::Result;
use elk_model::plan::PlanCache;
use elk_sim::detailed::{simulate_detailed, DetailedConfig, LoadPolicy};

/// The methods replayed: the paper's four (Fig 17's), from the registry.
pub const METHODS: [&str; 4] = elk_heuristics::NAMES;

/// One schedule's four makespans, ms.
pub struct Row {
    /// The configuration (`model Bn KVn`).
    pub config: String,
    /// The method.
    pub method: &'static str,
    /// The stage model with SPEC §4's NoC row.
    pub spec_ms: f64,
    /// The stage model with the phased NoC row (the judge).
    pub phased_ms: f64,
    /// The detailed replay with paced loads.
    pub paced_ms: f64,
    /// The detailed replay with greedy loads.
    pub greedy_ms: f64,
}

/// What the study measured.
pub struct Fidelity {
    /// The Fig-17 cells.
    pub cells: usize,
    /// Every replayed schedule, in cell and method order.
    pub rows: Vec<Row>,
    /// What was not replayed, and why (one entry each).
    pub skipped: Vec<String>,
    /// The first cell's HBM bandwidth, TB/s (every Fig-17 cell is on the chip's own).
    pub hbm_tbps: Option<f64>,
}

/// Runs the study over the Fig-17 grid, each (cell, method) a step of `progress`; instances
/// are planned through `plans`.
pub fn run(plans: Option<&PlanCache>, progress: &OnStep<'_>) -> Result<Fidelity> {
    let grid = Grid::from_toml("fig17", crate::grid::preset("fig17").unwrap_or_default())?;
    let cells = grid.cells();
    let steps = Steps::new(cells.len() * METHODS.len(), progress);
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for cell in &cells {
        let config = format!("{} B{} KV{}", cell.model, cell.batch, cell.kv);
        steps.starting(&format!("{config}: plan tables"));
        let (inst, chip) = match cell_instance(cell, plans).and_then(|i| Ok((i, cell_chip(cell)?)))
        {
            Ok(x) => x,
            Err(e) => {
                skipped.push(format!(
                    "{config}: {}",
                    elk_stage::error::one_line(&e.to_string())
                ));
                steps.skipped(METHODS.len(), &config);
                continue;
            }
        };
        for method in METHODS {
            steps.starting(&format!("{config}: {method}"));
            let judged = match elk_heuristics::by_name(method) {
                Some(m) => elk_heuristics::judged(&inst, m.as_ref())?,
                None => None,
            };
            let Some((s, judged_cycles)) = judged else {
                skipped.push(format!("{config}, {method}: no schedule"));
                steps.finished(&config);
                continue;
            };
            let replay = |loads: LoadPolicy| {
                let cfg = DetailedConfig {
                    loads,
                    ..DetailedConfig::from_chip(&chip)
                };
                simulate_detailed(&inst, &s, &chip, &cfg).map(|r| r.makespan_ms)
            };
            let (spec, phased) = elk_sim::phased::both_rows(&inst, &s, judged_cycles);
            rows.push(Row {
                config: config.clone(),
                method,
                spec_ms: inst.ms(spec),
                phased_ms: inst.ms(phased),
                paced_ms: replay(LoadPolicy::Paced)?,
                greedy_ms: replay(LoadPolicy::Greedy)?,
            });
            steps.finished(&config);
        }
    }
    // Every Fig-17 cell is on the chip's own HBM: the report's title names it.
    let hbm_tbps = cells
        .first()
        .and_then(|c| cell_chip(c).ok())
        .map(|c| c.hbm.bandwidth_bytes_per_s / 1e12);
    Ok(Fidelity {
        cells: cells.len(),
        rows,
        skipped,
        hbm_tbps,
    })
}
