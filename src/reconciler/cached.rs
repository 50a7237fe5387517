//! An Argo CD Application as the watch caches keep it: the reconciler's controller store and the
//! `serve --cluster` index.
//!
//! Argo CD's CRD is not in k8s-openapi, so the caches used to keep each Application as a
//! `DynamicObject`: the served JSON as a tree of `serde_json::Value`s (pruned to what the readers
//! use), parsed again into [`Application`] on every reconcile or index rebuild. At 10,000
//! Applications × 50 `status.resources` that tree was most of both processes' memory
//! (BENCHMARKS.md "Scale"). [`CachedApplication`] is read once, when the watch delivers the
//! object: its [`Deserialize`] reads the JSON into a transient `Value`, prunes it to the
//! [`View`]'s [`Keep`], parses the typed [`AppEntry`] and drops the tree. The cache then holds
//! the typed view only, shared (`Arc`) with every reader.
//!
//! The view is chosen by type ([`ForIndex`], [`ForDiagnosis`]) because a watch's items are
//! deserialized without any context. An object that is not a readable Application (no name, a
//! malformed `apiVersion`) still deserializes — one bad object must not fail the list that
//! carries it — with no entry; readers skip it.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::core::NamespaceResourceScope;
use kube::runtime::reflector::Store;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::application::{self, Application, GROUP, KIND, Keep, VERSION};
use super::live::AppEntry;

/// Which parts of an Application a cache keeps ([`Keep`]), as a type.
pub trait View: Send + Sync + 'static {
    /// What is kept.
    const KEEP: Keep;
}

/// The `serve --cluster` index: `spec`, `status.resources`, sync and health.
#[derive(Debug, Clone, Copy)]
pub struct ForIndex;

impl View for ForIndex {
    const KEEP: Keep = Keep::Index;
}

/// The reconciler's diagnosis (SG501–SG503): also the operation state and the history.
#[derive(Debug, Clone, Copy)]
pub struct ForDiagnosis;

impl View for ForDiagnosis {
    const KEEP: Keep = Keep::Diagnosis;
}

/// An Application as the reconciler's controller store keeps it (what the diagnosis reads).
pub type WatchedApplication = CachedApplication<ForDiagnosis>;

/// The controller's stores of watched Applications (one per watched namespace, or one for
/// all), published once the controller has made them so that the audit reads the Applications
/// from them instead of listing every Application again on every pass.
#[derive(Debug)]
pub struct SharedApplications {
    stores: std::sync::OnceLock<Vec<Store<WatchedApplication>>>,
    /// Set by the controller once every store has completed its first list. Not the stores'
    /// own readiness: that is a single-waiter one-shot in kube-runtime 5, and a second waiter
    /// takes the wake-up from the first (the controller's readiness task polls it for that
    /// reason and says so here).
    ready: tokio::sync::watch::Sender<bool>,
}

impl Default for SharedApplications {
    fn default() -> Self {
        Self {
            stores: std::sync::OnceLock::new(),
            ready: tokio::sync::watch::channel(false).0,
        }
    }
}

impl SharedApplications {
    /// Publishes the controller's stores (the first call wins).
    pub fn publish(&self, stores: Vec<Store<WatchedApplication>>) {
        let _ = self.stores.set(stores);
    }

    /// Every published store has completed its first list.
    pub fn mark_ready(&self) {
        self.ready.send_replace(true);
    }

    /// Every readable Application in the stores once they are ready, waiting at most
    /// `patience` for that; `None` when no controller published its stores or they are not
    /// ready in time (the caller then lists the Applications itself).
    pub async fn entries(&self, patience: std::time::Duration) -> Option<Vec<Arc<AppEntry>>> {
        let stores = self.stores.get()?;
        let mut ready = self.ready.subscribe();
        tokio::time::timeout(patience, ready.wait_for(|r| *r))
            .await
            .ok()?
            .ok()?;
        Some(
            stores
                .iter()
                .flat_map(Store::state)
                .filter_map(|app| app.entry().cloned())
                .collect(),
        )
    }
}

/// One Application as a cache keeps it: the identity metadata the reflector and the controller
/// key it by, and the typed view (`None` when the object is not a readable Application).
pub struct CachedApplication<V> {
    metadata: ObjectMeta,
    entry: Option<Arc<AppEntry>>,
    view: PhantomData<V>,
}

impl<V> Clone for CachedApplication<V> {
    fn clone(&self) -> Self {
        Self {
            metadata: self.metadata.clone(),
            entry: self.entry.clone(),
            view: PhantomData,
        }
    }
}

impl<V> fmt::Debug for CachedApplication<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedApplication")
            .field("namespace", &self.metadata.namespace)
            .field("name", &self.metadata.name)
            .field("resource_version", &self.metadata.resource_version)
            .field("readable", &self.entry.is_some())
            .finish()
    }
}

impl<V: View> CachedApplication<V> {
    /// Reads an Application as served (a watch event, a list item, a test fixture).
    pub fn from_value(mut value: Value) -> Self {
        if let Some(map) = value.as_object_mut() {
            // List responses may omit an item's apiVersion/kind; the watch is over
            // Applications only.
            map.entry("apiVersion")
                .or_insert_with(|| format!("{GROUP}/{VERSION}").into());
            map.entry("kind").or_insert_with(|| KIND.into());
        }
        application::prune_value(&mut value, V::KEEP);
        let metadata = identity(&value);
        let entry = AppEntry::from_value(&value).map(Arc::new);
        Self {
            metadata,
            entry,
            view: PhantomData,
        }
    }

    /// The typed view, `None` for an object that is not a readable Application.
    pub fn entry(&self) -> Option<&Arc<AppEntry>> {
        self.entry.as_ref()
    }

    /// The parsed Application.
    pub fn live(&self) -> Option<&Application> {
        self.entry.as_deref().map(|e| &e.live)
    }
}

/// The metadata the reflector, the controller's object references and the cache's change
/// detection read: name, namespace, uid, resourceVersion, creation and deletion times.
fn identity(value: &Value) -> ObjectMeta {
    let meta = &value["metadata"];
    let text = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_string);
    let time = |k: &str| {
        meta.get(k)
            .cloned()
            .and_then(|v| serde_json::from_value::<Time>(v).ok())
    };
    ObjectMeta {
        name: text("name"),
        namespace: text("namespace"),
        uid: text("uid"),
        resource_version: text("resourceVersion"),
        creation_timestamp: time("creationTimestamp"),
        deletion_timestamp: time("deletionTimestamp"),
        ..ObjectMeta::default()
    }
}

impl<'de, V: View> Deserialize<'de> for CachedApplication<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from_value)
    }
}

impl<V: View> kube::Resource for CachedApplication<V> {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        KIND.into()
    }

    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }

    fn version(_: &()) -> Cow<'_, str> {
        VERSION.into()
    }

    fn plural(_: &()) -> Cow<'_, str> {
        "applications".into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use kube::Resource as _;
    use serde_json::json;

    fn served() -> Value {
        json!({
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": {
                "name": "orders", "namespace": "argocd", "uid": "u-1", "resourceVersion": "42",
                "creationTimestamp": "2026-11-30T01:00:00Z",
                "managedFields": [{"manager": "argocd-controller"}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
            },
            "spec": {"project": "default", "destination": {"namespace": "orders"}},
            "status": {
                "sync": {"status": "Synced", "revision": "abc", "comparedTo": {"source": {}}},
                "health": {"status": "Healthy"},
                "resources": [{"group": "batch", "version": "v1", "kind": "Job",
                               "namespace": "orders", "name": "db-migrate", "hook": true}],
                "operationState": {"phase": "Running", "startedAt": "2026-11-30T02:00:00Z"},
                "history": [{"id": 1, "revision": "abc", "deployedAt": "2026-11-30T01:30:00Z",
                             "source": {"repoURL": "https://git.example.com/x.git"}}]
            }
        })
    }

    #[test]
    fn a_list_item_is_read_once_into_the_typed_view_of_its_cache() {
        // A list item without apiVersion/kind, as list responses may serve them.
        let mut item = served();
        item.as_object_mut().unwrap().remove("apiVersion");
        item.as_object_mut().unwrap().remove("kind");
        let text = serde_json::to_string(&item).unwrap();

        let diag: CachedApplication<ForDiagnosis> = serde_json::from_str(&text).unwrap();
        let live = diag.live().unwrap();
        assert_eq!(live.name, "orders");
        assert_eq!(
            live.status.sync,
            Some(crate::model::phase::SyncStatus::Synced)
        );
        assert_eq!(live.status.resources.len(), 1);
        assert_eq!(
            live.status.operation.as_ref().unwrap().phase,
            Some(crate::model::phase::OperationPhase::Running)
        );
        assert_eq!(live.status.history.len(), 1);
        assert_eq!(diag.meta().uid.as_deref(), Some("u-1"));
        assert_eq!(diag.meta().resource_version.as_deref(), Some("42"));
        assert!(diag.meta().managed_fields.is_none());

        let index: CachedApplication<ForIndex> = serde_json::from_str(&text).unwrap();
        let entry = index.entry().unwrap();
        assert!(
            entry.live.status.operation.is_none(),
            "the index drops the operation state"
        );
        assert!(entry.live.status.history.is_empty(), "and the history");
        assert_eq!(entry.live.status.resources.len(), 1);
        let raw = &entry.application.raw;
        assert_eq!(raw["spec"]["project"], "default");
        assert!(raw.get("status").is_none());
        assert!(raw["metadata"].get("managedFields").is_none());
        assert!(
            raw["metadata"]["annotations"]
                .get("kubectl.kubernetes.io/last-applied-configuration")
                .is_none()
        );
    }

    #[tokio::test]
    async fn the_audit_gets_the_watched_applications_once_the_controller_says_they_are_listed() {
        use kube::runtime::reflector::store::Writer;
        use kube::runtime::watcher::Event;
        use std::time::Duration;

        let shared = SharedApplications::default();
        assert!(shared.entries(Duration::from_millis(10)).await.is_none());
        let mut writer: Writer<WatchedApplication> = Writer::default();
        shared.publish(vec![writer.as_reader()]);
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(WatchedApplication::from_value(served())));
        writer.apply_watcher_event(&Event::InitDone);
        assert!(
            shared.entries(Duration::from_millis(50)).await.is_none(),
            "not before the controller has seen every store listed"
        );
        let waiting = shared.entries(Duration::from_secs(5));
        shared.mark_ready();
        let entries = waiting.await.unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].live.name, "orders");
    }

    #[test]
    fn an_unreadable_object_does_not_fail_the_list_it_came_in() {
        let list = json!([served(), {"metadata": {"namespace": "argocd"}, "spec": 3}, "junk"]);
        let read: Vec<CachedApplication<ForIndex>> = serde_json::from_value(list).unwrap();
        assert_eq!(read.len(), 3);
        assert!(read[0].entry().is_some());
        assert!(read[1].entry().is_none() && read[2].entry().is_none());
        assert_eq!(
            CachedApplication::<ForIndex>::url_path(&(), Some("argocd")),
            "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications"
        );
    }
}
