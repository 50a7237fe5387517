//! What the reconciler keeps in the cluster, so that a restart or a lease hand-over neither
//! re-announces an incident nor forgets a sync loop in progress.
//!
//! Two memories would otherwise live only in one process:
//!
//! - **Which findings were announced.** The Events themselves are the record: every Event
//!   syncguard writes carries the labels `app.kubernetes.io/managed-by` and
//!   [`LABEL_RULE`] and the annotations [`ANNOTATION_FINGERPRINT`] and [`ANNOTATION_APP_UID`].
//!   When a replica starts writing (first reconcile without election, every lease won), it lists
//!   those Events once ([`finding_events`]) and seeds its deduplication from them, so the same
//!   cause is not announced again within `--event-dedup`. An Event the API server has already
//!   expired (`--event-ttl`, 1 h by default) cannot be duplicated; a cause still open after
//!   that is announced again, as it would be by a process that never stopped once the dedup
//!   period ran out.
//! - **The OutOfSync flips of a loop in progress** (SG502 counts Synced → OutOfSync
//!   transitions; the finished syncs come back from `status.history` on their own). The leader
//!   writes them, for Applications with at least one flip in the loop window only, into one
//!   ConfigMap next to its Lease ([`StateStore`], `<lease name>-state`), at most every
//!   [`FLUSH_EVERY`] and only when they changed; the next writer merges them into what it saw
//!   itself ([`super::sync_loop::LoopTracker::import`]).
//!
//! Both are bounded: the Events by the API server's TTL, the ConfigMap by
//! [`MAX_PERSISTED_APPS`] entries and [`MAX_STATE_BYTES`] (the newest loops are kept).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::error::{Error, Result};

/// Label on syncguard's Events: the live rule (`SG501`…).
pub const LABEL_RULE: &str = "syncguard.dev/rule";
/// Label on syncguard's Events and its state ConfigMap.
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// Annotation on syncguard's Events: the cause fingerprint the Event announced.
pub const ANNOTATION_FINGERPRINT: &str = "syncguard.dev/fingerprint";
/// Annotation on syncguard's Events: the Application's uid (also in `regarding.uid`).
pub const ANNOTATION_APP_UID: &str = "syncguard.dev/application-uid";
/// The ConfigMap key holding the loop state.
pub const LOOPS_KEY: &str = "loops.json";
/// How often the leader writes the loop state when it changed.
pub const FLUSH_EVERY: Duration = Duration::from_secs(10);
/// At most this many Applications are kept in the ConfigMap (the most recently seen first).
pub const MAX_PERSISTED_APPS: usize = 2_000;
/// At most this many bytes of loop state (a ConfigMap holds 1 MiB; leave room).
pub const MAX_STATE_BYTES: usize = 512 * 1024;
/// Events per list page when restoring.
const EVENT_PAGE: u32 = 500;

/// Where the state ConfigMap lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateConfig {
    /// The reconciler's own namespace (the Lease's).
    pub namespace: String,
    /// The ConfigMap's name (`<lease name>-state`).
    pub name: String,
}

/// The persisted loop state: per Application uid, what SG502 needs to go on counting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopSnapshot {
    /// Format version (1).
    pub version: u32,
    /// Application uid → its loop memory.
    pub apps: BTreeMap<String, PersistedLoop>,
}

/// One Application's loop memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersistedLoop {
    /// `namespace/name`, for people reading the ConfigMap.
    #[serde(default)]
    pub app: String,
    /// Synced → OutOfSync transitions: (unix seconds, the revision it was Synced to).
    #[serde(default)]
    pub flips: Vec<(i64, Option<String>)>,
    /// The last sync status seen (so the first observation after a restart can be a flip).
    #[serde(default)]
    pub last_status: Option<String>,
    /// When it was last seen (unix seconds).
    #[serde(default)]
    pub last_seen: i64,
    /// Resources seen OutOfSync recently (the loop's suspects).
    #[serde(default)]
    pub out_of_sync: Vec<PersistedResource>,
}

/// A resource seen OutOfSync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersistedResource {
    /// API group.
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    #[serde(default)]
    pub namespace: String,
    /// Name.
    pub name: String,
    /// When it was last seen OutOfSync (unix seconds).
    pub seen: i64,
}

impl LoopSnapshot {
    /// The JSON stored in the ConfigMap, bounded to [`MAX_STATE_BYTES`]: when over, the
    /// Applications seen longest ago are left out until it fits.
    pub fn to_bounded_json(&self) -> String {
        let mut snap = self.clone();
        loop {
            let text = serde_json::to_string(&snap).unwrap_or_else(|_| "{}".into());
            if text.len() <= MAX_STATE_BYTES || snap.apps.is_empty() {
                return text;
            }
            let drop = (snap.apps.len() / 10).max(1);
            let mut by_age: Vec<(i64, String)> = snap
                .apps
                .iter()
                .map(|(k, v)| (v.last_seen, k.clone()))
                .collect();
            by_age.sort();
            for (_, k) in by_age.into_iter().take(drop) {
                snap.apps.remove(&k);
            }
        }
    }

    /// Reads the stored JSON; unknown or broken content reads as empty (a lost memory is
    /// recounted, never a reason not to run).
    pub fn parse(text: &str) -> Self {
        serde_json::from_str::<Self>(text)
            .ok()
            .filter(|s| s.version == 1)
            .unwrap_or_default()
    }
}

/// The state ConfigMap: read once per writer term, written by the leader when changed.
#[derive(Debug)]
pub struct StateStore {
    api: Api<ConfigMap>,
    config: StateConfig,
    field_manager: String,
    last_written: Mutex<Option<String>>,
}

impl StateStore {
    /// A store for `config`, writing with `field_manager`.
    pub fn new(client: kube::Client, config: StateConfig, field_manager: &str) -> Self {
        Self {
            api: Api::namespaced(client, &config.namespace),
            config,
            field_manager: field_manager.to_string(),
            last_written: Mutex::new(None),
        }
    }

    /// `namespace/name` of the ConfigMap.
    pub fn display(&self) -> String {
        format!("{}/{}", self.config.namespace, self.config.name)
    }

    /// The stored loop state (empty when the ConfigMap does not exist yet).
    pub async fn load(&self) -> Result<LoopSnapshot> {
        let cm = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|e| Error::kube(format!("get configmap {}", self.display()), e))?;
        let text = cm
            .and_then(|c| c.data)
            .and_then(|d| d.get(LOOPS_KEY).cloned())
            .unwrap_or_default();
        if let Ok(mut last) = self.last_written.lock() {
            *last = Some(text.clone());
        }
        Ok(LoopSnapshot::parse(&text))
    }

    /// Writes `snapshot` (server-side apply) unless it is what was last written or read.
    /// Returns whether a write happened.
    pub async fn save(&self, snapshot: &LoopSnapshot) -> Result<bool> {
        let text = snapshot.to_bounded_json();
        if self
            .last_written
            .lock()
            .ok()
            .is_some_and(|l| l.as_deref() == Some(text.as_str()))
        {
            return Ok(false);
        }
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self.config.name,
                "namespace": self.config.namespace,
                "labels": {LABEL_MANAGED_BY: self.field_manager},
                "annotations": {
                    "syncguard.dev/note": "syncguard reconciler state: OutOfSync flips of Applications in a sync loop (SG502), kept across restarts and lease hand-overs; safe to delete (the loops are then recounted)",
                },
            },
            "data": {LOOPS_KEY: text},
        });
        let params = PatchParams::apply(&self.field_manager).force();
        self.api
            .patch(&self.config.name, &params, &Patch::Apply(&body))
            .await
            .map_err(|e| Error::kube(format!("apply configmap {}", self.display()), e))?;
        if let Ok(mut last) = self.last_written.lock() {
            *last = Some(text);
        }
        Ok(true)
    }
}

/// Every Event syncguard wrote about Applications (in `namespaces`, or all), paginated.
pub async fn finding_events(
    client: &kube::Client,
    namespaces: &[String],
    field_manager: &str,
) -> Result<Vec<Event>> {
    let apis: Vec<Api<Event>> = if namespaces.is_empty() {
        vec![Api::all(client.clone())]
    } else {
        namespaces
            .iter()
            .map(|ns| Api::namespaced(client.clone(), ns))
            .collect()
    };
    let selector = format!("{LABEL_MANAGED_BY}={field_manager},{LABEL_RULE}");
    let mut out = Vec::new();
    for api in apis {
        let mut params = ListParams::default().labels(&selector).limit(EVENT_PAGE);
        loop {
            let page = api
                .list(&params)
                .await
                .map_err(|e| Error::kube("list syncguard's events", e))?;
            out.extend(page.items);
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => break,
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn entry(last_seen: i64, flips: usize) -> PersistedLoop {
        PersistedLoop {
            app: "argocd/shop".into(),
            flips: (0..flips)
                .map(|i| (last_seen - i as i64, Some("4f2a9c1".into())))
                .collect(),
            last_status: Some("Synced".into()),
            last_seen,
            out_of_sync: vec![PersistedResource {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
                namespace: "shop".into(),
                name: "shop".into(),
                seen: last_seen,
            }],
        }
    }

    #[test]
    fn a_snapshot_round_trips_and_broken_text_reads_as_empty() {
        let mut snap = LoopSnapshot {
            version: 1,
            ..LoopSnapshot::default()
        };
        snap.apps.insert("uid-1".into(), entry(1_700_000_000, 3));
        let text = snap.to_bounded_json();
        assert_eq!(LoopSnapshot::parse(&text), snap);
        assert_eq!(LoopSnapshot::parse("not json"), LoopSnapshot::default());
        assert_eq!(LoopSnapshot::parse(""), LoopSnapshot::default());
        // Another format version is not guessed at.
        assert_eq!(
            LoopSnapshot::parse(r#"{"version":2,"apps":{}}"#),
            LoopSnapshot::default()
        );
    }

    #[test]
    fn an_oversized_snapshot_keeps_the_most_recently_seen_applications() {
        let mut snap = LoopSnapshot {
            version: 1,
            ..LoopSnapshot::default()
        };
        // ~200 bytes per flip: 3,000 apps x 2 flips is over the 512 KiB budget.
        for i in 0..3_000i64 {
            let mut e = entry(1_700_000_000 + i, 2);
            e.app = format!("argocd/{}", "x".repeat(150));
            snap.apps.insert(format!("uid-{i:05}"), e);
        }
        let text = snap.to_bounded_json();
        assert!(text.len() <= MAX_STATE_BYTES, "{}", text.len());
        let kept = LoopSnapshot::parse(&text);
        assert!(
            kept.apps.len() < 3_000 && kept.apps.len() > 1_000,
            "{}",
            kept.apps.len()
        );
        assert!(kept.apps.contains_key("uid-02999"), "the newest is kept");
        assert!(
            !kept.apps.contains_key("uid-00000"),
            "the oldest went first"
        );
    }
}
