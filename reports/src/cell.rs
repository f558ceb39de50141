//! Running one grid cell: build the graph and chip variant, plan, run every method, judge
//! each schedule with the simulator. The result is one JSON line, free of wall-clock times
//! (so a rerun, a resumed run and a sharded run write identical bytes).

use crate::grid::Cell;
use elk_heuristics::{by_name, ideal};
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::{ChipOverrides, ChipSpec, Topology};
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{self, ZooParams};
use elk_sim::Breakdown;
use elk_solver::BoundSource;
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::{Budget, Outcome, Verdict};
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The plan cache every instance this crate builds uses (sweep cells, studies).
static PLAN_CACHE: OnceLock<Option<PlanCache>> = OnceLock::new();

/// Sets the plan cache for the rest of the process (the CLI's `--no-cache` passes `None`).
/// It is process-wide because every cell and study builds its instances deep inside; the
/// first call wins. Without a call, plan tables are enumerated every time.
pub fn use_plan_cache(cache: Option<PlanCache>) {
    let _ = PLAN_CACHE.set(cache);
}

/// The cache set by [`use_plan_cache`], if any.
pub(crate) fn plan_cache() -> Option<PlanCache> {
    PLAN_CACHE.get().cloned().flatten()
}

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
    /// Fig-18 breakdown, cycles.
    pub breakdown: Option<Breakdown>,
    /// 100·(makespan − bound)/bound against the cell's certified bound (grids with
    /// `bound = true`): an upper bound on the gap to the optimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_le_pct: Option<f64>,
}

/// A cell's certified lower bound on every schedule's makespan (grids with `bound = true`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellBound {
    /// The bound, ms.
    pub bound_ms: f64,
    /// `segment relaxation` or `roofline`, whichever is stronger.
    pub source: String,
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

/// Scales an instance's NoC and compute: shifts and distribution take 1/noc of their cycles,
/// the compute part of exec (exec − comm) 1/compute.
pub fn scale_instance(inst: &mut Instance, noc: f64, compute: f64) {
    for op in &mut inst.ops {
        for o in &mut op.options {
            let comp = (o.exec_cycles - o.comm_cycles).max(Cycles::ZERO) / compute;
            o.comm_cycles /= noc;
            o.noc_per_hbm /= noc;
            o.exec_cycles = comp + o.comm_cycles;
        }
    }
}

/// The cell's instance (free load order), its chip entry read from the current directory.
pub fn cell_instance(cell: &Cell) -> elk_model::Result<Instance> {
    cell_instance_on(cell, ChipSpec::load(&cell.chip)?)
}

/// The cell's instance (free load order) on its variant of `chip`.
pub fn cell_instance_on(cell: &Cell, chip: ChipSpec) -> elk_model::Result<Instance> {
    let chip = cell_chip_from(chip, cell)?;
    let mode = Mode::parse(&cell.mode)?;
    let graph = zoo::build(&cell.model, &ZooParams::new(mode, cell.batch, cell.kv))?;
    let opts = InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        plan_cache: plan_cache(),
        ..InstanceOptions::default()
    };
    let mut inst = build_instance(&graph, &chip, &opts)?;
    if cell.noc_scale != 1.0 || cell.compute_scale != 1.0 {
        scale_instance(&mut inst, cell.noc_scale, cell.compute_scale);
    }
    Ok(inst)
}

/// Runs every method of `methods` on the cell, its chip entry read from the current
/// directory.
pub fn run_cell(figure: &str, cell: &Cell, methods: &[String]) -> CellResult {
    match ChipSpec::load(&cell.chip) {
        Ok(chip) => run_cell_on(figure, cell, chip, methods),
        Err(e) => failed(figure, cell, e.to_string()),
    }
}

fn failed(figure: &str, cell: &Cell, error: String) -> CellResult {
    CellResult {
        figure: figure.into(),
        cell: cell.clone(),
        ops: 0,
        ideal_ms: None,
        methods: Vec::new(),
        bound: None,
        ideal_unreachable: None,
        error: Some(error),
        does_not_fit: false,
    }
}

/// Runs every method of `methods` on the cell's variant of `chip`.
pub fn run_cell_on(figure: &str, cell: &Cell, chip: ChipSpec, methods: &[String]) -> CellResult {
    run_cell_with(figure, cell, chip, methods, false, &MoeCell::default())
}

/// How a cell with a routing runs the MoE load policies (grids with `routings`).
#[derive(Clone, Debug, PartialEq)]
pub struct MoeCell {
    /// Routing steps sampled (seed 1).
    pub steps: usize,
    /// The policies (empty: load-all, on-demand, predicted-K, oracle).
    pub policies: Vec<String>,
}

impl Default for MoeCell {
    fn default() -> MoeCell {
        MoeCell {
            steps: crate::grid::MOE_STEPS,
            policies: Vec::new(),
        }
    }
}

/// The load policies of an MoE cell over its sampled steps, one row each: the mean
/// makespan, and as `gap_le_pct` the mean of each step's makespan over that step's certified
/// bound (docs/moe.md).
fn policy_rows(cell: &Cell, chip: ChipSpec, moe: &MoeCell) -> crate::Result<Vec<MethodResult>> {
    let Some(routing) = &cell.routing else {
        return Ok(Vec::new());
    };
    let model = zoo::find(&cell.model)?;
    let spec = crate::moe::MoeSpec::new(
        &crate::moe::experts_of(model, &cell.model)?,
        crate::moe::MoeInputs {
            params: ZooParams::new(Mode::parse(&cell.mode)?, cell.batch, cell.kv),
            chip: cell_chip_from(chip, cell)?,
            opts: InstanceOptions {
                load_order: LoadOrder::Named(NamedOrder::Free),
                plan_cache: plan_cache(),
                ..InstanceOptions::default()
            },
            routing: routing.clone(),
            steps: moe.steps,
            seed: 1,
            policies: moe.policies.clone(),
            methods: crate::moe::DEFAULT_METHODS.map(String::from).to_vec(),
        },
    )?;
    let report = crate::moe::run(model, &spec, &|_| {})?;
    Ok(report
        .summary
        .iter()
        .map(|s| MethodResult {
            method: s.policy.clone(),
            status: Some(MethodStatus::Scheduled),
            reason: None,
            makespan_ms: Some(s.mean_ms),
            hbm_util: None,
            noc_util: None,
            tflops: None,
            breakdown: None,
            gap_le_pct: Some(s.mean_gap_pct),
        })
        .collect())
}

/// Why Elk's Ideal is out of reach on `chip`, when it is (B_NoC,dist below the HBM).
pub fn ideal_unreachable(chip: &ChipSpec) -> Option<String> {
    use elk_stage::units::si;
    let dist = elk_model::build::noc_distribution_bytes_per_s(chip);
    let hbm = chip.hbm.bandwidth_bytes_per_s;
    (dist < hbm).then(|| {
        format!(
            "Ideal is unreachable on {}: its NoC distributes HBM data at most at {} (B_NoC,dist), below the HBM's {}, and Ideal assumes loads never contend",
            chip.name,
            si(dist, "B/s"),
            si(hbm, "B/s")
        )
    })
}

/// The certified lower bound of `inst`: the coupled segment LP's (what `compare --bound
/// segment` and `gap` use; [`crate::bound`]), read from or kept in the bound cache beside the
/// plan cache, or the roofline's where it is stronger or the relaxation does not apply.
pub fn certified_bound(inst: &Instance) -> elk_solver::Result<(Cycles, BoundSource)> {
    use crate::bound::{certified, coupled_bound, BoundCache, COUPLED_LIMIT};
    let cache = plan_cache().map(|c| BoundCache::beside(&c));
    let found = coupled_bound(inst, COUPLED_LIMIT, cache.as_ref(), &|_| {})?;
    Ok(certified(inst, found.bound.map(|b| Cycles(b.bound_cycles))))
}

/// [`run_cell_on`], and with `bound` the cell's certified bound and every method's gap to
/// it.
pub fn run_cell_with(
    figure: &str,
    cell: &Cell,
    chip: ChipSpec,
    methods: &[String],
    bound: bool,
    moe: &MoeCell,
) -> CellResult {
    let mut result = CellResult {
        figure: figure.into(),
        cell: cell.clone(),
        ops: 0,
        ideal_ms: None,
        methods: Vec::new(),
        bound: None,
        ideal_unreachable: None,
        error: None,
        does_not_fit: false,
    };
    result.ideal_unreachable = cell_chip_from(chip.clone(), cell)
        .ok()
        .and_then(|c| ideal_unreachable(&c));
    if cell.routing.is_some() {
        // A routed cell is the load policies on its sampled steps: the grid's methods and
        // Ideal would schedule another workload (the balanced routing's graph).
        match policy_rows(cell, chip, moe) {
            Ok(rows) => result.methods = rows,
            Err(e) => return failed(figure, cell, format!("load policies: {e}")),
        }
        return result;
    }
    let inst = match cell_instance_on(cell, chip) {
        Ok(i) => i,
        Err(e) => {
            let mut r = failed(figure, cell, e.to_string());
            r.does_not_fit = matches!(e, elk_model::ModelError::NoPlanFits { .. });
            return r;
        }
    };
    result.ops = inst.ops.len();
    result.ideal_ms = ideal(&inst).cycles.map(|c| inst.ms(c));
    for name in methods {
        let Some(m) = by_name(name) else {
            return failed(figure, cell, format!("unknown method '{name}'"));
        };
        let mut r = MethodResult {
            method: name.clone(),
            status: None,
            reason: None,
            makespan_ms: None,
            hbm_util: None,
            noc_util: None,
            tflops: None,
            breakdown: None,
            gap_le_pct: None,
        };
        // One failure policy: a method error (an invalid schedule included) fails the
        // cell loudly, never as a blank result.
        match elk_sim::run_judged(&inst, m.as_ref(), &Budget::default()) {
            Ok(judged) => {
                let outcome = &judged.solved.outcome;
                r.status = Some(outcome.verdict().into());
                r.reason = match outcome {
                    Outcome::Infeasible { reason } | Outcome::Unknown { reason } => {
                        Some(reason.clone())
                    }
                    _ => None,
                };
                if let Some(e) = judged.evaluation {
                    r.makespan_ms = Some(e.makespan_ms);
                    r.hbm_util = Some(e.hbm_utilisation);
                    r.noc_util = Some(e.noc_utilisation);
                    r.tflops = e.tflops;
                    r.breakdown = Some(e.breakdown);
                }
            }
            Err(e) => {
                result.error = Some(e.to_string());
                return result;
            }
        }
        result.methods.push(r);
    }
    if bound {
        match certified_bound(&inst) {
            Ok((b, source)) => {
                let bound_ms = inst.ms(b);
                for r in &mut result.methods {
                    r.gap_le_pct = r.makespan_ms.map(|t| 100.0 * (t - bound_ms) / bound_ms);
                }
                result.bound = Some(CellBound {
                    bound_ms,
                    source: source.to_string(),
                });
            }
            Err(e) => result.error = Some(format!("bound: {e}")),
        }
    }
    result
}
