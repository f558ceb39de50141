//! On random instances of the shared corpus with binding SRAM, every load-order policy and
//! preload windows, every schedule a method returns validates, and every makespan is at
//! least the roofline bounds; so on the same corpus with loads released at run time
//! (operators' own windows, as MoE load policies make them). A fixed list of seeds checks
//! that the methods do find schedules there (so the properties cannot hold vacuously) and
//! that Elk-Full's permutations are exercised.

use elk_heuristics::{by_name, NAMES, VARIANTS};
use elk_stage::corpus::{
    random_instance, released_instance, released_strategy, strategy, Orders, RandomSpec,
};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::method::{Budget, Method, Outcome};
use elk_stage::schedule::Schedule;
use elk_stage::units::{Bytes, Cycles};
use proptest::prelude::*;

/// 1–9 operators, up to 4 options, SRAM the largest smallest-hot footprint plus 0–99 B (so
/// memory binds), every load-order policy (Elk-Full's permutations need a non-fixed one),
/// preload windows.
fn spec() -> RandomSpec {
    RandomSpec {
        ops: (1, 9),
        max_options: 4,
        sram_slack: (0, 99),
        orders: Orders::Drawn,
        window: true,
    }
}

/// The corpus counts bytes in ones and tens, below Static's 10 KiB sweep step: every
/// footprint and the SRAM are scaled by 1 KiB (which changes no comparison of bytes with
/// bytes, so the other methods schedule exactly the drawn instance).
fn in_kib(mut inst: Instance) -> Instance {
    inst.sram_bytes = Bytes(inst.sram_bytes.get() * 1024);
    for o in inst
        .ops
        .iter_mut()
        .flat_map(|op| op.options_mut().iter_mut())
    {
        o.cold = Bytes(o.cold.get() * 1024);
        o.hot = Bytes(o.hot.get() * 1024);
    }
    inst
}

/// The instance of the corpus named `random seed {seed}`, in KiB.
fn drawn(seed: u64) -> Instance {
    in_kib(random_instance(seed, &spec()))
}

/// Each method's schedule of `inst` (if it found one), after checking that it validates and
/// respects both roofline bounds (Σ H and Σ fastest exec).
fn checked(inst: &Instance, m: &dyn Method) -> Result<Option<Schedule>, TestCaseError> {
    let sum_h: Cycles = inst.ops.iter().map(|o| o.hbm_cycles).sum();
    let sum_min_exec: Cycles = inst
        .ops
        .iter()
        .map(|o| {
            o.options
                .iter()
                .map(|x| x.exec_cycles)
                .fold(Cycles(f64::INFINITY), Cycles::min)
        })
        .sum();
    let solved = m.schedule(inst, &Budget::default()).unwrap();
    let Some(s) = solved.outcome.schedule() else {
        // A heuristic proves nothing: finding no schedule is `Unknown`, never `Infeasible`.
        prop_assert!(
            matches!(solved.outcome, Outcome::Unknown { .. }),
            "{} on {}: {:?}",
            m.name(),
            inst.name,
            solved.outcome
        );
        return Ok(None);
    };
    prop_assert_eq!(
        elk_sim::validate(inst, s),
        vec![],
        "{} on {}",
        m.name(),
        inst.name
    );
    prop_assert!(
        s.makespan_cycles >= sum_h * (1.0 - 1e-12),
        "{} on {}",
        m.name(),
        inst.name
    );
    prop_assert!(
        s.makespan_cycles >= sum_min_exec * (1.0 - 1e-12),
        "{} on {}",
        m.name(),
        inst.name
    );
    Ok(Some(s.clone()))
}

/// The faithful methods, then the variants (indices 2, 3: elk-dyn, elk-full; 6, 7: the greedy
/// pair).
fn methods() -> Vec<Box<dyn Method>> {
    NAMES
        .iter()
        .chain(&VARIANTS)
        .map(|n| by_name(n).expect("registered"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn schedules_validate(inst in strategy(spec()).prop_map(in_kib)) {
        for m in methods() {
            checked(&inst, m.as_ref())?;
        }
    }

    #[test]
    fn schedules_with_released_loads_validate(inst in released_strategy(spec()).prop_map(in_kib)) {
        for m in methods() {
            checked(&inst, m.as_ref())?;
        }
    }
}

#[test]
fn every_method_schedules_most_instances_with_released_loads() {
    const SEEDS: u64 = 200;
    let names: Vec<String> = methods().iter().map(|m| m.name().to_string()).collect();
    let mut found = vec![0u64; names.len()];
    for seed in 0..SEEDS {
        let inst = in_kib(released_instance(seed, &spec()));
        for (k, m) in methods().iter().enumerate() {
            found[k] += u64::from(checked(&inst, m.as_ref()).unwrap().is_some());
        }
    }
    eprintln!("schedules found {found:?} of {SEEDS} ({names:?})");
    for (k, name) in names.iter().enumerate() {
        assert!(
            2 * found[k] >= SEEDS,
            "{name} found only {} of {SEEDS}",
            found[k]
        );
    }
}

#[test]
fn the_corpus_exercises_every_method_and_elk_fulls_orders() {
    const SEEDS: u64 = 200;
    let names: Vec<String> = methods().iter().map(|m| m.name().to_string()).collect();
    let mut found = vec![0u64; names.len()];
    let (mut permuted, mut reorderable) = (0u64, 0u64);
    for seed in 0..SEEDS {
        let inst = drawn(seed);
        if inst.load_order != LoadOrder::Named(NamedOrder::Fixed) && inst.loads().len() > 1 {
            reorderable += 1;
        }
        let schedules: Vec<Option<Schedule>> = methods()
            .iter()
            .map(|m| checked(&inst, m.as_ref()).unwrap())
            .collect();
        for (k, s) in schedules.iter().enumerate() {
            found[k] += u64::from(s.is_some());
        }
        // Elk-Full tries Elk-Dyn's runs too: never worse than Elk-Dyn (both pairs).
        for (d, f) in [(2, 3), (6, 7)] {
            if let Some(d) = &schedules[d] {
                let f = schedules[f]
                    .as_ref()
                    .expect("elk-full fails where elk-dyn succeeds");
                assert!(f.makespan_cycles <= d.makespan_cycles, "{}", inst.name);
            }
        }
        if let Some(f) = &schedules[3] {
            permuted += u64::from(f.load_order != inst.loads());
        }
    }
    eprintln!(
        "schedules found {found:?} of {SEEDS} ({names:?}); elk-full chose a permuted load order \
         on {permuted} of {reorderable} instances with a non-fixed policy and ≥ 2 loads"
    );
    // Observed: (filled in below from the run); the bounds leave room for changes in the
    // heuristics, not for a corpus on which they stop finding schedules.
    for (k, name) in names.iter().enumerate() {
        assert!(
            2 * found[k] >= SEEDS,
            "{name} found only {} of {SEEDS}",
            found[k]
        );
    }
    assert!(
        20 * permuted >= SEEDS,
        "elk-full chose a permuted order on only {permuted} of {SEEDS} instances"
    );
}
