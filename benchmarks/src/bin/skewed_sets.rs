//! An expert-parallel instance of an MoE model under a sampled routing (one step), for
//! `compare --instance` and `gap --instance`: where the experts receive unequal tokens, so
//! sizing groups by work and searching them differ (docs/core-groups.md §CG-4). The CLI builds
//! sets under the balanced routing only (`moe` has no sets yet).
//!
//! `cargo run --release -p elk-benchmarks --bin skewed_sets -- MODEL BATCH LAYERS ROUTING SEED
//! FILE` (e.g. `mixtral-8x7b 8 1 zipf:1.2 1 /tmp/skewed.json`): decode at KV 2048 on
//! ipu-pod4, free load order, step 0 of the routing drawn from SEED; prints each layer's
//! tokens per expert.
#![allow(clippy::unwrap_used)] // a benchmark tool that cannot build its input should stop loudly

use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::routing::Routing;
use elk_model::zoo::{self, ZooParams};
use elk_stage::instance::{LoadOrder, NamedOrder};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, batch, layers, routing, seed, file] = &args[..] else {
        panic!("usage: skewed_sets MODEL BATCH LAYERS ROUTING SEED FILE");
    };
    let (batch, layers, seed): (u64, usize, u64) = (
        batch.parse().unwrap(),
        layers.parse().unwrap(),
        seed.parse().unwrap(),
    );
    let zoo_model = zoo::find(model).unwrap();
    let moe = zoo_model.moe().expect("an MoE model");
    let mut params = ZooParams::new(Mode::Decode, batch, 2048);
    params.layers = Some(layers);
    let step = Routing::parse(routing)
        .unwrap()
        .sample(moe, layers, batch, seed, 0)
        .unwrap();
    let tokens = step.counts(moe.experts);
    for l in 0..layers {
        println!("layer {l}: tokens per expert {:?}", tokens.layer(l));
    }
    let graph = zoo_model.build_routed(&params, Some(&tokens)).unwrap();
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let opts = InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        parallel: true,
        ..InstanceOptions::default()
    };
    let mut inst = build_instance(&graph, &chip, &opts).unwrap();
    inst.name = format!("{} {routing} seed {seed}", inst.name);
    std::fs::write(file, inst.to_json().unwrap()).unwrap();
}
