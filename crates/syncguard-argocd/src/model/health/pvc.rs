//! `health_pvc.go` (spec 8.7).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// By `status.phase`. `Pending` includes `WaitForFirstConsumer` claims, which stay Pending until a
/// Pod uses them, so such a PVC in an early wave deadlocks the sync.
pub(super) fn pvc_health(obj: &Value) -> Health {
    Health::status_only(match status_str(obj, "phase") {
        "Bound" => HealthStatus::Healthy,
        "Pending" => HealthStatus::Progressing,
        "Lost" => HealthStatus::Degraded,
        _ => HealthStatus::Unknown,
    })
}
