//! What the destination cluster serves: decides whether a task's GVK is known (spec §2.8, C36).
//!
//! Argo CD asks discovery for every task's GVK. When discovery says "not found" the whole sync
//! fails ("one or more synchronization tasks are not valid") unless the CRD is part of the same
//! sync or `SkipDryRunOnMissingResource=true` is set; then only that task's dry-run is skipped.
//! syncguard has no cluster at plan time, so the caller describes one with [`ClusterApis`].

use std::collections::BTreeSet;

use serde::Serialize;

/// True for the API groups built into Kubernetes itself (the core group is `""`); the list
/// lives with the other facts about Kubernetes scopes in [`crate::model::refs`].
///
/// Deliberately coarse: any kind in a built-in group counts as served. Version skew (an API
/// removed in a newer Kubernetes, e.g. `policy/v1beta1 PodSecurityPolicy`) is out of scope.
pub use crate::model::refs::is_builtin_group;

/// The APIs the destination cluster serves beyond the built-in groups.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClusterApis {
    /// Treat every GVK as served: no task is ever invalid and no dry-run is skipped because
    /// of a missing kind. Useful when no cluster information exists at all.
    pub assume_all: bool,
    /// `(group, kind)` pairs served by CRDs or aggregated APIs already installed.
    /// [`super::plan`] adds the kinds of every live object it is given and the kinds defined
    /// by live CRDs, because anything that exists in the cluster is by definition served.
    pub served: BTreeSet<(String, String)>,
}

impl ClusterApis {
    /// A cluster that serves only the built-in groups (the default).
    pub fn builtin_only() -> Self {
        Self::default()
    }

    /// A cluster that serves everything (no validity check).
    pub fn assume_all() -> Self {
        Self {
            assume_all: true,
            served: BTreeSet::new(),
        }
    }

    /// Adds a served `(group, kind)`, e.g. for a CRD installed by another Application.
    pub fn with(mut self, group: &str, kind: &str) -> Self {
        self.served.insert((group.to_string(), kind.to_string()));
        self
    }

    /// True if discovery would find this group and kind.
    pub fn serves(&self, group: &str, kind: &str) -> bool {
        self.assume_all
            || is_builtin_group(group)
            || self
                .served
                .iter()
                .any(|(g, k)| g.as_str() == group && k.as_str() == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_groups_are_served_and_custom_groups_are_not() {
        let apis = ClusterApis::builtin_only();
        assert!(apis.serves("", "ConfigMap"));
        assert!(apis.serves("apps", "Deployment"));
        assert!(apis.serves("apiextensions.k8s.io", "CustomResourceDefinition"));
        assert!(!apis.serves("example.com", "Widget"));
        assert!(!apis.serves("argoproj.io", "Workflow"));
    }

    #[test]
    fn installed_custom_kinds_and_assume_all_are_served() {
        let apis = ClusterApis::builtin_only().with("example.com", "Widget");
        assert!(apis.serves("example.com", "Widget"));
        assert!(!apis.serves("example.com", "Gadget"));
        assert!(ClusterApis::assume_all().serves("anything.io", "Thing"));
    }
}
