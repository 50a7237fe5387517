//! Argo CD's built-in health assessment, as pure functions over the live object's JSON.
//!
//! Health is what turns "applied" into "done" during a sync: a hook finishes when its health
//! says so, and a wave only moves on once every non-hook resource in it is Healthy (or has no
//! health check at all). This module reproduces the Go checks in gitops-engine's
//! `pkg/health/*.go` (spec §8) so the planner and the tick simulator can predict exactly which
//! objects block a sync, which fail it, and which never gate anything.
//!
//! Scope and deliberate limits:
//!
//! * Only the **built-in Go checks** are modelled. Argo CD's Lua checks (`resource.customizations`,
//!   the bundled `resource_customizations/` for CronJob, PDB, CRDs, many CRs) are consulted before
//!   these in Argo CD; a caller that knows about such an override must apply it itself.
//! * Argo CD converts most objects to typed Go structs before checking them, and a field of the
//!   wrong JSON type makes that conversion fail (reported as `Unknown`). syncguard is a linter for
//!   hand-written and rendered manifests, so it is lenient instead: a malformed field (e.g.
//!   `replicas: "3"`) is treated as absent and never panics. See [`assess`].
//! * A message is Argo CD's own message, verbatim; `None` where Argo CD's is empty.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use super::Resource;

/// Which gitops-engine the assessment imitates. The two differ in a handful of health rules
/// (spec §5.9 item 7), and users run both in production.
pub use super::version::{Behaviour, Behaviours};

/// A health verdict, as Argo CD spells and ranks it.
///
/// The derived ordering is Argo CD's `healthOrder` (best to worst), so `max()` over a set of
/// statuses gives the aggregated (worst) health exactly like `health.IsWorse` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum HealthStatus {
    /// The object reached its desired state.
    Healthy,
    /// Paused on purpose (a paused Deployment, a suspended Job). Blocks a sync like Progressing.
    Suspended,
    /// Not there yet, but may still get there. Blocks a sync with no timeout of its own.
    Progressing,
    /// The live object does not exist. Only Argo CD's controller (or a Lua override) assigns it;
    /// no built-in check returns it.
    Missing,
    /// Failed or cannot get healthy. Fails a sync.
    Degraded,
    /// The assessment could not decide (unknown phase, or a check error).
    Unknown,
}

impl HealthStatus {
    /// Argo CD's spelling, e.g. `"Progressing"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Healthy => "Healthy",
            Self::Suspended => "Suspended",
            Self::Progressing => "Progressing",
            Self::Missing => "Missing",
            Self::Degraded => "Degraded",
            Self::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One object's health: a status plus Argo CD's explanation, when it gives one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// The verdict.
    pub status: HealthStatus,
    /// Argo CD's message, verbatim. `None` where Argo CD reports an empty message, so that
    /// renderers never print a dangling separator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Health {
    /// A verdict with a message; an empty message becomes `None` (Go uses `""` for "no message").
    pub fn new(status: HealthStatus, message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            status,
            message: (!message.is_empty()).then_some(message),
        }
    }

    /// A verdict without a message.
    pub fn status_only(status: HealthStatus) -> Self {
        Self {
            status,
            message: None,
        }
    }
}

/// Why a built-in health check could not run. Argo CD reports every such error as health
/// `Unknown` with the error text as message ([`HealthError::to_health`]), and the sync treats a
/// hook with a health error as `Error` ([`hook_outcome`]).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum HealthError {
    /// The group and kind have a built-in check, but not for this version (e.g. `apps/v1beta2`
    /// Deployment, or `autoscaling/v2beta2` HPA from Argo CD 3.5, [`Behaviour::HpaDegradedFirst`]). Argo CD does not fall back
    /// to "no health": the object is `Unknown`, so such an object blocks a wave forever.
    /// The message matches Argo CD's (`unsupported Deployment GVK: apps/v1beta2, Kind=Deployment`).
    #[error(
        "unsupported {} GVK: {group}/{version}, Kind={kind}",
        check_label(kind)
    )]
    UnsupportedVersion {
        /// API group, empty for core.
        group: String,
        /// The unsupported version.
        version: String,
        /// The kind.
        kind: String,
    },
    /// An `autoscaling/v1` HPA whose `autoscaling.alpha.kubernetes.io/conditions` annotation is
    /// not a JSON list of conditions. Argo CD fails the check rather than guessing.
    #[error("failed to convert conditions annotation to typed: {reason}")]
    MalformedHpaConditions {
        /// What is wrong with the annotation.
        reason: String,
    },
}

impl HealthError {
    /// A stable, low-cardinality label for metrics and machine-readable reports.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Self::UnsupportedVersion { .. } => "unsupported_version",
            Self::MalformedHpaConditions { .. } => "malformed_hpa_conditions",
        }
    }

    /// What Argo CD displays for an object whose check failed: `Unknown` with the error text.
    pub fn to_health(&self) -> Health {
        Health::new(HealthStatus::Unknown, self.to_string())
    }
}

/// The name Argo CD's "unsupported … GVK" errors use for a kind (HPA is abbreviated there).
fn check_label(kind: &str) -> &str {
    if kind == "HorizontalPodAutoscaler" {
        "HPA"
    } else {
        kind
    }
}

/// The finalizer Argo CD puts on hooks so it can read their final state before they disappear.
/// A hook being deleted while it still carries this finalizer is still assessed normally.
pub const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";

/// Annotation (Argo CD 3.6+) that makes a non-hook Pod with `restartPolicy: OnFailure|Never` be judged
/// like a long-running (`Always`) Pod; only the exact value `"true"` counts.
pub const IGNORE_RESTART_POLICY_ANNOTATION: &str = "argocd.argoproj.io/ignore-restart-policy";

/// Annotation carrying an `autoscaling/v1` HPA's conditions as a JSON list (v1 has no
/// `status.conditions`).
pub const HPA_V1_CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";

/// Message of the health Argo CD gives every object that is being deleted (spec §5.2).
pub const PENDING_DELETION: &str = "Pending deletion";

/// Message of an HPA that has not reported any usable condition yet.
const WAITING_TO_AUTOSCALE: &str = "Waiting to Autoscale";

/// Assesses one live object the way Argo CD's `health.GetResourceHealth` does without overrides.
///
/// * `Ok(None)` is "nil health": the kind has no built-in check. Such an object completes at once
///   as a hook and never gates a wave (spec §5.3).
/// * `Ok(Some(_))` is a verdict.
/// * `Err(_)` is a check that could not run; Argo CD shows it as `Unknown`.
///
/// The pending-deletion rule comes first and applies to **every** kind, including kinds without a
/// check, because Argo CD evaluates it in `health.go` before dispatching on the kind: an object
/// with a `metadata.deletionTimestamp` and without [`HOOK_FINALIZER`] is `Progressing "Pending
/// deletion"`. That is also why a Secret that is stuck terminating holds up a wave even though
/// Secrets normally have no health.
///
/// Group, version and kind are matched exactly (case-sensitive), as Argo CD does.
pub fn assess(
    group: &str,
    version: &str,
    kind: &str,
    obj: &Value,
    behaviours: Behaviours,
) -> Result<Option<Health>, HealthError> {
    let names_finalizers = behaviours.has(Behaviour::PendingDeletionNamesFinalizers);
    // Up to 3.5 a terminating object is "Pending deletion" before any check runs; from 3.6 the
    // check runs first, so its error (an unsupported version) still wins.
    if is_pending_deletion(obj) && !names_finalizers {
        return Ok(Some(Health::new(
            HealthStatus::Progressing,
            PENDING_DELETION,
        )));
    }
    let Some(check) = Check::of(group, kind) else {
        return Ok(is_pending_deletion(obj).then(|| pending_deletion(obj)));
    };
    if !check.supports(version, behaviours) {
        return Err(HealthError::UnsupportedVersion {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        });
    }
    let health = check.run(version, obj, behaviours)?;
    if is_pending_deletion(obj) {
        return Ok(Some(pending_deletion(obj)));
    }
    Ok(Some(health))
}

/// Argo CD 3.6's health of a terminating object: `Progressing`, naming the finalizers that
/// hold it ("Pending deletion; blocked by finalizers: a, b"), or just "Pending deletion".
fn pending_deletion(obj: &Value) -> Health {
    // Like Go's GetFinalizers: a list with a non-string entry reads as no finalizers.
    let finalizers: Vec<&str> = get(obj, &["metadata", "finalizers"])
        .and_then(Value::as_array)
        .and_then(|f| f.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        .unwrap_or_default();
    if finalizers.is_empty() {
        Health::new(HealthStatus::Progressing, PENDING_DELETION)
    } else {
        Health::new(
            HealthStatus::Progressing,
            format!(
                "{PENDING_DELETION}; blocked by finalizers: {}",
                finalizers.join(", ")
            ),
        )
    }
}

/// [`assess`] for a loaded [`Resource`].
pub fn assess_resource(
    r: &Resource,
    behaviours: Behaviours,
) -> Result<Option<Health>, HealthError> {
    assess(&r.group, &r.version, &r.kind, &r.raw, behaviours)
}

/// Whether Argo CD has a built-in health check for this group and kind, i.e. whether a non-hook
/// object of this kind can hold up the next wave.
///
/// The answer does not depend on the version: a matched kind with an unsupported version is
/// assessed as an error (`Unknown`), which blocks a wave just as a real check would. It also
/// ignores deletion: any object being deleted is `Progressing` (see [`assess`]), which the
/// planner cannot know from manifests.
///
/// Caution: this covers the built-in **Go** checks only (spec §8, H18). A real Argo CD controller
/// also applies the Lua checks bundled in `argo-cd/resource_customizations/` (about 240 kinds at
/// the spec's commit, e.g. `batch/CronJob`, `policy/PodDisruptionBudget`,
/// `apiextensions.k8s.io/CustomResourceDefinition`, `external-secrets.io/ExternalSecret`,
/// `bitnami.com/SealedSecret`, `argoproj.io/Rollout`, even `serving.knative.dev/Service`), and
/// those kinds do gate waves there. A `false` here means "no built-in Go check", not "never gates".
pub fn has_health_check(group: &str, kind: &str) -> bool {
    Check::of(group, kind).is_some()
}

/// What the sync engine makes of a running task's health on a refresh (spec §5.2). This is the
/// task's operation state, not the object's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskHealthOutcome {
    /// The task is done and successful.
    Succeeded,
    /// The task keeps running; the sync waits for it on the next tick.
    Running,
    /// The task completed unsuccessfully; the sync goes down its failure path.
    Failed,
    /// The health check itself failed (hooks only); the sync fails like for `Failed`.
    Error,
}

/// The state a running **hook** task moves to, given its live object's health
/// (`sync_context.go getOperationPhase`).
///
/// `Missing` maps to `Succeeded` because Argo CD's switch has no case for it and keeps its
/// default; it can only come from a custom health override. A health error is `Error`.
pub fn hook_outcome(h: &Result<Option<Health>, HealthError>) -> TaskHealthOutcome {
    match h {
        Err(_) => TaskHealthOutcome::Error,
        Ok(None) => TaskHealthOutcome::Succeeded,
        Ok(Some(health)) => match health.status {
            HealthStatus::Healthy | HealthStatus::Missing => TaskHealthOutcome::Succeeded,
            HealthStatus::Progressing | HealthStatus::Suspended => TaskHealthOutcome::Running,
            HealthStatus::Degraded | HealthStatus::Unknown => TaskHealthOutcome::Failed,
        },
    }
}

/// The state a running **non-hook** task moves to, given its live object's health
/// (`sync_context.go`, the non-hook branch of the refresh loop).
///
/// Only Healthy (or no check) succeeds and only Degraded fails. Everything else, including
/// `Unknown` and a health error, leaves the task Running, which is why an unsupported API version
/// in a non-final wave blocks the sync forever instead of failing it.
pub fn resource_outcome(h: &Result<Option<Health>, HealthError>) -> TaskHealthOutcome {
    match h {
        Err(_) => TaskHealthOutcome::Running,
        Ok(None) => TaskHealthOutcome::Succeeded,
        Ok(Some(health)) => match health.status {
            HealthStatus::Healthy => TaskHealthOutcome::Succeeded,
            HealthStatus::Degraded => TaskHealthOutcome::Failed,
            HealthStatus::Suspended
            | HealthStatus::Progressing
            | HealthStatus::Missing
            | HealthStatus::Unknown => TaskHealthOutcome::Running,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------------------------

/// The built-in checks, one per (group, kind) that `health.go GetHealthCheckFunc` dispatches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Deployment,
    StatefulSet,
    ReplicaSet,
    DaemonSet,
    Ingress,
    Workflow,
    ApiService,
    Service,
    PersistentVolumeClaim,
    Pod,
    Job,
    HorizontalPodAutoscaler,
}

impl Check {
    /// The check for a group and kind, or `None` for nil health.
    fn of(group: &str, kind: &str) -> Option<Self> {
        Some(match (group, kind) {
            ("apps", "Deployment") => Self::Deployment,
            ("apps", "StatefulSet") => Self::StatefulSet,
            ("apps", "ReplicaSet") => Self::ReplicaSet,
            ("apps", "DaemonSet") => Self::DaemonSet,
            ("extensions" | "networking.k8s.io", "Ingress") => Self::Ingress,
            ("argoproj.io", "Workflow") => Self::Workflow,
            ("apiregistration.k8s.io", "APIService") => Self::ApiService,
            ("", "Service") => Self::Service,
            ("", "PersistentVolumeClaim") => Self::PersistentVolumeClaim,
            ("", "Pod") => Self::Pod,
            ("batch", "Job") => Self::Job,
            ("autoscaling", "HorizontalPodAutoscaler") => Self::HorizontalPodAutoscaler,
            _ => return None,
        })
    }

    /// Whether the check accepts this version. Ingress and Workflow read untyped fields and so
    /// accept any version; the others convert to one typed Go struct per supported version.
    fn supports(self, version: &str, behaviours: Behaviours) -> bool {
        match self {
            Self::Ingress | Self::Workflow => true,
            Self::ApiService => matches!(version, "v1" | "v1beta1"),
            Self::HorizontalPodAutoscaler => match behaviours.has(Behaviour::HpaDegradedFirst) {
                false => matches!(version, "v1" | "v2" | "v2beta1" | "v2beta2"),
                true => matches!(version, "v1" | "v2"),
            },
            Self::Deployment
            | Self::StatefulSet
            | Self::ReplicaSet
            | Self::DaemonSet
            | Self::Service
            | Self::PersistentVolumeClaim
            | Self::Pod
            | Self::Job => version == "v1",
        }
    }

    /// Runs the check on an object whose version is supported.
    fn run(
        self,
        version: &str,
        obj: &Value,
        behaviours: Behaviours,
    ) -> Result<Health, HealthError> {
        Ok(match self {
            Self::Deployment => deployment_health(obj),
            Self::StatefulSet => statefulset_health(obj),
            Self::ReplicaSet => replicaset_health(obj),
            Self::DaemonSet => daemonset_health(obj),
            Self::Ingress => ingress_health(obj),
            Self::Workflow => workflow_health(obj),
            Self::ApiService => apiservice_health(obj),
            Self::Service => service_health(obj),
            Self::PersistentVolumeClaim => pvc_health(obj),
            Self::Pod => pod_health(obj, behaviours),
            Self::Job => job_health(obj, behaviours),
            Self::HorizontalPodAutoscaler => return hpa_health(version, obj, behaviours),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Pending deletion
// ---------------------------------------------------------------------------------------------

/// `deletionTimestamp` set and no hook finalizer (spec §5.2, `health.go`).
///
/// Like the Kubernetes client, a timestamp counts only if it is a valid RFC 3339 time that is not
/// Go's zero time; anything else reads as "not being deleted". The finalizer list is read like
/// `GetFinalizers`: a list with a non-string entry reads as no finalizers.
fn is_pending_deletion(obj: &Value) -> bool {
    is_deleting(obj) && !has_hook_finalizer(obj)
}

/// The object has a set `metadata.deletionTimestamp` (it is being deleted).
pub fn is_deleting(obj: &Value) -> bool {
    get(obj, &["metadata", "deletionTimestamp"])
        .and_then(Value::as_str)
        .is_some_and(is_set_rfc3339_time)
}

/// The object carries [`HOOK_FINALIZER`] (a finalizer list with a non-string entry reads as none,
/// as in Go).
pub fn has_hook_finalizer(obj: &Value) -> bool {
    let Some(finalizers) = get(obj, &["metadata", "finalizers"]).and_then(Value::as_array) else {
        return false;
    };
    finalizers.iter().all(Value::is_string)
        && finalizers
            .iter()
            .any(|f| f.as_str() == Some(HOOK_FINALIZER))
}

/// True for a valid RFC 3339 time (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, as Go's
/// `time.Parse(time.RFC3339, …)` accepts it) that is not the zero instant
/// `0001-01-01T00:00:00Z`, which `metav1.Time` treats as unset.
fn is_set_rfc3339_time(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |acc, &d| {
            d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
        })
    };
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0, 4),
        num(5, 2),
        num(8, 2),
        num(11, 2),
        num(14, 2),
        num(17, 2),
    ) else {
        return false;
    };
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return false;
    }
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return false;
    }
    // Optional fraction: '.' or ',' followed by at least one digit.
    let mut at = 19;
    let mut fraction_is_zero = true;
    if matches!(b.get(at), Some(b'.' | b',')) {
        let digits = b[at + 1..]
            .iter()
            .take_while(|d| d.is_ascii_digit())
            .count();
        if digits == 0 {
            return false;
        }
        fraction_is_zero = b[at + 1..at + 1 + digits].iter().all(|&d| d == b'0');
        at += 1 + digits;
    }
    let offset_seconds = match b.get(at..) {
        Some(b"Z") => 0,
        Some(rest) if rest.len() == 6 && matches!(rest[0], b'+' | b'-') && rest[3] == b':' => {
            let (Some(oh), Some(om)) = (num(at + 1, 2), num(at + 4, 2)) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let magnitude = oh * 3600 + om * 60;
            if rest[0] == b'-' {
                -magnitude
            } else {
                magnitude
            }
        }
        _ => return false,
    };
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    let zero_instant = days_from_civil(1, 1, 1) * 86_400;
    !(fraction_is_zero && local - offset_seconds == zero_instant)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm); only
/// used to recognise the zero instant whatever offset it is written with.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

// ---------------------------------------------------------------------------------------------
// Workloads (spec §8.3–8.6)
// ---------------------------------------------------------------------------------------------

/// §8.3, `health_deployment.go`. The order of the rollout checks matters: a Deployment past its
/// progress deadline is Degraded even while it still has replicas to update.
fn deployment_health(obj: &Value) -> Health {
    use HealthStatus::{Degraded, Healthy, Progressing, Suspended};
    if get_bool(obj, &["spec", "paused"]) {
        return Health::new(Suspended, "Deployment is paused");
    }
    if generation(obj) > observed_generation(obj) {
        return Health::new(
            Progressing,
            "Waiting for rollout to finish: observed deployment generation less than desired generation",
        );
    }
    let progressing = conditions(obj).find(|c| c.kind == "Progressing");
    let spec_replicas = get_int(obj, &["spec", "replicas"]);
    let replicas = status_int(obj, "replicas");
    let updated = status_int(obj, "updatedReplicas");
    let available = status_int(obj, "availableReplicas");
    if progressing.is_some_and(|c| c.reason == "ProgressDeadlineExceeded") {
        return Health::new(
            Degraded,
            format!(
                "Deployment {:?} exceeded its progress deadline",
                get_str(obj, &["metadata", "name"])
            ),
        );
    }
    if let Some(want) = spec_replicas.filter(|&want| updated < want) {
        return Health::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {updated} out of {want} new replicas have been updated..."
            ),
        );
    }
    if replicas > updated {
        return Health::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {} old replicas are pending termination...",
                replicas.saturating_sub(updated)
            ),
        );
    }
    if available < updated {
        return Health::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {available} of {updated} updated replicas are available..."
            ),
        );
    }
    Health::status_only(Healthy)
}

/// §8.4, `health_statefulset.go`. Note the two exits that skip the revision comparison: a
/// RollingUpdate strategy with an explicit `rollingUpdate` block, and `OnDelete`.
fn statefulset_health(obj: &Value) -> Health {
    use HealthStatus::{Healthy, Progressing};
    let observed = observed_generation(obj);
    if observed == 0 || generation(obj) > observed {
        return Health::new(
            Progressing,
            "Waiting for statefulset spec update to be observed...",
        );
    }
    let spec_replicas = get_int(obj, &["spec", "replicas"]);
    let ready = status_int(obj, "readyReplicas");
    let updated = status_int(obj, "updatedReplicas");
    if let Some(want) = spec_replicas.filter(|&want| ready < want) {
        return Health::new(
            Progressing,
            format!(
                "Waiting for {} pods to be ready...",
                want.saturating_sub(ready)
            ),
        );
    }
    let strategy = get_str(obj, &["spec", "updateStrategy", "type"]);
    // Go's `RollingUpdate` pointer is non-nil for any mapping, even `{}`.
    let rolling_update = get(obj, &["spec", "updateStrategy", "rollingUpdate"])
        .filter(|v| v.is_object())
        .filter(|_| strategy == "RollingUpdate");
    if let Some(rolling_update) = rolling_update {
        let partition = get_int(rolling_update, &["partition"]);
        if let (Some(want), Some(partition)) = (spec_replicas, partition) {
            let target = want.saturating_sub(partition);
            if updated < target {
                return Health::new(
                    Progressing,
                    format!(
                        "Waiting for partitioned roll out to finish: {updated} out of {target} new pods have been updated..."
                    ),
                );
            }
        }
        return Health::new(
            Healthy,
            format!("partitioned roll out complete: {updated} new pods have been updated..."),
        );
    }
    if strategy == "OnDelete" {
        return Health::new(Healthy, format!("statefulset has {ready} ready pods"));
    }
    let update_revision = status_str(obj, "updateRevision");
    let current_revision = status_str(obj, "currentRevision");
    if update_revision != current_revision {
        return Health::new(
            Progressing,
            format!(
                "waiting for statefulset rolling update to complete {updated} pods at revision {update_revision}..."
            ),
        );
    }
    Health::new(
        Healthy,
        format!(
            "statefulset rolling update complete {} pods at revision {current_revision}...",
            status_int(obj, "currentReplicas")
        ),
    )
}

/// §8.5, `health_daemonset.go`. `OnDelete` is Healthy before the scheduling counts are compared,
/// because such a DaemonSet never replaces its pods on its own.
fn daemonset_health(obj: &Value) -> Health {
    use HealthStatus::{Healthy, Progressing};
    if generation(obj) > observed_generation(obj) {
        return Health::new(
            Progressing,
            "Waiting for rollout to finish: observed daemon set generation less than desired generation",
        );
    }
    let updated = status_int(obj, "updatedNumberScheduled");
    let desired = status_int(obj, "desiredNumberScheduled");
    let available = status_int(obj, "numberAvailable");
    if get_str(obj, &["spec", "updateStrategy", "type"]) == "OnDelete" {
        return Health::new(
            Healthy,
            format!("daemon set {updated} out of {desired} new pods have been updated"),
        );
    }
    let name = get_str(obj, &["metadata", "name"]);
    if updated < desired {
        return Health::new(
            Progressing,
            format!(
                "Waiting for daemon set {name:?} rollout to finish: {updated} out of {desired} new pods have been updated..."
            ),
        );
    }
    if available < desired {
        return Health::new(
            Progressing,
            format!(
                "Waiting for daemon set {name:?} rollout to finish: {available} of {desired} updated pods are available..."
            ),
        );
    }
    Health::status_only(Healthy)
}

/// §8.6, `health_replicaset.go`. Only the first `ReplicaFailure` condition is looked at.
fn replicaset_health(obj: &Value) -> Health {
    use HealthStatus::{Degraded, Healthy, Progressing};
    if generation(obj) > observed_generation(obj) {
        return Health::new(
            Progressing,
            "Waiting for rollout to finish: observed replica set generation less than desired generation",
        );
    }
    if let Some(failure) = conditions(obj)
        .find(|c| c.kind == "ReplicaFailure")
        .filter(|c| c.status == "True")
    {
        return Health::new(Degraded, failure.message);
    }
    let available = status_int(obj, "availableReplicas");
    if let Some(want) = get_int(obj, &["spec", "replicas"]).filter(|&want| available < want) {
        return Health::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {available} out of {want} new replicas are available..."
            ),
        );
    }
    Health::status_only(Healthy)
}

// ---------------------------------------------------------------------------------------------
// Batch, Pods, Argo Workflows (spec §8.1, §8.2, §6.2)
// ---------------------------------------------------------------------------------------------

/// §8.1, `health_job.go`. Only the condition *types* decide completion; a Suspended condition with
/// status False still counts as "complete", which is why a resumed Job with no other condition is
/// Healthy. From 3.6 the Suspended condition's message is shown; before, the (always empty)
/// failure message there.
fn job_health(obj: &Value, behaviours: Behaviours) -> Health {
    let mut failed = false;
    let mut complete = false;
    let mut suspended = false;
    let mut fail_message = "";
    let mut message = "";
    for c in conditions(obj) {
        match c.kind {
            "Failed" => {
                failed = true;
                complete = true;
                fail_message = c.message;
            }
            "Complete" => {
                complete = true;
                message = c.message;
            }
            "Suspended" => {
                complete = true;
                message = c.message;
                suspended |= c.status == "True";
            }
            _ => {}
        }
    }
    if !complete {
        Health::new(HealthStatus::Progressing, message)
    } else if failed {
        Health::new(HealthStatus::Degraded, fail_message)
    } else if suspended {
        let shown = if behaviours.has(Behaviour::JobSuspendedMessage) {
            message
        } else {
            fail_message
        };
        Health::new(HealthStatus::Suspended, shown)
    } else {
        Health::new(HealthStatus::Healthy, message)
    }
}

/// §8.2, `health_pod.go`.
///
/// The crash-loop rule is limited to `restartPolicy: Always` on purpose: a hook Pod that is
/// temporarily in ImagePullBackOff must not fail its hook. From 3.6 a non-hook Pod may opt in
/// with [`IGNORE_RESTART_POLICY_ANNOTATION`]. An empty `restartPolicy` is not defaulted (Argo CD
/// sees the live object, which the API server has defaulted), so a Running Pod without one is
/// Unknown.
fn pod_health(obj: &Value, behaviours: Behaviours) -> Health {
    use HealthStatus::{Degraded, Healthy, Progressing, Unknown};
    let restart_policy = get_str(obj, &["spec", "restartPolicy"]);
    let long_running = restart_policy == "Always"
        || (behaviours.has(Behaviour::PodIgnoreRestartPolicy)
            && string_annotation(obj, IGNORE_RESTART_POLICY_ANNOTATION) == Some("true")
            && !is_hook(obj));
    let container_statuses = get_list(obj, &["status", "containerStatuses"]);
    let pod_message = status_str(obj, "message");

    if long_running {
        let stuck: Vec<&str> = container_statuses
            .iter()
            .filter_map(|c| get(c, &["state", "waiting"]).filter(|w| w.is_object()))
            .filter(|w| is_error_waiting_reason(get_str(w, &["reason"])))
            .map(|w| get_str(w, &["message"]))
            .collect();
        if !stuck.is_empty() {
            return Health::new(Degraded, stuck.join(", "));
        }
    }

    match status_str(obj, "phase") {
        "Pending" => Health::new(Progressing, pod_message),
        "Succeeded" => Health::new(Healthy, pod_message),
        "Failed" => {
            if !pod_message.is_empty() {
                return Health::new(Degraded, pod_message);
            }
            let message = get_list(obj, &["status", "initContainerStatuses"])
                .iter()
                .chain(container_statuses)
                .find_map(container_failure_message)
                .unwrap_or_default();
            Health::new(Degraded, message)
        }
        "Running" if long_running => {
            if is_pod_ready(obj) {
                Health::new(Healthy, pod_message)
            } else if container_statuses
                .iter()
                .any(|c| get(c, &["lastState", "terminated"]).is_some_and(Value::is_object))
            {
                Health::new(Degraded, pod_message)
            } else {
                Health::new(Progressing, pod_message)
            }
        }
        "Running" if matches!(restart_policy, "OnFailure" | "Never") => {
            Health::new(Progressing, pod_message)
        }
        _ => Health::new(Unknown, pod_message),
    }
}

/// A container waiting reason that means "this will not start by itself": `Err*` (ErrImagePull),
/// `*Error` (CreateContainerConfigError) or `*BackOff` (CrashLoopBackOff, ImagePullBackOff).
fn is_error_waiting_reason(reason: &str) -> bool {
    reason.starts_with("Err") || reason.ends_with("Error") || reason.ends_with("BackOff")
}

/// The explanation Argo CD takes from a terminated container of a failed Pod, or `None` to try
/// the next container.
fn container_failure_message(container: &Value) -> Option<String> {
    let terminated = get(container, &["state", "terminated"]).filter(|t| t.is_object())?;
    let message = get_str(terminated, &["message"]);
    if !message.is_empty() {
        return Some(message.to_string());
    }
    if get_str(terminated, &["reason"]) == "OOMKilled" {
        return Some("OOMKilled".to_string());
    }
    let exit_code = get_int(terminated, &["exitCode"]).unwrap_or(0);
    (exit_code != 0).then(|| {
        format!(
            "container {:?} failed with exit code {exit_code}",
            get_str(container, &["name"])
        )
    })
}

/// `podutils.IsPodReady`: the first `Ready` condition has status True.
fn is_pod_ready(obj: &Value) -> bool {
    conditions(obj)
        .find(|c| c.kind == "Ready")
        .is_some_and(|c| c.status == "True")
}

/// Argo CD's `hook.IsHook`, needed because 3.6 ignores the restart-policy annotation on hooks.
///
/// With the `argocd.argoproj.io/hook` key present (any value) the object is a hook unless its
/// only valid hook type is `Skip`; otherwise a `helm.sh/hook` whose raw value is not exactly
/// `crd-install` makes it a hook (spec §2.3). Annotation values that are not strings are treated
/// as absent.
fn is_hook(obj: &Value) -> bool {
    if let Some(argo) = string_annotation(obj, "argocd.argoproj.io/hook") {
        let mut types: Vec<&str> = Vec::new();
        for item in argo.split(',').map(str::trim) {
            let valid = matches!(item, "PreSync" | "Sync" | "PostSync" | "SyncFail" | "Skip");
            if valid && !types.contains(&item) {
                types.push(item);
            }
        }
        return types != ["Skip"];
    }
    string_annotation(obj, "helm.sh/hook").is_some_and(|helm| helm != "crd-install")
}

/// `health_argo.go` (spec §6.2, H17). An empty phase is a Workflow the controller has not picked
/// up yet, hence Progressing; an unrecognised phase is Unknown, which fails a hook.
fn workflow_health(obj: &Value) -> Health {
    let message = status_str(obj, "message");
    let status = match status_str(obj, "phase") {
        "" | "Pending" | "Running" => HealthStatus::Progressing,
        "Succeeded" => HealthStatus::Healthy,
        "Failed" | "Error" => HealthStatus::Degraded,
        _ => HealthStatus::Unknown,
    };
    Health::new(status, message)
}

// ---------------------------------------------------------------------------------------------
// Networking, storage, aggregation (spec §8.7)
// ---------------------------------------------------------------------------------------------

/// Only a `LoadBalancer` Service waits, for its external address; without a load-balancer
/// controller it waits forever.
fn service_health(obj: &Value) -> Health {
    let waiting = get_str(obj, &["spec", "type"]) == "LoadBalancer"
        && get_list(obj, &["status", "loadBalancer", "ingress"]).is_empty();
    Health::status_only(if waiting {
        HealthStatus::Progressing
    } else {
        HealthStatus::Healthy
    })
}

/// An Ingress is Healthy once any load-balancer entry is published; the entries are not checked.
fn ingress_health(obj: &Value) -> Health {
    let assigned = !get_list(obj, &["status", "loadBalancer", "ingress"]).is_empty();
    Health::status_only(if assigned {
        HealthStatus::Healthy
    } else {
        HealthStatus::Progressing
    })
}

/// By `status.phase`. `Pending` includes `WaitForFirstConsumer` claims, which stay Pending until a
/// Pod uses them, so such a PVC in an early wave deadlocks the sync.
fn pvc_health(obj: &Value) -> Health {
    Health::status_only(match status_str(obj, "phase") {
        "Bound" => HealthStatus::Healthy,
        "Pending" => HealthStatus::Progressing,
        "Lost" => HealthStatus::Degraded,
        _ => HealthStatus::Unknown,
    })
}

/// The first `Available` condition decides; v1 and v1beta1 are read the same way.
fn apiservice_health(obj: &Value) -> Health {
    match conditions(obj).find(|c| c.kind == "Available") {
        Some(c) => Health::new(
            if c.status == "True" {
                HealthStatus::Healthy
            } else {
                HealthStatus::Progressing
            },
            format!("{}: {}", c.reason, c.message),
        ),
        None => Health::new(HealthStatus::Progressing, "Waiting to be processed"),
    }
}

// ---------------------------------------------------------------------------------------------
// HPA (spec §8.8)
// ---------------------------------------------------------------------------------------------

/// `health_hpa.go`. v1 keeps its conditions in an annotation; later versions in
/// `status.conditions`.
fn hpa_health(version: &str, obj: &Value, behaviours: Behaviours) -> Result<Health, HealthError> {
    if version != "v1" {
        let conds: Vec<Condition<'_>> = conditions(obj).collect();
        return Ok(hpa_conditions_health(&conds, behaviours));
    }
    let Some(annotation) = string_annotation(obj, HPA_V1_CONDITIONS_ANNOTATION) else {
        return Ok(Health::new(HealthStatus::Progressing, WAITING_TO_AUTOSCALE));
    };
    let parsed: Value =
        serde_json::from_str(annotation).map_err(|e| HealthError::MalformedHpaConditions {
            reason: e.to_string(),
        })?;
    let conds = hpa_annotation_conditions(&parsed)
        .map_err(|reason| HealthError::MalformedHpaConditions { reason })?;
    Ok(hpa_conditions_health(&conds, behaviours))
}

/// Reads the v1 annotation like Go's `json.Unmarshal` into a list of condition structs: `null`
/// is an empty list, `null` entries and fields are zero values, unknown fields are ignored,
/// field names match case-insensitively, and any other type mismatch is an error.
fn hpa_annotation_conditions(parsed: &Value) -> Result<Vec<Condition<'_>>, String> {
    let entries = match parsed {
        Value::Null => return Ok(Vec::new()),
        Value::Array(entries) => entries,
        other => {
            return Err(format!(
                "expected a list of conditions, found {}",
                super::json_type_name(other)
            ));
        }
    };
    entries
        .iter()
        .map(|entry| match entry {
            Value::Null => Ok(Condition::default()),
            Value::Object(fields) => Ok(Condition {
                kind: go_string_field(fields, "type")?,
                status: go_string_field(fields, "status")?,
                reason: go_string_field(fields, "reason")?,
                message: go_string_field(fields, "message")?,
            }),
            other => Err(format!(
                "expected a condition mapping, found {}",
                super::json_type_name(other)
            )),
        })
        .collect()
}

/// A string field of a JSON object, matched like Go's `encoding/json` (exact name first, then
/// case-insensitively); absent or `null` is `""`.
fn go_string_field<'a>(fields: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    let value = fields.get(name).or_else(|| {
        fields
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    });
    match value {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "field {name:?} must be a string, found {}",
            super::json_type_name(other)
        )),
    }
}

/// Up to 3.4 Argo CD takes the first condition that is either degraded or healthy, so a healthy `AbleToScale`
/// listed before a failing `ScalingActive` hides the failure. From 3.5 it looks for any degraded
/// condition first, and knows more degraded reasons.
fn hpa_conditions_health(conds: &[Condition<'_>], behaviours: Behaviours) -> Health {
    let degraded_first = behaviours.has(Behaviour::HpaDegradedFirst);
    let degraded = |c: &Condition<'_>| is_hpa_degraded(c, degraded_first);
    let healthy = |c: &Condition<'_>| {
        matches!(c.kind, "AbleToScale" | "ScalingLimited") && c.status == "True"
    };
    let verdict = match degraded_first {
        false => conds.iter().find_map(|c| {
            if degraded(c) {
                Some(Health::new(HealthStatus::Degraded, c.message))
            } else if healthy(c) {
                Some(Health::new(HealthStatus::Healthy, c.message))
            } else {
                None
            }
        }),
        true => conds
            .iter()
            .find(|c| degraded(c))
            .map(|c| Health::new(HealthStatus::Degraded, c.message))
            .or_else(|| {
                conds
                    .iter()
                    .find(|c| healthy(c))
                    .map(|c| Health::new(HealthStatus::Healthy, c.message))
            }),
    };
    verdict.unwrap_or_else(|| Health::new(HealthStatus::Progressing, WAITING_TO_AUTOSCALE))
}

/// The (type, reason) pairs that mean the HPA cannot do its job. 3.5 added the metric
/// failures other than resource metrics.
fn is_hpa_degraded(c: &Condition<'_>, degraded_first: bool) -> bool {
    match (c.kind, c.reason) {
        ("AbleToScale", "FailedGetScale" | "FailedUpdateScale")
        | ("ScalingActive", "FailedGetResourceMetric" | "InvalidSelector") => true,
        (
            "ScalingActive",
            "FailedGetObjectMetric"
            | "FailedGetPodsMetric"
            | "FailedGetExternalMetric"
            | "FailedComputeMetricsReplicas",
        ) => degraded_first,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Lenient JSON access: Go zero values for absent or mistyped fields, never a panic
// ---------------------------------------------------------------------------------------------

/// One entry of a `status.conditions`-style list, with Go's `""` for absent fields.
#[derive(Debug, Clone, Copy, Default)]
struct Condition<'a> {
    kind: &'a str,
    status: &'a str,
    reason: &'a str,
    message: &'a str,
}

/// `status.conditions`, skipping entries that are not mappings.
fn conditions(obj: &Value) -> impl Iterator<Item = Condition<'_>> {
    get_list(obj, &["status", "conditions"])
        .iter()
        .filter(|c| c.is_object())
        .map(|c| Condition {
            kind: get_str(c, &["type"]),
            status: get_str(c, &["status"]),
            reason: get_str(c, &["reason"]),
            message: get_str(c, &["message"]),
        })
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, key| v.get(*key))
}

/// A string field, `""` when absent or not a string.
fn get_str<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    get(v, path).and_then(Value::as_str).unwrap_or_default()
}

fn status_str<'a>(v: &'a Value, field: &str) -> &'a str {
    get_str(v, &["status", field])
}

/// An integer field; `None` when absent or not an integer (a whole float such as `3.0` counts,
/// because YAML and JSON tooling sometimes emits integers that way). Callers subtract with
/// `saturating_sub`, so absurd values cannot overflow.
fn get_int(v: &Value, path: &[&str]) -> Option<i64> {
    let n = get(v, path)?.as_number()?;
    n.as_i64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// An integer status counter, `0` when absent (Go's zero value; counters are omitted when zero).
fn status_int(v: &Value, field: &str) -> i64 {
    get_int(v, &["status", field]).unwrap_or(0)
}

fn generation(v: &Value) -> i64 {
    get_int(v, &["metadata", "generation"]).unwrap_or(0)
}

fn observed_generation(v: &Value) -> i64 {
    status_int(v, "observedGeneration")
}

/// A boolean field, `false` when absent or not a boolean.
fn get_bool(v: &Value, path: &[&str]) -> bool {
    get(v, path).and_then(Value::as_bool).unwrap_or(false)
}

/// A list field, empty when absent or not a list.
fn get_list<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    get(v, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn string_annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    get(obj, &["metadata", "annotations", key]).and_then(Value::as_str)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap (rust-notes §5.5 rule 4)
mod tests {
    use super::*;
    use serde_json::json;

    use HealthStatus::{Degraded, Healthy, Missing, Progressing, Suspended, Unknown};

    /// Argo CD 3.2.11, the standalone engine's health rules.
    fn old() -> Behaviours {
        "3.2.11"
            .parse::<crate::model::version::ArgoCdVersion>()
            .unwrap()
            .behaviours()
    }

    /// Argo CD 3.6, the newest health rules.
    fn new() -> Behaviours {
        "3.6.1"
            .parse::<crate::model::version::ArgoCdVersion>()
            .unwrap()
            .behaviours()
    }

    /// Assesses a JSON object, taking group/version/kind from its own `apiVersion` and `kind`.
    fn assess_with(obj: &Value, behaviours: Behaviours) -> Result<Option<Health>, HealthError> {
        let api_version = obj["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = super::super::split_api_version(api_version);
        let kind = obj["kind"].as_str().unwrap_or_default();
        assess(group, version, kind, obj, behaviours)
    }

    /// The verdict for the given behaviours; fails the test on nil health or an error.
    fn verdict_with(obj: &Value, behaviours: Behaviours) -> Health {
        match assess_with(obj, behaviours) {
            Ok(Some(health)) => health,
            other => panic!("expected a verdict, got {other:?}"),
        }
    }

    /// The verdict with the default behaviours (Argo CD 3.6).
    fn verdict(obj: &Value) -> Health {
        verdict_with(obj, Behaviours::default())
    }

    fn status(obj: &Value) -> HealthStatus {
        verdict(obj).status
    }

    /// Argo CD 3.2.11 and 3.6 agree on the status, which is then returned.
    fn status_in_both(obj: &Value) -> HealthStatus {
        let legacy = verdict_with(obj, old()).status;
        let mono = verdict_with(obj, new()).status;
        assert_eq!(legacy, mono, "3.2.11 and 3.6 disagree on {obj}");
        mono
    }

    fn ok(status: HealthStatus) -> Result<Option<Health>, HealthError> {
        Ok(Some(Health::status_only(status)))
    }

    // ----- fixtures --------------------------------------------------------------------------

    fn job(status: Value) -> Value {
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "db-migrate", "namespace": "app", "generation": 1,
                         "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
            "spec": {
                "backoffLimit": 0,
                "completions": 1,
                "parallelism": 1,
                "template": {"spec": {
                    "containers": [{"name": "migrate", "image": "alpine:3.20",
                                    "command": ["sh", "-c", "sleep 10"]}],
                    "restartPolicy": "Never"
                }}
            },
            "status": status
        })
    }

    fn pod(restart_policy: &str, status: Value) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "my-pod", "namespace": "argocd"},
            "spec": {
                "containers": [{"name": "main", "image": "alpine:latest"}],
                "restartPolicy": restart_policy
            },
            "status": status
        })
    }

    fn ready_condition(status: &str) -> Value {
        json!({"type": "Ready", "status": status,
               "reason": if status == "True" { "" } else { "ContainersNotReady" }})
    }

    fn deployment(spec: Value, generation: i64, status: Value) -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "guestbook-ui", "namespace": "default", "generation": generation},
            "spec": spec,
            "status": status
        })
    }

    fn hpa(version: &str, annotations: Value, status: Value) -> Value {
        json!({
            "apiVersion": format!("autoscaling/{version}"),
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "sample", "namespace": "argocd", "annotations": annotations},
            "spec": {
                "minReplicas": 1,
                "maxReplicas": 2,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
            },
            "status": status
        })
    }

    fn hpa_condition(kind: &str, status: &str, reason: &str) -> Value {
        json!({"type": kind, "status": status, "reason": reason,
               "message": format!("{kind}/{reason}"),
               "lastTransitionTime": "2022-05-13T12:40:33Z"})
    }

    // ----- H01–H04: Job ----------------------------------------------------------------------

    #[test]
    fn h01_a_running_job_without_conditions_is_progressing() {
        let running = job(json!({"active": 1, "startTime": "2018-12-02T08:19:14Z"}));
        assert_eq!(verdict(&running), Health::status_only(Progressing));
        assert_eq!(status_in_both(&running), Progressing);
    }

    #[test]
    fn h02_a_job_that_hit_its_backoff_limit_is_degraded_with_the_condition_message() {
        let failed = job(json!({
            "failed": 1,
            "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                            "message": "Job has reached the specified backoff limit"}]
        }));
        assert_eq!(
            verdict(&failed),
            Health::new(Degraded, "Job has reached the specified backoff limit")
        );
        assert_eq!(status_in_both(&failed), Degraded);
    }

    #[test]
    fn h03_a_complete_job_is_healthy() {
        let done = job(json!({
            "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True"}]
        }));
        assert_eq!(status_in_both(&done), Healthy);
    }

    #[test]
    fn h04_a_suspended_job_is_suspended_and_keeps_its_hook_running() {
        let suspended = job(json!({
            "conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended",
                            "message": "Job suspended"}]
        }));
        assert_eq!(status_in_both(&suspended), Suspended);
        assert_eq!(
            hook_outcome(&assess_with(&suspended, new())),
            TaskHealthOutcome::Running
        );
    }

    #[test]
    fn a_suspended_job_carries_the_condition_message_only_in_ge_mono() {
        let suspended = job(json!({
            "conditions": [{"type": "Suspended", "status": "True", "message": "Job suspended"}]
        }));
        assert_eq!(
            verdict_with(&suspended, new()).message.as_deref(),
            Some("Job suspended")
        );
        assert_eq!(verdict_with(&suspended, old()).message, None);
    }

    #[test]
    fn a_resumed_job_with_only_a_false_suspended_condition_is_healthy() {
        let resumed = job(json!({
            "active": 1,
            "conditions": [{"type": "Suspended", "status": "False", "reason": "JobResumed",
                            "message": "Job resumed"}]
        }));
        assert_eq!(status_in_both(&resumed), Healthy);
    }

    #[test]
    fn a_failed_condition_wins_over_complete_and_its_status_is_not_checked() {
        let both = job(json!({"conditions": [
            {"type": "Complete", "status": "True"},
            {"type": "Failed", "status": "False", "message": "boom"}
        ]}));
        assert_eq!(verdict(&both), Health::new(Degraded, "boom"));
    }

    // ----- H05–H09: Pod ----------------------------------------------------------------------

    #[test]
    fn h05_a_crash_looping_on_failure_pod_stays_progressing() {
        let restarting = pod(
            "OnFailure",
            json!({
                "phase": "Running",
                "conditions": [ready_condition("False")],
                "containerStatuses": [{
                    "name": "main", "ready": false, "restartCount": 4,
                    "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
                    "state": {"waiting": {"reason": "CrashLoopBackOff",
                                          "message": "back-off 1m20s restarting failed container"}}
                }]
            }),
        );
        assert_eq!(status_in_both(&restarting), Progressing);
    }

    #[test]
    fn h06_an_always_pod_in_crash_loop_or_image_pull_back_off_is_degraded() {
        let crashloop = pod(
            "Always",
            json!({
                "phase": "Running",
                "conditions": [ready_condition("False")],
                "containerStatuses": [{
                    "name": "main", "ready": false, "restartCount": 3,
                    "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
                    "state": {"waiting": {"reason": "CrashLoopBackOff",
                                          "message": "Back-off 40s restarting failed container=main"}}
                }]
            }),
        );
        assert_eq!(
            verdict(&crashloop),
            Health::new(Degraded, "Back-off 40s restarting failed container=main")
        );
        let image_pull = pod(
            "Always",
            json!({
                "phase": "Pending",
                "containerStatuses": [{
                    "name": "main", "ready": false, "restartCount": 0, "lastState": {},
                    "state": {"waiting": {"reason": "ImagePullBackOff",
                                          "message": "Back-off pulling image \"does-not-exist\""}}
                }]
            }),
        );
        assert_eq!(status_in_both(&image_pull), Degraded);
    }

    #[test]
    fn waiting_messages_of_several_stuck_containers_are_joined_with_commas() {
        let two = pod(
            "Always",
            json!({"phase": "Pending", "containerStatuses": [
                {"name": "a", "state": {"waiting": {"reason": "ErrImagePull", "message": "one"}}},
                {"name": "b", "state": {"waiting": {"reason": "ContainerCreating"}}},
                {"name": "c", "state": {"waiting": {"reason": "CreateContainerConfigError",
                                                     "message": "two"}}}
            ]}),
        );
        assert_eq!(verdict(&two), Health::new(Degraded, "one, two"));
    }

    #[test]
    fn h07_an_always_pod_is_healthy_when_ready_and_progressing_until_then() {
        let ready = pod(
            "Always",
            json!({"phase": "Running", "conditions": [ready_condition("True")],
                   "containerStatuses": [{"name": "main", "ready": true,
                                          "state": {"running": {}}, "lastState": {}}]}),
        );
        assert_eq!(status_in_both(&ready), Healthy);
        let not_ready = pod(
            "Always",
            json!({"phase": "Running", "conditions": [ready_condition("False")],
                   "containerStatuses": [{"name": "main", "ready": false,
                                          "state": {"running": {}}, "lastState": {}}]}),
        );
        assert_eq!(status_in_both(&not_ready), Progressing);
    }

    #[test]
    fn an_always_pod_that_is_not_ready_after_a_container_restart_is_degraded() {
        let restarted = pod(
            "Always",
            json!({"phase": "Running", "message": "probe failing",
                   "conditions": [ready_condition("False")],
                   "containerStatuses": [{"name": "main", "state": {"running": {}},
                                          "lastState": {"terminated": {"exitCode": 137}}}]}),
        );
        assert_eq!(verdict(&restarted), Health::new(Degraded, "probe failing"));
    }

    #[test]
    fn h08_a_never_pod_follows_its_phase() {
        let running = pod("Never", json!({"phase": "Running"}));
        assert_eq!(status_in_both(&running), Progressing);
        let succeeded = pod("Never", json!({"phase": "Succeeded"}));
        assert_eq!(status_in_both(&succeeded), Healthy);
        let pending = pod("Never", json!({"phase": "Pending"}));
        assert_eq!(status_in_both(&pending), Progressing);
        let failed = pod(
            "Never",
            json!({"phase": "Failed", "containerStatuses": [{
                "name": "main", "ready": false, "lastState": {},
                "state": {"terminated": {"exitCode": 1, "reason": "Error"}}
            }]}),
        );
        assert_eq!(
            verdict(&failed),
            Health::new(Degraded, "container \"main\" failed with exit code 1")
        );
    }

    #[test]
    fn a_failed_pod_explains_itself_with_the_best_message_available() {
        let with_pod_message = pod(
            "Never",
            json!({"phase": "Failed", "message": "The node was low on resource: memory."}),
        );
        assert_eq!(
            verdict(&with_pod_message).message.as_deref(),
            Some("The node was low on resource: memory.")
        );
        let init_first = pod(
            "Never",
            json!({"phase": "Failed",
                   "initContainerStatuses": [{"name": "init", "state": {"terminated":
                       {"exitCode": 2, "message": "init says no"}}}],
                   "containerStatuses": [{"name": "main", "state": {"terminated":
                       {"exitCode": 1}}}]}),
        );
        assert_eq!(
            verdict(&init_first).message.as_deref(),
            Some("init says no")
        );
        let oom = pod(
            "Never",
            json!({"phase": "Failed", "containerStatuses": [
                {"name": "ok", "state": {"terminated": {"exitCode": 0}}},
                {"name": "main", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
            ]}),
        );
        assert_eq!(verdict(&oom).message.as_deref(), Some("OOMKilled"));
        let silent = pod("Never", json!({"phase": "Failed"}));
        assert_eq!(verdict(&silent), Health::status_only(Degraded));
    }

    #[test]
    fn a_running_pod_with_an_empty_restart_policy_is_unknown() {
        let undefaulted = pod("", json!({"phase": "Running"}));
        assert_eq!(status_in_both(&undefaulted), Unknown);
        let odd_phase = pod(
            "Always",
            json!({"phase": "Unknown", "message": "node lost"}),
        );
        assert_eq!(verdict(&odd_phase), Health::new(Unknown, "node lost"));
    }

    #[test]
    fn h09_a_pod_being_deleted_is_progressing_pending_deletion() {
        let mut deleting = pod(
            "Always",
            json!({"phase": "Pending", "containerStatuses": [{"name": "main",
                   "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}),
        );
        deleting["metadata"]["deletionTimestamp"] = json!("2018-12-03T10:16:04Z");
        assert_eq!(
            verdict(&deleting),
            Health::new(Progressing, "Pending deletion")
        );
        assert_eq!(status_in_both(&deleting), Progressing);
    }

    #[test]
    fn the_ignore_restart_policy_annotation_makes_a_non_hook_pod_long_running_in_ge_mono() {
        let mut never = pod(
            "Never",
            json!({"phase": "Running", "conditions": [ready_condition("True")]}),
        );
        never["metadata"]["annotations"] = json!({IGNORE_RESTART_POLICY_ANNOTATION: "true"});
        assert_eq!(verdict_with(&never, new()).status, Healthy);
        assert_eq!(verdict_with(&never, old()).status, Progressing);

        let mut backoff = pod(
            "OnFailure",
            json!({"phase": "Running", "containerStatuses": [{"name": "main",
                   "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}}]}),
        );
        backoff["metadata"]["annotations"] = json!({IGNORE_RESTART_POLICY_ANNOTATION: "true"});
        assert_eq!(verdict_with(&backoff, new()).status, Degraded);
        assert_eq!(verdict_with(&backoff, old()).status, Progressing);

        let mut not_exactly_true = never.clone();
        not_exactly_true["metadata"]["annotations"] =
            json!({IGNORE_RESTART_POLICY_ANNOTATION: "True"});
        assert_eq!(verdict(&not_exactly_true).status, Progressing);
    }

    #[test]
    fn the_ignore_restart_policy_annotation_is_ignored_on_hook_pods() {
        let running_ready = pod(
            "Never",
            json!({"phase": "Running", "conditions": [ready_condition("True")]}),
        );
        let with = |annotations: Value| {
            let mut p = running_ready.clone();
            p["metadata"]["annotations"] = annotations;
            status(&p)
        };
        let ignore = IGNORE_RESTART_POLICY_ANNOTATION;
        assert_eq!(
            with(json!({ignore: "true", "argocd.argoproj.io/hook": "PreSync"})),
            Progressing
        );
        // Present but garbage still makes it a hook (the key's presence is what counts).
        assert_eq!(
            with(json!({ignore: "true", "argocd.argoproj.io/hook": ""})),
            Progressing
        );
        assert_eq!(
            with(json!({ignore: "true", "helm.sh/hook": "pre-install"})),
            Progressing
        );
        // Not hooks: a Helm CRD marker, and a Skip-only Argo annotation.
        assert_eq!(
            with(json!({ignore: "true", "helm.sh/hook": "crd-install"})),
            Healthy
        );
        assert_eq!(
            with(json!({ignore: "true", "argocd.argoproj.io/hook": " Skip "})),
            Healthy
        );
        assert_eq!(
            with(json!({ignore: "true", "argocd.argoproj.io/hook": "Skip,PreSync"})),
            Progressing
        );
    }

    // ----- H10–H12: Deployment, StatefulSet, DaemonSet --------------------------------------

    #[test]
    fn h10_deployments_follow_the_rollout_checks_in_order() {
        let progressing = deployment(
            json!({"replicas": 1, "strategy": {"type": "RollingUpdate"}}),
            4,
            json!({
                "observedGeneration": 4, "replicas": 2, "updatedReplicas": 1,
                "readyReplicas": 1, "availableReplicas": 1, "unavailableReplicas": 1,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                    {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}
                ]
            }),
        );
        assert_eq!(
            verdict(&progressing),
            Health::new(
                Progressing,
                "Waiting for rollout to finish: 1 old replicas are pending termination..."
            )
        );

        let degraded = deployment(
            json!({"replicas": 1}),
            4,
            json!({
                "observedGeneration": 4, "replicas": 2, "updatedReplicas": 1,
                "availableReplicas": 1,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                    {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                     "message": "ReplicaSet \"guestbook-ui-75dd4d49d5\" has timed out progressing."}
                ]
            }),
        );
        assert_eq!(
            verdict(&degraded),
            Health::new(
                Degraded,
                "Deployment \"guestbook-ui\" exceeded its progress deadline"
            )
        );

        let paused = deployment(
            json!({"replicas": 1, "paused": true}),
            5,
            json!({"observedGeneration": 4}),
        );
        assert_eq!(
            verdict(&paused),
            Health::new(Suspended, "Deployment is paused")
        );

        let nginx = deployment(
            json!({"replicas": 2}),
            1,
            json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
                   "readyReplicas": 2, "availableReplicas": 2}),
        );
        assert_eq!(assess_with(&nginx, new()), ok(Healthy));
        assert_eq!(status_in_both(&nginx), Healthy);
    }

    #[test]
    fn a_deployment_whose_new_generation_is_not_observed_yet_is_progressing() {
        let stale = deployment(json!({"replicas": 1}), 3, json!({"observedGeneration": 2}));
        assert_eq!(status(&stale), Progressing);
        let fresh = deployment(json!({}), 0, json!({}));
        assert_eq!(status(&fresh), Healthy);
    }

    #[test]
    fn a_deployment_without_spec_replicas_skips_the_updated_replicas_check() {
        let no_replicas = deployment(
            json!({}),
            1,
            json!({"observedGeneration": 1, "replicas": 0, "updatedReplicas": 0,
                   "availableReplicas": 0}),
        );
        assert_eq!(status(&no_replicas), Healthy);
        let with_replicas = deployment(json!({"replicas": 3}), 1, json!({"observedGeneration": 1}));
        assert_eq!(
            verdict(&with_replicas).message.as_deref(),
            Some("Waiting for rollout to finish: 0 out of 3 new replicas have been updated...")
        );
    }

    #[test]
    fn a_deployment_waits_for_updated_replicas_to_become_available() {
        let unavailable = deployment(
            json!({"replicas": 2}),
            1,
            json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
                   "availableReplicas": 1}),
        );
        assert_eq!(
            verdict(&unavailable).message.as_deref(),
            Some("Waiting for rollout to finish: 1 of 2 updated replicas are available...")
        );
    }

    #[test]
    fn an_apps_v1beta2_deployment_is_an_error_reported_as_unknown() {
        let mut old = deployment(json!({"replicas": 1}), 1, json!({"observedGeneration": 1}));
        old["apiVersion"] = json!("apps/v1beta2");
        let result = assess_with(&old, new());
        let expected = HealthError::UnsupportedVersion {
            group: "apps".into(),
            version: "v1beta2".into(),
            kind: "Deployment".into(),
        };
        assert_eq!(result, Err(expected.clone()));
        assert_eq!(
            expected.to_health(),
            Health::new(
                Unknown,
                "unsupported Deployment GVK: apps/v1beta2, Kind=Deployment"
            )
        );
        assert_eq!(expected.metric_label(), "unsupported_version");
        assert_eq!(hook_outcome(&result), TaskHealthOutcome::Error);
        assert_eq!(resource_outcome(&result), TaskHealthOutcome::Running);
    }

    #[test]
    fn every_typed_check_rejects_versions_it_does_not_know() {
        let cases = [
            ("apps", "v1beta1", "StatefulSet"),
            ("apps", "v1beta2", "ReplicaSet"),
            ("apps", "v1beta2", "DaemonSet"),
            ("", "v2", "Pod"),
            ("", "v2", "Service"),
            ("", "v2", "PersistentVolumeClaim"),
            ("batch", "v1beta1", "Job"),
            ("apiregistration.k8s.io", "v2", "APIService"),
            ("autoscaling", "v3", "HorizontalPodAutoscaler"),
        ];
        for (group, version, kind) in cases {
            for release in [old(), new()] {
                let result = assess(group, version, kind, &json!({}), release);
                assert!(
                    matches!(result, Err(HealthError::UnsupportedVersion { .. })),
                    "{group}/{version} {kind}: {result:?}"
                );
            }
        }
        let err = assess("", "v2", "Pod", &json!({}), new());
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("unsupported Pod GVK: /v2, Kind=Pod".to_string())
        );
    }

    #[test]
    fn ingress_and_workflow_accept_any_version() {
        let ingress = json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}});
        assert_eq!(
            assess("extensions", "v1beta1", "Ingress", &ingress, new()),
            ok(Healthy)
        );
        assert_eq!(
            assess("networking.k8s.io", "v1beta1", "Ingress", &ingress, new()),
            ok(Healthy)
        );
        let wf = json!({"status": {"phase": "Succeeded"}});
        assert_eq!(
            assess("argoproj.io", "v1beta1", "Workflow", &wf, new()),
            ok(Healthy)
        );
    }

    #[test]
    fn h11_statefulsets_are_healthy_once_observed_ready_and_rolled_out() {
        let sts = |spec: Value, status: Value| {
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "redis-master", "namespace": "default", "generation": 1},
                   "spec": spec, "status": status})
        };
        let settled = json!({"observedGeneration": 1, "replicas": 1, "readyReplicas": 1,
                             "currentReplicas": 1, "updatedReplicas": 1,
                             "currentRevision": "redis-master-7b8f75b98",
                             "updateRevision": "redis-master-7b8f75b98"});
        let rolling = sts(
            json!({"replicas": 1, "updateStrategy": {"type": "RollingUpdate"}}),
            settled.clone(),
        );
        assert_eq!(
            verdict(&rolling),
            Health::new(
                Healthy,
                "statefulset rolling update complete 1 pods at revision redis-master-7b8f75b98..."
            )
        );
        let on_delete = sts(
            json!({"replicas": 1, "updateStrategy": {"type": "OnDelete"}}),
            json!({"observedGeneration": 1, "replicas": 1, "readyReplicas": 1,
                   "currentRevision": "a", "updateRevision": "b"}),
        );
        assert_eq!(
            verdict(&on_delete),
            Health::new(Healthy, "statefulset has 1 ready pods")
        );

        let unobserved = sts(json!({"replicas": 1}), json!({"observedGeneration": 0}));
        assert_eq!(status(&unobserved), Progressing);
        let no_status = sts(json!({"replicas": 1}), json!({}));
        assert_eq!(status(&no_status), Progressing);
    }

    #[test]
    fn a_statefulset_waits_for_ready_pods_then_for_its_revision() {
        let sts = |status: Value| {
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "db", "generation": 2},
                   "spec": {"replicas": 3}, "status": status})
        };
        let unready = sts(json!({"observedGeneration": 2, "readyReplicas": 1}));
        assert_eq!(
            verdict(&unready),
            Health::new(Progressing, "Waiting for 2 pods to be ready...")
        );
        let rolling = sts(json!({"observedGeneration": 2, "readyReplicas": 3,
                                 "updatedReplicas": 1, "currentRevision": "db-1",
                                 "updateRevision": "db-2"}));
        assert_eq!(
            verdict(&rolling),
            Health::new(
                Progressing,
                "waiting for statefulset rolling update to complete 1 pods at revision db-2..."
            )
        );
    }

    #[test]
    fn a_partitioned_statefulset_only_waits_for_the_pods_above_the_partition() {
        let sts = |partition: Value, updated: i64| {
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "db", "generation": 1},
                   "spec": {"replicas": 5, "updateStrategy": {"type": "RollingUpdate",
                            "rollingUpdate": {"partition": partition}}},
                   "status": {"observedGeneration": 1, "readyReplicas": 5,
                              "updatedReplicas": updated,
                              "currentRevision": "db-1", "updateRevision": "db-2"}})
        };
        assert_eq!(
            verdict(&sts(json!(3), 1)),
            Health::new(
                Progressing,
                "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated..."
            )
        );
        // The rollingUpdate block skips the revision comparison entirely.
        assert_eq!(
            verdict(&sts(json!(3), 2)),
            Health::new(
                Healthy,
                "partitioned roll out complete: 2 new pods have been updated..."
            )
        );
        assert_eq!(status(&sts(Value::Null, 0)), Healthy);
    }

    #[test]
    fn h12_an_on_delete_daemonset_is_healthy_whatever_its_counts() {
        let ds = |strategy: &str, status: Value| {
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                   "metadata": {"name": "fluentd", "namespace": "kube-system", "generation": 4},
                   "spec": {"updateStrategy": {"type": strategy}}, "status": status})
        };
        let on_delete = ds(
            "OnDelete",
            json!({"observedGeneration": 4, "currentNumberScheduled": 1,
                   "desiredNumberScheduled": 1, "numberAvailable": 1, "numberReady": 1}),
        );
        assert_eq!(status_in_both(&on_delete), Healthy);
        let behind = ds(
            "RollingUpdate",
            json!({"observedGeneration": 4, "desiredNumberScheduled": 3,
                   "updatedNumberScheduled": 1, "numberAvailable": 3}),
        );
        assert_eq!(
            verdict(&behind).message.as_deref(),
            Some(
                "Waiting for daemon set \"fluentd\" rollout to finish: 1 out of 3 new pods have been updated..."
            )
        );
        let unavailable = ds(
            "RollingUpdate",
            json!({"observedGeneration": 4, "desiredNumberScheduled": 3,
                   "updatedNumberScheduled": 3, "numberAvailable": 2}),
        );
        assert_eq!(status(&unavailable), Progressing);
        let stale = ds("OnDelete", json!({"observedGeneration": 3}));
        assert_eq!(status(&stale), Progressing);
    }

    #[test]
    fn a_replicaset_with_a_true_replica_failure_condition_is_degraded() {
        let rs = |status: Value| {
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                   "metadata": {"name": "web-5d4f", "generation": 1},
                   "spec": {"replicas": 2}, "status": status})
        };
        let failing = rs(json!({"observedGeneration": 1, "availableReplicas": 0,
            "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                            "message": "pods \"web-5d4f-\" is forbidden: exceeded quota"}]}));
        assert_eq!(
            verdict(&failing),
            Health::new(Degraded, "pods \"web-5d4f-\" is forbidden: exceeded quota")
        );
        let cleared = rs(json!({"observedGeneration": 1, "availableReplicas": 1,
            "conditions": [{"type": "ReplicaFailure", "status": "False"}]}));
        assert_eq!(
            verdict(&cleared).message.as_deref(),
            Some("Waiting for rollout to finish: 1 out of 2 new replicas are available...")
        );
        let done = rs(json!({"observedGeneration": 1, "availableReplicas": 2}));
        assert_eq!(status(&done), Healthy);
    }

    // ----- H13–H15, H19: Service, Ingress, PVC, APIService ----------------------------------

    #[test]
    fn h13_only_a_load_balancer_service_without_an_address_is_progressing() {
        let svc = |spec_type: &str, status: Value| {
            json!({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "argocd-server", "namespace": "argocd"},
                   "spec": {"type": spec_type, "ports": [{"port": 80, "targetPort": 8080}]},
                   "status": status})
        };
        assert_eq!(
            assess_with(&svc("ClusterIP", json!({"loadBalancer": {}})), new()),
            ok(Healthy)
        );
        let assigned = svc(
            "LoadBalancer",
            json!({"loadBalancer": {"ingress": [{"hostname": "abc.elb.amazonaws.com"}]}}),
        );
        assert_eq!(status_in_both(&assigned), Healthy);
        let unassigned = svc("LoadBalancer", json!({"loadBalancer": {}}));
        assert_eq!(assess_with(&unassigned, new()), ok(Progressing));
    }

    #[test]
    fn h14_an_ingress_is_healthy_once_it_has_any_load_balancer_entry() {
        let ing = |status: Value| {
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                   "metadata": {"name": "web", "namespace": "app"},
                   "spec": {"rules": [{"host": "web.example.com"}]}, "status": status})
        };
        let assigned = ing(json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}));
        assert_eq!(status_in_both(&assigned), Healthy);
        let empty_entry = ing(json!({"loadBalancer": {"ingress": [{}]}}));
        assert_eq!(status(&empty_entry), Healthy);
        let unassigned = ing(json!({"loadBalancer": {}}));
        assert_eq!(assess_with(&unassigned, new()), ok(Progressing));
    }

    #[test]
    fn h15_a_pvc_follows_its_phase() {
        let pvc = |status: Value| {
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "data", "namespace": "app"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                            "resources": {"requests": {"storage": "8Gi"}}},
                   "status": status})
        };
        assert_eq!(status_in_both(&pvc(json!({"phase": "Bound"}))), Healthy);
        assert_eq!(
            status_in_both(&pvc(json!({"phase": "Pending"}))),
            Progressing
        );
        assert_eq!(status_in_both(&pvc(json!({"phase": "Lost"}))), Degraded);
        assert_eq!(status_in_both(&pvc(json!({}))), Unknown);
    }

    #[test]
    fn h19_an_api_service_is_healthy_only_when_available() {
        let api = |version: &str, conditions: Value| {
            json!({"apiVersion": format!("apiregistration.k8s.io/{version}"),
                   "kind": "APIService", "metadata": {"name": "v1beta1.metrics.k8s.io"},
                   "spec": {"group": "metrics.k8s.io", "version": "v1beta1",
                            "service": {"name": "metrics-server", "namespace": "kube-system"}},
                   "status": {"conditions": conditions}})
        };
        let available = api(
            "v1",
            json!([{"type": "Available", "status": "True", "reason": "Passed",
                    "message": "all checks passed"}]),
        );
        assert_eq!(
            verdict(&available),
            Health::new(Healthy, "Passed: all checks passed")
        );
        let unavailable = api(
            "v1",
            json!([{"type": "Available", "status": "False", "reason": "MissingEndpoints",
                    "message": "endpoints for service/metrics-server have no addresses"}]),
        );
        assert_eq!(status_in_both(&unavailable), Progressing);
        let beta = api("v1beta1", json!([{"type": "Available", "status": "True"}]));
        assert_eq!(status(&beta), Healthy);
        let unprocessed = api("v1", json!([]));
        assert_eq!(
            verdict(&unprocessed),
            Health::new(Progressing, "Waiting to be processed")
        );
    }

    // ----- H16: HPA ----------------------------------------------------------------------------

    #[test]
    fn h16_hpa_verdicts_from_v2_conditions_and_the_v1_annotation() {
        let degraded = hpa(
            "v2",
            json!({}),
            json!({"conditions": [hpa_condition("AbleToScale", "True", "FailedGetScale")]}),
        );
        assert_eq!(status_in_both(&degraded), Degraded);
        let progressing = hpa(
            "v2",
            json!({}),
            json!({"conditions": [
                hpa_condition("ScalingActive", "True", "ValidMetricFound"),
                hpa_condition("ScalingLimited", "False", "DesiredWithinRange")
            ]}),
        );
        assert_eq!(
            verdict(&progressing),
            Health::new(Progressing, "Waiting to Autoscale")
        );
        let no_annotation = hpa("v1", json!({}), json!({"currentReplicas": 1}));
        assert_eq!(
            verdict(&no_annotation),
            Health::new(Progressing, "Waiting to Autoscale")
        );
        let healthy = hpa(
            "v2",
            json!({}),
            json!({"conditions": [
                hpa_condition("AbleToScale", "True", "ReadyForNewScale"),
                hpa_condition("ScalingActive", "True", "ValidMetricFound"),
                hpa_condition("ScalingLimited", "False", "DesiredWithinRange")
            ]}),
        );
        assert_eq!(
            verdict(&healthy),
            Health::new(Healthy, "AbleToScale/ReadyForNewScale")
        );
    }

    #[test]
    fn a_v1_hpa_reads_its_conditions_from_the_json_annotation() {
        let conditions = json!([
            {"type": "AbleToScale", "status": "True", "reason": "SucceededGetScale",
             "message": "the HPA controller was able to get the target's current scale"},
            {"type": "ScalingActive", "status": "False", "reason": "FailedGetResourceMetric",
             "message": "unable to get metrics for resource cpu"}
        ]);
        let annotated = hpa(
            "v1",
            json!({HPA_V1_CONDITIONS_ANNOTATION: conditions.to_string()}),
            json!({}),
        );
        assert_eq!(
            verdict_with(&annotated, new()),
            Health::new(Degraded, "unable to get metrics for resource cpu")
        );
        assert_eq!(verdict_with(&annotated, old()).status, Healthy);

        let empty = hpa("v1", json!({HPA_V1_CONDITIONS_ANNOTATION: "[]"}), json!({}));
        assert_eq!(status_in_both(&empty), Progressing);
        let null = hpa(
            "v1",
            json!({HPA_V1_CONDITIONS_ANNOTATION: "null"}),
            json!({}),
        );
        assert_eq!(status(&null), Progressing);
        // Go's encoding/json matches field names case-insensitively.
        let shouty = hpa(
            "v1",
            json!({HPA_V1_CONDITIONS_ANNOTATION: r#"[{"Type":"ScalingLimited","STATUS":"True"}]"#}),
            json!({}),
        );
        assert_eq!(status(&shouty), Healthy);
    }

    #[test]
    fn a_malformed_v1_hpa_conditions_annotation_is_an_error() {
        for bad in [
            "",
            "{",
            r#"{"type":"AbleToScale"}"#,
            "[1]",
            r#"[{"status":true}]"#,
        ] {
            let h = hpa("v1", json!({HPA_V1_CONDITIONS_ANNOTATION: bad}), json!({}));
            let result = assess_with(&h, new());
            assert!(
                matches!(result, Err(HealthError::MalformedHpaConditions { .. })),
                "{bad:?}: {result:?}"
            );
            assert_eq!(hook_outcome(&result), TaskHealthOutcome::Error);
        }
    }

    #[test]
    fn legacy_hpa_takes_the_first_matching_condition_while_ge_mono_looks_for_degraded_first() {
        let healthy_then_degraded = hpa(
            "v2",
            json!({}),
            json!({"conditions": [
                hpa_condition("AbleToScale", "True", "ReadyForNewScale"),
                hpa_condition("ScalingActive", "False", "FailedGetResourceMetric")
            ]}),
        );
        assert_eq!(verdict_with(&healthy_then_degraded, old()).status, Healthy);
        assert_eq!(
            verdict_with(&healthy_then_degraded, new()),
            Health::new(Degraded, "ScalingActive/FailedGetResourceMetric")
        );

        let degraded_then_healthy = hpa(
            "v2",
            json!({}),
            json!({"conditions": [
                hpa_condition("ScalingActive", "False", "InvalidSelector"),
                hpa_condition("AbleToScale", "True", "ReadyForNewScale")
            ]}),
        );
        assert_eq!(status_in_both(&degraded_then_healthy), Degraded);
    }

    #[test]
    fn ge_mono_knows_more_degraded_hpa_reasons() {
        for reason in [
            "FailedGetObjectMetric",
            "FailedGetPodsMetric",
            "FailedGetExternalMetric",
            "FailedComputeMetricsReplicas",
        ] {
            let h = hpa(
                "v2",
                json!({}),
                json!({"conditions": [
                    hpa_condition("ScalingActive", "False", reason),
                    hpa_condition("AbleToScale", "True", "ReadyForNewScale")
                ]}),
            );
            assert_eq!(verdict_with(&h, new()).status, Degraded, "{reason}");
            assert_eq!(verdict_with(&h, old()).status, Healthy, "{reason}");
        }
    }

    #[test]
    fn hpa_v2beta_versions_are_checked_by_legacy_and_an_error_in_ge_mono() {
        for version in ["v2beta1", "v2beta2"] {
            let h = hpa(
                version,
                json!({}),
                json!({"conditions": [hpa_condition("AbleToScale", "True", "ReadyForNewScale")]}),
            );
            assert_eq!(verdict_with(&h, old()).status, Healthy);
            let mono = assess_with(&h, new());
            assert_eq!(
                mono.map_err(|e| e.to_string()),
                Err(format!(
                    "unsupported HPA GVK: autoscaling/{version}, Kind=HorizontalPodAutoscaler"
                ))
            );
        }
    }

    // ----- H17, H18: Workflow and kinds without health -------------------------------------

    #[test]
    fn h17_an_argo_workflow_follows_its_phase() {
        let wf = |status: Value| {
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
                   "metadata": {"name": "hello-world", "namespace": "argo"},
                   "spec": {"entrypoint": "main"}, "status": status})
        };
        assert_eq!(
            status_in_both(&wf(json!({"phase": "Running"}))),
            Progressing
        );
        assert_eq!(status_in_both(&wf(json!({"phase": "Succeeded"}))), Healthy);
        assert_eq!(status_in_both(&wf(json!({}))), Progressing);
        assert_eq!(status(&wf(json!({"phase": "Pending"}))), Progressing);
        assert_eq!(
            verdict(&wf(json!({"phase": "Failed", "message": "child failed"}))),
            Health::new(Degraded, "child failed")
        );
        assert_eq!(status(&wf(json!({"phase": "Error"}))), Degraded);
        let odd = wf(json!({"phase": "Omitted"}));
        assert_eq!(status(&odd), Unknown);
        assert_eq!(
            hook_outcome(&assess_with(&odd, new())),
            TaskHealthOutcome::Failed
        );
    }

    #[test]
    fn h18_knative_services_and_argo_applications_have_no_health_and_gate_nothing() {
        let knative = json!({
            "apiVersion": "serving.knative.dev/v1", "kind": "Service",
            "metadata": {"name": "helloworld-go", "namespace": "default"},
            "spec": {"template": {"spec": {"containers": [{"image": "gcr.io/knative-samples/helloworld-go"}]}}},
            "status": {"conditions": [{"type": "Ready", "status": "False"}]}
        });
        let application = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "guestbook", "namespace": "argocd"},
            "spec": {"destination": {"server": "https://kubernetes.default.svc"}},
            "status": {"health": {"status": "Degraded"}, "sync": {"status": "OutOfSync"}}
        });
        for obj in [&knative, &application] {
            for release in [old(), new()] {
                let result = assess_with(obj, release);
                assert_eq!(result, Ok(None));
                assert_eq!(hook_outcome(&result), TaskHealthOutcome::Succeeded);
                assert_eq!(resource_outcome(&result), TaskHealthOutcome::Succeeded);
            }
        }
        assert!(!has_health_check("serving.knative.dev", "Service"));
        assert!(!has_health_check("argoproj.io", "Application"));
        assert!(has_health_check("", "Service"));
        assert!(has_health_check("argoproj.io", "Workflow"));
    }

    #[test]
    fn has_health_check_covers_exactly_the_dispatched_kinds() {
        let checked = [
            ("apps", "Deployment"),
            ("apps", "StatefulSet"),
            ("apps", "ReplicaSet"),
            ("apps", "DaemonSet"),
            ("extensions", "Ingress"),
            ("networking.k8s.io", "Ingress"),
            ("argoproj.io", "Workflow"),
            ("apiregistration.k8s.io", "APIService"),
            ("", "Service"),
            ("", "PersistentVolumeClaim"),
            ("", "Pod"),
            ("batch", "Job"),
            ("autoscaling", "HorizontalPodAutoscaler"),
        ];
        for (group, kind) in checked {
            assert!(has_health_check(group, kind), "{group}/{kind}");
        }
        let unchecked = [
            ("", "ConfigMap"),
            ("", "Secret"),
            ("batch", "CronJob"),
            ("policy", "PodDisruptionBudget"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
            ("extensions", "Deployment"),
            ("apps", "deployment"),
            ("networking.k8s.io", "NetworkPolicy"),
        ];
        for (group, kind) in unchecked {
            assert!(!has_health_check(group, kind), "{group}/{kind}");
            assert_eq!(assess(group, "v1", kind, &json!({}), new()), Ok(None));
        }
    }

    // ----- Pending deletion ------------------------------------------------------------------

    #[test]
    fn pending_deletion_applies_to_kinds_without_health_and_names_finalizers_from_3_6() {
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "creds", "deletionTimestamp": "2024-05-01T10:00:00Z",
                         "finalizers": ["kubernetes", "example.com/keep"]}});
        assert_eq!(
            assess_with(&secret, old()),
            Ok(Some(Health::new(Progressing, PENDING_DELETION)))
        );
        assert_eq!(
            assess_with(&secret, new()),
            Ok(Some(Health::new(
                Progressing,
                "Pending deletion; blocked by finalizers: kubernetes, example.com/keep"
            )))
        );
        secret["metadata"]["finalizers"] = json!([]);
        assert_eq!(
            assess_with(&secret, new()),
            Ok(Some(Health::new(Progressing, PENDING_DELETION)))
        );
        // Up to 3.5 before the version check: a deleting v1beta2 Deployment is not an error;
        // from 3.6 the check runs first and its error wins.
        let v1beta2 = json!({"apiVersion": "apps/v1beta2", "kind": "Deployment",
            "metadata": {"name": "web", "deletionTimestamp": "2024-05-01T10:00:00.123+02:00"}});
        assert_eq!(verdict_with(&v1beta2, old()).status, Progressing);
        assert!(matches!(
            assess_with(&v1beta2, new()),
            Err(HealthError::UnsupportedVersion { .. })
        ));
        // A kind with a check: its verdict is replaced by the pending deletion.
        let mut done = job(json!({"conditions": [{"type": "Complete", "status": "True"}]}));
        done["metadata"]["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
        done["metadata"]["finalizers"] = json!(["foregroundDeletion"]);
        assert_eq!(
            verdict_with(&done, new()).message.as_deref(),
            Some("Pending deletion; blocked by finalizers: foregroundDeletion")
        );
    }

    #[test]
    fn a_deleting_hook_that_still_has_the_hook_finalizer_is_assessed_normally() {
        let mut finished = job(json!({"conditions": [{"type": "Complete", "status": "True"}]}));
        finished["metadata"]["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
        finished["metadata"]["finalizers"] = json!(["foregroundDeletion", HOOK_FINALIZER]);
        assert_eq!(status(&finished), Healthy);
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "deletionTimestamp": "2024-05-01T10:00:00Z",
                         "finalizers": [HOOK_FINALIZER]}});
        assert_eq!(assess_with(&secret, new()), Ok(None));
        // A finalizer list with a non-string entry reads as no finalizers at all, like Go's.
        secret["metadata"]["finalizers"] = json!([HOOK_FINALIZER, 7]);
        assert_eq!(status(&secret), Progressing);
    }

    #[test]
    fn only_a_valid_non_zero_rfc3339_deletion_timestamp_counts() {
        let with_ts = |ts: Value| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "deletionTimestamp": ts}})
        };
        for valid in [
            "2018-12-03T10:16:04Z",
            "2024-02-29T23:59:59.999999999Z",
            "2024-05-01T10:00:00,5-07:30",
            "0001-01-01T00:00:01Z",
        ] {
            assert_eq!(status(&with_ts(json!(valid))), Progressing, "{valid}");
        }
        for ignored in [
            json!(""),
            json!(null),
            json!(1_700_000_000),
            json!("yesterday"),
            json!("2018-12-03 10:16:04Z"),
            json!("2018-12-03T10:16:04"),
            json!("2023-02-29T10:16:04Z"),
            json!("2018-13-03T10:16:04Z"),
            json!("2018-12-03T24:00:00Z"),
            json!("2018-12-03T10:16:04.Z"),
            json!("0001-01-01T00:00:00Z"),
            json!("0001-01-01T02:00:00+02:00"),
        ] {
            assert_eq!(
                assess_with(&with_ts(ignored.clone()), new()),
                Ok(None),
                "{ignored}"
            );
        }
    }

    // ----- Outcome tables (spec §5.2 / §8.9) --------------------------------------------------

    #[test]
    fn hook_outcomes_follow_get_operation_phase() {
        use TaskHealthOutcome as T;
        let cases = [
            (Ok(None), T::Succeeded),
            (ok(Healthy), T::Succeeded),
            (ok(Progressing), T::Running),
            (ok(Suspended), T::Running),
            (ok(Degraded), T::Failed),
            (ok(Unknown), T::Failed),
            (ok(Missing), T::Succeeded),
            (
                Err(HealthError::MalformedHpaConditions { reason: "x".into() }),
                T::Error,
            ),
        ];
        for (health, expected) in cases {
            assert_eq!(hook_outcome(&health), expected, "{health:?}");
        }
    }

    #[test]
    fn non_hook_outcomes_only_finish_on_healthy_or_degraded() {
        use TaskHealthOutcome as T;
        let cases = [
            (Ok(None), T::Succeeded),
            (ok(Healthy), T::Succeeded),
            (ok(Degraded), T::Failed),
            (ok(Progressing), T::Running),
            (ok(Suspended), T::Running),
            (ok(Unknown), T::Running),
            (ok(Missing), T::Running),
            (
                Err(HealthError::UnsupportedVersion {
                    group: "apps".into(),
                    version: "v1beta2".into(),
                    kind: "Deployment".into(),
                }),
                T::Running,
            ),
        ];
        for (health, expected) in cases {
            assert_eq!(resource_outcome(&health), expected, "{health:?}");
        }
    }

    // ----- Status type -----------------------------------------------------------------------

    #[test]
    fn statuses_rank_from_healthy_to_unknown_like_argo_cd_health_order() {
        let ranked = [Healthy, Suspended, Progressing, Missing, Degraded, Unknown];
        assert!(ranked.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            [Progressing, Healthy, Degraded].into_iter().max(),
            Some(Degraded)
        );
    }

    #[test]
    fn statuses_display_and_serialize_as_argo_cd_spells_them() {
        assert_eq!(Progressing.to_string(), "Progressing");
        assert_eq!(
            serde_json::to_value(Suspended).ok(),
            Some(json!("Suspended"))
        );
        assert_eq!(
            serde_json::to_value(Health::new(Progressing, "Pending deletion")).ok(),
            Some(json!({"status": "Progressing", "message": "Pending deletion"}))
        );
        assert_eq!(
            serde_json::to_value(Health::new(Healthy, "")).ok(),
            Some(json!({"status": "Healthy"}))
        );
    }

    #[test]
    fn assess_resource_uses_the_resources_own_group_version_and_kind() {
        let raw = job(json!({"conditions": [{"type": "Complete", "status": "True"}]}));
        let r = Resource::from_value(raw, None).unwrap();
        assert_eq!(assess_resource(&r, new()), ok(Healthy));
    }

    // ----- Robustness ------------------------------------------------------------------------

    #[test]
    fn replicas_written_as_strings_are_treated_as_absent() {
        let stringly = deployment(
            json!({"replicas": "3"}),
            1,
            json!({"observedGeneration": 1, "replicas": "3", "updatedReplicas": "3",
                   "availableReplicas": "1"}),
        );
        assert_eq!(status(&stringly), Healthy);
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "generation": 1},
            "spec": {"replicas": "3"}, "status": {"observedGeneration": 1.0}});
        assert_eq!(status(&sts), Healthy);
    }

    #[test]
    fn extreme_counts_do_not_overflow() {
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "generation": 1},
            "spec": {"replicas": i64::MAX, "updateStrategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"partition": i64::MIN}}},
            "status": {"observedGeneration": 1, "readyReplicas": i64::MAX}});
        assert_eq!(status(&sts), Progressing);
        let dep = deployment(
            json!({}),
            1,
            json!({"observedGeneration": 1, "replicas": i64::MAX,
                   "updatedReplicas": i64::MIN, "availableReplicas": u64::MAX}),
        );
        assert_eq!(status(&dep), Progressing);
    }

    #[test]
    fn no_check_panics_on_malformed_objects() {
        let kinds = [
            ("apps", "v1", "Deployment"),
            ("apps", "v1", "StatefulSet"),
            ("apps", "v1", "ReplicaSet"),
            ("apps", "v1", "DaemonSet"),
            ("networking.k8s.io", "v1", "Ingress"),
            ("argoproj.io", "v1alpha1", "Workflow"),
            ("apiregistration.k8s.io", "v1", "APIService"),
            ("", "v1", "Service"),
            ("", "v1", "PersistentVolumeClaim"),
            ("", "v1", "Pod"),
            ("batch", "v1", "Job"),
            ("autoscaling", "v1", "HorizontalPodAutoscaler"),
            ("autoscaling", "v2", "HorizontalPodAutoscaler"),
            ("", "v1", "ConfigMap"),
        ];
        let weird = [
            json!(null),
            json!(42),
            json!("text"),
            json!([1, 2]),
            json!({}),
            json!({"metadata": "x", "spec": [], "status": 7}),
            json!({"metadata": {"annotations": [], "finalizers": {}, "deletionTimestamp": 5,
                                "generation": "2"},
                   "spec": {"replicas": -1, "paused": "yes", "type": 3, "restartPolicy": null,
                            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": 1}},
                   "status": {"conditions": [null, 1, "x", {"type": 1, "status": []}],
                              "phase": {"a": 1}, "containerStatuses": [null, {"state": 1},
                                  {"state": {"waiting": "x", "terminated": []}},
                                  {"state": {"waiting": {"reason": 7}}}],
                              "initContainerStatuses": "x",
                              "loadBalancer": {"ingress": "x"},
                              "observedGeneration": 1e300, "readyReplicas": -1e300}}),
            json!({"metadata": {"annotations": {HPA_V1_CONDITIONS_ANNOTATION: 5,
                                                "argocd.argoproj.io/hook": ["PreSync"]}},
                   "status": {"phase": "Failed", "containerStatuses": [
                       {"name": 5, "state": {"terminated": {"exitCode": "1", "reason": 9}}}]}}),
        ];
        for (group, version, kind) in kinds {
            for obj in &weird {
                for release in [old(), new()] {
                    // Any verdict is fine; reaching the end without a panic is the point.
                    let _ = assess(group, version, kind, obj, release);
                }
            }
        }
    }
}

/// Where a kind's health verdict comes from in a stock Argo CD controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HealthCheckSource {
    /// A built-in Go check (spec §8).
    Builtin,
    /// A Lua check bundled with Argo CD in `resource_customizations/` (users may override it).
    BundledLua,
}

/// Which health check a stock Argo CD applies to a kind, if any. `None` means the kind has no
/// health: it never holds up the next wave and completes at once as a hook (spec §5.3, H18).
///
/// The Lua list is the set of `<group>/<kind>/health.lua` files in argoproj/argo-cd
/// `resource_customizations/` at commit 37ee009 (2026-08-22); `_` is a wildcard there, as in
/// Argo CD (`_.crossplane.io/_` matches every kind of every `*.crossplane.io` group). A cluster's
/// `resource.customizations` can add or override checks; syncguard cannot see those.
pub fn health_check_source(group: &str, kind: &str) -> Option<HealthCheckSource> {
    if has_health_check(group, kind) {
        return Some(HealthCheckSource::Builtin);
    }
    let matches = |entry: &&str| {
        let Some((g, k)) = entry.rsplit_once('/') else {
            return false;
        };
        // `_` is Argo CD's wildcard (`_.crossplane.io` is the glob `*.crossplane.io`).
        let group_ok = match g.strip_prefix('_') {
            Some(suffix) => group.ends_with(suffix),
            None => g == group,
        };
        group_ok && (k == "_" || k == kind)
    };
    BUNDLED_LUA_HEALTH
        .iter()
        .any(matches)
        .then_some(HealthCheckSource::BundledLua)
}

/// `<group>/<kind>` of every bundled Lua health check (see [`health_check_source`]).
const BUNDLED_LUA_HEALTH: &[&str] = &[
    "_.cnrm.cloud.google.com/_",
    "_.crossplane.io/_",
    "_.services.k8s.aws/_",
    "_.upbound.io/_",
    "acid.zalan.do/postgresql",
    "addons.cluster.x-k8s.io/ClusterResourceSet",
    "apiextensions.k8s.io/CustomResourceDefinition",
    "apps.3scale.net/APIManager",
    "apps.kruise.io/AdvancedCronJob",
    "apps.kruise.io/BroadcastJob",
    "apps.kruise.io/CloneSet",
    "apps.kruise.io/DaemonSet",
    "apps.kruise.io/StatefulSet",
    "apps.openshift.io/DeploymentConfig",
    "argoproj.io/AnalysisRun",
    "argoproj.io/ApplicationSet",
    "argoproj.io/CronWorkflow",
    "argoproj.io/EventBus",
    "argoproj.io/Experiment",
    "argoproj.io/Rollout",
    "astra.netapp.io/AppVault",
    "astra.netapp.io/Application",
    "astra.netapp.io/Backup",
    "astra.netapp.io/ExecHook",
    "astra.netapp.io/ExecHooksRun",
    "astra.netapp.io/ResourceBackup",
    "astra.netapp.io/ResticVolumeBackup",
    "astra.netapp.io/Schedule",
    "astra.netapp.io/Snapshot",
    "batch/CronJob",
    "beat.k8s.elastic.co/Beat",
    "bitnami.com/SealedSecret",
    "camel.apache.org/Integration",
    "capabilities.3scale.net/ActiveDoc",
    "capabilities.3scale.net/Application",
    "capabilities.3scale.net/ApplicationAuth",
    "capabilities.3scale.net/Backend",
    "capabilities.3scale.net/CustomPolicyDefinition",
    "capabilities.3scale.net/DeveloperAccount",
    "capabilities.3scale.net/DeveloperUser",
    "capabilities.3scale.net/OpenAPI",
    "capabilities.3scale.net/Product",
    "capabilities.3scale.net/ProxyConfigPromote",
    "capabilities.3scale.net/Tenant",
    "cassandra.rook.io/Cluster",
    "cdi.kubevirt.io/DataVolume",
    "ceph.rook.io/CephCluster",
    "ceph.rook.io/CephObjectStore",
    "cert-manager.io/Certificate",
    "cert-manager.io/ClusterIssuer",
    "cert-manager.io/Issuer",
    "certmanager.k8s.io/Certificate",
    "certmanager.k8s.io/Issuer",
    "clickhouse-keeper.altinity.com/ClickHouseKeeperInstallation",
    "clickhouse.altinity.com/ClickHouseInstallation",
    "cloudfront.aws.crossplane.io/Distribution",
    "cluster.x-k8s.io/Cluster",
    "cluster.x-k8s.io/Machine",
    "cluster.x-k8s.io/MachineDeployment",
    "cluster.x-k8s.io/MachineHealthCheck",
    "cluster.x-k8s.io/MachinePool",
    "controlplane.cluster.x-k8s.io/AWSManagedControlPlane",
    "coralogix.com/Alert",
    "coralogix.com/RecordingRuleGroupSet",
    "core.gardener.cloud/Shoot",
    "core.humio.com/HumioAction",
    "core.humio.com/HumioAlert",
    "core.humio.com/HumioCluster",
    "core.humio.com/HumioIngestToken",
    "core.humio.com/HumioParser",
    "core.humio.com/HumioRepository",
    "core.humio.com/HumioView",
    "core.spinkube.dev/SpinApp",
    "datadoghq.com/DatadogMetric",
    "db.atlasgo.io/AtlasMigration",
    "db.atlasgo.io/AtlasSchema",
    "elasticsearch.k8s.elastic.co/Elasticsearch",
    "external-secrets.io/ClusterExternalSecret",
    "external-secrets.io/ClusterSecretStore",
    "external-secrets.io/ExternalSecret",
    "external-secrets.io/PushSecret",
    "external-secrets.io/SecretStore",
    "flagger.app/Canary",
    "flink.apache.org/FlinkDeployment",
    "game.kruise.io/GameServer",
    "game.kruise.io/GameServerSet",
    "gateway.networking.k8s.io/BackendTLSPolicy",
    "gateway.networking.k8s.io/GRPCRoute",
    "gateway.networking.k8s.io/Gateway",
    "gateway.networking.k8s.io/GatewayClass",
    "gateway.networking.k8s.io/HTTPRoute",
    "gateway.solo.io/Gateway",
    "gateway.solo.io/MatchableHttpGateway",
    "gateway.solo.io/RouteOption",
    "gateway.solo.io/RouteTable",
    "gateway.solo.io/VirtualHostOption",
    "gateway.solo.io/VirtualService",
    "gloo.solo.io/Proxy",
    "gloo.solo.io/Settings",
    "gloo.solo.io/Upstream",
    "gloo.solo.io/UpstreamGroup",
    "grafana-org-operator.kubitus-project.gitlab.io/_",
    "grafana.integreatly.org/Grafana",
    "grafana.integreatly.org/GrafanaDashboard",
    "grafana.integreatly.org/GrafanaDatasource",
    "grafana.integreatly.org/GrafanaFolder",
    "helm.toolkit.fluxcd.io/HelmRelease",
    "iam.aws.crossplane.io/Policy",
    "iam.aws.crossplane.io/Role",
    "iam.aws.crossplane.io/RolePolicyAttachment",
    "iammanager.keikoproj.io/Iamrole",
    "image.toolkit.fluxcd.io/ImagePolicy",
    "image.toolkit.fluxcd.io/ImageRepository",
    "image.toolkit.fluxcd.io/ImageUpdateAutomation",
    "install.istio.io/IstioOperator",
    "jaegertracing.io/Jaeger",
    "k8s.keycloak.org/Keycloak",
    "k8s.mariadb.com/Backup",
    "k8s.mariadb.com/Database",
    "k8s.mariadb.com/Grant",
    "k8s.mariadb.com/MariaDB",
    "k8s.mariadb.com/SqlJob",
    "k8s.mariadb.com/User",
    "kafka.banzaicloud.io/KafkaCluster",
    "kafka.strimzi.io/Kafka",
    "kafka.strimzi.io/KafkaBridge",
    "kafka.strimzi.io/KafkaConnect",
    "kafka.strimzi.io/KafkaConnector",
    "kafka.strimzi.io/KafkaTopic",
    "kafka.strimzi.io/KafkaUser",
    "karpenter.k8s.aws/EC2NodeClass",
    "karpenter.sh/NodeClaim",
    "karpenter.sh/NodePool",
    "keda.sh/ScaledJob",
    "keda.sh/ScaledObject",
    "kiali.io/Kiali",
    "kubernetes-client.io/ExternalSecret",
    "kubevirt.io/VirtualMachine",
    "kubevirt.io/VirtualMachineInstance",
    "kustomize.toolkit.fluxcd.io/Kustomization",
    "kyverno.io/Policy",
    "lifecycle.keptn.sh/KeptnAppVersion",
    "lifecycle.keptn.sh/KeptnEvaluation",
    "lifecycle.keptn.sh/KeptnTask",
    "lifecycle.keptn.sh/KeptnWorkloadInstance",
    "lifecycle.keptn.sh/KeptnWorkloadVersion",
    "logstash.k8s.elastic.co/Logstash",
    "mariadb.mmontes.io/MariaDB",
    "metrics.keptn.sh/Analysis",
    "metrics.keptn.sh/KeptnMetric",
    "microgateway.airlock.com/_",
    "minio.min.io/Tenant",
    "monitoring.coreos.com/Prometheus",
    "networking.gke.io/ManagedCertificate",
    "nmstate.io/NodeNetworkConfigurationPolicy",
    "notification.toolkit.fluxcd.io/Receiver",
    "numaflow.numaproj.io/InterStepBufferService",
    "numaflow.numaproj.io/MonoVertex",
    "numaflow.numaproj.io/Pipeline",
    "numaflow.numaproj.io/Vertex",
    "numaplane.numaproj.io/ISBServiceRollout",
    "numaplane.numaproj.io/MonoVertexRollout",
    "numaplane.numaproj.io/NumaflowControllerRollout",
    "numaplane.numaproj.io/PipelineRollout",
    "objectbucket.io/ObjectBucketClaim",
    "ocs.openshift.io/StorageCluster",
    "onepassword.com/OnePasswordItem",
    "openfaas.com/Function",
    "opentelemetry.io/OpenTelemetryCollector",
    "operator.knative.dev/KnativeEventing",
    "operator.knative.dev/KnativeServing",
    "operator.openshift.io/IngressController",
    "operator.victoriametrics.com/_",
    "operators.coreos.com/Subscription",
    "pkg.crossplane.io/Provider",
    "platform.confluent.io/Connect",
    "platform.confluent.io/Connector",
    "platform.confluent.io/ControlCenter",
    "platform.confluent.io/Kafka",
    "platform.confluent.io/KsqlDB",
    "platform.confluent.io/SchemaRegistry",
    "platform.confluent.io/Zookeeper",
    "policy.open-cluster-management.io/CertificatePolicy",
    "policy.open-cluster-management.io/ConfigurationPolicy",
    "policy.open-cluster-management.io/OperatorPolicy",
    "policy.open-cluster-management.io/Policy",
    "policy/PodDisruptionBudget",
    "postgresql.cnpg.io/Cluster",
    "proclaim.dogmatiq.io/DNSSDServiceInstance",
    "projectcontour.io/ExtensionService",
    "projectcontour.io/HTTPProxy",
    "promoter.argoproj.io/ArgoCDCommitStatus",
    "promoter.argoproj.io/ChangeTransferPolicy",
    "promoter.argoproj.io/ClusterScmProvider",
    "promoter.argoproj.io/CommitStatus",
    "promoter.argoproj.io/GitCommitStatus",
    "promoter.argoproj.io/GitRepository",
    "promoter.argoproj.io/PromotionStrategy",
    "promoter.argoproj.io/PullRequest",
    "promoter.argoproj.io/ScmProvider",
    "promoter.argoproj.io/TimedCommitStatus",
    "promoter.argoproj.io/WebRequestCommitStatus",
    "psmdb.percona.com/PerconaServerMongoDB",
    "pulumi.com/Stack",
    "pxc.percona.com/PerconaXtraDBCluster",
    "rabbitmq.com/Binding",
    "rabbitmq.com/Exchange",
    "rabbitmq.com/Permission",
    "rabbitmq.com/Policy",
    "rabbitmq.com/Queue",
    "rabbitmq.com/RabbitmqCluster",
    "rabbitmq.com/Shovel",
    "rabbitmq.com/User",
    "rabbitmq.com/Vhost",
    "rds.aws.crossplane.io/DBCluster",
    "rds.aws.crossplane.io/DBInstance",
    "rollouts.kruise.io/Rollout",
    "route.openshift.io/Route",
    "route53.aws.crossplane.io/ResourceRecordSet",
    "s3.aws.crossplane.io/Bucket",
    "services.cloud.sap.com/ServiceBinding",
    "services.cloud.sap.com/ServiceInstance",
    "serving.knative.dev/Service",
    "serving.kserve.io/InferenceService",
    "snapshot.storage.k8s.io/VolumeSnapshot",
    "snapshot.storage.k8s.io/VolumeSnapshotContent",
    "solr.apache.org/SolrCloud",
    "source.toolkit.fluxcd.io/Bucket",
    "source.toolkit.fluxcd.io/GitRepository",
    "source.toolkit.fluxcd.io/HelmChart",
    "source.toolkit.fluxcd.io/HelmRepository",
    "source.toolkit.fluxcd.io/OCIRepository",
    "sparkoperator.k8s.io/SparkApplication",
    "spot.io/SpotDeployment",
    "stacks.crossplane.io/ClusterStackInstall",
    "tower.ansible.com/AnsibleJob",
    "trident.netapp.io/TridentBackendConfig",
    "trident.netapp.io/TridentOrchestrator",
    "work.karmada.io/ClusterResourceBinding",
    "work.karmada.io/ResourceBinding",
    "zookeeper.pravega.io/ZookeeperCluster",
];

#[cfg(test)]
mod health_check_source_tests {
    use super::*;

    #[test]
    fn bundled_lua_checks_gate_waves_like_builtin_ones() {
        assert_eq!(
            health_check_source("apps", "Deployment"),
            Some(HealthCheckSource::Builtin)
        );
        assert_eq!(
            health_check_source("external-secrets.io", "ExternalSecret"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(
            health_check_source("batch", "CronJob"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(
            health_check_source("s3.aws.crossplane.io", "Bucket"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(
            health_check_source("pkg.crossplane.io", "Anything"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(health_check_source("notcrossplane.io", "Bucket"), None);
        assert_eq!(health_check_source("argoproj.io", "Application"), None);
        assert_eq!(health_check_source("", "ConfigMap"), None);
        assert_eq!(health_check_source("example.com", "Widget"), None);
    }
}
