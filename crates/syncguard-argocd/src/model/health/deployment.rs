//! `health_deployment.go` (spec 8.3).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// §8.3, `health_deployment.go`. The order of the rollout checks matters: a Deployment past its
/// progress deadline is Degraded even while it still has replicas to update.
pub(super) fn deployment_health(obj: &Value) -> Health {
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
