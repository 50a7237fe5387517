//! `health_service.go` (spec 8.7).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// Only a `LoadBalancer` Service waits, for its external address; without a load-balancer
/// controller it waits forever.
pub(super) fn service_health(obj: &Value) -> Health {
    let waiting = get_str(obj, &["spec", "type"]) == "LoadBalancer"
        && get_list(obj, &["status", "loadBalancer", "ingress"]).is_empty();
    Health::status_only(if waiting {
        HealthStatus::Progressing
    } else {
        HealthStatus::Healthy
    })
}
