//! Random tiny instances (2–6 operators, 1–4 options) from fixed seeds: reproducible,
//! with SRAM tight enough that memory binds, and every load-order policy.

use elk_model::instance::{Instance, InstanceOp, LoadOrder, NamedOrder, OpOption};

/// SplitMix64: a tiny seeded generator, so the corpus is the same on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    /// Uniform in [lo, hi), a multiple of 0.25 (exact in binary, readable in failures).
    pub fn real(&mut self, lo: f64, hi: f64) -> f64 {
        let steps = ((hi - lo) * 4.0) as u64;
        lo + self.range(0, steps.max(1) - 1) as f64 / 4.0
    }
}

/// A random instance with `n` operators and at most `max_options` options each.
pub fn random_instance(seed: u64, n: usize, max_options: u64) -> Instance {
    let mut rng = Rng::new(seed);
    let ops: Vec<InstanceOp> = (0..n)
        .map(|i| {
            let has_load = rng.range(0, 3) > 0;
            let options = (0..rng.range(1, max_options))
                .map(|_| {
                    let cold = rng.range(1, 40);
                    let exec = rng.real(10.0, 200.0);
                    OpOption {
                        cold,
                        hot: cold + rng.range(0, 60),
                        exec_cycles: exec,
                        comm_cycles: rng.real(0.0, exec / 2.0),
                        noc_per_hbm: [0.0, 0.5, 1.0, 2.0][rng.range(0, 3) as usize],
                    }
                })
                .collect();
            InstanceOp {
                name: format!("op{i}"),
                hbm_cycles: if has_load { rng.real(10.0, 300.0) } else { 0.0 },
                options,
                flops: None,
            }
        })
        .collect();
    // Tight SRAM: the largest smallest-hot footprint plus a little room for preloads.
    let need = ops
        .iter()
        .map(|o| o.options.iter().map(|p| p.hot).min().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let sram = need + rng.range(0, 70);
    let load_order = match rng.range(0, 2) {
        0 => LoadOrder::Named(NamedOrder::Fixed),
        1 => LoadOrder::Named(NamedOrder::Free),
        _ => LoadOrder::Displacement {
            max_displacement: 1,
        },
    };
    let preload_window = (rng.range(0, 3) == 0).then(|| rng.range(1, 3) as u32);
    Instance {
        format: "elk-instance/1".into(),
        name: format!("random seed {seed}"),
        sram_bytes: sram,
        clock_hz: 1e9,
        load_order,
        preload_window,
        ops,
    }
}
