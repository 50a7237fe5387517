//! Where a sync would stop, given the live objects as they are: the tick model ([`super::tick`])
//! run to its end over a [`World`] whose verdicts come from Argo CD's health assessment
//! ([`crate::model::health`]) of the live objects.
//!
//! The forecast holds the live states still: an object that exists keeps the health it has now
//! (a hook Job stuck `Progressing` stays so after it is re-created; a Deployment that is
//! `Degraded` stays so after the apply), and objects the sync creates are taken as healthy once
//! applied — the simulator's default. So it answers "if nothing changes in the cluster, which
//! wait never ends, or which task fails", not "how long the sync takes". The 2-second wave delay
//! is not simulated.

use serde::Serialize;

use super::tick::{HealthVerdict, Observation, OperationPhase, StepRef, SyncState, World, tick};
use super::{ObjectKey, PlanInput};
use crate::model::Resource;
use crate::model::health::{assess_resource, has_hook_finalizer, is_deleting};

/// Ticks after which a forecast that still changes gives up (a sync of a few thousand tasks
/// needs a few ticks per step).
const MAX_TICKS: u32 = 10_000;

/// How a sync would end, given the live objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Forecast {
    /// `Succeeded`, `Failed` or `Error`; `Running` when it waits for ever.
    pub phase: OperationPhase,
    /// The operation message at that point, in Argo CD's wording.
    pub message: String,
    /// The step it waits in (or failed in), when it stops in one.
    pub step: Option<StepRef>,
    /// What it waits for, when it waits for ever.
    pub waiting_on: Vec<Waiting>,
    /// Ticks simulated (calls of Argo CD's `Sync()`).
    pub ticks: u32,
}

/// One object the sync waits for, with the health that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Waiting {
    /// The object.
    pub key: ObjectKey,
    /// Its health as Argo CD reports it (`Progressing`, …), when a live object gave one.
    pub health: Option<String>,
    /// The health message.
    pub message: Option<String>,
}

impl Forecast {
    /// True when the sync would wait for ever rather than end.
    pub fn is_stuck(&self) -> bool {
        self.phase == OperationPhase::Running
    }
}

/// The world the live objects describe: each one's health verdict and message as Argo CD
/// assesses it for the release of `input`, and whether it is being deleted. Existence follows
/// the input's live list and the simulator's bookkeeping.
pub fn observed(input: &PlanInput) -> World {
    let behaviours = input.app.behaviours;
    let mut world = World::new();
    for r in input.live.iter() {
        let (verdict, message) = verdict_of(r, behaviours);
        let mut o = Observation::health(verdict);
        o.health_message = message;
        if is_deleting(&r.raw) {
            o.deletion_timestamp = Some(true);
            o.hook_finalizer = Some(has_hook_finalizer(&r.raw));
        }
        world = world.observe(key_of(r), o);
    }
    world
}

/// Runs the sync to its end over `world`: until the operation completes, or until a tick
/// changes nothing (it waits for ever).
pub fn forecast(input: &PlanInput, world: &World) -> Forecast {
    let mut state = SyncState::new(input.app.behaviours);
    loop {
        let next = tick(input, &state, world);
        let settled = next.phase.is_completed()
            || next.ticks >= MAX_TICKS
            || (next.phase == state.phase
                && next.message == state.message
                && next.results == state.results
                && next.tracked == state.tracked);
        state = next;
        if settled {
            break;
        }
    }
    let waiting_on = if state.phase == OperationPhase::Running {
        state
            .waiting_on
            .iter()
            .map(|k| {
                let o = world.explicit(k);
                Waiting {
                    key: k.clone(),
                    health: o.and_then(|o| o.health).map(verdict_name),
                    message: o.and_then(|o| o.health_message.clone()),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Forecast {
        phase: state.phase,
        message: state.message,
        step: state.current_step,
        waiting_on,
        ticks: state.ticks,
    }
}

fn key_of(r: &Resource) -> ObjectKey {
    ObjectKey::new(
        &r.group,
        &r.kind,
        r.namespace.as_deref().unwrap_or(""),
        &r.name,
    )
}

/// Argo CD's verdict for a live object: no check → `NoCheck`, a check error → `Error` with its
/// text.
fn verdict_of(
    r: &Resource,
    behaviours: crate::model::version::Behaviours,
) -> (HealthVerdict, Option<String>) {
    match assess_resource(r, behaviours) {
        Ok(None) => (HealthVerdict::NoCheck, None),
        Ok(Some(h)) => (HealthVerdict::Status(h.status), h.message),
        Err(e) => (HealthVerdict::Error, Some(e.to_string())),
    }
}

fn verdict_name(v: HealthVerdict) -> String {
    match v {
        HealthVerdict::Status(s) => s.as_str(),
        HealthVerdict::NoCheck => "no health check",
        HealthVerdict::Error => "Unknown (health check error)",
    }
    .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::plan::AppSettings;
    use serde_json::{Value, json};

    fn res(v: Value) -> Resource {
        Resource::from_value(v, None).unwrap()
    }

    /// The seed incident: a PreSync migration Job and the Sync-phase objects after it.
    fn targets() -> Vec<Resource> {
        vec![
            res(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "db-migrate", "namespace": "orders",
                             "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": []}}}})),
            res(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "orders-config", "namespace": "orders"}, "data": {"a": "b"}})),
        ]
    }

    fn settings() -> AppSettings {
        AppSettings {
            destination_namespace: "orders".into(),
            ..AppSettings::default()
        }
    }

    fn live_job(status: Value) -> Resource {
        res(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "db-migrate", "namespace": "orders",
                         "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": []}}},
            "status": status}))
    }

    #[test]
    fn a_hook_that_stays_progressing_holds_the_sync_in_presync_for_ever() {
        let targets = targets();
        let live = vec![live_job(json!({"active": 1}))];
        let input = PlanInput::new(&targets, &live, settings());
        let f = forecast(&input, &observed(&input));
        assert!(f.is_stuck(), "{f:?}");
        assert_eq!(
            f.message,
            "waiting for completion of hook batch/Job/db-migrate"
        );
        let step = f.step.expect("a step");
        assert_eq!(step.phase, crate::model::argo::SyncPhase::PreSync);
        assert_eq!(f.waiting_on.len(), 1);
        assert_eq!(f.waiting_on[0].key.name, "db-migrate");
        assert_eq!(f.waiting_on[0].health.as_deref(), Some("Progressing"));
    }

    #[test]
    fn without_live_objects_or_with_healthy_ones_the_sync_succeeds() {
        let targets = targets();
        let input = PlanInput::new(&targets, &[], settings());
        let f = forecast(&input, &observed(&input));
        assert_eq!(f.phase, OperationPhase::Succeeded, "{f:?}");
        assert!(f.waiting_on.is_empty());
        // The last step's objects are not waited for: a terminating ConfigMap there does not
        // hold the operation.
        let cm = vec![res(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "orders-config", "namespace": "orders",
                         "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["x/y"]}}))];
        let input = PlanInput::new(&targets, &cm, settings());
        assert_eq!(
            forecast(&input, &observed(&input)).phase,
            OperationPhase::Succeeded
        );
        let done = vec![live_job(json!({"succeeded": 1, "conditions": [
            {"type": "Complete", "status": "True"}]}))];
        let input = PlanInput::new(&targets, &done, settings());
        assert_eq!(
            forecast(&input, &observed(&input)).phase,
            OperationPhase::Succeeded
        );
    }

    #[test]
    fn a_failed_hook_fails_the_sync_with_argo_cds_message() {
        let targets = targets();
        let failed = vec![live_job(json!({"failed": 1, "conditions": [
            {"type": "Failed", "status": "True", "message": "Job has reached the specified backoff limit"}]}))];
        let input = PlanInput::new(&targets, &failed, settings());
        let f = forecast(&input, &observed(&input));
        assert_eq!(f.phase, OperationPhase::Failed, "{f:?}");
        assert_eq!(
            f.message,
            "one or more synchronization tasks completed unsuccessfully"
        );
        assert!(!f.is_stuck());
    }

    #[test]
    fn a_live_object_held_by_a_finalizer_is_waited_for_with_the_release_s_message() {
        // A wave-0 ConfigMap that is terminating, with a wave-1 object after it: Argo CD waits
        // for the wave's objects before the next wave (not after the last one).
        let mut targets = targets();
        targets.push(res(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "later", "namespace": "orders",
                         "annotations": {"argocd.argoproj.io/sync-wave": "1"}}})));
        let cm = res(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "orders-config", "namespace": "orders",
                         "deletionTimestamp": "2026-01-01T00:00:00Z",
                         "finalizers": ["example.com/keep"]},
            "data": {"a": "b"}}));
        let live = vec![cm];
        let input = PlanInput::new(&targets, &live, settings());
        let world = observed(&input);
        let f = forecast(&input, &world);
        assert!(f.is_stuck(), "{f:?}");
        assert_eq!(
            f.message,
            "waiting for healthy state of /ConfigMap/orders-config"
        );
        assert_eq!(f.waiting_on[0].key.name, "orders-config");
        assert_eq!(
            f.waiting_on[0].message.as_deref(),
            Some("Pending deletion; blocked by finalizers: example.com/keep")
        );
    }
}
