//! Which objects of a set may write a Secret or ConfigMap at run time.
//!
//! Charts often create a Secret from inside a hook rather than as a manifest: a certificate
//! generator Job (cockroachdb's `self-signer`, many webhook charts' `admission-create`) runs in
//! PreSync and writes the TLS Secret that a later hook mounts. Judged by manifests alone, that
//! Secret is "not in the input", and a rule would assert something the manifests cannot show.
//! This model finds the candidates: workloads of the set whose ServiceAccount a RoleBinding or
//! ClusterRoleBinding of the set grants `create`, `update` or `patch` on that object (by its
//! resource and, when the rule names them, its `resourceNames`). That they do write it is an
//! assumption; rules state it as one.
//!
//! Only what the set itself declares counts: roles and bindings from elsewhere are unknown.
//! Aggregated ClusterRoles and wildcard groups are read as written (`*` matches everything).

use std::collections::HashMap;

use serde_json::Value;

use super::Resource;
use super::waits::pod_specs;

/// The kinds a workload may write at run time that this model knows, with their resource.
const WRITABLE: &[(&str, &str)] = &[("Secret", "secrets"), ("ConfigMap", "configmaps")];

/// One grant of a role: the resource it covers and the names it is limited to (empty: all).
#[derive(Debug, Clone)]
struct Grant {
    resource: String,
    names: Vec<String>,
}

/// (namespace, ServiceAccount) → its grants, each with the namespace it applies in (`None`:
/// any, from a ClusterRoleBinding).
type Grants = HashMap<(String, String), Vec<(Option<String>, Grant)>>;

/// The objects of a set that may write core Secrets and ConfigMaps, by what their
/// ServiceAccounts are granted.
#[derive(Debug, Default)]
pub struct Writers {
    grants: Grants,
    /// Workloads: index in the set → (namespace, ServiceAccount).
    runs_as: Vec<(usize, String, String)>,
}

impl Writers {
    /// Indexes `resources`; `default_namespace` is what Argo CD fills into objects without one.
    pub fn of(resources: &[Resource], default_namespace: &str) -> Self {
        let ns = |r: &Resource| {
            r.namespace
                .clone()
                .unwrap_or_else(|| default_namespace.to_string())
        };
        // Role rules by (kind, namespace or "", name).
        let mut roles: HashMap<(&str, String, &str), Vec<Grant>> = HashMap::new();
        for r in resources {
            if r.group != "rbac.authorization.k8s.io" {
                continue;
            }
            let scope = match r.kind.as_str() {
                "Role" => ns(r),
                "ClusterRole" => String::new(),
                _ => continue,
            };
            let grants = write_grants(&r.raw);
            if !grants.is_empty() {
                roles
                    .entry((r.kind.as_str(), scope, r.name.as_str()))
                    .or_default()
                    .extend(grants);
            }
        }
        let mut grants = Grants::new();
        if !roles.is_empty() {
            for r in resources {
                let cluster_wide = match (r.group.as_str(), r.kind.as_str()) {
                    ("rbac.authorization.k8s.io", "RoleBinding") => false,
                    ("rbac.authorization.k8s.io", "ClusterRoleBinding") => true,
                    _ => continue,
                };
                let binding_ns = ns(r);
                let role_kind = r.raw.pointer("/roleRef/kind").and_then(Value::as_str);
                let role_name = r.raw.pointer("/roleRef/name").and_then(Value::as_str);
                let (Some(role_kind), Some(role_name)) = (role_kind, role_name) else {
                    continue;
                };
                let role_scope = if role_kind == "Role" {
                    binding_ns.clone()
                } else {
                    String::new()
                };
                let Some(role_grants) = roles.get(&(role_kind, role_scope, role_name)) else {
                    continue;
                };
                let applies_in = (!cluster_wide).then(|| binding_ns.clone());
                for subject in r
                    .raw
                    .get("subjects")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if subject.get("kind").and_then(Value::as_str) != Some("ServiceAccount") {
                        continue;
                    }
                    let Some(name) = subject.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let sa_ns = subject
                        .get("namespace")
                        .and_then(Value::as_str)
                        .map_or_else(|| binding_ns.clone(), str::to_string);
                    grants
                        .entry((sa_ns, name.to_string()))
                        .or_default()
                        .extend(role_grants.iter().map(|g| (applies_in.clone(), g.clone())));
                }
            }
        }
        let mut runs_as = Vec::new();
        if !grants.is_empty() {
            for (i, r) in resources.iter().enumerate() {
                for (_, spec) in pod_specs(&r.raw) {
                    let account = spec
                        .get("serviceAccountName")
                        .or_else(|| spec.get("serviceAccount"))
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .unwrap_or("default");
                    runs_as.push((i, ns(r), account.to_string()));
                }
            }
        }
        Self { grants, runs_as }
    }

    /// The workloads (indexes into the set) whose ServiceAccount may create or change the
    /// `kind` object `namespace/name`; empty for kinds this model does not know.
    pub fn of_object(&self, kind: &str, namespace: &str, name: &str) -> Vec<usize> {
        let Some(resource) = WRITABLE
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, resource)| *resource)
        else {
            return Vec::new();
        };
        let mut out: Vec<usize> = self
            .runs_as
            .iter()
            .filter(|(_, sa_ns, account)| {
                self.grants
                    .get(&(sa_ns.clone(), account.clone()))
                    .is_some_and(|gs| {
                        gs.iter().any(|(applies_in, g)| {
                            applies_in.as_deref().is_none_or(|n| n == namespace)
                                && (g.resource == resource || g.resource == "*")
                                && (g.names.is_empty() || g.names.iter().any(|n| n == name))
                        })
                    })
            })
            .map(|(i, _, _)| *i)
            .collect();
        out.dedup();
        out
    }
}

/// The rules of a Role or ClusterRole that let a subject create or change core objects.
fn write_grants(role: &Value) -> Vec<Grant> {
    let mut out = Vec::new();
    for rule in role
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let strings = |field: &str| -> Vec<String> {
            rule.get(field)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let groups = strings("apiGroups");
        if !groups.iter().any(|g| g.is_empty() || g == "*") {
            continue;
        }
        let verbs = strings("verbs");
        if !verbs
            .iter()
            .any(|v| matches!(v.as_str(), "create" | "update" | "patch" | "*"))
        {
            continue;
        }
        let names = strings("resourceNames");
        for resource in strings("resources") {
            out.push(Grant {
                resource,
                names: names.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(docs: &[Value]) -> Vec<Resource> {
        docs.iter()
            .map(|d| Resource::from_value(d.clone(), None).unwrap())
            .collect()
    }

    fn job(name: &str, account: Option<&str>) -> Value {
        let mut spec =
            json!({"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]});
        if let Some(a) = account {
            spec["serviceAccountName"] = json!(a);
        }
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "db"},
               "spec": {"template": {"spec": spec}}})
    }

    fn role(kind: &str, name: &str, rules: Value) -> Value {
        let mut r = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                           "metadata": {"name": name}, "rules": rules});
        if kind == "Role" {
            r["metadata"]["namespace"] = json!("db");
        }
        r
    }

    fn binding(kind: &str, role_kind: &str, role: &str, account: &str) -> Value {
        let mut b = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "db"}]});
        if kind == "RoleBinding" {
            b["metadata"]["namespace"] = json!("db");
        }
        b
    }

    // cockroachdb 21.0.1: the self-signer PreSync Job may create the client Secret the init Job
    // mounts; the init Job's own account may not.
    #[test]
    fn a_job_whose_role_may_create_secrets_is_a_writer() {
        let s = set(&[
            job("self-signer", Some("self-signer")),
            job("init", None),
            role(
                "Role",
                "self-signer",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "get"]}]),
            ),
            binding("RoleBinding", "Role", "self-signer", "self-signer"),
        ]);
        let w = Writers::of(&s, "db");
        assert_eq!(w.of_object("Secret", "db", "client-secret"), [0]);
        assert!(w.of_object("ConfigMap", "db", "client-secret").is_empty());
        assert!(w.of_object("Secret", "other", "client-secret").is_empty());
        assert!(w.of_object("ServiceAccount", "db", "x").is_empty());
    }

    #[test]
    fn read_only_rules_names_and_unbound_roles_do_not_make_writers() {
        let read = set(&[
            job("j", Some("sa")),
            role(
                "Role",
                "r",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]),
            ),
            binding("RoleBinding", "Role", "r", "sa"),
        ]);
        assert!(
            Writers::of(&read, "db")
                .of_object("Secret", "db", "x")
                .is_empty()
        );
        let named = set(&[
            job("j", Some("sa")),
            role(
                "Role",
                "r",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["update"], "resourceNames": ["tls"]}]),
            ),
            binding("RoleBinding", "Role", "r", "sa"),
        ]);
        let w = Writers::of(&named, "db");
        assert_eq!(w.of_object("Secret", "db", "tls"), [0]);
        assert!(w.of_object("Secret", "db", "other").is_empty());
        let unbound = set(&[
            job("j", Some("sa")),
            role(
                "Role",
                "r",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]),
            ),
        ]);
        assert!(
            Writers::of(&unbound, "db")
                .of_object("Secret", "db", "x")
                .is_empty()
        );
    }

    #[test]
    fn a_cluster_role_bound_cluster_wide_covers_every_namespace_with_wildcards() {
        let s = set(&[
            job("j", Some("sa")),
            role(
                "ClusterRole",
                "cr",
                json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
            ),
            binding("ClusterRoleBinding", "ClusterRole", "cr", "sa"),
        ]);
        let w = Writers::of(&s, "db");
        assert_eq!(w.of_object("ConfigMap", "elsewhere", "x"), [0]);
        // A RoleBinding to the same ClusterRole grants it in the binding's namespace only.
        let s = set(&[
            job("j", Some("sa")),
            role(
                "ClusterRole",
                "cr",
                json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["patch"]}]),
            ),
            binding("RoleBinding", "ClusterRole", "cr", "sa"),
        ]);
        let w = Writers::of(&s, "db");
        assert_eq!(w.of_object("ConfigMap", "db", "x"), [0]);
        assert!(w.of_object("ConfigMap", "elsewhere", "x").is_empty());
    }
}
