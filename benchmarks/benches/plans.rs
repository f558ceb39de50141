//! Plan tables of whole graphs (issue: intra-operator plans; issue 20's targets on a 2-core
//! machine): bert-base decode B8 KV512 @ ipu-mk2 ≤ 0.03 s (the reference artifact: 136 s
//! CPU); llama2-13b decode B32 KV2048 @ ipu-pod4 ≤ 0.5 s; and the reference artifact's other
//! figure, llama2-13b decode B8 KV2048 @ ipu-mk2 (1,472 cores; the reference: 199 s).
#![allow(clippy::unwrap_used)] // a bench that cannot load its input should stop loudly

use criterion::{criterion_group, criterion_main, Criterion};
use elk_model::cost::for_chip;
use elk_model::plan::plan_graph;
use std::hint::black_box;
use std::time::Duration;

fn plans(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan_tables");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    let (bert, mk2) = elk_benchmarks::bert_base_reference().unwrap();
    group.bench_function("bert-base_decode_b8_kv512_ipu-mk2", |b| {
        b.iter(|| plan_graph(black_box(&bert), &mk2, for_chip(&mk2).as_ref()).unwrap())
    });
    let (llama, pod4) = elk_benchmarks::llama2_13b_pod4().unwrap();
    group.measurement_time(Duration::from_secs(40));
    group.bench_function("llama2-13b_decode_b32_kv2048_ipu-pod4", |b| {
        b.iter(|| plan_graph(black_box(&llama), &pod4, for_chip(&pod4).as_ref()).unwrap())
    });
    let mk2 = elk_model::chip::ChipSpec::preset("ipu-mk2").unwrap();
    let llama_b8 = elk_model::zoo::build(
        "llama2-13b",
        &elk_model::zoo::ZooParams::new(elk_model::graph::Mode::Decode, 8, 2048),
    )
    .unwrap();
    group.bench_function("llama2-13b_decode_b8_kv2048_ipu-mk2", |b| {
        b.iter(|| plan_graph(black_box(&llama_b8), &mk2, for_chip(&mk2).as_ref()).unwrap())
    });
    group.finish();
}

criterion_group!(benches, plans);
criterion_main!(benches);
