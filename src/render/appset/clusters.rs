//! The `clusters` generator as Argo CD 3.6.1 evaluates it (`applicationset/generators/cluster.go`)
//! over the cluster Secrets syncguard is given: Secrets labelled
//! `argocd.argoproj.io/secret-type: cluster` in the render's input or in `--clusters` files (a
//! repository seldom holds them; `kubectl get secrets -n argocd -l
//! argocd.argoproj.io/secret-type=cluster -o yaml` exports them, and only `name`, `server`,
//! `project` and the labels and annotations are read — strip `config`).
//!
//! - The generator's own `selector` chooses among the Secrets by their labels; with a selector
//!   the local cluster is left out.
//! - Each chosen Secret gives `name`, `nameNormalized`, `server`, `project` and its labels and
//!   annotations (`metadata.labels.<key>` flat, or `metadata.labels` / `metadata.annotations`
//!   objects with `goTemplate`), then the generator's `values`.
//! - Without a selector the local cluster (`in-cluster`, `https://kubernetes.default.svc`) comes
//!   last, unless a chosen Secret is for that server.
//! - Argo CD walks the Secrets in a Go map's order (random); here they come sorted by name.
//!
//! With a selector and no Secret given at all, the generator is a skipped source: its result
//! depends on data syncguard was not given.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use syncguard_argocd::config::appset::{GeneratorBlock, GeneratorSpec};

use super::generators::{OUTSIDE, add_values};
use super::template::Engine;
use super::{sanitize_name, selector};
use crate::model::Resource;
use crate::render::Repos;

/// The label that marks a cluster Secret.
const SECRET_TYPE: &str = "argocd.argoproj.io/secret-type";
/// The local cluster's address and name.
const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
const IN_CLUSTER_NAME: &str = "in-cluster";
/// Annotations Argo CD does not pass on as parameters (its own state, one-shot triggers, data).
const EXCLUDED_ANNOTATIONS: [&str; 7] = [
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/refresh-timestamp",
    "argocd.argoproj.io/hydrate",
    "argocd.argoproj.io/hydrate-timestamp",
    "argocd.argoproj.io/tracking-id",
    "argocd.argoproj.io/installation-id",
    "kubectl.kubernetes.io/last-applied-configuration",
];

/// What the generators can read besides the ApplicationSet: local repositories and the cluster
/// Secrets given.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    pub repos: &'a Repos,
    pub clusters: &'a [Cluster],
}

#[cfg(test)]
impl<'a> Known<'a> {
    /// The repositories alone (no cluster Secret), for tests of the other generators.
    pub fn repos(repos: &'a Repos) -> Self {
        Self {
            repos,
            clusters: &[],
        }
    }
}

/// One cluster Secret, as the generator reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    pub name: String,
    pub server: String,
    pub project: Option<String>,
    pub labels: Map<String, Value>,
    pub annotations: Map<String, Value>,
}

/// The cluster Secrets among `resources` in the control-plane namespace `namespace` (or naming
/// none), sorted by cluster name; of two Secrets for one cluster name the later wins, as in
/// Argo CD's map.
pub fn clusters_of<'r>(
    resources: impl IntoIterator<Item = &'r Resource>,
    namespace: &str,
) -> Vec<Cluster> {
    let mut by_name = std::collections::BTreeMap::new();
    for r in resources {
        if !(r.group.is_empty() && r.kind == "Secret") {
            continue;
        }
        if r.namespace.as_deref().is_some_and(|n| n != namespace) {
            continue;
        }
        let meta = &r.raw["metadata"];
        if meta["labels"][SECRET_TYPE].as_str() != Some("cluster") {
            continue;
        }
        let field = |key: &str| -> Option<String> {
            if let Some(s) = r.raw["stringData"][key].as_str() {
                return Some(s.to_string());
            }
            let encoded = r.raw["data"][key].as_str()?;
            base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        let object = |key: &str| meta[key].as_object().cloned().unwrap_or_default();
        let cluster = Cluster {
            name: field("name").unwrap_or_default(),
            server: field("server").unwrap_or_default(),
            project: field("project"),
            labels: object("labels"),
            annotations: object("annotations"),
        };
        by_name.insert(cluster.name.clone(), cluster);
    }
    by_name.into_values().collect()
}

/// The parameter sets of a `clusters` generator block.
pub fn generate(
    block: &GeneratorBlock,
    engine: Engine,
    clusters: &[Cluster],
) -> Result<Vec<Value>, String> {
    let GeneratorSpec::Clusters {
        selector,
        flat_list,
    } = &block.spec
    else {
        return Ok(Vec::new());
    };
    let selector = selector.as_ref().filter(|s| !s.is_null());
    let selects = |key: &str| {
        selector.and_then(|s| s.get(key)).is_some_and(|v| {
            v.as_array().is_some_and(|a| !a.is_empty())
                || v.as_object().is_some_and(|m| !m.is_empty())
        })
    };
    let ignore_local = selects("matchLabels") || selects("matchExpressions");
    if ignore_local && clusters.is_empty() {
        return Err(format!(
            "a clusters generator with a selector chooses among cluster Secrets, data {OUTSIDE} \
             that syncguard was not given (--clusters FILE): no Application is generated here"
        ));
    }
    let mut chosen = Vec::new();
    for c in clusters {
        let labels = Value::Object(c.labels.clone());
        if !selector::filter(selector, vec![labels])?.is_empty() {
            chosen.push(c);
        }
    }
    let values = &block.values;
    let mut sets = Vec::new();
    for c in &chosen {
        let mut set = json!({
            "name": c.name,
            "nameNormalized": sanitize_name(&c.name),
            "server": c.server,
            "project": c.project.clone().unwrap_or_default(),
        });
        let annotations: Map<String, Value> = c
            .annotations
            .iter()
            .filter(|(k, _)| !EXCLUDED_ANNOTATIONS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(map) = set.as_object_mut() {
            if engine == Engine::Fast {
                for (k, v) in &annotations {
                    map.insert(format!("metadata.annotations.{k}"), v.clone());
                }
                for (k, v) in &c.labels {
                    map.insert(format!("metadata.labels.{k}"), v.clone());
                }
            } else {
                let mut meta = Map::new();
                if !c.annotations.is_empty() {
                    meta.insert("annotations".into(), Value::Object(annotations));
                }
                if !c.labels.is_empty() {
                    meta.insert("labels".into(), Value::Object(c.labels.clone()));
                }
                map.insert("metadata".into(), Value::Object(meta));
            }
        }
        add_values(&mut set, values, engine)?;
        sets.push(set);
    }
    if !ignore_local && !chosen.iter().any(|c| c.server == IN_CLUSTER_SERVER) {
        let mut set = json!({
            "name": IN_CLUSTER_NAME,
            "nameNormalized": IN_CLUSTER_NAME,
            "server": IN_CLUSTER_SERVER,
            "project": "",
        });
        add_values(&mut set, values, engine)?;
        sets.push(set);
    }
    if *flat_list {
        return Ok(vec![json!({ "clusters": sets })]);
    }
    Ok(sets)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    const GO: Engine = Engine::Go {
        missing_key: syncguard_argocd::config::appset::MissingKey::Default,
    };

    /// The parameter sets of the clusters generator block `spec`.
    fn generate(spec: Value, engine: Engine, clusters: &[Cluster]) -> Result<Vec<Value>, String> {
        let generator = syncguard_argocd::config::appset::Generator::read(
            &json!({ "clusters": spec }),
            "",
            &mut Default::default(),
        );
        super::generate(&generator.blocks[0], engine, clusters)
    }

    fn secrets() -> Vec<Cluster> {
        let loaded = load_str(
            "clusters.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod\n  namespace: argocd\n  labels: {argocd.argoproj.io/secret-type: cluster, env: prod}\n  \
             annotations: {team: core, argocd.argoproj.io/refresh: now}\n\
             stringData: {name: Prod_EU, server: 'https://prod.example:6443', config: '{}'}\n\
             ---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: dev\n  labels: {argocd.argoproj.io/secret-type: cluster, env: dev}\n\
             data: {name: ZGV2, server: aHR0cHM6Ly9kZXYuZXhhbXBsZTo2NDQz, project: dGVhbQ==}\n\
             ---\napiVersion: v1\nkind: Secret\nmetadata: {name: elsewhere, namespace: other, labels: {argocd.argoproj.io/secret-type: cluster}}\n\
             stringData: {name: other, server: 'https://other'}\n\
             ---\napiVersion: v1\nkind: Secret\nmetadata: {name: repo, namespace: argocd, labels: {argocd.argoproj.io/secret-type: repository}}\n\
             stringData: {url: 'https://git'}\n",
        );
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        clusters_of(&loaded.resources, "argocd")
    }

    #[test]
    fn cluster_secrets_of_the_control_plane_namespace_are_read_sorted_by_name() {
        let c = secrets();
        let names: Vec<(&str, &str, Option<&str>)> = c
            .iter()
            .map(|c| (c.name.as_str(), c.server.as_str(), c.project.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("Prod_EU", "https://prod.example:6443", None),
                ("dev", "https://dev.example:6443", Some("team")),
            ]
        );
    }

    #[test]
    fn each_chosen_secret_then_the_local_cluster_unless_a_selector_is_set() {
        let c = secrets();
        let sets = generate(json!({"values": {"x": "{{name}}-v"}}), Engine::Fast, &c).unwrap();
        let names: Vec<&str> = sets.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Prod_EU", "dev", "in-cluster"]);
        assert_eq!(sets[0]["nameNormalized"], "prod-eu");
        assert_eq!(sets[0]["metadata.labels.env"], "prod");
        assert_eq!(sets[0]["metadata.annotations.team"], "core");
        assert!(
            sets[0]
                .get("metadata.annotations.argocd.argoproj.io/refresh")
                .is_none()
        );
        assert_eq!(sets[0]["values.x"], "Prod_EU-v");
        assert_eq!(sets[1]["project"], "team");
        let sets = generate(
            json!({"selector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]}}),
            GO,
            &c,
        )
        .unwrap();
        assert_eq!(sets.len(), 1);
        assert_eq!(sets[0]["metadata"]["labels"]["env"], "dev");
        assert!(sets[0]["metadata"].get("annotations").is_none());
        // A Secret for the local server replaces the built-in local cluster.
        let mut local = c.clone();
        local[1].server = IN_CLUSTER_SERVER.into();
        let sets = generate(json!({"flatList": true}), Engine::Fast, &local).unwrap();
        assert_eq!(sets.len(), 1);
        assert_eq!(sets[0]["clusters"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_selector_without_any_secret_given_is_data_syncguard_lacks() {
        let e = generate(
            json!({"selector": {"matchLabels": {"env": "prod"}}}),
            Engine::Fast,
            &[],
        )
        .unwrap_err();
        assert!(e.contains(OUTSIDE) && e.contains("--clusters"), "{e}");
        let sets = generate(json!({}), Engine::Fast, &[]).unwrap();
        assert_eq!(sets[0]["name"], "in-cluster");
    }
}
