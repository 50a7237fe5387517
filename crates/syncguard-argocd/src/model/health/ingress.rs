//! `health_ingress.go` (spec 8.7).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// An Ingress is Healthy once any load-balancer entry is published; the entries are not checked.
pub(super) fn ingress_health(obj: &Value) -> Health {
    let assigned = !get_list(obj, &["status", "loadBalancer", "ingress"]).is_empty();
    Health::status_only(if assigned {
        HealthStatus::Healthy
    } else {
        HealthStatus::Progressing
    })
}
