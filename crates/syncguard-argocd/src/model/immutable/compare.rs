//! Equality as the API server sees it when it compares the stored object with the update.
//!
//! The server compares decoded Go values, not the JSON that was sent: a list or map that is
//! absent, `null` or empty decodes to the same nil value; `1Gi` and `1024Mi` are one quantity;
//! a field the manifest omits holds the default the server fills in. The manifests compared
//! here are JSON as written, so equality is taken in that light:
//! - absent, `null`, `{}` and `[]` are equal to one another (the server's semantic equality
//!   treats nil and empty lists and maps as equal), and so is a mapping whose every field is
//!   one of those (`metadata: {labels: {}}`); `""`, `0` and `false` are not absent, because
//!   optional scalars are pointers in the Kubernetes types and a set zero differs from an
//!   unset one. (An optional struct is a pointer too, so the server tells `{rules: []}` from
//!   absent where this does not; such a manifest is rare.)
//! - the values of a `requests`, `limits` or `capacity` map are quantities;
//! - numbers compare by value (`1` and `1.0`);
//! - defaults are filled only where a kind's rules say so ([`or_default`], [`pod_spec`]).

use serde_json::{Map, Value};

/// The value at a JSON pointer, if present.
pub(super) fn at<'a>(v: &'a Value, pointer: &str) -> Option<&'a Value> {
    v.pointer(pointer)
}

/// True for what decodes to nothing: absent, `null`, an empty map or list.
pub(super) fn is_empty(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

/// Equality of two decoded values (see the module documentation).
pub(super) fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    same_under("", a, b)
}

/// Keys whose map values are resource quantities.
const QUANTITY_MAPS: &[&str] = &["requests", "limits", "capacity", "podFixed"];

fn same_under(parent: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    if is_empty(a) && is_empty(b) {
        return true;
    }
    let empty = Map::new();
    if let (Some(x), Some(y)) = (as_map(a, &empty), as_map(b, &empty)) {
        return x.keys().chain(y.keys()).all(|k| {
            same_under(k, x.get(k), y.get(k)) || same_quantity(parent, x.get(k), y.get(k))
        });
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => x.keys().chain(y.keys()).all(|k| {
            same_under(k, x.get(k), y.get(k)) || same_quantity(parent, x.get(k), y.get(k))
        }),
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| same_under("", Some(p), Some(q)))
        }
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// A mapping, with absent and `null` read as the empty one.
fn as_map<'a>(
    v: Option<&'a Value>,
    empty: &'a Map<String, Value>,
) -> Option<&'a Map<String, Value>> {
    match v {
        Some(Value::Object(m)) => Some(m),
        None | Some(Value::Null) => Some(empty),
        _ => None,
    }
}

fn same_quantity(parent: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    QUANTITY_MAPS.contains(&parent)
        && matches!((a.and_then(quantity), b.and_then(quantity)), (Some(x), Some(y)) if x == y)
}

/// A resource quantity in nano-units (`1Gi`, `500m`, `1.5e3`, a bare number); `None` when it
/// is not one, or too large to hold.
pub(super) fn quantity(v: &Value) -> Option<i128> {
    let text = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let (sign, text) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest.to_string()),
        None => (1, text.trim_start_matches('+').to_string()),
    };
    let digits_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(digits_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mantissa: i128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = i32::try_from(fraction.len()).ok()?;
    // value = mantissa × 10^-scale × multiplier; in nano-units: × 10^9.
    let (binary, decimal_exp): (i128, i32) = match suffix {
        "" => (1, 0),
        "n" => (1, -9),
        "u" => (1, -6),
        "m" => (1, -3),
        "k" => (1, 3),
        "M" => (1, 6),
        "G" => (1, 9),
        "T" => (1, 12),
        "P" => (1, 15),
        "E" => (1, 18),
        "Ki" => (1 << 10, 0),
        "Mi" => (1 << 20, 0),
        "Gi" => (1 << 30, 0),
        "Ti" => (1 << 40, 0),
        "Pi" => (1 << 50, 0),
        "Ei" => (1 << 60, 0),
        other => {
            let exp = other.strip_prefix(['e', 'E'])?;
            (1, exp.parse().ok()?)
        }
    };
    let exp = decimal_exp.checked_add(9)?.checked_sub(scale)?;
    let mut value = mantissa.checked_mul(binary)?;
    if exp >= 0 {
        value = value.checked_mul(10_i128.checked_pow(u32::try_from(exp).ok()?)?)?;
    } else {
        // Below a nano-unit the server rounds up.
        let div = 10_i128.checked_pow(u32::try_from(-exp).ok()?)?;
        value = (value + div - 1) / div;
    }
    Some(sign * value)
}

/// Equality of a map the server compares with plain (not semantic) equality: an explicit
/// empty map in the new object differs from an absent one in the stored object (which is
/// absent when it was stored empty, the storage encoding keeping no empty map).
pub(super) fn same_plain_map(before: Option<&Value>, after: Option<&Value>) -> bool {
    let explicit_empty = matches!(after, Some(Value::Object(m)) if m.is_empty());
    if explicit_empty && is_empty(before) {
        return false;
    }
    same(before, after)
}

/// The value, or `default` when absent or `null` (a field the server defaults).
pub(super) fn or_default(v: Option<&Value>, default: Value) -> Value {
    match v {
        None | Some(Value::Null) => default,
        Some(v) => v.clone(),
    }
}

/// A string field that is a plain (non-pointer) Go string: absent is `""`.
pub(super) fn plain_str(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or_default()
}

/// A pod spec with the defaults the server fills into every pod spec and container, so that
/// a manifest that spells out a default and one that omits it compare equal.
pub(super) fn pod_spec(spec: Option<&Value>, restart_default: bool) -> Value {
    let mut spec = match spec {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let mut fill = |k: &str, v: Value| {
        if spec.get(k).is_none_or(Value::is_null) {
            spec.insert(k.to_string(), v);
        }
    };
    if restart_default {
        fill("restartPolicy", Value::from("Always"));
    }
    fill("dnsPolicy", Value::from("ClusterFirst"));
    fill("schedulerName", Value::from("default-scheduler"));
    fill("terminationGracePeriodSeconds", Value::from(30));
    fill("enableServiceLinks", Value::from(true));
    for list in ["containers", "initContainers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            for c in containers.iter_mut().filter_map(Value::as_object_mut) {
                container_defaults(c);
            }
        }
    }
    Value::Object(spec)
}

fn container_defaults(c: &mut Map<String, Value>) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    // The default pull policy follows the tag: none or `latest` pulls always; a digest not.
    let last = image.rsplit_once('/').map_or(image, |(_, last)| last);
    let latest =
        !image.contains('@') && last.rsplit_once(':').is_none_or(|(_, tag)| tag == "latest");
    let pull = if latest { "Always" } else { "IfNotPresent" };
    for (k, v) in [
        (
            "terminationMessagePath",
            Value::from("/dev/termination-log"),
        ),
        ("terminationMessagePolicy", Value::from("File")),
        ("imagePullPolicy", Value::from(pull)),
    ] {
        if c.get(k).is_none_or(Value::is_null) {
            c.insert(k.to_string(), v);
        }
    }
    if let Some(Value::Array(ports)) = c.get_mut("ports") {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            if p.get("protocol").is_none_or(Value::is_null) {
                p.insert("protocol".to_string(), Value::from("TCP"));
            }
        }
    }
}

/// The value rendered for a message, cut short.
pub(super) fn render(v: Option<&Value>) -> String {
    let text = match v {
        None | Some(Value::Null) => "null".to_string(),
        Some(v) => v.to_string(),
    };
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities_compare_by_value() {
        assert_eq!(quantity(&json!("1Gi")), quantity(&json!("1024Mi")));
        assert_eq!(quantity(&json!("1.5")), quantity(&json!("1500m")));
        assert_eq!(quantity(&json!(2)), quantity(&json!("2")));
        assert_eq!(quantity(&json!("1e3")), quantity(&json!("1k")));
        assert!(quantity(&json!("1G")) < quantity(&json!("1Gi")));
        assert_eq!(quantity(&json!("lots")), None);
    }

    #[test]
    fn empty_and_absent_are_equal_but_zero_values_are_not() {
        assert!(same(None, Some(&json!({}))));
        assert!(same(Some(&json!([])), Some(&json!(null))));
        assert!(!same(None, Some(&json!(""))));
        assert!(!same(None, Some(&json!(0))));
        assert!(same(
            Some(&json!({"resources": {"requests": {"storage": "1Gi"}}})),
            Some(&json!({"resources": {"requests": {"storage": "1024Mi"}}, "x": {}}))
        ));
        assert!(!same(
            Some(&json!({"env": "1Gi"})),
            Some(&json!({"env": "1024Mi"}))
        ));
    }

    #[test]
    fn pull_policy_defaults_follow_the_tag() {
        let spec = pod_spec(
            Some(&json!({"containers": [{"image": "nginx"}, {"image": "reg:5000/nginx:1.27"}]})),
            true,
        );
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "Always");
        assert_eq!(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(spec["restartPolicy"], "Always");
    }
}
