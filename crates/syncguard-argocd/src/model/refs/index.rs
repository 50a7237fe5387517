//! Resolving references against a manifest set in linear time.
//!
//! Cross-resource rules (SG201–SG205) ask "where does the thing I reference come from?" for every
//! reference of every object. Scanning the set per reference is quadratic and was the classic
//! cause of slow policy engines on big charts; the index answers each question with hash lookups,
//! so a whole set resolves in O(objects + references).

use std::collections::HashMap;

use serde::Serialize;

use super::builtin::is_builtin;
use super::{CRD_GROUP, Reference, is_cluster_scoped, produced_target, references};
use crate::model::Resource;

/// (group, kind, namespace, name) — the identity of an object once its namespace is filled in.
type Key<'a> = (&'a str, &'a str, Option<&'a str>, &'a str);

/// Where a referenced object comes from.
///
/// Serializes with a `resolution` tag, e.g. `{"resolution": "in_set", "index": 3}` or
/// `{"resolution": "builtin"}`, so the caller can merge it into `input.refs[_].target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "resolution", rename_all = "snake_case")]
pub enum Resolution {
    /// An object in the set defines it; `index` is its position in the slice given to
    /// [`ResourceIndex::build`]. When several objects share the identity, the first wins.
    InSet {
        /// Index of the defining resource.
        index: usize,
    },
    /// Nothing defines it directly, but a controller will create it from an object in the set
    /// (ExternalSecret/SealedSecret/Certificate → Secret); `index` is the producer's position.
    ProducedBy {
        /// Index of the producing resource.
        index: usize,
    },
    /// It always exists: the `default` ServiceAccount of any namespace, the namespaces every
    /// cluster has (`default`, `kube-system`, `kube-public`, `kube-node-lease`), or the
    /// "definition" of a built-in API group. Checked before the set, so a chart that also ships
    /// e.g. `Namespace/default` cannot make a hook look like it waits for a later wave.
    Builtin,
    /// Not found in the set. It may still exist in the cluster; the caller decides.
    Missing,
}

/// Lookup tables over one manifest set, built once in O(n).
///
/// Borrows the resources (keys are `&str` into them), so building allocates only the tables.
#[derive(Debug)]
pub struct ResourceIndex<'a> {
    /// Objects by identity.
    defined: HashMap<Key<'a>, usize>,
    /// Objects controllers will create, by identity, pointing at their producer.
    produced: HashMap<Key<'a>, usize>,
    /// CRDs by the (`spec.group`, `spec.names.kind`) they define.
    crds: HashMap<(&'a str, &'a str), usize>,
    /// Namespace for namespaced objects and references that do not set one.
    default_namespace: Option<&'a str>,
}

/// Which table of an index an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Table {
    Defined,
    Produced,
    Crds,
}

/// The entries of an index over `resources`, in the order they are inserted (the first entry of
/// a key wins): the one place that decides what is indexed under which key.
fn entries<'a>(
    resources: &'a [Resource],
    default_namespace: Option<&'a str>,
) -> impl Iterator<Item = (Table, Key<'a>, usize)> + 'a {
    resources.iter().enumerate().flat_map(move |(i, r)| {
        let defined = (!r.name.is_empty()).then(|| {
            let namespace =
                effective_namespace(default_namespace, &r.group, &r.kind, r.namespace.as_deref());
            (
                Table::Defined,
                (
                    r.group.as_str(),
                    r.kind.as_str(),
                    namespace,
                    r.name.as_str(),
                ),
                i,
            )
        });
        let produced = produced_target(r).map(|p| {
            let namespace =
                effective_namespace(default_namespace, p.group, p.kind, r.namespace.as_deref());
            (Table::Produced, (p.group, p.kind, namespace, p.name), i)
        });
        let crd = if (r.group.as_str(), r.kind.as_str()) == (CRD_GROUP, "CustomResourceDefinition")
        {
            let spec = r.raw.get("spec");
            let group = spec.and_then(|s| s.get("group")).and_then(|g| g.as_str());
            let kind = spec
                .and_then(|s| s.get("names"))
                .and_then(|n| n.get("kind"))
                .and_then(|k| k.as_str());
            group
                .zip(kind)
                .map(|(group, kind)| (Table::Crds, (group, kind, None, ""), i))
        } else {
            None
        };
        [defined, produced, crd].into_iter().flatten()
    })
}

/// Where `reference` comes from, given a lookup of a key in a table: the one place that decides
/// how a reference is resolved, for both index types.
fn resolve_with(
    reference: &Reference,
    default_namespace: Option<&str>,
    lookup: impl Fn(Table, Key<'_>) -> Option<usize>,
) -> Resolution {
    if is_builtin(reference) {
        return Resolution::Builtin;
    }
    if let Some(defines) = &reference.defines {
        let key = (defines.group.as_str(), defines.kind.as_str(), None, "");
        return match lookup(Table::Crds, key) {
            Some(index) => Resolution::InSet { index },
            None => Resolution::Missing,
        };
    }
    let namespace = effective_namespace(
        default_namespace,
        &reference.group,
        &reference.kind,
        reference.namespace.as_deref(),
    );
    let key = (
        reference.group.as_str(),
        reference.kind.as_str(),
        namespace,
        reference.name.as_str(),
    );
    if let Some(index) = lookup(Table::Defined, key) {
        Resolution::InSet { index }
    } else if let Some(index) = lookup(Table::Produced, key) {
        Resolution::ProducedBy { index }
    } else {
        Resolution::Missing
    }
}

/// The namespace an object or reference lives in: none for cluster-scoped built-in kinds,
/// else the explicit one, else the default.
fn effective_namespace<'b>(
    default_namespace: Option<&'b str>,
    group: &str,
    kind: &str,
    namespace: Option<&'b str>,
) -> Option<&'b str> {
    if is_cluster_scoped(group, kind) {
        None
    } else {
        namespace.or(default_namespace)
    }
}

impl<'a> ResourceIndex<'a> {
    /// Indexes `resources`. Namespaced objects without `metadata.namespace` are indexed under
    /// `default_namespace` (Argo CD's destination namespace), as are references from them, so
    /// objects of one unnamespaced chart find each other. With `None` they match each other
    /// only.
    ///
    /// Objects with only `generateName` are not indexed: nothing can reference a name that does
    /// not exist yet.
    pub fn build(resources: &'a [Resource], default_namespace: Option<&'a str>) -> Self {
        let mut index = Self {
            defined: HashMap::with_capacity(resources.len()),
            produced: HashMap::new(),
            crds: HashMap::new(),
            default_namespace,
        };
        for (table, key, i) in entries(resources, default_namespace) {
            match table {
                Table::Defined => index.defined.entry(key).or_insert(i),
                Table::Produced => index.produced.entry(key).or_insert(i),
                Table::Crds => index.crds.entry((key.0, key.1)).or_insert(i),
            };
        }
        index
    }

    /// Where the object `reference` points at comes from. Constant time.
    pub fn resolve(&self, reference: &Reference) -> Resolution {
        resolve_with(reference, self.default_namespace, |table, key| {
            match table {
                Table::Defined => self.defined.get(&key),
                Table::Produced => self.produced.get(&key),
                Table::Crds => self.crds.get(&(key.0, key.1)),
            }
            .copied()
        })
    }
}

/// [`ResourceIndex`] that owns its keys, so it can be kept next to the objects it indexes (an
/// admission context builds it once per Application, not once per request). Same entries and
/// answers; a lookup costs one small allocation for the key.
#[derive(Debug, Default)]
pub struct OwnedResourceIndex {
    entries: HashMap<(Table, String), usize>,
    default_namespace: Option<String>,
}

impl OwnedResourceIndex {
    /// [`ResourceIndex::build`], owning its keys.
    pub fn build(resources: &[Resource], default_namespace: Option<&str>) -> Self {
        Self::build_only(resources, default_namespace, |_| true)
    }

    /// [`OwnedResourceIndex::build`] over the objects whose index `keep` accepts; answers are
    /// still indexes into `resources`.
    pub fn build_only(
        resources: &[Resource],
        default_namespace: Option<&str>,
        keep: impl Fn(usize) -> bool,
    ) -> Self {
        let mut index = Self {
            entries: HashMap::with_capacity(resources.len()),
            default_namespace: default_namespace.map(str::to_string),
        };
        for (table, key, i) in entries(resources, default_namespace) {
            if keep(i) {
                index.entries.entry((table, owned_key(key))).or_insert(i);
            }
        }
        index
    }

    /// [`ResourceIndex::resolve`].
    pub fn resolve(&self, reference: &Reference) -> Resolution {
        resolve_with(
            reference,
            self.default_namespace.as_deref(),
            |table, key| self.entries.get(&(table, owned_key(key))).copied(),
        )
    }
}

/// One string for a key: its parts joined by a byte no Kubernetes name, kind or group holds,
/// and a marker telling "no namespace" from an empty one.
fn owned_key((group, kind, namespace, name): Key<'_>) -> String {
    let namespace = namespace.map_or_else(|| "\u{1}".to_string(), |n| format!("\u{2}{n}"));
    format!("{group}\u{0}{kind}\u{0}{namespace}\u{0}{name}")
}

/// The references of every resource, each with its resolution; element `i` belongs to
/// `resources[i]`. Builds one index, so the cost is linear in objects plus references.
pub fn resolve_all(
    resources: &[Resource],
    default_namespace: Option<&str>,
) -> Vec<Vec<(Reference, Resolution)>> {
    let index = ResourceIndex::build(resources, default_namespace);
    resources
        .iter()
        .map(|r| {
            references(r)
                .into_iter()
                .map(|reference| {
                    let resolution = index.resolve(&reference);
                    (reference, resolution)
                })
                .collect()
        })
        .collect()
}

/// The reverse edges of [`resolve_all`]: element `j` lists, once each and in order, the
/// resources that depend on `resources[j]`, either by referencing it or by referencing
/// something it produces. SG205 needs this direction ("a hook that others depend on").
pub fn dependents(resolved: &[Vec<(Reference, Resolution)>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); resolved.len()];
    for (i, refs) in resolved.iter().enumerate() {
        for (_, resolution) in refs {
            let target = match *resolution {
                Resolution::InSet { index } | Resolution::ProducedBy { index } => index,
                Resolution::Builtin | Resolution::Missing => continue,
            };
            // Out-of-range indices cannot come from resolve_all; ignore rather than panic on
            // hand-built input. `i` only grows, so checking the last entry deduplicates.
            if let Some(list) = out.get_mut(target)
                && list.last() != Some(&i)
                && target != i
            {
                list.push(i);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fixtures::{find, obj};
    use super::super::{RefRole, references};
    use super::*;

    fn job_using_secret(ns: Option<&str>, secret: &str) -> Resource {
        let b = obj("batch/v1", "Job", "migrate").template(json!({"containers": [
            {"name": "m", "envFrom": [{"secretRef": {"name": secret}}]}
        ]}));
        match ns {
            Some(ns) => b.namespace(ns).build(),
            None => b.build(),
        }
    }

    const JOB_SECRET: &str = "/spec/template/spec/containers/0/envFrom/0/secretRef/name";

    fn resolution_of(set: &[Resource], default_ns: Option<&str>, via: &str) -> Resolution {
        let index = ResourceIndex::build(set, default_ns);
        let referencing = set.last().expect("the referencing object is last");
        index.resolve(find(&references(referencing), via))
    }

    #[test]
    fn a_secret_defined_in_the_set_resolves_in_set_with_its_index() {
        let set = [
            obj("v1", "ConfigMap", "db").namespace("app").build(),
            obj("v1", "Secret", "db").namespace("app").build(),
            job_using_secret(Some("app"), "db"),
        ];
        assert_eq!(
            resolution_of(&set, None, JOB_SECRET),
            Resolution::InSet { index: 1 }
        );
    }

    #[test]
    fn a_secret_in_another_namespace_is_missing() {
        let set = [
            obj("v1", "Secret", "db").namespace("other").build(),
            job_using_secret(Some("app"), "db"),
        ];
        assert_eq!(resolution_of(&set, None, JOB_SECRET), Resolution::Missing);
    }

    #[test]
    fn a_secret_nobody_defines_is_missing() {
        let set = [job_using_secret(Some("app"), "db")];
        assert_eq!(resolution_of(&set, None, JOB_SECRET), Resolution::Missing);
    }

    #[test]
    fn unnamespaced_objects_meet_in_the_default_namespace() {
        let set = [
            obj("v1", "Secret", "db").build(),
            job_using_secret(Some("app"), "db"),
            job_using_secret(None, "db"),
        ];
        // Unnamespaced Secret + unnamespaced Job: same namespace, whatever the default is.
        assert_eq!(
            resolution_of(&set, None, JOB_SECRET),
            Resolution::InSet { index: 0 }
        );
        // An explicit namespace matches an unnamespaced object only via the default.
        let index = ResourceIndex::build(&set, Some("app"));
        let explicit = find(&references(&set[1]), JOB_SECRET).clone();
        assert_eq!(index.resolve(&explicit), Resolution::InSet { index: 0 });
        let index = ResourceIndex::build(&set, Some("web"));
        assert_eq!(index.resolve(&explicit), Resolution::Missing);
    }

    #[test]
    fn a_secret_produced_by_an_external_secret_resolves_to_its_producer() {
        let set = [
            obj("external-secrets.io/v1beta1", "ExternalSecret", "db-es")
                .namespace("app")
                .set("/spec/target/name", json!("db"))
                .build(),
            job_using_secret(Some("app"), "db"),
        ];
        assert_eq!(
            resolution_of(&set, None, JOB_SECRET),
            Resolution::ProducedBy { index: 0 }
        );
    }

    #[test]
    fn a_secret_produced_by_a_sealed_secret_resolves_to_its_producer() {
        let set = [
            obj("bitnami.com/v1alpha1", "SealedSecret", "db")
                .namespace("app")
                .build(),
            job_using_secret(Some("app"), "db"),
        ];
        assert_eq!(
            resolution_of(&set, None, JOB_SECRET),
            Resolution::ProducedBy { index: 0 }
        );
    }

    #[test]
    fn a_directly_defined_object_wins_over_a_producer() {
        let set = [
            obj("bitnami.com/v1alpha1", "SealedSecret", "db")
                .namespace("app")
                .build(),
            obj("v1", "Secret", "db").namespace("app").build(),
            job_using_secret(Some("app"), "db"),
        ];
        assert_eq!(
            resolution_of(&set, None, JOB_SECRET),
            Resolution::InSet { index: 1 }
        );
    }

    #[test]
    fn an_explicit_default_service_account_is_builtin_even_when_the_set_defines_it() {
        let set = [
            obj("v1", "ServiceAccount", "default")
                .namespace("app")
                .build(),
            obj("v1", "Pod", "p")
                .namespace("app")
                .set("/spec/serviceAccountName", json!("default"))
                .build(),
        ];
        assert_eq!(
            resolution_of(&set, None, "/spec/serviceAccountName"),
            Resolution::Builtin
        );
    }

    #[test]
    fn the_root_ca_config_map_of_every_namespace_is_builtin_but_other_config_maps_are_not() {
        // The projected volume a chart writes out by hand for a service account token (kong's
        // migration Jobs): kube-root-ca.crt is published into every namespace.
        let pod = |name: &str| {
            obj("v1", "Pod", "p")
                .namespace("app")
                .set(
                    "/spec/volumes",
                    json!([{"name": "token", "projected": {"sources": [
                        {"configMap": {"name": name, "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
                    ]}}]),
                )
                .build()
        };
        let via = "/spec/volumes/0/projected/sources/0/configMap/name";
        assert_eq!(
            resolution_of(&[pod("kube-root-ca.crt")], None, via),
            Resolution::Builtin
        );
        assert_eq!(
            resolution_of(&[pod("root-ca")], None, via),
            Resolution::Missing
        );
    }

    #[test]
    fn a_named_service_account_resolves_like_any_namespaced_object() {
        let set = [
            obj("v1", "ServiceAccount", "migrator")
                .namespace("app")
                .build(),
            obj("v1", "Pod", "p")
                .namespace("app")
                .set("/spec/serviceAccountName", json!("migrator"))
                .build(),
        ];
        assert_eq!(
            resolution_of(&set, None, "/spec/serviceAccountName"),
            Resolution::InSet { index: 0 }
        );
    }

    #[test]
    fn core_namespaces_are_builtin_and_others_resolve_to_namespace_objects() {
        let set = [
            obj("v1", "Namespace", "app").build(),
            obj("v1", "ConfigMap", "a").namespace("kube-system").build(),
            obj("v1", "ConfigMap", "b").namespace("app").build(),
            obj("v1", "ConfigMap", "c").namespace("nowhere").build(),
        ];
        let resolved = resolve_all(&set, Some("ignored-for-namespaces"));
        let ns_of = |i: usize| {
            resolved[i]
                .iter()
                .find(|(r, _)| r.role == RefRole::Namespace)
                .map(|(_, res)| *res)
        };
        assert_eq!(ns_of(0), None);
        assert_eq!(ns_of(1), Some(Resolution::Builtin));
        assert_eq!(ns_of(2), Some(Resolution::InSet { index: 0 }));
        assert_eq!(ns_of(3), Some(Resolution::Missing));
    }

    #[test]
    fn a_namespace_object_carrying_a_stray_namespace_field_is_still_found() {
        let set = [
            obj("v1", "Namespace", "app").namespace("junk").build(),
            obj("v1", "ConfigMap", "b").namespace("app").build(),
        ];
        assert_eq!(
            resolution_of(&set, Some("d"), "/metadata/namespace"),
            Resolution::InSet { index: 0 }
        );
    }

    #[test]
    fn custom_resources_resolve_to_the_crd_defining_their_group_and_kind() {
        let crd = |name: &str, group: &str, kind: &str| {
            obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
                .set("/spec/group", json!(group))
                .set("/spec/names/kind", json!(kind))
                .build()
        };
        let set = [
            crd("issuers.cert-manager.io", "cert-manager.io", "Issuer"),
            crd(
                "certificates.cert-manager.io",
                "cert-manager.io",
                "Certificate",
            ),
            obj("cert-manager.io/v1", "Certificate", "tls").build(),
            obj("cert-manager.io/v1", "ClusterIssuer", "le").build(),
            obj("example.com/v1", "Certificate", "other").build(),
        ];
        let resolved = resolve_all(&set, None);
        let crd_of = |i: usize| {
            resolved[i]
                .iter()
                .find(|(r, _)| r.role == RefRole::Definition)
                .map(|(_, res)| *res)
        };
        assert_eq!(crd_of(0), None, "CRDs are built-in objects");
        assert_eq!(crd_of(2), Some(Resolution::InSet { index: 1 }));
        assert_eq!(
            crd_of(3),
            Some(Resolution::Missing),
            "same group, other kind"
        );
        assert_eq!(
            crd_of(4),
            Some(Resolution::Missing),
            "same kind, other group"
        );
    }

    #[test]
    fn a_definition_reference_to_a_builtin_group_is_builtin() {
        let mut reference = references(&obj("example.com/v1", "Widget", "w").build())
            .pop()
            .expect("one CRD reference");
        if let Some(d) = reference.defines.as_mut() {
            d.group = "apps".into();
        }
        assert_eq!(
            ResourceIndex::build(&[], None).resolve(&reference),
            Resolution::Builtin
        );
    }

    #[test]
    fn scale_targets_match_group_kind_name_and_namespace() {
        let hpa = |api_version: &str, kind: &str| {
            obj("autoscaling/v2", "HorizontalPodAutoscaler", "web")
                .namespace("app")
                .set(
                    "/spec/scaleTargetRef",
                    json!({"apiVersion": api_version, "kind": kind, "name": "web"}),
                )
                .build()
        };
        let set = [
            obj("apps/v1", "Deployment", "web").namespace("app").build(),
            obj("argoproj.io/v1alpha1", "Rollout", "web")
                .namespace("app")
                .build(),
            hpa("apps/v1", "Deployment"),
            hpa("argoproj.io/v1alpha1", "Rollout"),
            hpa("apps/v1", "StatefulSet"),
            hpa("extensions/v1beta1", "Deployment"),
        ];
        let resolved = resolve_all(&set, None);
        let target = |i: usize| {
            resolved[i]
                .iter()
                .find(|(r, _)| r.role == RefRole::ScaleTarget)
                .map(|(_, res)| *res)
        };
        assert_eq!(target(2), Some(Resolution::InSet { index: 0 }));
        assert_eq!(target(3), Some(Resolution::InSet { index: 1 }));
        assert_eq!(target(4), Some(Resolution::Missing));
        assert_eq!(
            target(5),
            Some(Resolution::Missing),
            "group is part of identity"
        );
    }

    #[test]
    fn generate_name_objects_are_not_indexed() {
        let set = [
            Resource::from_value(
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"generateName": "db"}}),
                None,
            )
            .expect("valid"),
            job_using_secret(None, "db"),
        ];
        assert_eq!(resolution_of(&set, None, JOB_SECRET), Resolution::Missing);
    }

    #[test]
    fn the_first_of_duplicate_objects_wins() {
        let set = [
            obj("v1", "Secret", "db").namespace("app").build(),
            obj("v1", "Secret", "db").namespace("app").build(),
            job_using_secret(Some("app"), "db"),
        ];
        assert_eq!(
            resolution_of(&set, None, JOB_SECRET),
            Resolution::InSet { index: 0 }
        );
    }

    #[test]
    fn resolutions_serialize_with_a_resolution_tag() {
        let doc = serde_json::to_value([
            Resolution::InSet { index: 3 },
            Resolution::ProducedBy { index: 1 },
            Resolution::Builtin,
            Resolution::Missing,
        ])
        .expect("serializable");
        assert_eq!(
            doc,
            json!([
                {"resolution": "in_set", "index": 3},
                {"resolution": "produced_by", "index": 1},
                {"resolution": "builtin"},
                {"resolution": "missing"}
            ])
        );
    }

    #[test]
    fn dependents_lists_each_referencing_resource_once() {
        let set = [
            obj("v1", "Secret", "db").namespace("app").build(),
            obj("bitnami.com/v1alpha1", "SealedSecret", "tls")
                .namespace("app")
                .build(),
            obj("apps/v1", "Deployment", "web")
                .namespace("app")
                .template(json!({
                    "containers": [{"name": "c", "envFrom": [{"secretRef": {"name": "db"}}]}],
                    "volumes": [
                        {"name": "a", "secret": {"secretName": "db"}},
                        {"name": "b", "secret": {"secretName": "tls"}}
                    ]
                }))
                .build(),
            job_using_secret(Some("app"), "db"),
        ];
        let deps = dependents(&resolve_all(&set, None));
        assert_eq!(deps, vec![vec![2, 3], vec![2], vec![], vec![]]);
    }

    #[test]
    fn resolving_twenty_thousand_resources_works() {
        // 10,000 Secrets and 10,000 Deployments each using one of them. The index is built in
        // one pass and each reference is a hash lookup, so this is linear in the set size; a
        // quadratic scan would make this test noticeably slow.
        let mut set = Vec::with_capacity(20_000);
        for i in 0..10_000 {
            set.push(
                obj("v1", "Secret", &format!("s{i}"))
                    .namespace("app")
                    .build(),
            );
        }
        for i in 0..10_000 {
            set.push(
                obj("apps/v1", "Deployment", &format!("d{i}"))
                    .namespace("app")
                    .template(json!({"containers": [{"name": "c", "env": [
                        {"name": "X", "valueFrom": {"secretKeyRef": {"name": format!("s{i}"), "key": "k"}}}
                    ]}]}))
                    .build(),
            );
        }
        let resolved = resolve_all(&set, None);
        assert_eq!(resolved.len(), 20_000);
        for (i, refs) in resolved.iter().enumerate().skip(10_000) {
            let secret = refs
                .iter()
                .find(|(r, _)| r.role == RefRole::Env)
                .map(|(_, res)| *res);
            assert_eq!(secret, Some(Resolution::InSet { index: i - 10_000 }));
        }
    }
}
