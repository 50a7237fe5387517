//! Load + facts + plan over generated manifests at 1k / 10k / 20k resources.
//!
//! The stream (`bench/manifests.rs`, shared with `benches/evaluate.rs` and the comparison scripts)
//! mixes what real apps render: Deployments with env/volume references, Services, ConfigMaps,
//! Secrets, PreSync hook Jobs and a few Namespaces, spread over waves. Each stage is measured
//! separately and end to end, so a regression shows where it is.
//!
//! Run: `cargo bench --bench load_plan`

use std::hint::black_box;

#[path = "../bench/manifests.rs"]
mod manifests;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use syncguard::manifest::load_str;
use syncguard::model::argo::SyncFacts;
use syncguard::model::refs::resolve_all;
use syncguard::plan::{AppSettings, PlanInput, plan};

use manifests::manifests;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("load_facts_plan");
    group.sample_size(10);
    for n in [1_000usize, 10_000, 20_000] {
        let text = manifests(n);
        group.throughput(Throughput::Elements(n as u64));
        let loaded = load_str("bench.yaml", &text);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors.first());
        assert_eq!(loaded.resources.len(), n);
        let resources = loaded.resources;

        group.bench_with_input(BenchmarkId::new("load", n), &text, |b, text| {
            b.iter(|| black_box(load_str("bench.yaml", text)))
        });
        group.bench_with_input(BenchmarkId::new("facts", n), &resources, |b, rs| {
            b.iter(|| black_box(rs.iter().map(SyncFacts::of).collect::<Vec<_>>()))
        });
        group.bench_with_input(BenchmarkId::new("refs", n), &resources, |b, rs| {
            b.iter(|| black_box(resolve_all(rs, Some("default"))))
        });
        group.bench_with_input(BenchmarkId::new("plan", n), &resources, |b, rs| {
            b.iter(|| {
                let input = PlanInput::new(rs, &[], AppSettings::default());
                black_box(plan(&input))
            })
        });
        group.bench_with_input(BenchmarkId::new("end_to_end", n), &text, |b, text| {
            b.iter(|| {
                let loaded = load_str("bench.yaml", text);
                let input = PlanInput::new(&loaded.resources, &[], AppSettings::default());
                black_box(plan(&input))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
