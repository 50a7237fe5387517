//! Immutable fields: which changes of a built-in object the API server refuses on update.
//!
//! A chart upgrade that changes a Deployment's `spec.selector`, a Job's pod template, a
//! StatefulSet's `volumeClaimTemplates` or a RoleBinding's `roleRef` renders fine and passes
//! every schema check, and yet Argo CD's apply of it fails: the API server validates an update
//! against the stored object and refuses to change those fields (`field is immutable`,
//! `Forbidden: updates to statefulset spec for fields other than ...`). The sync stays failed
//! until someone deletes the object or renames it. [`refused_changes`] predicts that offline,
//! from the object before the change (the base revision's manifest, or the live object) and
//! after it (the head revision's manifest, same kind and name).
//!
//! The facts are those of Kubernetes v1.34 (`ValidateStatefulSetUpdate`,
//! `ValidateJobSpecUpdate`, `ValidatePersistentVolumeClaimUpdate`, ... of k8s.io/kubernetes),
//! and `tests/immutable_fields.rs` holds each of them to a real v1.34.4 API server's answer.
//! docs/immutable-fields.md is the table.
//!
//! How the two objects are compared (see [`compare`]): as decoded values — absent, `null` and
//! empty lists or maps are equal, quantities by value, a default the server fills in equals
//! its omission where the rules know the default. A field the *server* fills in at creation
//! (a Job's generated selector and template labels, a Service's allocated `clusterIP`, a
//! claim's bound `volumeName` and default storage class) and that `after` omits is kept by an
//! apply, so it is no change; a replace sends the manifest as the whole object, and for most
//! of those fields the omission is a change the server refuses ([`ApplyMode::Replace`]).
//!
//! Kinds outside the table (custom resources included) have no refusals here: for them the
//! question is the CRD's `x-kubernetes-validations` transition rules, not this table.

mod cluster;
mod compare;
mod core;
mod storage;
mod workloads;

use serde::Serialize;
use serde_json::Value;

use super::split_api_version;

/// The Kubernetes release the table is held to (tests/immutable_fields.rs).
pub const KUBERNETES: &str = "v1.34.4";

/// How Argo CD sends the new manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyMode {
    /// `kubectl apply` (client- or server-side): fields the manifest omits and the manager
    /// never set keep their stored value.
    #[default]
    Apply,
    /// `Replace=true`: a PUT of the manifest as the whole object (`kubectl replace`); what it
    /// omits is gone, except what the server patches back (a Service's allocated cluster IPs
    /// and node ports).
    Replace,
}

/// One change the API server refuses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// JSON pointer of the changed field in the new manifest (`/spec/selector`).
    pub pointer: String,
    /// The field as the API server names it in its Status cause (`spec.selector`). Usually
    /// the pointer's path, but not always: a claim's `volumeMode` is `volumeMode`, a
    /// StatefulSet's changed `serviceName` is `spec`, a PersistentVolume's source is
    /// `spec.persistentvolumesource`, a CSIDriver's `attachRequired` is `spec.attachedRequired`.
    pub field: String,
    /// The refusal worded as the API server words it (`spec.selector: Invalid value: …: field
    /// is immutable`).
    pub message: String,
    /// The Kubernetes release from which this refusal (in this form) applies, when it
    /// changed in a release still in use; `None` for rules older than that.
    pub since: Option<&'static str>,
}

/// Fields of `before` (the stored object, or the manifest last applied) whose change to
/// `after` (the new manifest of the same kind and name) the API server refuses when Argo CD
/// applies it. Empty for kinds without immutable fields and for kinds outside the table.
pub fn refused_changes(
    api_version: &str,
    kind: &str,
    before: &Value,
    after: &Value,
) -> Vec<Refusal> {
    refused_changes_in(ApplyMode::Apply, api_version, kind, before, after)
}

/// [`refused_changes`] for an apply mode: with [`ApplyMode::Replace`] fields the server
/// filled in at creation and the manifest omits are changes too.
pub fn refused_changes_in(
    mode: ApplyMode,
    api_version: &str,
    kind: &str,
    before: &Value,
    after: &Value,
) -> Vec<Refusal> {
    let mut out = Vec::new();
    let (group, _) = split_api_version(api_version);
    let c = Change {
        mode,
        before,
        after,
    };
    match (group, kind) {
        ("apps" | "extensions", "Deployment" | "ReplicaSet" | "DaemonSet") => {
            workloads::selector(&c, &mut out);
        }
        ("apps", "StatefulSet") => workloads::statefulset(&c, &mut out),
        ("batch", "Job") => workloads::job(&c, &mut out),
        ("", "Pod") => workloads::pod(&c, &mut out),
        ("", "Service") => core::service(&c, &mut out),
        ("", "Secret") => core::secret(&c, &mut out),
        ("", "ConfigMap") => core::config_map(&c, &mut out),
        ("", "PersistentVolumeClaim") => storage::claim(&c, &mut out),
        ("", "PersistentVolume") => storage::volume(&c, &mut out),
        ("storage.k8s.io", "StorageClass") => storage::class(&c, &mut out),
        ("storage.k8s.io", "CSIDriver") => storage::csi_driver(&c, &mut out),
        ("storage.k8s.io", "VolumeAttachment") => storage::attachment(&c, &mut out),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            cluster::role_ref(&c, &mut out);
        }
        ("scheduling.k8s.io", "PriorityClass") => cluster::priority_class(&c, &mut out),
        ("networking.k8s.io", "IngressClass") => cluster::ingress_class(&c, &mut out),
        ("node.k8s.io", "RuntimeClass") => cluster::runtime_class(&c, &mut out),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => cluster::crd(&c, &mut out),
        _ => {}
    }
    out
}

/// Whether the table covers the kind: it knows its immutable fields, or that it has none.
/// CronJob (its job template is copied into each new Job, never compared), Namespace,
/// Ingress, PodDisruptionBudget (its selector is mutable since Kubernetes 1.15), Lease,
/// ServiceAccount, Role, ClusterRole, NetworkPolicy and HorizontalPodAutoscaler have none.
pub fn covers(api_version: &str, kind: &str) -> bool {
    let (group, _) = split_api_version(api_version);
    matches!(
        (group, kind),
        (
            "apps",
            "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet"
        ) | ("batch", "Job" | "CronJob")
            | (
                "",
                "Pod"
                    | "Service"
                    | "Secret"
                    | "ConfigMap"
                    | "PersistentVolumeClaim"
                    | "PersistentVolume"
                    | "Namespace"
                    | "ServiceAccount"
            )
            | (
                "storage.k8s.io",
                "StorageClass" | "CSIDriver" | "VolumeAttachment"
            )
            | (
                "rbac.authorization.k8s.io",
                "RoleBinding" | "ClusterRoleBinding" | "Role" | "ClusterRole"
            )
            | ("scheduling.k8s.io", "PriorityClass")
            | (
                "networking.k8s.io",
                "IngressClass" | "Ingress" | "NetworkPolicy"
            )
            | ("node.k8s.io", "RuntimeClass")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | ("policy", "PodDisruptionBudget")
            | ("coordination.k8s.io", "Lease")
            | ("autoscaling", "HorizontalPodAutoscaler")
    )
}

/// One update: the object before and after, and how it is sent.
struct Change<'a> {
    mode: ApplyMode,
    before: &'a Value,
    after: &'a Value,
}

impl Change<'_> {
    fn before(&self, pointer: &str) -> Option<&Value> {
        self.before.pointer(pointer)
    }
    fn after(&self, pointer: &str) -> Option<&Value> {
        self.after.pointer(pointer)
    }
    /// The value after the update of a field the server fills in at creation: an apply
    /// keeps the stored value when the manifest omits it.
    fn after_kept(&self, pointer: &str) -> Option<&Value> {
        match self.after(pointer) {
            None | Some(Value::Null) if self.mode == ApplyMode::Apply => self.before(pointer),
            v => v,
        }
    }
}

/// The server's `ValidateImmutableField` refusal.
fn immutable(pointer: &str, field: &str, value: Option<&Value>) -> Refusal {
    invalid(pointer, field, value, "field is immutable")
}

fn invalid(pointer: &str, field: &str, value: Option<&Value>, detail: &str) -> Refusal {
    Refusal {
        pointer: pointer.to_string(),
        field: field.to_string(),
        message: format!(
            "{field}: Invalid value: {}: {detail}",
            compare::render(value)
        ),
        since: None,
    }
}

fn forbidden(pointer: &str, field: &str, detail: &str) -> Refusal {
    Refusal {
        pointer: pointer.to_string(),
        field: field.to_string(),
        message: format!("{field}: Forbidden: {detail}"),
        since: None,
    }
}

/// The JSON pointer of a child key.
fn child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"))
}

#[cfg(test)]
mod tests;
