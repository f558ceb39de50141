//! The lift check of a coupled LP whose ν classes are merged (docs/exact.md, "Classes refined
//! lazily"). A merged class charges all its work at its least ν, so its LP relaxes the LP
//! with one class per ν, and its optimum z_P is at most that LP's z*. If the merged LP's
//! solution *lifts* — its merged work splits among the class's ν values so that every row of
//! the fine LP holds, everything else unchanged — the lifted point is fine-feasible with the
//! same objective, so z* ≤ z_P and the two are equal.
//!
//! The lift is one small LP over the split work only: per load, stage and merged group the
//! work of each fine ν group (and, phased, its part beside compute), per absorbing part,
//! stage and class the absorbed work of each ν. Its rows are the fine LP's rows that involve
//! them: the split sums to the merged value, the part beside compute stays within the work,
//! each fine group within H × its options' x, each ν's absorbed work within its cap, the
//! coupling row of each ν, and every NoC row — whose extra NoC, Σ (ν − ν_class)·work, must
//! fit in the row's slack at the merged solution. The NoC and coupling rows are elastic: the
//! least total violation is 0 exactly when the lift exists, and the rows it violates name
//! the classes to split.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use good_lp::{variable, Constraint, Expression, ProblemVariables, Variable};
use highs::HighsModelStatus;

use super::columns::nu_groups;
use super::rows::NocKind;
use super::{CoupledLayout, CoupledPart};
use crate::error::Result;

/// What the lift check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lift {
    /// The merged LP's solution lifts to the LP with one class per ν (same objective).
    Proven,
    /// It does not: these classes (positions in the partition) load the rows the least
    /// violation breaks; split them and solve again.
    Split(Vec<usize>),
}

/// Work below this many cycles is read as none.
const ZERO: f64 = 1e-9;

/// A lift proves equality when its violations total at most this, relative to the optimum
/// (HiGHS's own feasibility tolerance is 1e-7 absolute per row).
pub(crate) const LIFT_TOLERANCE: f64 = 1e-7;

/// The extra NoC a NoC row of the lift carries.
#[derive(Default)]
struct Extra {
    /// Over the lift's columns.
    split: Expression,
    /// Merged classes with work above their least ν in the row.
    classes: BTreeSet<usize>,
}

/// The lift's columns, counted so their values can be read back.
struct Lp {
    vars: ProblemVariables,
    rows: Vec<Constraint>,
    count: usize,
}

impl Lp {
    fn column(&mut self) -> (Variable, usize) {
        self.count += 1;
        (self.vars.add(variable().min(0.0)), self.count - 1)
    }

    /// One ν's share of a split: its work and the part of it beside compute (≤ the work).
    fn share(&mut self) -> (Variable, Variable) {
        let (work, _) = self.column();
        let (beside, _) = self.column();
        self.rows.push(Expression::from(beside).leq(work));
        (work, beside)
    }
}

/// Whether the merged coupled LP's solution `cols` (optimum `optimum`) lifts to the LP with
/// one class per ν value: `parts` and `classes` as given to `encode_coupled`, `layout` its
/// layout.
pub(crate) fn lift_check(
    parts: &[CoupledPart],
    classes: &[Vec<f64>],
    layout: &CoupledLayout,
    cols: &[f64],
    optimum: f64,
    time_limit: Option<Duration>,
) -> Result<Lift> {
    let class_of: HashMap<u64, usize> = classes
        .iter()
        .enumerate()
        .flat_map(|(c, m)| m.iter().map(move |nu| (nu.to_bits(), c)))
        .collect();
    let merged = |nu: f64| {
        class_of
            .get(&nu.to_bits())
            .copied()
            .filter(|&c| classes[c].len() > 1)
    };
    let mut lp = Lp {
        vars: ProblemVariables::new(),
        rows: Vec::new(),
        count: 0,
    };
    // Per part, the extra NoC of each (stage, kind); per ν of a merged class, the coupling
    // balance (absorbed − prologue, weighted by the parts' counts).
    let mut extra: Vec<HashMap<(usize, NocKind), Extra>> = Vec::new();
    let mut balance: BTreeMap<u64, Expression> = BTreeMap::new();
    for (part, at) in parts.iter().zip(&layout.layouts) {
        let mut rows: HashMap<(usize, NocKind), Extra> = HashMap::new();
        // Work `w` in stage k, `y` of it beside compute, `delta` above its charged ν.
        let mut charge = |k: usize, class: usize, delta: f64, w: Expression, y: Expression| {
            for (kind, split) in [
                (NocKind::Spec, w.clone()),
                (NocKind::Beside, y.clone()),
                (NocKind::Left, w - y),
            ] {
                let e = rows.entry((k, kind)).or_default();
                e.split += delta * split;
                if delta > 0.0 {
                    e.classes.insert(class);
                }
            }
        };
        let prologue = part.boundary.prologue_price.is_some();
        for &j in &at.loads {
            let fine = nu_groups(part.fine, part.pruned, j);
            let h = part.fine.ops[j].hbm_cycles.get();
            let lo = at.lo[j];
            for (gi, g) in at.groups[j].iter().enumerate() {
                let Some(&class) = class_of.get(&g.nu.to_bits()) else {
                    continue;
                };
                let members: Vec<_> = fine
                    .iter()
                    .filter(|f| g.members.contains(&f.members[0]))
                    .collect();
                let mut caps = vec![Expression::from(0.0); members.len()];
                for k in lo..=j {
                    let work = cols[at.w[j][k - lo][gi].index];
                    let beside =
                        at.y.get(j)
                            .and_then(|y| y.get(k - lo))
                            .map_or(0.0, |y| cols[y[gi].index]);
                    if work <= ZERO {
                        continue;
                    }
                    let mut sum_w = Expression::from(0.0);
                    let mut sum_y = Expression::from(0.0);
                    for (m, f) in members.iter().enumerate() {
                        let delta = f.nu - g.nu;
                        let (w, y): (Expression, Expression) = if members.len() == 1 {
                            (work.into(), beside.into())
                        } else {
                            let (w, y) = lp.share();
                            sum_w += w;
                            sum_y += y;
                            caps[m] += w;
                            (w.into(), y.into())
                        };
                        charge(k, class, delta, w.clone(), y);
                        if prologue && lo == 0 && k == 0 && merged(f.nu).is_some() {
                            *balance.entry(f.nu.to_bits()).or_default() -= part.count * w;
                        }
                    }
                    if members.len() > 1 {
                        lp.rows.push(sum_w.eq(work));
                        if at.phased {
                            lp.rows.push(sum_y.eq(beside));
                        }
                    }
                }
                if members.len() > 1 {
                    for (f, cap) in members.iter().zip(caps) {
                        let x: f64 = f.members.iter().map(|&p| cols[at.x[j][p].index]).sum();
                        lp.rows.push(cap.leq(h * x));
                    }
                }
            }
        }
        for (c, absorbed) in at.absorbed.iter().enumerate() {
            let members = &classes[c];
            if members.len() < 2 {
                continue;
            }
            let mut caps = vec![Expression::from(0.0); members.len()];
            for (at_k, a) in absorbed.iter().enumerate() {
                let k = at_k + at.first_real;
                let work = cols[a.index];
                if work <= ZERO {
                    continue;
                }
                let beside = at
                    .absorbed_beside
                    .get(c)
                    .map_or(0.0, |b| cols[b[at_k].index]);
                let mut sum_a = Expression::from(0.0);
                let mut sum_b = Expression::from(0.0);
                for (m, &nu) in members.iter().enumerate() {
                    let (a, b) = lp.share();
                    sum_a += a;
                    sum_b += b;
                    caps[m] += a;
                    let delta = nu - members[0];
                    charge(k, c, delta, a.into(), b.into());
                    *balance.entry(nu.to_bits()).or_default() += part.count * a;
                }
                lp.rows.push(sum_a.eq(work));
                if at.phased {
                    lp.rows.push(sum_b.eq(beside));
                }
            }
            for (&nu, cap) in members.iter().zip(caps) {
                let most = part
                    .fine_caps
                    .iter()
                    .find(|c| c.0.to_bits() == nu.to_bits())
                    .map_or(0.0, |c| c.1);
                lp.rows.push(cap.leq(most));
            }
        }
        extra.push(rows);
    }
    // The elastic rows: NoC rows (a violation lengthens the stage, weighted by the part's
    // count as the objective weights it) and coupling rows (both ways).
    let values: HashMap<Variable, f64> = layout
        .vars
        .iter()
        .copied()
        .zip(cols.iter().copied())
        .collect();
    let mut objective = Expression::from(0.0);
    let mut watched: Vec<(usize, BTreeSet<usize>)> = Vec::new();
    for ((part, slacks), mut rows) in parts.iter().zip(&layout.slacks).zip(extra) {
        for s in slacks {
            let Some(e) = rows.remove(&(s.stage, s.kind)) else {
                continue;
            };
            if e.classes.is_empty() {
                continue;
            }
            let room = s.slack.eval_with(&values);
            let (v, index) = lp.column();
            objective += part.count * v;
            watched.push((index, e.classes));
            lp.rows.push((e.split - v).leq(room));
        }
    }
    for (&bits, b) in &balance {
        let nu = f64::from_bits(bits);
        let (up, i_up) = lp.column();
        let (down, i_down) = lp.column();
        objective += up + down;
        let class = merged(nu).into_iter().collect::<BTreeSet<_>>();
        watched.push((i_up, class.clone()));
        watched.push((i_down, class));
        lp.rows.push((b.clone() + down - up).eq(0.0));
    }
    let all_merged: Vec<usize> = (0..classes.len())
        .filter(|&c| classes[c].len() > 1)
        .collect();
    let mut problem = lp.vars.minimise(objective).using(good_lp::highs);
    for row in lp.rows {
        use good_lp::SolverModel;
        problem.add_constraint(row);
    }
    let model = crate::milp::configured(problem, time_limit)?;
    let solved = model
        .try_solve()
        .map_err(|e| crate::milp::backend(format!("lift check: {e:?}")))?;
    if solved.status() != HighsModelStatus::Optimal {
        return Ok(Lift::Split(all_merged));
    }
    let tolerance = LIFT_TOLERANCE * optimum.abs().max(1.0);
    if solved.objective_value() <= tolerance {
        return Ok(Lift::Proven);
    }
    let sol = solved.get_solution();
    let violated = sol.columns();
    let split: BTreeSet<usize> = watched
        .iter()
        .filter(|(i, _)| violated[*i] > tolerance * 1e-3)
        .flat_map(|(_, cs)| cs.iter().copied())
        .collect();
    Ok(Lift::Split(if split.is_empty() {
        all_merged
    } else {
        split.into_iter().collect()
    }))
}
