//! Elk-Dyn and Elk-Full (faithful, and the greedy variants) on instances small enough to work
//! by hand.

use elk_heuristics::{ElkDyn, ElkDynGreedy, ElkFull, ElkFullGreedy};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder, OpOption};
use elk_stage::method::{Budget, Method};
use elk_stage::units::{Bytes, Cycles};

fn opt(cold: u64, hot: u64, exec: f64) -> OpOption {
    OpOption::new(cold, hot, exec, 0.0, 0.0)
}

fn inst(ops: Vec<(f64, Vec<OpOption>)>, sram: u64) -> Instance {
    ops.into_iter()
        .enumerate()
        .fold(
            Instance::builder("hand", Bytes(sram), 1e9)
                .load_order(LoadOrder::Named(NamedOrder::Free)),
            |b, (i, (h, options))| b.op(&format!("op{i}"), Cycles(h), options),
        )
        .build()
        .unwrap()
}

#[test]
fn the_timeline_overlaps_a_load_with_the_operator_before_and_stretches_its_shifts() {
    // op0: no HBM data, exec 100 of which comm 90. op1: H 50, ν 0.5 (V = 25 NoC cycles, so
    // the load takes half the NoC), exec 80. Backward from 0: op1 runs [-80, 0]; its load ends
    // at -80 and starts at -130. op0 may end at -80 with op1's data resident: its shifts get
    // half the NoC during the load (25 cycles of the 90) and the whole NoC before it, so it
    // runs [-195, -80] (115 cycles) — later than ending at -130 (start -230). T = 195, and the
    // stage model agrees: stage 1 = max(100, 90 + 50·0.5, 50) = 115, stage 2 = 80.
    let i = inst(
        vec![
            (0.0, vec![OpOption::new(0, 10, 100.0, 90.0, 0.0)]),
            (50.0, vec![OpOption::new(10, 10, 80.0, 0.0, 0.5)]),
        ],
        100,
    );
    let s = ElkDyn::default().schedule(&i, &Budget::default()).unwrap();
    let s = s.outcome.schedule().unwrap();
    assert_eq!(elk_sim::validate(&i, s), vec![]);
    assert_eq!(s.load_work.len(), 1);
    assert_eq!(s.load_work[0].stage.index(), 1);
    assert_eq!(s.makespan_cycles, Cycles(195.0));
}

#[test]
fn the_plan_rule_is_the_budgeted_argmin_of_exec_plus_the_noc_penalty() {
    // One operator with HBM data, two options: A (cold 10, exec 100, ν 1: π = H/2 = 30) and
    // B (cold 10, exec 110, ν 0: π = 0). The artifact's rule takes argmin exec + π: B (110 <
    // 130), although A executes faster.
    let i = inst(
        vec![(
            60.0,
            vec![
                OpOption::new(10, 20, 100.0, 0.0, 1.0),
                OpOption::new(10, 20, 110.0, 0.0, 0.0),
            ],
        )],
        100,
    );
    let s = ElkDyn::default().schedule(&i, &Budget::default()).unwrap();
    assert_eq!(s.outcome.schedule().unwrap().options, [1]);
}

#[test]
fn cost_aware_allocation_trades_a_resident_cold_layout() {
    // SRAM 100. op1's data (H 10) must be resident while op0 runs. With op1 on its fast
    // layout X (cold 40), op0 only fits B (hot 50, 200 cycles). Trading op1 to Y frees 35 B for
    // 10 cycles of op1's time, letting op0 run A (hot 90, 100 cycles): 100 + 60 beats 200 + 50.
    // op1's load hides under op0 (stage 1); T = 0 + 100 + 60.
    let i = inst(
        vec![
            (0.0, vec![opt(0, 90, 100.0), opt(0, 50, 200.0)]),
            (10.0, vec![opt(40, 40, 50.0), opt(5, 40, 60.0)]),
        ],
        100,
    );
    let solved = ElkDynGreedy::default()
        .schedule(&i, &Budget::default())
        .unwrap();
    let s = solved.outcome.schedule().unwrap();
    assert_eq!(s.options, [0, 1]);
    assert_eq!(elk_sim::validate(&i, s), vec![]);
    assert_eq!(s.makespan_cycles, Cycles(160.0));
}

#[test]
fn no_trade_when_it_does_not_pay() {
    // The same, but Y costs op1 150 extra cycles: keep X and run op0 on B (200 + 50).
    let i = inst(
        vec![
            (0.0, vec![opt(0, 90, 100.0), opt(0, 50, 200.0)]),
            (10.0, vec![opt(40, 40, 50.0), opt(5, 40, 200.0)]),
        ],
        100,
    );
    let s = ElkDynGreedy::default()
        .schedule(&i, &Budget::default())
        .unwrap()
        .outcome
        .schedule()
        .unwrap()
        .clone();
    assert_eq!(s.options, [1, 0]);
    assert_eq!(s.makespan_cycles, Cycles(250.0));
}

#[test]
fn elk_full_is_never_worse_than_elk_dyn_and_reports_its_orders() {
    // Two identical "layers" of a light op followed by a heavy load.
    let layer = |k: f64| {
        vec![
            (5.0 * k, vec![opt(2, 10, 40.0)]),
            (200.0, vec![opt(20, 30, 50.0)]),
        ]
    };
    let ops: Vec<_> = (0..3).flat_map(|_| layer(1.0)).collect();
    let i = inst(ops, 1000);
    let pairs: [(Box<dyn Method>, Box<dyn Method>); 2] = [
        (Box::new(ElkDyn::default()), Box::new(ElkFull::default())),
        (
            Box::new(ElkDynGreedy::default()),
            Box::new(ElkFullGreedy::default()),
        ),
    ];
    for (d, f) in pairs {
        let d = d.schedule(&i, &Budget::default()).unwrap();
        let f = f.schedule(&i, &Budget::default()).unwrap();
        let (sd, sf) = (d.outcome.schedule().unwrap(), f.outcome.schedule().unwrap());
        assert_eq!(elk_sim::validate(&i, sf), vec![]);
        assert!(sf.makespan_cycles <= sd.makespan_cycles);
        assert!(f.notes[0].contains("load orders tried"), "{:?}", f.notes);
    }
}
