//! What an object waits for that the sync cannot provide in time.
//!
//! - A ResourceQuota of the input whose `hard` list names a compute resource (`requests.cpu`,
//!   `limits.memory`, `cpu`, ...) makes the API server refuse every Pod of that namespace whose
//!   containers do not set it ("must specify limits.memory"), unless a LimitRange of the
//!   namespace supplies a default. The workload's Pods are never created.
//! - A PersistentVolumeClaim of a StorageClass with `volumeBindingMode: WaitForFirstConsumer`
//!   binds only once a Pod using it is scheduled; Argo CD reports a Pending claim Progressing.
//!   If no Pod of the same or an earlier step uses it, the step never ends.

use std::collections::HashMap;

use super::{Need, pod_specs};
use crate::model::Resource;

/// (namespace, claim name).
type ClaimKey = (Option<String>, String);

/// (kind, name, plan step) of an object whose Pods use a claim.
type Consumer = (String, String, Option<usize>);

/// What the needs of every object of one input are judged against, built once: its quotas,
/// limit ranges and storage classes (copied: there are few), and which objects' Pods use each
/// claim, with their plan steps.
#[derive(Debug, Default, Clone)]
pub struct NeedsIndex {
    quotas: Vec<Resource>,
    ranges: Vec<Resource>,
    classes: Vec<Resource>,
    /// PersistentVolumes, with their plan steps.
    volumes: Vec<(Resource, Option<usize>)>,
    /// (namespace, claim name) → (kind, name, plan step) of the objects whose Pods use it.
    consumers: HashMap<ClaimKey, Vec<Consumer>>,
}

impl NeedsIndex {
    /// Indexes `objects`; `steps[i]` is the plan step of `objects[i]` (`None`: no task).
    pub fn of(objects: &[Resource], steps: &[Option<usize>]) -> Self {
        let mut index = NeedsIndex::default();
        for (i, o) in objects.iter().enumerate() {
            match (o.group.as_str(), o.kind.as_str()) {
                ("", "ResourceQuota") => index.quotas.push(o.clone()),
                ("", "LimitRange") => index.ranges.push(o.clone()),
                ("storage.k8s.io", "StorageClass") => index.classes.push(o.clone()),
                ("", "PersistentVolume") => index
                    .volumes
                    .push((o.clone(), steps.get(i).copied().flatten())),
                _ => {}
            }
            for (_, pod) in pod_specs(&o.raw) {
                for v in pod["volumes"].as_array().into_iter().flatten() {
                    if let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() {
                        index
                            .consumers
                            .entry((o.namespace.clone(), claim.to_string()))
                            .or_default()
                            .push((
                                o.kind.clone(),
                                o.name.clone(),
                                steps.get(i).copied().flatten(),
                            ));
                    }
                }
            }
        }
        index
    }
}

/// The PersistentVolume of the input that binds claim `r` (plan step `step`) at once
/// ([`super::binds`]).
pub fn binds_of(index: &NeedsIndex, r: &Resource, step: Option<usize>) -> Option<String> {
    if !(r.group.is_empty() && r.kind == "PersistentVolumeClaim") || index.volumes.is_empty() {
        return None;
    }
    super::binds::bound_by(&index.volumes, &index.classes, r, step)
}

/// Every need of `r`, whose first task is in plan step `step`.
pub fn needs_of(index: &NeedsIndex, r: &Resource, step: Option<usize>) -> Vec<Need> {
    let mut out = if index.quotas.is_empty() {
        Vec::new()
    } else {
        quota_needs(index, r)
    };
    if r.group.is_empty() && r.kind == "PersistentVolumeClaim" && !index.classes.is_empty() {
        out.extend(claim_needs(index, step, r));
    }
    out
}

fn same_namespace(a: &Resource, b: &Resource) -> bool {
    a.namespace == b.namespace
}

/// `requests.cpu` and `cpu` → (`requests`, `cpu`); `limits.memory` → (`limits`, `memory`).
fn quota_key(key: &str) -> Option<(&'static str, String)> {
    let (kind, resource) = match key.split_once('.') {
        Some(("requests", r)) => ("requests", r),
        Some(("limits", r)) => ("limits", r),
        _ if matches!(key, "cpu" | "memory" | "ephemeral-storage") => ("requests", key),
        _ => return None,
    };
    matches!(resource, "cpu" | "memory" | "ephemeral-storage").then(|| (kind, resource.to_string()))
}

fn quota_needs(index: &NeedsIndex, r: &Resource) -> Vec<Need> {
    let specs = pod_specs(&r.raw);
    if specs.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for quota in index.quotas.iter().filter(|q| same_namespace(q, r)) {
        let spec = &quota.raw["spec"];
        // A scoped quota applies to some Pods only: not judged.
        if spec.get("scopes").is_some() || spec.get("scopeSelector").is_some() {
            continue;
        }
        let keys: Vec<(&str, &'static str, String)> = spec["hard"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, _)| quota_key(k).map(|(kind, res)| (k.as_str(), kind, res)))
            .filter(|(_, kind, res)| !defaulted(index, r, kind, res))
            .collect();
        if keys.is_empty() {
            continue;
        }
        for (base, pod) in &specs {
            for group in ["initContainers", "containers"] {
                for (n, c) in pod[group].as_array().into_iter().flatten().enumerate() {
                    let res = &c["resources"];
                    let missing: Vec<String> = keys
                        .iter()
                        .filter(|(_, kind, resource)| {
                            // requests default to the limits when only limits are set
                            let from_limits =
                                *kind == "requests" && !res["limits"][resource.as_str()].is_null();
                            res[*kind][resource.as_str()].is_null() && !from_limits
                        })
                        .map(|(_, kind, resource)| format!("{kind}.{resource}"))
                        .collect();
                    if missing.is_empty() {
                        continue;
                    }
                    let limited: Vec<&str> = keys.iter().map(|(k, _, _)| *k).collect();
                    out.push(Need {
                        pointer: format!("{base}/{group}/{n}/resources"),
                        what: format!(
                            "ResourceQuota {} limits {} in this namespace and container \"{}\" sets no {} (no LimitRange gives a default): the API server refuses every Pod (\"must specify {}\"), so none is ever created",
                            quota.name,
                            limited.join(", "),
                            c["name"].as_str().unwrap_or("?"),
                            missing.join(", "),
                            missing.join(",")
                        ),
                        evidence: format!("ResourceQuota {}", quota.name),
                        confidence: "certain",
                    });
                }
            }
        }
    }
    out
}

/// A LimitRange of the namespace gives containers a default for `kind`.`resource`.
fn defaulted(index: &NeedsIndex, r: &Resource, kind: &str, resource: &str) -> bool {
    index
        .ranges
        .iter()
        .filter(|l| same_namespace(l, r))
        .flat_map(|l| l.raw["spec"]["limits"].as_array().into_iter().flatten())
        .filter(|item| item["type"] == "Container")
        .any(|item| {
            let limit_default = !item["default"][resource].is_null();
            let request_default = !item["defaultRequest"][resource].is_null();
            match kind {
                "limits" => limit_default,
                _ => request_default || limit_default,
            }
        })
}

fn claim_needs(index: &NeedsIndex, my_step: Option<usize>, claim: &Resource) -> Vec<Need> {
    let Some(class) = binding_class(index, claim) else {
        return Vec::new();
    };
    let consumers = index
        .consumers
        .get(&(claim.namespace.clone(), claim.name.clone()))
        .map(Vec::as_slice)
        .unwrap_or_default();
    let in_time = consumers
        .iter()
        .any(|(_, _, step)| matches!((step, my_step), (Some(a), Some(b)) if *a <= b));
    if in_time {
        return Vec::new();
    }
    let what = match consumers.first() {
        Some((kind, name, _)) => format!(
            "StorageClass {class} binds a claim only once a Pod using it is scheduled (volumeBindingMode: WaitForFirstConsumer), and the first Pod using this claim, in {kind} {name}, comes in a later step: Argo CD reports the claim Progressing (Pending) and never starts that step"
        ),
        None => format!(
            "StorageClass {class} binds a claim only once a Pod using it is scheduled (volumeBindingMode: WaitForFirstConsumer), and no Pod of this sync uses this claim: it stays Pending, which Argo CD reports Progressing"
        ),
    };
    vec![Need {
        pointer: "/spec/storageClassName".into(),
        what,
        evidence: format!("StorageClass {class}"),
        confidence: "certain",
    }]
}

/// The claim's StorageClass, when the input holds it and it waits for the first consumer.
fn binding_class(index: &NeedsIndex, claim: &Resource) -> Option<String> {
    let classes = || index.classes.iter();
    let class = match claim.raw["spec"]["storageClassName"].as_str() {
        Some(name) => classes().find(|c| c.name == name)?,
        None => classes().find(|c| {
            c.raw["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"]
                == "true"
        })?,
    };
    (class.raw["volumeBindingMode"] == "WaitForFirstConsumer").then(|| class.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn r(raw: Value) -> Resource {
        Resource::from_value(raw, None).unwrap()
    }

    fn deployment(resources: Value) -> Resource {
        r(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "q"},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "resources": resources}],
                "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}}}),
        )
    }

    #[test]
    fn a_quota_refuses_pods_whose_containers_set_nothing_unless_a_limit_range_defaults_it() {
        let quota = r(
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "team", "namespace": "q"},
            "spec": {"hard": {"limits.memory": "4Gi", "requests.cpu": "2", "pods": "10"}}}),
        );
        let objects = vec![quota.clone(), deployment(json!({"limits": {"cpu": "1"}}))];
        let needs = needs_of(
            &NeedsIndex::of(&objects, &[Some(0), Some(0)]),
            &objects[1],
            Some(0),
        );
        assert_eq!(needs.len(), 1, "{needs:?}");
        // requests.cpu defaults to limits.cpu: only limits.memory is missing
        assert!(
            needs[0].what.contains("sets no limits.memory ("),
            "{}",
            needs[0].what
        );
        let range = r(
            json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "d", "namespace": "q"},
            "spec": {"limits": [{"type": "Container", "default": {"memory": "512Mi"}}]}}),
        );
        let objects = vec![quota, deployment(json!({"limits": {"cpu": "1"}})), range];
        assert!(
            needs_of(
                &NeedsIndex::of(&objects, &[Some(0), Some(0), Some(0)]),
                &objects[1],
                Some(0)
            )
            .is_empty()
        );
    }

    #[test]
    fn a_wait_for_first_consumer_claim_before_its_consumer_blocks() {
        let class = r(
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
            "provisioner": "x", "volumeBindingMode": "WaitForFirstConsumer"}),
        );
        let claim = r(
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "q"},
            "spec": {"storageClassName": "local"}}),
        );
        let objects = vec![class, claim, deployment(json!({}))];
        let late = needs_of(
            &NeedsIndex::of(&objects, &[Some(0), Some(0), Some(1)]),
            &objects[1],
            Some(0),
        );
        assert_eq!(late.len(), 1);
        assert!(late[0].what.contains("comes in a later step"));
        assert!(
            needs_of(
                &NeedsIndex::of(&objects, &[Some(0), Some(1), Some(1)]),
                &objects[1],
                Some(1)
            )
            .is_empty()
        );
    }
}
