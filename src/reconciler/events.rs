//! Findings → Kubernetes Events on the Application, deduplicated, and the finding metrics.
//!
//! An Application is reconciled every time Argo CD touches its status (every refresh, every
//! operation tick), so the same stuck sync is diagnosed many times an hour. Re-emitting it each
//! time is the event storm peers are known for; instead a finding is emitted once per
//! (Application uid, rule, cause fingerprint) and then suppressed for `event_dedup`. The cache
//! is filled on every replica — followers record what they would have emitted — so a new
//! leader does not re-announce what the old one already said.
//!
//! Events are `events.k8s.io/v1` objects created directly (not kube-runtime's `Recorder`, whose
//! own series cache is unbounded by cause and keyed by note text, which changes every minute in
//! "has run 41 min"): `type: Warning`, `reason` = the rule's reason (`StuckSync`, `SyncLoop`,
//! `HookAccumulation`), `action: Diagnose`, `reportingController` = the field manager
//! (`syncguard`), `note` = message + fix (≤ 1 KiB).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};
use time::OffsetDateTime;

use super::application::{self, Application};
use super::context::Context;
use super::diagnosis::{LiveFinding, RULES, Rule};
use super::error::{Error, Result};
use super::state;
use crate::metrics::{ReconcilerMetrics, RuleLabels};

/// At most this many (app, rule, cause) keys are remembered; the oldest go first.
pub const MAX_REMEMBERED: usize = 50_000;

/// What happened to one finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A new Event was created.
    Emitted,
    /// The same cause was reported within the dedup period; nothing was written.
    Deduplicated,
    /// This replica is not the leader: remembered, not written.
    Follower,
    /// The Event could not be created (it will be retried on the next reconcile).
    Failed,
}

type Key = (String, &'static str, String);

/// Deduplicates findings, writes Events (leader only) and keeps the finding metrics.
#[derive(Debug)]
pub struct Emitter {
    dedup: Duration,
    controller: String,
    instance: String,
    seen: Mutex<HashMap<Key, OffsetDateTime>>,
    open: Mutex<HashMap<String, BTreeSet<&'static str>>>,
}

impl Emitter {
    /// `controller` becomes `reportingController`, `instance` `reportingInstance` (the pod).
    pub fn new(dedup: Duration, controller: &str, instance: &str) -> Self {
        let cut = |s: &str| s.chars().take(128).collect::<String>();
        Self {
            dedup,
            controller: cut(controller),
            instance: cut(instance),
            seen: Mutex::new(HashMap::new()),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Records the current findings of `app` (all rules, possibly none) and emits Events for
    /// new causes. Returns one outcome per finding.
    pub async fn report(
        &self,
        ctx: &Context,
        app: &Application,
        findings: &[LiveFinding],
        now: OffsetDateTime,
    ) -> Vec<Outcome> {
        let app_key = app_key(app);
        self.set_open(&ctx.metrics, &app_key, findings);
        let mut outcomes = Vec::with_capacity(findings.len());
        for f in findings {
            let key = (app_key.clone(), f.rule.id, f.fingerprint.clone());
            if self.is_fresh(&key, now) {
                if ctx.is_leader() {
                    ReconcilerMetrics::count(&ctx.metrics.events, "deduplicated");
                }
                outcomes.push(Outcome::Deduplicated);
                continue;
            }
            if !ctx.is_leader() {
                self.remember(key, now, &ctx.metrics, f);
                outcomes.push(Outcome::Follower);
                continue;
            }
            match self.emit(ctx, app, f, now).await {
                Ok(()) => {
                    ReconcilerMetrics::count(&ctx.metrics.events, "emitted");
                    self.remember(key, now, &ctx.metrics, f);
                    outcomes.push(Outcome::Emitted);
                }
                Err(e) => {
                    ReconcilerMetrics::count(&ctx.metrics.events, "failed");
                    tracing::warn!(app = %app.display_name(), rule = f.rule.id, error = %e,
                        "cannot create the Event; will retry on the next reconcile");
                    outcomes.push(Outcome::Failed);
                }
            }
        }
        outcomes
    }

    fn is_fresh(&self, key: &Key, now: OffsetDateTime) -> bool {
        self.seen
            .lock()
            .ok()
            .and_then(|s| s.get(key).copied())
            .is_some_and(|t| now - t < self.dedup)
    }

    fn remember(
        &self,
        key: Key,
        now: OffsetDateTime,
        metrics: &ReconcilerMetrics,
        f: &LiveFinding,
    ) {
        metrics
            .findings
            .get_or_create(&RuleLabels {
                rule: f.rule.id.to_string(),
            })
            .inc();
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        let horizon = now - self.dedup;
        if seen.len() >= MAX_REMEMBERED {
            seen.retain(|_, t| *t >= horizon);
        }
        if seen.len() >= MAX_REMEMBERED
            && let Some(oldest) = seen.iter().min_by_key(|(_, t)| **t).map(|(k, _)| k.clone())
        {
            seen.remove(&oldest);
        }
        seen.insert(key, now);
    }

    /// Seeds the deduplication from Events written earlier (by this replica before a restart,
    /// or by the previous leader): each one's cause counts as announced at its time. Events
    /// without syncguard's labels and annotations, of unknown rules, or older than the dedup
    /// period are ignored. Returns how many causes were restored.
    pub fn restore(&self, events: &[Event], now: OffsetDateTime) -> usize {
        let Ok(mut seen) = self.seen.lock() else {
            return 0;
        };
        let mut restored = 0;
        for e in events {
            let labels = e.metadata.labels.as_ref();
            let annotations = e.metadata.annotations.as_ref();
            let Some(rule) = labels
                .and_then(|l| l.get(state::LABEL_RULE))
                .and_then(|id| RULES.iter().find(|r| r.id == id.as_str()))
            else {
                continue;
            };
            let Some(fingerprint) = annotations.and_then(|a| a.get(state::ANNOTATION_FINGERPRINT))
            else {
                continue;
            };
            let Some(app) = annotations
                .and_then(|a| a.get(state::ANNOTATION_APP_UID).cloned())
                .or_else(|| e.regarding.as_ref().and_then(|r| r.uid.clone()))
            else {
                continue;
            };
            let Some(at) = event_time(e) else {
                continue;
            };
            if now - at >= self.dedup || seen.len() >= MAX_REMEMBERED {
                continue;
            }
            let key = (app, rule.id, fingerprint.clone());
            let slot = seen.entry(key).or_insert(at);
            if *slot < at {
                *slot = at;
            }
            restored += 1;
        }
        restored
    }

    /// Drops the open findings and remembered causes of Applications not in `live` (deleted).
    pub fn forget_missing(
        &self,
        metrics: &ReconcilerMetrics,
        live: &std::collections::HashSet<String>,
    ) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.retain(|(app, _, _), _| live.contains(app));
        }
        let Ok(mut open) = self.open.lock() else {
            return;
        };
        open.retain(|app, _| live.contains(app));
        Self::publish_open(metrics, &open);
    }

    /// Keeps `open_findings{rule}` = number of Applications with an open finding of the rule.
    fn set_open(&self, metrics: &ReconcilerMetrics, app_key: &str, findings: &[LiveFinding]) {
        let Ok(mut open) = self.open.lock() else {
            return;
        };
        let now: BTreeSet<&'static str> = findings.iter().map(|f| f.rule.id).collect();
        if now.is_empty() {
            open.remove(app_key);
        } else {
            open.insert(app_key.to_string(), now);
        }
        Self::publish_open(metrics, &open);
    }

    fn publish_open(metrics: &ReconcilerMetrics, open: &HashMap<String, BTreeSet<&'static str>>) {
        for rule in RULES {
            let count = open
                .values()
                .filter(|rules| rules.contains(rule.id))
                .count();
            metrics
                .open_findings
                .get_or_create(&RuleLabels {
                    rule: rule.id.to_string(),
                })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }

    async fn emit(
        &self,
        ctx: &Context,
        app: &Application,
        f: &LiveFinding,
        now: OffsetDateTime,
    ) -> Result<()> {
        self.create(ctx, app, self.event(app, f, now)).await
    }

    /// Writes an Event about something syncguard did (or, in a dry run, would do) to `app` —
    /// not deduplicated: the caller acts once per cause. Leader only, like every write.
    pub async fn announce(
        &self,
        ctx: &Context,
        app: &Application,
        what: &Announcement,
        now: OffsetDateTime,
    ) -> Result<()> {
        let mut note = what.note.clone();
        super::diagnosis::truncate(&mut note, super::diagnosis::NOTE_LIMIT);
        let event = self.build(
            app,
            EventParts {
                reason: what.reason,
                action: what.action,
                rule: what.rule.id,
                fingerprint: &what.fingerprint,
                note,
            },
            now,
        );
        self.create(ctx, app, event).await
    }

    async fn create(&self, ctx: &Context, app: &Application, event: Event) -> Result<()> {
        let api: Api<Event> = Api::namespaced(ctx.client.clone(), &app.namespace);
        let params = PostParams {
            field_manager: Some(ctx.config.field_manager.clone()),
            ..PostParams::default()
        };
        api.create(&params, &event)
            .await
            .map_err(|e| Error::kube(format!("create event in {}", app.namespace), e))?;
        Ok(())
    }

    /// The Event for one finding.
    pub fn event(&self, app: &Application, f: &LiveFinding, now: OffsetDateTime) -> Event {
        self.build(
            app,
            EventParts {
                reason: f.rule.reason,
                action: "Diagnose",
                rule: f.rule.id,
                fingerprint: &f.fingerprint,
                note: f.note(),
            },
            now,
        )
    }

    fn build(&self, app: &Application, parts: EventParts<'_>, now: OffsetDateTime) -> Event {
        let stamp = Timestamp::from_nanosecond(now.unix_timestamp_nanos())
            .unwrap_or_else(|_| Timestamp::now());
        // Unique per emission (like kubectl's `<object>.<hex time>`), within the 253-char limit.
        let base: String = app.name.chars().take(200).collect();
        let name = format!("{base}.{:x}", now.unix_timestamp_nanos());
        Event {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(app.namespace.clone()),
                // What a later writer needs to know this cause was announced (super::state).
                labels: Some(BTreeMap::from([
                    (state::LABEL_MANAGED_BY.to_string(), self.controller.clone()),
                    (state::LABEL_RULE.to_string(), parts.rule.to_string()),
                ])),
                annotations: Some(BTreeMap::from([
                    (
                        state::ANNOTATION_FINGERPRINT.to_string(),
                        parts.fingerprint.to_string(),
                    ),
                    (state::ANNOTATION_APP_UID.to_string(), app_key(app)),
                ])),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(stamp)),
            type_: Some("Warning".into()),
            reason: Some(parts.reason.into()),
            action: Some(parts.action.into()),
            note: Some(parts.note),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            regarding: Some(ObjectReference {
                api_version: Some(format!("{}/{}", application::GROUP, application::VERSION)),
                kind: Some(application::KIND.into()),
                name: Some(app.name.clone()),
                namespace: Some(app.namespace.clone()),
                uid: app.uid.clone(),
                resource_version: app.resource_version.clone(),
                field_path: None,
            }),
            ..Event::default()
        }
    }
}

/// An Event about an action syncguard took on an Application ([`Emitter::announce`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Announcement {
    /// The rule whose diagnosis led to the action.
    pub rule: Rule,
    /// The Event reason, e.g. `StuckSyncTerminated`.
    pub reason: &'static str,
    /// The Event action, e.g. `Terminate`.
    pub action: &'static str,
    /// The cause's fingerprint (kept as an annotation, like a finding's).
    pub fingerprint: String,
    /// What was done and why (cut to the note limit).
    pub note: String,
}

struct EventParts<'a> {
    reason: &'static str,
    action: &'static str,
    rule: &'static str,
    fingerprint: &'a str,
    note: String,
}

/// When an Event was written: its eventTime, else its series' last time, else its creation.
fn event_time(e: &Event) -> Option<OffsetDateTime> {
    let nanos = |t: &Timestamp| OffsetDateTime::from_unix_timestamp_nanos(t.as_nanosecond()).ok();
    e.event_time
        .as_ref()
        .and_then(|t| nanos(&t.0))
        .or_else(|| {
            e.series
                .as_ref()
                .and_then(|s| nanos(&s.last_observed_time.0))
        })
        .or_else(|| {
            e.metadata
                .creation_timestamp
                .as_ref()
                .and_then(|t| nanos(&t.0))
        })
}

fn app_key(app: &Application) -> String {
    app.uid.clone().unwrap_or_else(|| app.display_name())
}
