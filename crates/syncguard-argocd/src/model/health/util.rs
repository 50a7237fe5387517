//! Lenient readers of the live object's JSON shared by the checks: a field of the wrong type reads as absent, never as a panic.

use serde_json::Value;

/// One entry of a `status.conditions`-style list, with Go's `""` for absent fields.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Condition<'a> {
    pub(super) kind: &'a str,
    pub(super) status: &'a str,
    pub(super) reason: &'a str,
    pub(super) message: &'a str,
}

/// `status.conditions`, skipping entries that are not mappings.
pub(super) fn conditions(obj: &Value) -> impl Iterator<Item = Condition<'_>> {
    get_list(obj, &["status", "conditions"])
        .iter()
        .filter(|c| c.is_object())
        .map(|c| Condition {
            kind: get_str(c, &["type"]),
            status: get_str(c, &["status"]),
            reason: get_str(c, &["reason"]),
            message: get_str(c, &["message"]),
        })
}

pub(super) fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, key| v.get(*key))
}

/// A string field, `""` when absent or not a string.
pub(super) fn get_str<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    get(v, path).and_then(Value::as_str).unwrap_or_default()
}

pub(super) fn status_str<'a>(v: &'a Value, field: &str) -> &'a str {
    get_str(v, &["status", field])
}

/// An integer field; `None` when absent or not an integer (a whole float such as `3.0` counts,
/// because YAML and JSON tooling sometimes emits integers that way). Callers subtract with
/// `saturating_sub`, so absurd values cannot overflow.
pub(super) fn get_int(v: &Value, path: &[&str]) -> Option<i64> {
    let n = get(v, path)?.as_number()?;
    n.as_i64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// An integer status counter, `0` when absent (Go's zero value; counters are omitted when zero).
pub(super) fn status_int(v: &Value, field: &str) -> i64 {
    get_int(v, &["status", field]).unwrap_or(0)
}

pub(super) fn generation(v: &Value) -> i64 {
    get_int(v, &["metadata", "generation"]).unwrap_or(0)
}

pub(super) fn observed_generation(v: &Value) -> i64 {
    status_int(v, "observedGeneration")
}

/// A boolean field, `false` when absent or not a boolean.
pub(super) fn get_bool(v: &Value, path: &[&str]) -> bool {
    get(v, path).and_then(Value::as_bool).unwrap_or(false)
}

/// A list field, empty when absent or not a list.
pub(super) fn get_list<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    get(v, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub(super) fn string_annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    get(obj, &["metadata", "annotations", key]).and_then(Value::as_str)
}
