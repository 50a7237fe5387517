//! `health_apiservice.go` (spec 8.7).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// The first `Available` condition decides; v1 and v1beta1 are read the same way.
pub(super) fn apiservice_health(obj: &Value) -> Health {
    match conditions(obj).find(|c| c.kind == "Available") {
        Some(c) => Health::new(
            if c.status == "True" {
                HealthStatus::Healthy
            } else {
                HealthStatus::Progressing
            },
            format!("{}: {}", c.reason, c.message),
        ),
        None => Health::new(HealthStatus::Progressing, "Waiting to be processed"),
    }
}
