//! The shared corpus of random instances: one seeded generator, so "random seed 7" names the
//! same instance in the solver's cross-checks, the property tests, the studies and the
//! benches. [`random_instance`] draws from a [`RandomSpec`]; [`released_instance`] adds loads
//! released at run time (operators' own preload windows, as MoE load policies make them); with
//! the `proptest` feature, `strategy` and `released_strategy` wrap the same draws for property
//! tests.

use crate::instance::{Instance, InstanceOp, LoadOrder, Member, NamedOrder, OpOption, ParallelSet};
use crate::units::{Bytes, Cycles};

/// SplitMix64: a tiny seeded generator, so the corpus is the same on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (seeds are mixed, so 0, 1, 2 … give unrelated streams).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    /// Uniform in [lo, hi), a multiple of 0.25 (exact in binary, readable in failures).
    pub fn real(&mut self, lo: f64, hi: f64) -> f64 {
        let steps = ((hi - lo) * 4.0) as u64;
        lo + self.range(0, steps.max(1) - 1) as f64 / 4.0
    }
    /// Uniform in [lo, hi), full precision.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Which load-order policies a corpus draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Orders {
    /// Fixed, free or displacement 1, one third each.
    Drawn,
    /// Always this one.
    Always(LoadOrder),
}

/// The shape of a corpus: how many operators and options, how tight SRAM is, which load
/// orders and whether a preload window is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomSpec {
    /// Operators, lo..=hi (drawn unless lo = hi).
    pub ops: (usize, usize),
    /// Options per operator, 1..=max.
    pub max_options: u64,
    /// SRAM = the largest smallest-hot footprint plus lo..=hi bytes: tight enough that
    /// memory binds (the smaller the slack, the tighter).
    pub sram_slack: (u64, u64),
    /// Load-order policies.
    pub orders: Orders,
    /// One instance in three gets a preload window of 1 or 2.
    pub window: bool,
}

impl RandomSpec {
    /// `n` operators, up to `max_options` options, very tight SRAM (slack 0–70 B), every
    /// load-order policy, windows: the exact solvers' cross-check corpus.
    pub fn tiny(n: usize, max_options: u64) -> RandomSpec {
        RandomSpec {
            ops: (n, n),
            max_options,
            sram_slack: (0, 70),
            orders: Orders::Drawn,
            window: true,
        }
    }

    /// 6–10 operators, up to 4 options, SRAM slack 20–99 B, free order, no window: the
    /// studies' corpus (small enough to prove optimal, large enough for heuristics to err).
    pub fn study() -> RandomSpec {
        RandomSpec {
            ops: (6, 10),
            max_options: 4,
            sram_slack: (20, 99),
            orders: Orders::Always(LoadOrder::Named(NamedOrder::Free)),
            window: false,
        }
    }
}

/// The instance named `random seed {seed}` of the corpus `spec`.
pub fn random_instance(seed: u64, spec: &RandomSpec) -> Instance {
    let mut rng = Rng::new(seed);
    let n = if spec.ops.0 == spec.ops.1 {
        spec.ops.0
    } else {
        rng.range(spec.ops.0 as u64, spec.ops.1 as u64) as usize
    };
    let ops: Vec<InstanceOp> = (0..n)
        .map(|i| {
            let has_load = rng.range(0, 3) > 0;
            let options = (0..rng.range(1, spec.max_options))
                .map(|_| {
                    let cold = rng.range(1, 40);
                    let exec = rng.real(10.0, 200.0);
                    OpOption {
                        cold: Bytes(cold),
                        hot: Bytes(cold + rng.range(0, 60)),
                        exec_cycles: Cycles(exec),
                        comm_cycles: Cycles(rng.real(0.0, exec / 2.0)),
                        noc_per_hbm: [0.0, 0.5, 1.0, 2.0][rng.range(0, 3) as usize],
                        groups: None,
                        members: None,
                    }
                })
                .collect::<Vec<_>>();
            InstanceOp {
                name: format!("op{i}"),
                hbm_cycles: Cycles(if has_load { rng.real(10.0, 300.0) } else { 0.0 }),
                options: options.into(),
                flops: None,
                preload_window: None,
                parallel: None,
            }
        })
        .collect();
    let need = ops
        .iter()
        .map(|o| o.options.iter().map(|p| p.hot).min().unwrap_or_default())
        .max()
        .unwrap_or_default();
    let sram = need + Bytes(rng.range(spec.sram_slack.0, spec.sram_slack.1));
    let load_order = match spec.orders {
        Orders::Always(order) => order,
        Orders::Drawn => match rng.range(0, 2) {
            0 => LoadOrder::Named(NamedOrder::Fixed),
            1 => LoadOrder::Named(NamedOrder::Free),
            _ => LoadOrder::Displacement {
                max_displacement: 1,
            },
        },
    };
    let preload_window = if spec.window {
        (rng.range(0, 3) == 0).then(|| rng.range(1, 3) as u32)
    } else {
        None
    };
    Instance {
        format: crate::instance::INSTANCE_FORMAT.into(),
        name: format!("random seed {seed}"),
        sram_bytes: sram,
        clock_hz: 1e9,
        load_order,
        preload_window,
        noc_row: crate::instance::NocRow::Spec,
        ops,
    }
}

/// The instance `random seed {seed}` of `spec` with some loads released at run time: each
/// load, with probability 1/2, gets its own preload window W_j of 1–3 stages (docs/moe.md: an
/// expert fetched on demand waits for its layer's router). The windows come from a stream of
/// their own, so every other field is [`random_instance`]'s for the same seed, and the name,
/// `random seed {seed}, released`, says how to rebuild it.
pub fn released_instance(seed: u64, spec: &RandomSpec) -> Instance {
    let mut inst = random_instance(seed, spec);
    let mut rng = Rng::new(seed ^ RELEASED_STREAM);
    for op in inst.ops.iter_mut() {
        if op.hbm_cycles > Cycles::ZERO && rng.range(0, 1) == 0 {
            op.preload_window = Some(rng.range(1, 3) as u32);
        }
    }
    inst.name.push_str(", released");
    inst
}

/// Mixed into a seed for the stream of [`released_instance`]'s windows.
const RELEASED_STREAM: u64 = 0x5EED_0F5E_1EA5_ED00;

/// A proptest strategy over the corpus `spec` with released loads ([`released_instance`]).
#[cfg(feature = "proptest")]
pub fn released_strategy(spec: RandomSpec) -> impl proptest::strategy::Strategy<Value = Instance> {
    use proptest::strategy::Strategy;
    proptest::num::u64::ANY.prop_map(move |seed| released_instance(seed, &spec))
}

/// A proptest strategy over the corpus `spec`: it draws seeds, so a failing case prints
/// its instance's name (`random seed N`), which [`random_instance`] rebuilds anywhere.
#[cfg(feature = "proptest")]
pub fn strategy(spec: RandomSpec) -> impl proptest::strategy::Strategy<Value = Instance> {
    use proptest::strategy::Strategy;
    proptest::num::u64::ANY.prop_map(move |seed| random_instance(seed, &spec))
}

/// Two operators no schedule fits: b's cold 50 B must be resident while a runs (hot 60 B)
/// in 100 B of SRAM. What the tests of "no schedule" messages run on.
pub fn no_schedule_fits() -> Instance {
    Instance::builder("tight", Bytes(100), 1e9)
        .op(
            "a",
            Cycles(10.0),
            vec![OpOption::new(10, 60, 10.0, 0.0, 0.0)],
        )
        .op(
            "b",
            Cycles(10.0),
            vec![OpOption::new(50, 50, 10.0, 0.0, 0.0)],
        )
        .build()
        .expect("a valid instance")
}

/// `before`, a parallel set `par[2]:x` of two members on 4 cores, `after`, in 100 kB of SRAM.
/// The set's options, in this order: groups (2, 2), the fastest; (1, 3), slower; (1, 1), the
/// slowest; all with the same bytes and ν, so every plan rule prefers the fastest that is a
/// choice. `by_work` lists the allocations sized by work (docs/core-groups.md §CG-2.7). What
/// the tests of sets' rules and of sizing groups by work run on.
pub fn one_set(by_work: Vec<Vec<u64>>) -> Instance {
    let opt = |groups: Vec<u64>, exec: f64| OpOption {
        groups: Some(groups),
        ..OpOption::new(100, 200, exec, 10.0, 0.5)
    };
    let member = |op: &str| Member {
        ops: vec![op.into()],
    };
    let plain = || vec![OpOption::new(100, 200, 400.0, 0.0, 0.5)];
    Instance::builder("one set", Bytes(100_000), 1e9)
        .op("before", Cycles(300.0), plain())
        .push(InstanceOp {
            name: "par[2]:x".into(),
            hbm_cycles: Cycles(300.0),
            options: vec![
                opt(vec![2, 2], 400.0),
                opt(vec![1, 3], 900.0),
                opt(vec![1, 1], 1_500.0),
            ]
            .into(),
            flops: None,
            preload_window: None,
            parallel: Some(ParallelSet {
                chip_cores: 4,
                members: vec![member("x"), member("y")],
                by_work,
            }),
        })
        .op("after", Cycles(300.0), plain())
        .build()
        .expect("a valid instance")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_names_one_instance() {
        let spec = RandomSpec::study();
        let a = random_instance(7, &spec);
        assert_eq!(a, random_instance(7, &spec));
        assert_ne!(a, random_instance(8, &spec));
        assert!((6..=10).contains(&a.ops.len()));
        assert!(a.check("corpus").is_ok());
    }

    #[test]
    fn tiny_instances_draw_every_order_policy_and_some_windows() {
        let all: Vec<Instance> = (0..60)
            .map(|s| random_instance(s, &RandomSpec::tiny(3, 3)))
            .collect();
        let fixed = all
            .iter()
            .filter(|i| i.load_order == LoadOrder::Named(NamedOrder::Fixed))
            .count();
        let windows = all.iter().filter(|i| i.preload_window.is_some()).count();
        assert!(fixed > 5 && fixed < 40, "{fixed} fixed of 60");
        assert!(windows > 5 && windows < 40, "{windows} windows of 60");
        assert!(all.iter().all(|i| i.ops.len() == 3));
    }

    #[test]
    fn released_instances_add_only_operator_windows() {
        let spec = RandomSpec::tiny(6, 3);
        let (mut released, mut loads) = (0, 0);
        for seed in 0..40 {
            let plain = random_instance(seed, &spec);
            let mut inst = released_instance(seed, &spec);
            assert_eq!(inst.name, format!("random seed {seed}, released"));
            assert!(inst.check("corpus").is_ok());
            for (op, base) in inst.ops.iter().zip(&plain.ops) {
                if let Some(w) = op.preload_window {
                    assert!(base.hbm_cycles > Cycles::ZERO && (1..=3).contains(&w));
                    released += 1;
                }
            }
            loads += plain.loads().len();
            for op in inst.ops.iter_mut() {
                op.preload_window = None;
            }
            inst.name = plain.name.clone();
            assert_eq!(inst, plain);
        }
        assert!(
            4 * released > loads && 4 * released < 3 * loads,
            "{released} of {loads}"
        );
    }
}
