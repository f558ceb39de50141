//! The stage model (SPEC §4) as a MILP, built with good_lp. Variables:
//!
//! - `x[i][o]` ∈ {0,1}: operator i takes (kept) option o; one per operator.
//! - `s[j][k]` ∈ {0,1}: load j has started by stage k (monotone in k; 1 from stage j on).
//! - `w[j][k][g]` ≥ 0: HBM cycles of load j in stage k, split by ν group g (options with the
//!   same ν share a group), so the NoC term Σ ν·w is linear; Σ_k w[j][k][g] ≤ H_j·x[j][g].
//! - memory: the cold bytes of a started load, `cold(o_j)·s[j][k]`, linearised by big-M
//!   (`r[j][k]`) or by per-option start indicators (`sx[j][k][o]`).
//! - `p[a][b]` ∈ {0,1}: load a before load b (free and displacement-bounded orders).
//! - `d[k]` ≥ 0: stage duration, above each of the three terms; objective Σ d_k.
//!
//! The columns are numbered in creation order; [`Encoding`] keeps the numbers so a warm
//! start can be written and a solution read back.

use elk_stage::instance::{Instance, LoadOrder, NamedOrder, NocRow};
use elk_stage::units::OpId;
use good_lp::{variable, Expression, ProblemVariables, Variable};
use serde::Serialize;

use crate::prune::Pruned;

/// How the cold-bytes × started products in the memory rows are made linear.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Linearisation {
    /// One continuous `r[j][k]` ≥ cold(x_j) − M_j·(1 − `s[j][k])` per (load, stage).
    #[default]
    BigM,
    /// Per-option start indicators `sx[j][k][o]` = `x[j][o]·s[j][k]` (continuous; exact for
    /// integral x, s): Σ_o sx = s, sx ≤ its successor in k ≤ x; memory Σ_o cold_o·sx.
    PerOption,
}

/// Model size, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ModelSize {
    /// Columns.
    pub variables: usize,
    /// Of which binary (0 in the LP relaxation).
    pub binaries: usize,
    /// Rows.
    pub constraints: usize,
}

/// A column: good_lp's variable and its number.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Col {
    pub var: Variable,
    pub index: usize,
}

/// A linear term that may be a constant (a forced decision) or a column.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Lin {
    Const(f64),
    Var(Col),
}

impl Lin {
    fn expr(self) -> Expression {
        match self {
            Lin::Const(c) => Expression::from(c),
            Lin::Var(c) => Expression::from(c.var),
        }
    }
}

/// Options of one load sharing a ν value.
#[derive(Clone, Debug)]
pub(crate) struct NuGroup {
    pub nu: f64,
    /// Positions in the operator's kept options.
    pub members: Vec<usize>,
}

/// The encoded model and where every decision lives.
pub(crate) struct Encoding {
    pub problem: good_lp::solvers::highs::HighsProblem,
    pub size: ModelSize,
    /// x[i][kept position].
    pub x: Vec<Vec<Col>>,
    /// First stage each load may work in (the window), per operator.
    pub lo: Vec<usize>,
    /// s[j][k - lo[j]] for k in lo[j]..j.
    pub s: Vec<Vec<Col>>,
    /// ν groups per operator.
    pub groups: Vec<Vec<NuGroup>>,
    /// w[j][k - lo[j]][g] for k in lo[j]..=j.
    pub w: Vec<Vec<Vec<Col>>>,
    /// Memory linearisation columns: r[j][k - lo[j]] (big-M: one entry) or y (per option).
    pub mem: Vec<Vec<Vec<Col>>>,
    /// Precedence p[a][b] for a < b (None when forced or not needed).
    pub p: Vec<Vec<Option<Col>>>,
    /// Stage durations.
    pub d: Vec<Col>,
    /// Later work absorbed per stage (empty without [`Boundary::absorb`]).
    pub absorbed: Vec<Col>,
    /// The phased NoC row's in-compute work, shaped as `w` (empty with SPEC §4's row).
    pub y: Vec<Vec<Vec<Col>>>,
    pub linearisation: Linearisation,
}

struct Columns {
    vars: ProblemVariables,
    size: ModelSize,
    relax: bool,
}

impl Columns {
    fn add(&mut self, def: good_lp::VariableDefinition, binary: bool) -> Col {
        let def = if binary && !self.relax {
            self.size.binaries += 1;
            def.binary()
        } else if binary {
            def.min(0.0).max(1.0)
        } else {
            def
        };
        let col = Col {
            var: self.vars.add(def),
            index: self.size.variables,
        };
        self.size.variables += 1;
        col
    }
    fn binary(&mut self) -> Col {
        self.add(variable(), true)
    }
    fn continuous(&mut self, max: f64) -> Col {
        self.add(variable().min(0.0).max(max), false)
    }
}

/// Where load j may work: stages lo..=j.
fn first_stage(inst: &Instance, j: usize) -> usize {
    inst.window_start(OpId(j)).index()
}

fn nu_groups(inst: &Instance, pruned: &Pruned, j: usize) -> Vec<NuGroup> {
    let mut groups: Vec<NuGroup> = Vec::new();
    for (pos, &o) in pruned.kept[j].iter().enumerate() {
        let nu = inst.ops[j].options[o].noc_per_hbm;
        match groups.iter_mut().find(|g| g.nu.to_bits() == nu.to_bits()) {
            Some(g) => g.members.push(pos),
            None => groups.push(NuGroup {
                nu,
                members: vec![pos],
            }),
        }
    }
    groups
}

/// How a segment of a longer chain meets the rest of it (the segment relaxation of
/// `crate::segments`; docs/exact.md proves the bound). The default is a whole instance.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Boundary {
    /// Stage 0 stands for every stage before the segment: its load work costs this price per
    /// HBM cycle instead of being a stage of its own (no duration or NoC row there; its
    /// memory row stays, a relaxation of the real stage's).
    pub prologue_price: Option<f64>,
    /// Later segments' load work absorbed by this segment's stages, as HBM cycles and the
    /// least NoC they can cost (no memory, no order).
    pub absorb: Option<Absorb>,
}

/// Later work a segment may absorb.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Absorb {
    /// Credit per HBM cycle absorbed.
    pub price: f64,
    /// Most HBM cycles absorbed in all (the later loads' total).
    pub cap: f64,
    /// NoC cycles per absorbed HBM cycle: the least ν of any later load's option.
    pub nu: f64,
}

/// Builds the MILP (or its LP relaxation when `relax`).
pub(crate) fn encode(
    inst: &Instance,
    pruned: &Pruned,
    linearisation: Linearisation,
    relax: bool,
) -> Encoding {
    encode_segment(inst, pruned, linearisation, relax, Boundary::default())
}

/// [`encode`] for a segment of a chain with the given boundary.
pub(crate) fn encode_segment(
    inst: &Instance,
    pruned: &Pruned,
    linearisation: Linearisation,
    relax: bool,
    boundary: Boundary,
) -> Encoding {
    let n = inst.ops.len();
    let loads = inst.load_indices();
    let is_load: Vec<bool> = inst.op_ids().map(|j| inst.is_load(j)).collect();
    let mut cols = Columns {
        vars: ProblemVariables::new(),
        size: ModelSize::default(),
        relax,
    };
    let opt = |i: usize, pos: usize| &inst.ops[i].options[pruned.kept[i][pos]];

    let x: Vec<Vec<Col>> = (0..n)
        .map(|i| pruned.kept[i].iter().map(|_| cols.binary()).collect())
        .collect();
    let lo: Vec<usize> = (0..n).map(|j| first_stage(inst, j)).collect();
    let groups: Vec<Vec<NuGroup>> = (0..n)
        .map(|j| {
            if is_load[j] {
                nu_groups(inst, pruned, j)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut s: Vec<Vec<Col>> = vec![Vec::new(); n];
    let mut w: Vec<Vec<Vec<Col>>> = vec![Vec::new(); n];
    // The phased NoC row (docs/detailed.md): y[j][k - lo[j]][g] ≤ w, the HBM work done beside
    // stage k's compute phase, for k ≥ 1. In a segment, absorbed later work is one more load
    // at the least ν of the later loads (docs/exact.md, "Whole models": the row's right-hand
    // side does not decrease in any ν, so this relaxes the real stage's row).
    let phased = inst.noc_row == NocRow::Phased;
    let mut y: Vec<Vec<Vec<Col>>> = vec![Vec::new(); n];
    let mut mem: Vec<Vec<Vec<Col>>> = vec![Vec::new(); n];
    for &j in &loads {
        let h = inst.ops[j].hbm_cycles.get();
        s[j] = (lo[j]..j).map(|_| cols.binary()).collect();
        w[j] = (lo[j]..=j)
            .map(|_| groups[j].iter().map(|_| cols.continuous(h)).collect())
            .collect();
        if phased {
            y[j] = (lo[j]..=j)
                .map(|_| groups[j].iter().map(|_| cols.continuous(h)).collect())
                .collect();
        }
        let per_stage = match linearisation {
            Linearisation::BigM => 1,
            Linearisation::PerOption => pruned.kept[j].len(),
        };
        mem[j] = (lo[j]..j)
            .map(|_| {
                (0..per_stage)
                    .map(|_| cols.continuous(f64::INFINITY))
                    .collect()
            })
            .collect();
    }
    let p = precedence_columns(inst, &loads, &lo, &mut cols);
    let d: Vec<Col> = (0..=n).map(|_| cols.continuous(f64::INFINITY)).collect();
    // Absorbed later work per stage (stage 0 only when it is a real stage).
    let first_real = usize::from(boundary.prologue_price.is_some());
    let absorbed: Vec<Col> = match boundary.absorb {
        Some(Absorb { cap, .. }) => (first_real..=n).map(|_| cols.continuous(cap)).collect(),
        None => Vec::new(),
    };
    // The absorbed work beside each stage's compute phase (phased row only).
    let absorbed_beside: Vec<Col> = match boundary.absorb {
        Some(Absorb { cap, .. }) if phased => {
            (first_real..=n).map(|_| cols.continuous(cap)).collect()
        }
        _ => Vec::new(),
    };

    let mut objective: Expression = d
        .iter()
        .enumerate()
        .map(|(k, c)| match (k, boundary.prologue_price) {
            (0, Some(price)) => price * c.var,
            _ => Expression::from(c.var),
        })
        .sum();
    if let Some(absorb) = boundary.absorb {
        objective -= absorb.price * absorbed.iter().map(|c| c.var).sum::<Expression>();
    }
    let mut problem = cols.vars.minimise(objective).using(good_lp::highs);
    let mut rows = 0usize;
    let mut add = |c: good_lp::Constraint| {
        use good_lp::SolverModel;
        problem.add_constraint(c);
        rows += 1;
    };

    // One option per operator.
    for xi in &x {
        add(xi.iter().map(|c| c.var).sum::<Expression>().eq(1.0));
    }
    let started = |j: usize, k: usize| -> Lin {
        if k >= j {
            Lin::Const(1.0)
        } else if k < lo[j] {
            Lin::Const(0.0)
        } else {
            Lin::Var(s[j][k - lo[j]])
        }
    };
    let stage_work =
        |j: usize, k: usize| -> Expression { w[j][k - lo[j]].iter().map(|c| c.var).sum() };
    let cold_expr = |j: usize| -> Expression {
        x[j].iter()
            .enumerate()
            .map(|(pos, c)| opt(j, pos).cold.get() as f64 * c.var)
            .sum()
    };
    for &j in &loads {
        let h = inst.ops[j].hbm_cycles.get();
        // Monotone starts.
        for k in lo[j]..j.saturating_sub(1) {
            add(Expression::from(s[j][k - lo[j]].var).leq(s[j][k + 1 - lo[j]].var));
        }
        // All of H, only once started, only in the groups of the chosen option.
        let all: Expression = (lo[j]..=j).map(|k| stage_work(j, k)).sum();
        add(all.eq(h));
        // Work done by stage k needs the load started by k. Cumulative, not per stage:
        // the LP relaxation then cannot spread H over many fractionally started stages.
        for k in lo[j]..j {
            let done: Expression = (lo[j]..=k).map(|u| stage_work(j, u)).sum();
            add(done.leq(h * started(j, k).expr()));
        }
        if groups[j].len() > 1 {
            for (g, group) in groups[j].iter().enumerate() {
                let total: Expression = (lo[j]..=j).map(|k| w[j][k - lo[j]][g].var).sum();
                let chosen: Expression = group.members.iter().map(|&pos| x[j][pos].var).sum();
                add(total.leq(h * chosen));
            }
        }
        // Memory linearisation.
        let cmax = pruned.kept[j]
            .iter()
            .map(|&o| inst.ops[j].options[o].cold.get())
            .max()
            .unwrap_or(0) as f64;
        let cmin = pruned.kept[j]
            .iter()
            .map(|&o| inst.ops[j].options[o].cold.get())
            .min()
            .unwrap_or(0) as f64;
        for k in lo[j]..j {
            let sk = s[j][k - lo[j]].var;
            let m = &mem[j][k - lo[j]];
            match linearisation {
                Linearisation::BigM => {
                    add(Expression::from(m[0].var).geq(cold_expr(j) - cmax + cmax * sk));
                    add(Expression::from(m[0].var).geq(cmin * sk));
                }
                Linearisation::PerOption => {
                    // sx[o] = x[o]·s exactly when x and s are integral: the started
                    // indicator split over the options, each capped by its option and
                    // monotone in k. Tighter in the LP than big-M: a fraction of a start
                    // costs that fraction of the chosen option's cold bytes.
                    add(m.iter().map(|c| c.var).sum::<Expression>().eq(sk));
                    for (pos, sx) in m.iter().enumerate() {
                        let next = if k + 1 < j {
                            Expression::from(mem[j][k + 1 - lo[j]][pos].var)
                        } else {
                            Expression::from(x[j][pos].var)
                        };
                        add(Expression::from(sx.var).leq(next));
                    }
                    // Work in a ν group only as far as its options have started.
                    if groups[j].len() > 1 {
                        for (g, group) in groups[j].iter().enumerate() {
                            let on: Expression = group.members.iter().map(|&pos| m[pos].var).sum();
                            let done: Expression =
                                (lo[j]..=k).map(|u| w[j][u - lo[j]][g].var).sum();
                            add(done.leq(h * on));
                        }
                    }
                }
            }
        }
    }
    let resident = |j: usize, k: usize| -> Expression {
        if k == j {
            return cold_expr(j);
        }
        let m = &mem[j][k - lo[j]];
        match linearisation {
            Linearisation::BigM => Expression::from(m[0].var),
            Linearisation::PerOption => m
                .iter()
                .enumerate()
                .map(|(pos, y)| opt(j, pos).cold.get() as f64 * y.var)
                .sum(),
        }
    };
    for k in 0..=n {
        let mut used = Expression::from(0.0);
        if k >= 1 {
            let i = k - 1;
            used += x[i]
                .iter()
                .enumerate()
                .map(|(pos, c)| opt(i, pos).hot.get() as f64 * c.var)
                .sum::<Expression>();
        }
        for &j in loads.iter().filter(|&&j| j >= k && lo[j] <= k) {
            used += resident(j, k);
        }
        add(used.leq(inst.sram_bytes.get() as f64));
    }
    // Stage durations.
    for k in 0..=n {
        let working: Vec<usize> = loads
            .iter()
            .copied()
            .filter(|&j| j >= k && lo[j] <= k)
            .collect();
        let hbm: Expression = working.iter().map(|&j| stage_work(j, k)).sum();
        let mut noc: Expression = working
            .iter()
            .flat_map(|&j| {
                groups[j]
                    .iter()
                    .zip(&w[j][k - lo[j]])
                    .map(|(g, c)| g.nu * c.var)
            })
            .sum();
        if k >= 1 {
            let i = k - 1;
            let exec: Expression = x[i]
                .iter()
                .enumerate()
                .map(|(pos, c)| opt(i, pos).exec_cycles.get() * c.var)
                .sum();
            add(Expression::from(d[k].var).geq(exec));
            noc += x[i]
                .iter()
                .enumerate()
                .map(|(pos, c)| opt(i, pos).comm_cycles.get() * c.var)
                .sum::<Expression>();
        }
        let (hbm, noc) = match (boundary.absorb, absorbed.get(k.wrapping_sub(first_real))) {
            (Some(absorb), Some(a)) if k >= first_real => (hbm + a.var, noc + absorb.nu * a.var),
            _ => (hbm, noc),
        };
        if k >= first_real {
            add(Expression::from(d[k].var).geq(noc));
        }
        add(Expression::from(d[k].var).geq(hbm));
        if phased && k >= 1 {
            let i = k - 1;
            let per_option = |f: &dyn Fn(&elk_stage::instance::OpOption) -> f64| -> Expression {
                x[i].iter()
                    .enumerate()
                    .map(|(pos, c)| f(opt(i, pos)) * c.var)
                    .sum()
            };
            let comp = per_option(&|o| (o.exec_cycles - o.comm_cycles).get().max(0.0));
            let (mut beside, mut beside_noc, mut left_noc) = (
                Expression::from(0.0),
                Expression::from(0.0),
                Expression::from(0.0),
            );
            for &j in &working {
                let at = k - lo[j];
                for ((g, wc), yc) in groups[j].iter().zip(&w[j][at]).zip(&y[j][at]) {
                    add(Expression::from(yc.var).leq(wc.var));
                    beside += yc.var;
                    beside_noc += g.nu * yc.var;
                    left_noc += g.nu * (wc.var - yc.var);
                }
            }
            let at = k.wrapping_sub(first_real);
            if let (Some(absorb), Some(a), Some(ya)) =
                (boundary.absorb, absorbed.get(at), absorbed_beside.get(at))
            {
                add(Expression::from(ya.var).leq(a.var));
                beside += ya.var;
                beside_noc += absorb.nu * ya.var;
                left_noc += absorb.nu * (a.var - ya.var);
            }
            add(beside.leq(comp.clone()));
            add(beside_noc.leq(comp));
            add(Expression::from(d[k].var).geq(per_option(&|o| o.exec_cycles.get()) + left_noc));
        }
    }
    if let Some(absorb) = boundary.absorb {
        add(absorbed
            .iter()
            .map(|c| c.var)
            .sum::<Expression>()
            .leq(absorb.cap));
    }
    // Load order.
    let p_lin = |a: usize, b: usize| -> Lin {
        // a < b by operator index.
        match p[a][b] {
            Some(c) => Lin::Var(c),
            None => Lin::Const(1.0),
        }
    };
    // "a before b when `cond` = 1": a has no work after b's start.
    let mut before = |a: usize, b: usize, cond: Expression, cond_const: Option<f64>| {
        if cond_const == Some(0.0) {
            return;
        }
        let h = inst.ops[a].hbm_cycles.get();
        for k in lo[a].max(1)..=a {
            let sb = started(b, k - 1);
            if matches!(sb, Lin::Const(c) if c == 0.0) {
                continue;
            }
            // w[a][k] ≤ H_a·(1 − s[b][k−1]) + H_a·(1 − cond)
            add(stage_work(a, k).leq(h * (2.0 - sb.expr() - cond.clone())));
        }
    };
    match inst.load_order {
        LoadOrder::Named(NamedOrder::Fixed) => {
            for pair in loads.windows(2) {
                before(pair[0], pair[1], Expression::from(1.0), Some(1.0));
            }
        }
        _ => {
            for (ra, &a) in loads.iter().enumerate() {
                for &b in &loads[ra + 1..] {
                    match p[a][b] {
                        Some(c) => {
                            before(a, b, Expression::from(c.var), None);
                            before(b, a, 1.0 - Expression::from(c.var), None);
                        }
                        None => before(a, b, Expression::from(1.0), Some(1.0)),
                    }
                }
            }
        }
    }
    if let LoadOrder::Displacement { max_displacement } = inst.load_order {
        let dmax = max_displacement as f64;
        let any_var = |ls: &[Lin]| ls.iter().any(|l| matches!(l, Lin::Var(_)));
        for (ra, &a) in loads.iter().enumerate() {
            for (rb, &b) in loads.iter().enumerate().skip(ra + 1) {
                for &c in &loads[rb + 1..] {
                    let (ab, bc, ac) = (p_lin(a, b), p_lin(b, c), p_lin(a, c));
                    if any_var(&[ab, bc, ac]) {
                        add((ab.expr() + bc.expr() - ac.expr()).leq(1.0));
                        add((ac.expr() - ab.expr() - bc.expr()).leq(0.0));
                    }
                }
            }
            // Position of a: loads before it.
            let mut pos = Expression::from(0.0);
            let mut has_var = false;
            for &o in &loads {
                if o < a {
                    pos += p_lin(o, a).expr();
                    has_var |= p[o][a].is_some();
                } else if o > a {
                    pos += 1.0 - p_lin(a, o).expr();
                    has_var |= p[a][o].is_some();
                }
            }
            if has_var {
                add(pos.clone().leq(ra as f64 + dmax));
                add(pos.geq(ra as f64 - dmax));
            }
        }
    }
    let mut size = cols.size;
    size.constraints = rows;
    Encoding {
        problem,
        size,
        x,
        lo,
        s,
        groups,
        w,
        mem,
        p,
        d,
        absorbed,
        y,
        linearisation,
    }
}

/// Precedence binaries: none for a fixed order; for a free order, only pairs whose work
/// ranges can overlap; for a displacement bound D, every pair within 2D ranks (further
/// pairs are forced into execution order) — those orders must be total, so no pair is
/// skipped for being unconstrained.
fn precedence_columns(
    inst: &Instance,
    loads: &[usize],
    lo: &[usize],
    cols: &mut Columns,
) -> Vec<Vec<Option<Col>>> {
    let n = inst.ops.len();
    let mut p = vec![vec![None; n]; n];
    for (ra, &a) in loads.iter().enumerate() {
        for (rb, &b) in loads.iter().enumerate().skip(ra + 1) {
            let needed = match inst.load_order {
                LoadOrder::Named(NamedOrder::Fixed) => false,
                LoadOrder::Named(NamedOrder::Free) => lo[b] < a,
                LoadOrder::Displacement { max_displacement } => {
                    rb - ra <= 2 * max_displacement as usize
                }
            };
            if needed {
                p[a][b] = Some(cols.binary());
            }
        }
    }
    p
}
