//! Policy evaluation with all built-in rules: per object on one core, over 1k / 10k objects on
//! all cores, and end to end (load + input documents + evaluation + findings).
//!
//! Budget (DESIGN.md §7): `syncguard check` over 10,000 objects in ≤ 1 s on 2 cores, linear in
//! the number of objects. The input is `bench/manifests.rs`, the same objects `benches/load_plan.rs`
//! and `bench/check_vs_checkov.sh` use. Results and how to read them: BENCHMARKS.md.
//!
//! Run: `cargo bench --bench evaluate`

use std::hint::black_box;
use std::time::Duration;

#[path = "../bench/manifests.rs"]
mod manifests;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;
use syncguard::evaluate::{EvaluateOptions, build_inputs, evaluate};
use syncguard::manifest::load_str;
use syncguard::model::Resource;
use syncguard::policy::PolicySet;
use syncguard::policy::builtin::PolicySource;

use manifests::manifests;

const SIZES: [usize; 2] = [1_000, 10_000];

fn builtin() -> PolicySet {
    match PolicySource::Builtin.load() {
        Ok(set) => set,
        Err(e) => panic!("the built-in policies do not load: {e}"),
    }
}

fn resources(n: usize) -> Vec<Resource> {
    let loaded = load_str("bench.yaml", &manifests(n));
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors.first());
    assert_eq!(loaded.resources.len(), n);
    loaded.resources
}

/// The input document of object `i`, built within the whole 1k set (so its references resolve
/// as they do in a real check), after checking it is the kind the benchmark claims.
fn input_of(inputs: &[Value], i: usize, kind: &str) -> Value {
    let input = inputs[i].clone();
    assert_eq!(input["resource"]["kind"], kind, "object {i}");
    input
}

/// One object, all rules, one core: what the webhook pays per review (minus HTTP and JSON).
fn per_object(c: &mut Criterion) {
    let policies = builtin();
    let (inputs, _) = build_inputs(&resources(1_000), &EvaluateOptions::default());
    let cases = [
        // A well-formed PreSync hook Job: no findings.
        ("hook_job_clean", input_of(&inputs, 44, "Job")),
        // The seed-000 hook Job: no deadline, no backoffLimit, OnFailure (three findings).
        ("hook_job_seed000", input_of(&inputs, 4, "Job")),
        ("deployment", input_of(&inputs, 17, "Deployment")),
        ("configmap", input_of(&inputs, 1, "ConfigMap")),
    ];
    assert!(policies.evaluate(&cases[0].1).is_empty());
    assert!(policies.evaluate(&cases[1].1).len() >= 3);

    let mut group = c.benchmark_group("evaluate_one");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    for (name, input) in &cases {
        group.bench_with_input(BenchmarkId::from_parameter(name), input, |b, input| {
            b.iter(|| black_box(policies.evaluate(input)))
        });
    }
    group.finish();
}

/// The stages of `syncguard check` over many objects.
fn many(c: &mut Criterion) {
    let policies = builtin();
    let options = EvaluateOptions::default();
    let mut group = c.benchmark_group("evaluate_many");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    for n in SIZES {
        let text = manifests(n);
        let resources = resources(n);
        let (inputs, _) = build_inputs(&resources, &options);
        let report = evaluate(&resources, &policies, &options, Vec::new());
        assert!(
            report.findings.len() >= n / 50,
            "expected the generated problems to be reported, got {} findings",
            report.findings.len()
        );
        group.throughput(Throughput::Elements(n as u64));

        group.bench_with_input(BenchmarkId::new("build_inputs", n), &resources, |b, rs| {
            b.iter(|| black_box(build_inputs(rs, &options)))
        });
        // Rayon's global pool: all cores.
        group.bench_with_input(BenchmarkId::new("policy", n), &inputs, |b, inputs| {
            b.iter(|| black_box(policies.evaluate_many(inputs)))
        });
        group.bench_with_input(BenchmarkId::new("end_to_end", n), &text, |b, text| {
            b.iter(|| {
                let loaded = load_str("bench.yaml", text);
                black_box(evaluate(&loaded.resources, &policies, &options, Vec::new()))
            })
        });
    }
    group.finish();
}

/// Loading the built-in rules (parse, validate, compile to the VM, warm up): paid once per CLI
/// run and per webhook reload.
fn policy_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("policy_load");
    group.sample_size(10);
    group.bench_function("builtin", |b| b.iter(|| black_box(builtin())));
    group.finish();
}

criterion_group!(benches, per_object, many, policy_load);
criterion_main!(benches);
