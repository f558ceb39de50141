//! The shared random corpus (`elk_stage::corpus`, the instances the solver's cross-checks,
//! the property tests and the gap study draw from), benched: every heuristic judged on the
//! study spec's seeds 0..20, and the exact MILP on the cross-check's tiny instances.
#![allow(clippy::unwrap_used)] // a bench that cannot run its input should stop loudly

use criterion::{criterion_group, criterion_main, Criterion};
use elk_stage::corpus::{random_instance, RandomSpec};
use elk_stage::instance::Instance;
use elk_stage::method::Budget;
use std::hint::black_box;
use std::time::Duration;

fn corpus(c: &mut Criterion) {
    let study: Vec<Instance> = (0..20)
        .map(|seed| random_instance(seed, &RandomSpec::study()))
        .collect();
    let tiny: Vec<Instance> = (0..20)
        .map(|seed| random_instance(seed, &RandomSpec::tiny(4, 3)))
        .collect();
    let mut group = c.benchmark_group("corpus");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("every_heuristic_judged_on_20_study_instances", |b| {
        b.iter(|| {
            for inst in &study {
                for name in elk_heuristics::NAMES {
                    let m = elk_heuristics::by_name(name).unwrap();
                    black_box(elk_sim::run_judged(inst, m.as_ref(), &Budget::default()).unwrap());
                }
            }
        })
    });
    group.bench_function("exact_milp_on_20_tiny_instances", |b| {
        b.iter(|| {
            for inst in &tiny {
                let exact = elk_solver::Exact::in_process(elk_solver::ExactOptions::default());
                black_box(exact.report(inst, &Default::default()).unwrap());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, corpus);
criterion_main!(benches);
