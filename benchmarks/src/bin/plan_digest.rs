//! Prints a digest of every zoo model's plan tables (one layer, decode B32 KV2048 or prefill
//! for vision models, on ipu-pod4 and ipu-mk2), with plans costed and seconds, so a change to
//! plan enumeration can be shown to leave every table byte-identical:
//! `cargo run --release -p elk-benchmarks --bin plan_digest` before and after, then diff.
//! The digest is FNV-1a over the `Debug` text of each table (f64 `Debug` round-trips exactly).

use elk_model::chip::ChipSpec;
use elk_model::cost::for_chip;
use elk_model::graph::Mode;
use elk_model::plan::plan_graph;
use elk_model::zoo::{build, models, ZooParams};
use std::time::Instant;

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut total = 0.0;
    for chip_name in ["ipu-pod4", "ipu-mk2"] {
        let chip = ChipSpec::preset(chip_name)?;
        for model in models() {
            let mode = if model.supports_decode() {
                Mode::Decode
            } else {
                Mode::Prefill
            };
            let mut params = ZooParams::new(mode, 32, 2048);
            params.layers = Some(1);
            let graph = build(&model.name, &params)?;
            let start = Instant::now();
            let plans = match plan_graph(&graph, &chip, for_chip(&chip).as_ref()) {
                Ok(p) => p,
                Err(e) => {
                    println!("{chip_name} {:<14} no tables: {e}", model.name);
                    continue;
                }
            };
            let seconds = start.elapsed().as_secs_f64();
            total += seconds;
            let text: String = plans
                .unique
                .iter()
                .map(|u| format!("{:?}\n", u.2))
                .collect();
            let costed: u64 = plans.unique.iter().map(|u| u.2.plans).sum();
            println!(
                "{chip_name} {:<14} digest {:016x}  {:>3} shapes  {costed:>9} plans  {seconds:7.3} s",
                model.name,
                fnv(text.as_bytes()),
                plans.unique.len()
            );
        }
    }
    println!("total plan-table time {total:.3} s");
    Ok(())
}
