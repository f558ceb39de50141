//! The stage model (SPEC §4) as a MILP, built with good_lp. Variables:
//!
//! - `x[i][o]` ∈ {0,1}: operator i takes (kept) option o; one per operator.
//! - `s[j][k]` ∈ {0,1}: load j has started by stage k (monotone in k; 1 from stage j on).
//! - `w[j][k][g]` ≥ 0: HBM cycles of load j in stage k, split by ν group g (options with the
//!   same ν share a group), so the NoC term Σ ν·w is linear;
//!   `Σ_k w[j][k][g] ≤ H_j·x[j][g]`.
//! - memory: the cold bytes of a started load, `cold(o_j)·s[j][k]`, linearised by big-M
//!   (`r[j][k]`) or by per-option start indicators (`sx[j][k][o]`).
//! - `p[a][b]` ∈ {0,1}: load a before load b (free and displacement-bounded orders).
//! - `d[k]` ≥ 0: stage duration, above each of the three terms; objective Σ d_k.
//!
//! The columns are numbered in creation order; [`Encoding`] keeps the numbers so a warm
//! start can be written and a solution read back.

mod columns;
mod lift;
mod order;
mod rows;

use elk_stage::instance::Instance;
use good_lp::solvers::highs::HighsProblem;
use good_lp::{Expression, ProblemVariables, Variable};
use serde::Serialize;

use crate::prune::Pruned;
pub(crate) use lift::{lift_check, Lift};

use columns::{Columns, Layout};
use rows::{Rows, StageSlack};

/// How the cold-bytes × started products in the memory rows are made linear.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Linearisation {
    /// One continuous `r[j][k]` ≥ cold(x_j) − M_j·(1 − `s[j][k])` per (load, stage).
    #[default]
    #[cfg_attr(feature = "clap", value(help = "One big-M row pair per (load, stage)"))]
    BigM,
    /// Per-option start indicators `sx[j][k][o]` = `x[j][o]·s[j][k]` (continuous; exact for
    /// integral x, s): Σ_o sx = s, sx ≤ its successor in k ≤ x; memory Σ_o cold_o·sx.
    #[cfg_attr(
        feature = "clap",
        value(help = "One product variable per (load, stage, option)")
    )]
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
    /// `s[j][k - lo[j]]` for k in `lo[j]..j`.
    pub s: Vec<Vec<Col>>,
    /// ν groups per operator.
    pub groups: Vec<Vec<NuGroup>>,
    /// `w[j][k - lo[j]][g]` for k in `lo[j]..=j`.
    pub w: Vec<Vec<Vec<Col>>>,
    /// Memory linearisation columns: `r[j][k - lo[j]]` (big-M: one entry) or y (per option).
    pub mem: Vec<Vec<Vec<Col>>>,
    /// Precedence `p[a][b]` for a < b (None when forced or not needed).
    pub p: Vec<Vec<Option<Col>>>,
    /// Stage durations.
    pub d: Vec<Col>,
    /// Later work absorbed, per class of [`Absorb::classes`] and stage (empty without
    /// [`Boundary::absorb`]).
    pub absorbed: Vec<Vec<Col>>,
    /// The phased NoC row's in-compute work, shaped as `w` (empty with SPEC §4's row).
    pub y: Vec<Vec<Vec<Col>>>,
    pub linearisation: Linearisation,
}

/// How a segment of a longer chain meets the rest of it (the segment relaxation of
/// `crate::segments`; docs/exact.md proves the bound). The default is a whole instance.
#[derive(Clone, Debug, Default, PartialEq)]
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
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Absorb {
    /// Credit per HBM cycle absorbed.
    pub price: f64,
    /// Most HBM cycles absorbed in all (the later loads' total).
    pub cap: f64,
    /// The absorbed work's classes, each with its own columns: one class at the least ν of
    /// any later load's option (the priced relaxation), or one per ν value (the coupled one,
    /// `crate::segments::coupled`).
    pub classes: Vec<AbsorbClass>,
}

/// Absorbed work that costs `nu` NoC cycles per HBM cycle, at most `cap` HBM cycles in all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AbsorbClass {
    pub nu: f64,
    pub cap: f64,
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
    let mut cols = Columns {
        vars: ProblemVariables::new(),
        size: ModelSize::default(),
        relax,
    };
    let layout = Layout::new(inst, pruned, linearisation, &boundary, &mut cols);
    let objective = layout.objective(&boundary);
    let mut rows = Rows {
        inst,
        pruned,
        linearisation,
        boundary: &boundary,
        at: &layout,
        problem: cols.vars.minimise(objective).using(good_lp::highs),
        count: 0,
        slacks: None,
        deadline: None,
        overran: false,
    };
    rows.add_all();
    let (problem, mut size) = (rows.problem, cols.size);
    size.constraints = rows.count;
    Encoding {
        problem,
        size,
        x: layout.x,
        lo: layout.lo,
        s: layout.s,
        groups: layout.groups,
        w: layout.w,
        mem: layout.mem,
        p: layout.p,
        d: layout.d,
        absorbed: layout.absorbed,
        y: layout.y,
        linearisation,
    }
}

/// One segment problem of a [`encode_coupled`] model: its instance, boundary (prices 0) and
/// how many segments of the chain it stands for.
pub(crate) struct CoupledPart<'a> {
    /// The segment, its options' ν lowered to their classes' least (the instance itself
    /// with one class per ν).
    pub inst: &'a Instance,
    /// The segment with its own ν values (what [`lift_check`] lifts to).
    pub fine: &'a Instance,
    /// Options kept, of both `inst` and `fine` (pruned on `fine`).
    pub pruned: &'a Pruned,
    pub boundary: Boundary,
    /// Per ν value of the whole chain, ascending, the absorbed work's cap in that ν alone
    /// (empty when the part absorbs nothing).
    pub fine_caps: Vec<(f64, f64)>,
    pub count: f64,
}

/// Where an [`encode_coupled`] model keeps what [`lift_check`] reads of its solution.
pub(crate) struct CoupledLayout {
    /// good_lp's variables in column order.
    vars: Vec<Variable>,
    layouts: Vec<Layout>,
    /// Per part, its NoC rows' slacks.
    slacks: Vec<Vec<StageSlack>>,
}

/// The segment problems of `parts` as one model (always an LP relaxation): the objective is
/// Σ_parts count·(Σ stage durations beyond the prologue), and for every class of `classes`
/// (its ν values, ascending) one coupling row says the work absorbed in that class
/// (Σ count·absorbed) equals the work the parts' own loads do in their prologues with
/// options of those ν. Every part's absorbed classes must be `classes`, in order, each
/// charged at most its least ν (empty for the last part). Proof: docs/exact.md, "The coupled
/// relaxation" and "Classes refined lazily".
/// `None` when `deadline` passed while its rows were being built (no model to solve).
pub(crate) fn encode_coupled(
    parts: &[CoupledPart],
    classes: &[Vec<f64>],
    deadline: Option<std::time::Instant>,
) -> Option<(HighsProblem, ModelSize, CoupledLayout)> {
    let mut cols = Columns {
        vars: ProblemVariables::new(),
        size: ModelSize::default(),
        relax: true,
    };
    let layouts: Vec<Layout> = parts
        .iter()
        .map(|p| {
            Layout::new(
                p.inst,
                p.pruned,
                Linearisation::BigM,
                &p.boundary,
                &mut cols,
            )
        })
        .collect();
    let objective: Expression = parts
        .iter()
        .zip(&layouts)
        .map(|(p, l)| p.count * l.objective(&p.boundary))
        .sum();
    let vars: Vec<Variable> = cols.vars.iter_variables_with_def().map(|v| v.0).collect();
    let mut problem = cols.vars.minimise(objective).using(good_lp::highs);
    let mut count = 0;
    let mut slacks = Vec::new();
    for (p, layout) in parts.iter().zip(&layouts) {
        let mut rows = Rows {
            inst: p.inst,
            pruned: p.pruned,
            linearisation: Linearisation::BigM,
            boundary: &p.boundary,
            at: layout,
            problem,
            count,
            slacks: Some(Vec::new()),
            deadline,
            overran: false,
        };
        rows.add_all();
        if rows.overran {
            return None;
        }
        slacks.push(rows.slacks.unwrap_or_default());
        (problem, count) = (rows.problem, rows.count);
    }
    for (c, members) in classes.iter().enumerate() {
        let member = |nu: f64| members.iter().any(|m| m.to_bits() == nu.to_bits());
        let mut balance = Expression::from(0.0);
        for (p, layout) in parts.iter().zip(&layouts) {
            if let Some(absorbed) = layout.absorbed.get(c) {
                balance += p.count * absorbed.iter().map(|a| a.var).sum::<Expression>();
            }
            if p.boundary.prologue_price.is_none() {
                continue;
            }
            for &j in layout.loads.iter().filter(|&&j| layout.lo[j] == 0) {
                for (g, w) in layout.groups[j].iter().zip(&layout.w[j][0]) {
                    if member(g.nu) {
                        balance -= p.count * w.var;
                    }
                }
            }
        }
        use good_lp::SolverModel;
        problem.add_constraint(balance.eq(0.0));
        count += 1;
    }
    let mut size = cols.size;
    size.constraints = count;
    let layout = CoupledLayout {
        vars,
        layouts,
        slacks,
    };
    Some((problem, size, layout))
}
