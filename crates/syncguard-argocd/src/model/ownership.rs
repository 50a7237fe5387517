//! Ownership: every object Argo CD applies belongs to exactly one Application.
//!
//! Two Applications that render an object of the same identity (group, kind, namespace, name)
//! fight over it: each sync of one writes its tracking id over the other's, the other reports
//! the object OutOfSync (or, when it prunes, deletes it), and Argo CD shows a
//! SharedResourceWarning — or fails the sync with `FailOnSharedResource=true`. The identity is
//! the one Argo CD compares: the destination namespace fills an object that names none, and a
//! cluster-scoped kind has no namespace at all. Applications whose destinations name two
//! different clusters do not meet; one whose Application is not in the input may be anywhere,
//! so it is assumed to meet the others.

use std::collections::{BTreeSet, HashMap};

use crate::model::Resource;
use crate::model::app::{AppGroup, is_application};
use crate::model::refs::is_cluster_scoped;

/// How often one conflict between Applications is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tell {
    /// On every Application's copy: admission judges one object at a time, and the copy it
    /// judges must carry the fact.
    EachCopy,
    /// Once, on the copy of the Application first by name, naming all the others: a check or
    /// review of the whole input reports one finding per conflict, not one per Application.
    Once,
}

/// For each object claimed by more than one Application of the input: the names of the
/// *other* Applications that render it, sorted ([`Tell`] says on which copies).
pub fn shared_claims(
    resources: &[Resource],
    groups: &[AppGroup],
    default_namespace: &str,
    tell: Tell,
) -> HashMap<usize, Vec<String>> {
    type Claim = (String, String, usize); // app, cluster ("" unknown), object index
    let mut by_identity: HashMap<(String, String, String, String), BTreeSet<Claim>> =
        HashMap::new();
    for group in groups {
        let Some(app) = &group.name else { continue };
        let cluster = group
            .application
            .as_ref()
            .map(|a| a.destination_cluster.clone())
            .unwrap_or_default();
        let destination = group
            .application
            .as_ref()
            .map(|a| a.destination_namespace.as_str())
            .filter(|n| !n.is_empty())
            .unwrap_or(default_namespace);
        for &i in &group.members {
            let Some(r) = resources.get(i) else { continue };
            if r.name.is_empty() || is_hook(r) {
                continue;
            }
            let namespace = if is_cluster_scoped(&r.group, &r.kind) {
                String::new()
            } else {
                r.namespace
                    .clone()
                    .unwrap_or_else(|| destination.to_string())
            };
            by_identity
                .entry((r.group.clone(), r.kind.clone(), namespace, r.name.clone()))
                .or_default()
                .insert((app.clone(), cluster.clone(), i));
        }
    }
    let mut out: HashMap<usize, Vec<String>> = HashMap::new();
    for claims in by_identity.values() {
        // Claims are ordered by Application name: with `Once`, the first claim that meets
        // another one carries the finding.
        let told = out.len();
        for (app, cluster, i) in claims {
            if tell == Tell::Once && out.len() > told {
                break;
            }
            let others = claims.iter().filter(|(other, other_cluster, _)| {
                other != app
                    && (cluster.is_empty() || other_cluster.is_empty() || cluster == other_cluster)
            });
            let others: Vec<String> = others.map(|(other, _, _)| other.clone()).collect();
            if !others.is_empty() {
                out.entry(*i).or_default().extend(others);
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
        v.dedup();
    }
    out
}

/// Hooks are created anew by each sync of their own Application and never compared.
fn is_hook(r: &Resource) -> bool {
    let a = &r.raw["metadata"]["annotations"];
    (a["argocd.argoproj.io/hook"].is_string() || a["helm.sh/hook"].is_string())
        && !is_application(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(kind: &str, name: &str, ns: Option<&str>) -> Resource {
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        Resource::from_value(
            json!({"apiVersion": "v1", "kind": kind, "metadata": meta}),
            None,
        )
        .unwrap()
    }

    fn group(name: &str, members: Vec<usize>) -> AppGroup {
        AppGroup {
            name: Some(name.into()),
            application: None,
            members,
        }
    }

    #[test]
    fn the_same_identity_in_two_apps_is_claimed_twice() {
        let objects = vec![
            obj("ConfigMap", "settings", Some("shop")),
            obj("ConfigMap", "settings", None),
            obj("Namespace", "shop", None),
            obj("Namespace", "shop", None),
            obj("ConfigMap", "settings", Some("other")),
        ];
        let groups = vec![group("a", vec![0, 2]), group("b", vec![1, 3, 4])];
        let shared = shared_claims(&objects, &groups, "shop", Tell::EachCopy);
        assert_eq!(shared.get(&0), Some(&vec!["b".to_string()]));
        assert_eq!(shared.get(&1), Some(&vec!["a".to_string()]));
        assert_eq!(shared.get(&3), Some(&vec!["a".to_string()]));
        assert_eq!(shared.get(&4), None);
        // Once: a's copies carry the conflict, naming b; b's carry nothing.
        let once = shared_claims(&objects, &groups, "shop", Tell::Once);
        assert_eq!(once.get(&0), Some(&vec!["b".to_string()]));
        assert_eq!(once.get(&2), Some(&vec!["b".to_string()]));
        assert_eq!(once.get(&1), None);
        assert_eq!(once.get(&3), None);
        assert_eq!(once.len(), 2);
    }

    #[test]
    fn a_namespace_two_applications_render_has_no_single_owner_to_warn_about() {
        let objects = vec![
            obj("Namespace", "shop", None),
            obj("ConfigMap", "a-cfg", None),
            obj("Namespace", "shop", None),
            obj("ConfigMap", "b-cfg", None),
            obj("ConfigMap", "c-cfg", Some("shop")),
            obj("Namespace", "solo", None),
            obj("ConfigMap", "c-solo", Some("solo")),
        ];
        let groups = vec![
            group("a", vec![0, 1]),
            group("b", vec![2, 3]),
            group("c", vec![4, 6]),
            group("d", vec![5]),
        ];
        let guests = namespace_guests(&objects, &groups, "shop");
        // shop is shared (SG403's first case says so); solo has one owner and a guest.
        assert_eq!(guests.get(&0), None);
        assert_eq!(guests.get(&2), None);
        assert_eq!(guests.get(&5), Some(&vec!["c".to_string()]));
    }
}

/// For each Namespace object an Application of the input renders: the other Applications whose
/// objects live in that namespace. Deleting the owning Application (or pruning the Namespace)
/// deletes the namespace and everything in it, the other Applications' objects included.
pub fn namespace_guests(
    resources: &[Resource],
    groups: &[AppGroup],
    default_namespace: &str,
) -> HashMap<usize, Vec<String>> {
    let mut owners: HashMap<&str, Vec<(usize, &str)>> = HashMap::new();
    for group in groups {
        let Some(app) = &group.name else { continue };
        for &i in &group.members {
            if let Some(r) = resources.get(i)
                && r.group.is_empty()
                && r.kind == "Namespace"
            {
                owners
                    .entry(r.name.as_str())
                    .or_default()
                    .push((i, app.as_str()));
            }
        }
    }
    let mut out: HashMap<usize, Vec<String>> = HashMap::new();
    // A Namespace two Applications render has no one owner whose deletion takes the others'
    // objects with it: it is a shared object, told as such (`shared_claims`), not twice more.
    owners.retain(|_, claims| {
        let first = claims.first().map(|(_, app)| *app);
        claims.iter().all(|(_, app)| Some(*app) == first)
    });
    if owners.is_empty() {
        return out;
    }
    for group in groups {
        let Some(app) = &group.name else { continue };
        let destination = group
            .application
            .as_ref()
            .map(|a| a.destination_namespace.as_str())
            .filter(|n| !n.is_empty())
            .unwrap_or(default_namespace);
        for &i in &group.members {
            let Some(r) = resources.get(i) else { continue };
            if is_cluster_scoped(&r.group, &r.kind) || is_hook(r) {
                continue;
            }
            let namespace = r.namespace.as_deref().unwrap_or(destination);
            for (ns_index, owner) in owners.get(namespace).into_iter().flatten() {
                if *owner != app.as_str() {
                    out.entry(*ns_index).or_default().push(app.clone());
                }
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
        v.dedup();
    }
    out
}

/// For each Application object of the input: the other Applications of the input with the same
/// source (repository, path or chart, revision) and the same destination. Both render the same
/// objects into the same place — unless a Helm chart names its objects after the release, which
/// is the Application's name by default (the caller says so).
pub fn same_source(resources: &[Resource], tell: Tell) -> HashMap<usize, Vec<String>> {
    let mut by_key: HashMap<String, Vec<(usize, &str)>> = HashMap::new();
    for (i, r) in resources.iter().enumerate() {
        if !is_application(r) {
            continue;
        }
        let spec = &r.raw["spec"];
        let source = &spec["source"];
        if !source.is_object() || source["repoURL"].as_str().is_none() {
            continue;
        }
        let dest = &spec["destination"];
        let key = serde_json::json!([
            source["repoURL"],
            source["path"],
            source["chart"],
            source["targetRevision"],
            source["helm"],
            source["kustomize"],
            source["directory"],
            dest["server"],
            dest["name"],
            dest["namespace"],
        ])
        .to_string();
        by_key.entry(key).or_default().push((i, r.name.as_str()));
    }
    let mut out = HashMap::new();
    for apps in by_key.values().filter(|a| a.len() > 1) {
        let first = apps.iter().map(|(_, n)| *n).min();
        for (i, name) in apps {
            if tell == Tell::Once && Some(*name) != first {
                continue;
            }
            let mut others: Vec<String> = apps
                .iter()
                .filter(|(_, n)| n != name)
                .map(|(_, n)| (*n).to_string())
                .collect();
            others.sort();
            others.dedup();
            if !others.is_empty() {
                out.insert(*i, others);
            }
        }
    }
    out
}

#[cfg(test)]
mod more_tests {
    use super::*;
    use serde_json::json;

    fn app(name: &str, path: &str) -> Resource {
        Resource::from_value(
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": name, "namespace": "argocd"},
                "spec": {"source": {"repoURL": "https://git.example.com/apps.git", "path": path, "targetRevision": "main"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}}),
            None,
        )
        .unwrap()
    }

    #[test]
    fn applications_with_one_source_and_destination_render_the_same_objects() {
        let apps = vec![app("a", "chart"), app("b", "chart"), app("c", "other")];
        let same = same_source(&apps, Tell::EachCopy);
        assert_eq!(same.get(&0), Some(&vec!["b".to_string()]));
        assert_eq!(same.get(&1), Some(&vec!["a".to_string()]));
        assert_eq!(same.get(&2), None);
        let once = same_source(&apps, Tell::Once);
        assert_eq!(once.get(&0), Some(&vec!["b".to_string()]));
        assert_eq!(once.len(), 1);
    }

    #[test]
    fn a_namespace_one_app_renders_hosts_the_objects_of_another() {
        let ns = Resource::from_value(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
            None,
        )
        .unwrap();
        let cm = |name: &str| {
            Resource::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "shop"}}), None).unwrap()
        };
        let objects = vec![ns, cm("orders"), cm("billing")];
        let groups = vec![
            AppGroup {
                name: Some("orders".into()),
                application: None,
                members: vec![0, 1],
            },
            AppGroup {
                name: Some("billing".into()),
                application: None,
                members: vec![2],
            },
        ];
        let guests = namespace_guests(&objects, &groups, "default");
        assert_eq!(guests.get(&0), Some(&vec!["billing".to_string()]));
        assert_eq!(guests.len(), 1);
    }
}
