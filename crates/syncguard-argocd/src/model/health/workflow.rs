//! `health_argo.go`: Argo Workflows (spec 6.2).

use serde_json::Value;

use super::util::*;
use super::{Health, HealthStatus};

/// `health_argo.go` (spec §6.2, H17). An empty phase is a Workflow the controller has not picked
/// up yet, hence Progressing; an unrecognised phase is Unknown, which fails a hook.
pub(super) fn workflow_health(obj: &Value) -> Health {
    let message = status_str(obj, "message");
    let status = match status_str(obj, "phase") {
        "" | "Pending" | "Running" => HealthStatus::Progressing,
        "Succeeded" => HealthStatus::Healthy,
        "Failed" | "Error" => HealthStatus::Degraded,
        _ => HealthStatus::Unknown,
    };
    Health::new(status, message)
}
