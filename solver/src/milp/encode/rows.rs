//! The model's rows, one method per family, added in one fixed order: one option per
//! operator; per load its work rows and memory linearisation; the memory row of every stage;
//! the duration rows of every stage (with the phased NoC row's); the absorbed work's cap; the
//! load order (`order.rs`). As with the columns, HiGHS's search depends on the row order and
//! on each row's terms, so every row is built exactly as it always was.

use super::columns::Layout;
use super::{Boundary, Lin, Linearisation};
use crate::prune::Pruned;
use elk_stage::instance::{Instance, OpOption};
use good_lp::{Constraint, Expression};

/// The rows under construction, over the columns of `at`.
pub(super) struct Rows<'a> {
    pub inst: &'a Instance,
    pub pruned: &'a Pruned,
    pub linearisation: Linearisation,
    pub boundary: &'a Boundary,
    pub at: &'a Layout,
    pub problem: good_lp::solvers::highs::HighsProblem,
    /// Rows added so far.
    pub count: usize,
    /// When `Some`, every NoC row's slack is kept here as it is added (the lift check of
    /// `super::lift` reads them at a solution).
    pub slacks: Option<Vec<StageSlack>>,
    /// When to stop adding rows (`None`: never): building a large relaxation (the coupled
    /// LP of an MoE model, with its pairwise order rows) can take minutes before HiGHS, whose
    /// time limit starts only at the solve, sees it.
    pub deadline: Option<std::time::Instant>,
    /// The deadline passed: the rows are incomplete and the model must not be solved.
    pub overran: bool,
}

/// Which NoC row of a stage a [`StageSlack`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum NocKind {
    /// SPEC §4's: the stage lasts at least its NoC work.
    Spec,
    /// The phased row's work beside the compute phase fits in it.
    Beside,
    /// The phased row's: the stage lasts at least exec plus the NoC work after compute.
    Left,
}

/// A NoC row's slack (its greater side less its lesser side) as an expression.
pub(super) struct StageSlack {
    pub stage: usize,
    pub kind: NocKind,
    pub slack: Expression,
}

impl Rows<'_> {
    /// Adds every row, in the model's row order.
    pub fn add_all(&mut self) {
        let at = self.at;
        self.one_option();
        for &j in &at.loads {
            if self.past_deadline() {
                return;
            }
            self.load_work(j);
            self.linearise_memory(j);
        }
        self.memory();
        for k in 0..=self.inst.ops.len() {
            self.duration(k);
        }
        self.absorb_cap();
        if self.past_deadline() {
            return;
        }
        self.load_order();
        self.displacement();
    }

    /// Whether the deadline has passed (then [`Rows::overran`] is set and stays set).
    pub(super) fn past_deadline(&mut self) -> bool {
        if !self.overran
            && self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            self.overran = true;
        }
        self.overran
    }

    /// Keeps a NoC row's slack when slacks are kept.
    fn keep(&mut self, stage: usize, kind: NocKind, slack: impl FnOnce() -> Expression) {
        if let Some(slacks) = self.slacks.as_mut() {
            slacks.push(StageSlack {
                stage,
                kind,
                slack: slack(),
            });
        }
    }

    pub(super) fn add(&mut self, c: Constraint) {
        use good_lp::SolverModel;
        self.problem.add_constraint(c);
        self.count += 1;
    }

    fn opt(&self, i: usize, pos: usize) -> &OpOption {
        &self.inst.ops[i].options[self.pruned.kept[i][pos]]
    }

    /// `Σ_o f(option o)·x[i][o]`.
    fn per_option(&self, i: usize, f: impl Fn(&OpOption) -> f64) -> Expression {
        self.at.x[i]
            .iter()
            .enumerate()
            .map(|(pos, c)| f(self.opt(i, pos)) * c.var)
            .sum()
    }

    /// Load j has started by stage k: a column inside its window, a constant outside.
    pub(super) fn started(&self, j: usize, k: usize) -> Lin {
        if k >= j {
            Lin::Const(1.0)
        } else if k < self.at.lo[j] {
            Lin::Const(0.0)
        } else {
            Lin::Var(self.at.s[j][k - self.at.lo[j]])
        }
    }

    /// Load j's HBM work in stage k, over its ν groups.
    pub(super) fn stage_work(&self, j: usize, k: usize) -> Expression {
        self.at.w[j][k - self.at.lo[j]].iter().map(|c| c.var).sum()
    }

    /// The cold bytes of load j's chosen option.
    fn cold(&self, j: usize) -> Expression {
        self.per_option(j, |o| o.cold.get() as f64)
    }

    /// One option per operator.
    fn one_option(&mut self) {
        let at = self.at;
        for xi in &at.x {
            self.add(xi.iter().map(|c| c.var).sum::<Expression>().eq(1.0));
        }
    }

    /// Load j's work: starts monotone; all of H, only once started, only in the groups of
    /// the chosen option.
    fn load_work(&mut self, j: usize) {
        let at = self.at;
        let (lo, s, w) = (at.lo[j], &at.s[j], &at.w[j]);
        let h = self.inst.ops[j].hbm_cycles.get();
        for k in lo..j.saturating_sub(1) {
            self.add(Expression::from(s[k - lo].var).leq(s[k + 1 - lo].var));
        }
        let all: Expression = (lo..=j).map(|k| self.stage_work(j, k)).sum();
        self.add(all.eq(h));
        // Work done by stage k needs the load started by k. Cumulative, not per stage:
        // the LP relaxation then cannot spread H over many fractionally started stages.
        for k in lo..j {
            let done: Expression = (lo..=k).map(|u| self.stage_work(j, u)).sum();
            self.add(done.leq(h * self.started(j, k).expr()));
        }
        if at.groups[j].len() > 1 {
            for (g, group) in at.groups[j].iter().enumerate() {
                let total: Expression = (lo..=j).map(|k| w[k - lo][g].var).sum();
                let chosen: Expression = group.members.iter().map(|&pos| at.x[j][pos].var).sum();
                self.add(total.leq(h * chosen));
            }
        }
    }

    /// The rows that make load j's started cold bytes linear, per stage of its window.
    fn linearise_memory(&mut self, j: usize) {
        let cold = |o: &usize| self.inst.ops[j].options[*o].cold.get();
        let cmax = self.pruned.kept[j].iter().map(cold).max().unwrap_or(0) as f64;
        let cmin = self.pruned.kept[j].iter().map(cold).min().unwrap_or(0) as f64;
        let (at, lo) = (self.at, self.at.lo[j]);
        for k in lo..j {
            let sk = at.s[j][k - lo].var;
            let m = &at.mem[j][k - lo];
            match self.linearisation {
                Linearisation::BigM => {
                    self.add(Expression::from(m[0].var).geq(self.cold(j) - cmax + cmax * sk));
                    self.add(Expression::from(m[0].var).geq(cmin * sk));
                }
                Linearisation::PerOption => self.per_option_starts(j, k),
            }
        }
    }

    /// `sx[o] = x[o]·s` exactly when x and s are integral: the started indicator split over
    /// the options, each capped by its option and monotone in k. Tighter in the LP than
    /// big-M: a fraction of a start costs that fraction of the chosen option's cold bytes.
    fn per_option_starts(&mut self, j: usize, k: usize) {
        let (at, lo, h) = (self.at, self.at.lo[j], self.inst.ops[j].hbm_cycles.get());
        let sk = at.s[j][k - lo].var;
        let m = &at.mem[j][k - lo];
        self.add(m.iter().map(|c| c.var).sum::<Expression>().eq(sk));
        for (pos, sx) in m.iter().enumerate() {
            let next = if k + 1 < j {
                Expression::from(at.mem[j][k + 1 - lo][pos].var)
            } else {
                Expression::from(at.x[j][pos].var)
            };
            self.add(Expression::from(sx.var).leq(next));
        }
        // Work in a ν group only as far as its options have started.
        if at.groups[j].len() > 1 {
            for (g, group) in at.groups[j].iter().enumerate() {
                let on: Expression = group.members.iter().map(|&pos| m[pos].var).sum();
                let done: Expression = (lo..=k).map(|u| at.w[j][u - lo][g].var).sum();
                self.add(done.leq(h * on));
            }
        }
    }

    /// Load j's cold bytes resident in stage k (k in its window).
    fn resident(&self, j: usize, k: usize) -> Expression {
        if k == j {
            return self.cold(j);
        }
        let m = &self.at.mem[j][k - self.at.lo[j]];
        match self.linearisation {
            Linearisation::BigM => Expression::from(m[0].var),
            Linearisation::PerOption => m
                .iter()
                .enumerate()
                .map(|(pos, y)| self.opt(j, pos).cold.get() as f64 * y.var)
                .sum(),
        }
    }

    /// Every stage's memory: the executing operator's hot bytes and the resident loads'
    /// cold bytes fit SRAM.
    fn memory(&mut self) {
        let at = self.at;
        for k in 0..=self.inst.ops.len() {
            let mut used = Expression::from(0.0);
            if k >= 1 {
                used += self.per_option(k - 1, |o| o.hot.get() as f64);
            }
            for &j in at.loads.iter().filter(|&&j| j >= k && at.lo[j] <= k) {
                used += self.resident(j, k);
            }
            self.add(used.leq(self.inst.sram_bytes.get() as f64));
        }
    }

    /// Stage k's duration: above its HBM work, its NoC work (from the first real stage on)
    /// and its operator's exec; with the phased row, above exec plus the NoC work left after
    /// the compute phase.
    fn duration(&mut self, k: usize) {
        let (at, boundary) = (self.at, self.boundary);
        let working: Vec<usize> = at
            .loads
            .iter()
            .copied()
            .filter(|&j| j >= k && at.lo[j] <= k)
            .collect();
        let hbm: Expression = working.iter().map(|&j| self.stage_work(j, k)).sum();
        let mut noc: Expression = working
            .iter()
            .flat_map(|&j| {
                at.groups[j]
                    .iter()
                    .zip(&at.w[j][k - at.lo[j]])
                    .map(|(g, c)| g.nu * c.var)
            })
            .sum();
        if k >= 1 {
            let exec = self.per_option(k - 1, |o| o.exec_cycles.get());
            self.add(Expression::from(at.d[k].var).geq(exec));
            noc += self.per_option(k - 1, |o| o.comm_cycles.get());
        }
        let first_real = at.first_real;
        let (mut hbm, mut noc) = (hbm, noc);
        if let (Some(absorb), true) = (&boundary.absorb, k >= first_real) {
            for (class, a) in absorb.classes.iter().zip(&at.absorbed) {
                hbm += a[k - first_real].var;
                noc += class.nu * a[k - first_real].var;
            }
        }
        if k >= first_real {
            self.keep(k, NocKind::Spec, || at.d[k].var - noc.clone());
            self.add(Expression::from(at.d[k].var).geq(noc));
        }
        self.add(Expression::from(at.d[k].var).geq(hbm));
        if at.phased && k >= 1 {
            self.phased_duration(k, &working);
        }
    }

    /// The phased NoC row of stage k ≥ 1 (docs/detailed.md): the work done beside the
    /// compute phase (y ≤ w) fits in it, and the rest of the NoC work follows it.
    fn phased_duration(&mut self, k: usize, working: &[usize]) {
        let (at, boundary) = (self.at, self.boundary);
        let i = k - 1;
        let comp = self.per_option(i, |o| (o.exec_cycles - o.comm_cycles).get().max(0.0));
        let (mut beside, mut beside_noc, mut left_noc) = (
            Expression::from(0.0),
            Expression::from(0.0),
            Expression::from(0.0),
        );
        for &j in working {
            let k_at = k - at.lo[j];
            for ((g, wc), yc) in at.groups[j].iter().zip(&at.w[j][k_at]).zip(&at.y[j][k_at]) {
                self.add(Expression::from(yc.var).leq(wc.var));
                beside += yc.var;
                beside_noc += g.nu * yc.var;
                left_noc += g.nu * (wc.var - yc.var);
            }
        }
        if let (Some(absorb), true) = (&boundary.absorb, k >= at.first_real) {
            let at_k = k - at.first_real;
            for ((class, a), ya) in absorb
                .classes
                .iter()
                .zip(&at.absorbed)
                .zip(&at.absorbed_beside)
            {
                let (a, ya) = (a[at_k], ya[at_k]);
                self.add(Expression::from(ya.var).leq(a.var));
                beside += ya.var;
                beside_noc += class.nu * ya.var;
                left_noc += class.nu * (a.var - ya.var);
            }
        }
        self.add(beside.leq(comp.clone()));
        self.keep(k, NocKind::Beside, || comp.clone() - beside_noc.clone());
        self.add(beside_noc.leq(comp));
        let exec = self.per_option(i, |o| o.exec_cycles.get());
        self.keep(k, NocKind::Left, || {
            at.d[k].var - exec.clone() - left_noc.clone()
        });
        self.add(Expression::from(at.d[k].var).geq(exec + left_noc));
    }

    /// The absorbed work in all is at most the later loads' total, and with several classes
    /// each class's at most its own.
    fn absorb_cap(&mut self) {
        if let Some(absorb) = self.boundary.absorb.as_ref() {
            let total = self.at.all_absorbed().map(|c| c.var).sum::<Expression>();
            self.add(total.leq(absorb.cap));
            if absorb.classes.len() > 1 {
                for (class, a) in absorb.classes.iter().zip(&self.at.absorbed) {
                    let sum = a.iter().map(|c| c.var).sum::<Expression>();
                    self.add(sum.leq(class.cap));
                }
            }
        }
    }
}
