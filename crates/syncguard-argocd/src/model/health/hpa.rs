//! `health_hpa.go` (spec 8.8).

use serde_json::{Map, Value};

use super::util::*;
use super::{
    Behaviour, Behaviours, HPA_V1_CONDITIONS_ANNOTATION, Health, HealthError, HealthStatus,
    WAITING_TO_AUTOSCALE,
};

/// `health_hpa.go`. v1 keeps its conditions in an annotation; later versions in
/// `status.conditions`.
pub(super) fn hpa_health(
    version: &str,
    obj: &Value,
    behaviours: Behaviours,
) -> Result<Health, HealthError> {
    if version != "v1" {
        let conds: Vec<Condition<'_>> = conditions(obj).collect();
        return Ok(hpa_conditions_health(&conds, behaviours));
    }
    let Some(annotation) = string_annotation(obj, HPA_V1_CONDITIONS_ANNOTATION) else {
        return Ok(Health::new(HealthStatus::Progressing, WAITING_TO_AUTOSCALE));
    };
    let parsed: Value =
        serde_json::from_str(annotation).map_err(|e| HealthError::MalformedHpaConditions {
            reason: e.to_string(),
        })?;
    let conds = hpa_annotation_conditions(&parsed)
        .map_err(|reason| HealthError::MalformedHpaConditions { reason })?;
    Ok(hpa_conditions_health(&conds, behaviours))
}

/// Reads the v1 annotation like Go's `json.Unmarshal` into a list of condition structs: `null`
/// is an empty list, `null` entries and fields are zero values, unknown fields are ignored,
/// field names match case-insensitively, and any other type mismatch is an error.
pub(super) fn hpa_annotation_conditions(parsed: &Value) -> Result<Vec<Condition<'_>>, String> {
    let entries = match parsed {
        Value::Null => return Ok(Vec::new()),
        Value::Array(entries) => entries,
        other => {
            return Err(format!(
                "expected a list of conditions, found {}",
                crate::model::json_type_name(other)
            ));
        }
    };
    entries
        .iter()
        .map(|entry| match entry {
            Value::Null => Ok(Condition::default()),
            Value::Object(fields) => Ok(Condition {
                kind: go_string_field(fields, "type")?,
                status: go_string_field(fields, "status")?,
                reason: go_string_field(fields, "reason")?,
                message: go_string_field(fields, "message")?,
            }),
            other => Err(format!(
                "expected a condition mapping, found {}",
                crate::model::json_type_name(other)
            )),
        })
        .collect()
}

/// A string field of a JSON object, matched like Go's `encoding/json` (exact name first, then
/// case-insensitively); absent or `null` is `""`.
pub(super) fn go_string_field<'a>(
    fields: &'a Map<String, Value>,
    name: &str,
) -> Result<&'a str, String> {
    let value = fields.get(name).or_else(|| {
        fields
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    });
    match value {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "field {name:?} must be a string, found {}",
            crate::model::json_type_name(other)
        )),
    }
}

/// Up to 3.4 Argo CD takes the first condition that is either degraded or healthy, so a healthy `AbleToScale`
/// listed before a failing `ScalingActive` hides the failure. From 3.5 it looks for any degraded
/// condition first, and knows more degraded reasons.
pub(super) fn hpa_conditions_health(conds: &[Condition<'_>], behaviours: Behaviours) -> Health {
    let degraded_first = behaviours.has(Behaviour::HpaDegradedFirst);
    let degraded = |c: &Condition<'_>| is_hpa_degraded(c, degraded_first);
    let healthy = |c: &Condition<'_>| {
        matches!(c.kind, "AbleToScale" | "ScalingLimited") && c.status == "True"
    };
    let verdict = match degraded_first {
        false => conds.iter().find_map(|c| {
            if degraded(c) {
                Some(Health::new(HealthStatus::Degraded, c.message))
            } else if healthy(c) {
                Some(Health::new(HealthStatus::Healthy, c.message))
            } else {
                None
            }
        }),
        true => conds
            .iter()
            .find(|c| degraded(c))
            .map(|c| Health::new(HealthStatus::Degraded, c.message))
            .or_else(|| {
                conds
                    .iter()
                    .find(|c| healthy(c))
                    .map(|c| Health::new(HealthStatus::Healthy, c.message))
            }),
    };
    verdict.unwrap_or_else(|| Health::new(HealthStatus::Progressing, WAITING_TO_AUTOSCALE))
}

/// The (type, reason) pairs that mean the HPA cannot do its job. 3.5 added the metric
/// failures other than resource metrics.
pub(super) fn is_hpa_degraded(c: &Condition<'_>, degraded_first: bool) -> bool {
    match (c.kind, c.reason) {
        ("AbleToScale", "FailedGetScale" | "FailedUpdateScale")
        | ("ScalingActive", "FailedGetResourceMetric" | "InvalidSelector") => true,
        (
            "ScalingActive",
            "FailedGetObjectMetric"
            | "FailedGetPodsMetric"
            | "FailedGetExternalMetric"
            | "FailedComputeMetricsReplicas",
        ) => degraded_first,
        _ => false,
    }
}
