//! Test helpers (compiled only for tests): builders for live objects and a mock API server.
//!
//! The mock follows controller-rs's `fixtures.rs`: a `tower_test::mock::pair` stands in for the
//! HTTP connection of a real `kube::Client`, and a verifier task answers each request with
//! canned JSON after asserting its method, path and (where it matters) query and body. A
//! scenario is a list of [`Exchange`]s in the order the code under test must make them; every
//! wait is bounded so a missing or extra call fails the test in about a second instead of
//! hanging it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::client::Body;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::application::Application;
use super::context::{Config, Context};
use crate::metrics::ReconcilerMetrics;
use crate::policy::PolicySet;

/// The far end of a mock client: requests arrive here.
pub type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

/// A `kube::Client` whose every request goes to the returned [`Handle`].
pub fn mock_client() -> (kube::Client, Handle) {
    let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    (kube::Client::new(service, "default"), handle)
}

/// The built-in policy set, loaded once per test process (it takes a moment to prepare).
pub fn policies() -> Arc<PolicySet> {
    static SET: OnceLock<Arc<PolicySet>> = OnceLock::new();
    SET.get_or_init(|| {
        Arc::new(
            crate::policy::builtin::PolicySource::Builtin
                .load()
                .expect("built-in policies load"),
        )
    })
    .clone()
}

/// A reconciler context on a mock client; `leader` says whether this replica may write.
pub fn context(client: kube::Client, config: Config, leader: bool) -> Arc<Context> {
    let (tx, rx) = watch::channel(leader);
    // Keep the sender alive for the whole test: a closed channel must not read as anything.
    std::mem::forget(tx);
    let budget = crate::reconciler::budget::ApiBudget::new(config.api_qps, config.api_burst);
    Arc::new(Context {
        client,
        config,
        metrics: Arc::new(ReconcilerMetrics::new()),
        policies: Arc::new(arc_swap::ArcSwap::new(policies())),
        policies_fingerprint: None,
        budget,
        hooks: crate::reconciler::hooks::SharedHooks::default(),
        applications: crate::reconciler::cached::SharedApplications::default(),
        leader: rx,
    })
}

/// Asserts on a request's JSON body.
pub type BodyCheck = Box<dyn Fn(&Value) + Send>;

/// One expected request and its canned answer.
pub struct Exchange {
    method: Method,
    path: String,
    query: Vec<String>,
    body: Option<BodyCheck>,
    status: StatusCode,
    response: Value,
}

impl Exchange {
    /// `GET path` answered with `response`.
    pub fn get(path: &str, response: Value) -> Self {
        Self::new(Method::GET, path, response)
    }

    /// `GET path` answered with 404 NotFound.
    pub fn not_found(path: &str) -> Self {
        let mut e = Self::new(Method::GET, path, status_body(404, "NotFound"));
        e.status = StatusCode::NOT_FOUND;
        e
    }

    /// `GET path` (a list) whose query must contain each of `query` (URL-encoded as sent),
    /// answered with a list of `items`.
    pub fn list(path: &str, query: &[&str], items: Vec<Value>) -> Self {
        let mut e = Self::new(
            Method::GET,
            path,
            json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "1"}, "items": items}),
        );
        e.query = query.iter().map(|q| q.to_string()).collect();
        e
    }

    /// `POST path` whose JSON body passes `check`; answered with the body itself.
    pub fn post(path: &str, check: impl Fn(&Value) + Send + 'static) -> Self {
        let mut e = Self::new(Method::POST, path, Value::Null);
        e.status = StatusCode::CREATED;
        e.body = Some(Box::new(check));
        e
    }

    /// `PATCH path` whose JSON body passes `check`; answered with the body itself.
    pub fn patch(path: &str, check: impl Fn(&Value) + Send + 'static) -> Self {
        let mut e = Self::new(Method::PATCH, path, Value::Null);
        e.body = Some(Box::new(check));
        e
    }

    /// `PUT path` (an update) whose JSON body passes `check`; answered with the body itself.
    pub fn put(path: &str, check: impl Fn(&Value) + Send + 'static) -> Self {
        let mut e = Self::new(Method::PUT, path, Value::Null);
        e.body = Some(Box::new(check));
        e
    }

    /// `DELETE path`, answered with a success Status.
    pub fn delete(path: &str) -> Self {
        Self::new(
            Method::DELETE,
            path,
            json!({"apiVersion": "v1", "kind": "Status", "status": "Success", "code": 200}),
        )
    }

    /// Answer with this HTTP status instead (the body becomes a Status object).
    pub fn failing(mut self, code: u16) -> Self {
        self.status = StatusCode::from_u16(code).unwrap();
        let reason = match code {
            403 => "Forbidden",
            404 => "NotFound",
            409 => "Conflict",
            _ => "InternalError",
        };
        self.response = status_body(code, reason);
        self
    }

    fn new(method: Method, path: &str, response: Value) -> Self {
        Self {
            method,
            path: path.to_string(),
            query: Vec::new(),
            body: None,
            status: StatusCode::OK,
            response,
        }
    }
}

fn status_body(code: u16, reason: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": reason,
           "code": code, "message": format!("mock: {reason}")})
}

/// Answers one request with `status` and a JSON body.
pub fn respond(
    send: tower_test::mock::SendResponse<Response<Body>>,
    status: StatusCode,
    body: &Value,
) {
    let bytes = serde_json::to_vec(body).unwrap();
    send.send_response(
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Body::from(bytes))
            .unwrap(),
    );
}

/// Serves `exchanges` in order, asserting each request, then hands the handle back so the test
/// can assert that nothing else was asked ([`assert_no_more_requests`]). Each request must
/// arrive within a second.
pub fn serve(mut handle: Handle, exchanges: Vec<Exchange>) -> JoinHandle<Handle> {
    tokio::spawn(async move {
        for (i, ex) in exchanges.into_iter().enumerate() {
            let (req, send) = tokio::time::timeout(Duration::from_secs(1), handle.next_request())
                .await
                .unwrap_or_else(|_| panic!("request #{i} ({} {}) never came", ex.method, ex.path))
                .expect("client dropped");
            let (parts, body) = req.into_parts();
            assert_eq!(parts.method, ex.method, "request #{i}: {}", parts.uri);
            assert_eq!(parts.uri.path(), ex.path, "request #{i}");
            let query = parts.uri.query().unwrap_or_default();
            for q in &ex.query {
                assert!(
                    query.contains(q.as_str()),
                    "request #{i}: query {query:?} lacks {q:?}"
                );
            }
            let mut response = ex.response;
            if let Some(check) = ex.body {
                let bytes = body.collect_bytes().await.unwrap();
                let sent: Value = serde_json::from_slice(&bytes).unwrap();
                check(&sent);
                // A failing answer keeps its Status body (what the API server sends).
                if ex.status.is_success() {
                    response = sent;
                }
            }
            respond(send, ex.status, &response);
        }
        handle
    })
}

/// Fails if the client sends another request within 100 ms.
pub async fn assert_no_more_requests(handle: &mut Handle) {
    if let Ok(Some((req, _))) =
        tokio::time::timeout(Duration::from_millis(100), handle.next_request()).await
    {
        panic!("unexpected request: {} {}", req.method(), req.uri());
    }
}

/// Runs `f` with a deadline so a missing mock answer fails instead of hanging.
pub async fn within_2s<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(2), f)
        .await
        .expect("timed out waiting for the mock API server")
}

/// A stateful `coordination.k8s.io/v1` Lease endpoint shared by several mock clients, for
/// leader-election tests: GET, POST (create) and PATCH (server-side apply with conflict
/// detection on `holderIdentity`, strategic/merge patches with `null` deleting) on one Lease.
#[derive(Clone, Default)]
pub struct LeaseServer {
    lease: Arc<Mutex<Option<Value>>>,
}

impl LeaseServer {
    /// The current `spec.holderIdentity`.
    pub fn holder(&self) -> Option<String> {
        self.lease
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|l| l.pointer("/spec/holderIdentity"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// Answers every request arriving on `handle` until the client is dropped.
    pub fn serve(&self, mut handle: Handle, namespace: &str, name: &str) -> JoinHandle<()> {
        let path = format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}");
        let collection = format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases");
        let state = self.lease.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            while let Some((req, send)) = handle.next_request().await {
                let (parts, body) = req.into_parts();
                let bytes = body.collect_bytes().await.unwrap();
                let content_type = parts
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                let mut lease = state.lock().unwrap();
                let (status, reply) = match (parts.method.clone(), parts.uri.path()) {
                    (Method::GET, p) if p == path => match lease.as_ref() {
                        Some(l) => (StatusCode::OK, l.clone()),
                        None => (StatusCode::NOT_FOUND, status_body(404, "NotFound")),
                    },
                    (Method::POST, p) if p == collection => {
                        if lease.is_some() {
                            (StatusCode::CONFLICT, status_body(409, "AlreadyExists"))
                        } else {
                            let mut created: Value = serde_json::from_slice(&bytes).unwrap();
                            created["metadata"]["name"] = json!(name);
                            created["metadata"]["resourceVersion"] = json!("1");
                            *lease = Some(created.clone());
                            (StatusCode::CREATED, created)
                        }
                    }
                    (Method::PATCH, p) if p == path => {
                        let patch: Value = serde_json::from_slice(&bytes).unwrap();
                        let current = lease.get_or_insert_with(|| {
                            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                   "metadata": {"name": name}, "spec": {}})
                        });
                        let held_by = current
                            .pointer("/spec/holderIdentity")
                            .and_then(Value::as_str)
                            .map(str::to_string);
                        let wants = patch
                            .pointer("/spec/holderIdentity")
                            .and_then(Value::as_str);
                        if content_type.contains("apply-patch")
                            && held_by.is_some()
                            && wants.is_some()
                            && held_by.as_deref() != wants
                        {
                            (StatusCode::CONFLICT, status_body(409, "Conflict"))
                        } else {
                            merge(current, &patch);
                            (StatusCode::OK, current.clone())
                        }
                    }
                    (m, p) => panic!("lease server: unexpected {m} {p}"),
                };
                drop(lease);
                respond(send, status, &reply);
            }
        })
    }
}

/// JSON merge patch (RFC 7386): `null` deletes.
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// Builds Application objects as the API server returns them.
#[derive(Debug, Clone)]
pub struct AppBuilder {
    value: Value,
}

impl AppBuilder {
    /// `argocd/<name>` with uid `uid-<name>`, no status.
    pub fn new(name: &str) -> Self {
        Self {
            value: json!({
                "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": name, "namespace": "argocd", "uid": format!("uid-{name}"),
                             "resourceVersion": "100"},
                "spec": {"destination": {"server": "https://kubernetes.default.svc"}},
                "status": {"resources": [], "history": []}
            }),
        }
    }

    /// `spec.destination.namespace`.
    pub fn destination(mut self, ns: &str) -> Self {
        self.value["spec"]["destination"]["namespace"] = json!(ns);
        self
    }

    /// A `metadata.annotations` entry.
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.value["metadata"]["annotations"][key] = json!(value);
        self
    }

    /// Auto-sync with self-heal.
    pub fn self_heal(mut self) -> Self {
        self.value["spec"]["syncPolicy"] = json!({"automated": {"selfHeal": true, "prune": true}});
        self
    }

    /// `status.sync.status`.
    pub fn sync_status(mut self, status: &str) -> Self {
        self.value["status"]["sync"] = json!({"status": status, "revision": "abc"});
        self
    }

    /// An operation Running since `started`.
    pub fn running_since(mut self, started: &str) -> Self {
        self.value["status"]["operationState"] = json!({
            "phase": "Running", "startedAt": started,
            "operation": {"initiatedBy": {"automated": true}, "sync": {"revision": "abc"}},
            "syncResult": {"revision": "abc", "resources": []}
        });
        self
    }

    /// A finished (Succeeded) operation.
    pub fn finished(mut self, started: &str, finished: &str) -> Self {
        self.value["status"]["operationState"] = json!({
            "phase": "Succeeded", "startedAt": started, "finishedAt": finished,
            "message": "successfully synced (all tasks run)",
            "operation": {"initiatedBy": {"automated": true}, "sync": {"revision": "abc"}},
            "syncResult": {"revision": "abc", "resources": []}
        });
        self
    }

    /// `status.operationState.message`.
    pub fn message(mut self, message: &str) -> Self {
        self.value["status"]["operationState"]["message"] = json!(message);
        self
    }

    /// A hook whose phase is Running in `syncResult.resources` (and Argo CD's matching message).
    pub fn running_hook(mut self, hook_type: &str, group: &str, kind: &str, name: &str) -> Self {
        let ns = self.value["spec"]["destination"]["namespace"].clone();
        self.value["status"]["operationState"]["message"] = json!(format!(
            "waiting for completion of hook {group}/{kind}/{name}"
        ));
        self.value["status"]["operationState"]["syncResult"]["resources"]
            .as_array_mut()
            .unwrap()
            .push(json!({
                "group": group, "version": "v1", "kind": kind, "namespace": ns, "name": name,
                "status": "Synced", "message": "job is still running", "hookType": hook_type,
                "hookPhase": "Running", "syncPhase": hook_type
            }));
        self
    }

    /// A syncResult entry of a non-hook object still `Running` (waiting for health), in
    /// `namespace` (empty for a cluster-scoped one).
    pub fn running_resource(
        mut self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Self {
        self.value["status"]["operationState"]["syncResult"]["resources"]
            .as_array_mut()
            .unwrap()
            .push(json!({
                "group": group, "version": "v1", "kind": kind, "namespace": namespace,
                "name": name, "status": "Synced", "message": format!("{kind} created"),
                "hookPhase": "Running", "syncPhase": if kind == "Namespace" { "PreSync" } else { "Sync" }
            }));
        self
    }

    /// A `status.resources` entry (Synced) in the destination namespace.
    pub fn resource(self, group: &str, kind: &str, name: &str, wave: i64, hook: bool) -> Self {
        self.resource_with_status(group, kind, name, wave, hook, "Synced")
    }

    /// A `status.resources` entry that is OutOfSync.
    pub fn out_of_sync(self, group: &str, kind: &str, name: &str) -> Self {
        self.resource_with_status(group, kind, name, 0, false, "OutOfSync")
    }

    fn resource_with_status(
        mut self,
        group: &str,
        kind: &str,
        name: &str,
        wave: i64,
        hook: bool,
        status: &str,
    ) -> Self {
        let ns = self.value["spec"]["destination"]["namespace"].clone();
        let version = if group == "autoscaling" { "v2" } else { "v1" };
        let mut r = json!({"group": group, "version": version, "kind": kind, "namespace": ns,
                           "name": name, "status": status, "syncWave": wave});
        if hook {
            r["hook"] = json!(true);
        }
        self.value["status"]["resources"]
            .as_array_mut()
            .unwrap()
            .push(r);
        self
    }

    /// A `status.history` entry.
    pub fn history(mut self, id: i64, started: &str, deployed: &str) -> Self {
        self.value["status"]["history"]
            .as_array_mut()
            .unwrap()
            .push(
                json!({"id": id, "revision": "abc", "deployStartedAt": started,
                         "deployedAt": deployed}),
            );
        self
    }

    /// The object as JSON (to edit what the builder has no method for).
    pub fn json(&self) -> Value {
        self.value.clone()
    }

    /// The object as the controller's store keeps it (what the controller receives).
    pub fn watched(&self) -> crate::reconciler::controller::WatchedApplication {
        serde_json::from_value(self.value.clone()).unwrap()
    }

    /// The object as syncguard reads it.
    pub fn live(&self) -> Application {
        Application::from_value(&self.value).unwrap()
    }
}

/// A hook Job started at `started`, as the Job controller leaves it while it runs (no
/// deadline, `restartPolicy: OnFailure` — the seed incident's Job).
pub fn job(ns: &str, name: &str, started: &str) -> Job {
    serde_json::from_value(job_json(ns, name, started)).unwrap()
}

/// [`job`] as JSON.
pub fn job_json(ns: &str, name: &str, started: &str) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "uid": format!("job-uid-{name}"),
                     "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
        "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                 "containers": [{"name": "migrate", "image": "registry.example/migrate:v1"}]}}},
        "status": {"active": 1, "startTime": started}
    })
}

fn pod_json(ns: &str, name: &str, status: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": format!("pod-uid-{name}"),
                     "creationTimestamp": "2026-11-30T02:00:05Z",
                     "labels": {"batch.kubernetes.io/job-name": "svc-foo-migration"}},
        "spec": {"containers": [{"name": "migrate", "image": "registry.example/migrate:v1"}]},
        "status": status
    })
}

/// A pod whose container is in CrashLoopBackOff after `restarts` restarts (exit code 1).
pub fn pod_crashlooping_json(ns: &str, name: &str, restarts: i32) -> Value {
    pod_json(
        ns,
        name,
        json!({"phase": "Running", "containerStatuses": [{
            "name": "migrate", "image": "registry.example/migrate:v1", "imageID": "", "ready": false,
            "restartCount": restarts,
            "state": {"waiting": {"reason": "CrashLoopBackOff",
                      "message": "back-off 5m0s restarting failed container=migrate"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}
        }]}),
    )
}

/// [`pod_crashlooping_json`] typed.
pub fn pod_crashlooping(ns: &str, name: &str, restarts: i32) -> Pod {
    serde_json::from_value(pod_crashlooping_json(ns, name, restarts)).unwrap()
}

/// A pod whose container waits with `reason` and `message`.
pub fn pod_waiting(ns: &str, name: &str, reason: &str, message: &str) -> Pod {
    serde_json::from_value(pod_json(
        ns,
        name,
        json!({"phase": "Pending", "containerStatuses": [{
            "name": "migrate", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": reason, "message": message}}
        }]}),
    ))
    .unwrap()
}

/// A Pending pod the scheduler cannot place.
pub fn pod_with_condition(ns: &str, name: &str, message: &str) -> Pod {
    serde_json::from_value(pod_json(
        ns,
        name,
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
               "reason": "Unschedulable", "message": message}]}),
    ))
    .unwrap()
}

/// A core/v1 Warning event about the pod.
pub fn event_json(reason: &str, message: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("ev-{}", reason.to_ascii_lowercase()), "namespace": "app-foo"},
        "involvedObject": {"kind": "Pod", "name": "svc-foo-migration-x7k2p", "namespace": "app-foo"},
        "reason": reason, "message": message, "type": "Warning", "count": 12,
        "lastTimestamp": "2026-11-30T02:40:00Z"
    })
}

/// [`event_json`] typed.
pub fn event(reason: &str, message: &str) -> Event {
    serde_json::from_value(event_json(reason, message)).unwrap()
}
