//! The window model's columns and rows (module docs of `window.rs`), one method per family,
//! added in one fixed order: the stage durations (starting at the incumbent's); the window
//! operators' option binaries; per load its work columns and rows; per stage its duration
//! rows (with the phased NoC row's); the rows that let a window load start earlier; the
//! memory rows. HiGHS's search depends on the column and row order and on each row's terms,
//! so every column and row is made exactly as it always was (as `milp/encode/rows.rs`).

use super::WindowModel;
use crate::error::Result;
use crate::prune::Pruned;
use crate::retime::LoadSpans;
use elk_stage::instance::{Instance, NocRow, OpOption};
use elk_stage::schedule::Schedule;
use elk_stage::units::{OpId, Stage};
use highs::{Col, RowProblem};
use std::ops::Range;

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
    let mut m = Model::new(inst, s, pruned, window, earlier)?;
    m.durations();
    m.options();
    for j in inst.load_indices() {
        m.load_work(j);
    }
    for k in 0..=inst.ops.len() {
        m.stage(k);
    }
    let early = m.earlier_starts();
    m.memory_rows(&early);
    Ok(m.finish())
}

/// The window model under construction: what it is built around, and the columns made so
/// far, which the later row families read.
struct Model<'a> {
    inst: &'a Instance,
    s: &'a Schedule,
    pruned: &'a Pruned,
    window: Range<usize>,
    spans: LoadSpans,
    /// First stage each load may work in: its input start, or up to `earlier` stages before
    /// it for the window's loads (within the preload window).
    first: Vec<usize>,
    /// The incumbent's work per load: (stage, cycles).
    input_work: Vec<Vec<(usize, f64)>>,
    /// The instance records the phased row (elk_sim::phased).
    phased: bool,
    b: Builder,
    /// Stage durations, stages 0..=n.
    d: Vec<Col>,
    /// Per window operator: (operator, [(option, column)]).
    x: Vec<(usize, Vec<(usize, Col)>)>,
    /// Load work per stage: (column, ν); one column per stage, or per (stage, ν) for window
    /// loads.
    per_stage: Vec<Vec<(Col, f64)>>,
    /// The starting value of each `per_stage` column.
    per_stage_warm: Vec<Vec<f64>>,
    /// Per load-work column: (operator, stage).
    w: Vec<(usize, usize, Col)>,
    /// Per load: (stage, column) of its work, every ν group.
    work_of: Vec<Vec<(usize, Col)>>,
}

impl<'a> Model<'a> {
    fn new(
        inst: &'a Instance,
        s: &'a Schedule,
        pruned: &'a Pruned,
        window: Range<usize>,
        earlier: usize,
    ) -> Result<Model<'a>> {
        let n = inst.ops.len();
        let spans = LoadSpans::of(inst, s)?;
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
        let mut input_work = vec![Vec::new(); n];
        for w in &s.load_work {
            input_work[w.op.index()].push((w.stage.index(), w.cycles.get()));
        }
        Ok(Model {
            inst,
            s,
            pruned,
            window,
            spans,
            first,
            input_work,
            phased: inst.noc_row == NocRow::Phased,
            b: Builder {
                problem: RowProblem::default(),
                warm: Vec::new(),
                binaries: 0,
                rows: 0,
            },
            d: Vec::new(),
            x: Vec::new(),
            per_stage: vec![Vec::new(); n + 1],
            per_stage_warm: vec![Vec::new(); n + 1],
            w: Vec::new(),
            work_of: vec![Vec::new(); n],
        })
    }

    fn in_window(&self, i: usize) -> bool {
        self.window.contains(&i)
    }

    /// Operator `i`'s option in the incumbent.
    fn option(&self, i: usize) -> &'a OpOption {
        &self.inst.ops[i].options[self.s.options[i]]
    }

    /// Window operator `i`'s option columns.
    fn x_of(&self, i: usize) -> &[(usize, Col)] {
        &self.x[i - self.window.start].1
    }

    /// The stage durations, each starting at the incumbent's (with the phased row of
    /// instances that record it), at least the exec and comm of a stage outside the window.
    fn durations(&mut self) {
        let n = self.inst.ops.len();
        // The incumbent's stage terms, and per stage the input's (work, ν) for the phased row.
        let mut hbm = vec![0.0; n + 1];
        let mut noc = vec![0.0; n + 1];
        let mut stage_loads: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n + 1];
        for w in &self.s.load_work {
            let (j, k, c) = (w.op.index(), w.stage.index(), w.cycles.get());
            hbm[k] += c;
            noc[k] += c * self.option(j).noc_per_hbm;
            stage_loads[k].push((c, self.option(j).noc_per_hbm));
        }
        for k in 0..=n {
            let (exec, comm) = Stage(k).executing().map_or((0.0, 0.0), |i| {
                let o = self.option(i.index());
                (o.exec_cycles.get(), o.comm_cycles.get())
            });
            let floor = match Stage(k).executing() {
                Some(i) if !self.in_window(i.index()) => exec.max(comm),
                _ => 0.0,
            };
            let row = if self.phased {
                elk_sim::phased::phased_row(exec, comm, &stage_loads[k])
            } else {
                0.0
            };
            let d = self
                .b
                .column(1.0, floor, exec.max(comm + noc[k]).max(hbm[k]).max(row));
            self.d.push(d);
        }
    }

    /// The window operators' option binaries (the incumbent's at 1), one option each.
    fn options(&mut self) {
        for i in self.window.clone() {
            let current = self.s.options[i];
            let cols: Vec<(usize, Col)> = candidates(self.pruned, i, current)
                .into_iter()
                .map(|o| (o, self.b.binary(f64::from(u8::from(o == current)))))
                .collect();
            self.b
                .row(1.0..=1.0, cols.iter().map(|&(_, c)| (c, 1.0)).collect());
            self.x.push((i, cols));
        }
    }

    /// Load `j`'s work columns in the stages it may work in (for a window load, one per ν of
    /// its options, each group at most H·Σ of its x), all of them adding up to its H.
    fn load_work(&mut self, j: usize) {
        let inst = self.inst;
        let h = inst.ops[j].hbm_cycles.get();
        let groups: Vec<(f64, Vec<Col>)> = if self.in_window(j) {
            let mut g: Vec<(f64, Vec<Col>)> = Vec::new();
            for &(o, c) in self.x_of(j) {
                let nu = inst.ops[j].options[o].noc_per_hbm;
                match g.iter_mut().find(|(v, _)| v.to_bits() == nu.to_bits()) {
                    Some((_, members)) => members.push(c),
                    None => g.push((nu, vec![c])),
                }
            }
            g
        } else {
            vec![(self.option(j).noc_per_hbm, Vec::new())]
        };
        let current_nu = self.option(j).noc_per_hbm.to_bits();
        let mut all = Vec::new();
        let mut by_group: Vec<Vec<(Col, f64)>> = vec![Vec::new(); groups.len()];
        for (k, stage) in self
            .per_stage
            .iter_mut()
            .enumerate()
            .take(self.spans.hi[j] + 1)
            .skip(self.first[j])
        {
            let input: f64 = self.input_work[j]
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
                let c = self.b.column(0.0, 0.0, value);
                self.w.push((j, k, c));
                self.work_of[j].push((k, c));
                stage.push((c, *nu));
                self.per_stage_warm[k].push(value);
                all.push((c, 1.0));
                by_group[g].push((c, 1.0));
            }
        }
        self.b.row(h..=h, all);
        if groups.len() > 1 {
            for ((_, members), mut terms) in groups.iter().zip(by_group) {
                terms.extend(members.iter().map(|&c| (c, -h)));
                self.b.row(..=0.0, terms);
            }
        }
    }

    /// Stage `k`'s duration rows: d ≥ comm + Σ ν w and d ≥ exec (in the option columns of a
    /// window operator), d ≥ Σ w, and the phased row's.
    fn stage(&mut self, k: usize) {
        let inst = self.inst;
        let d = self.d[k];
        let exec_op = Stage(k).executing().map(OpId::index);
        let windowed = exec_op.filter(|&i| self.in_window(i));
        let here = &self.per_stage[k];
        let noc_terms = here.iter().map(|&(c, nu)| (c, -nu));
        match windowed {
            Some(i) => {
                let xs = &self.x[i - self.window.start].1;
                let comm = xs
                    .iter()
                    .map(|&(o, c)| (c, -inst.ops[i].options[o].comm_cycles.get()));
                let terms = std::iter::once((d, 1.0)).chain(noc_terms).chain(comm);
                self.b.row(0.0.., terms.collect());
                let exec = xs
                    .iter()
                    .map(|&(o, c)| (c, -inst.ops[i].options[o].exec_cycles.get()));
                self.b
                    .row(0.0.., std::iter::once((d, 1.0)).chain(exec).collect());
            }
            None if here.iter().any(|&(_, nu)| nu > 0.0) => {
                let comm = exec_op.map_or(0.0, |i| self.option(i).comm_cycles.get());
                self.b
                    .row(comm.., std::iter::once((d, 1.0)).chain(noc_terms).collect());
            }
            None => {}
        }
        if !here.is_empty() {
            let terms = std::iter::once((d, 1.0)).chain(here.iter().map(|&(c, _)| (c, -1.0)));
            self.b.row(0.0.., terms.collect());
        }
        if let Some(i) = exec_op.filter(|_| self.phased && !here.is_empty()) {
            let per_option = match windowed {
                Some(_) => self.x_of(i).to_vec(),
                None => Vec::new(),
            };
            self.phased_rows(k, i, &per_option);
        }
    }

    /// The phased NoC row of stage `k` = `i + 1` (`elk_sim::phased`): y ≤ w for the work
    /// beside the compute phase, Σ y ≤ comp, Σ ν·y ≤ comp, d − Σ ν·(w − y) ≥ exec, with exec
    /// and comp of the operator's option columns `per_option` when it is in the window (else
    /// of its option in the incumbent); the work columns start at `per_stage_warm[k]`.
    fn phased_rows(&mut self, k: usize, i: usize, per_option: &[(usize, Col)]) {
        let inst = self.inst;
        let (d, here, warm) = (self.d[k], &self.per_stage[k], &self.per_stage_warm[k]);
        let b = &mut self.b;
        let opt = |o: usize| &inst.ops[i].options[o];
        let comp_of = |o: usize| (opt(o).exec_cycles - opt(o).comm_cycles).get().max(0.0);
        let current = self.s.options[i];
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
    fn earlier_starts(&mut self) -> Vec<Vec<Col>> {
        let (inst, s, spans, first) = (self.inst, self.s, &self.spans, &self.first);
        let (x, window, work_of, b) = (&self.x, &self.window, &self.work_of, &mut self.b);
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
    fn memory_rows(&mut self, early: &[Vec<Col>]) {
        let (inst, s, spans, window) = (self.inst, self.s, &self.spans, &self.window);
        let (x, b) = (&self.x, &mut self.b);
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

    /// The model, ready to solve.
    fn finish(self) -> WindowModel {
        let columns = self.b.warm.len();
        WindowModel {
            problem: self.b.problem,
            warm: self.b.warm,
            x: self.x,
            w: self.w,
            durations: self.inst.ops.len() + 1,
            columns,
            binaries: self.b.binaries,
            rows: self.b.rows,
        }
    }
}
