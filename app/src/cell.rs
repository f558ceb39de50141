//! Running one grid cell: build the graph and chip variant, plan, run every method, judge
//! each schedule with the simulator. The result is one JSON line, free of wall-clock times
//! (so a rerun, a resumed run and a sharded run write identical bytes). A cell with an MoE
//! routing runs the load policies instead ([`MoeCell`], `cell/routed.rs`).

mod instance;
mod result;
mod routed;

pub use crate::grid::{cell_chip, cell_chip_from};
pub use instance::{cell_instance, cell_instance_of, cell_instance_on, scale_instance};
pub use result::{BreakdownCycles, CellBound, CellResult, MethodResult, MethodStatus};
pub use routed::MoeCell;
pub use routed::{bound_source_names, rows_of as routed_rows, steps_bound};

use crate::bound::certified_bound;
use crate::grid::Cell;
use crate::portfolio::{Portfolio, Run, Stopped};
use elk_heuristics::{by_name, ideal};
use elk_model::chip::ChipSpec;
use elk_model::plan::PlanCache;
use elk_model::zoo::ZooModel;
use elk_stage::instance::Instance;
use elk_stage::method::{Method, Outcome};
use result::set_gaps;

/// The line of `cell` before anything ran: no operators, no methods, no error.
fn blank(figure: &str, cell: &Cell) -> CellResult {
    CellResult {
        figure: figure.into(),
        cell: cell.clone(),
        ops: 0,
        ideal_ms: None,
        methods: Vec::new(),
        bound: None,
        ideal_unreachable: None,
        error: None,
        does_not_fit: false,
    }
}

fn failed(figure: &str, cell: &Cell, error: String) -> CellResult {
    CellResult {
        error: Some(error),
        ..blank(figure, cell)
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
    let mut result = blank(figure, cell);
    result.ideal_unreachable = cell_chip_from(chip.clone(), cell)
        .ok()
        .and_then(|c| ideal_unreachable(&c));
    if cell.routing.is_some() {
        // A routed cell is the load policies on its sampled steps: the grid's methods and
        // Ideal would schedule another workload (the balanced routing's graph).
        match routed::run(cell, model, chip, &how.moe, how.bound, cache) {
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
