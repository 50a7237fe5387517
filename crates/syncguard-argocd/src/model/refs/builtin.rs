//! Objects a cluster has without anyone applying them, so a reference to one always resolves
//! (`Resolution::Builtin`): no rule may say a hook or a workload "needs" them before they exist.
//!
//! Each entry names the Kubernetes component that creates it, and since when:
//!
//! | object | where | made by |
//! |---|---|---|
//! | Namespace `default`, `kube-system`, `kube-public`, `kube-node-lease` | cluster | kube-apiserver's system-namespaces controller (`pkg/controlplane/controller/systemnamespaces`); `kube-node-lease` since 1.14 |
//! | ServiceAccount `default` | every namespace | kube-controller-manager's `serviceaccount` controller (`pkg/controller/serviceaccounts`), as soon as the namespace exists |
//! | ConfigMap `kube-root-ca.crt` | every namespace | kube-controller-manager's `root-ca-cert-publisher` (`pkg/controller/certificates/rootcacertpublisher`), on by default since 1.20 (KEP-1205, bound service account tokens); the projected token volume every pod mounts reads it |
//!
//! The ServiceAccount and the ConfigMap appear a moment after their namespace: a pod created in
//! that moment waits for them (the kubelet retries the volume), it never fails for good.

use super::Reference;
use super::scope::is_builtin_group;

/// Namespaces every cluster has.
pub(super) const BUILTIN_NAMESPACES: &[&str] =
    &["default", "kube-node-lease", "kube-public", "kube-system"];

/// Objects of one kind every namespace has, by (group, kind): their names.
const IN_EVERY_NAMESPACE: &[(&str, &str, &str)] = &[
    ("", "ServiceAccount", "default"),
    ("", "ConfigMap", "kube-root-ca.crt"),
];

/// True if the referenced object exists in every cluster (or namespace) without being applied,
/// or, for a CRD reference, if its group is served by kube-apiserver itself.
pub(super) fn is_builtin(reference: &Reference) -> bool {
    if let Some(defines) = &reference.defines {
        return is_builtin_group(&defines.group);
    }
    let (group, kind, name) = (
        reference.group.as_str(),
        reference.kind.as_str(),
        reference.name.as_str(),
    );
    if (group, kind) == ("", "Namespace") {
        return BUILTIN_NAMESPACES.contains(&name);
    }
    IN_EVERY_NAMESPACE.contains(&(group, kind, name))
}
