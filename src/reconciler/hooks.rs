//! SG503 — accumulated hooks: completed hook Jobs/Pods an Application leaves behind.
//!
//! A hook named by `generateName` gets a new name on every sync, so the default
//! `BeforeHookCreation` policy never finds the previous one to delete, and hooks are never
//! pruned (reference spec §6.1). Without `HookSucceeded`/`HookFailed` (or a Job TTL) every sync
//! leaves one more object behind. SG109 warns about the manifest; this rule counts what is
//! actually there.

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams};
use serde_json::Value;
use time::OffsetDateTime;

use super::application::Application;
use super::budget::ApiBudget;
use super::diagnosis::{HOOK_ACCUMULATION, LiveFinding};
use super::error::{Error, Result};

const HOOK: &str = "argocd.argoproj.io/hook";
const DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
const HELM_HOOK: &str = "helm.sh/hook";
const HELM_DELETE_POLICY: &str = "helm.sh/hook-delete-policy";
const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// A completed hook object of some Application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookObject {
    /// `Job` or `Pod`.
    pub kind: &'static str,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.generateName`, when the hook was named that way.
    pub generate_name: Option<String>,
    /// When it was created.
    pub created: Option<OffsetDateTime>,
    /// Whether it succeeded (else it failed).
    pub succeeded: bool,
    /// Nothing will ever delete it: no delete policy for its outcome, no Job TTL.
    pub left_behind: bool,
}

/// The namespaces where the app's hooks can live: the destination and every namespace its
/// hooks were applied to.
pub fn namespaces(app: &Application) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = Some(app.destination_namespace.clone())
        .filter(|d| !d.is_empty())
        .into_iter()
        .collect();
    if let Some(op) = &app.status.operation {
        out.extend(
            op.results
                .iter()
                .filter(|r| r.hook_type.is_some() && !r.namespace.is_empty())
                .map(|r| r.namespace.clone()),
        );
    }
    out.extend(
        app.status
            .resources
            .iter()
            .filter(|r| r.hook && !r.namespace.is_empty())
            .map(|r| r.namespace.clone()),
    );
    out
}

/// Whether the object belongs to `app`: its tracking id (annotation tracking, Argo CD 3.x's
/// default) or instance label names the app. The instance name is `<name>`, or
/// `<namespace>_<name>` for Applications outside the control-plane namespace; both are
/// accepted since syncguard does not know which namespace that is.
pub fn belongs_to(meta: &ObjectMeta, app: &Application) -> bool {
    let qualified = format!("{}_{}", app.namespace, app.name);
    let is_app = |s: &str| s == app.name || s == qualified;
    let tracked = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(TRACKING_ID))
        .and_then(|id| id.split(':').next())
        .is_some_and(is_app);
    tracked
        || meta
            .labels
            .as_ref()
            .and_then(|l| l.get(INSTANCE_LABEL))
            .is_some_and(|v| is_app(v))
}

/// (is a hook that runs in a sync, has HookSucceeded, has HookFailed), Helm's policies mapped.
fn policies(meta: &ObjectMeta) -> (bool, bool, bool) {
    let annotations = meta.annotations.as_ref();
    let get = |k: &str| annotations.and_then(|a| a.get(k)).map(String::as_str);
    let hook = get(HOOK).is_some_and(|h| !h.trim().is_empty() && h.trim() != "Skip")
        || get(HELM_HOOK).is_some_and(|h| !h.trim().is_empty());
    let csv = |k: &str| -> Vec<String> {
        get(k)
            .map(|v| v.split(',').map(|p| p.trim().to_string()).collect())
            .unwrap_or_default()
    };
    let mut all = csv(DELETE_POLICY);
    all.extend(
        csv(HELM_DELETE_POLICY)
            .into_iter()
            .map(|p| match p.as_str() {
                "hook-succeeded" => "HookSucceeded".to_string(),
                "hook-failed" => "HookFailed".to_string(),
                "before-hook-creation" => "BeforeHookCreation".to_string(),
                _ => p,
            }),
    );
    let has = |p: &str| all.iter().any(|x| x == p);
    (hook, has("HookSucceeded"), has("HookFailed"))
}

fn created(meta: &ObjectMeta) -> Option<OffsetDateTime> {
    meta.creation_timestamp
        .as_ref()
        .and_then(|t| OffsetDateTime::from_unix_timestamp_nanos(t.0.as_nanosecond()).ok())
}

fn hook_object(
    kind: &'static str,
    meta: &ObjectMeta,
    succeeded: bool,
    ttl: bool,
) -> Option<HookObject> {
    let (is_hook, on_success, on_failure) = policies(meta);
    if !is_hook {
        return None;
    }
    let cleaned = ttl || (succeeded && on_success) || (!succeeded && on_failure);
    let generate_name = meta.generate_name.clone().filter(|g| !g.is_empty());
    Some(HookObject {
        kind,
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        left_behind: generate_name.is_some() && !cleaned,
        generate_name,
        created: created(meta),
        succeeded,
    })
}

/// A completed hook Job of `app` (`Complete` or `Failed` condition), else `None`.
pub fn from_job(job: &Job, app: &Application) -> Option<HookObject> {
    if !belongs_to(&job.metadata, app) {
        return None;
    }
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    let done = |t: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == t && c.status == "True")
    };
    let succeeded = done("Complete");
    if !succeeded && !done("Failed") {
        return None;
    }
    let ttl = job
        .spec
        .as_ref()
        .is_some_and(|s| s.ttl_seconds_after_finished.is_some());
    hook_object("Job", &job.metadata, succeeded, ttl)
}

/// A completed bare hook Pod of `app` (`Succeeded`/`Failed`); pods of Jobs are counted through
/// their Job.
pub fn from_pod(pod: &Pod, app: &Application) -> Option<HookObject> {
    let owned_by_job = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "Job");
    if owned_by_job || !belongs_to(&pod.metadata, app) {
        return None;
    }
    let phase = pod.status.as_ref()?.phase.as_deref()?;
    if phase != "Succeeded" && phase != "Failed" {
        return None;
    }
    hook_object("Pod", &pod.metadata, phase == "Succeeded", false)
}

/// The completed-or-not hook Jobs and bare hook Pods of the whole cluster as the last audit
/// pass listed them (the audit lists every Job and Pod anyway, page by page), by namespace.
/// SG503 counts from it instead of two `LIST`s per Application: at 10,000 Applications that is
/// 20,000 requests saved on every start and every lease won.
#[derive(Debug, Clone, Default)]
pub struct HookInventory {
    /// When the listing was made.
    pub taken_at: Option<OffsetDateTime>,
    jobs: HashMap<String, Vec<Job>>,
    pods: HashMap<String, Vec<Pod>>,
}

impl HookInventory {
    /// An empty inventory taken at `at`.
    pub fn new(at: OffsetDateTime) -> Self {
        Self {
            taken_at: Some(at),
            ..Self::default()
        }
    }

    /// Keeps `value` (a listed Job or Pod as JSON) if it is a hook; other objects are dropped
    /// unread, so the inventory holds hooks only.
    pub fn add(&mut self, kind: &str, value: &Value) {
        let annotations = value.pointer("/metadata/annotations");
        let is_hook = [HOOK, HELM_HOOK]
            .iter()
            .any(|k| annotations.and_then(|a| a.get(*k)).is_some());
        let Some(ns) = value.pointer("/metadata/namespace").and_then(Value::as_str) else {
            return;
        };
        if !is_hook {
            return;
        }
        match kind {
            "Job" => {
                if let Ok(job) = serde_json::from_value::<Job>(value.clone()) {
                    self.jobs.entry(ns.to_string()).or_default().push(job);
                }
            }
            "Pod" => {
                if let Ok(pod) = serde_json::from_value::<Pod>(value.clone()) {
                    self.pods.entry(ns.to_string()).or_default().push(pod);
                }
            }
            _ => {}
        }
    }

    /// The completed hooks of `app`, as [`fetch`] would return them.
    pub fn hooks_of(&self, app: &Application) -> Vec<HookObject> {
        let mut out = Vec::new();
        for ns in namespaces(app) {
            let jobs = self.jobs.get(&ns).into_iter().flatten();
            out.extend(jobs.filter_map(|j| from_job(j, app)));
            let pods = self.pods.get(&ns).into_iter().flatten();
            out.extend(pods.filter_map(|p| from_pod(p, app)));
        }
        out
    }

    /// Number of hook objects held.
    pub fn len(&self) -> usize {
        self.jobs.values().map(Vec::len).sum::<usize>()
            + self.pods.values().map(Vec::len).sum::<usize>()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The latest [`HookInventory`], shared by the audit (writer) and the controller (reader).
#[derive(Debug, Default)]
pub struct SharedHooks {
    /// The last audit pass's inventory.
    pub current: arc_swap::ArcSwapOption<HookInventory>,
    /// Set by the audit task when it starts: SG503 may then wait for its first pass instead of
    /// listing per Application.
    pub audit_running: std::sync::atomic::AtomicBool,
}

/// Lists Jobs and Pods in each of the app's hook namespaces (two `LIST`s per namespace) and
/// keeps the app's completed hooks.
pub async fn fetch(
    client: &kube::Client,
    budget: &ApiBudget,
    app: &Application,
) -> Result<Vec<HookObject>> {
    let mut out = Vec::new();
    for ns in namespaces(app) {
        let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
        budget.acquire().await;
        let list = jobs
            .list(&ListParams::default())
            .await
            .map_err(|e| Error::kube(format!("list jobs in {ns}"), e))?;
        out.extend(list.items.iter().filter_map(|j| from_job(j, app)));
        let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
        budget.acquire().await;
        let list = pods
            .list(&ListParams::default())
            .await
            .map_err(|e| Error::kube(format!("list pods in {ns}"), e))?;
        out.extend(list.items.iter().filter_map(|p| from_pod(p, app)));
    }
    Ok(out)
}

fn day(t: Option<OffsetDateTime>) -> String {
    t.map(|t| t.date().to_string())
        .unwrap_or_else(|| "an unknown date".into())
}

/// SG503 over data: more left-behind hooks than `threshold`.
pub fn diagnose(app: &Application, hooks: &[HookObject], threshold: usize) -> Option<LiveFinding> {
    let mut left: Vec<&HookObject> = hooks.iter().filter(|h| h.left_behind).collect();
    if left.len() <= threshold {
        return None;
    }
    left.sort_by_key(|h| h.created);
    let (oldest, newest) = (left.first()?, left.last()?);
    let jobs = left.iter().filter(|h| h.kind == "Job").count();
    let pods = left.len() - jobs;
    let mut kinds = Vec::new();
    if jobs > 0 {
        kinds.push(format!("{jobs} Job{}", if jobs == 1 { "" } else { "s" }));
    }
    if pods > 0 {
        kinds.push(format!("{pods} Pod{}", if pods == 1 { "" } else { "s" }));
    }
    let prefixes: BTreeSet<String> = left
        .iter()
        .filter_map(|h| {
            let g = h.generate_name.as_ref()?;
            Some(format!("{}/{g}*", h.namespace))
        })
        .collect();
    let shown: Vec<&str> = prefixes.iter().map(String::as_str).take(3).collect();
    let more = prefixes.len().saturating_sub(shown.len());
    let message = format!(
        "Application {} has left {} completed hook objects behind ({}; {}{}), oldest {}/{} from \
         {}, newest {}/{} from {}: they were named by generateName and no delete policy \
         removes them.",
        app.display_name(),
        left.len(),
        kinds.join(", "),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
        oldest.namespace,
        oldest.name,
        day(oldest.created),
        newest.namespace,
        newest.name,
        day(newest.created),
    );
    let fix = "Add argocd.argoproj.io/hook-delete-policy: BeforeHookCreation,HookSucceeded to \
               these hooks (failed runs stay for debugging), or spec.ttlSecondsAfterFinished to \
               hook Jobs; then delete the old ones."
        .to_string();
    Some(LiveFinding {
        rule: HOOK_ACCUMULATION,
        message,
        fix,
        snippet: Some(
            "metadata:\n  annotations:\n    argocd.argoproj.io/hook-delete-policy: \
             BeforeHookCreation,HookSucceeded\n"
                .to_string(),
        ),
        fingerprint: format!(
            "{}|{}",
            HOOK_ACCUMULATION.id,
            prefixes.into_iter().collect::<Vec<_>>().join(",")
        ),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use crate::reconciler::fixtures::AppBuilder;
    use serde_json::{Value, json};

    /// A completed hook Job of app `shop` named by generateName.
    pub(crate) fn hook_job_json(name: &str, day: u32, annotations: Value, ttl: bool) -> Value {
        let mut a = json!({"argocd.argoproj.io/hook": "PostSync",
                           "argocd.argoproj.io/tracking-id": "shop:batch/Job:shop/smoke"});
        for (k, v) in annotations.as_object().unwrap() {
            a[k] = v.clone();
        }
        let mut job = json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "generateName": "smoke-", "namespace": "shop",
                         "creationTimestamp": format!("2026-11-{day:02}T10:00:00Z"), "annotations": a},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": []}}},
            "status": {"conditions": [{"type": "Complete", "status": "True"}], "succeeded": 1}
        });
        if ttl {
            job["spec"]["ttlSecondsAfterFinished"] = json!(600);
        }
        job
    }

    fn job(v: Value) -> Job {
        serde_json::from_value(v).unwrap()
    }

    fn shop() -> Application {
        AppBuilder::new("shop").destination("shop").live()
    }

    #[test]
    fn only_completed_generate_name_hooks_without_cleanup_count() {
        let app = shop();
        let left = from_job(&job(hook_job_json("smoke-a", 1, json!({}), false)), &app).unwrap();
        assert!(left.left_behind);
        let cleaned = from_job(
            &job(hook_job_json(
                "smoke-b",
                2,
                json!({"argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}),
                false,
            )),
            &app,
        )
        .unwrap();
        assert!(!cleaned.left_behind);
        let helm_cleaned = from_job(
            &job(hook_job_json(
                "smoke-c",
                3,
                json!({"helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded"}),
                false,
            )),
            &app,
        )
        .unwrap();
        assert!(!helm_cleaned.left_behind);
        let ttl = from_job(&job(hook_job_json("smoke-d", 4, json!({}), true)), &app).unwrap();
        assert!(!ttl.left_behind);

        let mut running = hook_job_json("smoke-e", 5, json!({}), false);
        running["status"] = json!({"active": 1});
        assert!(from_job(&job(running), &app).is_none());
        let other_app = AppBuilder::new("billing").destination("shop").live();
        assert!(
            from_job(
                &job(hook_job_json("smoke-f", 6, json!({}), false)),
                &other_app
            )
            .is_none()
        );
    }

    #[test]
    fn more_leftovers_than_the_threshold_are_reported_with_oldest_and_newest() {
        let app = shop();
        let hooks: Vec<HookObject> = (1..=11)
            .map(|d| {
                from_job(
                    &job(hook_job_json(&format!("smoke-{d:02}"), d, json!({}), false)),
                    &app,
                )
                .unwrap()
            })
            .collect();
        assert!(
            diagnose(&app, &hooks[..10], 10).is_none(),
            "10 is not above a threshold of 10"
        );
        let f = diagnose(&app, &hooks, 10).unwrap();
        assert_eq!(f.rule.id, "SG503");
        assert_eq!(
            f.message,
            "Application argocd/shop has left 11 completed hook objects behind (11 Jobs; \
             shop/smoke-*), oldest shop/smoke-01 from 2026-11-01, newest shop/smoke-11 from \
             2026-11-11: they were named by generateName and no delete policy removes them."
        );
        assert!(f.fix.contains("BeforeHookCreation,HookSucceeded"));
        assert!(f.fix.contains("ttlSecondsAfterFinished"));
    }
}
