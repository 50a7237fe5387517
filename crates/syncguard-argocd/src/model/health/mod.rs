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
//!
//! Layout, as Argo CD's own health package: this file holds the verdict types, the dispatch on
//! group and kind, and what applies to every kind (a terminating object, `deletion.rs`); each
//! kind's check is a file of its own (`deployment.rs`, `job.rs`, `pod.rs`, `hpa.rs`, ...);
//! `util.rs` reads fields leniently; `lua.rs` lists the kinds a stock Argo CD assesses with a
//! bundled Lua check.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use super::Resource;

mod apiservice;
mod daemonset;
mod deletion;
mod deployment;
mod hpa;
mod ingress;
mod job;
mod lua;
mod pod;
mod pvc;
mod replicaset;
mod service;
mod statefulset;
mod util;
mod workflow;

use apiservice::apiservice_health;
use daemonset::daemonset_health;
use deletion::is_pending_deletion;
pub use deletion::{has_hook_finalizer, is_deleting};
use deployment::deployment_health;
use hpa::hpa_health;
use ingress::ingress_health;
use job::job_health;
pub use lua::{HealthCheckSource, health_check_source};
use pod::pod_health;
use pvc::pvc_health;
use replicaset::replicaset_health;
use service::service_health;
use statefulset::statefulset_health;
use util::get;
use workflow::workflow_health;

/// Which release the assessment imitates: the health rows of the release table
/// (`hpa_degraded_first`, `job_suspended_message`, `pod_ignore_restart_policy`,
/// `pending_deletion_names_finalizers`).
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
    /// Every status, best to worst.
    pub const ALL: [HealthStatus; 6] = [
        Self::Healthy,
        Self::Suspended,
        Self::Progressing,
        Self::Missing,
        Self::Degraded,
        Self::Unknown,
    ];

    /// Exact parse of Argo CD's spelling (`status.health.status`).
    pub fn parse(s: &str) -> Option<HealthStatus> {
        Self::ALL.into_iter().find(|h| h.as_str() == s)
    }

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
pub(super) const WAITING_TO_AUTOSCALE: &str = "Waiting to Autoscale";

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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap (rust-notes 5.5 rule 4)
mod tests;
