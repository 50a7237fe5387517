//! `resource.exclusions` and `resource.inclusions`: which kinds Argo CD watches and syncs, per
//! cluster (`util/settings`: `FilteredResource`, `ResourcesFilter.IsExcludedResource`).
//!
//! An entry `{apiGroups, kinds, clusters}` matches when each of its lists matches (an empty list
//! matches everything). Groups and clusters are Argo CD globs ([`crate::config::glob`]); kinds
//! are compared exactly, `*` matching any kind. A kind is excluded when a built-in exclusion
//! (events, metrics, leases) or an entry of `resource.exclusions` matches it; otherwise, when
//! some entry of `resource.inclusions` names the cluster, it must match an inclusion. An object
//! of an excluded kind is dropped from the desired state (`ExcludedResourceWarning`) and never
//! applied or pruned.

use serde::Serialize;
use serde_json::Value;

use crate::config::glob::matches as glob;
use crate::config::{Fields, Notes};

/// One entry of `resource.exclusions` or `resource.inclusions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceFilter {
    /// `apiGroups` (globs).
    pub api_groups: Vec<String>,
    /// `kinds` (exact, `*` for any).
    pub kinds: Vec<String>,
    /// `clusters` (globs of cluster server URLs).
    pub clusters: Vec<String>,
}

/// The exclusions Argo CD applies whatever argocd-cm says (`coreExcludedResources`).
fn core_exclusions() -> [ResourceFilter; 3] {
    let f = |groups: &[&str], kinds: &[&str]| ResourceFilter {
        api_groups: groups.iter().map(|s| s.to_string()).collect(),
        kinds: kinds.iter().map(|s| s.to_string()).collect(),
        clusters: Vec::new(),
    };
    [
        f(&["events.k8s.io", "metrics.k8s.io"], &[]),
        f(&[""], &["Event"]),
        f(&["coordination.k8s.io"], &["Lease"]),
    ]
}

impl ResourceFilter {
    /// Reads one entry at JSON pointer `at` (inside the parsed YAML value).
    pub fn read(v: &Value, at: &str, notes: &mut Notes) -> ResourceFilter {
        let mut f = Fields::of(Some(v), at, notes);
        let filter = ResourceFilter {
            api_groups: f.strings("apiGroups", notes),
            kinds: f.strings("kinds", notes),
            clusters: f.strings("clusters", notes),
        };
        f.finish(notes);
        filter
    }

    /// True when `group` matches `apiGroups`.
    pub fn matches_group(&self, group: &str) -> bool {
        self.api_groups.is_empty() || self.api_groups.iter().any(|p| glob(p, group))
    }

    /// True when `kind` matches `kinds`.
    pub fn matches_kind(&self, kind: &str) -> bool {
        self.kinds.is_empty() || self.kinds.iter().any(|k| k == "*" || k == kind)
    }

    /// Whether `clusters` matches `cluster` (a server URL); with the URL unknown (a destination
    /// by name), only an entry for every cluster (no list, or `*`) is known to match, and none
    /// is known not to.
    pub fn matches_cluster(&self, cluster: Option<&str>) -> Option<bool> {
        if self.clusters.is_empty() || self.clusters.iter().any(|c| c == "*") {
            return Some(true);
        }
        cluster.map(|c| self.clusters.iter().any(|p| glob(p, c)))
    }

    /// True when the entry matches `group`/`kind` on `cluster`.
    pub fn matches(&self, group: &str, kind: &str, cluster: &str) -> bool {
        self.matches_group(group)
            && self.matches_kind(kind)
            && self.matches_cluster(Some(cluster)) == Some(true)
    }
}

/// Why a kind is excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "by", content = "index", rename_all = "snake_case")]
pub enum Exclusion {
    /// A built-in exclusion (events, metrics, leases).
    Core,
    /// Entry `n` of `resource.exclusions`.
    Excluded(usize),
    /// `resource.inclusions` names the cluster and no entry includes the kind.
    NotIncluded,
}

/// The two lists together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ResourceFilters {
    /// `resource.exclusions`.
    pub exclusions: Vec<ResourceFilter>,
    /// `resource.inclusions`.
    pub inclusions: Vec<ResourceFilter>,
}

impl ResourceFilters {
    /// Whether Argo CD excludes `group`/`kind` on `cluster` (its server URL; `None` when only its
    /// name is known), and why. `None` when it is not excluded, or when that depends on a
    /// cluster URL that is not known.
    pub fn excluded(&self, group: &str, kind: &str, cluster: Option<&str>) -> Option<Exclusion> {
        if core_exclusions()
            .iter()
            .any(|f| f.matches_group(group) && f.matches_kind(kind))
        {
            return Some(Exclusion::Core);
        }
        for (i, f) in self.exclusions.iter().enumerate() {
            if f.matches_group(group)
                && f.matches_kind(kind)
                && f.matches_cluster(cluster) == Some(true)
            {
                return Some(Exclusion::Excluded(i));
            }
        }
        if self.inclusions.iter().any(|f| {
            f.matches_group(group)
                && f.matches_kind(kind)
                && f.matches_cluster(cluster) != Some(false)
        }) {
            return None;
        }
        if self
            .inclusions
            .iter()
            .any(|f| f.matches_cluster(cluster) == Some(true))
        {
            return Some(Exclusion::NotIncluded);
        }
        None
    }

    /// True when neither list has an entry.
    pub fn is_empty(&self) -> bool {
        self.exclusions.is_empty() && self.inclusions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(groups: &[&str], kinds: &[&str], clusters: &[&str]) -> ResourceFilter {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        ResourceFilter {
            api_groups: s(groups),
            kinds: s(kinds),
            clusters: s(clusters),
        }
    }

    const IN: &str = "https://kubernetes.default.svc";

    #[test]
    fn exclusions_match_groups_and_clusters_as_globs_and_kinds_exactly() {
        let filters = ResourceFilters {
            exclusions: vec![
                f(&["*.cilium.io", "cilium.io"], &["CiliumIdentity"], &["*"]),
                f(&["velero.io"], &["*"], &["https://prod-*"]),
                f(&["apps"], &["Deploy*"], &[]),
            ],
            inclusions: vec![],
        };
        assert_eq!(
            filters.excluded("cilium.io", "CiliumIdentity", Some(IN)),
            Some(Exclusion::Excluded(0))
        );
        assert_eq!(filters.excluded("cilium.io", "CiliumNode", Some(IN)), None);
        assert_eq!(
            filters.excluded("velero.io", "Backup", Some("https://prod-1.example")),
            Some(Exclusion::Excluded(1))
        );
        assert_eq!(filters.excluded("velero.io", "Backup", Some(IN)), None);
        // A destination by name: the cluster URL is unknown, so a cluster-specific entry says
        // nothing.
        assert_eq!(filters.excluded("velero.io", "Backup", None), None);
        assert_eq!(
            filters.excluded("cilium.io", "CiliumIdentity", None),
            Some(Exclusion::Excluded(0))
        );
        // Kinds are not globs.
        assert_eq!(filters.excluded("apps", "Deployment", Some(IN)), None);
        assert_eq!(
            filters.excluded("", "Event", Some(IN)),
            Some(Exclusion::Core)
        );
        assert_eq!(
            filters.excluded("coordination.k8s.io", "Lease", None),
            Some(Exclusion::Core)
        );
    }

    #[test]
    fn inclusions_leave_out_other_kinds_only_on_the_clusters_they_name() {
        let filters = ResourceFilters {
            exclusions: vec![],
            inclusions: vec![
                f(&[""], &["ConfigMap", "Service"], &[IN]),
                f(&["apps"], &[], &[IN]),
            ],
        };
        assert_eq!(filters.excluded("", "Service", Some(IN)), None);
        assert_eq!(filters.excluded("apps", "StatefulSet", Some(IN)), None);
        assert_eq!(
            filters.excluded("", "Secret", Some(IN)),
            Some(Exclusion::NotIncluded)
        );
        // Another cluster has no inclusion rule: everything is allowed there.
        assert_eq!(filters.excluded("", "Secret", Some("https://other")), None);
        assert_eq!(filters.excluded("", "Secret", None), None);
    }
}
