//! The whole-model segment bound (docs/exact.md, "Whole models") against proven optima of
//! layered random chains: every price's bound, LP and MILP, stays below the optimum; it
//! beats the roofline on some; and the naive sum of per-segment optima (the trap the priced
//! boundaries avoid) does exceed some optimum, so this corpus would catch an unpriced bound.

use crate::solve_exact;
use elk_solver::segments::{segment_bound, SegmentOptions};
use elk_solver::ExactOptions;
use elk_stage::corpus::Rng;
use elk_stage::instance::{Instance, InstanceOp, LoadOrder, NamedOrder, OpOption};
use elk_stage::method::Verdict;
use elk_stage::units::{Bytes, Cycles};
use std::time::Duration;

const PRICES: [f64; 6] = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];

fn random_op(rng: &mut Rng, name: String) -> InstanceOp {
    let options = (0..rng.range(1, 3))
        .map(|_| {
            let cold = rng.range(1, 40);
            let exec = rng.real(10.0, 200.0);
            OpOption {
                cold: Bytes(cold),
                hot: Bytes(cold + rng.range(0, 60)),
                exec_cycles: Cycles(exec),
                comm_cycles: Cycles(rng.real(0.0, exec)),
                noc_per_hbm: [0.0, 0.25, 0.5, 1.0][rng.range(0, 3) as usize],
                groups: None,
                members: None,
            }
        })
        .collect::<Vec<_>>()
        .into();
    InstanceOp {
        name,
        hbm_cycles: Cycles(if rng.range(0, 3) > 0 {
            rng.real(10.0, 250.0)
        } else {
            0.0
        }),
        options,
        flops: None,
        preload_window: None,
        parallel: None,
    }
}

/// `layers` copies of a random 2-operator layer between a random head and tail operator.
pub(crate) fn layered(seed: u64) -> Instance {
    let mut rng = Rng::new(seed);
    let layers = 3 + (seed % 2) as usize;
    let head = random_op(&mut rng, "embed".into());
    let layer: Vec<InstanceOp> = (0..2)
        .map(|i| random_op(&mut rng, format!("op{i}")))
        .collect();
    let tail = random_op(&mut rng, "head".into());
    let mut ops = vec![head];
    for l in 0..layers {
        ops.extend(layer.iter().map(|op| InstanceOp {
            name: format!("l{l}.{}", op.name),
            ..op.clone()
        }));
    }
    ops.push(tail);
    let need = ops
        .iter()
        .map(|o| o.options.iter().map(|p| p.hot).min().unwrap_or_default())
        .max()
        .unwrap_or_default();
    Instance {
        format: elk_stage::instance::INSTANCE_FORMAT.into(),
        name: format!("layered seed {seed}"),
        sram_bytes: need + Bytes(rng.range(10, 90)),
        clock_hz: 1e9,
        load_order: if seed % 3 == 0 {
            LoadOrder::Named(NamedOrder::Fixed)
        } else {
            LoadOrder::Named(NamedOrder::Free)
        },
        preload_window: None,
        noc_row: elk_stage::instance::NocRow::Spec,
        ops,
    }
}

pub(crate) fn optimum(inst: &Instance) -> Option<Cycles> {
    let r = solve_exact(inst, &ExactOptions::default()).unwrap();
    match r.status {
        Verdict::Optimal => r.makespan_cycles,
        Verdict::Infeasible => None,
        other => panic!("{}: {other:?} without a time limit", inst.name),
    }
}

#[test]
fn segment_bounds_stay_below_proven_optima_and_beat_the_roofline() {
    let (mut checked, mut above_roofline, mut naive_above) = (0, 0, 0);
    for seed in 0..40 {
        let inst = layered(seed);
        let name = &inst.name;
        assert!(inst.layers().layers >= 3, "{name}: {:?}", inst.layers());
        let Some(t) = optimum(&inst) else { continue };
        checked += 1;
        let roof = elk_solver::bounds::roofline(&inst).best();
        for lp_only in [true, false] {
            let opts = SegmentOptions {
                prices: PRICES.to_vec(),
                lp_only,
                time_limit: Duration::from_secs(60),
                ..SegmentOptions::default()
            };
            let b = segment_bound(&inst, &opts).unwrap().unwrap();
            assert_eq!(b.prices.len(), PRICES.len(), "{name}");
            for p in &b.prices {
                assert!(
                    p.bound_cycles <= t.get() * (1.0 + 1e-9),
                    "{name}: μ = {} ({}) bound {} above the optimum {t}",
                    p.price,
                    if lp_only { "LP" } else { "MILP" },
                    p.bound_cycles
                );
            }
            if lp_only && b.bound_cycles > roof.get() * (1.0 + 1e-6) {
                above_roofline += 1;
            }
            if lp_only {
                // The price search (cutting planes on the LP's slopes) finds the concave
                // maximum: at least the best of the fixed grid, and still below the optimum.
                let searched = segment_bound(
                    &inst,
                    &SegmentOptions {
                        prices: Vec::new(),
                        ..opts.clone()
                    },
                )
                .unwrap()
                .unwrap();
                assert!(
                    searched.bound_cycles <= t.get() * (1.0 + 1e-9),
                    "{name}: searched bound {} above the optimum {t}",
                    searched.bound_cycles
                );
                let tol = elk_solver::segments::PRICE_TOLERANCE * b.bound_cycles.abs();
                assert!(
                    searched.bound_cycles >= b.bound_cycles - tol - 1e-9,
                    "{name}: the search found {} at μ = {} ({} prices), below the grid's {} at μ = {}",
                    searched.bound_cycles,
                    searched.price.unwrap_or(f64::NAN),
                    searched.prices.len(),
                    b.bound_cycles,
                    b.price.unwrap_or(f64::NAN)
                );
            }
        }
        // The trap: each segment solved as an instance of its own, summed.
        let structure = inst.layers();
        let cuts: Vec<usize> = (1..structure.layers)
            .map(|l| structure.prologue + l * structure.ops_per_layer)
            .chain([0, inst.ops.len()])
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let naive: Option<f64> = cuts
            .windows(2)
            .map(|w| {
                let sub = Instance {
                    ops: inst.ops[w[0]..w[1]].to_vec(),
                    ..inst.clone()
                };
                optimum(&sub).map(Cycles::get)
            })
            .sum();
        if naive.is_some_and(|n| n > t.get() * (1.0 + 1e-6)) {
            naive_above += 1;
        }
    }
    assert!(checked >= 20, "only {checked} feasible layered instances");
    assert!(
        above_roofline >= 3,
        "the segment bound beat the roofline on only {above_roofline} of {checked}"
    );
    assert!(
        naive_above >= 3,
        "the naive sum of segment optima exceeded only {naive_above} of {checked} optima"
    );
    eprintln!(
        "{checked} layered instances: segment bound above the roofline on {above_roofline}, naive sum above the optimum on {naive_above}"
    );
}

#[test]
fn phased_segment_bounds_stay_below_phased_optima() {
    // The same chains with the phased NoC row: every price's bound (the segments encode the
    // row, absorbed work at the least later ν) stays below the phased optimum, and the
    // phased bound is at least SPEC §4's on the same chain (the row only adds) and above it
    // on some, so segments that dropped the row would fail the last count.
    let (mut checked, mut tighter) = (0, 0);
    for seed in 0..40 {
        let spec = layered(seed);
        let phased = Instance {
            noc_row: elk_stage::instance::NocRow::Phased,
            ..spec.clone()
        };
        let name = &phased.name;
        let Some(t) = optimum(&phased) else { continue };
        checked += 1;
        let opts = SegmentOptions {
            prices: PRICES.to_vec(),
            lp_only: true,
            time_limit: Duration::from_secs(60),
            ..SegmentOptions::default()
        };
        let b = segment_bound(&phased, &opts).unwrap().unwrap();
        for p in &b.prices {
            assert!(
                p.bound_cycles <= t.get() * (1.0 + 1e-9),
                "{name}: μ = {} bound {} above the phased optimum {t}",
                p.price,
                p.bound_cycles
            );
        }
        let s = segment_bound(&spec, &opts).unwrap().unwrap();
        assert!(
            b.bound_cycles >= s.bound_cycles * (1.0 - 1e-9),
            "{name}: phased {} < SPEC {}",
            b.bound_cycles,
            s.bound_cycles
        );
        tighter += usize::from(b.bound_cycles > s.bound_cycles * (1.0 + 1e-6));
    }
    eprintln!("phased segment bounds: {checked} chains, tighter than SPEC's on {tighter}");
    assert!(checked >= 30, "only {checked} chains");
    assert!(
        tighter >= 1,
        "the phased row never tightened a segment bound"
    );
}

#[test]
fn coupled_bounds_lie_between_the_priced_search_and_the_chains_lp() {
    // The coupled LP (docs/exact.md, "The coupled relaxation") relaxes the whole chain's LP
    // relaxation, so it is at most that (and so at most the optimum); it keeps the
    // constraints the prices relax, so it is at least the searched price's bound. Both row
    // families (SPEC §4 and phased) on the layered chains. A coupling row that dropped its
    // prologue side or weighted the identical layers wrongly fails the first check on some
    // chain; one that let absorbed work cost less NoC than its class fails neither, which is
    // what the count of chains where classes beat the price search guards.
    let (mut checked, mut tighter, mut equal_to_lp) = (0, 0, 0);
    // Lazily refined classes: chains whose one-class LP is below the exact one (its solution
    // cannot lift), and chains where a merged round's solution lifted.
    let (mut merged_lower, mut merged_lifted) = (0, 0);
    for seed in 0..40 {
        for phased in [false, true] {
            let inst = Instance {
                noc_row: if phased {
                    elk_stage::instance::NocRow::Phased
                } else {
                    elk_stage::instance::NocRow::Spec
                },
                ..layered(seed)
            };
            let name = format!("{} (phased: {phased})", inst.name);
            let Some(t) = optimum(&inst) else { continue };
            checked += 1;
            let limit = Duration::from_secs(60);
            let c = elk_solver::segments::coupled_segment_bound(&inst, 1, limit)
                .unwrap()
                .unwrap()
                .bound_cycles;
            // The classes refined lazily from one class (ν rounded down to no decimals): the
            // same bound (docs/exact.md, "Classes refined lazily"), never above the optimum.
            // A lift check that accepted a solution that does not lift would stop at a
            // merged round below the exact LP on the chains counted in `merged_lower`.
            let lazy = elk_solver::segments::coupled_segment_bound_with(
                &inst,
                1,
                limit,
                elk_solver::segments::Classes::Lazy { start_digits: 0 },
            )
            .unwrap()
            .unwrap();
            assert!(
                (lazy.bound_cycles - c).abs() <= 1e-6 * c.abs()
                    && lazy.bound_cycles <= t.get() * (1.0 + 1e-9),
                "{name}: lazy classes {}, exact classes {c}, optimum {t}",
                lazy.bound_cycles
            );
            assert!(lazy.rounds.last().is_some_and(|r| r.proven), "{name}");
            let first = &lazy.rounds[0];
            merged_lower += usize::from(first.optimum_cycles < c * (1.0 - 1e-6));
            merged_lifted += usize::from(
                first.proven && lazy.rounds.len() == 1 && first.classes < exact_classes(&inst),
            );
            let (lp, _) = elk_solver::milp::lp_bound(
                &inst,
                elk_solver::milp::Linearisation::BigM,
                Some(limit),
            )
            .unwrap()
            .unwrap();
            assert!(
                c <= lp * (1.0 + 1e-9) && lp <= t.get() * (1.0 + 1e-9),
                "{name}: coupled {c}, chain LP {lp}, optimum {t}"
            );
            let searched = segment_bound(
                &inst,
                &SegmentOptions {
                    lp_only: true,
                    time_limit: limit,
                    ..SegmentOptions::default()
                },
            )
            .unwrap()
            .unwrap();
            let best_price = searched
                .prices
                .iter()
                .map(|p| p.bound_cycles)
                .fold(f64::NEG_INFINITY, f64::max);
            let tol = elk_solver::segments::PRICE_TOLERANCE * best_price.abs();
            assert!(
                c >= best_price - tol - 1e-9,
                "{name}: coupled {c} below the price search's {best_price}"
            );
            assert_eq!(searched.coupled_cycles, Some(c), "{name}");
            // With LPs the coupled LP is the bound (a price a tolerance above it is not a
            // stronger proof, and would differ from what `compare` reports).
            assert_eq!(searched.bound_cycles, c, "{name}");
            // The bound alone (what `compare --bound segment` asks for): no price searched.
            let alone = segment_bound(
                &inst,
                &SegmentOptions {
                    lp_only: true,
                    time_limit: limit,
                    price_search: false,
                    ..SegmentOptions::default()
                },
            )
            .unwrap()
            .unwrap();
            assert_eq!(
                (alone.bound_cycles, alone.price, alone.prices.len()),
                (c, None, 0),
                "{name}"
            );
            tighter += usize::from(c > best_price * (1.0 + 1e-6));
            equal_to_lp += usize::from(c >= lp * (1.0 - 1e-6));
        }
    }
    eprintln!(
        "coupled bounds: {checked} chains, above the price search on {tighter}, equal to the chain's LP on {equal_to_lp}; one merged class below the exact LP on {merged_lower}, a merged round lifted on {merged_lifted}"
    );
    assert!(checked >= 60, "only {checked} chains");
    assert!(tighter >= 1, "the ν classes never beat the price search");
    assert!(merged_lower >= 1, "merging classes never weakened the LP");
}

/// The distinct ν values of the chain's load options (the exact LP's classes).
fn exact_classes(inst: &Instance) -> usize {
    let mut nus: Vec<u64> = inst
        .ops
        .iter()
        .filter(|op| op.hbm_cycles.get() > 0.0)
        .flat_map(|op| op.options.iter().map(|o| o.noc_per_hbm.to_bits()))
        .collect();
    nus.sort_unstable();
    nus.dedup();
    nus.len()
}
