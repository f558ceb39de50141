//! The re-timing LP: never worse than its input and always valid on the random corpus, equal
//! to the proven optimum when given an optimal schedule, and the LP optimum on instances
//! worked out by hand (each one built so that dropping one rule of the LP changes the answer).

use elk_solver::{retime, Exact, RetimeReport, RetimeStop, Retimed};
use elk_stage::corpus::{random_instance, RandomSpec};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder, OpOption};
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved, StopReason};
use elk_stage::schedule::{Schedule, Work};
use elk_stage::units::{Bytes, Cycles, OpId, Stage};

const REL: f64 = 1e-6;

fn close(a: Cycles, b: Cycles) -> bool {
    (a - b).abs().get() <= REL * a.get().abs().max(b.get().abs()).max(1.0)
}

/// The report's own consistency: the LP optimum is the simulator's makespan of the schedule
/// when it improved, never above the input (the input is a feasible point of the LP), and
/// no `BUG:` note.
fn check_report(inst: &Instance, r: &RetimeReport, what: &str) {
    let name = &inst.name;
    assert_eq!(r.stop, RetimeStop::Solved, "{name}: {what}");
    assert!(
        r.notes.iter().all(|n| !n.starts_with("BUG")),
        "{name}: {what}: {:?}",
        r.notes
    );
    assert_eq!(
        elk_sim::validate(inst, &r.schedule),
        vec![],
        "{name}: {what}"
    );
    let t = elk_sim::evaluate(inst, &r.schedule).makespan_cycles;
    assert_eq!(t, r.makespan_cycles, "{name}: {what}");
    let obj = r.objective_cycles.unwrap();
    assert!(
        obj <= r.input_cycles * (1.0 + REL),
        "{name}: {what}: LP optimum {obj} above the input {}",
        r.input_cycles
    );
    if r.improved() {
        assert!(close(t, obj), "{name}: {what}: simulator {t} vs LP {obj}");
    } else {
        assert!(
            close(obj, r.input_cycles),
            "{name}: {what}: no gain, yet LP {obj}"
        );
    }
}

/// 20 instances of the study spec and 40 tiny ones (4–8 operators, up to 4 options).
pub(super) fn corpus() -> Vec<Instance> {
    let mut instances: Vec<Instance> = (0..20)
        .map(|seed| random_instance(seed, &RandomSpec::study()))
        .collect();
    instances.extend(
        (300..340).map(|seed| random_instance(seed, &RandomSpec::tiny(4 + (seed % 5) as usize, 4))),
    );
    instances
}

#[test]
fn retimed_heuristics_are_valid_and_never_worse_on_the_corpus() {
    let instances = corpus();
    let (mut runs, mut improved) = (0, 0);
    for inst in &instances {
        for name in elk_heuristics::NAMES
            .iter()
            .chain(&elk_heuristics::VARIANTS)
        {
            let inner = elk_heuristics::by_name(name).unwrap();
            let Some((s, t)) = elk_heuristics::judged(inst, inner.as_ref()).unwrap() else {
                continue;
            };
            let r = retime(inst, &s, "test", None).unwrap();
            check_report(inst, &r, name);
            assert_eq!(r.input_cycles, t, "{}: {name}", inst.name);
            assert!(r.makespan_cycles <= t, "{}: {name}", inst.name);
            // The decisions are the input's.
            assert_eq!(r.schedule.options, s.options);
            assert_eq!(r.schedule.load_order, s.load_order);
            runs += 1;
            improved += usize::from(r.improved());
            // The method wrapper: same schedule, named, judged by the one path.
            let m = Retimed::new(inner).without_timings();
            assert_eq!(m.name(), format!("{name}+retime"));
            let judged = elk_sim::run_judged(inst, &m, &Budget::default()).unwrap();
            assert_eq!(
                judged.makespan(),
                Some(r.makespan_cycles),
                "{}: {name}",
                inst.name
            );
            assert_eq!(judged.schedule().unwrap().method, format!("{name}+retime"));
            assert!(
                judged
                    .solved
                    .notes
                    .iter()
                    .any(|n| n.starts_with("re-timed")),
                "{:?}",
                judged.solved.notes
            );
        }
    }
    // Not vacuous: the heuristics leave load work to gain on a good share of the corpus.
    assert!(runs >= 300, "{runs} runs");
    assert!(improved * 10 >= runs, "{improved} of {runs} improved");
}

#[test]
fn retiming_an_optimal_schedule_gives_the_optimum() {
    let mut optimal = 0;
    let instances = (0..60)
        .map(|seed| random_instance(seed, &RandomSpec::tiny(2 + (seed % 3) as usize, 3)))
        .chain((100..120).map(|seed| random_instance(seed, &RandomSpec::tiny(5, 4))))
        .chain((0..5).map(|seed| random_instance(seed, &RandomSpec::study())));
    for inst in instances {
        let exact = Exact::default();
        let solved = exact.schedule(&inst, &Budget::default()).unwrap();
        let Outcome::Optimal(s) = &solved.outcome else {
            assert!(
                matches!(solved.outcome, Outcome::Infeasible { .. }),
                "{}: {:?}",
                inst.name,
                solved.outcome
            );
            // The wrapper passes a verdict without a schedule through.
            let r = Retimed::new(Box::new(Given(solved.clone())))
                .schedule(&inst, &Budget::default())
                .unwrap();
            assert_eq!(r, solved);
            continue;
        };
        let t = elk_sim::judged_makespan(&inst, s).unwrap();
        let r = retime(&inst, s, "exact-milp+retime", None).unwrap();
        check_report(&inst, &r, "exact");
        // The LP cannot beat the optimum (it would be a schedule below it) and must reach it
        // (the optimum's own work is feasible).
        let obj = r.objective_cycles.unwrap();
        assert!(close(obj, t), "{}: LP {obj} vs optimum {t}", inst.name);
        assert!(close(r.makespan_cycles, t), "{}", inst.name);
        // Through the method an optimum stays an optimum.
        let wrapped = Retimed::new(Box::new(Given(solved.clone())))
            .schedule(&inst, &Budget::default())
            .unwrap();
        let Outcome::Optimal(ws) = &wrapped.outcome else {
            panic!("{}: {:?}", inst.name, wrapped.outcome)
        };
        assert!(close(elk_sim::judged_makespan(&inst, ws).unwrap(), t));
        optimal += 1;
    }
    assert!(optimal >= 60, "{optimal} optimal");
}

/// A method that returns a given result.
struct Given(Solved);

impl Given {
    fn heuristic(s: Schedule) -> Given {
        Given(Solved::completed(Outcome::heuristic(Ok(s))))
    }
}

impl Method for Given {
    fn name(&self) -> &str {
        "given"
    }
    fn schedule(&self, _: &Instance, _: &Budget) -> Result<Solved, MethodError> {
        Ok(self.0.clone())
    }
}

fn work(entries: &[(usize, usize, f64)]) -> Vec<Work> {
    entries
        .iter()
        .map(|&(j, k, c)| Work {
            op: OpId(j),
            stage: Stage(k),
            cycles: Cycles(c),
        })
        .collect()
}

fn schedule(inst: &Instance, order: &[usize], entries: &[(usize, usize, f64)]) -> Schedule {
    let order = order.iter().copied().map(OpId).collect();
    Schedule::new(
        inst,
        "given",
        vec![0; inst.ops.len()],
        order,
        work(entries),
        Cycles::ZERO,
    )
}

fn retimed(inst: &Instance, s: &Schedule) -> RetimeReport {
    let r = retime(inst, s, "given+retime", None).unwrap();
    check_report(inst, &r, "by hand");
    r
}

#[test]
fn the_noc_term_limits_how_much_load_hides_under_an_operator() {
    // a runs 100 cycles with 40 of NoC shifts; b's 150 HBM cycles cost ν = 1 NoC cycle each.
    // Loaded in the prologue: 150 + 100 + 50 = 300. Under a, at most 60 fit before the NoC
    // binds (40 + w ≤ 100): d0 = 150 − w1, d1 = max(100, 40 + w1), the sum is 190 for any
    // w1 ≥ 60, so T = 190 + 50 = 240. (An LP without the NoC term claims 200.)
    let inst = Instance::builder("noc", Bytes(100), 1e9)
        .op(
            "a",
            Cycles(0.0),
            vec![OpOption::new(0, 10, 100.0, 40.0, 0.0)],
        )
        .op(
            "b",
            Cycles(150.0),
            vec![OpOption::new(10, 10, 50.0, 0.0, 1.0)],
        )
        .build()
        .unwrap();
    let s = schedule(&inst, &[1], &[(1, 0, 150.0)]);
    let r = retimed(&inst, &s);
    assert_eq!(r.input_cycles, Cycles(300.0));
    assert!(close(r.objective_cycles.unwrap(), Cycles(240.0)), "{r:?}");
    assert!(close(r.makespan_cycles, Cycles(240.0)), "{r:?}");
    // Through the method: the note says what the LP gained.
    let solved = Retimed::new(Box::new(Given::heuristic(s)))
        .without_timings()
        .schedule(&inst, &Budget::default())
        .unwrap();
    assert_eq!(solved.stop, StopReason::Completed);
    assert_eq!(
        solved.notes,
        ["re-timed: 0.0003 → 0.0002 ms (−20.00 %), 5 variables, 5 constraints"]
    );
}

#[test]
fn an_earlier_load_never_works_after_a_later_one_started() {
    // a runs 100 cycles, b and c 10 each and load 60 each. Both loaded in the prologue:
    // 120 + 100 + 10 + 10 = 240. The first load in the order started in the prologue before
    // the second, so it stays there (60); the second hides under a: 60 + 100 + 10 + 10 = 180.
    // (Without the order rule both would move under a: 130.)
    let opt = |exec: f64| vec![OpOption::new(10, 10, exec, 0.0, 0.0)];
    let inst = Instance::builder("order", Bytes(100), 1e9)
        .load_order(LoadOrder::Named(NamedOrder::Free))
        .op("a", Cycles(0.0), opt(100.0))
        .op("b", Cycles(60.0), opt(10.0))
        .op("c", Cycles(60.0), opt(10.0))
        .build()
        .unwrap();
    for order in [[1, 2], [2, 1]] {
        let s = schedule(&inst, &order, &[(1, 0, 60.0), (2, 0, 60.0)]);
        let r = retimed(&inst, &s);
        assert_eq!(r.input_cycles, Cycles(240.0), "{order:?}");
        assert!(
            close(r.objective_cycles.unwrap(), Cycles(180.0)),
            "{order:?}: {r:?}"
        );
        assert!(close(r.makespan_cycles, Cycles(180.0)), "{order:?}");
        // The first load kept all its work in the prologue.
        let first: Vec<_> = r
            .schedule
            .load_work
            .iter()
            .filter(|w| w.op == OpId(order[0]))
            .collect();
        assert_eq!(first.len(), 1, "{order:?}: {:?}", r.schedule.load_work);
        assert_eq!((first[0].stage, first[0].cycles), (Stage(0), Cycles(60.0)));
    }
}

#[test]
fn a_load_never_starts_earlier_than_it_did() {
    // c (cold 40) cannot be resident while a (hot 90) runs in an SRAM of 100, so it loads
    // under b: 10 + max(100, 150) + 10 = 170, the best these decisions allow. Starting it
    // in the prologue would claim 160 and overfill stage 1.
    let inst = Instance::builder("residency", Bytes(100), 1e9)
        .op("a", Cycles(0.0), vec![OpOption::new(0, 90, 10.0, 0.0, 0.0)])
        .op(
            "b",
            Cycles(0.0),
            vec![OpOption::new(0, 10, 100.0, 0.0, 0.0)],
        )
        .op(
            "c",
            Cycles(150.0),
            vec![OpOption::new(40, 40, 10.0, 0.0, 0.0)],
        )
        .build()
        .unwrap();
    let s = schedule(&inst, &[2], &[(2, 2, 150.0)]);
    let r = retimed(&inst, &s);
    assert_eq!(r.input_cycles, Cycles(170.0));
    assert!(close(r.objective_cycles.unwrap(), Cycles(170.0)), "{r:?}");
    assert!(!r.improved());
    assert_eq!(r.schedule.load_work, s.load_work);
}

#[test]
fn a_start_stage_may_lose_all_its_work() {
    // b's 100 HBM cycles split 50 / 50 over the prologue and a's 100-cycle stage: moving it
    // all under a empties the prologue (start moves later, residency shrinks): 0 + 100 + 10.
    let inst = Instance::builder("later start", Bytes(100), 1e9)
        .op(
            "a",
            Cycles(0.0),
            vec![OpOption::new(0, 10, 100.0, 0.0, 0.0)],
        )
        .op(
            "b",
            Cycles(100.0),
            vec![OpOption::new(10, 10, 10.0, 0.0, 0.0)],
        )
        .build()
        .unwrap();
    let s = schedule(&inst, &[1], &[(1, 0, 50.0), (1, 1, 50.0)]);
    let r = retimed(&inst, &s);
    assert_eq!(r.input_cycles, Cycles(160.0));
    assert!(close(r.makespan_cycles, Cycles(110.0)), "{r:?}");
    assert_eq!(r.schedule.load_work, work(&[(1, 1, 100.0)]));
}

#[test]
fn an_exhausted_budget_returns_the_input_with_a_time_limit() {
    let inst = random_instance(3, &RandomSpec::study());
    let inner = elk_heuristics::by_name("basic").unwrap();
    let (s, t) = elk_heuristics::judged(&inst, inner.as_ref())
        .unwrap()
        .unwrap();
    let solved = Retimed::new(inner)
        .schedule(&inst, &Budget::seconds(0.0))
        .unwrap();
    assert_eq!(solved.stop, StopReason::TimeLimit);
    let out = solved.outcome.schedule().unwrap();
    assert_eq!((&out.options, &out.load_work), (&s.options, &s.load_work));
    assert_eq!(elk_sim::judged_makespan(&inst, out).unwrap(), t);
    assert_eq!(out.method, "basic+retime");
}

#[test]
fn an_invalid_input_is_an_input_error() {
    let inst = Instance::builder("bad", Bytes(100), 1e9)
        .op(
            "a",
            Cycles(100.0),
            vec![OpOption::new(10, 10, 10.0, 0.0, 0.0)],
        )
        .build()
        .unwrap();
    let s = schedule(&inst, &[0], &[(0, 0, 50.0)]); // half of a's load
    let err = Retimed::new(Box::new(Given::heuristic(s)))
        .schedule(&inst, &Budget::default())
        .unwrap_err();
    assert!(matches!(err, MethodError::Input { .. }), "{err}");
}
