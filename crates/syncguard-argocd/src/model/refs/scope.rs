//! Which API groups are built into Kubernetes and which built-in kinds are cluster-scoped.
//!
//! Both questions decide how a reference resolves: a custom resource needs its CRD only when its
//! group is not served by kube-apiserver itself, and a reference to a cluster-scoped kind must not
//! be qualified with the referencing object's namespace.

/// API groups served by kube-apiserver itself, so they never need a CustomResourceDefinition.
///
/// Matched exactly, never by suffix: `gateway.networking.k8s.io` and `snapshot.storage.k8s.io`
/// look official but are installed as CRDs and really can be missing.
///
/// Deliberately absent: `metrics.k8s.io` (and `custom.metrics.k8s.io`, `external.metrics.k8s.io`).
/// They are aggregated APIs served by an add-on (metrics-server, an adapter) through an
/// APIService, so they are not guaranteed to exist; their objects are read-only and never appear
/// in rendered manifests anyway.
///
/// Present although removed from current clusters: `extensions`. An object in it has a
/// deprecated-API problem, not a missing-CRD problem, and reporting it as a CR would mislead.
const BUILTIN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// Built-in kinds that live outside any namespace, as (group, kind).
///
/// Only kinds of [`BUILTIN_GROUPS`] are listed: for custom resources the scope is declared by the
/// CRD (`spec.scope`), which the set may not contain, so callers fall back to "namespaced when
/// `metadata.namespace` is set".
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "ComponentStatus"),
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("extensions", "PodSecurityPolicy"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("policy", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
];

/// True if kube-apiserver serves this API group itself, i.e. its kinds never need a CRD.
///
/// The group is compared exactly (see the list for what is in and why).
pub fn is_builtin_group(group: &str) -> bool {
    BUILTIN_GROUPS.contains(&group)
}

/// True if this built-in kind is cluster-scoped (has no namespace).
///
/// Unknown kinds (custom resources) return `false`: their scope is only known from their CRD, so
/// callers treat them as namespaced when `metadata.namespace` is set.
pub fn is_cluster_scoped(group: &str, kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&(group, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_and_named_kubernetes_groups_are_builtin() {
        for g in [
            "",
            "apps",
            "batch",
            "autoscaling",
            "apiextensions.k8s.io",
            "extensions",
        ] {
            assert!(is_builtin_group(g), "{g:?} should be built in");
        }
    }

    #[test]
    fn crd_backed_groups_that_look_official_are_not_builtin() {
        for g in [
            "gateway.networking.k8s.io",
            "snapshot.storage.k8s.io",
            "metrics.k8s.io",
            "argoproj.io",
            "cert-manager.io",
            "Apps",
        ] {
            assert!(!is_builtin_group(g), "{g:?} should not be built in");
        }
    }

    #[test]
    fn cluster_scoped_kinds_are_matched_by_group_and_kind() {
        assert!(is_cluster_scoped("", "Namespace"));
        assert!(is_cluster_scoped(
            "rbac.authorization.k8s.io",
            "ClusterRole"
        ));
        assert!(is_cluster_scoped(
            "apiextensions.k8s.io",
            "CustomResourceDefinition"
        ));
        assert!(is_cluster_scoped("storage.k8s.io", "StorageClass"));
        assert!(!is_cluster_scoped("", "ConfigMap"));
        assert!(!is_cluster_scoped("rbac.authorization.k8s.io", "Role"));
        assert!(!is_cluster_scoped("apps", "Namespace"));
        assert!(!is_cluster_scoped("cert-manager.io", "ClusterIssuer"));
    }
}
