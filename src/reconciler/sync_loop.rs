//! SG502 — OutOfSync loop: the same Application synced again and again (auto-sync, self-heal)
//! or flipping Synced ↔ OutOfSync, because something other than Argo CD keeps changing a field
//! that Argo CD keeps setting back (seed 004, cause 3: an HPA and `spec.replicas`).
//!
//! Two halves:
//! - [`LoopTracker`] remembers, per Application and in memory, the syncs and flips seen within
//!   the window (bounded; idle entries expire). After a restart it refills from
//!   `status.history`, so a loop is recognised without waiting a whole window again.
//! - The cause: the live objects Argo CD found OutOfSync, and in their `metadata.managedFields`
//!   the fields owned by a manager that is not Argo CD's (e.g. `spec.replicas` owned by
//!   `kube-controller-manager` through the `scale` subresource = an HPA). Those become a
//!   readable list and an `ignoreDifferences` snippet.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use serde_json::Value;
use time::OffsetDateTime;

use super::application::Application;
use super::budget::ApiBudget;
use super::diagnosis::{LiveFinding, SYNC_LOOP, human_duration};
use super::error::{Error, Result};
use super::state::{LoopSnapshot, PersistedLoop, PersistedResource};
use crate::config::status::ResourceStatus;
use crate::model::phase::SyncStatus;

/// Field managers Argo CD itself writes with: server-side apply (`argocd-controller`), older
/// releases' controller name, and client-side apply (`kubectl-client-side-apply`, which is
/// what Argo CD's kubectl-based apply records — a human's `kubectl apply` looks the same, and
/// is not the loop's cause either).
pub const ARGO_MANAGERS: [&str; 3] = [
    "argocd-controller",
    "argocd-application-controller",
    "kubectl-client-side-apply",
];

/// At most this many Applications are tracked; beyond it the least recently seen is dropped.
pub const MAX_TRACKED: usize = 100_000;
/// At most this many OutOfSync resources are remembered per Application (and fetched).
pub const MAX_RESOURCES: usize = 5;

/// What the tracker has seen of one Application within the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoopEvidence {
    /// Finished sync operations (distinct start times) of the most re-synced revision.
    pub syncs: usize,
    /// Synced → OutOfSync transitions while Synced to the same revision.
    pub flips: usize,
    /// The sync status this observation changed to (`Synced`, `OutOfSync`, `Unknown` for any
    /// other), when it differs from the one seen before; `None` on the first observation.
    pub turned_to: Option<&'static str>,
}

impl LoopEvidence {
    /// More syncs, or more flips, than `loop_syncs`.
    pub fn is_loop(&self, loop_syncs: u32) -> bool {
        let n = loop_syncs as usize;
        self.syncs > n || self.flips > n
    }
}

#[derive(Debug, Default)]
struct Entry {
    /// Finished syncs: start time (unix ns) → (finish time, revision).
    syncs: BTreeMap<i128, (OffsetDateTime, Option<String>)>,
    /// When the app was seen turning OutOfSync, and the revision it was Synced to then.
    flips: VecDeque<(OffsetDateTime, Option<String>)>,
    /// Resources seen OutOfSync recently (group, kind, namespace, name) → when last seen.
    out_of_sync: BTreeMap<(String, String, String, String), (OffsetDateTime, ResourceStatus)>,
    last_status: Option<SyncStatus>,
    last_seen: Option<OffsetDateTime>,
    /// When this process first observed the app (flips from another process's state that are
    /// newer were seen here too, and are not imported twice).
    first_seen: Option<OffsetDateTime>,
    /// `namespace/name`, for the persisted state.
    display: String,
}

/// The largest number of items that share one revision. A loop re-syncs the *same* revision;
/// six commits deployed in half an hour are six syncs of six revisions, not a loop. Items whose
/// revision is unknown count together.
fn most_per_revision<'a>(revisions: impl Iterator<Item = &'a Option<String>>) -> usize {
    let mut counts: HashMap<Option<&str>, usize> = HashMap::new();
    for r in revisions {
        *counts.entry(r.as_deref()).or_default() += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

/// Per-Application sync history within the loop window, in memory.
#[derive(Debug)]
pub struct LoopTracker {
    window: Duration,
    entries: Mutex<HashMap<String, Entry>>,
}

impl LoopTracker {
    /// A tracker counting within `window`.
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Number of Applications tracked.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether nothing is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Feeds one observed version of `app` and returns what was seen within the window.
    pub fn observe(&self, app: &Application, now: OffsetDateTime) -> LoopEvidence {
        let Ok(mut entries) = self.entries.lock() else {
            return LoopEvidence::default();
        };
        let key = app.uid.clone().unwrap_or_else(|| app.display_name());
        let since = now - self.window;
        if !entries.contains_key(&key) && entries.len() >= MAX_TRACKED {
            // Idle entries first; else the least recently seen one.
            entries.retain(|_, e| e.last_seen.is_some_and(|t| t >= since));
            if entries.len() >= MAX_TRACKED
                && let Some(oldest) = entries
                    .iter()
                    .min_by_key(|(_, e)| e.last_seen)
                    .map(|(k, _)| k.clone())
            {
                entries.remove(&oldest);
            }
        }
        let entry = entries.entry(key).or_default();

        for h in &app.status.history {
            let (Some(start), Some(done)) = (h.deploy_started_at.or(h.deployed_at), h.deployed_at)
            else {
                continue;
            };
            entry
                .syncs
                .insert(start.unix_timestamp_nanos(), (done, h.revision.clone()));
        }
        if let Some(op) = &app.status.operation
            && !op.in_progress()
            && let Some(done) = op.finished_at
        {
            let start = op.started_at.unwrap_or(done);
            entry
                .syncs
                .insert(start.unix_timestamp_nanos(), (done, op.revision.clone()));
        }
        entry.syncs.retain(|_, (done, _)| *done >= since);

        let status = app.status.sync;
        if entry.last_status == Some(SyncStatus::Synced) && status == Some(SyncStatus::OutOfSync) {
            entry
                .flips
                .push_back((now, app.status.sync_revision.clone()));
        }
        let turned_to = match (&entry.last_status, &status) {
            (Some(before), Some(after)) if before != after => Some(after.as_str()),
            _ => None,
        };
        if status.is_some() {
            entry.last_status = status;
        }
        while entry.flips.front().is_some_and(|(t, _)| *t < since) {
            entry.flips.pop_front();
        }

        for r in app
            .status
            .resources
            .iter()
            .filter(|r| !r.hook && r.status == Some(SyncStatus::OutOfSync))
        {
            let k = (
                r.group.clone(),
                r.kind.clone(),
                r.namespace.clone(),
                r.name.clone(),
            );
            entry.out_of_sync.insert(k, (now, r.clone()));
        }
        entry.out_of_sync.retain(|_, (t, _)| *t >= since);
        while entry.out_of_sync.len() > MAX_RESOURCES {
            let Some(oldest) = entry
                .out_of_sync
                .iter()
                .min_by_key(|(_, (t, _))| *t)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            entry.out_of_sync.remove(&oldest);
        }
        entry.last_seen = Some(now);
        entry.first_seen.get_or_insert(now);
        if entry.display.is_empty() {
            entry.display = app.display_name();
        }
        LoopEvidence {
            syncs: most_per_revision(entry.syncs.values().map(|(_, r)| r)),
            flips: most_per_revision(entry.flips.iter().map(|(_, r)| r)),
            turned_to,
        }
    }

    /// What another process must know to go on counting: every Application with a flip in the
    /// window at `now`, the most recently seen first, at most `max` (see [`super::state`]).
    pub fn export(&self, now: OffsetDateTime, max: usize) -> LoopSnapshot {
        let since = now - self.window;
        let Ok(entries) = self.entries.lock() else {
            return LoopSnapshot::default();
        };
        let mut with_flips: Vec<(&String, &Entry)> = entries
            .iter()
            .filter(|(_, e)| e.flips.iter().any(|(t, _)| *t >= since))
            .collect();
        with_flips.sort_by_key(|(k, e)| (std::cmp::Reverse(e.last_seen), (*k).clone()));
        let apps = with_flips
            .into_iter()
            .take(max)
            .map(|(k, e)| {
                let persisted = PersistedLoop {
                    app: e.display.clone(),
                    flips: e
                        .flips
                        .iter()
                        .filter(|(t, _)| *t >= since)
                        .map(|(t, r)| (t.unix_timestamp(), r.clone()))
                        .collect(),
                    last_status: e.last_status.map(|s| s.as_str().to_string()),
                    last_seen: e.last_seen.map_or(0, OffsetDateTime::unix_timestamp),
                    out_of_sync: e
                        .out_of_sync
                        .values()
                        .filter(|(t, _)| *t >= since)
                        .map(|(t, r)| PersistedResource {
                            group: r.group.clone(),
                            version: r.version.clone(),
                            kind: r.kind.clone(),
                            namespace: r.namespace.clone(),
                            name: r.name.clone(),
                            seen: t.unix_timestamp(),
                        })
                        .collect(),
                };
                (k.clone(), persisted)
            })
            .collect();
        LoopSnapshot { version: 1, apps }
    }

    /// Merges what another process (or this one before a restart) persisted. For an
    /// Application this process has observed, only flips from before its first observation
    /// are added (later ones it saw itself), and never one it already has; the last status is
    /// taken only when none is known. Flips outside the window at `now` are dropped.
    pub fn import(&self, snapshot: &LoopSnapshot, now: OffsetDateTime) {
        let since = now - self.window;
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        for (key, p) in &snapshot.apps {
            if !entries.contains_key(key) && entries.len() >= MAX_TRACKED {
                break;
            }
            let entry = entries.entry(key.clone()).or_default();
            let cutoff = entry.first_seen;
            // Flips already held (from an import earlier in this process), counted per
            // (second, revision): the state keeps whole seconds, and a fast loop flips twice
            // within one, so a persisted flip is a duplicate only while an equal one held here
            // is not yet matched.
            let mut held: HashMap<(i64, Option<String>), usize> = HashMap::new();
            for (t, r) in &entry.flips {
                *held.entry((t.unix_timestamp(), r.clone())).or_default() += 1;
            }
            for (secs, rev) in &p.flips {
                let Ok(t) = OffsetDateTime::from_unix_timestamp(*secs) else {
                    continue;
                };
                if t < since || cutoff.is_some_and(|c| t >= c) {
                    continue;
                }
                match held.get_mut(&(*secs, rev.clone())) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => entry.flips.push_back((t, rev.clone())),
                }
            }
            entry.flips.make_contiguous().sort_by_key(|(t, _)| *t);
            if entry.last_status.is_none() {
                entry.last_status = p.last_status.as_deref().and_then(SyncStatus::parse);
            }
            for r in &p.out_of_sync {
                let Ok(t) = OffsetDateTime::from_unix_timestamp(r.seen) else {
                    continue;
                };
                if t < since {
                    continue;
                }
                let k = (
                    r.group.clone(),
                    r.kind.clone(),
                    r.namespace.clone(),
                    r.name.clone(),
                );
                entry.out_of_sync.entry(k).or_insert_with(|| {
                    (
                        t,
                        ResourceStatus {
                            group: r.group.clone(),
                            version: r.version.clone(),
                            kind: r.kind.clone(),
                            namespace: r.namespace.clone(),
                            name: r.name.clone(),
                            status: Some(SyncStatus::OutOfSync),
                            ..ResourceStatus::default()
                        },
                    )
                });
            }
            if entry.display.is_empty() {
                entry.display.clone_from(&p.app);
            }
            tracing::debug!(app = %entry.display, persisted = p.flips.len(),
                flips = entry.flips.len(), cutoff = ?cutoff, "loop state imported");
            if entry.last_seen.is_none() {
                entry.last_seen = OffsetDateTime::from_unix_timestamp(p.last_seen).ok();
            }
            // From here on this process sees every flip itself.
            entry.first_seen.get_or_insert(now);
        }
    }

    /// Drops the Applications whose key (uid) is not in `live`.
    pub fn forget_missing(&self, live: &std::collections::HashSet<String>) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|k, _| live.contains(k));
        }
    }

    /// The resources of `app` seen OutOfSync within the window, most recent first.
    pub fn recent_out_of_sync(&self, app: &Application) -> Vec<ResourceStatus> {
        let key = app.uid.clone().unwrap_or_else(|| app.display_name());
        let Ok(entries) = self.entries.lock() else {
            return Vec::new();
        };
        let mut out: Vec<_> = entries
            .get(&key)
            .map(|e| e.out_of_sync.values().cloned().collect())
            .unwrap_or_default();
        out.sort_by_key(|(t, _)| std::cmp::Reverse(*t));
        out.into_iter().map(|(_, r)| r).collect()
    }
}

/// One step of a managed-fields path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Segment {
    /// `f:name` — a field.
    Field(String),
    /// `k:{"name":"app"}` — a list item by its keys (rendered `[name=app]`).
    Key(String),
    /// `v:"x"` — a set item by value (rendered `[x]`).
    Value(String),
    /// `i:0` — a list item by index.
    Index(String),
}

/// A path owned by a field manager, parsed from `fieldsV1`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// Readable form: `spec.template.spec.containers[name=app].image`.
    pub fn display(&self) -> String {
        let mut out = String::new();
        for s in &self.0 {
            match s {
                Segment::Field(f) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(f);
                }
                Segment::Key(k) | Segment::Value(k) | Segment::Index(k) => {
                    out.push('[');
                    out.push_str(k);
                    out.push(']');
                }
            }
        }
        out
    }

    /// RFC 6901 pointer (`/spec/replicas`) when every step is a plain field; list items by key
    /// cannot be written as a pointer.
    pub fn json_pointer(&self) -> Option<String> {
        let mut out = String::new();
        for s in &self.0 {
            let Segment::Field(f) = s else {
                return None;
            };
            out.push('/');
            out.push_str(&f.replace('~', "~0").replace('/', "~1"));
        }
        Some(out)
    }

    fn starts_with(&self, fields: &[&str]) -> bool {
        self.0.len() >= fields.len()
            && self
                .0
                .iter()
                .zip(fields)
                .all(|(s, f)| matches!(s, Segment::Field(x) if x == f))
    }
}

/// Every leaf path of a `fieldsV1` tree (`{"f:spec":{"f:replicas":{}}}` → `spec.replicas`).
pub fn fields_v1_paths(fields: &Value) -> Vec<FieldPath> {
    let mut out = Vec::new();
    walk(fields, &mut Vec::new(), &mut out);
    out
}

fn walk(node: &Value, prefix: &mut Vec<Segment>, out: &mut Vec<FieldPath>) {
    let Some(map) = node.as_object() else {
        return;
    };
    let mut children = 0;
    for (key, child) in map {
        if key == "." {
            continue;
        }
        let Some((tag, rest)) = key.split_once(':') else {
            continue;
        };
        let segment = match tag {
            "f" => Segment::Field(rest.to_string()),
            "k" => Segment::Key(render_key(rest)),
            "v" => Segment::Value(
                serde_json::from_str::<Value>(rest)
                    .ok()
                    .map(|v| scalar(&v))
                    .unwrap_or_else(|| rest.to_string()),
            ),
            "i" => Segment::Index(rest.to_string()),
            _ => continue,
        };
        children += 1;
        prefix.push(segment);
        walk(child, prefix, out);
        prefix.pop();
    }
    if children == 0 && !prefix.is_empty() {
        out.push(FieldPath(prefix.clone()));
    }
}

fn render_key(raw: &str) -> String {
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", scalar(v)))
            .collect::<Vec<_>>()
            .join(","),
        _ => raw.to_string(),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Paths controllers write that are never part of desired state, so never a sync-loop cause.
fn is_bookkeeping(path: &FieldPath) -> bool {
    path.starts_with(&["status"])
        || path.starts_with(&["metadata", "ownerReferences"])
        || path.starts_with(&["metadata", "finalizers"])
        || path.starts_with(&["metadata", "resourceVersion"])
        || matches!(
            path.0.as_slice(),
            [Segment::Field(m), Segment::Field(a), Segment::Field(k), ..]
                if m == "metadata" && a == "annotations"
                    && (k.starts_with("deployment.kubernetes.io/")
                        || k == "kubectl.kubernetes.io/last-applied-configuration"
                        || k.starts_with("argocd.argoproj.io/"))
        )
}

/// Fields of one live object owned by a manager that is not Argo CD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignOwner {
    /// The field manager, e.g. `kube-controller-manager`.
    pub manager: String,
    /// `Update` or `Apply`.
    pub operation: String,
    /// The subresource it wrote through (`scale` for an HPA), if any.
    pub subresource: Option<String>,
    /// The fields (bookkeeping such as `status` left out).
    pub paths: Vec<FieldPath>,
}

impl ForeignOwner {
    /// Who this is, for people: an HPA, KEDA, a VPA, or the manager's name.
    pub fn actor(&self) -> String {
        let m = self.manager.to_ascii_lowercase();
        if self.subresource.as_deref() == Some("scale") && m == "kube-controller-manager" {
            "kube-controller-manager through the scale subresource (a HorizontalPodAutoscaler)"
                .into()
        } else if m.contains("keda") {
            format!("{} (KEDA)", self.manager)
        } else if m.contains("vpa") {
            format!("{} (a VerticalPodAutoscaler)", self.manager)
        } else if let Some(sub) = &self.subresource {
            format!("{} through the {sub} subresource", self.manager)
        } else {
            self.manager.clone()
        }
    }
}

/// The non-Argo owners of an object's fields, from `metadata.managedFields`.
pub fn foreign_owners(object: &Value) -> Vec<ForeignOwner> {
    let Some(entries) = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut out: Vec<ForeignOwner> = Vec::new();
    for e in entries {
        let manager = e.get("manager").and_then(Value::as_str).unwrap_or_default();
        let subresource = e
            .get("subresource")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        if manager.is_empty() || ARGO_MANAGERS.contains(&manager) || subresource == Some("status") {
            continue;
        }
        let mut paths: Vec<FieldPath> = e
            .get("fieldsV1")
            .map(fields_v1_paths)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !is_bookkeeping(p))
            .collect();
        if paths.is_empty() {
            continue;
        }
        paths.sort();
        paths.dedup();
        out.push(ForeignOwner {
            manager: manager.to_string(),
            operation: e
                .get("operation")
                .and_then(Value::as_str)
                .unwrap_or("Update")
                .to_string(),
            subresource: subresource.map(str::to_string),
            paths,
        });
    }
    out
}

/// A live object Argo CD found OutOfSync, as fetched.
#[derive(Debug, Clone)]
pub struct LiveObject {
    /// Its `status.resources` entry.
    pub resource: ResourceStatus,
    /// The object from the API server.
    pub object: Value,
}

/// Fetches (GET) the live objects of `resources` (at most [`MAX_RESOURCES`]); objects that are
/// gone, forbidden to this service account, or not found under kube's pluralisation of their
/// kind (right for built-in kinds; a custom kind with an irregular plural answers 404) are
/// skipped. Other errors fail the fetch.
pub async fn fetch_live(
    client: &kube::Client,
    budget: &ApiBudget,
    resources: &[ResourceStatus],
) -> Result<Vec<LiveObject>> {
    let mut out = Vec::new();
    for r in resources.iter().take(MAX_RESOURCES) {
        let version = if r.version.is_empty() {
            "v1"
        } else {
            &r.version
        };
        let gvk = GroupVersionKind::gvk(&r.group, version, &r.kind);
        let ar = ApiResource::from_gvk(&gvk);
        let api: Api<DynamicObject> = if r.namespace.is_empty() {
            Api::all_with(client.clone(), &ar)
        } else {
            Api::namespaced_with(client.clone(), &r.namespace, &ar)
        };
        let what = format!("get {} {}/{}", r.kind, r.namespace, r.name);
        budget.acquire().await;
        let obj = match api.get_opt(&r.name).await {
            Ok(Some(obj)) => obj,
            Ok(None) => continue,
            // A kind this service account may not read (RBAC is per kind) or whose plural kube
            // guessed wrong: that object cannot be explained, the others still can.
            Err(kube::Error::Api(status)) if status.code == 403 || status.code == 404 => {
                tracing::debug!(call = %what, code = status.code, "skipping an unreadable object");
                continue;
            }
            Err(e) => return Err(Error::kube(&what, e)),
        };
        let object = serde_json::to_value(&obj).map_err(|source| Error::Serialization {
            what: "a live object",
            source,
        })?;
        out.push(LiveObject {
            resource: r.clone(),
            object,
        });
    }
    Ok(out)
}

/// SG502 over data: `None` unless `evidence` is a loop.
///
/// `out_of_sync` are the resources seen OutOfSync in the window, `live` those of them that
/// could be read.
pub fn diagnose(
    app: &Application,
    evidence: LoopEvidence,
    loop_syncs: u32,
    window: Duration,
    out_of_sync: &[ResourceStatus],
    live: &[LiveObject],
) -> Option<LiveFinding> {
    if !evidence.is_loop(loop_syncs) {
        return None;
    }
    let mut counts = Vec::new();
    if evidence.syncs > 0 {
        counts.push(format!("was synced {} times", evidence.syncs));
    }
    if evidence.flips > 0 {
        counts.push(format!(
            "turned from Synced to OutOfSync {} times",
            evidence.flips
        ));
    }
    let head = format!(
        "Application {} {} in the last {}",
        app.display_name(),
        counts.join(" and "),
        human_duration(window)
    );

    let mut causes = Vec::new();
    let mut fingerprint = vec![SYNC_LOOP.id.to_string()];
    let mut ignore = Vec::new();
    for obj in live {
        let r = &obj.resource;
        for owner in foreign_owners(&obj.object) {
            let shown: Vec<String> = owner.paths.iter().map(FieldPath::display).collect();
            let noun = if shown.len() == 1 { "field" } else { "fields" };
            causes.push(format!(
                "{} {}/{} {noun} {} {} changed by {}",
                r.kind,
                r.namespace,
                r.name,
                shown.join(", "),
                if shown.len() == 1 { "is" } else { "are" },
                owner.actor()
            ));
            fingerprint.push(format!(
                "{}/{}/{}/{}:{}:{}",
                r.group,
                r.kind,
                r.namespace,
                r.name,
                owner.manager,
                shown.join(",")
            ));
            ignore.push(ignore_entry(r, &owner));
        }
    }
    let (message, fix, snippet) = if causes.is_empty() {
        let name = |r: &ResourceStatus| format!("{} {}/{}", r.kind, r.namespace, r.name);
        let read: Vec<String> = live.iter().map(|o| name(&o.resource)).collect();
        let unread: Vec<String> = out_of_sync
            .iter()
            .map(name)
            .filter(|n| !read.contains(n))
            .collect();
        fingerprint.push(format!("unexplained:{}", read.join(",")));
        let mut which = Vec::new();
        if !read.is_empty() {
            which.push(format!(
                "no other field manager owns fields of {} (defaulting, normalisation or a \
                 mutating webhook can cause this)",
                read.join(", ")
            ));
        }
        if !unread.is_empty() {
            which.push(format!("{} could not be read", unread.join(", ")));
        }
        if which.is_empty() {
            which.push("no resource was seen OutOfSync".to_string());
        }
        let which = which.join("; ");
        (
            format!("{head}; {which}."),
            format!(
                "Run argocd app diff {} to see which fields keep differing, then remove them \
                 from the manifests or add an ignoreDifferences entry with \
                 RespectIgnoreDifferences=true.",
                app.name
            ),
            None,
        )
    } else {
        let respect = app.respects_ignore_differences();
        let fix = format!(
            "Let the other manager own the field: add ignoreDifferences for it{} so diffs and \
             syncs leave it alone, or remove it from the manifests (an HPA-scaled workload \
             should not set spec.replicas).",
            if respect {
                ""
            } else {
                " together with the RespectIgnoreDifferences=true sync option"
            }
        );
        (
            format!("{head}: {}.", causes.join("; ")),
            fix,
            Some(snippet(&ignore, !respect)),
        )
    };
    Some(LiveFinding {
        rule: SYNC_LOOP,
        message,
        fix,
        snippet,
        fingerprint: fingerprint.join("|"),
    })
}

/// One `ignoreDifferences` entry: JSON pointers when every path has one, else the manager.
fn ignore_entry(r: &ResourceStatus, owner: &ForeignOwner) -> (String, BTreeSet<String>, bool) {
    let pointers: Option<BTreeSet<String>> =
        owner.paths.iter().map(FieldPath::json_pointer).collect();
    let head = format!(
        "- group: \"{}\"\n    kind: {}\n    name: {}\n{}",
        r.group,
        r.kind,
        r.name,
        if r.namespace.is_empty() {
            String::new()
        } else {
            format!("    namespace: {}\n", r.namespace)
        }
    );
    match pointers {
        Some(p) if p.len() <= 5 => (head, p, true),
        _ => (head, BTreeSet::from([owner.manager.clone()]), false),
    }
}

fn snippet(entries: &[(String, BTreeSet<String>, bool)], respect: bool) -> String {
    let mut out = String::from("spec:\n  ignoreDifferences:\n");
    for (head, items, pointers) in entries {
        out.push_str("  ");
        out.push_str(head);
        out.push_str(if *pointers {
            "    jsonPointers:\n"
        } else {
            "    managedFieldsManagers:\n"
        });
        for i in items {
            out.push_str(&format!("      - {i}\n"));
        }
    }
    if respect {
        out.push_str("  syncPolicy:\n    syncOptions:\n      - RespectIgnoreDifferences=true\n");
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::reconciler::fixtures::AppBuilder;
    use crate::reconciler::stuck::tests::at;
    use serde_json::json;

    pub(crate) fn hpa_deployment() -> Value {
        serde_json::from_str(include_str!(
            "../../tests/fixtures/live/hpa-deployment.json"
        ))
        .unwrap()
    }

    fn deployment_of(fixture: &Value) -> Value {
        fixture["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == "Deployment")
            .unwrap()
            .clone()
    }

    #[test]
    fn fields_v1_becomes_readable_paths_with_list_keys_and_set_values() {
        let fields = json!({
            "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}},
            "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:ports": {
                    "k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}}}}},
            "f:metadata2": {"f:finalizers": {"v:\"foregroundDeletion\"": {}}}
        });
        let shown: Vec<String> = fields_v1_paths(&fields)
            .iter()
            .map(FieldPath::display)
            .collect();
        assert!(shown.contains(&"spec.replicas".to_string()), "{shown:?}");
        assert!(shown.contains(&"spec.template.spec.containers[name=web].image".to_string()));
        assert!(shown.contains(
            &"spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP].containerPort"
                .to_string()
        ));
        assert!(shown.contains(&"metadata2.finalizers[foregroundDeletion]".to_string()));
        assert!(
            shown.contains(&"metadata.annotations.deployment.kubernetes.io/revision".to_string())
        );
        let replicas = fields_v1_paths(&json!({"f:spec": {"f:replicas": {}}}));
        assert_eq!(
            replicas[0].json_pointer().as_deref(),
            Some("/spec/replicas")
        );
        let keyed = fields_v1_paths(&json!({"f:a": {"k:{\"name\":\"x\"}": {"f:b": {}}}}));
        assert_eq!(keyed[0].json_pointer(), None);
    }

    #[test]
    fn the_hpa_owns_spec_replicas_through_the_scale_subresource_and_argo_fields_are_not_blamed() {
        let deployment = deployment_of(&hpa_deployment());
        let owners = foreign_owners(&deployment);
        assert_eq!(owners.len(), 1, "{owners:?}");
        let hpa = &owners[0];
        assert_eq!(hpa.manager, "kube-controller-manager");
        assert_eq!(hpa.subresource.as_deref(), Some("scale"));
        assert_eq!(
            hpa.paths.iter().map(FieldPath::display).collect::<Vec<_>>(),
            ["spec.replicas"]
        );
        assert!(hpa.actor().contains("HorizontalPodAutoscaler"));
    }

    fn app_with(syncs: usize) -> AppBuilder {
        let mut b = AppBuilder::new("shop").destination("shop").self_heal();
        for i in 0..syncs {
            let start = format!("2026-11-30T02:{:02}:00Z", i * 3);
            let done = format!("2026-11-30T02:{:02}:30Z", i * 3);
            b = b.history(i as i64 + 1, &start, &done);
        }
        b
    }

    #[test]
    fn six_syncs_in_the_window_are_a_loop_and_five_are_not() {
        let tracker = LoopTracker::new(Duration::from_secs(30 * 60));
        let five = app_with(5).live();
        let now = at("2026-11-30T02:20:00Z");
        assert_eq!(tracker.observe(&five, now).syncs, 5);
        assert!(
            !tracker.observe(&five, now).is_loop(5),
            "observing again adds nothing"
        );
        let six = app_with(6).live();
        let e = tracker.observe(&six, now);
        assert_eq!(e.syncs, 6);
        assert!(e.is_loop(5));
        // An hour later the same history is outside the window.
        let later = tracker.observe(&six, at("2026-11-30T03:30:00Z"));
        assert_eq!(later.syncs, 0);
    }

    #[test]
    fn many_syncs_of_different_revisions_are_deployments_not_a_loop() {
        let tracker = LoopTracker::new(Duration::from_secs(30 * 60));
        let mut v = app_with(8).json();
        for (i, h) in v["status"]["history"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            h["revision"] = json!(format!("commit-{i}"));
        }
        let app = Application::from_value(&v).unwrap();
        let e = tracker.observe(&app, at("2026-11-30T02:25:00Z"));
        assert_eq!(e.syncs, 1);
        assert!(!e.is_loop(5));
    }

    #[test]
    fn flips_between_synced_and_out_of_sync_are_counted_and_expire() {
        let tracker = LoopTracker::new(Duration::from_secs(600));
        let synced = AppBuilder::new("a").sync_status("Synced").live();
        let out = AppBuilder::new("a").sync_status("OutOfSync").live();
        let mut t = at("2026-11-30T02:00:00Z");
        for _ in 0..3 {
            tracker.observe(&synced, t);
            t += Duration::from_secs(60);
            tracker.observe(&out, t);
            t += Duration::from_secs(60);
        }
        assert_eq!(tracker.observe(&out, t).flips, 3);
        assert_eq!(tracker.observe(&out, t + Duration::from_secs(900)).flips, 0);
    }

    #[test]
    fn each_change_of_sync_status_is_reported_once_and_an_unchanged_status_not_at_all() {
        let tracker = LoopTracker::new(Duration::from_secs(600));
        let t = at("2026-11-30T02:00:00Z");
        let seen = |status: &str| {
            let app = AppBuilder::new("a").sync_status(status).live();
            tracker.observe(&app, t).turned_to
        };
        assert_eq!(seen("Synced"), None, "the first observation is no change");
        assert_eq!(seen("Synced"), None);
        assert_eq!(seen("OutOfSync"), Some("OutOfSync"));
        assert_eq!(seen("OutOfSync"), None);
        assert_eq!(seen("Synced"), Some("Synced"));
        assert_eq!(seen("Unknown"), Some("Unknown"));
    }

    /// Flips `n` times (Synced → OutOfSync) from `t`, a minute apart; returns the time after.
    fn flip(tracker: &LoopTracker, name: &str, n: usize, mut t: OffsetDateTime) -> OffsetDateTime {
        let synced = AppBuilder::new(name).sync_status("Synced").live();
        let out = AppBuilder::new(name)
            .sync_status("OutOfSync")
            .out_of_sync("apps", "Deployment", "web")
            .live();
        for _ in 0..n {
            tracker.observe(&synced, t);
            t += Duration::from_secs(30);
            tracker.observe(&out, t);
            t += Duration::from_secs(30);
        }
        t
    }

    #[test]
    fn a_restarted_tracker_goes_on_counting_from_the_exported_flips() {
        let window = Duration::from_secs(1800);
        let before = LoopTracker::new(window);
        let t = flip(&before, "shop", 3, at("2026-11-30T02:00:00Z"));
        let snapshot = before.export(t, 100);
        assert_eq!(snapshot.apps.len(), 1);
        let saved = snapshot.apps.values().next().unwrap();
        assert_eq!(saved.flips.len(), 3);
        assert_eq!(saved.last_status.as_deref(), Some("OutOfSync"));
        assert_eq!(saved.out_of_sync[0].name, "web");
        // Through the ConfigMap's text and back.
        let snapshot = LoopSnapshot::parse(&snapshot.to_bounded_json());

        let after = LoopTracker::new(window);
        after.import(&snapshot, t);
        // The suspects survive too, so the finding can name the field.
        let app = AppBuilder::new("shop").sync_status("Synced").live();
        assert_eq!(after.recent_out_of_sync(&app)[0].name, "web");
        let t = flip(&after, "shop", 1, t);
        let out = AppBuilder::new("shop").sync_status("OutOfSync").live();
        assert_eq!(
            after.observe(&out, t).flips,
            4,
            "3 before the restart + 1 after"
        );
        // Without the state, the new process would have seen one.
        let fresh = LoopTracker::new(window);
        let t2 = flip(&fresh, "shop", 1, t);
        assert_eq!(fresh.observe(&out, t2).flips, 1);
    }

    #[test]
    fn a_standby_that_saw_the_later_flips_itself_imports_only_the_earlier_ones_once() {
        let window = Duration::from_secs(1800);
        let leader = LoopTracker::new(window);
        let standby = LoopTracker::new(window);
        let t0 = at("2026-11-30T02:00:00Z");
        // Two flips before the standby started, two both saw (a few seconds apart).
        let t = flip(&leader, "shop", 2, t0);
        flip(&leader, "shop", 2, t);
        flip(&standby, "shop", 2, t + Duration::from_secs(3));
        let end = t + Duration::from_secs(300);
        let snapshot = leader.export(end, 100);
        standby.import(&snapshot, end);
        let out = AppBuilder::new("shop").sync_status("OutOfSync").live();
        assert_eq!(standby.observe(&out, end).flips, 4);
        // Importing the same state again (another term) adds nothing.
        standby.import(&snapshot, end);
        assert_eq!(standby.observe(&out, end).flips, 4);
    }

    #[test]
    fn flips_within_one_second_are_all_carried_over_and_a_second_import_adds_none() {
        let t0 = at("2026-11-30T02:00:00Z");
        let before = LoopTracker::new(Duration::from_secs(600));
        let synced = AppBuilder::new("fast").sync_status("Synced").live();
        let out = AppBuilder::new("fast").sync_status("OutOfSync").live();
        // Two flips 200 ms apart: the state keeps whole seconds.
        let mut t = t0;
        for _ in 0..2 {
            before.observe(&synced, t);
            t += Duration::from_millis(100);
            before.observe(&out, t);
            t += Duration::from_millis(100);
        }
        before.observe(&synced, t);
        let snapshot = before.export(t, 10);
        let after = LoopTracker::new(Duration::from_secs(600));
        let later = t0 + Duration::from_secs(30);
        after.import(&snapshot, later);
        assert_eq!(after.observe(&synced, later).flips, 2);
        // The lease lost and won again: the same state read once more adds nothing.
        after.import(&snapshot, later + Duration::from_secs(1));
        assert_eq!(after.observe(&out, later + Duration::from_secs(2)).flips, 3);
    }

    #[test]
    fn only_applications_with_a_flip_in_the_window_are_exported_newest_first() {
        let tracker = LoopTracker::new(Duration::from_secs(600));
        let t0 = at("2026-11-30T02:00:00Z");
        tracker.observe(&AppBuilder::new("quiet").sync_status("Synced").live(), t0);
        let t = flip(&tracker, "old", 1, t0);
        let t = flip(&tracker, "new", 1, t);
        let snap = tracker.export(t, 1);
        assert_eq!(snap.apps.len(), 1, "capped at 1");
        assert_eq!(snap.apps.values().next().unwrap().app, "argocd/new");
        assert_eq!(
            tracker.export(t, 10).apps.len(),
            2,
            "the quiet app has no flip"
        );
        assert!(
            tracker
                .export(t + Duration::from_secs(3600), 10)
                .apps
                .is_empty(),
            "expired"
        );
    }

    #[test]
    fn the_tracker_stays_bounded() {
        let tracker = LoopTracker::new(Duration::from_secs(60));
        let now = at("2026-11-30T02:00:00Z");
        for i in 0..(MAX_TRACKED + 10) {
            tracker.observe(&AppBuilder::new(&format!("app-{i}")).live(), now);
        }
        assert_eq!(tracker.len(), MAX_TRACKED);
    }

    #[test]
    fn a_loop_over_an_hpa_scaled_deployment_names_the_field_the_hpa_and_the_snippet() {
        let app = app_with(7).out_of_sync("apps", "Deployment", "web").live();
        let live = vec![LiveObject {
            resource: app.status.resources[0].clone(),
            object: deployment_of(&hpa_deployment()),
        }];
        let f = diagnose(
            &app,
            LoopEvidence {
                syncs: 7,
                flips: 0,
                turned_to: None,
            },
            5,
            Duration::from_secs(30 * 60),
            &app.status.resources,
            &live,
        )
        .unwrap();
        assert_eq!(
            f.message,
            "Application argocd/shop was synced 7 times in the last 30 min: Deployment shop/web \
             field spec.replicas is changed by kube-controller-manager through the scale \
             subresource (a HorizontalPodAutoscaler)."
        );
        assert_eq!(
            f.snippet.as_deref().unwrap(),
            "spec:\n  ignoreDifferences:\n  - group: \"apps\"\n    kind: Deployment\n    name: web\n    \
             namespace: shop\n    jsonPointers:\n      - /spec/replicas\n  syncPolicy:\n    \
             syncOptions:\n      - RespectIgnoreDifferences=true\n"
        );
        assert!(f.fix.contains("RespectIgnoreDifferences=true"));
        assert!(
            diagnose(
                &app,
                LoopEvidence {
                    syncs: 5,
                    flips: 5,
                    turned_to: None
                },
                5,
                Duration::from_secs(1800),
                &app.status.resources,
                &live
            )
            .is_none()
        );
    }
}
