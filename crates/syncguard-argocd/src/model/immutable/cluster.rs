//! Cluster-wide kinds whose identity lives in a field: RoleBinding and ClusterRoleBinding
//! (`roleRef`: a grant may not silently point at another role), PriorityClass (`value`,
//! `preemptionPolicy`: running pods carry the priority they were given), IngressClass
//! (`spec.controller`), RuntimeClass (`handler`) and CustomResourceDefinition (what its
//! stored objects are keyed by).

use serde_json::Value;

use super::compare::{or_default, plain_str, same};
use super::{Change, Refusal, forbidden, immutable, invalid};

/// RoleBinding, ClusterRoleBinding: `roleRef`.
pub(super) fn role_ref(c: &Change, out: &mut Vec<Refusal>) {
    let changed = ["apiGroup", "kind", "name"].iter().any(|k| {
        let pointer = format!("/roleRef/{k}");
        plain_str(c.before(&pointer)) != plain_str(c.after(&pointer))
    });
    if changed {
        out.push(invalid(
            "/roleRef",
            "roleRef",
            c.after("/roleRef"),
            "cannot change roleRef",
        ));
    }
}

/// PriorityClass: `value` and `preemptionPolicy`.
pub(super) fn priority_class(c: &Change, out: &mut Vec<Refusal>) {
    let value = |v| or_default(v, Value::from(0));
    if !same(
        Some(&value(c.before("/value"))),
        Some(&value(c.after("/value"))),
    ) {
        out.push(forbidden(
            "/value",
            "value",
            "may not be changed in an update.",
        ));
    }
    let policy = |v| or_default(v, Value::from("PreemptLowerPriority"));
    if policy(c.before("/preemptionPolicy")) != policy(c.after("/preemptionPolicy")) {
        out.push(immutable(
            "/preemptionPolicy",
            "preemptionPolicy",
            c.after("/preemptionPolicy"),
        ));
    }
}

/// IngressClass: `spec.controller`.
pub(super) fn ingress_class(c: &Change, out: &mut Vec<Refusal>) {
    if plain_str(c.before("/spec/controller")) != plain_str(c.after("/spec/controller")) {
        out.push(immutable(
            "/spec/controller",
            "spec.controller",
            c.after("/spec/controller"),
        ));
    }
}

/// RuntimeClass: `handler`.
pub(super) fn runtime_class(c: &Change, out: &mut Vec<Refusal>) {
    if plain_str(c.before("/handler")) != plain_str(c.after("/handler")) {
        out.push(immutable("/handler", "handler", c.after("/handler")));
    }
}

/// CustomResourceDefinition: `spec.group` and `spec.names.plural` always (they make its
/// name); `spec.scope` and `spec.names.kind` once it is Established, which a CRD is moments
/// after its creation (assumed when `before` has no status); and every version objects are
/// stored in (`status.storedVersions`, else the storage version of `before`) must stay in
/// `spec.versions`.
pub(super) fn crd(c: &Change, out: &mut Vec<Refusal>) {
    let established = match c.before("/status/conditions").and_then(Value::as_array) {
        Some(conds) => conds.iter().any(|cond| {
            cond.get("type").and_then(Value::as_str) == Some("Established")
                && cond.get("status").and_then(Value::as_str) == Some("True")
        }),
        None => true,
    };
    let mut fields = vec![
        ("/spec/group", "spec.group"),
        ("/spec/names/plural", "spec.names.plural"),
    ];
    if established {
        fields.insert(0, ("/spec/scope", "spec.scope"));
        fields.insert(1, ("/spec/names/kind", "spec.names.kind"));
    }
    for (pointer, field) in fields {
        if plain_str(c.before(pointer)) != plain_str(c.after(pointer)) {
            out.push(immutable(pointer, field, c.after(pointer)));
        }
    }
    let names = |v: Option<&Value>, storage_only: bool| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|ver| {
                !storage_only || ver.get("storage").and_then(Value::as_bool) == Some(true)
            })
            .filter_map(|ver| ver.get("name").and_then(Value::as_str).map(str::to_string))
            .collect()
    };
    let stored: Vec<String> = match c.before("/status/storedVersions").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        None => names(c.before("/spec/versions"), true),
    };
    let served = names(c.after("/spec/versions"), false);
    for (i, v) in stored.iter().enumerate() {
        if !served.contains(v) {
            out.push(invalid(
                "/spec/versions",
                &format!("status.storedVersions[{i}]"),
                Some(&Value::from(v.as_str())),
                "must appear in spec.versions",
            ));
        }
    }
}
