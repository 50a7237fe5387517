//! API versions Kubernetes no longer serves, with the release that removed them (the
//! Kubernetes deprecated API migration guide). An apply of such an object fails with
//! "no matches for kind ... in version ..." on every cluster of that release or later.

/// `(apiVersion, kind, removed in, replacement apiVersion)`. `*` stands for every kind of the
/// version.
const REMOVED: &[(&str, &str, &str, &str)] = &[
    (
        "extensions/v1beta1",
        "Ingress",
        "1.22",
        "networking.k8s.io/v1",
    ),
    (
        "extensions/v1beta1",
        "NetworkPolicy",
        "1.16",
        "networking.k8s.io/v1",
    ),
    (
        "extensions/v1beta1",
        "PodSecurityPolicy",
        "1.16",
        "none (PodSecurityPolicy is gone since 1.25)",
    ),
    ("extensions/v1beta1", "*", "1.16", "apps/v1"),
    ("apps/v1beta1", "*", "1.16", "apps/v1"),
    ("apps/v1beta2", "*", "1.16", "apps/v1"),
    (
        "networking.k8s.io/v1beta1",
        "*",
        "1.22",
        "networking.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "*",
        "1.22",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1alpha1",
        "*",
        "1.22",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "apiextensions.k8s.io/v1beta1",
        "*",
        "1.22",
        "apiextensions.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
        "1.22",
        "admissionregistration.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
        "1.22",
        "admissionregistration.k8s.io/v1",
    ),
    (
        "apiregistration.k8s.io/v1beta1",
        "*",
        "1.22",
        "apiregistration.k8s.io/v1",
    ),
    (
        "scheduling.k8s.io/v1beta1",
        "*",
        "1.22",
        "scheduling.k8s.io/v1",
    ),
    (
        "scheduling.k8s.io/v1alpha1",
        "*",
        "1.17",
        "scheduling.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIStorageCapacity",
        "1.27",
        "storage.k8s.io/v1",
    ),
    ("storage.k8s.io/v1beta1", "*", "1.22", "storage.k8s.io/v1"),
    (
        "coordination.k8s.io/v1beta1",
        "*",
        "1.22",
        "coordination.k8s.io/v1",
    ),
    (
        "certificates.k8s.io/v1beta1",
        "*",
        "1.22",
        "certificates.k8s.io/v1",
    ),
    ("batch/v1beta1", "*", "1.25", "batch/v1"),
    ("batch/v2alpha1", "*", "1.21", "batch/v1"),
    (
        "discovery.k8s.io/v1beta1",
        "*",
        "1.25",
        "discovery.k8s.io/v1",
    ),
    ("events.k8s.io/v1beta1", "*", "1.25", "events.k8s.io/v1"),
    ("autoscaling/v2beta1", "*", "1.25", "autoscaling/v2"),
    ("autoscaling/v2beta2", "*", "1.26", "autoscaling/v2"),
    (
        "policy/v1beta1",
        "PodSecurityPolicy",
        "1.25",
        "none (PodSecurityPolicy is gone; use Pod Security Admission)",
    ),
    ("policy/v1beta1", "*", "1.25", "policy/v1"),
    ("node.k8s.io/v1beta1", "*", "1.25", "node.k8s.io/v1"),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "*",
        "1.26",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "*",
        "1.29",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "*",
        "1.32",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
];

/// The Kubernetes release that removed `apiVersion`/`kind`, and what replaces it.
pub fn removed(api_version: &str, kind: &str) -> Option<(&'static str, &'static str)> {
    REMOVED
        .iter()
        .find(|(v, k, _, _)| *v == api_version && (*k == kind || *k == "*"))
        .map(|(_, _, since, instead)| (*since, *instead))
}

#[cfg(test)]
mod tests {
    use super::removed;

    #[test]
    fn a_kind_specific_row_wins_over_the_version_row() {
        assert_eq!(
            removed("extensions/v1beta1", "Ingress"),
            Some(("1.22", "networking.k8s.io/v1"))
        );
        assert_eq!(
            removed("extensions/v1beta1", "Deployment"),
            Some(("1.16", "apps/v1"))
        );
        assert_eq!(
            removed("policy/v1beta1", "PodDisruptionBudget"),
            Some(("1.25", "policy/v1"))
        );
        assert_eq!(removed("policy/v1", "PodDisruptionBudget"), None);
    }
}
