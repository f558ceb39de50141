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
//! SRAM enters as one row per stage: the executing operator's hot bytes, the next load's cold
//! bytes, and the work done ahead times the fewest cold bytes per HBM cycle of any later load
//! (a load that has started holds all its cold bytes). Preload windows enter as a cap on the
//! work done ahead per stage: the loads released by then and not yet due. It forgets the
//! order rules and each load's own stages, so it needs a handful of columns per stage and per
//! option: Llama2-13B's 1,729 operators are ≈ 22 k columns, solved in under a second, where
//! the coupled segment LP takes 13–16 s.

use crate::error::Result;
use crate::segments::SAFETY;
use elk_stage::instance::{Instance, NocRow};
use elk_stage::units::OpId;
use good_lp::{variable, Expression, ProblemVariables, SolverModel, Variable};
use std::time::Duration;

/// The stage LP's hard time limit in the commands (its bound, `stage-lp+queue`): a stop for a
/// host far slower than ours, not a budget (every instance under [`STAGE_MAX_OPERATORS`]
/// solves in seconds here).
pub const STAGE_LIMIT: Duration = Duration::from_secs(60);

/// The largest instance, in operators, whose stage LP the commands try. OLMoE-1B-7B (8,017
/// operators) solves in ≈ 6 s; DeepSeek-V3's did not finish in 600 s. A rule on the
/// instance, not on the clock, so the same input gets the same answer on every machine.
pub const STAGE_MAX_OPERATORS: usize = 10_000;

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
    /// ν classes of the loads' work ([`CLASS_SPREAD`]).
    pub classes: usize,
}

/// `fnv1a64:…` of everything the stage bound depends on besides its instance: this module,
/// the LP call and its HiGHS options (`milp.rs`), the safety margin (`segments.rs`) and the
/// lock file (HiGHS's version), so a bound cached under it is never reused by code that
/// would compute another.
pub fn stage_fingerprint() -> &'static str {
    static FINGERPRINT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        crate::segments::sources_fingerprint(&[
            include_str!("stage_lp.rs"),
            include_str!("../milp.rs"),
            include_str!("../segments.rs"),
            include_str!("../../../Cargo.lock"),
        ])
    })
}

/// The ν classes measured beside the default of one class (`segment_bound --stage --spread`):
/// a class holds the ν values from its least up to this times it, and is charged its least.
/// Llama2-70B's `ffn.gate_up` has options of ν 0.35 and 0.69, which one class charged at the
/// least ν lets the LP blend within a layer; classes win back 0.63 % of its bound there, but
/// take 8× the time, and nothing on Llama2-13B (docs/exact.md, "The stage relaxation").
pub const CLASS_SPREAD: f64 = 1.2;

/// The ν classes of `inst`'s loads, each spanning up to `spread` times its least ν: each
/// class's least ν, ascending (empty without loads).
fn nu_classes(inst: &Instance, spread: f64) -> Vec<f64> {
    let mut nus: Vec<f64> = inst
        .ops
        .iter()
        .enumerate()
        .filter(|(j, _)| inst.is_load(OpId(*j)))
        .flat_map(|(_, op)| op.options.iter().map(|o| o.noc_per_hbm))
        .collect();
    nus.sort_by(f64::total_cmp);
    let mut least: Vec<f64> = Vec::new();
    for nu in nus {
        if least.last().is_none_or(|&l| nu > l * spread) {
            least.push(nu);
        }
    }
    least
}

/// The class of `nu` among `least` (the last whose least ν is at most `nu`).
fn class_of(least: &[f64], nu: f64) -> usize {
    least.iter().rposition(|&l| l <= nu).unwrap_or(0)
}

/// What the LP sees of an option: its execution, its NoC, (phased rows) its compute phase,
/// its load's ν class, and its bytes per core while executing (hot) and while loaded (cold).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Seen {
    /// The option's index in its operator's list.
    index: usize,
    exec: f64,
    comm: f64,
    comp: f64,
    class: usize,
    hot: f64,
    cold: f64,
}

impl Seen {
    fn of(index: usize, o: &elk_stage::instance::OpOption, class: usize) -> Seen {
        Seen {
            index,
            exec: o.exec_cycles.get(),
            comm: o.comm_cycles.get(),
            comp: (o.exec_cycles - o.comm_cycles).get().max(0.0),
            class,
            hot: o.hot.get() as f64,
            cold: o.cold.get() as f64,
        }
    }

    /// `self` is no worse than `other` in every row: no longer an execution, no more NoC,
    /// no shorter a compute phase for loads to hide beside (only phased rows see it), and
    /// its load in no dearer a ν class, and no more SRAM hot or cold.
    fn covers(&self, other: &Seen, phased: bool) -> bool {
        self.exec <= other.exec
            && self.comm <= other.comm
            && (!phased || self.comp >= other.comp)
            && self.class <= other.class
            && self.hot <= other.hot
            && self.cold <= other.cold
    }
}

/// Per stage k, the fewest cold bytes per core any load after operator k holds per HBM
/// cycle of its work: min over loads j > k and their options of cold / hbm_cycles (∞ where
/// no load follows). A load that has done w of its h cycles has started, so it holds its
/// option's cold bytes, at least w times this (docs/exact.md, "The stage relaxation").
fn cold_per_cycle_after(inst: &Instance) -> Vec<f64> {
    let n = inst.ops.len();
    let mut after = vec![f64::INFINITY; n + 1];
    for k in (0..n).rev() {
        let j = k + 1;
        let own = if j < n && inst.is_load(OpId(j)) {
            let op = &inst.ops[j];
            let h = op.hbm_cycles.get();
            op.options
                .iter()
                .map(|o| o.cold.get() as f64 / h)
                .fold(f64::INFINITY, f64::min)
        } else {
            f64::INFINITY
        };
        after[k] = own.min(after[k + 1]);
    }
    after
}

/// Per stage k = 0..=n, the HBM cycles of the loads whose window has opened by stage k
/// ([`Instance::window_start`]) and that are not due by then (operators after k): what the
/// work done ahead of the deadlines can be at most. `None` when every load may work from
/// stage 0 (no window: the rows would bind nothing).
fn released_ahead_of_deadlines(inst: &Instance) -> Option<Vec<f64>> {
    let n = inst.ops.len();
    // Load j is released at its window's start and due at stage j: ahead in stages
    // start..j. Each adds its cycles where it is released and takes them back where due.
    let mut change = vec![0.0; n + 1];
    let mut any = false;
    for j in (0..n).filter(|&j| inst.is_load(OpId(j))) {
        let start = inst.window_start(OpId(j)).index();
        any |= start > 0;
        let h = inst.ops[j].hbm_cycles.get();
        change[start] += h;
        change[j] -= h;
    }
    let released = change
        .iter()
        .scan(0.0, |sum, c| {
            *sum += c;
            Some(sum.max(0.0))
        })
        .collect();
    any.then_some(released)
}

/// The options of operator `i` the LP needs: one of each set of equal ones, and none that
/// another covers ([`Seen::covers`]). Swapping a dominated option's weight in a blend to the
/// option that covers it loosens every row and keeps Σ x = 1 (its load's work moves to a
/// class no dearer, in the same stages), so the optimum is unchanged. An operator without a
/// load has all its options in class 0.
fn undominated(inst: &Instance, i: usize, least: &[f64], phased: bool) -> Vec<Seen> {
    let load = inst.is_load(OpId(i));
    let seen: Vec<Seen> = inst.ops[i]
        .options
        .iter()
        .enumerate()
        .map(|(index, o)| {
            Seen::of(
                index,
                o,
                if load {
                    class_of(least, o.noc_per_hbm)
                } else {
                    0
                },
            )
        })
        .collect();
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

/// The stage relaxation's lower bound on every schedule of `inst`, with one ν class (every
/// load's work charged the least ν of any load's option), or `None` when HiGHS did not reach
/// the LP's optimum within `time_limit`.
pub fn stage_bound(inst: &Instance, time_limit: Duration) -> Result<Option<StageBound>> {
    stage_bound_with(inst, time_limit, f64::INFINITY)
}

/// [`stage_bound`] with ν classes spanning `spread` ([`CLASS_SPREAD`]; `f64::INFINITY`: one
/// class): each class's work has its own deadlines and is charged the class's least ν. A
/// bound for every spread ≥ 1 (docs/exact.md, "The stage relaxation").
pub fn stage_bound_with(
    inst: &Instance,
    time_limit: Duration,
    spread: f64,
) -> Result<Option<StageBound>> {
    Ok(solved(inst, time_limit, spread)?.map(|(b, _)| b))
}

/// [`stage_bound`] and, from the same LP, [`stage_options`]: one solve for `compare`'s bound
/// and its `stage-lp+queue` row.
pub fn stage_bound_and_options(
    inst: &Instance,
    time_limit: Duration,
) -> Result<Option<(StageBound, Vec<usize>)>> {
    solved(inst, time_limit, f64::INFINITY)
}

/// Per operator, the index of the option the one-class stage LP weighs most (the first
/// kept on a tie), or `None` when HiGHS did not reach its optimum within `time_limit`.
pub fn stage_options(inst: &Instance, time_limit: Duration) -> Result<Option<Vec<usize>>> {
    stage_options_with(inst, time_limit, f64::INFINITY)
}

/// [`stage_options`] of the LP with ν classes spanning `spread`.
pub fn stage_options_with(
    inst: &Instance,
    time_limit: Duration,
    spread: f64,
) -> Result<Option<Vec<usize>>> {
    Ok(solved(inst, time_limit, spread)?.map(|(_, o)| o))
}

/// The stage LP with ν classes spanning `spread`, solved: its bound and, per operator, the
/// index of the option its optimum weighs most.
fn solved(
    inst: &Instance,
    time_limit: Duration,
    spread: f64,
) -> Result<Option<(StageBound, Vec<usize>)>> {
    let lp = build(inst, spread);
    let Some((optimum, iterations, cols)) = crate::milp::solve_lp(lp.problem, time_limit)? else {
        return Ok(None);
    };
    let options = lp
        .options
        .iter()
        .zip(&lp.x_index)
        .map(|(kept, first)| {
            (0..kept.len())
                .max_by(|&a, &b| cols[first + a].total_cmp(&cols[first + b]).then(b.cmp(&a)))
                .map_or(0, |k| kept[k].index)
        })
        .collect();
    let bound = StageBound {
        bound_cycles: optimum - SAFETY * optimum.abs(),
        iterations,
        columns: lp.columns,
        rows: lp.rows,
        classes: lp.classes,
    };
    Ok(Some((bound, options)))
}

/// The stage LP, built.
struct StageLp {
    problem: good_lp::solvers::highs::HighsProblem,
    /// Per operator, the options kept (in the order of its x columns).
    options: Vec<Vec<Seen>>,
    /// Per operator, the column index of its first x.
    x_index: Vec<usize>,
    columns: usize,
    rows: usize,
    classes: usize,
}

fn build(inst: &Instance, spread: f64) -> StageLp {
    let n = inst.ops.len();
    // Without loads there is no load work to charge: one class of ν 0.
    let least = Some(nu_classes(inst, spread))
        .filter(|l| !l.is_empty())
        .unwrap_or(vec![0.0]);
    let classes = least.len();
    let phased = inst.noc_row == NocRow::Phased;
    let options: Vec<Vec<Seen>> = (0..n)
        .map(|i| undominated(inst, i, &least, phased))
        .collect();
    let mut vars = ProblemVariables::new();
    let x: Vec<Vec<Variable>> = options
        .iter()
        .map(|kept| {
            kept.iter()
                .map(|_| vars.add(variable().min(0.0).max(1.0)))
                .collect()
        })
        .collect();
    let mut column = || vars.add(variable().min(0.0));
    let mut per_class = || -> Vec<Variable> { (0..classes).map(|_| column()).collect() };
    // Per stage 0..=n and class: HBM work, its part beside the compute phase, and the work
    // done ahead of the deadlines so far; per stage its duration.
    let w: Vec<Vec<Variable>> = (0..=n).map(|_| per_class()).collect();
    let y: Vec<Vec<Variable>> = (0..=n).map(|_| per_class()).collect();
    let ahead: Vec<Vec<Variable>> = (0..=n).map(|_| per_class()).collect();
    let d: Vec<Variable> = (0..=n).map(|_| column()).collect();
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
    let charged =
        |v: &[Variable]| -> Expression { v.iter().zip(&least).map(|(&v, &nu)| nu * v).sum() };
    let cold_per_cycle = cold_per_cycle_after(inst);
    let released_ahead = released_ahead_of_deadlines(inst);
    for xi in &x {
        add(&mut problem, xi.iter().sum::<Expression>().eq(1.0));
    }
    for k in 0..=n {
        // Work done by stage k in class c, less what is due by then (the class's share of
        // the loads of operators 0..=k), is what is ahead; it never falls below 0.
        for c in 0..classes {
            let before: Expression = if k == 0 {
                0.0.into()
            } else {
                ahead[k - 1][c].into()
            };
            let due: Expression = if k < n {
                let h = inst.ops[k].hbm_cycles.get();
                blend(k, &|o| if o.class == c { h } else { 0.0 })
            } else {
                0.0.into()
            };
            add(&mut problem, (ahead[k][c] - before - w[k][c] + due).eq(0.0));
        }
        // Windows: the work done ahead is at most that of the loads released by now and
        // not yet due (a load works only from its window's start).
        if let Some(released) = &released_ahead {
            add(
                &mut problem,
                ahead[k].iter().sum::<Expression>().leq(released[k]),
            );
        }
        let work: Expression = w[k].iter().sum();
        add(&mut problem, Expression::from(d[k]).geq(work));
        // SRAM: the operator executing (hot), load k's bytes (cold; due by now), and the
        // loads after it that have started, each holding at least its work ahead times the
        // fewest cold bytes per cycle of any of them. Where no load follows, nothing is due
        // later: work ahead there only lengthens stages, so the row leaves it out.
        let mut used = Expression::from(0.0);
        if cold_per_cycle[k].is_finite() {
            used += ahead[k]
                .iter()
                .map(|&a| cold_per_cycle[k] * a)
                .sum::<Expression>();
        }
        if k >= 1 {
            used += blend(k - 1, &|o| o.hot);
        }
        if k < n && inst.is_load(OpId(k)) {
            used += blend(k, &|o| o.cold);
        }
        add(&mut problem, used.leq(inst.sram_bytes.get() as f64));
        if k == 0 {
            add(&mut problem, Expression::from(d[0]).geq(charged(&w[0])));
            continue;
        }
        let i = k - 1;
        let exec = blend(i, &|o| o.exec);
        add(&mut problem, Expression::from(d[k]).geq(exec.clone()));
        let comm = blend(i, &|o| o.comm);
        add(
            &mut problem,
            Expression::from(d[k]).geq(comm + charged(&w[k])),
        );
        if phased {
            let comp = blend(i, &|o| o.comp);
            for c in 0..classes {
                add(&mut problem, Expression::from(y[k][c]).leq(w[k][c]));
            }
            add(
                &mut problem,
                y[k].iter().sum::<Expression>().leq(comp.clone()),
            );
            add(&mut problem, charged(&y[k]).leq(comp));
            add(
                &mut problem,
                Expression::from(d[k]).geq(exec + charged(&w[k]) - charged(&y[k])),
            );
        }
    }
    let x_index = options
        .iter()
        .scan(0, |next, kept| {
            let first = *next;
            *next += kept.len();
            Some(first)
        })
        .collect();
    StageLp {
        problem,
        options,
        x_index,
        columns,
        rows,
        classes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elk_stage::instance::OpOption;
    use elk_stage::units::{Bytes, Cycles};

    /// One load of 10 HBM cycles with `options`, alone in an instance.
    fn load_of(options: Vec<OpOption>) -> Instance {
        Instance::builder("one load", Bytes(1 << 20), 1e9)
            .op("op", Cycles(10.0), options)
            .build()
            .unwrap()
    }

    /// One load whose options are `(exec, comm, ν)`, without bytes.
    fn one_load(options: &[(f64, f64, f64)]) -> Instance {
        load_of(
            options
                .iter()
                .map(|&(exec, comm, nu)| OpOption::new(0, 0, exec, comm, nu))
                .collect(),
        )
    }

    fn kept(inst: &Instance, phased: bool) -> Vec<(f64, f64, usize)> {
        let least = nu_classes(inst, CLASS_SPREAD);
        undominated(inst, 0, &least, phased)
            .iter()
            .map(|s| (s.exec, s.comm, s.class))
            .collect()
    }

    #[test]
    fn only_options_no_other_covers_are_kept_and_equal_ones_once() {
        // (exec, comm): (10, 4) covers (12, 4) and (10, 5); it and (8, 6) trade.
        let all = one_load(&[
            (10.0, 4.0, 0.5),
            (12.0, 4.0, 0.5),
            (10.0, 5.0, 0.5),
            (8.0, 6.0, 0.5),
            (10.0, 4.0, 0.5),
        ]);
        assert_eq!(kept(&all, false), vec![(10.0, 4.0, 0), (8.0, 6.0, 0)]);
        // With the phased row a longer compute phase is worth keeping: (12, 4) has 8 cycles
        // of it where (10, 4) has 6, (10, 5) 5.
        assert_eq!(
            kept(&all, true),
            vec![(10.0, 4.0, 0), (12.0, 4.0, 0), (8.0, 6.0, 0)]
        );
        // A dearer ν class is worse: (10, 4) at ν 0.9 is covered, (9, 4) at ν 0.9 is not.
        let classes = one_load(&[(10.0, 4.0, 0.5), (10.0, 4.0, 0.9), (9.0, 4.0, 0.9)]);
        assert_eq!(kept(&classes, false), vec![(10.0, 4.0, 0), (9.0, 4.0, 1)]);
        // Fewer bytes are worth keeping for the SRAM row: (12, 4) with half the bytes of
        // (10, 4) stays, (12, 4) with as many goes.
        let bytes = |cold: u64, exec: f64| OpOption::new(cold, cold, exec, 4.0, 0.5);
        let memory = load_of(vec![bytes(10, 10.0), bytes(5, 12.0), bytes(10, 12.0)]);
        assert_eq!(kept(&memory, false), vec![(10.0, 4.0, 0), (12.0, 4.0, 0)]);
    }

    #[test]
    fn the_options_are_the_instances_indices_not_the_kept_positions() {
        // Option 0 is covered by option 2 and cut; option 1 is slower than 2 in every way:
        // the LP keeps options 2 and 3 (positions 0 and 1) and weighs 2, the faster.
        let inst = one_load(&[
            (12.0, 4.0, 0.5),
            (13.0, 5.0, 0.5),
            (10.0, 4.0, 0.5),
            (30.0, 1.0, 0.5),
        ]);
        assert_eq!(kept(&inst, false), vec![(10.0, 4.0, 0), (30.0, 1.0, 0)]);
        let limit = Duration::from_secs(10);
        assert_eq!(stage_options(&inst, limit).unwrap(), Some(vec![2]));
        let (bound, options) = stage_bound_and_options(&inst, limit).unwrap().unwrap();
        assert_eq!(options, vec![2]);
        // The same LP as the bound alone, to the bit.
        assert_eq!(Some(bound), stage_bound(&inst, limit).unwrap());
    }

    #[test]
    fn a_window_keeps_a_loads_work_from_the_stages_before_it_opens() {
        // Two operators of 10 cycles, then one of 10 whose load is 20 HBM cycles: free, or
        // with a window of 2, the load works beside both (10 + 10 + 10 = 30 cycles); with a
        // window of 1 only beside the second (10 + 20 + 10 = 40). A rule that opened the
        // window a stage late would give 40 under the window of 2, above that optimum.
        let bound = |window: Option<u32>| {
            let op = |h: f64| (Cycles(h), vec![OpOption::new(1, 1, 10.0, 0.0, 0.0)]);
            let [a, b, c] = [op(0.0), op(0.0), op(20.0)];
            let inst = Instance::builder("late load", Bytes(1 << 20), 1e9)
                .preload_window(window)
                .op("a", a.0, a.1)
                .op("b", b.0, b.1)
                .op("c", c.0, c.1)
                .build()
                .unwrap();
            let b = stage_bound(&inst, Duration::from_secs(10))
                .unwrap()
                .unwrap();
            (b.bound_cycles / (1.0 - SAFETY) * 1e6).round() / 1e6
        };
        assert_eq!(bound(None), 30.0);
        assert_eq!(bound(Some(2)), 30.0);
        assert_eq!(bound(Some(1)), 40.0);
    }

    #[test]
    fn a_class_spans_its_least_nu_times_the_spread() {
        let inst = one_load(&[
            (1.0, 0.0, 0.691),
            (1.0, 0.0, 0.345),
            (1.0, 0.0, 0.4),
            (1.0, 0.0, 0.46),
            (1.0, 0.0, 0.53),
        ]);
        assert_eq!(nu_classes(&inst, CLASS_SPREAD), vec![0.345, 0.46, 0.691]);
        assert_eq!(nu_classes(&inst, f64::INFINITY), vec![0.345]);
        assert_eq!(class_of(&[0.345, 0.46, 0.691], 0.53), 1);
    }
}
