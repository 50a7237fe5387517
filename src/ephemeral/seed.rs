//! What the throwaway API server must hold before the input's objects are dry-run: the CRDs of
//! the input (Established, so their kinds are served with their schemas) and every namespace
//! the objects go to. Both are real writes — into the throwaway server only.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use crate::model::Resource;

/// The field manager of the seeding writes.
const FIELD_MANAGER: &str = "syncguard-ephemeral";

/// How long the installed CRDs may take to become Established.
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(30);

/// What was installed, and what the server refused.
#[derive(Debug, Default)]
pub struct Seeded {
    /// Names of the CRDs installed and Established.
    pub crds: Vec<String>,
    /// Namespaces created.
    pub namespaces: usize,
    /// One line per CRD or namespace the server refused (their objects are then judged
    /// offline).
    pub problems: Vec<String>,
}

/// Installs the CRDs of `resources` and the namespaces they (and `destination`) need.
pub async fn seed(client: &kube::Client, resources: &[Resource], destination: &str) -> Seeded {
    let mut out = Seeded::default();
    let params = PatchParams::apply(FIELD_MANAGER).force();

    let mut namespaces: BTreeSet<String> = BTreeSet::new();
    namespaces.insert(destination.to_string());
    for r in resources {
        if let Some(ns) = &r.namespace {
            namespaces.insert(ns.clone());
        }
        if r.group.is_empty() && r.kind == "Namespace" && !r.name.is_empty() {
            namespaces.insert(r.name.clone());
        }
    }
    let ns_api: Api<Namespace> = Api::all(client.clone());
    for name in &namespaces {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match ns_api.patch(name, &params, &Patch::Apply(&body)).await {
            Ok(_) => out.namespaces += 1,
            Err(e) => out
                .problems
                .push(format!("namespace {name}: {}", brief(&e))),
        }
    }

    let crd_api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut pending: Vec<String> = Vec::new();
    for r in resources.iter().filter(|r| {
        r.group == "apiextensions.k8s.io"
            && r.kind == "CustomResourceDefinition"
            && r.version == "v1"
    }) {
        let mut body: Value = r.raw.clone();
        if let Some(m) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("uid");
        }
        match crd_api.patch(&r.name, &params, &Patch::Apply(&body)).await {
            Ok(_) => pending.push(r.name.clone()),
            Err(e) => out.problems.push(format!(
                "CustomResourceDefinition {} was refused, so its custom resources are judged offline: {}",
                r.name,
                brief(&e)
            )),
        }
    }
    let started = Instant::now();
    while !pending.is_empty() {
        let mut still = Vec::new();
        for name in pending {
            let established = crd_api.get(&name).await.is_ok_and(|crd| {
                crd.status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
            if established {
                out.crds.push(name);
            } else {
                still.push(name);
            }
        }
        pending = still;
        if pending.is_empty() {
            break;
        }
        if started.elapsed() > ESTABLISHED_TIMEOUT {
            for name in pending {
                out.problems.push(format!(
                    "CustomResourceDefinition {name} was not Established within {ESTABLISHED_TIMEOUT:?}; its custom resources are judged offline"
                ));
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    out
}

fn brief(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({}): {}", s.reason, s.code, s.message),
        other => other.to_string(),
    }
}
