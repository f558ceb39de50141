//! Parallel sets (issue 46, docs/core-groups.md). Target on a 2-core machine:
//! `compare --model mixtral-8x7b --expert-parallel` ≤ 5 s warm: both instances built from a
//! warm plan cache (with and without sets), every method on each, and their union.
#![allow(clippy::unwrap_used)] // a bench that cannot load its input should stop loudly

use criterion::{criterion_group, criterion_main, Criterion};
use elk_app::compare::{compare, union};
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::{self, ZooParams};
use elk_stage::instance::{LoadOrder, NamedOrder};
use std::time::Duration;

fn expert_parallel(c: &mut Criterion) {
    let mut group = c.benchmark_group("expert_parallel");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(60));
    let dir = std::env::temp_dir().join(format!("elk-bench-ep-{}", std::process::id()));
    let graph = zoo::build("mixtral-8x7b", &ZooParams::new(Mode::Decode, 32, 2048)).unwrap();
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let opts = |parallel: bool| InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        plan_cache: Some(PlanCache::at(&dir)),
        parallel,
        ..InstanceOptions::default()
    };
    let run = || {
        let with = build_instance(&graph, &chip, &opts(true)).unwrap();
        let without = build_instance(&graph, &chip, &opts(false)).unwrap();
        let a = compare(&with, None, true, Default::default(), &mut |_, _, _| {}).unwrap();
        let b = compare(&without, None, true, Default::default(), &mut |_, _, _| {}).unwrap();
        union(a, b)
    };
    // Warm the plan cache once, as a second `compare` run finds it.
    run();
    group.bench_function(
        "compare_mixtral-8x7b_decode_b32_ipu-pod4_expert_parallel_warm",
        |b| b.iter(run),
    );
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, expert_parallel);
criterion_main!(benches);
