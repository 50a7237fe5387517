//! `health_replicaset.go` (spec 8.6).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// §8.6, `health_replicaset.go`. Only the first `ReplicaFailure` condition is looked at.
pub(super) fn replicaset_health(obj: &Value) -> Health {
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
