//! Load + facts + plan over generated manifests at 1k / 10k / 20k resources.
//!
//! The stream mixes what real apps render: Deployments with env/volume references, Services,
//! ConfigMaps, Secrets, PreSync hook Jobs and a few Namespaces, spread over waves. Each stage is
//! measured separately and end to end, so a regression shows where it is.
//!
//! Run: `cargo bench --bench load_plan`

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use syncguard::manifest::load_str;
use syncguard::model::argo::SyncFacts;
use syncguard::model::refs::resolve_all;
use syncguard::plan::{AppSettings, PlanInput, plan};

/// A realistic multi-document stream of `n` objects.
fn manifests(n: usize) -> String {
    let mut s = String::with_capacity(n * 700);
    for i in 0..n {
        let ns = format!("team-{}", i % 20);
        let wave = (i % 7) as i64 - 2;
        match i % 10 {
            0 => {
                let _ = write!(
                    s,
                    "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}-{i}\n"
                );
            }
            1 | 2 => {
                let _ = write!(
                    s,
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-{i}\n  namespace: {ns}\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\ndata:\n  LOG_LEVEL: info\n  FEATURE_X: \"true\"\n"
                );
            }
            3 => {
                let _ = write!(
                    s,
                    "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sec-{i}\n  namespace: {ns}\ntype: Opaque\nstringData:\n  password: hunter2\n"
                );
            }
            4 => {
                let _ = write!(
                    s,
                    "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate-{i}\n  namespace: {ns}\n  annotations:\n    argocd.argoproj.io/hook: PreSync\n    argocd.argoproj.io/sync-wave: \"{wave}\"\n    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation\nspec:\n  backoffLimit: 2\n  activeDeadlineSeconds: 600\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: migrate\n          image: registry.example.com/migrate:{i}\n          envFrom:\n            - secretRef:\n                name: sec-{}\n",
                    i - 1
                );
            }
            5 | 6 => {
                let _ = write!(
                    s,
                    "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\n  namespace: {ns}\nspec:\n  selector:\n    app: app-{i}\n  ports:\n    - port: 80\n      targetPort: 8080\n"
                );
            }
            _ => {
                let _ = write!(
                    s,
                    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  namespace: {ns}\n  labels:\n    app: app-{i}\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: app-{i}\n  template:\n    metadata:\n      labels:\n        app: app-{i}\n    spec:\n      serviceAccountName: runner\n      containers:\n        - name: app\n          image: registry.example.com/app:{i}\n          ports:\n            - containerPort: 8080\n          envFrom:\n            - configMapRef:\n                name: cfg-{}\n          env:\n            - name: PASSWORD\n              valueFrom:\n                secretKeyRef:\n                  name: sec-{}\n                  key: password\n",
                    i - i % 10 + 1,
                    i - i % 10 + 3
                );
            }
        }
    }
    s
}

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
