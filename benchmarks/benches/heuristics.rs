//! Heuristics end to end (issue: heuristics). Targets on a 2-core machine: Elk-Full on
//! Llama2-70B decode B32 KV2048 on ipu-pod4, plan tables included, ≤ 10 s; the default
//! `compare` (Llama2-13B decode B32 KV2048, every method) ≤ 10 s.
#![allow(clippy::unwrap_used)] // a bench that cannot load its input should stop loudly

use criterion::{criterion_group, criterion_main, Criterion};
use elk_heuristics::{ideal, ElkFull};
use elk_model::build::{build_instance, InstanceOptions};
use elk_stage::instance::{LoadOrder, NamedOrder};
use elk_stage::method::{Budget, Method};
use std::time::Duration;

fn free() -> InstanceOptions {
    InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        ..InstanceOptions::default()
    }
}

fn heuristics(c: &mut Criterion) {
    let mut group = c.benchmark_group("heuristics");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(120));
    let (llama70, pod4) = elk_benchmarks::llama2_70b_pod4().unwrap();
    group.bench_function(
        "elk-full_llama2-70b_decode_b32_kv2048_ipu-pod4_with_plans",
        |b| {
            b.iter(|| {
                let inst = build_instance(&llama70, &pod4, &free()).unwrap();
                ElkFull::default()
                    .schedule(&inst, &Budget::default())
                    .unwrap()
            })
        },
    );
    let (llama13, pod4) = elk_benchmarks::llama2_13b_pod4().unwrap();
    group.bench_function("compare_default_llama2-13b_all_methods_with_plans", |b| {
        b.iter(|| {
            let inst = build_instance(&llama13, &pod4, &free()).unwrap();
            for name in elk_heuristics::NAMES {
                let m = elk_heuristics::by_name(name).unwrap();
                elk_sim::run_judged(&inst, m.as_ref(), &Budget::default()).unwrap();
            }
            ideal(&inst)
        })
    });
    group.finish();
}

criterion_group!(benches, heuristics);
criterion_main!(benches);
