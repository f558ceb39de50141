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

/// The stage relaxation's lower bound on every schedule of `inst`, or `None` when HiGHS did
/// not reach the LP's optimum within `time_limit`.
pub fn stage_bound(inst: &Instance, time_limit: Duration) -> Result<Option<StageBound>> {
    let n = inst.ops.len();
    // Without loads there is no load work to charge.
    let nu = Some(least_nu(inst))
        .filter(|nu| nu.is_finite())
        .unwrap_or(0.0);
    let phased = inst.noc_row == NocRow::Phased;
    let mut vars = ProblemVariables::new();
    let x: Vec<Vec<Variable>> = inst
        .ops
        .iter()
        .map(|op| {
            op.options
                .iter()
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
    let blend = |i: usize, f: &dyn Fn(&elk_stage::instance::OpOption) -> f64| -> Expression {
        inst.ops[i]
            .options
            .iter()
            .zip(&x[i])
            .map(|(o, &v)| f(o) * v)
            .sum()
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
        let exec = blend(i, &|o| o.exec_cycles.get());
        add(&mut problem, Expression::from(d[k]).geq(exec.clone()));
        let comm = blend(i, &|o| o.comm_cycles.get());
        add(&mut problem, Expression::from(d[k]).geq(comm + nu * w[k]));
        if phased {
            let comp = blend(i, &|o| (o.exec_cycles - o.comm_cycles).get().max(0.0));
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
