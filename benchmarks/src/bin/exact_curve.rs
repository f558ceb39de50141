//! The exact-solver scaling curve (issue: exact solvers, item 8): solve time vs number of
//! operators on prefixes of Llama2-13B decoder layers (decode B32 KV2048 on ipu-pod4), for
//! fixed and free load order, each solve warm-started from the best heuristic and limited to
//! `--time-limit` seconds (default 60). Prints a Markdown table; one row per instance.
//!
//! `cargo run --release -p elk-benchmarks --bin exact_curve -- [--time-limit S] [--layers L]`
#![allow(clippy::unwrap_used)] // a benchmark that cannot load its input should stop loudly

use elk_model::build::{build_instance, InstanceOptions, OpRange};
use elk_solver::{Exact, ExactOptions};
use elk_stage::instance::{LoadOrder, NamedOrder};
use elk_stage::method::{Budget, Verdict};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<f64>().unwrap())
    };
    let limit = flag("--time-limit").unwrap_or(60.0);
    let layers = flag("--layers").unwrap_or(2.0) as usize;
    let (mut graph, chip) = elk_benchmarks::llama2_13b_pod4().unwrap();
    let per_layer = graph.layers.layer_range(0).unwrap().len();
    graph = {
        let mut params = elk_model::zoo::ZooParams::new(elk_model::graph::Mode::Decode, 32, 2048);
        params.layers = Some(layers);
        elk_model::zoo::build("llama2-13b", &params).unwrap()
    };
    let mut sizes: Vec<usize> = (1..=per_layer / 4).map(|q| 4 * q).collect();
    sizes.push(per_layer);
    for l in 2..=layers {
        sizes.push(l * per_layer);
    }
    println!("time limit {limit} s per solve; Llama2-13B decode B32 KV2048 on ipu-pod4, operators 0..m ({per_layer} per layer)");
    println!();
    println!("| order | operators | options | loads | status | makespan cycles | bound cycles | gap % | solve s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for order in [NamedOrder::Fixed, NamedOrder::Free] {
        for &m in &sizes {
            let opts = InstanceOptions {
                range: OpRange::Ops(0..m),
                load_order: LoadOrder::Named(order),
                ..InstanceOptions::default()
            };
            let inst = build_instance(&graph, &chip, &opts).unwrap();
            let options: usize = inst.ops.iter().map(|o| o.options.len()).sum();
            let exact = Exact::in_process(ExactOptions {
                warm_start: elk_heuristics::best(&inst).unwrap().map(|b| b.0),
                lp_bound: true,
                ..ExactOptions::default()
            });
            let r = exact.report(&inst, &Budget::seconds(limit)).unwrap();
            println!(
                "| {:?} | {m} | {options} | {} | {:?} | {} | {:.1} | {} | {:.2} |",
                order,
                inst.loads().len(),
                r.status,
                r.makespan_cycles
                    .map_or("-".into(), |t| format!("{:.1}", t.get())),
                r.lower_bound_cycles.get(),
                r.gap_pct.map_or("-".into(), |g| format!("{g:.3}")),
                r.solve_s
            );
            if r.status != Verdict::Optimal && m > per_layer {
                break;
            }
        }
    }
}
