//! The background audit: evaluate the current policies over live objects and publish the
//! findings as one report per namespace (a PolicyReport, an OpenReports Report, or both:
//! `--report-api`).
//!
//! Objects admitted before a rule existed (or while the webhook was down, or failing open) must
//! still be reported, and policies change. So every `audit_interval`, and whenever the policy
//! set changes, the leader:
//!
//! 1. lists the kinds the rules judge or resolve references against ([`AUDIT_KINDS`]),
//!    paginated; Secrets only through the metadata API (their data never leaves the API
//!    server); a kind whose API is not served (404) is skipped;
//! 2. groups the objects by owning Argo CD Application (tracking id, instance label or
//!    `status.resources` membership) and adds a stand-in for every object the Application lists
//!    that was not listed live (an ExternalSecret, any custom resource), so the plan places it
//!    at its phase and wave; objects of no Application are grouped per namespace;
//! 3. evaluates each group with the same pipeline as `syncguard check` (`Source::Audit`), with
//!    references that are not in the group but exist live resolved as `"resolution": "live"`
//!    (so SG201 does not report a Secret created by hand as missing);
//! 4. renders one bounded report per namespace and selected report API and writes only those
//!    that changed ([`super::report`]).
//!
//! Objects with a controller owner (Pods of ReplicaSets, Jobs of CronJobs, Secrets of
//! ExternalSecrets) are reference targets only: Argo CD never applies them, their owner is
//! judged instead. Findings about cluster-scoped objects are not reported (a PolicyReport or
//! Report is namespaced; a ClusterPolicyReport or ClusterReport is not written yet).

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;
use std::time::Instant;

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::ApiResource;
use serde_json::{Value, json};
use thiserror::Error;
use tokio::sync::watch;

use super::application;
use super::context::{Config, Context};
use super::hooks::HookInventory;
use super::install::{self, Installation};
use super::live::{AppEntry, AppIndex, LiveObject, adopt, key_of};
use super::report::{ReportError, WriteSummary, write_selected};
use crate::evaluate::{EvaluateOptions, Source, build_inputs};
use crate::finding::{Finding, ResourceRef, Status};
use crate::metrics::OutcomeLabels;
use crate::model::Resource;
use crate::output::policy_report::{RenderedReport, ReportApi, render_report};
use crate::plan::ObjectKey;
use crate::policy::PolicySet;

/// Objects per list page: large enough that a typical namespace is one request, small enough
/// that one page of Deployments stays well under the API server's response limits.
pub const PAGE_SIZE: u32 = 500;

/// How long a pass waits for the controller's first list of Applications before it lists
/// them itself.
const APPLICATIONS_PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// One kind the audit lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditKind {
    /// API group (empty for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Resource name in URLs.
    pub plural: &'static str,
    /// Namespaced (listed per audited namespace or cluster-wide) or cluster-scoped.
    pub namespaced: bool,
    /// Listed through the metadata API only (Secrets: the audit needs to know they exist, never
    /// what they contain).
    pub metadata_only: bool,
}

impl AuditKind {
    const fn namespaced(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        Self {
            group,
            version,
            kind,
            plural,
            namespaced: true,
            metadata_only: false,
        }
    }

    /// `group/version` (or `version` for core).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The kube `ApiResource` for dynamic requests.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.to_string(),
            version: self.version.to_string(),
            api_version: self.api_version(),
            kind: self.kind.to_string(),
            plural: self.plural.to_string(),
        }
    }

    /// `plural.group`, for messages.
    pub fn display(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// Argo CD Applications: the owners, and objects rules judge (SG303).
pub const APPLICATIONS: AuditKind = AuditKind::namespaced(
    super::application::GROUP,
    super::application::VERSION,
    super::application::KIND,
    "applications",
);

/// The kinds the rules judge or resolve references against, in listing order.
pub const AUDIT_KINDS: [AuditKind; 16] = [
    AuditKind::namespaced("", "v1", "Pod", "pods"),
    AuditKind::namespaced("", "v1", "Service", "services"),
    AuditKind::namespaced("", "v1", "ConfigMap", "configmaps"),
    AuditKind::namespaced("", "v1", "ServiceAccount", "serviceaccounts"),
    AuditKind::namespaced("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
    AuditKind {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        namespaced: false,
        metadata_only: false,
    },
    AuditKind {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
        namespaced: true,
        metadata_only: true,
    },
    AuditKind::namespaced("apps", "v1", "Deployment", "deployments"),
    AuditKind::namespaced("apps", "v1", "StatefulSet", "statefulsets"),
    AuditKind::namespaced("apps", "v1", "DaemonSet", "daemonsets"),
    AuditKind::namespaced("batch", "v1", "Job", "jobs"),
    AuditKind::namespaced("batch", "v1", "CronJob", "cronjobs"),
    AuditKind::namespaced(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
    ),
    AuditKind::namespaced("networking.k8s.io", "v1", "Ingress", "ingresses"),
    AuditKind {
        group: "apiextensions.k8s.io",
        version: "v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        namespaced: false,
        metadata_only: false,
    },
    APPLICATIONS,
];

/// Why an audit pass failed.
#[derive(Debug, Error)]
pub enum AuditError {
    /// Listing a kind failed (other than "not served").
    #[error("cannot list {kind}: {source}")]
    List {
        /// `plural.group`.
        kind: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Writing the reports failed.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The evaluation task panicked.
    #[error("the audit evaluation failed: {0}")]
    Task(String),
}

impl AuditError {
    /// A short, fixed label for logs and metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            AuditError::List { .. } => "list",
            AuditError::Report(_) => "report",
            AuditError::Task(_) => "task",
        }
    }
}

/// Everything listed from the cluster for one pass.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Every listed object (Applications included).
    pub objects: Vec<LiveObject>,
    /// The Applications, read for the [`AppIndex`] as they were listed (one typed view each;
    /// the JSON is not kept).
    pub applications: Vec<Arc<AppEntry>>,
    /// Kinds skipped because the API server does not serve them (`plural.group`).
    pub skipped_kinds: Vec<String>,
    /// The Argo CD release and configuration read from the cluster.
    pub installation: Installation,
    /// The hook Jobs and Pods among the listed objects (before their status is dropped).
    pub hooks: HookInventory,
}

/// What one evaluation of an [`Inventory`] found.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// Findings per namespace (of the judged object), namespaces in order.
    pub by_namespace: BTreeMap<String, Vec<Finding>>,
    /// Object uids, for the reports' object references.
    pub uids: HashMap<ObjectKey, String>,
    /// Objects judged.
    pub evaluated: usize,
    /// Applications whose objects were judged together.
    pub applications: usize,
}

impl Evaluation {
    /// Renders one bounded report of `api` per namespace with findings.
    pub fn reports(&self, api: ReportApi, max_results: usize) -> Vec<RenderedReport> {
        self.by_namespace
            .iter()
            .map(|(ns, findings)| {
                let refs: Vec<&Finding> = findings.iter().collect();
                render_report(api, ns, &refs, max_results, |r| self.uid_of(r))
            })
            .collect()
    }

    fn uid_of(&self, r: &ResourceRef) -> Option<String> {
        let key = ObjectKey::new(
            &r.group,
            &r.kind,
            r.namespace.as_deref().unwrap_or_default(),
            &r.name,
        );
        self.uids.get(&key).cloned()
    }

    /// Every open finding's identity (rule, object, message) with its rule: what the audit
    /// compares between passes to count new findings.
    pub fn open_keys(&self) -> Vec<(u64, String)> {
        self.by_namespace
            .values()
            .flatten()
            .filter(|f| f.status == Status::Open)
            .map(|f| {
                let mut hasher = std::hash::DefaultHasher::new();
                (
                    f.rule_id.as_str(),
                    &f.resource.group,
                    &f.resource.kind,
                    &f.resource.namespace,
                    &f.resource.name,
                    &f.message,
                )
                    .hash(&mut hasher);
                (hasher.finish(), f.rule_id.to_string())
            })
            .collect()
    }

    /// Open findings per rule.
    pub fn open_by_rule(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for f in self.by_namespace.values().flatten() {
            if f.status == Status::Open {
                *out.entry(f.rule_id.to_string()).or_insert(0) += 1;
            }
        }
        out
    }
}

/// The outcome of one audit pass.
#[derive(Debug, Clone, Default)]
pub struct AuditSummary {
    /// Objects listed.
    pub objects: usize,
    /// Objects judged.
    pub evaluated: usize,
    /// Applications known.
    pub applications: usize,
    /// Findings (before the report cap).
    pub findings: usize,
    /// Open findings per rule.
    pub open_by_rule: BTreeMap<String, usize>,
    /// Identity and rule of every open finding ([`Evaluation::open_keys`]).
    pub open_keys: Vec<(u64, String)>,
    /// Results left out of reports by the cap, over all namespaces.
    pub results_dropped: usize,
    /// What happened to each report.
    pub writes: WriteSummary,
    /// Kinds skipped because they are not served.
    pub skipped_kinds: Vec<String>,
    /// The hook Jobs and Pods listed in this pass.
    pub hooks: Arc<HookInventory>,
}

/// Runs the audit until the process ends: once at start, then every `audit_interval` and
/// whenever `policy_changed` changes (the reload bumps a generation). Only the leader audits:
/// a replica that is not leader counts the pass as `skipped` and waits for the next one. A
/// failed pass is logged and counted; the next one starts on schedule. Spawn it from the
/// reconciler runner.
pub async fn run(ctx: Arc<Context>, mut policy_changed: watch::Receiver<u64>) {
    // SG503 may now wait for this task's hook inventory instead of listing per Application.
    ctx.hooks
        .audit_running
        .store(true, std::sync::atomic::Ordering::Release);
    let mut interval = tokio::time::interval(ctx.config.audit_interval);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut leader = ctx.leader.clone();
    let (mut policy_open, mut leader_open) = (true, true);
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            changed = policy_changed.changed(), if policy_open => {
                if changed.is_err() {
                    // The policy watcher is gone: audit on the interval alone.
                    policy_open = false;
                    continue;
                }
                tracing::info!(generation = *policy_changed.borrow(), "policies changed: auditing again");
                interval.reset();
            }
            changed = leader.changed(), if leader_open => {
                if changed.is_err() {
                    leader_open = false;
                    continue;
                }
                // A new leader audits at once instead of waiting out the interval.
                if !*leader.borrow() {
                    continue;
                }
                interval.reset();
            }
        }
        audit_and_record(&ctx).await;
    }
}

/// One pass with metrics and logs; used by [`run`].
pub async fn audit_and_record(ctx: &Context) {
    let metrics = &ctx.metrics;
    if !ctx.is_leader() {
        metrics
            .audits
            .get_or_create(&OutcomeLabels { outcome: "skipped" })
            .inc();
        return;
    }
    let started = Instant::now();
    let policies = ctx.policies.load_full();
    // The controller's watch already holds every Application: at 10,000 Applications listing
    // them again was 200 MB of JSON per pass and a second copy in memory. Its first list may
    // still be running when the first pass starts (on winning the Lease): wait for it.
    let applications = ctx.applications.entries(APPLICATIONS_PATIENCE).await;
    let result = audit_once_with(&ctx.client, &ctx.config, policies, applications).await;
    metrics
        .audit_seconds
        .observe(started.elapsed().as_secs_f64());
    match result {
        Ok(summary) => {
            metrics
                .audits
                .get_or_create(&OutcomeLabels { outcome: "ok" })
                .inc();
            record_writes(ctx, &summary.writes);
            ctx.hooks.current.store(Some(summary.hooks.clone()));
            metrics
                .report_results_dropped
                .set(i64::try_from(summary.results_dropped).unwrap_or(i64::MAX));
            // Not `open_findings.clear()`: the family also holds the Application diagnosis'
            // open SG501–SG503, which a pass must not wipe.
            metrics.set_audit_open(&summary.open_by_rule);
            metrics.count_new_audit(&summary.open_keys);
            tracing::info!(
                objects = summary.objects,
                evaluated = summary.evaluated,
                applications = summary.applications,
                findings = summary.findings,
                results_dropped = summary.results_dropped,
                applied = summary.writes.applied,
                unchanged = summary.writes.unchanged,
                deleted = summary.writes.deleted,
                skipped_kinds = ?summary.skipped_kinds,
                seconds = started.elapsed().as_secs_f64(),
                "audit finished"
            );
        }
        Err(error) => {
            metrics
                .audits
                .get_or_create(&OutcomeLabels { outcome: "error" })
                .inc();
            if let AuditError::Report(ReportError::Writes { summary, .. }) = &error {
                record_writes(ctx, summary);
            }
            tracing::warn!(%error, reason = error.metric_label(), "audit failed");
        }
    }
}

fn record_writes(ctx: &Context, writes: &WriteSummary) {
    for (outcome, n) in [
        ("applied", writes.applied),
        ("unchanged", writes.unchanged),
        ("deleted", writes.deleted),
        ("failed", writes.failed),
    ] {
        if n > 0 {
            ctx.metrics
                .report_writes
                .get_or_create(&OutcomeLabels { outcome })
                .inc_by(n as u64);
        }
    }
}

/// One audit pass: list, evaluate, write the reports. Does not check leadership (the caller
/// does) and records no metrics (the summary says everything).
pub async fn audit_once(
    client: &Client,
    config: &Config,
    policies: Arc<PolicySet>,
) -> Result<AuditSummary, AuditError> {
    audit_once_with(client, config, policies, None).await
}

/// [`audit_once`] with the Applications already read (the controller's watch, see
/// [`super::cached::SharedApplications`]); `None` lists them.
pub async fn audit_once_with(
    client: &Client,
    config: &Config,
    policies: Arc<PolicySet>,
    applications: Option<Vec<Arc<AppEntry>>>,
) -> Result<AuditSummary, AuditError> {
    let mut inventory = list_inventory(client, config, applications).await?;
    let objects = inventory.objects.len();
    let skipped_kinds = inventory.skipped_kinds.clone();
    let hooks = Arc::new(std::mem::take(&mut inventory.hooks));
    let audit_config = config.clone();
    // Evaluation and rendering are CPU-bound (rayon inside): keep them off the async threads.
    let (evaluation, mut reports) = tokio::task::spawn_blocking(move || {
        let evaluation = evaluate_inventory(&inventory, &audit_config, &policies);
        let reports: BTreeMap<ReportApi, Vec<RenderedReport>> = audit_config
            .report_apis
            .apis()
            .iter()
            .map(|&api| {
                (
                    api,
                    evaluation.reports(api, audit_config.report_max_results),
                )
            })
            .collect();
        (evaluation, reports)
    })
    .await
    .map_err(|e| AuditError::Task(e.to_string()))?;
    // Every API gets the same results, so as many are left out of each: count one API's.
    let results_dropped = reports
        .values()
        .next()
        .map_or(0, |rs| rs.iter().map(|r| r.omitted).sum());
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let render = |api| reports.remove(&api).unwrap_or_default();
    let writes = write_selected(client, config, render, now).await?;
    Ok(AuditSummary {
        objects,
        evaluated: evaluation.evaluated,
        applications: evaluation.applications,
        findings: evaluation.by_namespace.values().map(Vec::len).sum(),
        open_by_rule: evaluation.open_by_rule(),
        open_keys: evaluation.open_keys(),
        results_dropped,
        writes,
        skipped_kinds,
        hooks,
    })
}

/// Whether objects of `namespace` are audited.
pub fn namespace_in_scope(config: &Config, namespace: &str) -> bool {
    if config.audit_namespaces.is_empty() {
        !config
            .audit_exclude_namespaces
            .iter()
            .any(|n| n == namespace)
    } else {
        config.audit_namespaces.iter().any(|n| n == namespace)
    }
}

/// Lists every [`AUDIT_KINDS`] kind: per audited namespace when `audit_namespaces` is set, else
/// cluster-wide (excluded namespaces are filtered afterwards: one list beats one per
/// namespace). Applications come from `app_namespaces` when set, whatever the audit scope: an
/// object's owner may live in a namespace that is not audited (usually `argocd`).
pub async fn list_inventory(
    client: &Client,
    config: &Config,
    applications: Option<Vec<Arc<AppEntry>>>,
) -> Result<Inventory, AuditError> {
    let mut inventory = Inventory {
        installation: install::read(client, &config.argocd_namespace).await,
        hooks: HookInventory::new(time::OffsetDateTime::now_utc()),
        ..Inventory::default()
    };
    let watched = applications.is_some();
    if let Some(entries) = applications {
        inventory
            .objects
            .extend(entries.iter().map(|e| application_object(e)));
        inventory.applications = entries;
    }
    for kind in AUDIT_KINDS {
        if watched && kind == APPLICATIONS {
            continue;
        }
        let scopes: Vec<Option<&str>> = if !kind.namespaced {
            vec![None]
        } else if kind == APPLICATIONS && !config.app_namespaces.is_empty() {
            config
                .app_namespaces
                .iter()
                .map(|n| Some(n.as_str()))
                .collect()
        } else if kind != APPLICATIONS && !config.audit_namespaces.is_empty() {
            config
                .audit_namespaces
                .iter()
                .map(|n| Some(n.as_str()))
                .collect()
        } else {
            vec![None]
        };
        let mut values = Vec::new();
        let mut served = true;
        for scope in scopes {
            match list_kind(client, &kind, scope).await {
                Ok(mut page) => values.append(&mut page),
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    served = false;
                    break;
                }
                Err(source) => {
                    return Err(AuditError::List {
                        kind: kind.display(),
                        source,
                    });
                }
            }
        }
        if !served {
            tracing::debug!(kind = %kind.display(), "not served by this cluster; skipped");
            inventory.skipped_kinds.push(kind.display());
            continue;
        }
        for value in values {
            let keep = kind == APPLICATIONS
                || !kind.namespaced
                || value
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .is_some_and(|ns| namespace_in_scope(config, ns));
            if !keep {
                continue;
            }
            if (kind.group == "batch" && kind.kind == "Job")
                || (kind.group.is_empty() && kind.kind == "Pod")
            {
                inventory.hooks.add(kind.kind, &value);
            }
            if kind == APPLICATIONS
                && let Some(entry) = AppEntry::from_value(&value)
            {
                // Already pruned page by page (list_kind); the object view drops the status.
                inventory.applications.push(Arc::new(entry));
            }
            if let Ok(object) = LiveObject::from_value(value) {
                inventory.objects.push(object);
            }
        }
    }
    Ok(inventory)
}

/// The Application itself as a judged object (SG303 and the app-level rules read its
/// metadata and spec), as [`LiveObject::from_value`] makes it from a listed Application.
fn application_object(entry: &AppEntry) -> LiveObject {
    let controlled = entry
        .application
        .raw
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|owners| {
            owners
                .iter()
                .any(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        });
    LiveObject {
        resource: entry.application.clone(),
        uid: entry.live.uid.clone(),
        controlled,
    }
}

/// All objects of one kind in one scope, page by page, as JSON with `apiVersion`/`kind` set
/// (list items from the API server usually omit them).
async fn list_kind(
    client: &Client,
    kind: &AuditKind,
    namespace: Option<&str>,
) -> Result<Vec<Value>, kube::Error> {
    let resource = kind.api_resource();
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let mut out = Vec::new();
    let mut params = ListParams::default().limit(PAGE_SIZE);
    loop {
        let continue_token = if kind.metadata_only {
            let page = api.list_metadata(&params).await?;
            out.extend(page.items.into_iter().filter_map(|item| {
                let metadata = serde_json::to_value(item.metadata).ok()?;
                Some(json!({"apiVersion": kind.api_version(), "kind": kind.kind, "metadata": metadata}))
            }));
            page.metadata.continue_
        } else {
            let page = api.list(&params).await?;
            out.extend(page.items.into_iter().filter_map(|item| {
                let mut value = serde_json::to_value(item).ok()?;
                if let Some(obj) = value.as_object_mut() {
                    obj.insert("apiVersion".into(), Value::from(kind.api_version()));
                    obj.insert("kind".into(), Value::from(kind.kind));
                }
                // Applications are most of the listed bytes at scale (20 KiB each with
                // history and sync results); keep only what the index reads, page by page,
                // so a pass never holds every full Application at once.
                if *kind == APPLICATIONS {
                    application::prune_value(&mut value, application::Keep::Index);
                }
                Some(value)
            }));
            page.metadata.continue_
        };
        match continue_token.filter(|t| !t.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(out),
        }
    }
}

/// One set of objects judged together: an Application's objects (plus stand-ins and the
/// Application object, as context only), or the untracked objects of one namespace.
struct Group {
    /// The owning Application's name, if any.
    app: Option<String>,
    /// Destination namespace for objects without one.
    destination: Option<String>,
    /// (object, judged?) — stand-ins and context objects are not judged.
    members: Vec<(Resource, bool)>,
}

/// Evaluates an inventory: the pure, CPU-bound part of an audit (no API calls).
pub fn evaluate_inventory(
    inventory: &Inventory,
    config: &Config,
    policies: &PolicySet,
) -> Evaluation {
    let index = AppIndex::from_entries(inventory.applications.clone());
    // config.yaml pins the release when it names one; else the cluster's controller says.
    let argocd = policies
        .config()
        .argocd_version
        .or(inventory.installation.version)
        .unwrap_or_default();
    let argocd_config = std::sync::Arc::new(inventory.installation.config.clone());
    let live_keys: HashSet<ObjectKey> = inventory.objects.iter().map(LiveObject::key).collect();
    let live_crds: HashSet<(String, String)> = inventory
        .objects
        .iter()
        .filter(|o| o.resource.kind == "CustomResourceDefinition")
        .filter_map(|o| {
            let spec = o.resource.raw.get("spec")?;
            Some((
                spec.get("group")?.as_str()?.to_string(),
                spec.pointer("/names/kind")?.as_str()?.to_string(),
            ))
        })
        .collect();

    let mut evaluation = Evaluation::default();
    let mut groups: BTreeMap<(u8, String, String), Group> = BTreeMap::new();
    for object in &inventory.objects {
        if let Some(uid) = &object.uid {
            evaluation.uids.insert(object.key(), uid.clone());
        }
        if object.controlled {
            continue;
        }
        let resource = &object.resource;
        let judged = resource
            .namespace
            .as_deref()
            .is_some_and(|ns| namespace_in_scope(config, ns));
        if let Some(owner) = index.owner_of(resource) {
            let live = &owner.entry.live;
            let group = groups
                .entry((0, live.namespace.clone(), live.name.clone()))
                .or_insert_with(|| Group {
                    app: Some(live.name.clone()),
                    destination: Some(live.destination_namespace.clone()).filter(|d| !d.is_empty()),
                    members: Vec::new(),
                });
            let member = if owner.tracked {
                resource.clone()
            } else {
                adopt(resource, &live.name)
            };
            group.members.push((member, judged));
        } else if let (Some(ns), true) = (&resource.namespace, judged) {
            groups
                .entry((1, ns.clone(), String::new()))
                .or_insert_with(|| Group {
                    app: None,
                    destination: Some(ns.clone()),
                    members: Vec::new(),
                })
                .members
                .push((resource.clone(), true));
        }
    }
    // Context for every Application group: what the app lists but was not listed live, and the
    // Application object itself (destination, sync options). (A map, not a scan per group:
    // 10,000 Applications with live objects would make the scan 10^8 comparisons.)
    let by_name: HashMap<(&str, &str), usize> = index
        .apps()
        .iter()
        .enumerate()
        .map(|(i, e)| ((e.live.namespace.as_str(), e.live.name.as_str()), i))
        .collect();
    for ((tier, app_ns, app_name), group) in groups.iter_mut() {
        if *tier != 0 {
            continue;
        }
        let Some(entry) = by_name
            .get(&(app_ns.as_str(), app_name.as_str()))
            .and_then(|&i| index.apps().get(i))
        else {
            continue;
        };
        let stand_ins = entry.stand_ins_except(|k| live_keys.contains(k));
        group
            .members
            .extend(stand_ins.into_iter().map(|r| (r, false)));
        let app_key = key_of(&entry.application);
        if !group.members.iter().any(|(r, _)| key_of(r) == app_key) {
            group.members.push((entry.application.clone(), false));
        }
    }

    for group in groups.into_values() {
        if !group.members.iter().any(|(_, judged)| *judged) {
            continue;
        }
        if group.app.is_some() {
            evaluation.applications += 1;
        }
        let options = EvaluateOptions {
            source: Source::Audit,
            destination_namespace: group.destination.clone(),
            require_crds: false,
            argocd,
            argocd_config: argocd_config.clone(),
            ..EvaluateOptions::default()
        };
        let set: Vec<Resource> = group.members.iter().map(|(r, _)| r.clone()).collect();
        let (inputs, _) = build_inputs(&set, &options);
        let default_ns = group.destination.as_deref().unwrap_or("default");
        let mut judged: Vec<(&Resource, Value)> = Vec::new();
        for ((resource, judge), mut input) in group.members.iter().zip(inputs) {
            if *judge {
                resolve_live(&mut input, &live_keys, &live_crds, default_ns);
                judged.push((resource, input));
            }
        }
        evaluation.evaluated += judged.len();
        let docs: Vec<Value> = judged.iter().map(|(_, doc)| doc.clone()).collect();
        let outcomes = policies.evaluate_many(&docs);
        for ((resource, _), outcome) in judged.into_iter().zip(outcomes) {
            for mut finding in policies.findings_from(resource, outcome) {
                finding.application.clone_from(&group.app);
                let Some(ns) = finding.resource.namespace.clone() else {
                    continue;
                };
                evaluation.by_namespace.entry(ns).or_default().push(finding);
            }
        }
    }
    evaluation
}

/// Re-resolves `input.refs[]` targets the group does not contain but the cluster does:
/// `"resolution": "live"` — the object exists now and is not part of this Application's sync.
fn resolve_live(
    input: &mut Value,
    live_keys: &HashSet<ObjectKey>,
    live_crds: &HashSet<(String, String)>,
    default_ns: &str,
) {
    let Some(refs) = input.get_mut("refs").and_then(Value::as_array_mut) else {
        return;
    };
    for entry in refs.iter_mut() {
        if entry.pointer("/target/resolution").and_then(Value::as_str) != Some("missing") {
            continue;
        }
        let text = |p: &str| {
            entry
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let target = json!({
            "resolution": "live",
            "kind": text("/kind"),
            "group": text("/group"),
            "name": text("/name"),
            "namespace": entry.get("namespace").cloned().unwrap_or(Value::Null),
        });
        let exists = if entry.get("role").and_then(Value::as_str) == Some("definition") {
            live_crds.contains(&(text("/defines/group"), text("/defines/kind")))
        } else {
            let namespace = entry
                .get("namespace")
                .and_then(Value::as_str)
                .map_or_else(String::new, str::to_string);
            let key = ObjectKey::new(&text("/group"), &text("/kind"), &namespace, &text("/name"));
            live_keys.contains(&key)
                || live_keys.contains(&key.cluster_scoped())
                || (namespace.is_empty()
                    && live_keys.contains(&ObjectKey::new(
                        &key.group, &key.kind, default_ns, &key.name,
                    )))
        };
        if exists && let Some(obj) = entry.as_object_mut() {
            obj.insert("target".into(), target);
        }
    }
}
