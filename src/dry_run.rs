//! What the cluster would store for each input object: a server-side apply with `dryRun=All`
//! (`check --cluster`). The API server runs its defaulting, its validation and every mutating
//! and validating admission webhook on the object and returns the result without persisting it
//! — nothing is ever written. The diff model compares the declared fields with these stored
//! forms (`model::diff::stored`).
//!
//! Bounded: one request per object (plus one discovery request per kind), at most
//! `concurrency` in flight and `qps` started per second. A cluster that cannot be reached is
//! an error. An object the API server refuses as invalid gets that verdict
//! ([`DryRun::verdicts`]): the server's own causes, the most certain refusal there is. A
//! request refused for anything else (kind not served, namespace missing, forbidden by the
//! cluster's policy) says nothing about the object: it is listed in [`DryRun::refused`] and the
//! object judged offline like any other.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use futures::StreamExt as _;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope};
use serde_json::Value;
use tokio::sync::Mutex;

use crate::model::Resource;
use crate::model::argo::SyncFacts;
use crate::model::validity::server::{Cause, Refusal, Verdict};

/// The field manager of the dry-run applies (never persisted, but visible to webhooks).
pub const FIELD_MANAGER: &str = "syncguard-check";

/// (group, version, kind).
type KindKey = (String, String, String);

/// How hard `check --cluster` may press on the API server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Requests in flight at once (at least 1).
    pub concurrency: usize,
    /// Requests started per second (above 0).
    pub qps: f64,
}

/// The outcome of the dry-runs.
#[derive(Debug, Default)]
pub struct DryRun {
    /// The stored form of each object the cluster accepted, by its index in the input.
    pub stored: HashMap<usize, Value>,
    /// One line per object the cluster did not dry-run, saying why.
    pub refused: Vec<String>,
    /// The server's verdict on each object it dry-ran: accepted, or refused as invalid.
    pub verdicts: HashMap<usize, Verdict>,
    /// The API server's version, e.g. `v1.34.4`.
    pub server: String,
}

/// How the objects are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A server-side apply with `dryRun=All`: nothing is written. In both modes an object
    /// whose sync options say `Replace=true` is replaced instead (a PUT with the live object's
    /// resourceVersion), as Argo CD applies it; one that also says `Force=true` is deleted and
    /// created by Argo CD, which no immutable field refuses, so it is not sent at all.
    DryRun,
    /// A real server-side apply (a replace for `Replace=true`), only ever used on a throwaway
    /// API server: a write meets what a dry-run skips — a node port outside the server's
    /// range or taken by another Service, an address already allocated — as Argo CD's apply
    /// does. Objects that would change how the server treats every later request (admission
    /// webhook configurations and policies, aggregated APIServices) are still only dry-run:
    /// their backends do not exist there.
    Write,
}

/// Kinds a write would turn into part of the server's own request path.
fn changes_the_server(r: &Resource) -> bool {
    r.group == "admissionregistration.k8s.io"
        || (r.group == "apiregistration.k8s.io" && r.kind == "APIService")
}

impl DryRun {
    /// What the server judged, for the report: `kind` is `ephemeral` or `cluster`.
    pub fn used(&self, kind: &'static str) -> crate::finding::ServerUsed {
        let refused = self
            .verdicts
            .values()
            .filter(|v| matches!(v, Verdict::Refused(_)))
            .count();
        crate::finding::ServerUsed {
            kind,
            kubernetes: self.server.clone(),
            accepted: self.verdicts.len() - refused,
            refused,
            not_checked: self.refused.len(),
        }
    }
}

/// Dry-runs every object of `resources` on the cluster of `client`. Objects that name no
/// namespace go to `namespace` when their kind is namespaced (Argo CD's destination).
pub async fn dry_run(
    client: kube::Client,
    resources: &[Resource],
    namespace: &str,
    limits: &Limits,
) -> anyhow::Result<DryRun> {
    send(client, resources, namespace, limits, Mode::DryRun).await
}

/// Sends every object of `resources` as `mode` says (see [`dry_run`]).
pub async fn send(
    client: kube::Client,
    resources: &[Resource],
    namespace: &str,
    limits: &Limits,
    mode: Mode,
) -> anyhow::Result<DryRun> {
    let version = client
        .apiserver_version()
        .await
        .context("cannot reach the cluster (kubeconfig: KUBECONFIG or ~/.kube/config, or the in-cluster service account)")?;
    let mut out = DryRun {
        server: version.git_version,
        ..DryRun::default()
    };
    let pacer = Arc::new(Pacer::new(limits.qps));

    // One discovery request per kind, before any object.
    let mut kinds: HashMap<KindKey, Result<(ApiResource, Scope), String>> = HashMap::new();
    for r in resources {
        let key = (r.group.clone(), r.version.clone(), r.kind.clone());
        if kinds.contains_key(&key) {
            continue;
        }
        pacer.wait().await;
        let gvk = GroupVersionKind::gvk(&r.group, &r.version, &r.kind);
        let found = kube::discovery::pinned_kind(&client, &gvk)
            .await
            .map(|(ar, caps)| (ar, caps.scope))
            .map_err(|e| match e {
                kube::Error::Api(s) if s.code == 404 => {
                    format!("the cluster does not serve {}", r.api_version)
                }
                kube::Error::Discovery(_) => format!(
                    "the cluster does not serve kind {} in {}",
                    r.kind, r.api_version
                ),
                other => format!("discovery of {} {} failed: {other}", r.api_version, r.kind),
            });
        kinds.insert(key, found);
    }

    let mut jobs = Vec::new();
    for (i, r) in resources.iter().enumerate() {
        let key = (r.group.clone(), r.version.clone(), r.kind.clone());
        let (ar, scope) = match kinds.get(&key) {
            Some(Ok(found)) => found.clone(),
            Some(Err(why)) => {
                out.refused.push(format!("{}: {why}", subject(r)));
                continue;
            }
            None => continue,
        };
        if r.name.is_empty() {
            out.refused.push(format!(
                "{}: it has only a generateName, and an apply needs a name",
                subject(r)
            ));
            continue;
        }
        let ns = match scope {
            Scope::Namespaced => Some(r.namespace.clone().unwrap_or_else(|| namespace.to_string())),
            Scope::Cluster => None,
        };
        let options = SyncFacts::of(r).sync_options;
        let replace = options.has("Replace=true");
        if replace && options.has("Force=true") {
            out.refused.push(format!(
                "{}: Force=true,Replace=true deletes and re-creates it, which no immutable field refuses",
                subject(r)
            ));
            continue;
        }
        let dry = mode == Mode::DryRun || changes_the_server(r);
        let server_side = options.has("ServerSideApply=true");
        jobs.push((i, r, ar, ns, replace, dry, server_side));
    }

    let write_params = PatchParams::apply(FIELD_MANAGER)
        .force()
        // Argo CD's client-side apply sends no field validation: unknown fields are dropped,
        // which the stored form then shows, instead of refusing the object.
        .validation_ignore();
    let dry_params = write_params.clone().dry_run();
    let results: Vec<(usize, Result<Value, Refused>)> = futures::stream::iter(jobs)
        .map(|(i, r, ar, ns, replace, dry, server_side)| {
            let client = client.clone();
            let pacer = Arc::clone(&pacer);
            let params = if dry {
                dry_params.clone()
            } else {
                write_params.clone()
            };
            async move {
                pacer.wait().await;
                let api: Api<DynamicObject> = match &ns {
                    Some(ns) => Api::namespaced_with(client, ns, &ar),
                    None => Api::all_with(client, &ar),
                };
                let mut body = r.raw.clone();
                if !server_side {
                    drop_nulls(&mut body);
                }
                if let (Some(ns), Some(meta)) = (&ns, body.get_mut("metadata")) {
                    meta["namespace"] = Value::from(ns.as_str());
                }
                let sent = if replace {
                    replace_object(&api, &r.name, body, dry).await
                } else {
                    api.patch(&r.name, &params, &Patch::Apply(&body)).await
                };
                let result = sent.map_err(|e| refusal(&e, ns.as_deref())).and_then(|o| {
                    serde_json::to_value(o).map_err(|e| Refused::Request(e.to_string()))
                });
                (i, result)
            }
        })
        .buffer_unordered(limits.concurrency.max(1))
        .collect()
        .await;
    let mut refused: Vec<(usize, String)> = Vec::new();
    for (i, result) in results {
        match result {
            Ok(stored) => {
                out.stored.insert(i, stored);
                out.verdicts.insert(i, Verdict::Accepted);
            }
            Err(Refused::Object(refusal)) => {
                out.verdicts.insert(i, Verdict::Refused(refusal));
            }
            Err(Refused::Request(why)) => {
                refused.push((i, format!("{}: {why}", subject(&resources[i]))));
            }
        }
    }
    refused.sort();
    out.refused
        .extend(refused.into_iter().map(|(_, line)| line));
    Ok(out)
}

/// `Replace=true` as Argo CD does it: a replace of the live object (`kubectl replace`), or a
/// create when there is none; `dry`: with `dryRun=All`.
async fn replace_object(
    api: &Api<DynamicObject>,
    name: &str,
    mut body: Value,
    dry: bool,
) -> Result<DynamicObject, kube::Error> {
    let dry = kube::api::PostParams {
        dry_run: dry,
        field_manager: Some(FIELD_MANAGER.to_string()),
    };
    match api.get_opt(name).await? {
        Some(live) => {
            if let (Some(version), Some(meta)) = (
                live.metadata.resource_version,
                body.get_mut("metadata").and_then(Value::as_object_mut),
            ) {
                meta.insert("resourceVersion".into(), Value::from(version));
            }
            let object: DynamicObject =
                serde_json::from_value(body).map_err(kube::Error::SerdeError)?;
            api.replace(name, &dry, &object).await
        }
        None => {
            let object: DynamicObject =
                serde_json::from_value(body).map_err(kube::Error::SerdeError)?;
            api.create(&dry, &object).await
        }
    }
}

/// Argo CD applies client-side unless told otherwise, and a field set to null means nothing
/// there: a create decodes it away (a typed object's zero value; a custom resource's decoder
/// drops non-nullable nulls), an update's merge patch deletes with it. A server-side apply
/// instead sends the null to the schema, which refuses it where the field is not nullable
/// (`spec.credential ... must be of type object: "null"`). The objects are sent as Argo CD
/// would send them: without their nulls, unless they are applied server-side.
fn drop_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(drop_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

fn subject(r: &Resource) -> String {
    let name = if r.name.is_empty() {
        format!("{}*", r.generate_name.as_deref().unwrap_or(""))
    } else {
        r.name.clone()
    };
    match &r.namespace {
        Some(ns) => format!("{} {ns}/{name}", r.kind),
        None => format!("{} {name}", r.kind),
    }
}

/// Why a dry-run gave no stored form.
enum Refused {
    /// The object itself is invalid.
    Object(Refusal),
    /// The request failed for a reason outside the object.
    Request(String),
}

fn refusal(e: &kube::Error, ns: Option<&str>) -> Refused {
    if let kube::Error::Api(s) = e
        && (s.code == 422 || (s.code == 400 && s.reason == "BadRequest"))
    {
        return Refused::Object(Refusal {
            code: s.code,
            reason: s.reason.clone(),
            message: s.message.clone(),
            causes: s
                .details
                .as_ref()
                .map(|d| {
                    d.causes
                        .iter()
                        .map(|c| Cause {
                            reason: c.reason.clone(),
                            message: c.message.clone(),
                            field: c.field.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
    Refused::Request(match e {
        kube::Error::Api(s)
            if s.code == 404 && ns.is_some() && s.message.contains("namespaces") =>
        {
            format!(
                "namespace {} does not exist, and a dry-run cannot create it (Argo CD's CreateNamespace would): create it or pass an existing --dest-namespace",
                ns.unwrap_or_default()
            )
        }
        kube::Error::Api(s) => format!("refused ({} {}): {}", s.code, s.reason, s.message),
        other => format!("the dry-run failed: {other}"),
    })
}

/// Starts at most `qps` requests per second, shared by every task.
struct Pacer {
    interval: Duration,
    next: Mutex<tokio::time::Instant>,
}

impl Pacer {
    fn new(qps: f64) -> Self {
        let qps = if qps.is_finite() && qps > 0.0 {
            qps
        } else {
            1.0
        };
        Self {
            interval: Duration::from_secs_f64(1.0 / qps),
            next: Mutex::new(tokio::time::Instant::now()),
        }
    }

    async fn wait(&self) {
        let at = {
            let mut next = self.next.lock().await;
            let now = tokio::time::Instant::now();
            let at = (*next).max(now);
            *next = at + self.interval;
            at
        };
        tokio::time::sleep_until(at).await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn nulls_are_dropped_at_every_depth_and_list_items_kept() {
        let mut v = serde_json::json!({"spec": {"credential": null, "ports": [{"nodePort": null, "port": 80}, null],
                                                "provider": "aws"}});
        drop_nulls(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"spec": {"ports": [{"port": 80}, null], "provider": "aws"}})
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_pacer_spaces_requests_by_one_over_qps() {
        let pacer = Pacer::new(4.0);
        let start = tokio::time::Instant::now();
        for _ in 0..5 {
            pacer.wait().await;
        }
        // The first starts at once, the fifth a second later.
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        // A nonsense rate falls back to one per second rather than spinning or dividing by 0.
        let slow = Pacer::new(0.0);
        let start = tokio::time::Instant::now();
        slow.wait().await;
        slow.wait().await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }
}
