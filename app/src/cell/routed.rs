//! A grid cell with an MoE routing: the load policies over sampled routing steps
//! ([`crate::moe`]), one row per policy, and with `bound = true` the cell's certified bound:
//! each step's strongest bound of the oracle's instance, which bounds every policy of that step.

use super::instance::instance_options;
use super::result::{set_gaps, CellBound, MethodResult, MethodStatus};
use crate::grid::{cell_chip_from, Cell};
use crate::moe::{MoeReport, StepBound};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{ZooModel, ZooParams};
use elk_solver::bounds::BoundSource;

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

/// The load policies of the cell over its sampled steps, one row each (the mean makespan,
/// its p50 and p99), and with `bound` the cell's bound (the mean of the steps' certified
/// bounds, which bounds the mean makespan) with every policy's gap to it.
pub(super) fn run(
    cell: &Cell,
    model: &ZooModel,
    chip: ChipSpec,
    moe: &MoeCell,
    bound: bool,
    plans: Option<&PlanCache>,
) -> crate::Result<(Vec<MethodResult>, Option<CellBound>)> {
    let Some(routing) = &cell.routing else {
        return Ok((Vec::new(), None));
    };
    let spec = crate::moe::MoeSpec::new(
        &crate::moe::experts_of(model, &cell.model)?,
        crate::moe::MoeInputs {
            params: ZooParams::new(Mode::parse(&cell.mode)?, cell.batch, cell.kv),
            chip: cell_chip_from(chip, cell)?,
            opts: instance_options(cell, plans),
            routing: routing.clone(),
            steps: moe.steps,
            seed: 1,
            policies: moe.policies.clone(),
            methods: crate::moe::DEFAULT_METHODS.map(String::from).to_vec(),
        },
    )?;
    let step_bound = if bound {
        StepBound::Strongest
    } else {
        StepBound::Roofline
    };
    let report = crate::moe::run_with_bound(model, &spec, step_bound, &|_| {})?;
    // `expert_parallel = true`: the run with sets, each step's policy the faster of its two
    // schedules (docs/core-groups.md, CG-6); a row is marked with sets where that made it
    // faster on average.
    let Some(with) = &report.expert_parallel else {
        return Ok(rows_of(&report, bound));
    };
    let (mut rows, cell_bound) = rows_of(with, bound);
    for (row, without) in rows.iter_mut().zip(&report.summary) {
        row.parallel_sets = Some(row.makespan_ms.is_some_and(|t| t < without.mean_ms));
    }
    Ok((rows, cell_bound))
}

/// A run's rows, one per policy (the mean makespan, its p50 and p99), and with `bound` the
/// cell's bound ([`steps_bound`]) with every policy's gap to it.
pub fn rows_of(report: &MoeReport, bound: bool) -> (Vec<MethodResult>, Option<CellBound>) {
    let mut rows: Vec<MethodResult> = report
        .summary
        .iter()
        .map(|s| MethodResult {
            status: Some(MethodStatus::Scheduled),
            makespan_ms: Some(s.mean_ms),
            p50_ms: Some(s.p50_ms),
            p99_ms: Some(s.p99_ms),
            ..MethodResult::named(&s.policy)
        })
        .collect();
    let cell_bound = bound.then(|| steps_bound(report));
    if let Some(b) = &cell_bound {
        set_gaps(&mut rows, b);
    }
    (rows, cell_bound)
}

/// Between the sources of a [`steps_bound`] whose steps differ.
const SOURCE_SEPARATOR: &str = ", ";
/// Between a source and its count of steps ("stage relaxation on 7 of 10 steps").
const COUNT_SEPARATOR: &str = " on ";

/// The bounds' names in a [`CellBound::source`] (as [`steps_bound`] writes it), in order:
/// "stage relaxation on 7 of 10 steps, roofline on 3 of 10 steps" names the stage
/// relaxation and the roofline; a single source is its own name.
pub fn bound_source_names(source: &str) -> impl Iterator<Item = &str> {
    source
        .split(SOURCE_SEPARATOR)
        .map(|part| part.split(COUNT_SEPARATOR).next().unwrap_or(part))
}

/// The cell's bound from its steps': their mean, lowest and highest, and their source.
pub fn steps_bound(report: &MoeReport) -> CellBound {
    let bounds: Vec<f64> = report.steps.iter().map(|s| s.bound_ms).collect();
    let n = bounds.len();
    // Each source with the steps it bounds, in the order first met.
    let mut counts: Vec<(BoundSource, usize)> = Vec::new();
    for s in &report.steps {
        match counts
            .iter_mut()
            .find(|(source, _)| *source == s.bound_source)
        {
            Some((_, k)) => *k += 1,
            None => counts.push((s.bound_source, 1)),
        }
    }
    let source = match counts.as_slice() {
        [] => BoundSource::Roofline.to_string(),
        [(only, _)] => only.to_string(),
        many => many
            .iter()
            .map(|(source, k)| format!("{source}{COUNT_SEPARATOR}{k} of {n} steps"))
            .collect::<Vec<_>>()
            .join(SOURCE_SEPARATOR),
    };
    CellBound {
        bound_ms: bounds.iter().sum::<f64>() / n.max(1) as f64,
        source,
        min_ms: Some(bounds.iter().copied().fold(f64::INFINITY, f64::min)),
        max_ms: Some(bounds.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
    }
}
