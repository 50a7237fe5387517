//! Reconcile cost: the audit of one Argo CD Application with 500 live resources, and the webhook
//! Application cache's lookups.
//!
//! - `audit/app_500`: stand-ins + grouping + input documents + all built-in rules + PolicyReport
//!   rendering for one Application (Deployments, Services, ConfigMaps, PreSync hook Jobs, and 25
//!   ExternalSecrets known only from `status.resources`). No API calls: this is the CPU part of
//!   `audit_once`, which the API listing adds to.
//! - `cache/objects_for_*`: `ClusterContext::objects_for` with 200 Applications of 500 resources
//!   each in the cache — tracked object, untracked object found by `status.resources`
//!   membership, and an object of no Application (the common case for Pods).
//! - `cache/refresh_one_of_200_apps_changed`: one change to one Application (the common case
//!   during a sync; off the request path): the watch reads that object into its typed view,
//!   then the index is rebuilt from the views already read.
//! - `cache/reindex_200_apps`: reading all 200 Applications from scratch (the first list).
//! - `admission/review_with_cache_app_500`: `handle_review` of a hook Job of one of those
//!   Applications, end to end with the cache as context.
//!
//! Run: `cargo bench --bench reconcile -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};
use syncguard::metrics::Metrics;
use syncguard::model::Resource;
use syncguard::policy::PolicySet;
use syncguard::policy::builtin::PolicySource;
use syncguard::reconciler::Config;
use syncguard::reconciler::audit::{Inventory, evaluate_inventory};
use syncguard::reconciler::live::{AppEntry, AppIndex, LiveObject};
use syncguard::webhook::cluster::IndexedApplication;
use syncguard::webhook::{
    AppContext, ClusterContext, Endpoint, ReviewOptions, State, handle_review,
};

const RESOURCES: usize = 500;
const EXTERNAL_SECRETS: usize = 25;

fn builtin() -> PolicySet {
    match PolicySource::Builtin.load() {
        Ok(set) => set,
        Err(e) => panic!("the built-in policies do not load: {e}"),
    }
}

fn tracking(app: &str, group: &str, kind: &str, name: &str) -> String {
    format!("{app}:{group}/{kind}:{app}/{name}")
}

/// Live object `i` of `app`: a Deployment, Service, ConfigMap or (every 10th) a PreSync hook
/// Job that needs a Secret produced by one of the ExternalSecrets.
fn live_object(app: &str, i: usize) -> Value {
    let wave = (i % 7) as i64 - 1;
    let meta = |kind: &str, group: &str, name: &str, extra: Value| {
        let mut annotations = json!({
            "argocd.argoproj.io/sync-wave": wave.to_string(),
            "argocd.argoproj.io/tracking-id": tracking(app, group, kind, name),
        });
        if let (Some(a), Some(e)) = (annotations.as_object_mut(), extra.as_object()) {
            a.extend(e.clone());
        }
        json!({"name": name, "namespace": app, "uid": format!("uid-{name}"), "resourceVersion": "1",
               "managedFields": [{"manager": "argocd-controller"}], "annotations": annotations})
    };
    match i % 10 {
        0 => {
            let name = format!("migrate-{i}");
            json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": meta("Job", "batch", &name, json!({"argocd.argoproj.io/hook": "PreSync"})),
                "spec": {"backoffLimit": 1, "template": {"spec": {"restartPolicy": "OnFailure",
                    "containers": [{"name": "m", "image": "registry.example.com/m:1",
                        "envFrom": [{"secretRef": {"name": format!("creds-{}", i % EXTERNAL_SECRETS)}}]}]}}}})
        }
        1..=3 => {
            let name = format!("api-{i}");
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": meta("Deployment", "apps", &name, json!({})),
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                        {"name": "api", "image": "registry.example.com/api:1",
                         "envFrom": [{"configMapRef": {"name": format!("cfg-{}", i + 3)}}]}]}}},
                "status": {"replicas": 2}})
        }
        4..=6 => {
            let name = format!("svc-{i}");
            json!({"apiVersion": "v1", "kind": "Service",
                "metadata": meta("Service", "", &name, json!({})),
                "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}})
        }
        _ => {
            let name = format!("cfg-{i}");
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": meta("ConfigMap", "", &name, json!({})),
                "data": {"key": "value"}})
        }
    }
}

/// An Application whose `status.resources` lists its live objects plus ExternalSecrets.
fn application(app: &str, objects: &[Value]) -> Value {
    let mut resources: Vec<Value> = objects
        .iter()
        .map(|o| {
            let api_version = o["apiVersion"].as_str().unwrap_or_default();
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            let hook = o["metadata"]["annotations"]["argocd.argoproj.io/hook"].is_string();
            json!({"group": group, "version": version, "kind": o["kind"], "namespace": app,
                   "name": o["metadata"]["name"], "hook": hook,
                   "syncWave": o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
                       .as_str().and_then(|w| w.parse::<i64>().ok()).unwrap_or(0)})
        })
        .collect();
    for k in 0..EXTERNAL_SECRETS {
        resources.push(json!({"group": "external-secrets.io", "version": "v1beta1",
            "kind": "ExternalSecret", "namespace": app, "name": format!("creds-{k}"), "syncWave": 3}));
    }
    json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
           "metadata": {"name": app, "namespace": "argocd", "uid": format!("app-{app}"),
                        "resourceVersion": "1"},
           "spec": {"destination": {"namespace": app}, "syncPolicy": {"automated": {}}},
           "status": {"resources": resources}})
}

fn inventory() -> Inventory {
    let objects: Vec<Value> = (0..RESOURCES).map(|i| live_object("shop", i)).collect();
    let app = application("shop", &objects);
    let mut live: Vec<LiveObject> = objects
        .into_iter()
        .map(|o| LiveObject::from_value(o).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    live.push(LiveObject::from_value(app.clone()).unwrap_or_else(|e| panic!("{e}")));
    Inventory {
        objects: live,
        applications: vec![Arc::new(
            AppEntry::from_value(&app).unwrap_or_else(|| panic!("an Application")),
        )],
        skipped_kinds: Vec::new(),
        installation: Default::default(),
        hooks: Default::default(),
    }
}

fn audit(c: &mut Criterion) {
    let policies = builtin();
    let config = Config::default();
    let inventory = inventory();
    let evaluation = evaluate_inventory(&inventory, &config, &policies);
    assert_eq!(evaluation.evaluated, RESOURCES + 1);
    let findings: usize = evaluation.by_namespace.values().map(Vec::len).sum();
    assert!(
        findings >= RESOURCES / 10,
        "every hook Job has findings: {findings}"
    );
    eprintln!("audit/app_500: {findings} findings");

    let mut group = c.benchmark_group("audit");
    group.sample_size(10);
    group.bench_function("app_500", |b| {
        b.iter(|| {
            let evaluation = evaluate_inventory(black_box(&inventory), &config, &policies);
            black_box(evaluation.reports(
                syncguard::output::policy_report::ReportApi::WgPolicy,
                config.report_max_results,
            ))
        });
    });
    group.finish();
}

fn store_with(apps: &[Value]) -> (ClusterContext, Writer<IndexedApplication>) {
    let mut writer = Writer::default();
    let ctx = ClusterContext::new(vec![writer.as_reader()]);
    writer.apply_watcher_event(&Event::Init);
    for app in apps {
        let object = IndexedApplication::from_value(app.clone());
        writer.apply_watcher_event(&Event::InitApply(object));
    }
    writer.apply_watcher_event(&Event::InitDone);
    assert!(ctx.refresh());
    (ctx, writer)
}

fn resource(v: Value) -> Resource {
    Resource::from_value(v, None).unwrap_or_else(|e| panic!("{e}"))
}

fn cache(c: &mut Criterion) {
    let apps: Vec<Value> = (0..200)
        .map(|a| {
            let name = format!("app-{a}");
            let objects: Vec<Value> = (0..RESOURCES).map(|i| live_object(&name, i)).collect();
            application(&name, &objects)
        })
        .collect();
    let (ctx, mut writer) = store_with(&apps);
    let tracked = resource(live_object("app-7", 10));
    let mut untracked = tracked.clone();
    if let Some(a) = untracked
        .raw
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove("argocd.argoproj.io/tracking-id");
    }
    let stranger = resource(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-5d9c-abcde", "namespace": "app-7"}}));
    assert_eq!(
        ctx.objects_for(&tracked).map(|o| o.set.len()),
        Some(RESOURCES - RESOURCES / 10 + EXTERNAL_SECRETS + 1)
    );
    assert!(ctx.objects_for(&untracked).is_some());
    assert!(ctx.objects_for(&stranger).is_none());

    let mut group = c.benchmark_group("cache");
    group.bench_function("objects_for_tracked_500", |b| {
        b.iter(|| black_box(ctx.objects_for(black_box(&tracked))));
    });
    group.bench_function("objects_for_membership_500", |b| {
        b.iter(|| black_box(ctx.objects_for(black_box(&untracked))));
    });
    group.bench_function("objects_for_no_app", |b| {
        b.iter(|| black_box(ctx.objects_for(black_box(&stranger))));
    });
    let mut changed = apps[7].clone();
    let mut version = 1u64;
    group.sample_size(20);
    // A change as the cache takes it: the watch reads the object into its typed view, then the
    // index is rebuilt.
    group.bench_function("refresh_one_of_200_apps_changed", |b| {
        b.iter(|| {
            version += 1;
            changed["metadata"]["resourceVersion"] = json!(version.to_string());
            let object = IndexedApplication::from_value(changed.clone());
            writer.apply_watcher_event(&Event::Apply(object));
            black_box(ctx.refresh())
        });
    });
    group.sample_size(10);
    group.bench_function("reindex_200_apps", |b| {
        b.iter(|| black_box(AppIndex::build(black_box(apps.iter()))));
    });
    group.finish();

    // End to end: one admission review of a hook Job of a 500-resource Application, with the
    // cache as context (decode, lookup, plan of the app, all rules, response).
    let state = State::new(
        builtin(),
        Arc::new(ctx.clone()),
        ReviewOptions::default(),
        1,
        Arc::new(Metrics::new()),
    );
    let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u", "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
            "name": "migrate-10", "namespace": "app-7", "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:argocd:argocd-application-controller"},
            "object": tracked.raw, "dryRun": false}});
    let body = serde_json::to_vec(&review).unwrap_or_else(|e| panic!("{e}"));
    let (status, answer) = handle_review(&state, Endpoint::Validate, &body);
    assert_eq!(status.as_u16(), 200);
    let answer: Value = serde_json::from_slice(&answer).unwrap_or_else(|e| panic!("{e}"));
    // The cache places the ExternalSecret producing the Job's Secret at Sync wave 3: SG201.
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert!(
        answer["response"]["status"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("SG201")),
        "{answer}"
    );
    let mut group = c.benchmark_group("admission");
    group.bench_function("review_with_cache_app_500", |b| {
        b.iter(|| black_box(handle_review(&state, Endpoint::Validate, black_box(&body))));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = audit, cache
}
criterion_main!(benches);
