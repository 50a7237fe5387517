//! The metadata the API server validates for every kind: label keys and values, annotation
//! keys and total size, and the name of a built-in object.

use serde_json::Value;

use super::{Violation, ViolationKind, builtin};
use crate::model::Resource;

/// The API server's limit on the total size of an object's annotations.
const ANNOTATIONS_MAX: usize = 256 * 1024;

/// Violations of `r`'s metadata.
pub fn check(r: &Resource) -> Vec<Violation> {
    let mut out = Vec::new();
    let meta = &r.raw["metadata"];
    if let Some(labels) = meta["labels"].as_object() {
        for (k, v) in labels {
            let pointer = format!("/metadata/labels/{}", escape(k));
            if let Some(why) = key_problem(k) {
                out.push(not_allowed(&pointer, format!("label key \"{k}\": {why}")));
            }
            if let Some(v) = v.as_str()
                && let Some(why) = label_value_problem(v)
            {
                out.push(not_allowed(&pointer, format!("label value \"{v}\": {why}")));
            }
        }
    }
    if let Some(annotations) = meta["annotations"].as_object() {
        let mut total = 0;
        for (k, v) in annotations {
            total += k.len() + v.as_str().map_or(0, str::len);
            if let Some(why) = key_problem(k) {
                out.push(not_allowed(
                    &format!("/metadata/annotations/{}", escape(k)),
                    format!("annotation key \"{k}\": {why}"),
                ));
            }
        }
        if total > ANNOTATIONS_MAX {
            out.push(not_allowed(
                "/metadata/annotations",
                format!(
                    "annotations are {total} bytes: they must have at most {ANNOTATIONS_MAX} bytes"
                ),
            ));
        }
    }
    if !r.name.is_empty()
        && builtin::is_known(&r.api_version, &r.kind)
        && let Some(why) = name_problem(&r.kind, &r.name)
    {
        out.push(not_allowed(
            "/metadata/name",
            format!("name \"{}\": {why}", r.name),
        ));
    }
    out
}

fn not_allowed(pointer: &str, message: String) -> Violation {
    Violation {
        pointer: pointer.to_string(),
        kind: ViolationKind::NotAllowed,
        message,
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// A label value: at most 63 characters, alphanumerics with `-`, `_`, `.` inside.
pub fn label_value_problem(v: &str) -> Option<String> {
    if v.len() > 63 {
        return Some(format!("{} characters, at most 63 are allowed", v.len()));
    }
    if v.is_empty() {
        return None;
    }
    qualified_part(v)
}

fn qualified_part(v: &str) -> Option<String> {
    let ok = v.chars().next().is_some_and(alnum)
        && v.chars().last().is_some_and(alnum)
        && v.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.'));
    (!ok).then(|| {
        "must begin and end with an alphanumeric character, with only '-', '_' or '.' between"
            .to_string()
    })
}

/// A label or annotation key: an optional DNS-subdomain prefix and `/`, then a name of at most
/// 63 characters.
pub fn key_problem(k: &str) -> Option<String> {
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    if let Some(p) = prefix
        && let Some(why) = subdomain_problem(p)
    {
        return Some(format!("prefix {why}"));
    }
    if name.is_empty() {
        return Some("the name part must not be empty".into());
    }
    if name.len() > 63 {
        return Some(format!(
            "the name part has {} characters, at most 63 are allowed",
            name.len()
        ));
    }
    qualified_part(name)
}

fn subdomain_problem(s: &str) -> Option<String> {
    if s.is_empty() || s.len() > 253 {
        return Some("must be a DNS subdomain of 1 to 253 characters".into());
    }
    let ok = s.split('.').all(|l| {
        !l.is_empty()
            && l.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    });
    (!ok).then(|| {
        "must be lowercase alphanumerics, '-' and '.', starting and ending with an alphanumeric"
            .into()
    })
}

fn dns_label_problem(s: &str, letter_first: bool) -> Option<String> {
    if s.len() > 63 {
        return Some(format!("{} characters, at most 63 are allowed", s.len()));
    }
    let ok = s
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
        && (!letter_first || s.chars().next().is_some_and(|c| c.is_ascii_lowercase()));
    (!ok).then(|| {
        if letter_first {
            "must be lowercase alphanumerics or '-', start with a letter and end with an alphanumeric".into()
        } else {
            "must be lowercase alphanumerics or '-', starting and ending with an alphanumeric".into()
        }
    })
}

/// The name rule of a built-in kind.
fn name_problem(kind: &str, name: &str) -> Option<String> {
    match kind {
        "Namespace" => dns_label_problem(name, false),
        "Service" => dns_label_problem(name, true),
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
            (name.contains('/') || name.contains('%') || name == "." || name == "..")
                .then(|| "must not contain '/' or '%' nor be '.' or '..'".to_string())
        }
        _ => subdomain_problem(name),
    }
}

/// Whether `v` is a valid metadata value for `labels` (used for what Argo CD itself writes).
pub fn is_label_value(v: &Value) -> bool {
    v.as_str().is_some_and(|s| label_value_problem(s).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_and_keys_follow_the_api_servers_rules() {
        assert_eq!(label_value_problem(""), None);
        assert_eq!(label_value_problem("my-app_1.0"), None);
        assert!(label_value_problem(&"a".repeat(64)).is_some());
        assert!(label_value_problem("-x").is_some());
        assert_eq!(key_problem("app.kubernetes.io/instance"), None);
        assert!(key_problem("App.io/x").is_some());
        assert!(key_problem("a/b/c").is_some());
    }

    #[test]
    fn names_follow_their_kinds_rule() {
        assert_eq!(name_problem("ConfigMap", "a.b-c"), None);
        assert!(name_problem("ConfigMap", "A").is_some());
        assert!(name_problem("Service", "1web").is_some());
        assert!(name_problem("Namespace", "a.b").is_some());
        assert_eq!(
            name_problem("ClusterRole", "system:aggregate-to-view"),
            None
        );
    }
}
