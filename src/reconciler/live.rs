//! Live objects as the rules see them, and what Argo CD's Applications say about objects the
//! reconciler does not list.
//!
//! Three pieces, shared by the background audit ([`super::audit`]) and the webhook's Application
//! cache ([`crate::webhook::ClusterContext`]):
//!
//! - [`LiveObject::from_value`]: a live object → a [`Resource`] without the server's bookkeeping
//!   (`managedFields`, `resourceVersion`, `uid`, …). Rules judge objects *as applied*; feeding
//!   them server-written fields would make SG301 (volatile values) report every live object.
//! - [`stand_in`]: one entry of an Application's `status.resources` → a minimal [`Resource`]
//!   (identity, sync wave, tracking id) so the sync plan places it at its phase and wave even
//!   when its kind is not listed (an `ExternalSecret`, any custom resource). That is what lets
//!   SG201 see that a PreSync hook needs a Secret produced at Sync wave 2.
//! - [`AppIndex`]: Applications by name and by the objects they list, so the owner of any object
//!   is found in O(1): by tracking id, instance label, or `status.resources` membership.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::application::Application;
use crate::config::status::ResourceStatus;
use crate::evaluate::PreparedSet;
use crate::model::argo::{SYNC_WAVE, SyncFacts, TRACKING_ID};
use crate::model::{ModelError, Resource};
use crate::plan::ObjectKey;

/// Metadata the API server writes. None of it is desired state, and SG301 reports some of it
/// (uid, resourceVersion, managedFields, creationTimestamp) when it appears in a manifest.
const SERVER_METADATA: [&str; 8] = [
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Client-side-apply bookkeeping: a full copy of the object, never read by a rule.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Kinds whose `status` a rule reads: SG206 (health_gate_may_block) stays quiet for a live
/// LoadBalancer Service or Ingress that already has an address and a PVC that is Bound. Every
/// other status is dropped — it is large, changes constantly and no rule judges it.
const STATUS_KINDS: [(&str, &str); 3] = [
    ("", "Service"),
    ("networking.k8s.io", "Ingress"),
    ("", "PersistentVolumeClaim"),
];

/// One object listed from the cluster.
#[derive(Debug, Clone)]
pub struct LiveObject {
    /// The object as the rules see it (server bookkeeping removed).
    pub resource: Resource,
    /// `metadata.uid`, for PolicyReport object references.
    pub uid: Option<String>,
    /// It has a controller owner (a Pod of a ReplicaSet, a Job of a CronJob, a Secret of an
    /// ExternalSecret). Such objects are never applied by Argo CD — their owner is, and is
    /// audited — so the audit uses them only as reference targets, never judges them.
    pub controlled: bool,
}

impl LiveObject {
    /// Reads a live object (as returned by the API server, a list item or a watch event).
    pub fn from_value(mut value: Value) -> Result<Self, ModelError> {
        let mut uid = None;
        let mut controlled = false;
        if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            uid = metadata
                .get("uid")
                .and_then(Value::as_str)
                .map(str::to_string);
            controlled = metadata
                .get("ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|owners| {
                    owners
                        .iter()
                        .any(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
                });
            for key in SERVER_METADATA {
                metadata.remove(key);
            }
            if let Some(annotations) = metadata
                .get_mut("annotations")
                .and_then(Value::as_object_mut)
            {
                annotations.remove(LAST_APPLIED);
            }
        }
        let resource = Resource::from_value(value, None)?;
        let keep_status = STATUS_KINDS
            .iter()
            .any(|(g, k)| resource.group == *g && resource.kind == *k);
        let mut resource = resource;
        if !keep_status && let Some(obj) = resource.raw.as_object_mut() {
            obj.remove("status");
        }
        Ok(Self {
            resource,
            uid,
            controlled,
        })
    }

    /// The object's identity as Argo CD keys it.
    pub fn key(&self) -> ObjectKey {
        key_of(&self.resource)
    }
}

/// `group/kind/namespace/name` of a resource (namespace empty for cluster scope).
pub fn key_of(r: &Resource) -> ObjectKey {
    ObjectKey::new(
        &r.group,
        &r.kind,
        r.namespace.as_deref().unwrap_or_default(),
        &r.name,
    )
}

/// The identity of one `status.resources` entry.
pub fn status_key(s: &ResourceStatus) -> ObjectKey {
    ObjectKey::new(&s.group, &s.kind, &s.namespace, &s.name)
}

/// A stand-in for an object Argo CD lists in `status.resources`: its identity, its sync wave and
/// a tracking id naming `app`, nothing else. The plan then places it where Argo CD applies it
/// (non-hooks run in the Sync phase at their wave), and reference resolution finds it (or the
/// Secret an ExternalSecret/SealedSecret/Certificate of that name produces, assuming the
/// produced Secret is named after the producer, which is the default).
///
/// Hooks (`hook: true`) get no stand-in: `status.resources` does not say which phase a hook runs
/// in, and placing it in the wrong one would invent ordering findings. Returns `None` for them
/// and for entries without kind, version or name.
pub fn stand_in(app: &str, status: &ResourceStatus) -> Option<Resource> {
    if status.hook || status.kind.is_empty() || status.version.is_empty() || status.name.is_empty()
    {
        return None;
    }
    let api_version = if status.group.is_empty() {
        status.version.clone()
    } else {
        format!("{}/{}", status.group, status.version)
    };
    let tracking = format!(
        "{app}:{}/{}:{}/{}",
        status.group, status.kind, status.namespace, status.name
    );
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::from(status.name.clone()));
    if !status.namespace.is_empty() {
        metadata.insert("namespace".into(), Value::from(status.namespace.clone()));
    }
    metadata.insert(
        "annotations".into(),
        json!({SYNC_WAVE: status.sync_wave.to_string(), TRACKING_ID: tracking}),
    );
    let raw = json!({"apiVersion": api_version, "kind": status.kind, "metadata": metadata});
    Resource::from_value(raw, None).ok()
}

/// The Application object as a member of an app's set: `spec` and identity only. The pipeline
/// reads destination namespace and sync options from it; its `status` (hundreds of entries) is
/// of no use to a rule and would be copied into every lookup.
pub fn application_resource(app: &Value) -> Option<Resource> {
    let mut raw = app.clone();
    if let Some(obj) = raw.as_object_mut() {
        obj.remove("status");
    }
    LiveObject::from_value(raw).ok().map(|l| l.resource)
}

/// One Application as the index knows it.
#[derive(Debug, Clone)]
pub struct AppEntry {
    /// The parsed view (name, namespace, status.resources, …).
    pub live: Application,
    /// The Application object itself (spec only), for the pipeline's app settings.
    pub application: Resource,
}

impl AppEntry {
    /// Reads an Application object (JSON as served); `None` for anything else.
    pub fn from_value(app: &Value) -> Option<Self> {
        let live = Application::from_value(app)?;
        let application = application_resource(app)?;
        Some(Self { live, application })
    }

    /// Whether `status.resources` lists the object (hooks included). A scan of the entries,
    /// not a set: it runs only to confirm an index hit, and a set of keys per Application was
    /// a fifth of the cache's memory at 10,000 Applications.
    pub fn lists(&self, key: &ObjectKey) -> bool {
        self.live.status.resources.iter().any(|s| {
            s.name == key.name
                && s.namespace == key.namespace
                && s.kind == key.kind
                && s.group == key.group
        })
    }

    /// Stand-ins for every non-hook entry of `status.resources`, in that order. Built when asked
    /// (an admission set, an audit group), not kept: at 10,000 Applications x 50 resources the
    /// kept stand-ins were half of the webhook cache's memory.
    pub fn stand_ins(&self) -> Vec<Resource> {
        self.live
            .status
            .resources
            .iter()
            .filter_map(|s| stand_in(&self.live.name, s))
            .collect()
    }

    /// The Application's objects as an admission context (`serve --cluster`): every stand-in
    /// and the Application object. `tracked: false` strips tracking ids from the stand-ins, so
    /// that an untracked admitted object (found through `status.resources`) meets them in the
    /// same group.
    pub fn admission_set(&self, tracked: bool) -> PreparedSet {
        let mut objects = self.stand_ins();
        if !tracked {
            objects = objects.iter().map(without_tracking).collect();
        }
        objects.push(self.application.clone());
        PreparedSet::new(objects)
    }

    /// Stand-ins for the entries of `status.resources` that `known` does not already cover (the
    /// audit lists many kinds itself; a live object beats a stand-in).
    pub fn stand_ins_except(&self, known: impl Fn(&ObjectKey) -> bool) -> Vec<Resource> {
        let mut all = self.stand_ins();
        all.retain(|r| !known(&key_of(r)));
        all
    }
}

/// Argo CD Applications indexed for owner lookups, then read without locks.
///
/// Entries are shared (`Arc`), so a cache can rebuild the index after one Application changed
/// by re-reading only that one ([`AppIndex::from_entries`]): the rest of a rebuild is hashing,
/// linear in the number of listed objects.
#[derive(Debug, Clone, Default)]
pub struct AppIndex {
    apps: Vec<Arc<AppEntry>>,
    /// Application name → entries (several namespaces may hold an app of the same name).
    by_name: HashMap<String, Vec<usize>>,
    /// Hash of a listed object's identity → the Applications listing an object with that hash,
    /// in index order. Keyed by a hash rather than the identity so that a rebuild copies no
    /// strings; a lookup confirms the match with [`AppEntry::lists`].
    by_member: HashMap<u64, Vec<usize>>,
}

fn member_hash(group: &str, kind: &str, namespace: &str, name: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    (group, kind, namespace, name).hash(&mut hasher);
    hasher.finish()
}

impl AppIndex {
    /// Indexes Application objects (JSON as served); other objects are ignored.
    pub fn build<'a>(apps: impl IntoIterator<Item = &'a Value>) -> Self {
        Self::from_entries(
            apps.into_iter()
                .filter_map(AppEntry::from_value)
                .map(Arc::new)
                .collect(),
        )
    }

    /// Indexes already-read entries.
    pub fn from_entries(mut entries: Vec<Arc<AppEntry>>) -> Self {
        // A deterministic order, so ties (two apps claiming one object) resolve the same way
        // on every replica and every rebuild.
        entries.sort_by(|a, b| {
            (&a.live.namespace, &a.live.name).cmp(&(&b.live.namespace, &b.live.name))
        });
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_member: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            by_name.entry(entry.live.name.clone()).or_default().push(i);
            for s in &entry.live.status.resources {
                let slot = by_member
                    .entry(member_hash(&s.group, &s.kind, &s.namespace, &s.name))
                    .or_default();
                if slot.last() != Some(&i) {
                    slot.push(i);
                }
            }
        }
        Self {
            apps: entries,
            by_name,
            by_member,
        }
    }

    /// Number of Applications.
    pub fn len(&self) -> usize {
        self.apps.len()
    }

    /// True when no Application is known.
    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
    }

    /// Every Application, ordered by namespace and name.
    pub fn apps(&self) -> &[Arc<AppEntry>] {
        &self.apps
    }

    /// The Application an app instance names: `name`, or `namespace_name` (Argo CD's form for
    /// Applications outside its own namespace). For a bare name shared by several namespaces the
    /// first by namespace wins.
    pub fn by_instance(&self, instance: &str) -> Option<&Arc<AppEntry>> {
        if let Some(found) = self.lookup(None, instance) {
            return Some(found);
        }
        let (namespace, name) = instance.split_once('_')?;
        self.lookup(Some(namespace), name)
    }

    fn lookup(&self, namespace: Option<&str>, name: &str) -> Option<&Arc<AppEntry>> {
        self.by_name
            .get(name)?
            .iter()
            .filter_map(|&i| self.apps.get(i))
            .find(|e| namespace.is_none_or(|ns| e.live.namespace == ns))
    }

    /// The Application that lists this object in `status.resources` (the first by namespace
    /// and name when several do).
    pub fn by_member(&self, key: &ObjectKey) -> Option<&Arc<AppEntry>> {
        self.member_lookup(key)
            .or_else(|| self.member_lookup(&key.cluster_scoped()))
    }

    fn member_lookup(&self, key: &ObjectKey) -> Option<&Arc<AppEntry>> {
        self.by_member
            .get(&member_hash(
                &key.group,
                &key.kind,
                &key.namespace,
                &key.name,
            ))?
            .iter()
            .filter_map(|&i| self.apps.get(i))
            .find(|e| e.lists(key))
    }

    /// The owning Application of `object`: by its tracking id, else its instance label, else by
    /// `status.resources` membership (an object created before Argo CD added tracking, or a hook
    /// that a previous sync recorded). `None` when nothing links it to a known Application.
    pub fn owner_of(&self, object: &Resource) -> Option<Owner<'_>> {
        let facts = SyncFacts::of(object);
        let by_tracking = facts
            .tracking
            .id
            .as_ref()
            .and_then(|id| self.by_instance(&id.app_instance))
            .or_else(|| {
                facts
                    .tracking
                    .instance_label
                    .as_deref()
                    .and_then(|label| self.by_instance(label))
            });
        if let Some(entry) = by_tracking {
            return Some(Owner {
                entry,
                tracked: true,
            });
        }
        if object.name.is_empty() {
            return None;
        }
        self.by_member(&key_of(object)).map(|entry| Owner {
            entry,
            tracked: false,
        })
    }
}

/// The Application that owns an object, and how that was found.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    /// The Application.
    pub entry: &'a Arc<AppEntry>,
    /// Found through the object's own tracking id or instance label. When `false` (found by
    /// `status.resources` membership) the object carries no tracking, and the pipeline, which
    /// groups objects by tracking, would put it apart from tracked stand-ins: callers either
    /// adopt it ([`adopt`]) or use untracked stand-ins ([`without_tracking`]).
    pub tracked: bool,
}

/// A copy of `r` with a tracking id naming `app`, for an object that Argo CD lists in the
/// Application's `status.resources` but that carries no tracking of its own: it is managed by
/// that Application, so rules should judge it as such (and the pipeline group it with the app).
pub fn adopt(r: &Resource, app: &str) -> Resource {
    let mut copy = r.clone();
    let tracking = format!(
        "{app}:{}/{}:{}/{}",
        r.group,
        r.kind,
        r.namespace.as_deref().unwrap_or_default(),
        r.name
    );
    if let Some(metadata) = copy.raw.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(map) = annotations.as_object_mut() {
            map.insert(TRACKING_ID.into(), Value::from(tracking));
        }
    }
    copy
}

/// A copy of a stand-in without its tracking id (see [`Owner::tracked`]).
pub fn without_tracking(r: &Resource) -> Resource {
    let mut copy = r.clone();
    if let Some(annotations) = copy
        .raw
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(TRACKING_ID);
    }
    copy
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// An Application builder for tests: name, destination and `status.resources`.
    pub(crate) struct AppBuilder {
        value: Value,
    }

    impl AppBuilder {
        pub(crate) fn new(name: &str) -> Self {
            Self {
                value: json!({
                    "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                    "metadata": {"name": name, "namespace": "argocd", "uid": format!("uid-{name}")},
                    "spec": {"destination": {"namespace": name}},
                    "status": {"resources": []}
                }),
            }
        }

        pub(crate) fn in_namespace(mut self, ns: &str) -> Self {
            self.value["metadata"]["namespace"] = json!(ns);
            self
        }

        pub(crate) fn lists(mut self, entry: Value) -> Self {
            if let Some(list) = self.value["status"]["resources"].as_array_mut() {
                list.push(entry);
            }
            self
        }

        pub(crate) fn build(self) -> Value {
            self.value
        }
    }

    fn external_secret_entry() -> Value {
        json!({"group": "external-secrets.io", "version": "v1beta1", "kind": "ExternalSecret",
               "namespace": "orders", "name": "db-credentials", "syncWave": 2})
    }

    fn hook_entry() -> Value {
        json!({"group": "batch", "version": "v1", "kind": "Job", "namespace": "orders",
               "name": "db-migrate", "hook": true})
    }

    #[test]
    fn live_objects_lose_server_bookkeeping_but_keep_what_rules_read() {
        let live = LiveObject::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "orders", "uid": "u-1", "resourceVersion": "9",
                         "creationTimestamp": "2026-11-30T00:00:00Z", "generation": 3,
                         "managedFields": [{"manager": "argocd-controller"}],
                         "annotations": {LAST_APPLIED: "{}", SYNC_WAVE: "2"}},
            "data": {"a": "1"},
            "status": {"whatever": true}
        }))
        .unwrap();
        assert_eq!(live.uid.as_deref(), Some("u-1"));
        assert!(!live.controlled);
        let metadata = live.resource.raw["metadata"].as_object().unwrap();
        let mut keys: Vec<&str> = metadata.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, vec!["annotations", "name", "namespace"]);
        assert_eq!(live.resource.annotation(SYNC_WAVE), Some("2"));
        assert!(live.resource.annotation(LAST_APPLIED).is_none());
        assert!(live.resource.raw.get("status").is_none());
        assert_eq!(live.resource.raw["data"]["a"], "1");
    }

    #[test]
    fn a_load_balancer_service_keeps_its_status_and_owned_objects_are_marked_controlled() {
        let svc = LiveObject::from_value(json!({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}
        }))
        .unwrap();
        assert_eq!(
            svc.resource.raw["status"]["loadBalancer"]["ingress"][0]["ip"],
            "10.0.0.1"
        );
        let pod = LiveObject::from_value(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "x", "controller": true}]}
        }))
        .unwrap();
        assert!(pod.controlled);
    }

    #[test]
    fn a_stand_in_carries_identity_wave_and_tracking_so_the_plan_places_it() {
        let app = Application::from_value(
            &AppBuilder::new("orders")
                .lists(external_secret_entry())
                .lists(hook_entry())
                .build(),
        )
        .unwrap();
        let stand_ins: Vec<Resource> = app
            .status
            .resources
            .iter()
            .filter_map(|s| stand_in(&app.name, s))
            .collect();
        assert_eq!(stand_ins.len(), 1, "hooks get no stand-in");
        let es = &stand_ins[0];
        assert_eq!(es.api_version, "external-secrets.io/v1beta1");
        assert_eq!(es.namespace.as_deref(), Some("orders"));
        let facts = SyncFacts::of(es);
        assert_eq!(facts.wave, 2);
        assert_eq!(facts.tracking.app_name(), Some("orders"));
        assert!(!facts.is_hook);
    }

    #[test]
    fn owners_are_found_by_tracking_id_instance_label_or_membership() {
        let apps = [
            AppBuilder::new("orders")
                .lists(external_secret_entry())
                .lists(hook_entry())
                .build(),
            AppBuilder::new("blog").in_namespace("team-a").build(),
        ];
        let index = AppIndex::build(apps.iter());
        assert_eq!(index.len(), 2);
        let res = |v: Value| Resource::from_value(v, None).unwrap();

        let tracked = res(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "annotations": {TRACKING_ID: "team-a_blog:/ConfigMap:blog/c"}}}));
        assert_eq!(index.owner_of(&tracked).unwrap().entry.live.name, "blog");
        let labelled = res(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app.kubernetes.io/instance": "orders"}}}));
        assert!(index.owner_of(&labelled).unwrap().tracked);
        let listed = res(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "db-migrate", "namespace": "orders"}}));
        let owner = index.owner_of(&listed).unwrap();
        assert_eq!(owner.entry.live.name, "orders");
        assert!(!owner.tracked);
        let adopted = adopt(&listed, "orders");
        assert_eq!(SyncFacts::of(&adopted).tracking.app_name(), Some("orders"));
        let es = &owner.entry.stand_ins()[0];
        assert!(
            SyncFacts::of(&without_tracking(es))
                .tracking
                .app_name()
                .is_none()
        );
        let stranger = res(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "other", "namespace": "orders"}}));
        assert!(index.owner_of(&stranger).is_none());
        let unknown_app = res(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app.kubernetes.io/instance": "nope"}}}));
        assert!(index.owner_of(&unknown_app).is_none());
    }

    #[test]
    fn the_application_member_has_its_spec_but_not_its_status() {
        let index = AppIndex::build(
            [AppBuilder::new("orders")
                .lists(external_secret_entry())
                .build()]
            .iter(),
        );
        let entry = index.by_instance("orders").unwrap();
        assert!(entry.application.raw.get("status").is_none());
        assert_eq!(
            entry.application.raw["spec"]["destination"]["namespace"],
            "orders"
        );
        let es_key = ObjectKey::new(
            "external-secrets.io",
            "ExternalSecret",
            "orders",
            "db-credentials",
        );
        assert!(entry.stand_ins_except(|k| *k == es_key).is_empty());
        assert_eq!(entry.stand_ins_except(|_| false).len(), 1);
    }
}
