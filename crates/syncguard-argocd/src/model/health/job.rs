//! `health_job.go` (spec 8.1).

use serde_json::Value;

use super::util::*;
use super::{Behaviour, Behaviours, Health, HealthStatus};

/// §8.1, `health_job.go`. Only the condition *types* decide completion; a Suspended condition with
/// status False still counts as "complete", which is why a resumed Job with no other condition is
/// Healthy. From 3.6 the Suspended condition's message is shown; before, the (always empty)
/// failure message there.
pub(super) fn job_health(obj: &Value, behaviours: Behaviours) -> Health {
    let mut failed = false;
    let mut complete = false;
    let mut suspended = false;
    let mut fail_message = "";
    let mut message = "";
    for c in conditions(obj) {
        match c.kind {
            "Failed" => {
                failed = true;
                complete = true;
                fail_message = c.message;
            }
            "Complete" => {
                complete = true;
                message = c.message;
            }
            "Suspended" => {
                complete = true;
                message = c.message;
                suspended |= c.status == "True";
            }
            _ => {}
        }
    }
    if !complete {
        Health::new(HealthStatus::Progressing, message)
    } else if failed {
        Health::new(HealthStatus::Degraded, fail_message)
    } else if suspended {
        let shown = if behaviours.has(Behaviour::JobSuspendedMessage) {
            message
        } else {
            fail_message
        };
        Health::new(HealthStatus::Suspended, shown)
    } else {
        Health::new(HealthStatus::Healthy, message)
    }
}
