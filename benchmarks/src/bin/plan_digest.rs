//! Prints a digest of every zoo model's plan tables (one layer, decode B32 KV2048 or prefill
//! for vision models, on ipu-pod4 and ipu-mk2), with plans costed and seconds, so a change to
//! plan enumeration can be shown to leave every table byte-identical:
//! `cargo run --release -p elk-benchmarks --bin plan_digest` before and after, then diff.
//! The digest is FNV-1a over the `Debug` text of each table (f64 `Debug` round-trips exactly).

use elk_model::chip::ChipSpec;
use elk_model::cost::for_chip;
use elk_model::plan::plan_graph;
use elk_model::zoo::models;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut total = 0.0;
    for chip_name in ["ipu-pod4", "ipu-mk2"] {
        let chip = ChipSpec::preset(chip_name)?;
        for model in models() {
            let graph = model.one_layer()?;
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
            let e = plans.enumeration;
            println!(
                "{chip_name} {:<14} digest {}  {:>3} shapes  {:>9} plans  {:>9} costed  {:>9} skipped  {seconds:7.3} s",
                model.name,
                plans.tables_digest().trim_start_matches(elk_stage::hash::PREFIX),
                plans.unique.len(),
                e.plans,
                e.costed,
                e.skipped
            );
        }
    }
    println!("total plan-table time {total:.3} s");
    Ok(())
}
