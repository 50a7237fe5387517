//! Predicted waits: for every object a sync waits on, can the wait end here, and what ends it
//! when it does not?
//!
//! Argo CD starts the next step of a sync (the next wave, the next phase, the PostSync hooks)
//! only once every object of the current step is Healthy (a non-hook object that is Degraded
//! fails the sync; anything else keeps it Running), and a hook only once it completes. An object
//! whose health cannot become Healthy therefore stops the sync, and a kind without health is
//! "done" once applied, so a wave on it orders nothing. This module predicts, per object:
//! - [`Wait::parks`]: states its own spec puts it in that are not Healthy although nothing
//!   failed — a paused Deployment or Rollout, a Rollout step that pauses until promoted, a
//!   suspended Job ([`parks`]);
//! - [`Wait::needs`]: what it waits for that the sync cannot provide in time — a ResourceQuota
//!   of the input that refuses its pods, a claim that binds only once a Pod of a later step uses
//!   it ([`needs`]);
//! - [`Wait::binds`]: for a claim, the PersistentVolume of the input that binds it at once
//!   ([`binds`]), which ends the claim's wait whatever the cluster's provisioners do;
//! - [`Wait::bound`]: what ends the wait if it never becomes Healthy — a Deployment's progress
//!   deadline or a Job's limits turn it Degraded (the sync fails); a StatefulSet or DaemonSet
//!   has none, and the sync waits until someone terminates it.
//!
//! Health itself comes from [`crate::model::health`]; which steps wait, from the plan.

mod binds;
mod needs;
mod parks;

use serde::Serialize;
use serde_json::Value;

use crate::model::Resource;
use crate::model::health::health_check_source;

pub use needs::{NeedsIndex, binds_of, needs_of};
pub use parks::parks_of;

/// A state the object's own spec puts it in that is not Healthy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Park {
    /// The health Argo CD reports there (`Suspended`, `Progressing`).
    pub status: &'static str,
    /// The field that causes it.
    pub pointer: String,
    /// Why, in a sentence.
    pub reason: String,
    /// When it happens: `every sync`, or `every update after the first` (a new Rollout skips
    /// its steps).
    pub when: &'static str,
    /// What ends it: `manual` (someone promotes or resumes), `never`.
    pub until: &'static str,
}

/// Something the object waits for that this sync or the cluster may not provide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Need {
    /// The field of this object that needs it.
    pub pointer: String,
    /// What is needed and why it does not come, in a sentence.
    pub what: String,
    /// The evidence: the object of the input that decides it.
    pub evidence: String,
    /// `certain` when the input shows it; `likely` when it rests on a cluster default.
    pub confidence: &'static str,
}

/// What ends a wait that never becomes Healthy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bound {
    /// The field that bounds it.
    pub field: &'static str,
    /// Seconds, when a time.
    pub seconds: Option<i64>,
    /// The health it then reports.
    pub then: &'static str,
}

/// The waits facts of one object (`input.waits`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Wait {
    /// The object's kind has no health check in a stock Argo CD (nor a configured one): a step
    /// waiting on it is done once it is applied.
    pub no_health: bool,
    /// States that keep it from Healthy by design.
    pub parks: Vec<Park>,
    /// What it needs that does not come in time.
    pub needs: Vec<Need>,
    /// What ends the wait; `None`: nothing does.
    pub bound: Option<Bound>,
    /// A claim's volume in the input that binds it at once ("PersistentVolume NAME").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binds: Option<String>,
}

/// The waits facts of `r`, whose first task is in plan step `step`, against the index of its
/// input; `custom_health`: argocd-cm configures a health check for its kind.
pub fn assess(index: &NeedsIndex, r: &Resource, step: Option<usize>, custom_health: bool) -> Wait {
    Wait {
        no_health: !custom_health && health_check_source(&r.group, &r.kind).is_none(),
        parks: parks_of(r),
        needs: needs_of(index, r, step),
        bound: bound_of(r),
        binds: binds_of(index, r, step),
    }
}

/// What turns a wait on `r` into a failure.
pub fn bound_of(r: &Resource) -> Option<Bound> {
    let spec = &r.raw["spec"];
    match (r.group.as_str(), r.kind.as_str()) {
        ("apps", "Deployment") => Some(Bound {
            field: "spec.progressDeadlineSeconds",
            seconds: Some(spec["progressDeadlineSeconds"].as_i64().unwrap_or(600)),
            then: "Degraded",
        }),
        ("batch", "Job") => Some(match spec["activeDeadlineSeconds"].as_i64() {
            Some(s) => Bound {
                field: "spec.activeDeadlineSeconds",
                seconds: Some(s),
                then: "Degraded",
            },
            None => Bound {
                field: "spec.backoffLimit",
                seconds: None,
                then: "Degraded",
            },
        }),
        ("", "Pod") => spec["activeDeadlineSeconds"].as_i64().map(|s| Bound {
            field: "spec.activeDeadlineSeconds",
            seconds: Some(s),
            then: "Degraded",
        }),
        _ => None,
    }
}

/// The pod templates of a workload: `(pointer, pod spec)`.
pub(crate) fn pod_specs(raw: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for pointer in [
        "/spec/template/spec",
        "/spec/jobTemplate/spec/template/spec",
    ] {
        if let Some(s) = raw.pointer(pointer).filter(|s| s.is_object()) {
            out.push((pointer.to_string(), s));
        }
    }
    if raw["kind"] == "Pod" && raw["spec"].is_object() {
        out.push(("/spec".to_string(), &raw["spec"]));
    }
    out
}
