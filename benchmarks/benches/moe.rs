//! MoE load policies (issue 32). Target on a 2-core machine: `compare --routing uniform` on
//! Mixtral-8x7B decode B32 KV2048 @ ipu-pod4 with 100 sampled routings ≤ 5 s warm; its MoE
//! part is this bench (every policy on 100 steps, plan tables from a warm plan cache), the
//! rest is the default `compare` (benches/heuristics.rs). Issue 48's: `moe --model
//! deepseek-v2-lite` (decode B32, 100 uniform routings, its default policies) ≤ 10 s warm.
#![allow(clippy::unwrap_used)] // a bench that cannot load its input should stop loudly

use criterion::{criterion_group, criterion_main, Criterion};
use elk_app::moe::{run, MoeSpec, DEFAULT_METHODS};
use elk_model::build::InstanceOptions;
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::load_policy::Policy;
use elk_model::plan::PlanCache;
use elk_model::routing::Routing;
use elk_model::zoo::{self, ZooParams};
use elk_stage::instance::{LoadOrder, NamedOrder};
use std::time::Duration;

fn moe(c: &mut Criterion) {
    let mut group = c.benchmark_group("moe");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(60));
    let dir = std::env::temp_dir().join(format!("elk-bench-moe-{}", std::process::id()));
    let spec = MoeSpec {
        params: ZooParams::new(Mode::Decode, 32, 2048),
        chip: ChipSpec::preset("ipu-pod4").unwrap(),
        opts: InstanceOptions {
            load_order: LoadOrder::Named(NamedOrder::Free),
            plan_cache: Some(PlanCache::at(&dir)),
            ..InstanceOptions::default()
        },
        routing: Routing::Uniform,
        steps: 100,
        seed: 1,
        policies: vec![
            Policy::LoadAll,
            Policy::OnDemand,
            Policy::Predicted(2),
            Policy::Oracle,
        ],
        methods: DEFAULT_METHODS.map(String::from).to_vec(),
    };
    let model = zoo::find("mixtral-8x7b").unwrap();
    // Warm the plan cache once, as a second `compare` run finds it.
    run(model, &spec, &|_| {}).unwrap();
    group.bench_function(
        "policies_mixtral-8x7b_decode_b32_ipu-pod4_100_uniform_steps_warm",
        |b| b.iter(|| run(model, &spec, &|_| {}).unwrap()),
    );
    // DeepSeek-V2-Lite: 27 layers (26 MoE), 64 routed experts and 2 shared, top-6; about
    // 15,000 operators per step. The policies `moe` runs by default (predicted-K = top-k).
    let lite = zoo::find("deepseek-v2-lite").unwrap();
    let lite_spec = MoeSpec {
        policies: vec![
            Policy::LoadAll,
            Policy::OnDemand,
            Policy::Predicted(6),
            Policy::Oracle,
        ],
        ..spec.clone()
    };
    run(lite, &lite_spec, &|_| {}).unwrap();
    group.bench_function(
        "policies_deepseek-v2-lite_decode_b32_ipu-pod4_100_uniform_steps_warm",
        |b| b.iter(|| run(lite, &lite_spec, &|_| {}).unwrap()),
    );
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, moe);
criterion_main!(benches);
