//! The exact MILP backend (SPEC §5): the model of `encode` solved by HiGHS, with the MIP
//! status, dual bound, gap and node count read from HiGHS directly (good_lp builds the model
//! but does not report them).

mod encode;
mod warm;

pub(crate) use encode::{Absorb, AbsorbClass, Boundary, CoupledPart, Lift};
pub use encode::{Linearisation, ModelSize};

use crate::error::{Result, SolverError};
use crate::extract::{OrderHint, RawSolution};
use crate::prune::{prune, Pruned};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::schedule::Schedule;
use elk_stage::units::OpId;
use encode::Encoding;
use highs::HighsModelStatus;
use std::time::{Duration, Instant};

/// How to run the MILP.
#[derive(Clone, Debug, Default)]
pub struct MilpConfig {
    /// Memory-row linearisation.
    pub linearisation: Linearisation,
    /// HiGHS's own time limit (the caller enforces a hard one around it).
    pub time_limit: Option<Duration>,
    /// A valid schedule to start from.
    pub warm_start: Option<Schedule>,
    /// At most this many branch-and-bound nodes (HiGHS's `mip_max_nodes`), and at most
    /// [`LP_ITERATIONS_PER_NODE`] simplex iterations per node in all, which bounds the root
    /// too (it is not a node): limits that, unlike time, stop HiGHS at the same point on every
    /// machine (`--work-limit`).
    pub max_nodes: Option<u64>,
}

/// Under a node limit, the simplex iterations HiGHS may spend per node of it, root included
/// (`--work-limit`; docs/exact.md, "Reproducible certificates"). A node's LP warm-starts from
/// its parent's and takes tens to hundreds of iterations, so the cap only binds where the
/// root alone is long: two Llama2-7B layers' root does ~14,000 in its first 10 s and keeps
/// going for minutes.
pub const LP_ITERATIONS_PER_NODE: u64 = 10_000;

/// How HiGHS ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MilpStatus {
    /// Proven optimal (relative gap ≤ [`REL_GAP`]).
    Optimal,
    /// Stopped by the time limit.
    TimeLimit,
    /// Stopped by the node limit or its simplex-iteration cap ([`MilpConfig::max_nodes`]).
    WorkLimit,
    /// Proven infeasible.
    Infeasible,
}

/// What a MILP run produced.
#[derive(Clone, Debug)]
pub struct MilpRun {
    /// How it ended.
    pub status: MilpStatus,
    /// The incumbent, when there is one.
    pub solution: Option<RawSolution>,
    /// Its objective, cycles.
    pub objective: Option<f64>,
    /// HiGHS's dual bound, cycles (a proven lower bound).
    pub dual_bound: Option<f64>,
    /// Branch-and-bound nodes (of both runs when the first is repeated without its start).
    pub nodes: u64,
    /// The node limit's simplex-iteration cap stopped HiGHS ([`LP_ITERATIONS_PER_NODE`]).
    pub iterations_capped: bool,
    /// Model size.
    pub size: ModelSize,
    /// Options kept after Pareto pruning / options in the instance.
    pub options_kept: (usize, usize),
    /// Wall-clock seconds building the model (good_lp → HiGHS).
    pub build_s: f64,
    /// Wall-clock seconds in HiGHS.
    pub solve_s: f64,
}

/// The relative gap at which HiGHS stops and calls the incumbent optimal. Tight, so that
/// two exact backends agree to 1e-6.
pub const REL_GAP: f64 = 1e-9;

fn backend(detail: impl std::fmt::Display) -> SolverError {
    SolverError::Backend {
        backend: "milp",
        detail: detail.to_string(),
    }
}

fn configured(
    problem: good_lp::solvers::highs::HighsProblem,
    time_limit: Option<Duration>,
) -> Result<highs::Model> {
    let mut model = problem
        .try_into_inner()
        .map_err(|e| backend(format!("building the model: {e}")))?;
    model.make_quiet();
    let set = |model: &mut highs::Model, key: &str, v: f64| {
        model
            .try_set_option(key, v)
            .map_err(|e| backend(format!("option {key}: {e:?}")))
    };
    set(&mut model, "mip_rel_gap", REL_GAP)?;
    set(&mut model, "mip_abs_gap", 1e-7)?;
    if let Some(t) = time_limit {
        set(&mut model, "time_limit", t.as_secs_f64().max(0.01))?;
    }
    // Deterministic: one thread, fixed seed.
    model
        .try_set_option("threads", 1)
        .and_then(|_| model.try_set_option("random_seed", 0))
        .map_err(|e| backend(format!("options: {e:?}")))?;
    Ok(model)
}

/// Solves `problem` as [`configured`] sets it up (one thread, quiet, within `time_limit`);
/// a HiGHS failure is a backend error naming `what`.
fn solve_configured(
    problem: good_lp::solvers::highs::HighsProblem,
    time_limit: Option<Duration>,
    what: &str,
) -> Result<highs::SolvedModel> {
    configured(problem, time_limit)?
        .try_solve()
        .map_err(|e| backend(format!("{what}: {e:?}")))
}

/// Rows + columns the MILP of `inst` would have, estimated in O(loads²) without building
/// it (order rows dominate for free orders without a window), so that a whole model is
/// refused with a clear message instead of exhausting memory.
pub fn estimated_size(inst: &Instance) -> usize {
    let loads = inst.load_indices();
    let lo = |j: usize| inst.window_start(OpId(j)).index();
    let n = inst.ops.len();
    let mut size = 2 * (n + 1); // d and duration rows
    for &j in &loads {
        let stages = j - lo(j) + 1;
        let options = inst.ops[j].options.len();
        size += stages * (options + 3); // w (at most one per option), s, memory, start rows
    }
    let pairs = |a: usize, b: usize| -> usize {
        // Order rows of a pair: stages where both loads may work.
        let (a, b) = (a.min(b), a.max(b));
        (a + 1).saturating_sub(lo(b))
    };
    match inst.load_order {
        LoadOrder::Named(NamedOrder::Fixed) => {
            size += loads.windows(2).map(|p| pairs(p[0], p[1])).sum::<usize>();
        }
        _ => {
            for (i, &a) in loads.iter().enumerate() {
                for &b in &loads[i + 1..] {
                    size += 2 * pairs(a, b);
                }
            }
        }
    }
    size
}

/// Largest [`estimated_size`] the exact backends attempt (≈ 2 GB of model in HiGHS).
pub const MAX_SIZE: usize = 4_000_000;

/// The objective HiGHS reports is that of the columns it returns — Σ of the stage-duration
/// columns `durations`, the objective of a whole instance and of a window model — or it has
/// no solution. After a starting solution HiGHS 1.16 can fail this (docs/exact.md, "The
/// window search"); both callers then solve again without the start.
pub(crate) fn reports_its_columns(
    solved: &highs::SolvedModel,
    durations: impl IntoIterator<Item = usize>,
) -> bool {
    if solved.primal_solution_status() != highs::HighsSolutionStatus::Feasible {
        return true;
    }
    let cols = solved.get_solution();
    let claimed: f64 = durations.into_iter().map(|i| cols.columns()[i]).sum();
    let objective = solved.objective_value();
    (claimed - objective).abs() <= 1e-6 * claimed.abs().max(1.0)
}

/// Solves the instance exactly (up to [`REL_GAP`]) or until the time limit.
///
/// After a starting solution, HiGHS 1.16 can report an optimum below the columns it returns
/// (found by the window search's tests, docs/exact.md "The window search"); such a run is
/// repeated without the starting solution, with the time that is left.
pub fn run_milp(inst: &Instance, cfg: &MilpConfig) -> Result<MilpRun> {
    run_milp_watched(inst, cfg, &|_| {})
}

/// [`run_milp`], telling `on` HiGHS's progress (its incumbent's objective and its bound,
/// cycles, and its nodes) whenever either moves during branch and bound. What `on` hears
/// changes nothing of the run.
pub fn run_milp_watched(
    inst: &Instance,
    cfg: &MilpConfig,
    on: &dyn Fn(&highs_watch::MipProgress),
) -> Result<MilpRun> {
    let start = Instant::now();
    let pruned = prune(inst);
    let attempt = |warm_start: Option<&Schedule>, max_nodes: Option<u64>| -> Result<Attempt> {
        let mut enc = encode::encode(inst, &pruned, cfg.linearisation, false);
        let warm = warm_start.map(|s| warm::warm_values(inst, &pruned, &enc, s));
        let empty = good_lp::ProblemVariables::new()
            .minimise(good_lp::Expression::from(0.0))
            .using(good_lp::highs);
        let problem = std::mem::replace(&mut enc.problem, empty);
        // HiGHS gets nine tenths of what is left of the limit after building: HiGHS checks
        // its clock only between nodes and LP iterations, and passing the model over,
        // reading the solution back, judging it and writing the report take time too; with
        // all of it, a worker under a hard limit was killed in the main job's 30 s layer
        // solve and lost its bound.
        let remaining = cfg
            .time_limit
            .map(|l| l.saturating_sub(start.elapsed()).mul_f64(0.9));
        let mut model = configured(problem, remaining)?;
        if let Some(n) = max_nodes {
            let n = i32::try_from(n).unwrap_or(i32::MAX);
            model
                .try_set_option("mip_max_nodes", n)
                .map_err(|e| backend(format!("option mip_max_nodes: {e:?}")))?;
        }
        let build_s = start.elapsed().as_secs_f64();
        if let Some(values) = &warm {
            model
                .try_set_solution(Some(values), None, None, None)
                .map_err(|e| backend(format!("warm start: {e:?}")))?;
        }
        let iterations = max_nodes.map(|n| n.saturating_mul(LP_ITERATIONS_PER_NODE));
        let (solved, watched) = highs_watch::solve_watched(model, &mut |p| on(p), iterations)
            .map_err(|e| backend(format!("solve: {e:?}")))?;
        let capped =
            watched.stopped_by_iterations && solved.status() == HighsModelStatus::ReachedInterrupt;
        // HiGHS's own count (a 64-bit info value); none when it ran no branch and bound.
        let nodes = highs_watch::int64_info(&solved, c"mip_node_count")
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0);
        Ok(Attempt {
            solved,
            enc,
            build_s,
            nodes,
            capped,
        })
    };
    let mut run = attempt(cfg.warm_start.as_ref(), cfg.max_nodes)?;
    let build_s = run.build_s;
    let mut nodes = run.nodes;
    if cfg.warm_start.is_some()
        && !reports_its_columns(&run.solved, run.enc.d.iter().map(|c| c.index))
    {
        let left = cfg.max_nodes.map(|n| n.saturating_sub(nodes));
        // With no node left the first run stands (its objective is read from its columns).
        if left != Some(0) {
            let again = attempt(None, left)?;
            nodes += again.nodes;
            if again.solved.primal_solution_status() == highs::HighsSolutionStatus::Feasible {
                run = again;
            }
        }
    }
    let Attempt {
        solved,
        enc,
        capped,
        ..
    } = run;
    let size = enc.size;
    let solve_s = start.elapsed().as_secs_f64() - build_s;
    let status = match solved.status() {
        HighsModelStatus::Optimal => MilpStatus::Optimal,
        HighsModelStatus::Infeasible => MilpStatus::Infeasible,
        // Only the node limit is set among the limits HiGHS reports as a solution limit.
        HighsModelStatus::ReachedSolutionLimit if cfg.max_nodes.is_some() => MilpStatus::WorkLimit,
        HighsModelStatus::ReachedInterrupt if capped => MilpStatus::WorkLimit,
        HighsModelStatus::ReachedTimeLimit
        | HighsModelStatus::ReachedIterationLimit
        | HighsModelStatus::ReachedSolutionLimit
        | HighsModelStatus::ReachedInterrupt => MilpStatus::TimeLimit,
        other => return Err(backend(format!("HiGHS ended with status {other:?}"))),
    };
    let has_solution = solved.primal_solution_status() == highs::HighsSolutionStatus::Feasible;
    let dual_bound = solved
        .double_info_value(c"mip_dual_bound")
        .ok()
        .filter(|b| b.is_finite());
    let options_kept = (
        pruned.kept.iter().map(Vec::len).sum(),
        inst.ops.iter().map(|o| o.options.len()).sum(),
    );
    let mut run = MilpRun {
        status,
        solution: None,
        objective: None,
        dual_bound,
        nodes,
        iterations_capped: capped,
        size,
        options_kept,
        build_s,
        solve_s,
    };
    if has_solution && status != MilpStatus::Infeasible {
        let sol = solved.get_solution();
        let cols = sol.columns();
        run.objective = Some(solved.objective_value());
        run.solution = Some(read_solution(
            inst, &pruned, &enc.x, &enc.w, &enc.lo, &enc.p, cols,
        ));
    }
    Ok(run)
}

/// One HiGHS run of [`run_milp_watched`]: the solved model, its encoding, the seconds until
/// HiGHS started, its branch-and-bound nodes, and whether the node limit's simplex-iteration
/// cap stopped it.
struct Attempt {
    solved: highs::SolvedModel,
    enc: Encoding,
    build_s: f64,
    nodes: u64,
    capped: bool,
}

/// Why the LP relaxation has no optimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpMiss {
    /// HiGHS stopped before the end (its time limit): the machine's speed decided.
    Stopped,
    /// No point satisfies it (nor, then, any schedule), or it is unbounded: a fact of the
    /// instance, the same on every machine.
    NoOptimum,
}

/// The LP relaxation's optimum: a lower bound on every schedule's makespan.
pub fn lp_bound(
    inst: &Instance,
    linearisation: Linearisation,
    time_limit: Option<Duration>,
) -> Result<std::result::Result<(f64, ModelSize), LpMiss>> {
    Ok(lp_relaxation(inst, linearisation, time_limit)?.map(|r| (r.optimum, r.size)))
}

/// A solved LP relaxation ([`lp_relaxation`]).
#[derive(Clone, Debug)]
pub struct LpRelaxation {
    /// The optimum, cycles: a lower bound on every schedule's makespan.
    pub optimum: f64,
    /// The relaxation's size.
    pub size: ModelSize,
    /// Per operator, the original index of the option with the largest weight at the
    /// optimum (the last kept one on a tie).
    pub options: Vec<usize>,
}

/// The LP relaxation of `inst`'s MILP solved: its optimum and the options it leans to.
pub fn lp_relaxation(
    inst: &Instance,
    linearisation: Linearisation,
    time_limit: Option<Duration>,
) -> Result<std::result::Result<LpRelaxation, LpMiss>> {
    let pruned = prune(inst);
    let enc = encode::encode(inst, &pruned, linearisation, true);
    let size = enc.size;
    let solved = solve_configured(enc.problem, time_limit, "LP relaxation")?;
    Ok(match solved.status() {
        HighsModelStatus::Optimal => {
            let sol = solved.get_solution();
            let options = heaviest_options(&enc.x, sol.columns(), &pruned);
            Ok(LpRelaxation {
                optimum: solved.objective_value(),
                size,
                options,
            })
        }
        HighsModelStatus::ReachedTimeLimit
        | HighsModelStatus::ReachedIterationLimit
        | HighsModelStatus::ReachedInterrupt => Err(LpMiss::Stopped),
        _ => Err(LpMiss::NoOptimum),
    })
}

/// A proven lower bound on the objective of the model of `inst` with `boundary`: the LP
/// optimum (`relax`) or the MILP's dual bound when HiGHS stops (optimal or time limit).
/// `None` when HiGHS proves nothing (no finite bound in time).
pub(crate) fn boundary_bound(
    inst: &Instance,
    boundary: encode::Boundary,
    relax: bool,
    time_limit: Option<Duration>,
) -> Result<Option<BoundRun>> {
    let start = Instant::now();
    let pruned = prune(inst);
    let prologue_priced = boundary.prologue_price.is_some();
    let enc = encode::encode_segment(inst, &pruned, Linearisation::BigM, relax, boundary);
    let remaining = time_limit.map(|l| l.saturating_sub(start.elapsed()));
    let solved = solve_configured(enc.problem, remaining, "segment bound")?;
    let status = solved.status();
    let bound = if relax {
        (status == HighsModelStatus::Optimal).then(|| solved.objective_value())
    } else {
        match status {
            HighsModelStatus::Optimal
            | HighsModelStatus::ReachedTimeLimit
            | HighsModelStatus::ReachedIterationLimit
            | HighsModelStatus::ReachedSolutionLimit
            | HighsModelStatus::ReachedInterrupt => solved
                .double_info_value(c"mip_dual_bound")
                .ok()
                .filter(|b| b.is_finite()),
            _ => None,
        }
    };
    // The objective is (Σ stages beyond 0) + μ·(d₀ − Σ absorbed) with μ the boundary's price,
    // so at an LP optimum its slope in μ is d₀ − Σ absorbed there (each term only when the
    // boundary prices it): a supergradient of the concave bound L(μ).
    let slope_cycles = (relax && bound.is_some()).then(|| {
        let sol = solved.get_solution();
        let cols = sol.columns();
        let prologue = match (prologue_priced, enc.d.first()) {
            (true, Some(d0)) => cols[d0.index],
            _ => 0.0,
        };
        prologue
            - enc
                .absorbed
                .iter()
                .flatten()
                .map(|c| cols[c.index])
                .sum::<f64>()
    });
    Ok(bound.map(|bound_cycles| BoundRun {
        bound_cycles,
        proven_optimal: !relax && status == HighsModelStatus::Optimal,
        slope_cycles,
    }))
}

/// The options the LP relaxation of `inst` with `boundary` picks: per operator the original
/// index of the option with the largest x. `None` when HiGHS ends without a solution.
pub(crate) fn boundary_lp_options(
    inst: &Instance,
    boundary: encode::Boundary,
    time_limit: Duration,
) -> Result<Option<Vec<usize>>> {
    let pruned = prune(inst);
    let enc = encode::encode_segment(inst, &pruned, Linearisation::BigM, true, boundary);
    let solved = solve_configured(enc.problem, Some(time_limit), "segment options")?;
    if solved.primal_solution_status() != highs::HighsSolutionStatus::Feasible {
        return Ok(None);
    }
    let sol = solved.get_solution();
    Ok(Some(heaviest_options(&enc.x, sol.columns(), &pruned)))
}

/// Per operator, the original index of the kept option whose x weighs most in `cols` (the
/// last on a tie).
fn heaviest_options(x: &[Vec<encode::Col>], cols: &[f64], pruned: &Pruned) -> Vec<usize> {
    x.iter()
        .enumerate()
        .map(|(i, xs)| {
            let best = (0..xs.len())
                .max_by(|&a, &b| cols[xs[a].index].total_cmp(&cols[xs[b].index]))
                .unwrap_or(0);
            pruned.kept[i].get(best).copied().unwrap_or(0)
        })
        .collect()
}

/// Solves an LP built with good_lp (one thread, quiet, within `time_limit`): its optimum,
/// HiGHS's simplex iterations and the optimal point's columns, or `None` when HiGHS ends
/// without an optimum.
pub(crate) fn solve_lp(
    problem: good_lp::solvers::highs::HighsProblem,
    time_limit: Duration,
) -> Result<Option<(f64, i64, Vec<f64>)>> {
    let solved = solve_configured(problem, Some(time_limit), "LP")?;
    Ok((solved.status() == HighsModelStatus::Optimal).then(|| {
        (
            solved.objective_value(),
            solved.simplex_iteration_count(),
            solved.get_solution().columns().to_vec(),
        )
    }))
}

/// A solved [`encode::encode_coupled`] model.
#[derive(Clone, Debug)]
pub(crate) struct CoupledRun {
    /// The LP optimum, cycles.
    pub optimum: f64,
    pub size: ModelSize,
    /// HiGHS's simplex iterations.
    pub iterations: i64,
    /// With merged classes, whether the solution lifts to one class per ν
    /// ([`encode::lift_check`]).
    pub lift: Option<Lift>,
    /// Wall-clock seconds of the lift check.
    pub lift_seconds: f64,
}

/// The optimum of the coupled segment LP ([`encode::encode_coupled`]): a lower bound on every
/// schedule of the chain the parts were cut from. `None` when HiGHS ends without an optimum.
/// With `lift`, the solution is also checked for a lift to one class per ν.
pub(crate) fn coupled_bound(
    parts: &[CoupledPart],
    classes: &[Vec<f64>],
    time_limit: Option<Duration>,
    lift: bool,
) -> Result<Option<CoupledRun>> {
    let start = Instant::now();
    let Some((problem, size, layout)) =
        encode::encode_coupled(parts, classes, time_limit.map(|t| start + t))
    else {
        // Building the model alone took the time limit.
        return Ok(None);
    };
    let left = time_limit.map(|t| t.saturating_sub(start.elapsed()));
    let solved = solve_configured(problem, left, "coupled segment bound")?;
    if solved.status() != HighsModelStatus::Optimal {
        return Ok(None);
    }
    let optimum = solved.objective_value();
    let lift_start = Instant::now();
    let lift = if lift {
        let left = time_limit.map(|t| t.saturating_sub(start.elapsed()));
        let sol = solved.get_solution();
        Some(encode::lift_check(
            parts,
            classes,
            &layout,
            sol.columns(),
            optimum,
            left,
        )?)
    } else {
        None
    };
    Ok(Some(CoupledRun {
        optimum,
        size,
        iterations: solved.simplex_iteration_count(),
        lift,
        lift_seconds: lift_start.elapsed().as_secs_f64(),
    }))
}

/// What [`boundary_bound`] proved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoundRun {
    /// The proven lower bound on the model's objective.
    pub bound_cycles: f64,
    /// HiGHS closed the MILP (the bound is its optimum up to [`REL_GAP`]).
    pub proven_optimal: bool,
    /// LP only: d(bound)/dμ at the optimum found, a supergradient in the boundary's price.
    pub slope_cycles: Option<f64>,
}

fn read_solution(
    inst: &Instance,
    pruned: &Pruned,
    x: &[Vec<encode::Col>],
    w: &[Vec<Vec<encode::Col>>],
    lo: &[usize],
    p: &[Vec<Option<encode::Col>>],
    cols: &[f64],
) -> RawSolution {
    let n = inst.ops.len();
    let options = (0..n)
        .map(|i| {
            let best = (0..x[i].len())
                .max_by(|&a, &b| cols[x[i][a].index].total_cmp(&cols[x[i][b].index]))
                .unwrap_or(0);
            pruned.kept[i][best]
        })
        .collect();
    let mut work = Vec::new();
    for j in inst.load_indices() {
        for (dk, groups) in w[j].iter().enumerate() {
            for c in groups {
                work.push((j, lo[j] + dk, cols[c.index]));
            }
        }
    }
    let order = match inst.load_order {
        LoadOrder::Named(NamedOrder::Fixed) => OrderHint::Execution,
        LoadOrder::Named(NamedOrder::Free) => OrderHint::Intervals,
        LoadOrder::Displacement { .. } => {
            let loads = inst.load_indices();
            let before = |a: usize, b: usize| -> bool {
                let (lo_, hi) = (a.min(b), a.max(b));
                let forward = p[lo_][hi].map(|c| cols[c.index] > 0.5).unwrap_or(true);
                if a < b {
                    forward
                } else {
                    !forward
                }
            };
            let mut order = loads.clone();
            order.sort_by_key(|&j| loads.iter().filter(|&&o| o != j && before(o, j)).count());
            OrderHint::Given(order)
        }
    };
    RawSolution {
        options,
        work,
        order,
    }
}
