//! Detailed simulator (issue: detailed simulator). Target on a 2-core machine: Llama2-70B
//! decode B32 KV2048 on ipu-pod4, Elk-Full's schedule, replayed in ≤ 2 s; events per second
//! are printed once (events of the replay / its median time).
#![allow(clippy::unwrap_used)] // a bench that cannot load its input should stop loudly

use criterion::{criterion_group, criterion_main, Criterion};
use elk_heuristics::ElkFull;
use elk_model::build::{build_instance, InstanceOptions};
use elk_sim::detailed::{simulate_detailed, DetailedConfig};
use elk_stage::instance::{LoadOrder, NamedOrder};
use elk_stage::method::{Budget, Method};
use std::time::{Duration, Instant};

fn detailed(c: &mut Criterion) {
    let (llama70, pod4) = elk_benchmarks::llama2_70b_pod4().unwrap();
    let opts = InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        ..InstanceOptions::default()
    };
    let inst = build_instance(&llama70, &pod4, &opts).unwrap();
    let solved = ElkFull::default()
        .schedule(&inst, &Budget::default())
        .unwrap();
    let sched = solved.outcome.schedule().unwrap().clone();
    let cfg = DetailedConfig::from_chip(&pod4);
    let started = Instant::now();
    let report = simulate_detailed(&inst, &sched, &pod4, &cfg).unwrap();
    let once = started.elapsed().as_secs_f64();
    println!(
        "detailed replay of Llama2-70B Elk-Full: {} events ({} steps) in {once:.3} s = {:.0} events/s",
        report.events,
        report.steps,
        report.events as f64 / once
    );
    let mut group = c.benchmark_group("detailed");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("llama2-70b_decode_b32_kv2048_ipu-pod4_elk-full", |b| {
        b.iter(|| simulate_detailed(&inst, &sched, &pod4, &cfg).unwrap())
    });
    group.finish();
}

criterion_group!(benches, detailed);
criterion_main!(benches);
