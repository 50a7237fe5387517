//! Argo CD Applications: which objects belong to which app, and the app settings that change
//! how Argo CD syncs them (destination namespace, sync options, ignoreDifferences).
//!
//! Membership comes from each object's tracking id (`argocd.argoproj.io/tracking-id`) or instance
//! label (`app.kubernetes.io/instance`), exactly as Argo CD tracks resources. Settings come from an
//! `argoproj.io/Application` object of that name in the same input, when there is one.

use serde::Serialize;
use serde_json::Value;

use super::Resource;
use super::argo::{SyncFacts, SyncOptions};

/// The parts of an `argoproj.io` Application that matter to a sync.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Application {
    /// `metadata.name`.
    pub name: String,
    /// `spec.destination.namespace` (empty when unset).
    pub destination_namespace: String,
    /// `spec.project` (empty when unset).
    pub project: String,
    /// `spec.syncPolicy.syncOptions`.
    pub sync_options: SyncOptions,
    /// `spec.syncPolicy.automated` is set.
    pub automated: bool,
    /// `spec.syncPolicy.automated.selfHeal`.
    pub self_heal: bool,
    /// `spec.syncPolicy.automated.prune`.
    pub auto_prune: bool,
    /// `spec.ignoreDifferences`, as written.
    pub ignore_differences: Vec<Value>,
    /// `spec.syncPolicy.managedNamespaceMetadata` is set.
    pub managed_namespace_metadata: bool,
}

impl Application {
    /// Reads an Application object; `None` for any other kind.
    pub fn from_resource(r: &Resource) -> Option<Application> {
        if r.group != "argoproj.io" || r.kind != "Application" {
            return None;
        }
        let spec = r.raw.get("spec");
        let at = |p: &str| spec.and_then(|s| s.pointer(p));
        let sync_options = SyncOptions::from_items(
            at("/syncPolicy/syncOptions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        );
        let automated = at("/syncPolicy/automated").filter(|v| v.is_object());
        Some(Application {
            name: r.name.clone(),
            destination_namespace: at("/destination/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            project: at("/project")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            sync_options,
            automated: automated.is_some(),
            self_heal: automated
                .and_then(|a| a.get("selfHeal"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            auto_prune: automated
                .and_then(|a| a.get("prune"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            ignore_differences: at("/ignoreDifferences")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            managed_namespace_metadata: at("/syncPolicy/managedNamespaceMetadata").is_some(),
        })
    }
}

/// The objects of one Application (or of no known Application).
#[derive(Debug, Clone, PartialEq)]
pub struct AppGroup {
    /// The app name from tracking; `None` for objects that name no app.
    pub name: Option<String>,
    /// The Application object of that name, when the input contains it.
    pub application: Option<Application>,
    /// Indexes of the member objects in the input, in input order.
    pub members: Vec<usize>,
}

/// Splits objects by owning Application, in order of first appearance. Application objects are
/// members of the app that tracks *them* (app-of-apps), and also describe the app they name.
pub fn group_by_app(resources: &[Resource], facts: &[SyncFacts]) -> Vec<AppGroup> {
    let mut groups: Vec<AppGroup> = Vec::new();
    let mut by_name: std::collections::HashMap<Option<String>, usize> = Default::default();
    for (i, f) in facts.iter().enumerate() {
        let name = f.tracking.app_name().map(str::to_string);
        let slot = *by_name.entry(name.clone()).or_insert_with(|| {
            groups.push(AppGroup {
                name,
                application: None,
                members: Vec::new(),
            });
            groups.len() - 1
        });
        if let Some(g) = groups.get_mut(slot) {
            g.members.push(i);
        }
    }
    for r in resources {
        if let Some(app) = Application::from_resource(r)
            && let Some(g) = groups
                .iter_mut()
                .find(|g| g.name.as_deref() == Some(app.name.as_str()))
        {
            g.application = Some(app);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(v: Value) -> Resource {
        Resource::from_value(v, None).unwrap()
    }

    #[test]
    fn objects_are_grouped_by_tracking_id_then_instance_label() {
        let rs = vec![
            res(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
                "annotations": {"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/a"}}}),
            ),
            res(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b",
                "labels": {"app.kubernetes.io/instance": "blog"}}}),
            ),
            res(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})),
            res(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d",
                "labels": {"app.kubernetes.io/instance": "shop"}}}),
            ),
            res(
                json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "shop"},
                "spec": {"destination": {"namespace": "shop"},
                         "syncPolicy": {"automated": {"selfHeal": true},
                                        "syncOptions": ["CreateNamespace=true"]}}}),
            ),
        ];
        let facts: Vec<SyncFacts> = rs.iter().map(SyncFacts::of).collect();
        let groups = group_by_app(&rs, &facts);
        let names: Vec<Option<&str>> = groups.iter().map(|g| g.name.as_deref()).collect();
        assert_eq!(names, vec![Some("shop"), Some("blog"), None]);
        assert_eq!(groups[0].members, vec![0, 3]);
        assert_eq!(groups[2].members, vec![2, 4]);
        let app = groups[0].application.as_ref().unwrap();
        assert_eq!(app.destination_namespace, "shop");
        assert!(app.self_heal && app.automated && !app.auto_prune);
        assert!(app.sync_options.has("CreateNamespace=true"));
        assert!(groups[1].application.is_none());
    }
}
