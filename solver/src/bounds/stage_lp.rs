//! The **stage relaxation**: one small LP over the stages alone, with no column per load
//! (proof and measurements in docs/exact.md, "The stage relaxation").
//!
//! Every schedule's makespan is Σ_k d_k, and each stage's d_k is at least its HBM work, its
//! operator's execution, and its NoC (the operator's own plus ν·work of the loads working
//! there); with the phased row, at least the execution plus the NoC left after the compute
//! phase. The roofline sums these resources separately over the whole chain; this LP keeps
//! each stage's max, as the segment relaxation does, but with the loads merged into one
//! stream of HBM work per stage, every cycle of it charged the least ν of any load's option,
//! and only the deadlines kept (a load's work is done by the stage before its operator runs).
//! It forgets the load windows, the order rules and SRAM, so it needs a handful of columns
//! per stage and per option: Llama2-13B's 1,729 operators are ≈ 20 k columns, solved in
//! under a second, where the coupled segment LP takes 13–16 s.

use crate::error::Result;
use crate::segments::SAFETY;
use elk_stage::instance::{Instance, NocRow};
use elk_stage::units::OpId;
use good_lp::{variable, Expression, ProblemVariables, SolverModel, Variable};
use std::time::Duration;

/// What [`stage_bound`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageBound {
    /// The LP optimum lowered by [`SAFETY`] (a relative 1e-6, for HiGHS's tolerances).
    pub bound_cycles: f64,
    /// HiGHS's simplex iterations.
    pub iterations: i64,
    /// Columns of the LP.
    pub columns: usize,
    /// Rows of the LP.
    pub rows: usize,
}

/// The least ν of any option of any load (∞ without loads).
fn least_nu(inst: &Instance) -> f64 {
    inst.ops
        .iter()
        .enumerate()
        .filter(|(j, _)| inst.is_load(OpId(*j)))
        .flat_map(|(_, op)| op.options.iter().map(|o| o.noc_per_hbm))
        .fold(f64::INFINITY, f64::min)
}

/// What the LP sees of an option: its execution, its NoC, and (phased rows) its compute phase.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Seen {
    exec: f64,
    comm: f64,
    comp: f64,
}

impl Seen {
    fn of(o: &elk_stage::instance::OpOption) -> Seen {
        Seen {
            exec: o.exec_cycles.get(),
            comm: o.comm_cycles.get(),
            comp: (o.exec_cycles - o.comm_cycles).get().max(0.0),
        }
    }

    /// `self` is no worse than `other` in every row: no longer an execution, no more NoC,
    /// and no shorter a compute phase for loads to hide beside (only phased rows see it).
    fn covers(&self, other: &Seen, phased: bool) -> bool {
        self.exec <= other.exec && self.comm <= other.comm && (!phased || self.comp >= other.comp)
    }
}

/// The options of one operator the LP needs: one of each set of equal ones, and none that
/// another covers ([`Seen::covers`]). Swapping a dominated option's weight in a blend to the
/// option that covers it loosens every row and keeps Σ x = 1, so the optimum is unchanged.
fn undominated(op: &elk_stage::instance::InstanceOp, phased: bool) -> Vec<Seen> {
    let seen: Vec<Seen> = op.options.iter().map(Seen::of).collect();
    let mut kept: Vec<Seen> = Vec::new();
    for (i, s) in seen.iter().enumerate() {
        // Equal options: the first stands for all.
        let beaten = seen
            .iter()
            .enumerate()
            .any(|(j, t)| j != i && t.covers(s, phased) && (!s.covers(t, phased) || j < i));
        if !beaten {
            kept.push(*s);
        }
    }
    kept
}

/// The stage relaxation's lower bound on every schedule of `inst`, or `None` when HiGHS did
/// not reach the LP's optimum within `time_limit`.
pub fn stage_bound(inst: &Instance, time_limit: Duration) -> Result<Option<StageBound>> {
    let n = inst.ops.len();
    // Without loads there is no load work to charge.
    let nu = Some(least_nu(inst))
        .filter(|nu| nu.is_finite())
        .unwrap_or(0.0);
    let phased = inst.noc_row == NocRow::Phased;
    let options: Vec<Vec<Seen>> = inst.ops.iter().map(|op| undominated(op, phased)).collect();
    let mut vars = ProblemVariables::new();
    let x: Vec<Vec<Variable>> = options
        .iter()
        .map(|kept| {
            kept.iter()
                .map(|_| vars.add(variable().min(0.0).max(1.0)))
                .collect()
        })
        .collect();
    let mut stage = || vars.add(variable().min(0.0));
    // Per stage 0..=n: HBM work, its part beside the compute phase, duration, cumulative work.
    let w: Vec<Variable> = (0..=n).map(|_| stage()).collect();
    let y: Vec<Variable> = (0..=n).map(|_| stage()).collect();
    let d: Vec<Variable> = (0..=n).map(|_| stage()).collect();
    let done: Vec<Variable> = (0..=n).map(|_| stage()).collect();
    let columns = vars.len();
    let objective: Expression = d.iter().sum();
    let mut problem = vars.minimise(objective).using(good_lp::highs);
    let mut rows = 0;
    let mut add = |problem: &mut good_lp::solvers::highs::HighsProblem, c| {
        problem.add_constraint(c);
        rows += 1;
    };
    let blend = |i: usize, f: &dyn Fn(&Seen) -> f64| -> Expression {
        options[i].iter().zip(&x[i]).map(|(o, &v)| f(o) * v).sum()
    };
    for xi in &x {
        add(&mut problem, xi.iter().sum::<Expression>().eq(1.0));
    }
    let mut due = 0.0;
    for k in 0..=n {
        // Work done by stage k; the loads of operators 0..=k are due by then.
        let before: Expression = if k == 0 {
            0.0.into()
        } else {
            done[k - 1].into()
        };
        add(&mut problem, (done[k] - before - w[k]).eq(0.0));
        if k < n {
            due += inst.ops[k].hbm_cycles.get();
            add(&mut problem, Expression::from(done[k]).geq(due));
        }
        add(&mut problem, Expression::from(d[k]).geq(w[k]));
        if k == 0 {
            add(&mut problem, Expression::from(d[0]).geq(nu * w[0]));
            continue;
        }
        let i = k - 1;
        let exec = blend(i, &|o| o.exec);
        add(&mut problem, Expression::from(d[k]).geq(exec.clone()));
        let comm = blend(i, &|o| o.comm);
        add(&mut problem, Expression::from(d[k]).geq(comm + nu * w[k]));
        if phased {
            let comp = blend(i, &|o| o.comp);
            add(&mut problem, Expression::from(y[k]).leq(w[k]));
            add(&mut problem, Expression::from(y[k]).leq(comp.clone()));
            add(&mut problem, (nu * y[k]).leq(comp));
            add(
                &mut problem,
                Expression::from(d[k]).geq(exec + nu * (w[k] - y[k])),
            );
        }
    }
    add(&mut problem, Expression::from(done[n]).geq(due));
    let Some((optimum, iterations)) = crate::milp::solve_lp(problem, time_limit)? else {
        return Ok(None);
    };
    Ok(Some(StageBound {
        bound_cycles: optimum - SAFETY * optimum.abs(),
        iterations,
        columns,
        rows,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use elk_stage::instance::{InstanceOp, OpOption};
    use elk_stage::units::{Bytes, Cycles};

    fn option(exec: f64, comm: f64) -> OpOption {
        OpOption {
            cold: Bytes(0),
            hot: Bytes(0),
            exec_cycles: Cycles(exec),
            comm_cycles: Cycles(comm),
            noc_per_hbm: 0.5,
            groups: None,
            members: None,
        }
    }

    #[test]
    fn only_options_no_other_covers_are_kept_and_equal_ones_once() {
        let op = |options| InstanceOp {
            name: "op".into(),
            hbm_cycles: Cycles(0.0),
            options: std::sync::Arc::new(options),
            flops: None,
            preload_window: None,
            parallel: None,
        };
        // (exec, comm): (10, 4) covers (12, 4) and (10, 5); it and (8, 6) trade.
        let all = op(vec![
            option(10.0, 4.0),
            option(12.0, 4.0),
            option(10.0, 5.0),
            option(8.0, 6.0),
            option(10.0, 4.0),
        ]);
        let kept = |phased| -> Vec<(f64, f64)> {
            undominated(&all, phased)
                .iter()
                .map(|s| (s.exec, s.comm))
                .collect()
        };
        assert_eq!(kept(false), vec![(10.0, 4.0), (8.0, 6.0)]);
        // With the phased row a longer compute phase is worth keeping: (12, 4) has 8 cycles
        // of it where (10, 4) has 6, (10, 5) 5.
        assert_eq!(kept(true), vec![(10.0, 4.0), (12.0, 4.0), (8.0, 6.0)]);
    }
}
