//! Tiny instances worked by hand: each binding term, a load spread over several stages, the
//! prologue, and every kind of violation.

use elk_sim::{evaluate, validate, Binding, Violation};
use elk_stage::instance::{Instance, InstanceOp, LoadOrder, NamedOrder, OpOption};
use elk_stage::schedule::{fill_load_work, Schedule, Work};
use elk_stage::units::{Bytes, Cycles, OpId, Stage};

/// (H, exec, comm, ν, cold, hot) per operator, one option each.
pub fn inst(ops: &[(f64, f64, f64, f64, u64, u64)], sram: u64) -> Instance {
    ops.iter()
        .enumerate()
        .fold(
            Instance::builder("hand", Bytes(sram), 1e9),
            |b, (i, &(h, exec, comm, nu, cold, hot))| {
                b.push(InstanceOp {
                    name: format!("op{i}"),
                    hbm_cycles: Cycles(h),
                    options: vec![OpOption::new(cold, hot, exec, comm, nu)].into(),
                    flops: Some(1e6),
                    preload_window: None,
                    parallel: None,
                })
            },
        )
        .build()
        .unwrap()
}

/// `cycles` of operator `op`'s load in stage `stage`.
pub fn w(op: usize, stage: usize, cycles: f64) -> Work {
    Work {
        op: OpId(op),
        stage: Stage(stage),
        cycles: Cycles(cycles),
    }
}

/// Load ids from bare indices.
pub fn ids(order: &[usize]) -> Vec<OpId> {
    order.iter().copied().map(OpId).collect()
}

fn sched(i: &Instance, order: &[usize], work: Vec<Work>) -> Schedule {
    Schedule::new(
        i,
        "hand",
        vec![0; i.ops.len()],
        ids(order),
        work,
        Cycles::ZERO,
    )
}

#[test]
fn each_binding_term() {
    // op1's 50 HBM cycles load under op0 (stage 1): NoC 10 + 50·2 = 110 > exec 100 > HBM 50.
    // op2's 300 load under op1 (stage 2): HBM 300 > exec 100 > NoC 20 + 300·0.1 = 50.
    // Stage 3 runs op2 alone: compute 100. Prologue idle. T = 0 + 110 + 300 + 100 = 510.
    let i = inst(
        &[
            (0.0, 100.0, 10.0, 0.0, 0, 10),
            (50.0, 100.0, 20.0, 2.0, 5, 10),
            (300.0, 100.0, 5.0, 0.1, 5, 10),
        ],
        100,
    );
    let s = sched(&i, &[1, 2], vec![w(1, 1, 50.0), w(2, 2, 300.0)]);
    assert_eq!(validate(&i, &s), vec![]);
    let e = evaluate(&i, &s);
    let bindings: Vec<Binding> = e.stages.iter().map(|st| st.binding).collect();
    assert_eq!(
        bindings,
        [Binding::Idle, Binding::Noc, Binding::Hbm, Binding::Compute]
    );
    assert_eq!(e.makespan_cycles, Cycles(510.0));
    assert_eq!(e.stages_bound, [1, 1, 1]);
    assert_eq!(
        (
            e.breakdown.overlapped,
            e.breakdown.noc_bound,
            e.breakdown.preload_only,
            e.breakdown.execute_only
        ),
        (Cycles(200.0), Cycles(10.0), Cycles(200.0), Cycles(100.0))
    );
    assert_eq!(e.hbm_utilisation, 350.0 / 510.0);
    assert_eq!(e.noc_utilisation, (110.0 + 50.0 + 5.0) / 510.0);
    // 3 MFLOP in 510 ns.
    assert!((e.tflops.unwrap() - 3e6 / 510e-9 / 1e12).abs() < 1e-9);
}

#[test]
fn a_load_spread_over_stages_and_the_prologue() {
    // op0's 40 must load in the prologue; op2's 250, started at stage 0, finds no spare time
    // there, fills stage 1 (100 under op0), and its last 150 extend stage 2 (op1 runs 100).
    let i = inst(
        &[
            (40.0, 100.0, 0.0, 0.0, 4, 8),
            (0.0, 100.0, 0.0, 0.0, 0, 8),
            (250.0, 100.0, 0.0, 0.0, 4, 8),
        ],
        100,
    );
    let work = fill_load_work(&i, &[0, 0, 0], &ids(&[0, 2]), &[Stage(0), Stage(0)]).unwrap();
    assert_eq!(work, [w(0, 0, 40.0), w(2, 1, 100.0), w(2, 2, 150.0)]);
    let s = sched(&i, &[0, 2], work);
    assert_eq!(validate(&i, &s), vec![]);
    let e = evaluate(&i, &s);
    assert_eq!(e.makespan_cycles, Cycles(40.0 + 100.0 + 150.0 + 100.0));
    assert_eq!(e.stages[0].binding, Binding::Hbm);
    assert_eq!(
        (
            e.breakdown.preload_only,
            e.breakdown.overlapped,
            e.breakdown.execute_only
        ),
        (Cycles(40.0 + 50.0), Cycles(200.0), Cycles(100.0))
    );
}

#[test]
fn memory_order_incomplete_late_and_window_violations() {
    // SRAM 100: op0 runs with hot 60 while op1's cold 50 waits → stage 1 holds 110 B.
    let i = inst(
        &[
            (10.0, 100.0, 0.0, 0.0, 5, 60),
            (20.0, 100.0, 0.0, 0.0, 50, 60),
            (30.0, 100.0, 0.0, 0.0, 5, 60),
        ],
        100,
    );
    let ok = vec![w(0, 0, 10.0), w(1, 1, 20.0), w(2, 2, 30.0)];
    let v = validate(&i, &sched(&i, &[0, 1, 2], ok.clone()));
    assert_eq!(
        v,
        [Violation::Memory {
            stage: 1,
            op: Some("op0".into()),
            used: 110,
            sram: 100
        }]
    );
    assert_eq!(
        v[0].to_string(),
        "stage 1 (op0): 110 B per core in use, SRAM 100 B (10 B over)"
    );

    let mut roomy = i.clone();
    roomy.sram_bytes = Bytes(1000);
    // Fixed order broken.
    let v = validate(&roomy, &sched(&i, &[1, 0, 2], ok.clone()));
    assert!(
        matches!(&v[0], Violation::LoadOrderPolicy { op, position: 0, rank: 1, .. } if op == "op1"),
        "{v:?}"
    );
    // Free order, but op1 (first in the order) still loads in stage 1 after op0 started in 0.
    let mut free = roomy.clone();
    free.load_order = LoadOrder::Named(NamedOrder::Free);
    let v = validate(&free, &sched(&i, &[1, 0, 2], ok.clone()));
    assert_eq!(
        v,
        [Violation::OrderOverlap {
            earlier: "op1".into(),
            later: "op0".into(),
            stage: 1,
            later_start: 0
        }]
    );
    // Incomplete: op2 gets 25 of 30.
    let v = validate(
        &roomy,
        &sched(
            &i,
            &[0, 1, 2],
            vec![w(0, 0, 10.0), w(1, 1, 20.0), w(2, 2, 25.0)],
        ),
    );
    assert_eq!(
        v,
        [Violation::IncompleteLoad {
            op: "op2".into(),
            loaded: 25.0,
            required: 30.0
        }]
    );
    assert!(v[0].to_string().contains("(5 missing)"));
    // Late: op0's data in stage 1, while op0 itself runs.
    let v = validate(
        &roomy,
        &sched(
            &i,
            &[0, 1, 2],
            vec![w(0, 1, 10.0), w(1, 1, 20.0), w(2, 2, 30.0)],
        ),
    );
    assert!(
        v.iter().any(|x| matches!(
            x,
            Violation::BadWork {
                op: 0,
                stage: 1,
                ..
            }
        )),
        "{v:?}"
    );
    // Window W = 1: op2 (stage 3) may start at stage 2 at the earliest.
    let mut windowed = roomy.clone();
    windowed.preload_window = Some(1);
    let v = validate(
        &windowed,
        &sched(
            &i,
            &[0, 1, 2],
            vec![w(0, 0, 10.0), w(1, 1, 20.0), w(2, 1, 30.0)],
        ),
    );
    assert_eq!(
        v,
        [Violation::Window {
            op: "op2".into(),
            start: 1,
            earliest: 2
        }]
    );
    // op2's own window W_2 = 1 (a load released at run time): the same rule, its own
    // violation; the instance's window is not needed for it.
    let mut released = roomy.clone();
    released.ops[2].preload_window = Some(1);
    let early = sched(
        &i,
        &[0, 1, 2],
        vec![w(0, 0, 10.0), w(1, 1, 20.0), w(2, 1, 30.0)],
    );
    assert_eq!(
        validate(&released, &early),
        [Violation::Released {
            op: "op2".into(),
            start: 1,
            earliest: 2
        }]
    );
    assert_eq!(released.window_start(elk_stage::units::OpId(2)).index(), 2);
    let on_time = sched(
        &i,
        &[0, 1, 2],
        vec![w(0, 0, 10.0), w(1, 1, 20.0), w(2, 2, 30.0)],
    );
    assert_eq!(validate(&released, &on_time), []);
    // A wrong option index.
    let mut bad = sched(&i, &[0, 1, 2], ok);
    bad.options[1] = 3;
    assert_eq!(
        validate(&roomy, &bad),
        [Violation::NoSuchOption {
            op: "op1".into(),
            index: 3,
            available: 1
        }]
    );
}
