//! The background audit against a mock API server (tower-test): what it lists, how it reads
//! Secrets, what PolicyReport it writes, and that an unchanged cluster causes no write.
//!
//! [`FakeApi`] answers like a kube-apiserver for the handful of endpoints the audit uses (LIST
//! with `limit`/`continue` and label selectors, the metadata-only Accept header, server-side
//! apply PATCH, DELETE, 404 for APIs that are not served) and records every call, so each test
//! asserts on the recorded traffic.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use http::{Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{Value, json};
use syncguard::metrics::{OutcomeLabels, ReconcilerMetrics};
use syncguard::policy::PolicySet;
use syncguard::policy::builtin::PolicySource;
use syncguard::reconciler::audit::{AuditSummary, audit_and_record, audit_once, audit_once_with};
use syncguard::reconciler::cached::WatchedApplication;
use syncguard::reconciler::context::ReportApis;
use syncguard::reconciler::{Config, Context};
use syncguard::webhook::load_policies;
use tokio::sync::watch;

/// One request as the fake API server saw it.
#[derive(Debug, Clone)]
struct Call {
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    accept: String,
    body: Option<Value>,
}

/// The cluster's state, keyed by resource plural.
#[derive(Debug, Default)]
struct World {
    objects: BTreeMap<&'static str, Vec<Value>>,
    not_served: BTreeSet<&'static str>,
    /// PolicyReports by namespace, as stored by the API server.
    reports: BTreeMap<String, Value>,
    /// OpenReports Reports by namespace.
    open_reports: BTreeMap<String, Value>,
    calls: Vec<Call>,
    /// The server returns at most this many items per page (it may return fewer than `limit`),
    /// so pagination is exercised with small lists.
    page: usize,
}

#[derive(Clone)]
struct FakeApi(Arc<Mutex<World>>);

impl FakeApi {
    fn new(world: World) -> Self {
        Self(Arc::new(Mutex::new(world)))
    }

    /// A client whose requests this fake answers until the client is dropped.
    fn client(&self) -> kube::Client {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let fake = self.clone();
        tokio::spawn(async move {
            while let Some((request, send)) = handle.next_request().await {
                let (parts, body) = request.into_parts();
                let bytes = body.collect_bytes().await.unwrap();
                let response = fake.respond(&parts, &bytes);
                send.send_response(response);
            }
        });
        kube::Client::new(service, "default")
    }

    fn calls(&self) -> Vec<Call> {
        self.0.lock().unwrap().calls.clone()
    }

    fn report(&self, ns: &str) -> Option<Value> {
        self.0.lock().unwrap().reports.get(ns).cloned()
    }

    fn open_report(&self, ns: &str) -> Option<Value> {
        self.0.lock().unwrap().open_reports.get(ns).cloned()
    }

    fn respond(&self, parts: &http::request::Parts, body: &[u8]) -> Response<Body> {
        let mut world = self.0.lock().unwrap();
        let path = parts.uri.path().to_string();
        let query: BTreeMap<String, String> = parts
            .uri
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                (decode(k), decode(v))
            })
            .collect();
        let accept = parts
            .headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body_json: Option<Value> = serde_json::from_slice(body).ok();
        world.calls.push(Call {
            method: parts.method.to_string(),
            path: path.clone(),
            query: query.clone(),
            accept: accept.clone(),
            body: body_json.clone(),
        });

        // /api/v1/[namespaces/NS/]PLURAL[/NAME] or /apis/G/V/[namespaces/NS/]PLURAL[/NAME]
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let rest = match segments.first() {
            Some(&"api") => &segments[2..],
            _ => &segments[3..],
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some(ns.to_string()), tail),
            _ => (None, rest),
        };
        let plural = rest.first().copied().unwrap_or_default().to_string();
        let name = rest.get(1).map(|s| s.to_string());

        if world.not_served.iter().any(|p| *p == plural) {
            return status(
                404,
                "NotFound",
                "the server could not find the requested resource",
            );
        }
        if plural == "policyreports" || plural == "reports" {
            let open = plural == "reports";
            return world.reports_endpoint(open, &parts.method, namespace, name, &query, body_json);
        }
        let all: Vec<Value> = world
            .objects
            .get(plural.as_str())
            .cloned()
            .unwrap_or_default();
        let items: Vec<Value> = all
            .into_iter()
            .filter(|o| {
                namespace.is_none() || o["metadata"]["namespace"].as_str() == namespace.as_deref()
            })
            .collect();
        if let Some(name) = &name
            && parts.method == http::Method::GET
        {
            return match items
                .iter()
                .find(|o| o["metadata"]["name"] == name.as_str())
            {
                Some(o) => json_response(200, o.clone()),
                None => status(404, "NotFound", "not found"),
            };
        }
        let metadata_only = accept.contains("as=PartialObjectMetadataList");
        let items: Vec<Value> = if metadata_only {
            items
                .into_iter()
                .map(|o| {
                    json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                                "metadata": o["metadata"]})
                })
                .collect()
        } else {
            // Like the real server: list items of built-in kinds carry no apiVersion/kind.
            items
                .into_iter()
                .map(|mut o| {
                    if let Some(obj) = o.as_object_mut() {
                        obj.remove("apiVersion");
                        obj.remove("kind");
                    }
                    o
                })
                .collect()
        };
        let page = world.page;
        list_page(items, &query, page, metadata_only)
    }
}

impl World {
    fn reports_endpoint(
        &mut self,
        open: bool,
        method: &http::Method,
        namespace: Option<String>,
        name: Option<String>,
        query: &BTreeMap<String, String>,
        body: Option<Value>,
    ) -> Response<Body> {
        let reports = if open {
            &mut self.open_reports
        } else {
            &mut self.reports
        };
        match (method.as_str(), namespace, name) {
            ("GET", ns, None) => {
                let selector = query.get("labelSelector").cloned().unwrap_or_default();
                let items: Vec<Value> = reports
                    .iter()
                    .filter(|(n, _)| ns.as_ref().is_none_or(|want| *n == want))
                    .map(|(_, r)| r.clone())
                    .filter(|r| matches_selector(r, &selector))
                    .collect();
                list_page(items, query, usize::MAX, false)
            }
            ("PATCH", Some(ns), Some(name)) => {
                let mut stored = body.unwrap_or(Value::Null);
                // What the API server adds; the writer must not mistake it for a change.
                stored["metadata"]["uid"] = json!(format!("report-{ns}"));
                stored["metadata"]["resourceVersion"] = json!("42");
                stored["metadata"]["managedFields"] =
                    json!([{"manager": "syncguard", "operation": "Apply"}]);
                stored["metadata"]["name"] = json!(name);
                reports.insert(ns, stored.clone());
                json_response(200, stored)
            }
            ("DELETE", Some(ns), Some(_)) => match reports.remove(&ns) {
                Some(_) => json_response(
                    200,
                    json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
                ),
                None => status(404, "NotFound", "policyreports \"syncguard\" not found"),
            },
            _ => status(405, "MethodNotAllowed", "not supported by the fake"),
        }
    }
}

fn matches_selector(report: &Value, selector: &str) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|term| {
        let (k, v) = term.split_once('=').unwrap_or((term, ""));
        report["metadata"]["labels"][k].as_str() == Some(v)
    })
}

fn list_page(
    items: Vec<Value>,
    query: &BTreeMap<String, String>,
    page: usize,
    metadata: bool,
) -> Response<Body> {
    let limit = query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(usize::MAX)
        .min(page.max(1));
    let start = query
        .get("continue")
        .and_then(|c| c.strip_prefix("page-"))
        .and_then(|c| c.parse::<usize>().ok())
        .unwrap_or(0);
    let end = (start + limit).min(items.len());
    let mut meta = json!({"resourceVersion": "100"});
    if end < items.len() {
        meta["continue"] = json!(format!("page-{end}"));
    }
    let kind = if metadata {
        "PartialObjectMetadataList"
    } else {
        "List"
    };
    let api_version = if metadata { "meta.k8s.io/v1" } else { "v1" };
    json_response(
        200,
        json!({"apiVersion": api_version, "kind": kind, "metadata": meta,
               "items": items.get(start..end).unwrap_or_default()}),
    )
}

fn json_response(code: u16, value: Value) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap())
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(&value).unwrap()))
        .unwrap()
}

fn status(code: u16, reason: &str, message: &str) -> Response<Body> {
    json_response(
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": message, "reason": reason, "code": code}),
    )
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

// ---- the cluster: the seed incident, live ----

const TRACKING: &str = "argocd.argoproj.io/tracking-id";

/// A live hook Job of the `orders` app.
fn hook_job(name: &str, secret: &str, restart: &str) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {
            "name": name, "namespace": "orders", "uid": format!("{name}-uid"), "resourceVersion": "7",
            "creationTimestamp": "2026-11-30T09:14:05Z",
            "managedFields": [{"manager": "argocd-controller", "operation": "Update"}],
            "annotations": {
                "argocd.argoproj.io/hook": "PreSync",
                "argocd.argoproj.io/sync-wave": "5",
                TRACKING: format!("orders:batch/Job:orders/{name}")
            }
        },
        "spec": {"template": {"spec": {
            "restartPolicy": restart,
            "containers": [{"name": "main", "image": "registry.example.com/orders/migrate:1.42.0",
                            "envFrom": [{"secretRef": {"name": secret}}]}]
        }}},
        "status": {"active": 1}
    })
}

fn orders_application() -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "orders", "namespace": "argocd", "uid": "app-uid"},
        "spec": {"destination": {"namespace": "orders"}, "project": "default"},
        "status": {"resources": [
            {"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "orders", "name": "orders-config", "syncWave": 2},
            {"group": "external-secrets.io", "version": "v1beta1", "kind": "ExternalSecret",
             "namespace": "orders", "name": "db-credentials", "syncWave": 2},
            {"group": "batch", "version": "v1", "kind": "Job", "namespace": "orders", "name": "db-migrate", "hook": true},
            {"group": "batch", "version": "v1", "kind": "Job", "namespace": "orders", "name": "cache-warm", "hook": true}
        ]}
    })
}

/// The seed incident after the fact: the PreSync Job needs a Secret that an ExternalSecret at
/// Sync wave 2 produces; a second hook needs a Secret created by hand (it exists: not a
/// finding); a ReplicaSet's Pod is not Argo CD's to judge.
fn seed_world() -> World {
    let mut world = World {
        page: 2,
        ..World::default()
    };
    world.objects.insert(
        "jobs",
        vec![
            hook_job("db-migrate", "db-credentials", "OnFailure"),
            hook_job("cache-warm", "manual-token", "Never"),
        ],
    );
    world.objects.insert(
        "configmaps",
        vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "orders-config", "namespace": "orders",
                         "annotations": {"argocd.argoproj.io/sync-wave": "2", TRACKING: "orders:/ConfigMap:orders/orders-config"}},
            "data": {"LOG_LEVEL": "info"}})],
    );
    world.objects.insert(
        "secrets",
        vec![
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "db-credentials", "namespace": "orders",
                    "ownerReferences": [{"apiVersion": "external-secrets.io/v1beta1", "kind": "ExternalSecret",
                                         "name": "db-credentials", "uid": "es-uid", "controller": true}]},
                "data": {"DATABASE_URL": "c2VjcmV0"}}),
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "manual-token", "namespace": "orders"},
                "data": {"token": "c2VjcmV0"}}),
        ],
    );
    world.objects.insert(
        "pods",
        vec![json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "orders-abc", "namespace": "orders",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "orders-5d", "uid": "rs", "controller": true}]},
            "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "x"}]}})],
    );
    world.objects.insert(
        "namespaces",
        vec![
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "orders"}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}),
        ],
    );
    world
        .objects
        .insert("applications", vec![orders_application()]);
    world
}

fn policies() -> Arc<PolicySet> {
    Arc::new(load_policies(&PolicySource::Builtin, Duration::from_millis(250)).unwrap())
}

fn config(max_results: usize) -> Config {
    Config {
        report_max_results: max_results,
        ..Config::default()
    }
}

async fn audit(fake: &FakeApi, config: &Config) -> AuditSummary {
    let client = fake.client();
    tokio::time::timeout(
        Duration::from_secs(30),
        audit_once(&client, config, policies()),
    )
    .await
    .expect("the audit finished")
    .expect("the audit succeeded")
}

fn patches(calls: &[Call]) -> Vec<&Call> {
    calls.iter().filter(|c| c.method == "PATCH").collect()
}

fn result_policies(report: &Value) -> Vec<String> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["policy"].as_str().unwrap(),
                r["resources"][0]["name"].as_str().unwrap()
            )
        })
        .collect()
}

// ---- tests ----

#[tokio::test]
async fn an_audit_writes_one_bounded_policy_report_with_server_side_apply() {
    let fake = FakeApi::new(seed_world());
    let summary = audit(&fake, &config(3)).await;

    let calls = fake.calls();
    let writes = patches(&calls);
    assert_eq!(writes.len(), 1, "{calls:#?}");
    let write = writes[0];
    assert_eq!(
        write.path,
        "/apis/wgpolicyk8s.io/v1alpha2/namespaces/orders/policyreports/syncguard"
    );
    assert_eq!(
        write.query.get("fieldManager").map(String::as_str),
        Some("syncguard")
    );
    assert_eq!(write.query.get("force").map(String::as_str), Some("true"));

    let report = write.body.clone().unwrap();
    assert_eq!(report["apiVersion"], "wgpolicyk8s.io/v1alpha2");
    assert_eq!(report["kind"], "PolicyReport");
    assert_eq!(
        report["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "syncguard"
    );
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "capped at 3");
    // The most severe first: SG201 (critical) on the seed Job, with the Job's uid.
    assert_eq!(results[0]["policy"], "SG201");
    assert_eq!(results[0]["result"], "fail");
    assert_eq!(results[0]["severity"], "critical");
    assert_eq!(results[0]["source"], "syncguard");
    assert_eq!(results[0]["resources"][0]["uid"], "db-migrate-uid");
    assert_eq!(results[0]["resources"][0]["apiVersion"], "batch/v1");
    assert!(
        results[0]["message"]
            .as_str()
            .unwrap()
            .contains("ExternalSecret orders/db-credentials")
    );
    assert!(
        results
            .iter()
            .all(|r| r["timestamp"]["seconds"].as_i64().unwrap() > 0)
    );
    // All findings are counted; the annotations say how many results were left out.
    let counted: u64 = ["fail", "warn", "error", "skip"]
        .iter()
        .map(|k| report["summary"][k].as_u64().unwrap())
        .sum();
    assert_eq!(counted as usize, summary.findings);
    let omitted = summary.findings - 3;
    assert!(
        omitted >= 2,
        "the seed namespace has at least 5 findings: {summary:?}"
    );
    assert_eq!(
        report["metadata"]["annotations"]["syncguard.dev/results-omitted"],
        omitted.to_string()
    );
    assert!(
        report["metadata"]["annotations"]["syncguard.dev/note"]
            .as_str()
            .unwrap()
            .contains("syncguard check")
    );
    assert_eq!(summary.results_dropped, omitted);
    assert_eq!(summary.writes.applied, 1);
}

#[tokio::test]
async fn references_resolve_against_live_objects_and_controlled_objects_are_not_judged() {
    let fake = FakeApi::new(seed_world());
    audit(&fake, &config(100)).await;
    let report = fake.report("orders").unwrap();
    let findings = result_policies(&report);
    // The Secret made by hand exists: no SG201 for the hook that needs it.
    assert!(
        findings.contains(&"SG201 db-migrate".to_string()),
        "{findings:?}"
    );
    assert!(
        !findings.contains(&"SG201 cache-warm".to_string()),
        "{findings:?}"
    );
    assert!(
        findings.contains(&"SG101 cache-warm".to_string()),
        "{findings:?}"
    );
    // The ReplicaSet's Pod (restartPolicy OnFailure) is its owner's business.
    assert!(
        findings.iter().all(|f| !f.ends_with("orders-abc")),
        "{findings:?}"
    );
    // Server bookkeeping is not judged as desired state (SG301 would report uid/managedFields).
    assert!(
        findings.iter().all(|f| !f.starts_with("SG301")),
        "{findings:?}"
    );
}

#[tokio::test]
async fn a_second_audit_of_an_unchanged_cluster_writes_nothing() {
    let fake = FakeApi::new(seed_world());
    let first = audit(&fake, &config(3)).await;
    assert_eq!(first.writes.applied, 1);
    let before = fake.calls().len();

    let second = audit(&fake, &config(3)).await;
    let calls = fake.calls();
    let again = &calls[before..];
    assert!(
        again.iter().any(|c| c.method == "GET"
            && c.path == "/apis/wgpolicyk8s.io/v1alpha2/policyreports"
            && c.query.get("labelSelector").map(String::as_str)
                == Some("app.kubernetes.io/managed-by=syncguard")),
        "the live reports are read: {again:#?}"
    );
    assert!(patches(again).is_empty(), "no write: {again:#?}");
    assert_eq!(second.writes.unchanged, 1);
    assert_eq!(second.writes.applied, 0);
}

#[tokio::test]
async fn a_changed_finding_rewrites_the_report_keeping_unchanged_timestamps() {
    let fake = FakeApi::new(seed_world());
    audit(&fake, &config(100)).await;
    let first = fake.report("orders").unwrap();
    // Mark every stored timestamp, then add a hook with findings of its own: only its results
    // are new.
    {
        let mut world = fake.0.lock().unwrap();
        let mut report = first.clone();
        for r in report["results"].as_array_mut().unwrap() {
            r["timestamp"] = json!({"seconds": 7, "nanos": 0});
        }
        world.reports.insert("orders".into(), report);
        world.objects.get_mut("jobs").unwrap().push(hook_job(
            "late-hook",
            "db-credentials",
            "Never",
        ));
    }
    let summary = audit(&fake, &config(100)).await;
    assert_eq!(summary.writes.applied, 1);
    let second = fake.report("orders").unwrap();
    let stamps: Vec<(String, i64)> = second["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["resources"][0]["name"].as_str().unwrap().to_string(),
                r["timestamp"]["seconds"].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(
        stamps
            .iter()
            .filter(|(n, _)| n != "late-hook")
            .all(|(_, s)| *s == 7),
        "{stamps:?}"
    );
    assert!(
        stamps
            .iter()
            .filter(|(n, _)| n == "late-hook")
            .all(|(_, s)| *s > 7),
        "{stamps:?}"
    );
    assert!(stamps.iter().any(|(n, _)| n == "late-hook"));
}

#[tokio::test]
async fn a_kind_whose_api_is_not_served_is_skipped() {
    let mut world = seed_world();
    world.not_served.insert("ingresses");
    world.not_served.insert("horizontalpodautoscalers");
    let fake = FakeApi::new(world);
    let summary = audit(&fake, &config(3)).await;
    assert_eq!(
        summary.skipped_kinds,
        vec![
            "horizontalpodautoscalers.autoscaling",
            "ingresses.networking.k8s.io"
        ]
    );
    assert_eq!(summary.writes.applied, 1);
}

#[tokio::test]
async fn secrets_are_listed_only_through_the_metadata_api_and_lists_ask_for_pages() {
    let fake = FakeApi::new(seed_world());
    audit(&fake, &config(3)).await;
    let calls = fake.calls();
    let secret_calls: Vec<&Call> = calls
        .iter()
        .filter(|c| c.path.ends_with("/secrets"))
        .collect();
    assert!(!secret_calls.is_empty());
    for call in &secret_calls {
        assert_eq!(call.method, "GET");
        assert!(
            call.accept.contains("as=PartialObjectMetadataList"),
            "{call:?}"
        );
    }
    // Every list asks for pages of 500 (the reads of Argo CD's own objects by name are gets).
    let named = [
        "/argocd-application-controller",
        "/argocd-cm",
        "/argocd-cmd-params-cm",
    ];
    let listed: Vec<&Call> = calls
        .iter()
        .filter(|c| c.method == "GET" && !named.iter().any(|n| c.path.ends_with(n)))
        .collect();
    assert!(
        listed
            .iter()
            .filter(|c| !c.path.contains("policyreports"))
            .all(|c| c.query.get("limit").map(String::as_str) == Some("500"))
    );
}

#[tokio::test]
async fn pages_are_followed_until_the_server_sends_no_continue_token() {
    let mut world = seed_world();
    world.page = 1;
    let fake = FakeApi::new(world);
    let summary = audit(&fake, &config(100)).await;
    let calls = fake.calls();
    let job_lists: Vec<&Call> = calls
        .iter()
        .filter(|c| c.path == "/apis/batch/v1/jobs")
        .collect();
    assert_eq!(job_lists.len(), 2, "two Jobs, one per page: {job_lists:#?}");
    assert_eq!(
        job_lists[1].query.get("continue").map(String::as_str),
        Some("page-1")
    );
    assert!(summary.evaluated >= 3);
}

#[tokio::test]
async fn a_namespace_without_findings_loses_only_syncguards_report() {
    let mut world = seed_world();
    let ours = json!({"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
        "metadata": {"name": "syncguard", "namespace": "gone", "labels": {"app.kubernetes.io/managed-by": "syncguard"}},
        "results": [], "summary": {}});
    let theirs = json!({"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
        "metadata": {"name": "syncguard", "namespace": "other", "labels": {"app.kubernetes.io/managed-by": "kyverno"}},
        "results": [], "summary": {}});
    world.reports.insert("gone".into(), ours);
    world.reports.insert("other".into(), theirs);
    let fake = FakeApi::new(world);
    let summary = audit(&fake, &config(3)).await;
    assert_eq!(summary.writes.deleted, 1);
    let deletes: Vec<String> = fake
        .calls()
        .iter()
        .filter(|c| c.method == "DELETE")
        .map(|c| c.path.clone())
        .collect();
    assert_eq!(
        deletes,
        vec!["/apis/wgpolicyk8s.io/v1alpha2/namespaces/gone/policyreports/syncguard"]
    );
    assert!(fake.report("other").is_some());
}

#[tokio::test]
async fn applications_from_the_controllers_watch_give_the_same_reports_without_a_list() {
    let listed = FakeApi::new(seed_world());
    audit(&listed, &config(10)).await;
    let listed_reports: Vec<Value> = patches(&listed.calls())
        .iter()
        .filter_map(|c| c.body.clone())
        .collect();
    assert!(!listed_reports.is_empty());

    // The same cluster, but the Applications come from the watch: none is listed.
    let mut world = seed_world();
    world.objects.remove("applications");
    let watched = FakeApi::new(world);
    let entries: Vec<_> = [orders_application()]
        .into_iter()
        .map(WatchedApplication::from_value)
        .filter_map(|a| a.entry().cloned())
        .collect();
    let client = watched.client();
    let summary = tokio::time::timeout(
        Duration::from_secs(30),
        audit_once_with(&client, &config(10), policies(), Some(entries)),
    )
    .await
    .expect("the audit finished")
    .expect("the audit succeeded");
    assert_eq!(summary.applications, 1);
    let calls = watched.calls();
    assert!(
        !calls.iter().any(|c| c.path.contains("/applications")),
        "{calls:#?}"
    );
    let watched_reports: Vec<Value> = patches(&calls)
        .iter()
        .filter_map(|c| c.body.clone())
        .collect();
    // Equal but for the time each pass ran.
    let untimed = |reports: Vec<Value>| -> Vec<Value> {
        reports
            .into_iter()
            .map(|mut r| {
                for result in r["results"].as_array_mut().into_iter().flatten() {
                    result["timestamp"] = Value::Null;
                }
                r
            })
            .collect()
    };
    assert_eq!(untimed(watched_reports), untimed(listed_reports));
}

#[tokio::test]
async fn only_the_leader_audits_and_every_pass_is_counted() {
    let fake = FakeApi::new(seed_world());
    let (leader_tx, leader_rx) = watch::channel(false);
    let ctx = Context {
        client: fake.client(),
        config: config(3),
        metrics: Arc::new(ReconcilerMetrics::new()),
        policies: Arc::new(ArcSwap::new(policies())),
        policies_fingerprint: None,
        leader: leader_rx,
        budget: syncguard::reconciler::budget::ApiBudget::unlimited(),
        hooks: syncguard::reconciler::hooks::SharedHooks::default(),
        applications: Default::default(),
    };
    audit_and_record(&ctx).await;
    let outcome = |o: &'static str| {
        ctx.metrics
            .audits
            .get_or_create(&OutcomeLabels { outcome: o })
            .get()
    };
    assert_eq!(outcome("skipped"), 1);
    assert!(fake.calls().is_empty(), "a follower makes no API call");

    leader_tx.send(true).unwrap();
    audit_and_record(&ctx).await;
    assert_eq!(outcome("ok"), 1);
    let writes = |o: &'static str| {
        ctx.metrics
            .report_writes
            .get_or_create(&OutcomeLabels { outcome: o })
            .get()
    };
    assert_eq!(writes("applied"), 1);
    assert!(ctx.metrics.report_results_dropped.get() >= 2);

    // Every open finding of the first pass is new; the unchanged second pass adds none.
    let counted = |metrics: &str| -> (u64, u64) {
        let sum = |prefix: &str| -> u64 {
            metrics
                .lines()
                .filter(|l| l.starts_with(prefix))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .map(|v| v as u64)
                .sum()
        };
        (
            sum("syncguard_live_findings_total{"),
            sum("syncguard_open_live_findings{"),
        )
    };
    let (new_first, open) = counted(&ctx.metrics.encode());
    assert!(open > 0);
    assert_eq!(new_first, open);

    audit_and_record(&ctx).await;
    assert_eq!(writes("unchanged"), 1);
    assert_eq!(writes("applied"), 1);
    assert_eq!(counted(&ctx.metrics.encode()), (new_first, open));
}

#[tokio::test]
async fn a_missing_policy_report_crd_fails_the_audit_with_a_clear_error() {
    let mut world = seed_world();
    world.not_served.insert("policyreports");
    let fake = FakeApi::new(world);
    let client = fake.client();
    let error = audit_once(&client, &config(3), policies())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("install the PolicyReport CRD"),
        "{error}"
    );
}

#[tokio::test]
async fn with_both_report_apis_a_policy_report_and_a_report_say_the_same_and_stay_unchanged() {
    let fake = FakeApi::new(seed_world());
    let both = Config {
        report_apis: ReportApis::Both,
        ..config(3)
    };
    let first = audit(&fake, &both).await;
    let calls = fake.calls();
    let paths: Vec<&str> = patches(&calls).iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "/apis/wgpolicyk8s.io/v1alpha2/namespaces/orders/policyreports/syncguard",
            "/apis/openreports.io/v1alpha1/namespaces/orders/reports/syncguard",
        ]
    );
    assert_eq!(first.writes.applied, 2);
    let policy_report = fake.report("orders").unwrap();
    let report = fake.open_report("orders").unwrap();
    assert_eq!(report["apiVersion"], "openreports.io/v1alpha1");
    assert_eq!(report["kind"], "Report");
    assert_eq!(report["source"], "syncguard");
    assert_eq!(report["configuration"]["limits"]["maxResults"], 3);
    assert_eq!(report["results"].as_array().unwrap().len(), 3);
    assert_eq!(report["results"], policy_report["results"]);
    assert_eq!(report["summary"], policy_report["summary"]);
    // Left out once per finding, not once per API.
    assert_eq!(first.results_dropped, first.findings - 3);

    let before = fake.calls().len();
    let second = audit(&fake, &both).await;
    let calls = fake.calls();
    assert!(
        patches(&calls[before..]).is_empty(),
        "no write: {:#?}",
        &calls[before..]
    );
    assert_eq!(second.writes.unchanged, 2);
}

#[tokio::test]
async fn with_openreports_alone_a_missing_crd_is_no_failure_and_nothing_else_is_written() {
    let mut world = seed_world();
    world.not_served.insert("reports");
    let fake = FakeApi::new(world);
    let only = Config {
        report_apis: ReportApis::OpenReports,
        ..config(3)
    };
    let summary = audit(&fake, &only).await;
    assert!(summary.findings > 0);
    assert_eq!(summary.writes, Default::default());
    let calls = fake.calls();
    assert!(patches(&calls).is_empty(), "{calls:#?}");
    assert!(
        calls.iter().all(|c| !c.path.contains("wgpolicyk8s.io")),
        "no PolicyReport call with openreports alone"
    );
    assert!(
        calls
            .iter()
            .any(|c| c.path == "/apis/openreports.io/v1alpha1/reports")
    );
}

/// The audit judges for the Argo CD the cluster runs: its release from the controller's image,
/// its configuration from argocd-cm, argocd-cmd-params-cm and the AppProjects of its namespace.
#[tokio::test]
async fn the_installation_is_read_from_argo_cds_namespace() {
    let mut world = World {
        page: 2,
        ..World::default()
    };
    world.objects.insert(
        "statefulsets",
        vec![json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "argocd-application-controller", "namespace": "argocd"},
            "spec": {"template": {"spec": {"containers": [
                {"name": "application-controller", "image": "quay.io/argoproj/argocd:v3.2.11"}]}}}})],
    );
    world.objects.insert(
        "configmaps",
        vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm", "namespace": "argocd"},
            "data": {"resource.customizations.health.argoproj.io_Application": "hs = {}\nreturn hs"}}),
             json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-cmd-params-cm", "namespace": "argocd"},
            "data": {"controller.sync.timeout.seconds": "600"}})],
    );
    world.objects.insert(
        "appprojects",
        vec![json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "team-a", "namespace": "argocd"},
            "spec": {"destinations": [{"namespace": "team-a", "server": "https://kubernetes.default.svc"}]}})],
    );
    let fake = FakeApi::new(world);
    let read = syncguard::reconciler::install::read(&fake.client(), "argocd").await;
    assert_eq!(
        read.version.map(|v| v.to_string()).as_deref(),
        Some("3.2.11")
    );
    assert_eq!(
        read.config.source,
        syncguard::model::argocd_config::ConfigSource::Cluster
    );
    assert!(read.config.has_custom_health("argoproj.io", "Application"));
    assert!(read.config.projects.contains_key("team-a"));
    assert_eq!(
        read.config
            .cmd_params
            .as_ref()
            .and_then(|p| p.sync_timeout_seconds),
        Some(600)
    );

    // Nothing there (or nothing readable): nothing is known, and nothing fails.
    let empty = FakeApi::new(World::default());
    let read = syncguard::reconciler::install::read(&empty.client(), "argocd").await;
    assert_eq!(read, Default::default());
}
