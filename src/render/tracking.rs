//! The tracking id Argo CD writes on every rendered object (3.6.1,
//! `util/argo/resource_tracking.go` `SetAppInstance`, default method `annotation`).

use serde_json::{Map, Value};

use crate::model::Resource;

/// The annotation that ties an object to its Application.
pub const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
/// The annotation Argo CD removes when no `installationID` is configured.
const INSTALLATION_ID: &str = "argocd.argoproj.io/installation-id";

/// `r` with `argocd.argoproj.io/tracking-id: <app>:<group>/<Kind>:<namespace>/<name>`, where
/// the namespace is the object's own, else the destination namespace (even for cluster-scoped
/// kinds, as Argo CD writes it). CustomResourceDefinitions get none. A stale
/// `installation-id` annotation is removed, as Argo CD removes it.
pub fn track(r: Resource, app: &str, destination_namespace: &str) -> Resource {
    if r.group == "apiextensions.k8s.io" && r.kind == "CustomResourceDefinition" {
        return r;
    }
    let namespace = r
        .namespace
        .clone()
        .unwrap_or_else(|| destination_namespace.to_string());
    let id = format!("{app}:{}/{}:{namespace}/{}", r.group, r.kind, r.name);
    let mut raw = r.raw.clone();
    if let Some(metadata) = raw.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if !annotations.is_object() {
            *annotations = Value::Object(Map::new());
        }
        if let Some(a) = annotations.as_object_mut() {
            a.insert(TRACKING_ID.into(), Value::String(id));
            a.remove(INSTALLATION_ID);
        }
    }
    r.with_raw(raw).unwrap_or(r)
}

/// The Application instance an object's tracking id names, when it has one.
pub fn tracked_app(r: &Resource) -> Option<&str> {
    r.raw
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(TRACKING_ID))
        .and_then(Value::as_str)
        .and_then(|id| id.split_once(':'))
        .map(|(app, _)| app)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    fn one(yaml: &str) -> Resource {
        load_str("x.yaml", yaml).resources.remove(0)
    }

    #[test]
    fn ids_name_group_kind_namespace_and_name_but_not_crds() {
        let cm = track(
            one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n"),
            "web",
            "shop",
        );
        assert_eq!(
            cm.raw["metadata"]["annotations"][TRACKING_ID],
            "web:/ConfigMap:shop/cfg"
        );
        let role = track(
            one(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n  annotations: {argocd.argoproj.io/installation-id: old, keep: me}\n",
            ),
            "team_web",
            "shop",
        );
        let a = &role.raw["metadata"]["annotations"];
        assert_eq!(
            a[TRACKING_ID],
            "team_web:rbac.authorization.k8s.io/ClusterRole:shop/r"
        );
        assert_eq!(a["keep"], "me");
        assert!(a.get(INSTALLATION_ID).is_none());
        let crd = one(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com}\n",
        );
        assert_eq!(track(crd.clone(), "web", "shop").raw, crd.raw);
        // The origin (file:line) survives.
        let origin = cm.origin.unwrap();
        assert_eq!((&*origin.file, origin.start.line), ("x.yaml", 1));
    }
}
