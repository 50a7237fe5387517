//! A live Argo CD `Application`, as far as syncguard reads it.
//!
//! Argo CD's CRD is not in k8s-openapi and its status schema grows with every release, so the
//! reconciler watches Applications as JSON and reads them through this view: every field is
//! optional, unknown fields are ignored, and a malformed field reads as absent rather than
//! failing the whole object (a diagnosis built on the fields that are there beats none).

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The API group, version and kind of Argo CD Applications.
pub const GROUP: &str = "argoproj.io";
/// See [`GROUP`].
pub const VERSION: &str = "v1alpha1";
/// See [`GROUP`].
pub const KIND: &str = "Application";

/// The Application annotation that opts it in to ending a stuck operation
/// ([`super::terminate`]): a duration (`30m`), or `off` to opt out of a configured default.
pub const TERMINATE_ANNOTATION: &str = "syncguard.dev/terminate-stuck-after";

/// The fields of a live Application that syncguard reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveApplication {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (where the Application object lives, usually `argocd`).
    pub namespace: String,
    /// `metadata.uid` (Events refer to it).
    pub uid: Option<String>,
    /// `metadata.resourceVersion`.
    pub resource_version: Option<String>,
    /// The [`TERMINATE_ANNOTATION`], as written.
    pub terminate_after: Option<String>,
    /// `spec.destination.namespace`.
    pub destination_namespace: Option<String>,
    /// `spec.syncPolicy.automated` is set.
    pub automated: bool,
    /// `spec.syncPolicy.automated.selfHeal`.
    pub self_heal: bool,
    /// `spec.syncPolicy.syncOptions`.
    pub sync_options: Vec<String>,
    /// `spec.ignoreDifferences`, as written.
    pub ignore_differences: Vec<Value>,
    /// `status.sync.status`: `Synced`, `OutOfSync` or `Unknown`.
    pub sync_status: Option<String>,
    /// `status.sync.revision`.
    pub sync_revision: Option<String>,
    /// `status.health.status`.
    pub health: Option<String>,
    /// `status.reconciledAt`.
    pub reconciled_at: Option<OffsetDateTime>,
    /// `status.operationState`.
    pub operation: Option<OperationState>,
    /// `status.resources`: every object Argo CD manages for the app, with wave and hook flag.
    pub resources: Vec<ResourceStatus>,
    /// `status.history`: finished syncs, oldest first (Argo CD keeps the last 10 by default).
    pub history: Vec<HistoryEntry>,
}

/// `status.operationState`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OperationState {
    /// `Running`, `Terminating`, `Succeeded`, `Failed` or `Error`.
    pub phase: String,
    /// Argo CD's own message, e.g. `waiting for completion of hook batch/Job/db-migrate`.
    pub message: Option<String>,
    /// When the operation started.
    pub started_at: Option<OffsetDateTime>,
    /// When it finished (absent while Running).
    pub finished_at: Option<OffsetDateTime>,
    /// `operation.initiatedBy.automated`: started by auto-sync / self-heal.
    pub automated: bool,
    /// `syncResult.revision`.
    pub revision: Option<String>,
    /// `syncResult.resources`: per-object results, including hooks and their phases.
    pub results: Vec<SyncResultResource>,
}

/// One entry of `status.operationState.syncResult.resources`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncResultResource {
    /// API group (empty for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `Synced`, `SyncFailed`, `Pruned`, `PruneSkipped`.
    pub status: Option<String>,
    /// Argo CD's message for this object.
    pub message: Option<String>,
    /// `PreSync`, `Sync`, `PostSync`, `SyncFail`, `Skip` for hooks.
    pub hook_type: Option<String>,
    /// `Running`, `Succeeded`, `Failed`, `Error`, `Terminating` (hooks and, in newer versions,
    /// every object).
    pub hook_phase: Option<String>,
    /// The sync phase the object was applied in.
    pub sync_phase: Option<String>,
}

/// One entry of `status.resources`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceStatus {
    /// API group (empty for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `Synced` / `OutOfSync`.
    pub status: Option<String>,
    /// `health.status`.
    pub health: Option<String>,
    /// The object is a hook.
    pub hook: bool,
    /// `syncWave` (0 when absent, as Argo CD treats it).
    pub sync_wave: i64,
    /// `requiresPruning`.
    pub requires_pruning: bool,
}

/// One entry of `status.history`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryEntry {
    /// History id.
    pub id: i64,
    /// The revision deployed.
    pub revision: Option<String>,
    /// When the sync finished.
    pub deployed_at: Option<OffsetDateTime>,
    /// When it started.
    pub deploy_started_at: Option<OffsetDateTime>,
}

/// What a cache of Applications has to keep, and nothing more: at 10,000 Applications the
/// parts no rule reads (managed fields, the last-applied copy, history sources, conditions,
/// summaries) are most of the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The index of Applications (webhook `--cluster`, audit): `spec` and `status.resources`,
    /// `sync`, `health`.
    Index,
    /// The diagnosis (SG501–SG503): also the operation state (phase, times, initiator, sync
    /// result) and the history (revision, times), without their sources.
    Diagnosis,
}

/// Drops from an Application (as served) what [`Keep`] says no reader needs. `metadata` is the
/// object's metadata map, `status` its status (either may be absent).
pub fn prune(
    metadata: Option<&mut serde_json::Map<String, Value>>,
    status: Option<&mut Value>,
    keep: Keep,
) {
    if let Some(meta) = metadata {
        meta.remove("managedFields");
        if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            a.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    let Some(status) = status.and_then(Value::as_object_mut) else {
        return;
    };
    let kept: &[&str] = match keep {
        Keep::Index => &["resources", "sync", "health"],
        Keep::Diagnosis => &[
            "resources",
            "sync",
            "health",
            "reconciledAt",
            "operationState",
            "history",
        ],
    };
    status.retain(|k, _| kept.contains(&k.as_str()));
    if let Some(Value::Object(sync)) = status.get_mut("sync") {
        sync.retain(|k, _| k == "status" || k == "revision");
    }
    if let Some(Value::Object(health)) = status.get_mut("health") {
        health.retain(|k, _| k == "status");
    }
    if let Some(Value::Array(history)) = status.get_mut("history") {
        for h in history.iter_mut().filter_map(Value::as_object_mut) {
            h.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "revision" | "deployedAt" | "deployStartedAt" | "id"
                )
            });
        }
    }
    if let Some(Value::Object(op)) = status.get_mut("operationState") {
        op.retain(|k, _| {
            matches!(
                k.as_str(),
                "phase" | "message" | "startedAt" | "finishedAt" | "operation" | "syncResult"
            )
        });
        if let Some(Value::Object(operation)) = op.get_mut("operation") {
            operation.retain(|k, _| k == "initiatedBy");
        }
        let finished = !matches!(
            op.get("phase").and_then(Value::as_str),
            Some("Running" | "Terminating") | None
        );
        if let Some(Value::Object(result)) = op.get_mut("syncResult") {
            result.retain(|k, _| k == "revision" || k == "resources");
            // Of a finished operation only the hooks' results are read (where the hooks ran,
            // for SG503); the per-object results of a 50-resource sync are most of a
            // diagnosis entry's memory otherwise. A running operation keeps them all (SG501
            // names the object it waits for).
            if finished && let Some(Value::Array(resources)) = result.get_mut("resources") {
                resources.retain(|r| r.get("hookType").is_some_and(|t| !t.is_null()));
            }
        }
    }
}

/// [`prune`] on an Application as JSON.
pub fn prune_value(app: &mut Value, keep: Keep) {
    let Some(obj) = app.as_object_mut() else {
        return;
    };
    let mut status = obj.remove("status");
    prune(
        obj.get_mut("metadata").and_then(Value::as_object_mut),
        status.as_mut(),
        keep,
    );
    if let Some(status) = status {
        obj.insert("status".into(), status);
    }
}

fn str_at(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn string_at(v: &Value, pointer: &str) -> String {
    str_at(v, pointer).unwrap_or_default()
}

fn time_at(v: &Value, pointer: &str) -> Option<OffsetDateTime> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .and_then(parse_time)
}

/// Parses a Kubernetes timestamp (RFC 3339, e.g. `2026-11-30T02:51:49Z`).
pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

fn array_at<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

impl LiveApplication {
    /// Reads an Application object (as returned by the API server). Returns `None` for an
    /// object that is not an `argoproj.io` Application or has no name.
    pub fn from_value(app: &Value) -> Option<Self> {
        let api_version = app.get("apiVersion").and_then(Value::as_str)?;
        if !api_version.starts_with("argoproj.io/")
            || app.get("kind").and_then(Value::as_str) != Some(KIND)
        {
            return None;
        }
        let name = str_at(app, "/metadata/name")?;
        let automated = app
            .pointer("/spec/syncPolicy/automated")
            .is_some_and(|a| !a.is_null());
        Some(Self {
            name,
            namespace: string_at(app, "/metadata/namespace"),
            uid: str_at(app, "/metadata/uid"),
            resource_version: str_at(app, "/metadata/resourceVersion"),
            terminate_after: app
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(TERMINATE_ANNOTATION))
                .and_then(Value::as_str)
                .map(str::to_string),
            destination_namespace: str_at(app, "/spec/destination/namespace")
                .filter(|s| !s.is_empty()),
            automated,
            self_heal: automated
                && app
                    .pointer("/spec/syncPolicy/automated/selfHeal")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            sync_options: array_at(app, "/spec/syncPolicy/syncOptions")
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            ignore_differences: array_at(app, "/spec/ignoreDifferences").to_vec(),
            sync_status: str_at(app, "/status/sync/status"),
            sync_revision: str_at(app, "/status/sync/revision"),
            health: str_at(app, "/status/health/status"),
            reconciled_at: time_at(app, "/status/reconciledAt"),
            operation: app
                .pointer("/status/operationState")
                .filter(|o| o.is_object())
                .map(OperationState::from_value),
            resources: array_at(app, "/status/resources")
                .iter()
                .map(ResourceStatus::from_value)
                .collect(),
            history: array_at(app, "/status/history")
                .iter()
                .map(HistoryEntry::from_value)
                .collect(),
        })
    }

    /// `namespace/name`, for messages.
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// How long the current operation has been Running at `now`; `None` when no operation is
    /// Running or its start time is unknown.
    pub fn running_for(&self, now: OffsetDateTime) -> Option<std::time::Duration> {
        let op = self.operation.as_ref()?;
        if op.phase != "Running" {
            return None;
        }
        let elapsed = now - op.started_at?;
        std::time::Duration::try_from(elapsed).ok()
    }
}

impl OperationState {
    fn from_value(op: &Value) -> Self {
        Self {
            phase: string_at(op, "/phase"),
            message: str_at(op, "/message"),
            started_at: time_at(op, "/startedAt"),
            finished_at: time_at(op, "/finishedAt"),
            automated: op
                .pointer("/operation/initiatedBy/automated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            revision: str_at(op, "/syncResult/revision"),
            results: array_at(op, "/syncResult/resources")
                .iter()
                .map(SyncResultResource::from_value)
                .collect(),
        }
    }
}

impl SyncResultResource {
    fn from_value(r: &Value) -> Self {
        Self {
            group: string_at(r, "/group"),
            version: string_at(r, "/version"),
            kind: string_at(r, "/kind"),
            namespace: string_at(r, "/namespace"),
            name: string_at(r, "/name"),
            status: str_at(r, "/status"),
            message: str_at(r, "/message"),
            hook_type: str_at(r, "/hookType"),
            hook_phase: str_at(r, "/hookPhase"),
            sync_phase: str_at(r, "/syncPhase"),
        }
    }
}

impl ResourceStatus {
    fn from_value(r: &Value) -> Self {
        Self {
            group: string_at(r, "/group"),
            version: string_at(r, "/version"),
            kind: string_at(r, "/kind"),
            namespace: string_at(r, "/namespace"),
            name: string_at(r, "/name"),
            status: str_at(r, "/status"),
            health: str_at(r, "/health/status"),
            hook: r.get("hook").and_then(Value::as_bool).unwrap_or(false),
            sync_wave: r.get("syncWave").and_then(Value::as_i64).unwrap_or(0),
            requires_pruning: r
                .get("requiresPruning")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }
}

impl HistoryEntry {
    fn from_value(h: &Value) -> Self {
        Self {
            id: h.get("id").and_then(Value::as_i64).unwrap_or(0),
            revision: str_at(h, "/revision"),
            deployed_at: time_at(h, "/deployedAt"),
            deploy_started_at: time_at(h, "/deployStartedAt"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn pruning_keeps_everything_the_views_read() {
        let full = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "shop", "namespace": "argocd", "uid": "u1", "resourceVersion": "7",
                         "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"},
                         "managedFields": [{"manager": "argocd-server"}]},
            "spec": {"destination": {"namespace": "shop"},
                     "syncPolicy": {"automated": {"selfHeal": true}, "syncOptions": ["PruneLast=true"]},
                     "ignoreDifferences": [{"kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]},
            "status": {
                "sync": {"status": "OutOfSync", "revision": "4f2a9c1", "comparedTo": {"source": {}}},
                "health": {"status": "Progressing", "message": "waiting"},
                "reconciledAt": "2026-11-30T02:41:00Z",
                "resources": [{"group": "batch", "version": "v1", "kind": "Job", "namespace": "shop",
                               "name": "db-migrate", "hook": true, "syncWave": 5, "status": "Synced",
                               "health": {"status": "Progressing"}, "requiresPruning": false}],
                "history": [{"id": 3, "revision": "4f2a9c1", "deployedAt": "2026-11-30T02:00:00Z",
                             "deployStartedAt": "2026-11-30T01:59:00Z", "source": {"repoURL": "https://git"}}],
                "operationState": {
                    "phase": "Running", "message": "waiting for completion of hook batch/Job/db-migrate",
                    "startedAt": "2026-11-30T02:00:00Z",
                    "operation": {"sync": {"revision": "4f2a9c1", "syncStrategy": {}},
                                  "initiatedBy": {"automated": true}, "retry": {}},
                    "syncResult": {"revision": "4f2a9c1", "source": {"repoURL": "https://git"},
                                   "resources": [{"group": "batch", "version": "v1", "kind": "Job",
                                                  "namespace": "shop", "name": "db-migrate",
                                                  "hookType": "PreSync", "hookPhase": "Running",
                                                  "syncPhase": "PreSync", "message": "running"}]}},
                "conditions": [{"type": "SyncError"}], "summary": {"images": ["a"]}, "sourceType": "Helm"
            }
        });
        let mut diagnosis = full.clone();
        prune_value(&mut diagnosis, Keep::Diagnosis);
        assert_eq!(
            LiveApplication::from_value(&diagnosis),
            LiveApplication::from_value(&full)
        );
        assert!(diagnosis.pointer("/status/history/0/source").is_none());
        assert!(
            diagnosis
                .pointer("/status/operationState/syncResult/source")
                .is_none()
        );
        assert!(diagnosis.pointer("/status/conditions").is_none());
        assert!(diagnosis.pointer("/metadata/managedFields").is_none());
        assert_eq!(
            diagnosis["metadata"]["annotations"],
            serde_json::json!({"team": "a"})
        );
        let mut index = full.clone();
        prune_value(&mut index, Keep::Index);
        let (a, b) = (
            LiveApplication::from_value(&index).unwrap(),
            LiveApplication::from_value(&full).unwrap(),
        );
        assert_eq!(
            (a.resources, a.sync_status, a.health),
            (b.resources, b.sync_status, b.health)
        );
        assert!(
            index.pointer("/status/operationState").is_none()
                && index.pointer("/status/history").is_none()
        );
        assert_eq!(index["spec"], full["spec"]);
    }

    #[test]
    fn a_finished_operation_keeps_only_the_results_of_its_hooks() {
        let result = |kind: &str, name: &str, hook: Option<&str>| {
            json!({"group": "", "version": "v1", "kind": kind, "namespace": "shop", "name": name,
                   "hookType": hook, "hookPhase": "Succeeded", "status": "Synced"})
        };
        let app = |phase: &str| {
            json!({
                "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "shop", "namespace": "argocd"},
                "status": {"operationState": {"phase": phase, "syncResult": {"resources": [
                    result("ConfigMap", "cfg", None),
                    result("Pod", "migrate", Some("PreSync")),
                    result("Service", "web", None)]}}}
            })
        };
        let names = |mut v: Value| {
            prune_value(&mut v, Keep::Diagnosis);
            let live = LiveApplication::from_value(&v).unwrap();
            live.operation
                .unwrap()
                .results
                .into_iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(app("Succeeded")), ["migrate"]);
        assert_eq!(names(app("Failed")), ["migrate"]);
        assert_eq!(names(app("Running")), ["cfg", "migrate", "web"]);
        assert_eq!(names(app("Terminating")), ["cfg", "migrate", "web"]);
    }

    use super::*;
    use serde_json::json;

    fn stuck_app() -> Value {
        json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "orders", "namespace": "argocd", "uid": "u-1"},
            "spec": {"destination": {"namespace": "orders"},
                     "syncPolicy": {"automated": {"selfHeal": true}, "syncOptions": ["CreateNamespace=true"]}},
            "status": {
                "sync": {"status": "OutOfSync", "revision": "abc"},
                "health": {"status": "Progressing"},
                "resources": [
                    {"group": "external-secrets.io", "version": "v1beta1", "kind": "ExternalSecret",
                     "namespace": "orders", "name": "db-credentials", "syncWave": 2, "status": "OutOfSync"},
                    {"group": "batch", "version": "v1", "kind": "Job", "namespace": "orders",
                     "name": "db-migrate", "hook": true}
                ],
                "operationState": {
                    "phase": "Running",
                    "message": "waiting for completion of hook batch/Job/db-migrate",
                    "startedAt": "2026-11-30T02:00:00Z",
                    "operation": {"initiatedBy": {"automated": true}},
                    "syncResult": {"revision": "abc", "resources": [
                        {"group": "batch", "version": "v1", "kind": "Job", "namespace": "orders",
                         "name": "db-migrate", "hookType": "PreSync", "hookPhase": "Running",
                         "syncPhase": "PreSync", "message": "job is still running"}
                    ]}
                },
                "history": [{"id": 3, "revision": "abb", "deployedAt": "2026-11-29T10:00:00Z"}]
            }
        })
    }

    #[test]
    fn reads_the_fields_a_stuck_sync_diagnosis_needs() {
        let app = LiveApplication::from_value(&stuck_app()).unwrap();
        assert_eq!(app.display_name(), "argocd/orders");
        assert!(app.automated && app.self_heal);
        assert_eq!(app.destination_namespace.as_deref(), Some("orders"));
        let op = app.operation.as_ref().unwrap();
        assert_eq!(op.phase, "Running");
        assert!(op.automated);
        assert_eq!(op.results[0].hook_phase.as_deref(), Some("Running"));
        assert_eq!(op.results[0].hook_type.as_deref(), Some("PreSync"));
        assert_eq!(app.resources[0].sync_wave, 2);
        assert!(app.resources[1].hook);
        assert_eq!(app.history[0].id, 3);
        let now = parse_time("2026-11-30T02:41:00Z").unwrap();
        assert_eq!(
            app.running_for(now),
            Some(std::time::Duration::from_secs(41 * 60))
        );
    }

    #[test]
    fn malformed_fields_read_as_absent_and_other_kinds_are_refused() {
        let mut v = stuck_app();
        v["status"]["operationState"]["startedAt"] = json!("yesterday");
        v["status"]["resources"] = json!("not a list");
        let app = LiveApplication::from_value(&v).unwrap();
        assert!(app.resources.is_empty());
        assert_eq!(app.running_for(OffsetDateTime::now_utc()), None);

        let mut other = stuck_app();
        other["kind"] = json!("AppProject");
        assert!(LiveApplication::from_value(&other).is_none());
        assert!(LiveApplication::from_value(&json!({"kind": "Application"})).is_none());
    }
}
