//! Ending a stuck sync operation for a proven cause — opt-in, per Application or by default.
//!
//! Argo CD waits for a running hook with no timeout of its own (its controller-wide
//! `controller.sync.timeout.seconds` is off by default and counts per retry), and a fixing commit
//! cannot replace an automated sync that is still running. Teams end such operations by hand
//! (`argocd app terminate-op`) or with CronJobs that terminate blindly. The reconciler already
//! knows *why* a sync is stuck (SG501); here it ends the operation only when
//!
//! - the Application opts in ([`TERMINATE_ANNOTATION`] with a duration, or `--terminate-after`
//!   as a default that the annotation `off` opts out of),
//! - the operation has been `Running` at least that long,
//! - the step it waits for certainly cannot make progress ([`super::stuck::certain_stall`]: a hook
//!   whose pod cannot pull its image, crash-loops, cannot be scheduled, or needs a Secret or
//!   ConfigMap that nothing creates before it), and
//! - that same cause has been seen for [`confirm_for`] the threshold (a registry blip that
//!   shows one `ErrImagePull` is not a stall).
//!
//! The write is the one Argo CD's own terminate makes (argo-cd v3.6.1
//! `server/application.TerminateOperation`): read the Application, set
//! `status.operationState.phase` to `Terminating`, update the whole object (Applications have no
//! status subresource), and on a conflict read again and retry, ten times at most, 100 ms apart.
//! Argo CD's controller then stops the operation and marks it `Failed`; the next sync (a fixing
//! commit, a manual sync) can run. Before writing, the fresh object must still be the operation
//! that was diagnosed (same start time, still `Running`): an operation that ended or was
//! replaced meanwhile is left alone.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::Value;
use time::OffsetDateTime;

use super::application::{self, Application, TERMINATE_ANNOTATION};
use super::diagnosis::{STUCK_SYNC, human_duration};
use super::error::{Error, Result};
use super::events::Announcement;
use super::stuck::Stall;
use crate::config::Notes;
use crate::config::status::ApplicationStatus;
use crate::model::phase::OperationPhase;

/// `--terminate`: whether the reconciler ends stuck operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Mode {
    /// Never (the default): SG501 only reports.
    #[default]
    Off,
    /// Decide as `on` would, and write an Event and a metric saying what would have been done;
    /// the Application is never written.
    #[value(name = "dry-run")]
    DryRun,
    /// End the operation as `argocd app terminate-op` does.
    On,
}

/// How long a stall must be seen unchanged before it is acted on: a minute, or half the
/// threshold when that is shorter.
pub fn confirm_for(threshold: Duration) -> Duration {
    (threshold / 2).min(Duration::from_secs(60))
}

/// The termination threshold that applies to one Application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Threshold {
    /// Not enabled for this Application.
    Off,
    /// End a stuck operation once it has run this long; `from_annotation` says where it came
    /// from (for the Event).
    After {
        /// The threshold.
        after: Duration,
        /// Set by the Application's annotation (else the configured default).
        from_annotation: bool,
    },
    /// The annotation cannot be read: nothing is done, and the reason is logged.
    Invalid(String),
}

/// Reads [`TERMINATE_ANNOTATION`] (`30m`, `1h`, `off`), falling back to `default`.
pub fn threshold(app: &Application, default: Option<Duration>) -> Threshold {
    match app.annotations.get(TERMINATE_ANNOTATION).map(|v| v.trim()) {
        Some("off" | "false" | "never") => Threshold::Off,
        Some(value) => match crate::duration::parse_duration(value) {
            Ok(after) if after.is_zero() => Threshold::Invalid(format!(
                "{TERMINATE_ANNOTATION}: {value:?} is zero; use a duration such as 30m, or off"
            )),
            Ok(after) => Threshold::After {
                after,
                from_annotation: true,
            },
            Err(e) => Threshold::Invalid(format!("{TERMINATE_ANNOTATION}: {e}")),
        },
        None => match default {
            Some(after) if !after.is_zero() => Threshold::After {
                after,
                from_annotation: false,
            },
            _ => Threshold::Off,
        },
    }
}

impl Threshold {
    /// When the reconciler starts looking at a Running operation for this threshold: early
    /// enough that a stall confirmed from then on can be acted on right at the threshold.
    pub fn watch_from(&self) -> Option<Duration> {
        match self {
            Threshold::After { after, .. } => Some(after.saturating_sub(confirm_for(*after))),
            Threshold::Off | Threshold::Invalid(_) => None,
        }
    }
}

/// What to do about one Running operation now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Nothing: the operation may still progress (or is not stuck long enough); the reason.
    Leave(String),
    /// A certain stall, not yet old or confirmed enough: look again after this long.
    Wait(Duration),
    /// End it (or, in a dry run, say so).
    Terminate,
}

/// The decision over data: `running` is how long the operation has run, `stall` the
/// diagnosis, `seen_for` how long the same stall has been seen.
pub fn decide(
    running: Duration,
    after: Duration,
    stall: std::result::Result<&Stall, &str>,
    seen_for: Duration,
) -> Decision {
    if let Err(why) = stall {
        return Decision::Leave(why.to_string());
    }
    let to_threshold = after.saturating_sub(running);
    let to_confirmed = confirm_for(after).saturating_sub(seen_for);
    let wait = to_threshold.max(to_confirmed);
    if wait.is_zero() {
        Decision::Terminate
    } else {
        Decision::Wait(wait)
    }
}

/// The stalls seen per Application (key: uid): the cause's fingerprint, when it was first seen,
/// and whether it was acted on — so a cause is confirmed over time and acted on once.
#[derive(Debug, Default)]
pub struct Stalls {
    seen: Mutex<HashMap<String, Seen>>,
}

#[derive(Debug, Clone)]
struct Seen {
    fingerprint: String,
    since: OffsetDateTime,
    acted: bool,
}

impl Stalls {
    /// Records that `fingerprint` is the stall of `app` now; returns how long it has been seen
    /// unchanged and whether it was acted on already.
    pub fn observe(&self, app: &str, fingerprint: &str, now: OffsetDateTime) -> (Duration, bool) {
        let Ok(mut seen) = self.seen.lock() else {
            return (Duration::ZERO, true);
        };
        let entry = seen.entry(app.to_string()).or_insert_with(|| Seen {
            fingerprint: fingerprint.to_string(),
            since: now,
            acted: false,
        });
        if entry.fingerprint != fingerprint {
            *entry = Seen {
                fingerprint: fingerprint.to_string(),
                since: now,
                acted: false,
            };
        }
        let age = Duration::try_from(now - entry.since).unwrap_or_default();
        (age, entry.acted)
    }

    /// Marks the current stall of `app` as acted on.
    pub fn acted(&self, app: &str) {
        if let Ok(mut seen) = self.seen.lock()
            && let Some(entry) = seen.get_mut(app)
        {
            entry.acted = true;
        }
    }

    /// Forgets `app`'s stall (its operation progresses or ended).
    pub fn clear(&self, app: &str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(app);
        }
    }

    /// Forgets every Application not in `live`.
    pub fn forget_missing(&self, live: &HashSet<String>) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.retain(|k, _| live.contains(k));
        }
    }
}

/// What the write found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// `status.operationState.phase` is now `Terminating`.
    Terminated,
    /// The operation ended or was replaced before the write; nothing was written. The reason.
    Changed(String),
}

/// How many times a conflicting update is retried (Argo CD's own terminate: 10, 100 ms apart).
pub const MAX_ATTEMPTS: usize = 10;
const RETRY_PAUSE: Duration = Duration::from_millis(100);

fn applications(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(application::GROUP, application::VERSION, application::KIND);
    Api::namespaced_with(client.clone(), namespace, &ApiResource::from_gvk(&gvk))
}

/// Whether `fresh` (the Application as just read) still runs the operation diagnosed, which
/// started at `started`: `Err(reason)` when not.
fn still_the_diagnosed_operation(
    fresh: &Value,
    started: Option<OffsetDateTime>,
) -> std::result::Result<(), String> {
    if fresh.get("operation").is_none_or(Value::is_null) {
        return Err("no operation is in progress any more".into());
    }
    let status = ApplicationStatus::read(fresh.get("status"), &mut Notes::default());
    let op = status.operation.as_ref();
    match op.and_then(|o| o.phase) {
        Some(OperationPhase::Running) => {}
        Some(phase) => return Err(format!("the operation is {phase} now")),
        None => return Err("the operation has no phase Argo CD writes".into()),
    }
    if op.and_then(|o| o.started_at) != started {
        return Err("a new operation has started".into());
    }
    Ok(())
}

/// Sets the operation of `app` to `Terminating` exactly as Argo CD's terminate does, if it is
/// still the Running operation that started at `app`'s `startedAt`.
pub async fn terminate_operation(client: &kube::Client, app: &Application) -> Result<Written> {
    let api = applications(client, &app.namespace);
    let started = app.status.operation.as_ref().and_then(|o| o.started_at);
    let what = || {
        format!(
            "terminate the operation of application {}",
            app.display_name()
        )
    };
    for _ in 0..MAX_ATTEMPTS {
        let Some(mut fresh) = api
            .get_opt(&app.name)
            .await
            .map_err(|e| Error::kube(what(), e))?
        else {
            return Ok(Written::Changed("the Application is gone".into()));
        };
        if fresh.metadata.uid != app.uid {
            return Ok(Written::Changed("the Application was replaced".into()));
        }
        if let Err(reason) = still_the_diagnosed_operation(&fresh.data, started) {
            return Ok(Written::Changed(reason));
        }
        if let Some(phase) = fresh.data.pointer_mut("/status/operationState/phase") {
            *phase = Value::String(OperationPhase::Terminating.as_str().into());
        }
        match api.replace(&app.name, &PostParams::default(), &fresh).await {
            Ok(_) => return Ok(Written::Terminated),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                tracing::info!(app = %app.display_name(),
                    "conflict while terminating the operation; reading the Application again");
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Err(e) => return Err(Error::kube(what(), e)),
        }
    }
    Err(Error::Conflict(format!(
        "{}: {MAX_ATTEMPTS} update conflicts in a row",
        what()
    )))
}

/// The Event saying what was (or, in a dry run, would have been) done and why.
pub fn announcement(
    app: &Application,
    stall: &Stall,
    threshold: &Threshold,
    running: Duration,
    mode: Mode,
) -> Announcement {
    let (after, source) = match threshold {
        Threshold::After {
            after,
            from_annotation: true,
        } => (*after, format!("annotation {TERMINATE_ANNOTATION}")),
        Threshold::After { after, .. } => (*after, "the reconciler's --terminate-after".into()),
        Threshold::Off | Threshold::Invalid(_) => (Duration::ZERO, "none".into()),
    };
    let done = match mode {
        Mode::DryRun => "Would terminate (dry run: nothing was written)",
        Mode::On | Mode::Off => "Terminated",
    };
    let note = format!(
        "{done} the sync operation of Application {} after {} (threshold {} from {source}): \
         {} cannot make progress — {}. Argo CD marks the operation Failed; the next sync (a \
         fixing commit, or argocd app sync {}) can run.",
        app.display_name(),
        human_duration(running),
        human_duration(after),
        stall.hook,
        stall.detail,
        app.name
    );
    Announcement {
        rule: STUCK_SYNC,
        reason: match mode {
            Mode::DryRun => "StuckSyncWouldTerminate",
            Mode::On | Mode::Off => "StuckSyncTerminated",
        },
        action: "Terminate",
        fingerprint: format!("terminate|{}", stall.fingerprint),
        note,
    }
}

/// Whether `certain_stall` should be consulted at all for `app` now: enabled, and
/// the operation has run long enough to start watching.
pub fn watching(app: &Application, threshold: &Threshold, now: OffsetDateTime) -> bool {
    match (threshold.watch_from(), app.status.running_for(now)) {
        (Some(from), Some(running)) => running >= from,
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::status::parse_time;
    use crate::reconciler::fixtures::AppBuilder;
    use crate::reconciler::stuck::StallCause;
    use serde_json::json;

    const MIN: Duration = Duration::from_secs(60);

    fn stall() -> Stall {
        Stall {
            cause: StallCause::ImagePull,
            hook: "PreSync Job orders/db-migrate".into(),
            detail: "its pod db-migrate-x is in ImagePullBackOff".into(),
            fingerprint: "batch/Job/db-migrate|image_pull|ImagePullBackOff|".into(),
        }
    }

    #[test]
    fn the_annotation_opts_in_opts_out_and_bad_values_do_nothing() {
        let app = |v: Option<&str>| {
            let mut b = AppBuilder::new("shop");
            if let Some(v) = v {
                b = b.annotation(TERMINATE_ANNOTATION, v);
            }
            b.live()
        };
        assert_eq!(threshold(&app(None), None), Threshold::Off);
        assert_eq!(
            threshold(&app(None), Some(30 * MIN)),
            Threshold::After {
                after: 30 * MIN,
                from_annotation: false
            }
        );
        assert_eq!(
            threshold(&app(Some("45m")), Some(30 * MIN)),
            Threshold::After {
                after: 45 * MIN,
                from_annotation: true
            }
        );
        assert_eq!(threshold(&app(Some("off")), Some(30 * MIN)), Threshold::Off);
        let Threshold::Invalid(why) = threshold(&app(Some("30")), None) else {
            panic!("a bare number must not be guessed")
        };
        assert!(why.contains(TERMINATE_ANNOTATION) && why.contains("missing unit"));
        assert!(matches!(
            threshold(&app(Some("0s")), None),
            Threshold::Invalid(_)
        ));
    }

    #[test]
    fn a_stall_is_acted_on_only_past_the_threshold_and_once_confirmed() {
        let s = stall();
        // Below the threshold: wait until it (the confirmation is already long enough).
        assert_eq!(
            decide(20 * MIN, 30 * MIN, Ok(&s), 5 * MIN),
            Decision::Wait(10 * MIN)
        );
        // Past the threshold but just seen: wait for the confirmation (a minute).
        assert_eq!(
            decide(40 * MIN, 30 * MIN, Ok(&s), Duration::from_secs(20)),
            Decision::Wait(Duration::from_secs(40))
        );
        assert_eq!(decide(40 * MIN, 30 * MIN, Ok(&s), MIN), Decision::Terminate);
        // A short threshold confirms in half of it.
        assert_eq!(
            confirm_for(Duration::from_secs(20)),
            Duration::from_secs(10)
        );
        // A step that may progress is left alone however long it runs.
        assert_eq!(
            decide(10 * 60 * MIN, 30 * MIN, Err("its pod is Running"), 60 * MIN),
            Decision::Leave("its pod is Running".into())
        );
    }

    #[test]
    fn a_changed_cause_starts_the_confirmation_again_and_acting_is_remembered() {
        let stalls = Stalls::default();
        let t0 = crate::reconciler::stuck::tests::at("2026-12-05T10:00:00Z");
        assert_eq!(stalls.observe("u1", "a", t0), (Duration::ZERO, false));
        assert_eq!(stalls.observe("u1", "a", t0 + MIN), (MIN, false));
        stalls.acted("u1");
        assert_eq!(stalls.observe("u1", "a", t0 + 2 * MIN), (2 * MIN, true));
        assert_eq!(
            stalls.observe("u1", "b", t0 + 3 * MIN),
            (Duration::ZERO, false)
        );
        stalls.forget_missing(&HashSet::new());
        assert_eq!(
            stalls.observe("u1", "b", t0 + 4 * MIN),
            (Duration::ZERO, false)
        );
    }

    #[test]
    fn only_the_diagnosed_running_operation_is_terminated() {
        let started = parse_time("2026-12-05T10:00:00Z");
        let app = |phase: &str, at: &str| {
            json!({"operation": {"sync": {}},
                   "status": {"operationState": {"phase": phase, "startedAt": at}}})
        };
        assert_eq!(
            still_the_diagnosed_operation(&app("Running", "2026-12-05T10:00:00Z"), started),
            Ok(())
        );
        assert!(
            still_the_diagnosed_operation(&app("Failed", "2026-12-05T10:00:00Z"), started)
                .unwrap_err()
                .contains("Failed")
        );
        assert!(
            still_the_diagnosed_operation(&app("Running", "2026-12-05T10:30:00Z"), started)
                .unwrap_err()
                .contains("new operation")
        );
        let no_op = json!({"status": {"operationState": {"phase": "Running"}}});
        assert!(still_the_diagnosed_operation(&no_op, started).is_err());
    }

    #[test]
    fn the_event_names_the_cause_the_threshold_its_source_and_what_was_done() {
        let app = AppBuilder::new("orders").live();
        let t = Threshold::After {
            after: 30 * MIN,
            from_annotation: true,
        };
        let on = announcement(&app, &stall(), &t, 31 * MIN, Mode::On);
        assert_eq!(on.reason, "StuckSyncTerminated");
        assert!(on.note.starts_with(
            "Terminated the sync operation of Application argocd/orders after 31 min \
             (threshold 30 min from annotation syncguard.dev/terminate-stuck-after): PreSync \
             Job orders/db-migrate cannot make progress — its pod db-migrate-x is in \
             ImagePullBackOff."
        ));
        let dry = announcement(&app, &stall(), &t, 31 * MIN, Mode::DryRun);
        assert_eq!(dry.reason, "StuckSyncWouldTerminate");
        assert!(dry.note.starts_with("Would terminate (dry run"));
        assert_ne!(on.fingerprint, stall().fingerprint);
    }
}
