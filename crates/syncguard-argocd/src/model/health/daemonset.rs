//! `health_daemonset.go` (spec 8.5).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// §8.5, `health_daemonset.go`. `OnDelete` is Healthy before the scheduling counts are compared,
/// because such a DaemonSet never replaces its pods on its own.
pub(super) fn daemonset_health(obj: &Value) -> Health {
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
