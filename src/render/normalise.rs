//! What Argo CD's controller does to the repo-server's objects before it diffs and syncs them
//! (`NormalizeTargetObjects`, `controller/state.go`): a namespaced object without a namespace
//! gets the destination namespace, a cluster-scoped one loses any namespace it names. `render`
//! prints the repo-server's objects; `check` and `plan` work on these.

use serde_json::Value;

use crate::model::Resource;
use crate::model::refs::is_cluster_scoped;

/// `r` as the controller holds it for an Application whose destination namespace is
/// `destination_namespace` (kinds syncguard does not know count as namespaced, as a custom
/// resource whose CRD is not installed yet does in Argo CD).
pub fn as_the_controller_sees(r: Resource, destination_namespace: &str) -> Resource {
    let cluster_scoped = is_cluster_scoped(&r.group, &r.kind);
    let change = match (&r.namespace, cluster_scoped) {
        (None, false) if !destination_namespace.is_empty() => {
            Some(Value::String(destination_namespace.to_string()))
        }
        (Some(_), true) => Some(Value::Null),
        _ => None,
    };
    let Some(namespace) = change else {
        return r;
    };
    let mut raw = r.raw.clone();
    if let Some(metadata) = raw.get_mut("metadata").and_then(Value::as_object_mut) {
        if namespace.is_null() {
            metadata.remove("namespace");
        } else {
            metadata.insert("namespace".into(), namespace);
        }
    }
    r.with_raw(raw).unwrap_or(r)
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
    fn namespaces_are_set_and_cleared_by_scope() {
        let cm = as_the_controller_sees(
            one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"),
            "shop",
        );
        assert_eq!(cm.namespace.as_deref(), Some("shop"));
        assert_eq!(cm.raw["metadata"]["namespace"], "shop");
        let role = as_the_controller_sees(
            one(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: x}\n",
            ),
            "shop",
        );
        assert_eq!(role.namespace, None);
        let own = as_the_controller_sees(
            one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n"),
            "shop",
        );
        assert_eq!(own.namespace.as_deref(), Some("other"));
        let cr = as_the_controller_sees(
            one("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"),
            "shop",
        );
        assert_eq!(cr.namespace.as_deref(), Some("shop"));
    }
}
