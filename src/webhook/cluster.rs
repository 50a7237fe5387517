//! `syncguard serve --cluster`: a read-only cache of Argo CD Applications, so admission-time
//! rules can judge an object inside its Application.
//!
//! A kube-runtime reflector keeps every `argoproj.io/v1alpha1` Application in memory (one watch
//! per `--app-namespace`, or one cluster-wide), read once per change into the typed view the
//! index uses ([`IndexedApplication`], see [`crate::reconciler::cached`]: no JSON tree is
//! kept). After changes settle, the cache rebuilds an
//! [`AppIndex`]: Applications by name and by the objects their `status.resources` list, with a
//! stand-in for each listed object (identity, sync wave, tracking). [`ClusterContext::objects_for`]
//! is then a hash lookup that hands out the app's prepared set (built once per Application
//! version, see [`crate::evaluate::PreparedSet`]) — never a call to the API server, so
//! a slow or unreachable API server can never slow down or block admission.
//!
//! Until the first complete list has arrived, [`ClusterContext::objects_for`] answers `None` and
//! the ordering rules (SG2xx) stay silent, exactly as without any context. Readiness of the
//! webhook does not wait for the cache: a webhook that is not ready blocks admission
//! (failurePolicy Fail) or is skipped (Ignore) — both worse than answering without context.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use futures::{FutureExt as _, StreamExt as _};
use kube::Resource as _;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};

use super::context::{AppContext, AppObjects};
use crate::evaluate::PreparedSet;
use crate::model::Resource;
use crate::reconciler::cached::{CachedApplication, ForIndex};
use crate::reconciler::install::{self, Installation};
use crate::reconciler::live::{AppEntry, AppIndex};

/// After a change to an Application, wait this long for more before rebuilding the index:
/// Argo CD rewrites an Application's status many times during a sync, and one rebuild per burst
/// is enough for a cache whose readers tolerate a second of staleness.
const REINDEX_DELAY: Duration = Duration::from_millis(500);

/// How often `serve --cluster` re-reads Argo CD's release and configuration.
const INSTALL_REFRESH: Duration = Duration::from_secs(300);

/// An Application as the cache keeps it: what the index reads (`spec`, `status.resources`,
/// sync and health), typed.
pub type IndexedApplication = CachedApplication<ForIndex>;

/// Index entries by Application (namespace, name).
type EntryCache = HashMap<(String, String), Arc<AppEntry>>;

/// The webhook's view of live Argo CD Applications. Cheap to clone (shared state).
#[derive(Clone)]
pub struct ClusterContext {
    inner: Arc<Inner>,
}

struct Inner {
    /// One reflector store per watched namespace (one in all for a cluster-wide watch): a
    /// reflector's writer must see one watch's Init/InitDone sequence, so watches are not merged
    /// into one store.
    stores: Vec<Store<IndexedApplication>>,
    /// `None` until every store has completed its first list.
    index: ArcSwap<Option<AppIndex>>,
    /// Logged once, when the cache first becomes usable.
    synced: AtomicBool,
    /// Admission sets of the Applications reviews used most recently.
    prepared: Mutex<Prepared>,
    /// The Argo CD release and configuration, once read.
    installation: ArcSwap<Option<Arc<Installation>>>,
}

/// At most this many objects are kept planned for admission across Applications (a planned
/// object costs ~8 KB: its copies, facts, tasks and references). The most recently used
/// Application is always kept, however large.
const PREPARED_OBJECTS: usize = 4096;

/// The admission sets ([`PreparedSet`]) of recently used Applications, least recent first.
/// Entries are matched by identity: a changed Application is a new entry, so a set can never
/// outlive the version it was built from (the cache holds the entry it was built from).
#[derive(Default)]
struct Prepared {
    sets: Vec<(Arc<AppEntry>, bool, Arc<PreparedSet>)>,
}

impl Prepared {
    /// The set for `entry` (tracked or not), built and remembered when missing.
    fn get(&mut self, entry: &Arc<AppEntry>, tracked: bool) -> Arc<PreparedSet> {
        if let Some(at) = self
            .sets
            .iter()
            .position(|(e, t, _)| Arc::ptr_eq(e, entry) && *t == tracked)
        {
            let hit = self.sets.remove(at);
            let set = hit.2.clone();
            self.sets.push(hit);
            return set;
        }
        let set = Arc::new(entry.admission_set(tracked));
        self.sets.push((entry.clone(), tracked, set.clone()));
        self.trim();
        set
    }

    /// After an index rebuild: sets of changed Applications are rebuilt and planned, sets of
    /// deleted ones dropped. An Application read again at the same resourceVersion (a watch
    /// that listed again) keeps its set.
    fn follow(&mut self, fresh: &EntryCache) {
        for (entry, tracked, set) in &mut self.sets {
            let key = (entry.live.namespace.clone(), entry.live.name.clone());
            if let Some(now) = fresh.get(&key)
                && !Arc::ptr_eq(now, entry)
            {
                let unchanged = now.live.resource_version.is_some()
                    && now.live.resource_version == entry.live.resource_version;
                if !unchanged {
                    let rebuilt = Arc::new(now.admission_set(*tracked));
                    rebuilt.warm();
                    *set = rebuilt;
                }
                *entry = now.clone();
            }
        }
        self.sets.retain(|(entry, _, _)| {
            fresh
                .get(&(entry.live.namespace.clone(), entry.live.name.clone()))
                .is_some_and(|now| Arc::ptr_eq(now, entry))
        });
        self.trim();
    }

    fn trim(&mut self) {
        let mut total: usize = self.sets.iter().map(|(_, _, s)| s.len()).sum();
        while total > PREPARED_OBJECTS && self.sets.len() > 1 {
            let (_, _, dropped) = self.sets.remove(0);
            total -= dropped.len();
        }
    }
}

impl std::fmt::Debug for ClusterContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterContext")
            .field("stores", &self.inner.stores.len())
            .field("synced", &self.is_synced())
            .finish_non_exhaustive()
    }
}

impl ClusterContext {
    /// A context over reflector stores that something else fills (see [`start`]). Nothing is
    /// known until [`ClusterContext::refresh`] finds every store ready.
    pub fn new(stores: Vec<Store<IndexedApplication>>) -> Self {
        Self {
            inner: Arc::new(Inner {
                stores,
                index: ArcSwap::from_pointee(None),
                synced: AtomicBool::new(false),
                prepared: Mutex::new(Prepared::default()),
                installation: ArcSwap::from_pointee(None),
            }),
        }
    }

    /// Rebuilds the index from the stores when every store has completed its first list.
    /// Returns whether the cache is usable. Never waits: a store that is not ready yet is
    /// simply reported as such.
    pub fn refresh(&self) -> bool {
        let ready = !self.inner.stores.is_empty()
            && self.inner.stores.iter().all(|s| {
                // The store's readiness is a one-shot future that is complete once the first
                // list was applied; polling it once answers "ready yet?" without waiting.
                matches!(s.wait_until_ready().now_or_never(), Some(Ok(())))
            });
        if !ready {
            return false;
        }
        // The entries were read when the watch delivered them; a rebuild only shares them.
        let apps: Vec<Arc<IndexedApplication>> =
            self.inner.stores.iter().flat_map(Store::state).collect();
        let mut fresh: EntryCache = HashMap::with_capacity(apps.len());
        for app in &apps {
            let Some(entry) = app.entry() else {
                continue;
            };
            let meta = app.meta();
            let key = (
                meta.namespace.clone().unwrap_or_default(),
                meta.name.clone().unwrap_or_default(),
            );
            fresh.insert(key, entry.clone());
        }
        let index = AppIndex::from_entries(fresh.values().cloned().collect());
        // Applications that reviews used lately are planned again now, off the request path:
        // during a sync the entry changes often, and hooks arrive meanwhile.
        self.inner
            .prepared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .follow(&fresh);
        drop(fresh);
        let count = index.len();
        self.inner.index.store(Arc::new(Some(index)));
        if !self.inner.synced.swap(true, Ordering::SeqCst) {
            tracing::info!(
                applications = count,
                "application cache synced: ordering rules (SG2xx) now see each object's Application"
            );
        }
        true
    }

    /// True once the index has been built from a complete list.
    pub fn is_synced(&self) -> bool {
        self.inner.index.load().is_some()
    }

    /// Number of Applications in the index (0 while not synced).
    pub fn len(&self) -> usize {
        self.inner
            .index
            .load()
            .as_ref()
            .as_ref()
            .map_or(0, AppIndex::len)
    }

    /// True when no Application is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl AppContext for ClusterContext {
    fn objects_for(&self, object: &Resource) -> Option<AppObjects> {
        let guard = self.inner.index.load();
        let index = guard.as_ref().as_ref()?;
        let owner = index.owner_of(object)?;
        let set = self
            .inner
            .prepared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(owner.entry, owner.tracked);
        Some(AppObjects {
            app: Some(owner.entry.live.name.clone()),
            set,
        })
    }

    fn installation(&self) -> Option<Arc<Installation>> {
        self.inner.installation.load().as_ref().clone()
    }

    fn describe(&self) -> String {
        if self.is_synced() {
            format!("live Argo CD Applications ({} known)", self.len())
        } else {
            "live Argo CD Applications (not synced yet)".to_string()
        }
    }
}

/// Starts the Application cache: returns the context at once (not synced) and the future that
/// keeps it filled — spawn it. `namespaces` empty watches Applications cluster-wide (RBAC:
/// `list`/`watch` on `applications.argoproj.io` cluster-wide); otherwise one watch per namespace
/// (a Role in each). The watches retry with exponential back-off, so an API server outage or
/// missing RBAC only delays the cache (and is logged); the future never ends by itself.
pub fn start(
    client: kube::Client,
    namespaces: &[String],
    argocd_namespace: &str,
) -> (ClusterContext, impl Future<Output = ()> + Send + 'static) {
    let install_client = client.clone();
    let apis: Vec<Api<IndexedApplication>> = if namespaces.is_empty() {
        vec![Api::all(client)]
    } else {
        namespaces
            .iter()
            .map(|ns| Api::namespaced(client.clone(), ns))
            .collect()
    };
    let mut stores = Vec::with_capacity(apis.len());
    let mut streams = Vec::with_capacity(apis.len());
    for api in apis {
        let writer = reflector::store::Writer::<IndexedApplication>::default();
        stores.push(writer.as_reader());
        let stream = watcher(api, watcher::Config::default().any_semantic())
            .default_backoff()
            .reflect(writer)
            .boxed();
        streams.push(stream);
    }
    let context = ClusterContext::new(stores);
    let watches = run(context.clone(), streams);
    let installation = follow_installation(
        context.clone(),
        install_client,
        argocd_namespace.to_string(),
    );
    let task = async move {
        futures::join!(watches, installation);
    };
    (context, task)
}

/// Re-reads the Argo CD installation every [`INSTALL_REFRESH`]; a release or configuration
/// change (an Argo CD upgrade) reaches the rules within that time.
async fn follow_installation(context: ClusterContext, client: kube::Client, namespace: String) {
    loop {
        let read = install::read(&client, &namespace).await;
        let previous = context.installation();
        if previous.as_deref() != Some(&read) {
            tracing::info!(
                namespace,
                version = ?read.version.map(|v| v.to_string()),
                config = ?read.config.source,
                projects = read.config.projects.len(),
                "Argo CD installation read"
            );
        }
        context
            .inner
            .installation
            .store(Arc::new(Some(Arc::new(read))));
        tokio::time::sleep(INSTALL_REFRESH).await;
    }
}

/// Drives the watches and rebuilds the index [`REINDEX_DELAY`] after the first change of a
/// burst (at once when a list completes).
async fn run(
    context: ClusterContext,
    streams: Vec<
        futures::stream::BoxStream<'static, watcher::Result<watcher::Event<IndexedApplication>>>,
    >,
) {
    let mut events = futures::stream::select_all(streams);
    let mut due: Option<tokio::time::Instant> = None;
    loop {
        let wait = async {
            match due {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            event = events.next() => match event {
                None => return,
                Some(Ok(watcher::Event::InitDone)) => {
                    refresh_off_runtime(&context).await;
                    due = None;
                }
                Some(Ok(watcher::Event::Init | watcher::Event::InitApply(_))) => {}
                Some(Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_))) => {
                    due.get_or_insert_with(|| tokio::time::Instant::now() + REINDEX_DELAY);
                }
                Some(Err(error)) => {
                    tracing::warn!(%error, "application cache: watch failed; retrying with back-off");
                }
            },
            () = wait => {
                refresh_off_runtime(&context).await;
                due = None;
            }
        }
    }
}

/// [`ClusterContext::refresh`] on a blocking thread: reading and planning changed Applications
/// takes milliseconds per large Application (hundreds on the first list), which must not hold
/// up the runtime threads that serve admission requests.
async fn refresh_off_runtime(context: &ClusterContext) {
    let context = context.clone();
    if let Err(error) = tokio::task::spawn_blocking(move || context.refresh()).await {
        tracing::warn!(%error, "application cache: the index rebuild failed");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use kube::runtime::reflector::store::Writer;
    use serde_json::json;

    fn app_json(name: &str, version: &str) -> serde_json::Value {
        json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": "argocd", "resourceVersion": version},
            "spec": {"destination": {"namespace": name}},
            "status": {"resources": [
                {"group": "", "version": "v1", "kind": "ConfigMap", "namespace": name,
                 "name": "cfg", "syncWave": 1}]}
        })
    }

    fn app_at(name: &str, version: &str) -> IndexedApplication {
        IndexedApplication::from_value(app_json(name, version))
    }

    fn app(name: &str) -> IndexedApplication {
        app_at(name, "1")
    }

    fn writer() -> Writer<IndexedApplication> {
        Writer::default()
    }

    #[test]
    fn the_cache_keeps_what_the_index_reads_and_drops_the_rest_of_the_status() {
        let full = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "shop", "namespace": "argocd",
                         "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}",
                                         "team": "payments"},
                         "managedFields": [{"manager": "argocd-server", "operation": "Update"}]},
            "spec": {"destination": {"namespace": "shop"}, "syncPolicy": {"syncOptions": ["PruneLast=true"]}},
            "status": {
                "resources": [{"version": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "cfg", "syncWave": 1}],
                "sync": {"status": "Synced", "revision": "4f2a9c1"},
                "health": {"status": "Healthy"},
                "history": [{"revision": "4f2a9c1", "id": 1}],
                "operationState": {"phase": "Succeeded", "syncResult": {"resources": []}},
                "conditions": [], "summary": {"images": ["shop:1"]}, "reconciledAt": "2026-11-30T02:00:00Z"
            }
        });
        let before = AppEntry::from_value(&full).unwrap();
        let cached: IndexedApplication = serde_json::from_value(full).unwrap();
        let after = cached.entry().unwrap();
        assert!(after.live.status.operation.is_none() && after.live.status.history.is_empty());
        let meta = &after.application.raw["metadata"];
        assert!(meta.get("managedFields").is_none());
        assert_eq!(meta["annotations"], json!({"team": "payments"}));
        // What the index reads is unchanged.
        assert_eq!(after.live.status.resources, before.live.status.resources);
        assert_eq!(after.stand_ins().len(), before.stand_ins().len());
        assert_eq!(
            after.application.raw["spec"],
            before.application.raw["spec"]
        );
        assert_eq!(after.live.status.sync, before.live.status.sync);
    }

    #[test]
    fn nothing_is_known_until_the_first_list_completes() {
        let mut w = writer();
        let ctx = ClusterContext::new(vec![w.as_reader()]);
        let cm = Resource::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "x", "labels": {"app.kubernetes.io/instance": "shop"}}}),
            None,
        )
        .unwrap();
        w.apply_watcher_event(&watcher::Event::Init);
        w.apply_watcher_event(&watcher::Event::InitApply(app("shop")));
        assert!(!ctx.refresh());
        assert!(ctx.objects_for(&cm).is_none());
        assert!(ctx.describe().contains("not synced"));

        w.apply_watcher_event(&watcher::Event::InitDone);
        assert!(ctx.refresh());
        let found = ctx.objects_for(&cm).unwrap();
        assert_eq!(found.app.as_deref(), Some("shop"));
        let kinds: Vec<&str> = found
            .set
            .objects()
            .iter()
            .map(|r| r.kind.as_str())
            .collect();
        assert_eq!(kinds, vec!["ConfigMap", "Application"]);
    }

    #[test]
    fn the_admitted_object_takes_the_place_of_its_stand_in() {
        let mut w = writer();
        let ctx = ClusterContext::new(vec![w.as_reader()]);
        w.apply_watcher_event(&watcher::Event::Init);
        w.apply_watcher_event(&watcher::Event::InitApply(app("shop")));
        w.apply_watcher_event(&watcher::Event::InitDone);
        ctx.refresh();
        let cfg = Resource::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cfg", "namespace": "shop",
                                "annotations": {"argocd.argoproj.io/sync-wave": "3"}}}),
            None,
        )
        .unwrap();
        let found = ctx.objects_for(&cfg).unwrap();
        let kinds: Vec<&str> = found
            .set
            .objects()
            .iter()
            .map(|r| r.kind.as_str())
            .collect();
        assert_eq!(kinds, vec!["ConfigMap", "Application"]);
        // The document is the admitted object's (wave 3), not the stand-in's (wave 1), and the
        // plan has one task for it, not one per copy.
        let doc = found.set.admission_input(
            &cfg,
            &crate::evaluate::AdmissionFacts::default(),
            &crate::evaluate::EvaluateOptions::default(),
        );
        assert_eq!(doc["sync"]["wave"], 3);
        assert_eq!(doc["plan"]["tasks"].as_array().unwrap().len(), 1);
        // Asking twice hands out the same prepared set.
        assert!(Arc::ptr_eq(&found.set, &ctx.objects_for(&cfg).unwrap().set));
        // A changed Application that reviews used is planned again when the index is rebuilt,
        // before the next review; the set of the old version is not handed out any more.
        // The same version listed again (a watch that re-listed) keeps its prepared set.
        w.apply_watcher_event(&watcher::Event::Apply(app("shop")));
        ctx.refresh();
        assert!(Arc::ptr_eq(&found.set, &ctx.objects_for(&cfg).unwrap().set));
        let changed = app_at("shop", "2");
        w.apply_watcher_event(&watcher::Event::Apply(changed));
        ctx.refresh();
        let again = ctx.objects_for(&cfg).unwrap().set;
        assert!(!Arc::ptr_eq(&found.set, &again));
        assert!(again.views_built() > 0);
    }

    #[test]
    fn a_changed_application_is_read_again_on_refresh() {
        let mut w = writer();
        let ctx = ClusterContext::new(vec![w.as_reader()]);
        w.apply_watcher_event(&watcher::Event::Init);
        w.apply_watcher_event(&watcher::Event::InitApply(app("shop")));
        w.apply_watcher_event(&watcher::Event::InitDone);
        assert!(ctx.refresh());
        let cm = Resource::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "x", "labels": {"app.kubernetes.io/instance": "shop"}}}),
            None,
        )
        .unwrap();
        assert_eq!(ctx.objects_for(&cm).unwrap().set.len(), 2);

        let mut emptied = app_json("shop", "2");
        emptied["status"]["resources"] = json!([]);
        w.apply_watcher_event(&watcher::Event::Apply(IndexedApplication::from_value(
            emptied,
        )));
        assert!(ctx.refresh());
        assert_eq!(ctx.objects_for(&cm).unwrap().set.len(), 1);

        w.apply_watcher_event(&watcher::Event::Delete(app("shop")));
        assert!(ctx.refresh());
        assert!(ctx.objects_for(&cm).is_none());
    }

    #[test]
    fn prepared_sets_are_bounded_by_objects_and_keep_the_latest() {
        let big = |name: &str| -> Arc<AppEntry> {
            let resources: Vec<serde_json::Value> = (0..PREPARED_OBJECTS / 2 + 10)
                .map(|i| {
                    json!({"group": "", "version": "v1", "kind": "ConfigMap",
                                "namespace": name, "name": format!("cfg-{i}")})
                })
                .collect();
            let value = json!({
                "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": name, "namespace": "argocd"},
                "spec": {"destination": {"namespace": name}},
                "status": {"resources": resources}
            });
            Arc::new(AppEntry::from_value(&value).unwrap())
        };
        let (a, b) = (big("a"), big("b"));
        let mut prepared = Prepared::default();
        let first = prepared.get(&a, true);
        assert!(Arc::ptr_eq(&first, &prepared.get(&a, true)));
        prepared.get(&a, false);
        // Two large Applications do not fit: the least recent sets go, the latest stays.
        prepared.get(&b, true);
        assert_eq!(prepared.sets.len(), 1);
        assert!(Arc::ptr_eq(&prepared.sets[0].0, &b));
        // A huge Application alone is still kept.
        assert_eq!(prepared.get(&b, true).len(), PREPARED_OBJECTS / 2 + 11);
    }

    #[test]
    fn a_context_without_stores_never_syncs() {
        let ctx = ClusterContext::new(Vec::new());
        assert!(!ctx.refresh());
        assert!(ctx.is_empty());
    }
}
