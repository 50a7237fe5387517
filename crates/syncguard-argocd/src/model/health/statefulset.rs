//! `health_statefulset.go` (spec 8.4).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// §8.4, `health_statefulset.go`. Note the two exits that skip the revision comparison: a
/// RollingUpdate strategy with an explicit `rollingUpdate` block, and `OnDelete`.
pub(super) fn statefulset_health(obj: &Value) -> Health {
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
