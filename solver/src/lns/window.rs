//! One neighbourhood of the window search: the re-timing LP of [`crate::retime()`] over the
//! whole model, with the options of a window of consecutive operators set free (binaries).
//!
//! Kept from the incumbent: the load order, every option outside the window, and each load's
//! start stage as the earliest it may work ([`LoadSpans`]). Free: the window's options and
//! every load's work within its span. The model, for window operators i with candidate
//! options o (the Pareto-kept ones plus the incumbent's):
//!
//! - `x[i][o]` ∈ {0,1}, Σ_o x = 1; stage i + 1 has `d ≥ Σ exec_o x`, `d ≥ Σ comm_o x + Σ ν w`;
//! - a window load's work is split by the ν of its options, each part at most
//!   H·(Σ of that ν's x), so the NoC term stays linear;
//! - memory rows for every stage where a window operator runs or a window load is resident
//!   (from its input start to its own stage): hot and cold bytes linear in x, everything
//!   else a constant. Every other stage's memory is the input's or less: no load starts
//!   earlier than in the input and no option outside the window changes.
//!
//! The incumbent is a feasible point (it is passed as HiGHS's starting solution), so the
//! optimum is never worse; the simulator judges the result before it is kept.

use std::ops::Range;

use crate::error::{Result, SolverError};
use crate::milp::reports_its_columns;
use crate::prune::Pruned;
use crate::retime::{clean_work, LoadSpans};

/// Work below this fraction of its load's H in a window MILP's solution is integrality
/// tolerance (HiGHS's `mip_feasibility_tolerance` is 1e-6), not a decision.
const MIP_DUST: f64 = 1e-5;
use elk_stage::instance::{Instance, NocRow};
use elk_stage::schedule::Schedule;
use elk_stage::units::{Cycles, OpId, Stage};
use highs::{Col, HighsModelStatus, RowProblem, Sense};

/// A window model, ready to solve.
pub(crate) struct WindowModel {
    problem: RowProblem,
    /// The incumbent as a column vector (HiGHS's starting solution).
    warm: Vec<f64>,
    /// Per window operator: (operator, [(option, column)]).
    x: Vec<(usize, Vec<(usize, Col)>)>,
    /// Per load-work column: (operator, stage).
    w: Vec<(usize, usize, Col)>,
    /// The first columns are the n + 1 stage durations.
    durations: usize,
    /// Model size: columns, of which binary, rows.
    pub columns: usize,
    pub binaries: usize,
    pub rows: usize,
}

/// What solving a window gave.
pub(crate) struct WindowResult {
    /// The solution as a schedule (not yet judged), if HiGHS has one better than the start.
    pub schedule: Option<Schedule>,
    /// HiGHS proved the window's optimum.
    pub optimal: bool,
}

/// Columns and their starting values, created together so they stay aligned.
struct Builder {
    problem: RowProblem,
    warm: Vec<f64>,
    binaries: usize,
    rows: usize,
}

impl Builder {
    fn column(&mut self, cost: f64, min: f64, value: f64) -> Col {
        self.warm.push(value);
        self.problem.add_column(cost, min..)
    }
    fn binary(&mut self, value: f64) -> Col {
        self.warm.push(value);
        self.binaries += 1;
        self.problem.add_integer_column(0.0, 0.0..=1.0)
    }
    fn row(&mut self, bounds: impl std::ops::RangeBounds<f64>, terms: Vec<(Col, f64)>) {
        self.rows += 1;
        self.problem.add_row(bounds, terms);
    }
}

/// The candidate options of window operator i: the kept ones and the incumbent's.
fn candidates(pruned: &Pruned, i: usize, current: usize) -> Vec<usize> {
    let mut c = pruned.kept[i].clone();
    if !c.contains(&current) {
        c.push(current);
        c.sort_unstable();
    }
    c
}

/// Builds the model of module docs for `window` (operator indices) around `s`.
pub(crate) fn build(
    inst: &Instance,
    s: &Schedule,
    pruned: &Pruned,
    window: Range<usize>,
    earlier: usize,
) -> Result<WindowModel> {
    let n = inst.ops.len();
    let spans = LoadSpans::of(inst, s)?;
    // First stage each load may work in: its input start, or up to `earlier` stages before
    // it for the window's loads (within the preload window).
    let first: Vec<usize> = (0..n)
        .map(|j| {
            if window.contains(&j) && inst.is_load(OpId(j)) {
                let ws = inst.window_start(OpId(j)).index();
                spans.lo[j].saturating_sub(earlier).max(ws).min(spans.lo[j])
            } else {
                spans.lo[j]
            }
        })
        .collect();
    let in_window = |i: usize| window.contains(&i);
    let option = |i: usize| &inst.ops[i].options[s.options[i]];
    let mut b = Builder {
        problem: RowProblem::default(),
        warm: Vec::new(),
        binaries: 0,
        rows: 0,
    };
    // The incumbent's stage terms, for the starting durations.
    let mut hbm = vec![0.0; n + 1];
    let mut noc = vec![0.0; n + 1];
    let mut input_work = vec![Vec::new(); n];
    // The phased row (elk_sim::phased) of instances that record it: per stage, the input's
    // (work, ν) for the starting duration.
    let phased = inst.noc_row == NocRow::Phased;
    let mut stage_loads: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n + 1];
    for w in &s.load_work {
        let (j, k, c) = (w.op.index(), w.stage.index(), w.cycles.get());
        hbm[k] += c;
        noc[k] += c * option(j).noc_per_hbm;
        input_work[j].push((k, c));
        stage_loads[k].push((c, option(j).noc_per_hbm));
    }
    let d: Vec<Col> = (0..=n)
        .map(|k| {
            let (exec, comm) = Stage(k).executing().map_or((0.0, 0.0), |i| {
                let o = option(i.index());
                (o.exec_cycles.get(), o.comm_cycles.get())
            });
            let floor = match Stage(k).executing() {
                Some(i) if !in_window(i.index()) => exec.max(comm),
                _ => 0.0,
            };
            let row = if phased {
                elk_sim::phased::phased_row(exec, comm, &stage_loads[k])
            } else {
                0.0
            };
            b.column(1.0, floor, exec.max(comm + noc[k]).max(hbm[k]).max(row))
        })
        .collect();
    let x: Vec<(usize, Vec<(usize, Col)>)> = window
        .clone()
        .map(|i| {
            let cols: Vec<(usize, Col)> = candidates(pruned, i, s.options[i])
                .into_iter()
                .map(|o| (o, b.binary(f64::from(u8::from(o == s.options[i])))))
                .collect();
            b.row(1.0..=1.0, cols.iter().map(|&(_, c)| (c, 1.0)).collect());
            (i, cols)
        })
        .collect();
    let x_of = |i: usize| &x[i - window.start].1;
    // Load work: one column per stage, or per (stage, ν) for window loads.
    let mut per_stage: Vec<Vec<(Col, f64)>> = vec![Vec::new(); n + 1];
    // The starting value of each `per_stage` column.
    let mut per_stage_warm: Vec<Vec<f64>> = vec![Vec::new(); n + 1];
    let mut w = Vec::new();
    // Per load: (stage, column) of its work, every ν group.
    let mut work_of: Vec<Vec<(usize, Col)>> = vec![Vec::new(); n];
    for j in inst.load_indices() {
        let h = inst.ops[j].hbm_cycles.get();
        let groups: Vec<(f64, Vec<Col>)> = if in_window(j) {
            let mut g: Vec<(f64, Vec<Col>)> = Vec::new();
            for &(o, c) in x_of(j) {
                let nu = inst.ops[j].options[o].noc_per_hbm;
                match g.iter_mut().find(|(v, _)| v.to_bits() == nu.to_bits()) {
                    Some((_, members)) => members.push(c),
                    None => g.push((nu, vec![c])),
                }
            }
            g
        } else {
            vec![(option(j).noc_per_hbm, Vec::new())]
        };
        let current_nu = option(j).noc_per_hbm.to_bits();
        let mut all = Vec::new();
        let mut by_group: Vec<Vec<(Col, f64)>> = vec![Vec::new(); groups.len()];
        for (k, stage) in per_stage
            .iter_mut()
            .enumerate()
            .take(spans.hi[j] + 1)
            .skip(first[j])
        {
            let input: f64 = input_work[j]
                .iter()
                .filter(|&&(u, _)| u == k)
                .map(|&(_, c)| c)
                .sum();
            for (g, (nu, _)) in groups.iter().enumerate() {
                let value = if nu.to_bits() == current_nu {
                    input
                } else {
                    0.0
                };
                let c = b.column(0.0, 0.0, value);
                w.push((j, k, c));
                work_of[j].push((k, c));
                stage.push((c, *nu));
                per_stage_warm[k].push(value);
                all.push((c, 1.0));
                by_group[g].push((c, 1.0));
            }
        }
        b.row(h..=h, all);
        if groups.len() > 1 {
            for ((_, members), mut terms) in groups.iter().zip(by_group) {
                terms.extend(members.iter().map(|&c| (c, -h)));
                b.row(..=0.0, terms);
            }
        }
    }
    for k in 0..=n {
        let exec_op = Stage(k).executing().map(OpId::index);
        let windowed = exec_op.filter(|&i| in_window(i));
        let here = &per_stage[k];
        let noc_terms = here.iter().map(|&(c, nu)| (c, -nu));
        match windowed {
            Some(i) => {
                let comm = x_of(i)
                    .iter()
                    .map(|&(o, c)| (c, -inst.ops[i].options[o].comm_cycles.get()));
                let terms = std::iter::once((d[k], 1.0)).chain(noc_terms).chain(comm);
                b.row(0.0.., terms.collect());
                let exec = x_of(i)
                    .iter()
                    .map(|&(o, c)| (c, -inst.ops[i].options[o].exec_cycles.get()));
                b.row(0.0.., std::iter::once((d[k], 1.0)).chain(exec).collect());
            }
            None if here.iter().any(|&(_, nu)| nu > 0.0) => {
                let comm = exec_op.map_or(0.0, |i| option(i).comm_cycles.get());
                b.row(
                    comm..,
                    std::iter::once((d[k], 1.0)).chain(noc_terms).collect(),
                );
            }
            None => {}
        }
        if !here.is_empty() {
            let terms = std::iter::once((d[k], 1.0)).chain(here.iter().map(|&(c, _)| (c, -1.0)));
            b.row(0.0.., terms.collect());
        }
        if let Some(i) = exec_op.filter(|_| phased && !here.is_empty()) {
            let per_option = match windowed {
                Some(_) => x_of(i).clone(),
                None => Vec::new(),
            };
            phased_rows(
                inst,
                s,
                &mut b,
                d[k],
                i,
                &per_option,
                here,
                &per_stage_warm[k],
            );
        }
    }
    let early_memory = earlier_starts(inst, s, &spans, &first, &x, &window, &work_of, &mut b);
    memory_rows(inst, s, &spans, &window, &x, &early_memory, &mut b);
    let columns = b.warm.len();
    Ok(WindowModel {
        problem: b.problem,
        warm: b.warm,
        x,
        w,
        durations: n + 1,
        columns,
        binaries: b.binaries,
        rows: b.rows,
    })
}

/// The phased NoC row of stage `i + 1` (`elk_sim::phased`): y ≤ w for the work beside the
/// compute phase, Σ y ≤ comp, Σ ν·y ≤ comp, d − Σ ν·(w − y) ≥ exec, with exec and comp of the
/// operator's option columns `per_option` when it is in the window (else of its option in
/// `s`); `warm` holds the work columns' starting values.
#[allow(clippy::too_many_arguments)]
fn phased_rows(
    inst: &Instance,
    s: &Schedule,
    b: &mut Builder,
    d: Col,
    i: usize,
    per_option: &[(usize, Col)],
    here: &[(Col, f64)],
    warm: &[f64],
) {
    let opt = |o: usize| &inst.ops[i].options[o];
    let comp_of = |o: usize| (opt(o).exec_cycles - opt(o).comm_cycles).get().max(0.0);
    let current = s.options[i];
    let loads: Vec<(f64, f64)> = warm
        .iter()
        .zip(here)
        .map(|(&v, &(_, nu))| (v, nu))
        .collect();
    let y: Vec<Col> = elk_sim::phased::beside_compute(comp_of(current), &loads)
        .into_iter()
        .map(|v| b.column(0.0, 0.0, v))
        .collect();
    for (&(w, _), &yc) in here.iter().zip(&y) {
        b.row(..=0.0, vec![(yc, 1.0), (w, -1.0)]);
    }
    // (constant, terms) of exec and comp: the option columns' inside the window.
    let (exec0, comp0) = if per_option.is_empty() {
        (opt(current).exec_cycles.get(), comp_of(current))
    } else {
        (0.0, 0.0)
    };
    let minus = |f: &dyn Fn(usize) -> f64| -> Vec<(Col, f64)> {
        per_option.iter().map(|&(o, c)| (c, -f(o))).collect()
    };
    let mut beside: Vec<(Col, f64)> = y.iter().map(|&c| (c, 1.0)).collect();
    beside.extend(minus(&comp_of));
    b.row(..=comp0, beside);
    let mut beside_noc: Vec<(Col, f64)> =
        y.iter().zip(here).map(|(&c, &(_, nu))| (c, nu)).collect();
    beside_noc.extend(minus(&comp_of));
    b.row(..=comp0, beside_noc);
    let mut row = vec![(d, 1.0)];
    row.extend(here.iter().map(|&(c, nu)| (c, -nu)));
    row.extend(y.iter().zip(here).map(|(&c, &(_, nu))| (c, nu)));
    row.extend(minus(&|o| opt(o).exec_cycles.get()));
    b.row(exec0.., row);
}

/// The rows that let a window load start before its input start (module docs): for each
/// such stage k, a binary `s[j][k]` (started by k, monotone in k), its work so far at most
/// H·s, a column `r ≥ cold(x) − c_max·(1 − s)` that the stage's memory row counts, and for
/// every load a before j in the load order, no work of a in stage k + 1 once j has started
/// by k. Returns the memory columns per stage.
#[allow(clippy::too_many_arguments)]
fn earlier_starts(
    inst: &Instance,
    s: &Schedule,
    spans: &LoadSpans,
    first: &[usize],
    x: &[(usize, Vec<(usize, Col)>)],
    window: &Range<usize>,
    work_of: &[Vec<(usize, Col)>],
    b: &mut Builder,
) -> Vec<Vec<Col>> {
    let n = inst.ops.len();
    let mut memory: Vec<Vec<Col>> = vec![Vec::new(); n + 1];
    let mut position = vec![usize::MAX; n];
    for (p, j) in s.load_order.iter().enumerate() {
        position[j.index()] = p;
    }
    for (j, xs) in x {
        let j = *j;
        if !inst.is_load(OpId(j)) || first[j] >= spans.lo[j] {
            continue;
        }
        let h = inst.ops[j].hbm_cycles.get();
        let colds: Vec<(Col, f64)> = xs
            .iter()
            .map(|&(o, c)| (c, inst.ops[j].options[o].cold.get() as f64))
            .collect();
        let cmax = colds.iter().map(|&(_, v)| v).fold(0.0, f64::max);
        let started: Vec<Col> = (first[j]..spans.lo[j]).map(|_| b.binary(0.0)).collect();
        for pair in started.windows(2) {
            b.row(..=0.0, vec![(pair[0], 1.0), (pair[1], -1.0)]);
        }
        for (k, &sk) in (first[j]..spans.lo[j]).zip(&started) {
            let mut done: Vec<(Col, f64)> = work_of[j]
                .iter()
                .filter(|&&(u, _)| u <= k)
                .map(|&(_, c)| (c, 1.0))
                .collect();
            done.push((sk, -h));
            b.row(..=0.0, done);
            let r = b.column(0.0, 0.0, 0.0);
            let mut terms = vec![(r, 1.0), (sk, -cmax)];
            terms.extend(colds.iter().map(|&(c, v)| (c, -v)));
            b.row(-cmax.., terms);
            memory[k].push(r);
        }
        // Loads before j in the order stop by j's start.
        for a in inst.load_indices() {
            if position[a] >= position[j] || spans.hi[a] <= first[j] || window.is_empty() {
                continue;
            }
            let ha = inst.ops[a].hbm_cycles.get();
            for (k, &sk) in (first[j]..spans.lo[j]).zip(&started) {
                let terms: Vec<(Col, f64)> = work_of[a]
                    .iter()
                    .filter(|&&(u, _)| u == k + 1)
                    .map(|&(_, c)| (c, 1.0))
                    .chain(std::iter::once((sk, ha)))
                    .collect();
                if terms.len() > 1 {
                    b.row(..=ha, terms);
                }
            }
        }
    }
    memory
}

/// The memory rows of module docs. A load is resident from its input start to its own stage
/// (its actual start can only be later, so this over-counts, never under-counts).
fn memory_rows(
    inst: &Instance,
    s: &Schedule,
    spans: &LoadSpans,
    window: &Range<usize>,
    x: &[(usize, Vec<(usize, Col)>)],
    early: &[Vec<Col>],
    b: &mut Builder,
) {
    let n = inst.ops.len();
    let in_window = |i: usize| window.contains(&i);
    let option = |i: usize| &inst.ops[i].options[s.options[i]];
    // Constant cold bytes per stage of loads outside the window (a difference array).
    let mut delta = vec![0i128; n + 2];
    let mut needed = vec![false; n + 1];
    for j in inst.load_indices() {
        let (from, to) = (spans.start[j], j);
        if in_window(j) {
            needed[from..=to].iter_mut().for_each(|v| *v = true);
        } else {
            let c = i128::from(option(j).cold.get());
            delta[from] += c;
            delta[to + 1] -= c;
        }
    }
    for i in window.clone() {
        needed[i + 1] = true;
    }
    for (k, cols) in early.iter().enumerate() {
        needed[k] |= !cols.is_empty();
    }
    let sram = inst.sram_bytes.get() as f64;
    let mut constant = 0i128;
    for (k, &need) in needed.iter().enumerate() {
        constant += delta[k];
        if !need {
            continue;
        }
        let mut fixed = constant as f64;
        let mut terms: Vec<(Col, f64)> = Vec::new();
        match Stage(k).executing().map(OpId::index) {
            Some(i) if in_window(i) => {
                let xs = &x[i - window.start].1;
                terms.extend(
                    xs.iter()
                        .map(|&(o, c)| (c, inst.ops[i].options[o].hot.get() as f64)),
                );
            }
            Some(i) => fixed += option(i).hot.get() as f64,
            None => {}
        }
        for (j, xs) in x {
            let j = *j;
            if inst.is_load(OpId(j)) && spans.start[j] <= k && k <= j {
                terms.extend(
                    xs.iter()
                        .map(|&(o, c)| (c, inst.ops[j].options[o].cold.get() as f64)),
                );
            }
        }
        terms.extend(early[k].iter().map(|&c| (c, 1.0)));
        if !terms.is_empty() {
            b.row(..=sram - fixed, terms);
        }
    }
}

impl WindowModel {
    /// One HiGHS run, from the incumbent when `warm`.
    fn run(&self, warm: bool, time_limit: f64, max_nodes: i32) -> Result<highs::SolvedModel> {
        let backend = |detail: String| SolverError::Backend {
            backend: "window search",
            detail,
        };
        let mut model = self
            .problem
            .clone()
            .try_optimise(Sense::Minimise)
            .map_err(|e| backend(format!("building the model: {e:?}")))?;
        model.make_quiet();
        let options: [(&str, f64); 3] = [
            ("time_limit", time_limit.max(0.01)),
            ("mip_rel_gap", 1e-6),
            ("mip_abs_gap", 1e-6),
        ];
        for (key, v) in options {
            model
                .try_set_option(key, v)
                .map_err(|e| backend(format!("option {key}: {e:?}")))?;
        }
        model
            .try_set_option("threads", 1)
            .and_then(|_| model.try_set_option("random_seed", 0))
            .and_then(|_| model.try_set_option("mip_max_nodes", max_nodes))
            .map_err(|e| backend(format!("options: {e:?}")))?;
        if warm {
            model
                .try_set_solution(Some(&self.warm), None, None, None)
                .map_err(|e| backend(format!("starting solution: {e:?}")))?;
        }
        model
            .try_solve()
            .map_err(|e| backend(format!("solve: {e:?}")))
    }

    /// Σ d of a solution: the makespan its columns claim.
    fn claimed(&self, values: &[f64]) -> f64 {
        values[..self.durations].iter().sum()
    }

    /// Solves within `time_limit` seconds and at most `max_nodes` branch-and-bound nodes
    /// (the node limit makes the result independent of the machine's speed), on one thread.
    ///
    /// HiGHS (1.16, through the `highs` crate) can report an optimum below the solution it
    /// returns when it started from ours (seen on small chains: objective 1296, columns summing
    /// to the starting 1325.75). Such a run is repeated without the starting solution, and
    /// the objective that is reported is always Σ d of the columns returned.
    pub(crate) fn solve(
        self,
        inst: &Instance,
        s: &Schedule,
        method: &str,
        time_limit: f64,
        max_nodes: i32,
    ) -> Result<WindowResult> {
        let started = std::time::Instant::now();
        let mut solved = self.run(true, time_limit, max_nodes)?;
        let consistent = |m: &highs::SolvedModel| reports_its_columns(m, 0..self.durations);
        if !consistent(&solved) {
            let left = time_limit - started.elapsed().as_secs_f64();
            let again = self.run(false, left, max_nodes)?;
            if again.primal_solution_status() == highs::HighsSolutionStatus::Feasible {
                solved = again;
            }
        }
        let optimal = solved.status() == HighsModelStatus::Optimal && consistent(&solved);
        if solved.primal_solution_status() != highs::HighsSolutionStatus::Feasible {
            return Ok(WindowResult {
                schedule: None,
                optimal,
            });
        }
        let values = solved.get_solution().columns().to_vec();
        let mut options = s.options.clone();
        for (i, xs) in &self.x {
            if let Some(&(o, _)) = xs
                .iter()
                .max_by(|a, b| values[a.1.index()].total_cmp(&values[b.1.index()]))
            {
                options[*i] = o;
            }
        }
        // HiGHS's integrality tolerance lets a start binary sit at 1e-6 while its load does
        // up to H·1e-6 of work "before it started" in the model; the simulator would see that
        // piece start the load (and break the order rule). Such pieces are dropped here and
        // their work goes to the load's largest piece (clean_work).
        let pieces = self.w.iter().map(|&(j, k, c)| {
            let v = values[c.index()];
            let dust = v < MIP_DUST * inst.ops[j].hbm_cycles.get();
            (j, k, if dust { 0.0 } else { v })
        });
        let work = clean_work(inst, pieces);
        let schedule = Schedule::new(
            inst,
            method,
            options,
            s.load_order.clone(),
            work,
            Cycles(self.claimed(&values)),
        );
        Ok(WindowResult {
            schedule: Some(schedule),
            optimal,
        })
    }
}
