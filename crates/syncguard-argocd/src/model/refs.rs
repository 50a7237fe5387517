//! References between objects, and where each referenced object comes from in the set.
//!
//! Argo CD applies objects in phase/wave/kind order, but it does not know that a PreSync Job
//! needs a Secret the Sync phase creates (seed 000, spec §10-8), that a CR needs its CRD, or that an
//! HPA fights the replica count of its target (spec §10-21). Rules SG201–SG205 judge those
//! situations; this module supplies the facts they need and nothing else:
//!
//! - [`references`]: what an object points at (Secrets, ConfigMaps, ServiceAccounts, PVCs, pull
//!   secrets, scale targets, its Namespace, its CRD), each with the JSON pointer it was read from
//!   so findings can show `file:line`;
//! - [`produces`]: objects a controller creates *later* from this one (ExternalSecret,
//!   SealedSecret, cert-manager Certificate → Secret), kept apart from references because
//!   "exists once Argo CD applied it" and "exists once a controller got round to it" gate a sync
//!   differently (SG202);
//! - [`ResourceIndex`]: resolves a reference against the manifest set in constant time per
//!   reference, so whole-set checks stay linear (DESIGN §3: rules never see the whole set).
//!
//! Extraction never fails: a malformed object (a `containers` that is not a list, a name that is
//! not a string) simply yields fewer references. Schema validation is not this module's job, and
//! a linter that panics on the manifests it is meant to judge is worse than useless.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod builtin;
mod index;
mod pod;
mod scope;

#[cfg(test)]
mod fixtures;

use std::fmt::{self, Write as _};

use serde::Serialize;
use serde_json::Value;

use super::{Resource, split_api_version};

pub use index::{OwnedResourceIndex, Resolution, ResourceIndex, dependents, resolve_all};
pub use scope::{is_builtin_group, is_cluster_scoped};

/// API group of CustomResourceDefinition, the target of every CR → CRD reference.
pub const CRD_GROUP: &str = "apiextensions.k8s.io";

/// Why an object points at another one. Rules need this beyond the target kind: a Deployment
/// referenced as a scale target raises SG204, the same Deployment referenced as a Rollout
/// workload does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefRole {
    /// `env[].valueFrom.secretKeyRef` / `configMapKeyRef` of a container.
    Env,
    /// `envFrom[].secretRef` / `configMapRef` of a container.
    EnvFrom,
    /// A pod volume source (`secret`, `configMap`, `persistentVolumeClaim`, `projected`, `csi`).
    Volume,
    /// `imagePullSecrets[]` of a pod spec.
    ImagePullSecret,
    /// `serviceAccountName` (or the deprecated `serviceAccount`) of a pod spec.
    ServiceAccount,
    /// `spec.scaleTargetRef` of an HPA or a KEDA ScaledObject.
    ScaleTarget,
    /// `spec.workloadRef` of an Argo Rollout: the Deployment whose pod template it borrows.
    Workload,
    /// A custom resource needs the CRD that defines its kind.
    Definition,
    /// A namespaced object needs its Namespace.
    Namespace,
}

/// An API group and kind, as a CRD defines them (`spec.group`, `spec.names.kind`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct GroupKind {
    /// API group, e.g. `cert-manager.io`.
    pub group: String,
    /// Kind, e.g. `Certificate`.
    pub kind: String,
}

/// One object pointing at another. Serializes to the `input.refs[_]` entry of the Rego input
/// (minus `target`, which the caller adds from [`Resolution`] and the target's Argo CD facts).
///
/// Every field is always serialized (`group` is `""` for the core group, `namespace` is `null`
/// for cluster-scoped targets) because in Rego a missing field silently makes a rule body
/// undefined, which hides bugs; `defines` is the only field left out when it does not apply.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Reference {
    /// Kind of the referenced object as Kubernetes spells it: `Secret`, `Deployment`,
    /// `CustomResourceDefinition`, … A plain string rather than an enum because scale targets and
    /// workload refs can point at any kind, including custom ones.
    pub kind: String,
    /// API group of the referenced object: `""` for core, `apiextensions.k8s.io` for CRDs, the
    /// group of `apiVersion` for scale targets.
    pub group: String,
    /// Name of the referenced object. For CRDs the real name (`<plural>.<group>`) cannot be known
    /// from a CR, so this is `<Kind>.<group>` (a form `kubectl get` also accepts) and the CRD is
    /// resolved by [`Reference::defines`] instead.
    pub name: String,
    /// Namespace the reference resolves in: the referencing object's `metadata.namespace` for
    /// namespaced targets (`None` when that is unset: the index then uses its default namespace),
    /// always `None` for cluster-scoped targets (Namespace, CRD).
    pub namespace: Option<String>,
    /// RFC 6901 JSON pointer, inside the referencing object, of the field naming the target,
    /// e.g. `/spec/template/spec/containers/0/envFrom/1/secretRef/name`.
    pub via: String,
    /// `optional: true` on the reference: the pod starts even if the target is missing, so a
    /// missing target is a smell, not a deadlock.
    pub optional: bool,
    /// Why the object points at the target.
    pub role: RefRole,
    /// For [`RefRole::Definition`]: the (group, kind) the needed CRD must define.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defines: Option<GroupKind>,
}

/// An object that a controller creates from another object in the set, e.g. the Secret an
/// ExternalSecret materializes. Such an object exists only some time *after* its producer was
/// applied, which is exactly what SG202 warns about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Produced {
    /// Kind of the produced object (today always `Secret`).
    pub kind: String,
    /// API group of the produced object (`""` for Secrets).
    pub group: String,
    /// Name the produced object will have.
    pub name: String,
    /// The producer's `metadata.namespace`; `None` when unset (the index applies its default).
    pub namespace: Option<String>,
    /// JSON pointer of the field that decides the name (`/spec/target/name`, `/metadata/name`).
    pub via: String,
    /// True when a controller creates the object asynchronously rather than Argo CD applying it;
    /// Argo CD's health gate on the producer is then the only thing standing between the two.
    pub async_producer: bool,
}

/// Everything `r` references, in a stable order: Namespace, CRD, pod-spec references, scale
/// target, workload. Malformed fields are skipped, never reported as errors.
///
/// The implicit `default` ServiceAccount of a pod spec that names none is *not* reported: it is
/// not written anywhere (no `via` to point at) and always exists. An explicit
/// `serviceAccountName: default` is reported, and [`ResourceIndex::resolve`] answers
/// [`Resolution::Builtin`] for it.
pub fn references(r: &Resource) -> Vec<Reference> {
    let mut out = Vec::new();
    let namespace = r.namespace.as_deref();

    if let Some(ns) = namespace
        && !is_cluster_scoped(&r.group, &r.kind)
    {
        out.push(Reference {
            kind: "Namespace".to_string(),
            group: String::new(),
            name: ns.to_string(),
            namespace: None,
            via: "/metadata/namespace".to_string(),
            optional: false,
            role: RefRole::Namespace,
            defines: None,
        });
    }

    if !is_builtin_group(&r.group) {
        out.push(Reference {
            kind: "CustomResourceDefinition".to_string(),
            group: CRD_GROUP.to_string(),
            name: format!("{}.{}", r.kind, r.group),
            namespace: None,
            via: "/apiVersion".to_string(),
            optional: false,
            role: RefRole::Definition,
            defines: Some(GroupKind {
                group: r.group.clone(),
                kind: r.kind.clone(),
            }),
        });
    }

    if let Some(path) = pod_spec_path(&r.group, &r.kind) {
        let spec = path.iter().try_fold(&r.raw, |v, key| v.get(key));
        if let Some(spec) = spec {
            let base = path.iter().fold(Pointer::root(), |p, key| p.key(key));
            let overridden = claim_template_names(r);
            pod::collect(spec, &base, namespace, &overridden, &mut out);
        }
    }

    if let Some(target) = scale_target(r) {
        out.push(target);
    }
    if let Some(workload) = rollout_workload(r) {
        out.push(workload);
    }
    out
}

/// The objects controllers will create from `r` (empty for almost every object).
///
/// - ExternalSecret (`external-secrets.io`, any version): a Secret named `spec.target.name`, or
///   `metadata.name` when unset — unless `spec.target.creationPolicy` is `Merge` or `None`, where
///   the operator only updates an existing Secret and creates nothing.
/// - SealedSecret (`bitnami.com`): a Secret named `metadata.name`. `spec.template.metadata.name`
///   is ignored on purpose: the controller overwrites the unsealed Secret's name and namespace
///   with the SealedSecret's own (`Unseal` in sealed-secrets
///   `pkg/apis/sealedsecrets/v1alpha1/sealedsecret_expansion.go`).
/// - Certificate (`cert-manager.io`): the TLS Secret named `spec.secretName`, the most common
///   asynchronously produced Secret in pod volumes and Ingresses.
pub fn produces(r: &Resource) -> Vec<Produced> {
    produced_target(r)
        .map(|t| Produced {
            kind: t.kind.to_string(),
            group: t.group.to_string(),
            name: t.name.to_string(),
            namespace: r.namespace.clone(),
            via: t.via.to_string(),
            async_producer: true,
        })
        .into_iter()
        .collect()
}

/// The borrowed form of a [`Produced`], so the index can key on it without allocating.
struct ProducedTarget<'a> {
    kind: &'static str,
    group: &'static str,
    name: &'a str,
    via: &'static str,
}

/// Each producer kind creates at most one object, hence `Option`.
fn produced_target(r: &Resource) -> Option<ProducedTarget<'_>> {
    fn secret<'a>(name: &'a str, via: &'static str) -> ProducedTarget<'a> {
        ProducedTarget {
            kind: "Secret",
            group: "",
            name,
            via,
        }
    }
    let metadata_name = Some(r.name.as_str()).filter(|n| !n.is_empty());
    match (r.group.as_str(), r.kind.as_str()) {
        ("external-secrets.io", "ExternalSecret") => {
            let target = r.raw.get("spec").and_then(|s| s.get("target"));
            let policy = target
                .and_then(|t| t.get("creationPolicy"))
                .and_then(Value::as_str);
            if matches!(policy, Some("Merge" | "None")) {
                return None;
            }
            match non_empty_str(target.and_then(|t| t.get("name"))) {
                Some(name) => Some(secret(name, "/spec/target/name")),
                None => metadata_name.map(|n| secret(n, "/metadata/name")),
            }
        }
        ("bitnami.com", "SealedSecret") => metadata_name.map(|n| secret(n, "/metadata/name")),
        ("cert-manager.io", "Certificate") => {
            non_empty_str(r.raw.get("spec").and_then(|s| s.get("secretName")))
                .map(|n| secret(n, "/spec/secretName"))
        }
        _ => None,
    }
}

/// Where the pod spec of a workload kind lives, as JSON keys from the object root.
///
/// Matched on (group, kind) and any version, including the legacy `extensions` workloads: an old
/// apiVersion does not change what the pods need.
fn pod_spec_path(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    const TEMPLATE: &[&str] = &["spec", "template", "spec"];
    match (group, kind) {
        ("", "Pod") => Some(&["spec"]),
        ("", "PodTemplate") => Some(&["template", "spec"]),
        ("", "ReplicationController")
        | ("apps" | "extensions", "Deployment" | "DaemonSet" | "ReplicaSet")
        | ("apps", "StatefulSet")
        | ("batch", "Job")
        | ("argoproj.io", "Rollout") => Some(TEMPLATE),
        ("batch", "CronJob") => Some(&["spec", "jobTemplate", "spec", "template", "spec"]),
        ("keda.sh", "ScaledJob") => Some(&["spec", "jobTargetRef", "template", "spec"]),
        _ => None,
    }
}

/// Volume names that a StatefulSet's `volumeClaimTemplates` take over. Kubernetes gives a claim
/// template precedence over a pod volume of the same name and creates the PVC itself
/// (`<template>-<statefulset>-<ordinal>`), so such a volume is not an external reference.
fn claim_template_names(r: &Resource) -> Vec<&str> {
    if (r.group.as_str(), r.kind.as_str()) != ("apps", "StatefulSet") {
        return Vec::new();
    }
    array(
        r.raw
            .get("spec")
            .and_then(|s| s.get("volumeClaimTemplates")),
    )
    .filter_map(|(_, t)| non_empty_str(t.get("metadata").and_then(|m| m.get("name"))))
    .collect()
}

/// HPA (`autoscaling`, every version) and KEDA ScaledObject `spec.scaleTargetRef`.
///
/// KEDA defaults a missing `apiVersion` to `apps/v1` and a missing `kind` to `Deployment`. The
/// HPA API requires `kind` and `name`; a missing `apiVersion` gets the group of the well-known
/// workload kind, as the scale subresource lookup would find it.
fn scale_target(r: &Resource) -> Option<Reference> {
    let is_keda = match (r.group.as_str(), r.kind.as_str()) {
        ("autoscaling", "HorizontalPodAutoscaler") => false,
        ("keda.sh", "ScaledObject") => true,
        _ => return None,
    };
    let target = r.raw.get("spec")?.get("scaleTargetRef")?;
    let default_kind = if is_keda { Some("Deployment") } else { None };
    let default_api_version = if is_keda { Some("apps/v1") } else { None };
    target_reference(
        r,
        target,
        "/spec/scaleTargetRef/name",
        RefRole::ScaleTarget,
        default_kind,
        default_api_version,
    )
}

/// Argo Rollout `spec.workloadRef`: the Rollout takes its pod template from that workload, so the
/// workload must exist (and is where the pod references live).
fn rollout_workload(r: &Resource) -> Option<Reference> {
    if (r.group.as_str(), r.kind.as_str()) != ("argoproj.io", "Rollout") {
        return None;
    }
    let target = r.raw.get("spec")?.get("workloadRef")?;
    target_reference(
        r,
        target,
        "/spec/workloadRef/name",
        RefRole::Workload,
        None,
        None,
    )
}

/// A `{apiVersion, kind, name}` cross-object reference in the referencing object's namespace.
fn target_reference(
    r: &Resource,
    target: &Value,
    via: &str,
    role: RefRole,
    default_kind: Option<&str>,
    default_api_version: Option<&str>,
) -> Option<Reference> {
    let name = non_empty_str(target.get("name"))?;
    let kind = non_empty_str(target.get("kind")).or(default_kind)?;
    let group = match non_empty_str(target.get("apiVersion")).or(default_api_version) {
        Some(api_version) => split_api_version(api_version).0,
        None => workload_group(kind),
    };
    Some(Reference {
        kind: kind.to_string(),
        group: group.to_string(),
        name: name.to_string(),
        namespace: r.namespace.clone(),
        via: via.to_string(),
        optional: false,
        role,
        defines: None,
    })
}

/// The API group of a well-known scalable kind, for references that omit `apiVersion`.
fn workload_group(kind: &str) -> &'static str {
    match kind {
        "Deployment" | "StatefulSet" | "ReplicaSet" | "DaemonSet" => "apps",
        "Rollout" => "argoproj.io",
        _ => "",
    }
}

/// An RFC 6901 JSON pointer under construction. Tokens are escaped as they are appended, so
/// `via` pointers can be handed to `Resource::locate` and JSON Patch unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Pointer(String);

impl Pointer {
    /// The pointer to the whole document (`""`).
    fn root() -> Self {
        Self::default()
    }

    /// This pointer extended by an object key (`~` → `~0`, `/` → `~1`).
    fn key(&self, key: &str) -> Self {
        let mut s = String::with_capacity(self.0.len() + key.len() + 1);
        s.push_str(&self.0);
        s.push('/');
        for c in key.chars() {
            match c {
                '~' => s.push_str("~0"),
                '/' => s.push_str("~1"),
                c => s.push(c),
            }
        }
        Self(s)
    }

    /// This pointer extended by an array index.
    fn index(&self, i: usize) -> Self {
        let mut s = self.0.clone();
        // Writing to a String cannot fail.
        let _ = write!(s, "/{i}");
        Self(s)
    }

    /// The pointer as a string, for [`Reference::via`].
    fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The elements of a JSON array with their indices; nothing when the value is absent or not an
/// array (malformed input is skipped, not an error).
fn array(v: Option<&Value>) -> impl Iterator<Item = (usize, &Value)> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().enumerate())
        .into_iter()
        .flatten()
}

/// A string field that is present, a string, and not empty.
fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `optional: true` on a reference; anything else (absent, `false`, a non-boolean) is required.
fn is_optional(selector: &Value) -> bool {
    selector.get("optional").and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::fixtures::{find, obj, vias};
    use super::*;
    use serde_json::json;

    #[test]
    fn json_pointer_tokens_escape_tilde_and_slash() {
        let p = Pointer::root()
            .key("metadata")
            .key("annotations")
            .key("example.com/a~b")
            .index(3);
        assert_eq!(p.to_string(), "/metadata/annotations/example.com~1a~0b/3");
        assert_eq!(Pointer::root().key("~1").into_string(), "/~01");
    }

    #[test]
    fn a_namespaced_object_references_its_namespace() {
        let r = obj("v1", "ConfigMap", "c").namespace("team-a").build();
        let refs = references(&r);
        let ns = find(&refs, "/metadata/namespace");
        assert_eq!(
            (ns.kind.as_str(), ns.group.as_str(), ns.name.as_str()),
            ("Namespace", "", "team-a")
        );
        assert_eq!(ns.namespace, None);
        assert_eq!(ns.role, RefRole::Namespace);
    }

    #[test]
    fn objects_without_a_namespace_and_cluster_scoped_kinds_reference_no_namespace() {
        let unset = obj("v1", "ConfigMap", "c").build();
        assert!(references(&unset).is_empty());
        // Kubernetes ignores metadata.namespace on cluster-scoped kinds; so do we.
        let role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r")
            .namespace("team-a")
            .build();
        assert!(references(&role).is_empty());
    }

    #[test]
    fn a_custom_resource_references_the_crd_defining_its_group_and_kind() {
        let r = obj("cert-manager.io/v1", "Certificate", "tls")
            .namespace("web")
            .build();
        let refs = references(&r);
        let crd = find(&refs, "/apiVersion");
        assert_eq!(crd.kind, "CustomResourceDefinition");
        assert_eq!(crd.group, CRD_GROUP);
        assert_eq!(crd.name, "Certificate.cert-manager.io");
        assert_eq!(crd.namespace, None);
        assert_eq!(crd.role, RefRole::Definition);
        assert_eq!(
            crd.defines,
            Some(GroupKind {
                group: "cert-manager.io".into(),
                kind: "Certificate".into()
            })
        );
    }

    #[test]
    fn built_in_kinds_reference_no_crd() {
        for (api_version, kind) in [
            ("apps/v1", "Deployment"),
            ("v1", "Secret"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ] {
            let r = obj(api_version, kind, "x").build();
            assert!(
                references(&r).iter().all(|x| x.role != RefRole::Definition),
                "{kind}"
            );
        }
    }

    #[test]
    fn hpa_v2_references_its_scale_target_by_api_version_kind_and_name() {
        let r = obj("autoscaling/v2", "HorizontalPodAutoscaler", "web")
            .namespace("app")
            .set(
                "/spec/scaleTargetRef",
                json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"}),
            )
            .build();
        let refs = references(&r);
        let t = find(&refs, "/spec/scaleTargetRef/name");
        assert_eq!(
            (t.kind.as_str(), t.group.as_str(), t.name.as_str()),
            ("StatefulSet", "apps", "db")
        );
        assert_eq!(t.namespace.as_deref(), Some("app"));
        assert_eq!(t.role, RefRole::ScaleTarget);
    }

    #[test]
    fn hpa_v1_scale_target_to_a_rollout_takes_the_group_from_its_api_version() {
        let r = obj("autoscaling/v1", "HorizontalPodAutoscaler", "web")
            .set(
                "/spec/scaleTargetRef",
                json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "web"}),
            )
            .build();
        let t = find(&references(&r), "/spec/scaleTargetRef/name").clone();
        assert_eq!(
            (t.kind.as_str(), t.group.as_str()),
            ("Rollout", "argoproj.io")
        );
        assert_eq!(t.namespace, None);
    }

    #[test]
    fn hpa_scale_target_without_api_version_uses_the_group_of_the_well_known_kind() {
        let r = obj("autoscaling/v2", "HorizontalPodAutoscaler", "web")
            .set(
                "/spec/scaleTargetRef",
                json!({"kind": "Deployment", "name": "web"}),
            )
            .build();
        let t = find(&references(&r), "/spec/scaleTargetRef/name").clone();
        assert_eq!(t.group, "apps");
    }

    #[test]
    fn hpa_scale_target_without_kind_is_skipped() {
        let r = obj("autoscaling/v2", "HorizontalPodAutoscaler", "web")
            .set("/spec/scaleTargetRef", json!({"name": "web"}))
            .build();
        assert!(vias(&references(&r)).is_empty());
    }

    #[test]
    fn keda_scaled_object_defaults_to_an_apps_v1_deployment() {
        let r = obj("keda.sh/v1alpha1", "ScaledObject", "web")
            .namespace("app")
            .set("/spec/scaleTargetRef", json!({"name": "web"}))
            .build();
        let refs = references(&r);
        let t = find(&refs, "/spec/scaleTargetRef/name");
        assert_eq!(
            (t.kind.as_str(), t.group.as_str(), t.name.as_str()),
            ("Deployment", "apps", "web")
        );
        assert_eq!(t.role, RefRole::ScaleTarget);
        // keda.sh is a CRD group, so the ScaledObject also needs its CRD.
        assert!(refs.iter().any(|x| x.role == RefRole::Definition));
    }

    #[test]
    fn keda_scaled_object_keeps_an_explicit_kind_and_api_version() {
        let r = obj("keda.sh/v1alpha1", "ScaledObject", "web")
            .set(
                "/spec/scaleTargetRef",
                json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "web"}),
            )
            .build();
        let t = find(&references(&r), "/spec/scaleTargetRef/name").clone();
        assert_eq!(
            (t.kind.as_str(), t.group.as_str()),
            ("Rollout", "argoproj.io")
        );
    }

    #[test]
    fn a_rollout_with_workload_ref_references_the_workload() {
        let r = obj("argoproj.io/v1alpha1", "Rollout", "web")
            .namespace("app")
            .set(
                "/spec/workloadRef",
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-base"}),
            )
            .build();
        let refs = references(&r);
        let w = find(&refs, "/spec/workloadRef/name");
        assert_eq!(
            (w.kind.as_str(), w.group.as_str(), w.name.as_str()),
            ("Deployment", "apps", "web-base")
        );
        assert_eq!(w.namespace.as_deref(), Some("app"));
        assert_eq!(w.role, RefRole::Workload);
    }

    #[test]
    fn an_external_secret_produces_the_secret_named_by_its_target() {
        let r = obj("external-secrets.io/v1beta1", "ExternalSecret", "db-es")
            .namespace("app")
            .set("/spec/target/name", json!("db"))
            .build();
        assert_eq!(
            produces(&r),
            vec![Produced {
                kind: "Secret".into(),
                group: String::new(),
                name: "db".into(),
                namespace: Some("app".into()),
                via: "/spec/target/name".into(),
                async_producer: true,
            }]
        );
    }

    #[test]
    fn an_external_secret_without_target_name_produces_a_secret_of_its_own_name() {
        let r = obj("external-secrets.io/v1", "ExternalSecret", "db").build();
        let p = produces(&r);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].name.as_str(), p[0].via.as_str()),
            ("db", "/metadata/name")
        );
    }

    #[test]
    fn an_external_secret_that_only_merges_produces_nothing() {
        for policy in ["Merge", "None"] {
            let r = obj("external-secrets.io/v1", "ExternalSecret", "db")
                .set("/spec/target/creationPolicy", json!(policy))
                .build();
            assert!(produces(&r).is_empty(), "{policy}");
        }
        let orphan = obj("external-secrets.io/v1", "ExternalSecret", "db")
            .set("/spec/target/creationPolicy", json!("Orphan"))
            .build();
        assert_eq!(produces(&orphan).len(), 1);
    }

    #[test]
    fn a_sealed_secret_produces_a_secret_of_its_own_name_whatever_the_template_says() {
        let r = obj("bitnami.com/v1alpha1", "SealedSecret", "db")
            .namespace("app")
            .set("/spec/template/metadata/name", json!("ignored"))
            .build();
        let p = produces(&r);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].kind.as_str(), p[0].name.as_str()), ("Secret", "db"));
        assert_eq!(p[0].namespace.as_deref(), Some("app"));
        assert!(p[0].async_producer);
    }

    #[test]
    fn a_certificate_produces_its_tls_secret() {
        let r = obj("cert-manager.io/v1", "Certificate", "web")
            .set("/spec/secretName", json!("web-tls"))
            .build();
        let p = produces(&r);
        assert_eq!(
            (p[0].name.as_str(), p[0].via.as_str()),
            ("web-tls", "/spec/secretName")
        );
    }

    #[test]
    fn ordinary_objects_produce_nothing() {
        assert!(produces(&obj("v1", "Secret", "db").build()).is_empty());
        assert!(produces(&obj("apps/v1", "Deployment", "web").build()).is_empty());
    }

    #[test]
    fn references_serialize_as_a_flat_rego_friendly_document() {
        let r = obj("v1", "Pod", "p")
            .namespace("app")
            .set("/spec/imagePullSecrets", json!([{"name": "regcred"}]))
            .build();
        let refs = references(&r);
        let doc = serde_json::to_value(find(&refs, "/spec/imagePullSecrets/0/name")).unwrap();
        assert_eq!(
            doc,
            json!({"kind": "Secret", "group": "", "name": "regcred", "namespace": "app",
                   "via": "/spec/imagePullSecrets/0/name", "optional": false,
                   "role": "image_pull_secret"})
        );
        let crd = obj("example.com/v1", "Widget", "w").build();
        let doc = serde_json::to_value(&references(&crd)[0]).unwrap();
        assert_eq!(
            doc["defines"],
            json!({"group": "example.com", "kind": "Widget"})
        );
        assert_eq!(doc["namespace"], Value::Null);
    }

    #[test]
    fn malformed_objects_yield_fewer_references_and_never_panic() {
        let weird = [
            json!({"spec": "not a mapping"}),
            json!({"spec": {"template": {"spec": {"containers": "nope", "volumes": 3}}}}),
            json!({"spec": {"template": {"spec": {"containers": [1, null, {"env": {"a": 1}}],
                   "volumes": [{"secret": {"secretName": 7}}, {"configMap": []}],
                   "imagePullSecrets": [{"name": ["x"]}], "serviceAccountName": false}}}}),
        ];
        for spec in weird {
            let mut builder = obj("apps/v1", "Deployment", "web");
            for (k, v) in spec.as_object().into_iter().flatten() {
                builder = builder.set(&format!("/{k}"), v.clone());
            }
            assert!(references(&builder.build()).is_empty());
        }
        let hpa = obj("autoscaling/v2", "HorizontalPodAutoscaler", "h")
            .set("/spec/scaleTargetRef", json!("web"))
            .build();
        assert!(references(&hpa).is_empty());
    }
}
