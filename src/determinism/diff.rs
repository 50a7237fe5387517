//! A structural JSON diff that names every differing leaf by its RFC 6901 pointer.
//!
//! Why not `json_patch::diff`: a patch describes how to turn one document into the other
//! (moves, array shifts), but a user asking "what changes between renders" wants the place in
//! the *first* document that differs, so it can be mapped to `file:line`. Arrays are compared
//! index by index, as Argo CD's diff shows them.

use serde_json::Value;

/// Every place where `a` and `b` differ, as RFC 6901 pointers in document order (object keys
/// in the order `serde_json` keeps them, which is sorted).
///
/// A pointer is reported at the deepest level where the two sides still have the same shape:
/// two objects or two arrays are descended into; a key or index present on one side only, two
/// different scalars, or two values of different types are reported at their own pointer.
/// Equal documents give an empty list.
pub fn diff_values(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut pointer = String::new();
    walk(a, b, &mut pointer, &mut out);
    out
}

fn walk(a: &Value, b: &Value, pointer: &mut String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(left), Value::Object(right)) => {
            for (key, l) in left {
                let len = push_token(pointer, key);
                match right.get(key) {
                    Some(r) => walk(l, r, pointer, out),
                    None => out.push(pointer.clone()),
                }
                pointer.truncate(len);
            }
            for key in right.keys().filter(|k| !left.contains_key(*k)) {
                let len = push_token(pointer, key);
                out.push(pointer.clone());
                pointer.truncate(len);
            }
        }
        (Value::Array(left), Value::Array(right)) => {
            for index in 0..left.len().max(right.len()) {
                let len = push_token(pointer, &index.to_string());
                match (left.get(index), right.get(index)) {
                    (Some(l), Some(r)) => walk(l, r, pointer, out),
                    _ => out.push(pointer.clone()),
                }
                pointer.truncate(len);
            }
        }
        _ if a == b => {}
        _ => out.push(pointer.clone()),
    }
}

/// Appends `/token` (escaped) and returns the length to truncate back to.
fn push_token(pointer: &mut String, token: &str) -> usize {
    let len = pointer.len();
    pointer.push('/');
    pointer.push_str(&escape_token(token));
    len
}

/// Escapes one reference token: `~` → `~0`, `/` → `~1` (RFC 6901 §3), so that the annotation
/// key `checksum/config` becomes `checksum~1config`.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The last token of a pointer, unescaped (`/metadata/annotations/checksum~1config` →
/// `checksum/config`).
pub(super) fn last_token(pointer: &str) -> Option<String> {
    let (_, last) = pointer.rsplit_once('/')?;
    Some(last.replace("~1", "/").replace("~0", "~"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_documents_have_no_differences() {
        let doc = json!({"a": [1, {"b": null}], "c": "x"});
        assert!(diff_values(&doc, &doc.clone()).is_empty());
    }

    #[test]
    fn a_changed_leaf_is_named_by_its_full_pointer() {
        let a = json!({"spec": {"template": {"metadata": {"annotations": {"rollme": "1"}}}}});
        let b = json!({"spec": {"template": {"metadata": {"annotations": {"rollme": "2"}}}}});
        assert_eq!(
            diff_values(&a, &b),
            ["/spec/template/metadata/annotations/rollme"]
        );
    }

    #[test]
    fn slashes_and_tildes_in_keys_are_escaped_as_rfc_6901_says() {
        let a = json!({"metadata": {"annotations": {"checksum/config": "1", "a~b": "x"}}});
        let b = json!({"metadata": {"annotations": {"checksum/config": "2", "a~b": "y"}}});
        assert_eq!(
            diff_values(&a, &b),
            [
                "/metadata/annotations/a~0b",
                "/metadata/annotations/checksum~1config"
            ]
        );
    }

    #[test]
    fn dots_in_keys_need_no_escaping() {
        let a = json!({"data": {"tls.crt": "LS0tA"}});
        let b = json!({"data": {"tls.crt": "LS0tB"}});
        assert_eq!(diff_values(&a, &b), ["/data/tls.crt"]);
    }

    #[test]
    fn keys_present_on_one_side_only_are_reported_from_both_sides() {
        let a = json!({"keep": 1, "only_a": {"deep": 1}});
        let b = json!({"keep": 1, "only_b": 2});
        assert_eq!(diff_values(&a, &b), ["/only_a", "/only_b"]);
    }

    #[test]
    fn arrays_are_compared_index_by_index_and_extra_items_are_named() {
        let a = json!({"env": [{"name": "A", "value": "1"}, {"name": "B"}]});
        let b = json!({"env": [{"name": "A", "value": "2"}, {"name": "B"}, {"name": "C"}]});
        assert_eq!(diff_values(&a, &b), ["/env/0/value", "/env/2"]);
    }

    #[test]
    fn a_value_that_changes_type_is_reported_where_the_types_differ() {
        let a = json!({"x": {"y": 1}, "n": 1});
        let b = json!({"x": "text", "n": "1"});
        assert_eq!(diff_values(&a, &b), ["/n", "/x"]);
    }

    #[test]
    fn different_root_scalars_are_reported_at_the_empty_pointer() {
        assert_eq!(diff_values(&json!(1), &json!(2)), [""]);
    }

    #[test]
    fn the_last_token_is_unescaped() {
        assert_eq!(
            last_token("/metadata/annotations/checksum~1config").as_deref(),
            Some("checksum/config")
        );
        assert_eq!(last_token("/a~0b").as_deref(), Some("a~b"));
        assert_eq!(last_token(""), None);
    }
}
