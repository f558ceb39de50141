//! Running one grid cell: build the graph and chip variant, plan, run every method, judge
//! each schedule with the simulator. The result is one JSON line, free of wall-clock times
//! (so a rerun, a resumed run and a sharded run write identical bytes). A cell with an MoE
//! routing runs the load policies instead ([`MoeCell`], `cell/routed.rs`).

mod routed;

pub use crate::grid::{cell_chip, cell_chip_from};
pub use routed::MoeCell;
pub use routed::{rows_of as routed_rows, steps_bound};

use crate::grid::Cell;
use crate::portfolio::{Portfolio, Run, Stopped};
use elk_heuristics::{by_name, ideal};
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{ZooModel, ZooParams};
use elk_solver::BoundSource;
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::{Method, Outcome, Verdict};
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
fn instance_options(cell: &Cell, cache: Option<&PlanCache>) -> InstanceOptions {
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

/// How a grid runs its cells: its methods, whether each cell gets its certified bound, the
/// MoE part for cells with a routing, and the plan cache every instance is planned through
/// (`None`: planned afresh; the CLI's `--no-cache`).
#[derive(Clone, Debug, Default)]
pub struct CellRun {
    /// Registry names of the methods.
    pub methods: Vec<String>,
    /// Each cell's certified bound and every method's gap to it.
    pub bound: bool,
    /// Cells with a routing: the load policies over sampled steps.
    pub moe: MoeCell,
    /// The plan cache.
    pub plan_cache: Option<PlanCache>,
}

/// The certified lower bound of `inst`: the coupled segment LP's (what `compare --bound
/// segment` and `gap` use; [`crate::bound`]), read from or kept in the bound cache beside the
/// plan cache, or the roofline's where it is stronger or the relaxation does not apply.
pub fn certified_bound(
    inst: &Instance,
    plans: Option<&PlanCache>,
) -> elk_solver::Result<(Cycles, BoundSource)> {
    use crate::bound::{certified, coupled_bound, BoundCache, COUPLED_LIMIT};
    let cache = plans.map(BoundCache::beside);
    let found = coupled_bound(inst, COUPLED_LIMIT, cache.as_ref(), &|_| {})?;
    Ok(certified(inst, found.bound.map(|b| Cycles(b.bound_cycles))))
}

/// Runs the cell on `model` and its variant of `chip`: every method of `methods` (or, with a
/// routing, the load policies of `moe`), and with `bound` the cell's certified bound and
/// every method's gap to it.
pub fn run_cell_with(
    figure: &str,
    cell: &Cell,
    model: &ZooModel,
    chip: ChipSpec,
    how: &CellRun,
) -> CellResult {
    let cache = how.plan_cache.as_ref();
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
        match routed::run(cell, model, chip, how) {
            Ok((rows, b)) => {
                result.methods = rows;
                result.bound = b;
            }
            Err(e) => return failed(figure, cell, format!("load policies: {e}")),
        }
        return result;
    }
    let inst = match cell_instance_of(cell, model, chip.clone(), cache) {
        Ok(i) => i,
        Err(e) => {
            let mut r = failed(figure, cell, e.to_string());
            r.does_not_fit = matches!(e, elk_model::ModelError::NoPlanFits { .. });
            return r;
        }
    };
    result.ops = inst.ops.len();
    result.ideal_ms = ideal(&inst).cycles.map(|c| inst.ms(c));
    let mut runs = vec![inst];
    if cell.expert_parallel {
        // The union with the instance without sets (docs/core-groups.md, CG-5).
        let plain = Cell {
            expert_parallel: false,
            ..cell.clone()
        };
        match cell_instance_of(&plain, model, chip, cache) {
            Ok(i) => runs.push(i),
            Err(e) => return failed(figure, cell, format!("without parallel sets: {e}")),
        }
    }
    for (k, inst) in runs.iter().enumerate() {
        let rows = match methods_on(inst, &how.methods) {
            Ok(rows) => rows,
            Err(MethodsFailed::Unknown(name)) => {
                return failed(figure, cell, format!("unknown method '{name}'"))
            }
            Err(MethodsFailed::Run(rows, e)) => {
                if k == 0 {
                    result.methods = rows;
                }
                result.error = Some(if k == 0 {
                    e
                } else {
                    format!("without parallel sets: {e}")
                });
                return result;
            }
        };
        if k == 0 {
            result.methods = rows;
        } else {
            // Each method's faster schedule; the smaller Ideal figure.
            keep_faster(&mut result.methods, rows);
            let other = ideal(inst).cycles.map(|c| inst.ms(c));
            result.ideal_ms = match (result.ideal_ms, other) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    if how.bound {
        let mut lowest: Option<CellBound> = None;
        for inst in &runs {
            match certified_bound(inst, cache) {
                Ok((b, source)) => {
                    let here = CellBound {
                        bound_ms: inst.ms(b),
                        source: source.to_string(),
                        min_ms: None,
                        max_ms: None,
                    };
                    if lowest.as_ref().is_none_or(|l| here.bound_ms < l.bound_ms) {
                        lowest = Some(here);
                    }
                }
                Err(e) => {
                    result.error = Some(format!("bound: {e}"));
                    return result;
                }
            }
        }
        if let Some(cell_bound) = lowest {
            set_gaps(&mut result.methods, &cell_bound);
            result.bound = Some(cell_bound);
        }
    }
    result
}

/// Why a cell's methods did not all run.
enum MethodsFailed {
    /// A method name the registry does not have.
    Unknown(String),
    /// A method failed (an invalid schedule included): the rows before it, and the error.
    Run(Vec<MethodResult>, String),
}

/// Every method of `methods` on `inst`, judged. One failure policy: a method error (an
/// invalid schedule included) fails the cell loudly, never as a blank result.
fn methods_on(
    inst: &Instance,
    methods: &[String],
) -> std::result::Result<Vec<MethodResult>, MethodsFailed> {
    let resolved: Vec<Box<dyn Method>> = methods
        .iter()
        .map(|name| by_name(name).ok_or_else(|| MethodsFailed::Unknown(name.clone())))
        .collect::<std::result::Result<_, _>>()?;
    let rows = |p: Portfolio| p.runs.iter().map(method_result).collect();
    match Portfolio::run(inst, resolved.iter().map(|m| m.as_ref()), &mut |_, _| {}) {
        Ok(p) => Ok(rows(p)),
        Err(Stopped { done, error }) => Err(MethodsFailed::Run(rows(done), error.to_string())),
    }
}

/// A cell's result of one method's judged run: its verdict, its reason when it has no
/// schedule, and the simulator's numbers when it has one.
fn method_result(run: &Run) -> MethodResult {
    let mut r = MethodResult::named(&run.method);
    let outcome = &run.judged.solved.outcome;
    r.status = Some(outcome.verdict().into());
    r.reason = match outcome {
        Outcome::Infeasible { reason } | Outcome::Unknown { reason } => Some(reason.clone()),
        _ => None,
    };
    if let Some(e) = &run.judged.evaluation {
        r.makespan_ms = Some(e.makespan_ms);
        r.hbm_util = Some(e.hbm_utilisation);
        r.noc_util = Some(e.noc_utilisation);
        r.tflops = e.tflops;
        r.breakdown = Some(e.breakdown.into());
    }
    r
}

/// `with_sets` becomes, method by method, the faster of its row and `without`'s (the one
/// without sets on a tie), each marked with `parallel_sets`.
fn keep_faster(with_sets: &mut [MethodResult], without: Vec<MethodResult>) {
    for (a, b) in with_sets.iter_mut().zip(without) {
        let a_faster = match (a.makespan_ms, b.makespan_ms) {
            (Some(x), Some(y)) => x < y,
            (Some(_), None) => true,
            _ => false,
        };
        if !a_faster {
            *a = b;
        }
        a.parallel_sets = Some(a_faster);
    }
}

/// Every method's `gap_le_pct` against `bound`: 100·(makespan − bound)/bound.
fn set_gaps(methods: &mut [MethodResult], bound: &CellBound) {
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
