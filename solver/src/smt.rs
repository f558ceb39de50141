//! The exact SMT backend (SPEC §5): the stage model in linear real arithmetic with integers
//! and Booleans, minimised by descent with z3's solver (each model demands a smaller
//! makespan; the final unsat is the proof of optimality). Written independently of the MILP: options are
//! integers selecting constants by `ite`, starts are integer stages, order is a Boolean per
//! pair (or integer positions under a displacement bound), and every instance constant enters
//! as the exact rational of its f64 — so the two backends cross-check each other.
//!
//! The model is made in `smt/encode.rs`, one method per family of assertions; this file runs
//! z3 on it and reads the schedule back.

mod encode;
mod rational;

use crate::error::{Result, SolverError};
use crate::extract::{OrderHint, RawSolution};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use encode::encode;
use rational::{exact_fraction, parse_numeral};
use serde::Serialize;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use z3::ast::{Ast, Bool, Int, Real};
use z3::{Config, Context, SatResult, Solver};

/// How to run the SMT backend.
#[derive(Clone, Debug, Default)]
pub struct SmtConfig {
    /// Wall-clock limit; z3 is interrupted when it is reached.
    pub time_limit: Option<Duration>,
}

/// How z3 ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmtStatus {
    /// Optimum proven.
    Optimal,
    /// Interrupted by the time limit.
    TimeLimit,
    /// Proven unsatisfiable: no schedule exists.
    Infeasible,
}

/// Size of the SMT model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SmtSize {
    /// Boolean constants.
    pub bools: usize,
    /// Integer constants.
    pub ints: usize,
    /// Real constants.
    pub reals: usize,
    /// Top-level assertions.
    pub assertions: usize,
}

/// What an SMT run produced.
#[derive(Clone, Debug)]
pub struct SmtRun {
    /// How it ended.
    pub status: SmtStatus,
    /// The model found, when there is one.
    pub solution: Option<RawSolution>,
    /// Its makespan, cycles (z3's exact value rounded to f64).
    pub objective: Option<f64>,
    /// Proven by an unsat check: no schedule has a makespan ≤ this, cycles.
    pub proven_below: f64,
    /// Model size.
    pub size: SmtSize,
    /// Wall-clock seconds in z3.
    pub solve_s: f64,
}

/// Bisection stops when the proven interval is this narrow relative to the best makespan.
pub const BISECTION_GAP: f64 = 1e-9;

fn backend(detail: impl std::fmt::Display) -> SolverError {
    SolverError::Backend {
        backend: "smt",
        detail: detail.to_string(),
    }
}

struct Builder<'ctx> {
    ctx: &'ctx Context,
    solver: Solver<'ctx>,
    size: SmtSize,
}

impl<'ctx> Builder<'ctx> {
    fn real(&self, v: f64) -> Real<'ctx> {
        let (n, d) = exact_fraction(v);
        Real::from_real_str(self.ctx, &n, &d).unwrap_or_else(|| Real::from_real(self.ctx, 0, 1))
    }
    fn int(&self, v: usize) -> Int<'ctx> {
        Int::from_u64(self.ctx, v as u64)
    }
    fn new_real(&mut self, name: String) -> Real<'ctx> {
        self.size.reals += 1;
        Real::new_const(self.ctx, name)
    }
    fn new_int(&mut self, name: String) -> Int<'ctx> {
        self.size.ints += 1;
        Int::new_const(self.ctx, name)
    }
    fn new_bool(&mut self, name: String) -> Bool<'ctx> {
        self.size.bools += 1;
        Bool::new_const(self.ctx, name)
    }
    fn assert(&mut self, b: &Bool<'ctx>) {
        self.size.assertions += 1;
        self.solver.assert(b);
    }
    fn sum(&self, terms: &[Real<'ctx>]) -> Real<'ctx> {
        if terms.is_empty() {
            return self.real(0.0);
        }
        let refs: Vec<&Real<'ctx>> = terms.iter().collect();
        Real::add(self.ctx, &refs)
    }
    /// `values[option]` as a term of the option variable.
    fn select(&self, option: &Int<'ctx>, values: &[f64]) -> Real<'ctx> {
        let mut term = self.real(values[values.len() - 1]);
        for (o, &v) in values.iter().enumerate().rev().skip(1) {
            term = option._eq(&self.int(o)).ite(&self.real(v), &term);
        }
        term
    }
}

/// Decisions of the model, kept to read the solution back.
struct Decisions<'ctx> {
    option: Vec<Int<'ctx>>,
    work: Vec<Vec<(usize, Real<'ctx>)>>,
    position: Vec<Option<Int<'ctx>>>,
    makespan: Real<'ctx>,
}

/// Solves the instance exactly with z3's optimiser, or until the time limit.
pub fn run_smt(inst: &Instance, cfg: &SmtConfig) -> Result<SmtRun> {
    let started = Instant::now();
    let mut config = Config::new();
    config.set_model_generation(true);
    let ctx = Context::new(&config);
    let mut b = Builder {
        ctx: &ctx,
        solver: Solver::new(&ctx),
        size: SmtSize::default(),
    };
    let decisions = encode(inst, &mut b);
    let handle = ctx.handle();
    let (done, finished) = mpsc::channel::<()>();
    // Bisection on T: a satisfiable check under a cap yields a schedule (the new upper end);
    // an unsatisfiable one proves that no schedule is that fast (the new lower end). z3
    // 4.8.12's optimiser returned non-optimal models on this encoding, and a plain descent
    // (demand a strictly smaller T each time) crawls through non-vertex LP points.
    let (status, best, proven_below) = std::thread::scope(|scope| {
        if let Some(limit) = cfg.time_limit {
            let remaining = limit.saturating_sub(started.elapsed());
            let handle = &handle;
            scope.spawn(move || {
                if finished.recv_timeout(remaining).is_err() {
                    handle.interrupt();
                }
            });
        }
        let mut best: Option<z3::Model> = None;
        // Proven: no schedule with makespan ≤ lower (none below 0 trivially).
        let (mut lower, mut upper) = (0.0f64, f64::INFINITY);
        let status = loop {
            let cap = if upper.is_finite() {
                0.5 * (lower + upper)
            } else {
                f64::INFINITY
            };
            b.solver.push();
            if cap.is_finite() {
                b.solver.assert(&decisions.makespan.le(&b.real(cap)));
            }
            let result = b.solver.check();
            let model = b.solver.get_model();
            b.solver.pop(1);
            match result {
                SatResult::Sat => {
                    let t = model
                        .as_ref()
                        .and_then(|m| m.eval(&decisions.makespan, true))
                        .and_then(|t| parse_numeral(&t.to_string()));
                    let Some(t) = t else {
                        break Err(backend("sat without a readable makespan"));
                    };
                    upper = t;
                    best = model;
                }
                SatResult::Unsat if !cap.is_finite() => break Ok(SmtStatus::Infeasible),
                SatResult::Unsat => lower = cap,
                SatResult::Unknown => {
                    let why = b.solver.get_reason_unknown().unwrap_or_default();
                    if why.contains("cancel")
                        || why.contains("timeout")
                        || why.contains("interrupt")
                    {
                        break Ok(SmtStatus::TimeLimit);
                    }
                    break Err(backend(format!("z3 returned unknown: {why}")));
                }
            }
            if upper - lower <= BISECTION_GAP * upper {
                break Ok(SmtStatus::Optimal);
            }
        };
        let _ = done.send(());
        (status, best, lower)
    });
    let status = status?;
    let solve_s = started.elapsed().as_secs_f64();
    let mut run = SmtRun {
        status,
        solution: None,
        objective: None,
        proven_below,
        size: b.size,
        solve_s,
    };
    if let Some(model) = best {
        let value = |r: &Real| -> Result<f64> {
            let v = model
                .eval(r, true)
                .ok_or_else(|| backend("model has no value"))?;
            parse_numeral(&v.to_string())
                .ok_or_else(|| backend(format!("cannot read numeral '{v}'")))
        };
        let mut options = Vec::with_capacity(inst.ops.len());
        for o in &decisions.option {
            let v = model
                .eval(o, true)
                .and_then(|v| v.as_i64())
                .ok_or_else(|| backend("model has no option value"))?;
            options.push(usize::try_from(v).map_err(|_| backend("negative option"))?);
        }
        let mut work = Vec::new();
        for (j, per) in decisions.work.iter().enumerate() {
            for (k, w) in per {
                work.push((j, *k, value(w)?));
            }
        }
        let order = match inst.load_order {
            LoadOrder::Named(NamedOrder::Fixed) => OrderHint::Execution,
            LoadOrder::Named(NamedOrder::Free) => OrderHint::Intervals,
            LoadOrder::Displacement { .. } => {
                let mut keyed = Vec::new();
                for j in inst.load_indices() {
                    let p = decisions.position[j]
                        .as_ref()
                        .and_then(|p| model.eval(p, true))
                        .and_then(|v| v.as_i64())
                        .ok_or_else(|| backend("model has no position"))?;
                    keyed.push((p, j));
                }
                keyed.sort_unstable();
                OrderHint::Given(keyed.into_iter().map(|(_, j)| j).collect())
            }
        };
        run.objective = Some(value(&decisions.makespan)?);
        run.solution = Some(RawSolution {
            options,
            work,
            order,
        });
    }
    Ok(run)
}
