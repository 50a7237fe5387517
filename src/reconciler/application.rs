//! What the reconciler keeps of a live Argo CD `Application`.
//!
//! The Application itself is read by the one vocabulary,
//! [`crate::config::application::Application`] (spec, metadata and
//! [`crate::config::status`]); this module holds the reconciler's own part: the constants of
//! the watch, the opt-in annotation of the terminate, and what a cache prunes before reading.

use serde_json::Value;

use crate::model::phase::OperationPhase;

/// The Application as the reconciler reads it: the one typed Argo CD Application.
pub use crate::config::application::Application;
pub use crate::config::status::parse_time;

/// The API group, version and kind of Argo CD Applications.
pub const GROUP: &str = "argoproj.io";
/// See [`GROUP`].
pub const VERSION: &str = "v1alpha1";
/// See [`GROUP`].
pub const KIND: &str = "Application";

/// The Application annotation that opts it in to ending a stuck operation
/// ([`super::terminate`]): a duration (`30m`), or `off` to opt out of a configured default.
pub const TERMINATE_ANNOTATION: &str = "syncguard.dev/terminate-stuck-after";

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
        let finished = op
            .get("phase")
            .and_then(Value::as_str)
            .and_then(OperationPhase::parse)
            .is_some_and(OperationPhase::is_completed);
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
        let without_annotations = |v: &Value| {
            let mut a = Application::from_value(v).unwrap();
            a.annotations.clear();
            a
        };
        assert_eq!(without_annotations(&diagnosis), without_annotations(&full));
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
            Application::from_value(&index).unwrap(),
            Application::from_value(&full).unwrap(),
        );
        assert_eq!(
            (a.status.resources, a.status.sync, a.status.health),
            (b.status.resources, b.status.sync, b.status.health)
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
            let live = Application::from_value(&v).unwrap();
            live.status
                .operation
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
    use crate::model::argo::HookType;
    use crate::model::phase::TaskPhase;
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
        let app = Application::from_value(&stuck_app()).unwrap();
        assert_eq!(app.display_name(), "argocd/orders");
        assert!(app.automated && app.self_heal);
        assert_eq!(app.destination_namespace, "orders");
        assert_eq!(app.uid.as_deref(), Some("u-1"));
        let op = app.status.operation.as_ref().unwrap();
        assert_eq!(op.phase, Some(OperationPhase::Running));
        assert!(op.automated);
        assert_eq!(op.results[0].hook_phase, TaskPhase::Running);
        assert_eq!(op.results[0].hook_type, Some(HookType::PreSync));
        assert_eq!(app.status.resources[0].sync_wave, 2);
        assert!(app.status.resources[1].hook);
        assert_eq!(app.status.history[0].id, 3);
        let now = parse_time("2026-11-30T02:41:00Z").unwrap();
        assert_eq!(
            app.status.running_for(now),
            Some(std::time::Duration::from_secs(41 * 60))
        );
    }

    #[test]
    fn malformed_fields_read_as_absent_and_other_kinds_are_refused() {
        let mut v = stuck_app();
        v["status"]["operationState"]["startedAt"] = json!("yesterday");
        v["status"]["resources"] = json!("not a list");
        let app = Application::from_value(&v).unwrap();
        assert!(app.status.resources.is_empty());
        assert_eq!(
            app.status.running_for(time::OffsetDateTime::now_utc()),
            None
        );

        let mut other = stuck_app();
        other["kind"] = json!("AppProject");
        assert!(Application::from_value(&other).is_none());
        assert!(Application::from_value(&json!({"kind": "Application"})).is_none());
    }
}
