//! The instances the studies share: operator windows cut from real zoo models (several
//! batch / KV / HBM settings), small enough to solve exactly, and seeded random instances.

use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::instance::{
    build_instance, Instance, InstanceOp, InstanceOptions, LoadOrder, NamedOrder, OpOption, OpRange,
};
use elk_model::zoo::{self, ZooParams};

/// Operator windows per (model, setting): (start, len) within the first layer.
const WINDOWS: [(usize, usize); 2] = [(0, 16), (16, 16)];

/// Real sub-instances: models × settings × windows, free load order.
pub fn real() -> elk_model::Result<Vec<Instance>> {
    let models = [
        "llama2-7b",
        "llama2-13b",
        "opt-1.3b",
        "gemma2-27b",
        "bert-base",
    ];
    // (batch, kv, HBM TB/s)
    let settings = [(8u64, 512u64, 4.0f64), (32, 2048, 16.0)];
    let mut out = Vec::new();
    for model in models {
        for &(batch, kv, tbps) in &settings {
            let mut params = ZooParams::new(Mode::Decode, batch, kv);
            params.layers = Some(1);
            let graph = zoo::build(model, &params)?;
            let mut chip = ChipSpec::preset("ipu-pod4")?;
            chip.hbm.bandwidth_bytes_per_s = tbps * 1e12;
            for &(start, len) in &WINDOWS {
                let end = (start + len).min(graph.ops.len());
                if end <= start + 2 {
                    continue;
                }
                let opts = InstanceOptions {
                    range: OpRange::Ops(start..end),
                    load_order: LoadOrder::Named(NamedOrder::Free),
                    preload_window: None,
                };
                let mut inst = build_instance(&graph, &chip, &opts)?;
                inst.name = format!("{model} B{batch} KV{kv} {tbps} TB/s ops {start}..{end}");
                out.push(inst);
            }
        }
    }
    Ok(out)
}

/// Whole first layers (several HBM-heavy blocks each, so preload orders matter), free order.
pub fn layers() -> elk_model::Result<Vec<Instance>> {
    let mut out = Vec::new();
    for model in ["llama2-7b", "llama2-13b"] {
        for &(batch, kv, tbps) in &[(8u64, 512u64, 4.0f64), (32, 2048, 16.0)] {
            let mut params = ZooParams::new(Mode::Decode, batch, kv);
            params.layers = Some(2);
            let graph = zoo::build(model, &params)?;
            let mut chip = ChipSpec::preset("ipu-pod4")?;
            chip.hbm.bandwidth_bytes_per_s = tbps * 1e12;
            let opts = InstanceOptions {
                range: OpRange::Layers(0..1),
                load_order: LoadOrder::Named(NamedOrder::Free),
                preload_window: None,
            };
            let mut inst = build_instance(&graph, &chip, &opts)?;
            inst.name = format!("{model} B{batch} KV{kv} {tbps} TB/s layer 0");
            out.push(inst);
        }
    }
    Ok(out)
}

/// SplitMix64, for reproducible random instances.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Random instances: 6–10 operators, 1–4 options, tight SRAM, free order.
pub fn random(count: u64) -> Vec<Instance> {
    (0..count)
        .map(|seed| {
            let mut rng = Rng::new(seed);
            let n = 6 + (rng.next_u64() % 5) as usize;
            let ops: Vec<InstanceOp> = (0..n)
                .map(|i| {
                    let k = 1 + (rng.next_u64() % 4) as usize;
                    let options = (0..k)
                        .map(|_| {
                            let cold = 1 + rng.next_u64() % 40;
                            let exec = rng.uniform(10.0, 200.0);
                            OpOption {
                                cold,
                                hot: cold + rng.next_u64() % 60,
                                exec_cycles: exec,
                                comm_cycles: rng.uniform(0.0, exec / 2.0),
                                noc_per_hbm: [0.0, 0.5, 1.0, 2.0][(rng.next_u64() % 4) as usize],
                            }
                        })
                        .collect();
                    InstanceOp {
                        name: format!("op{i}"),
                        hbm_cycles: if rng.next_u64() % 4 == 0 {
                            0.0
                        } else {
                            rng.uniform(10.0, 300.0)
                        },
                        options,
                        flops: None,
                    }
                })
                .collect();
            let need = ops
                .iter()
                .map(|o| o.options.iter().map(|p| p.hot).min().unwrap_or(0))
                .max()
                .unwrap_or(0);
            Instance {
                format: "elk-instance/1".into(),
                name: format!("random seed {seed}"),
                sram_bytes: need + 20 + rng.next_u64() % 80,
                clock_hz: 1e9,
                load_order: LoadOrder::Named(NamedOrder::Free),
                preload_window: None,
                ops,
            }
        })
        .collect()
}
