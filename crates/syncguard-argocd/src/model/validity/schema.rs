//! Custom resources checked against the `openAPIV3Schema` of their CRD, as the API server does
//! for a structural schema under strict field validation: unknown fields (pruned, and refused
//! by a strict apply), types, required fields and enums. Formats, patterns, bounds and CEL
//! rules are not checked: a violation found here is one the API server reports too, but not
//! every violation it reports is found here.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Violation, ViolationKind};
use crate::model::Resource;

/// One version of a CRD: where its schema is, with the CRD it comes from.
#[derive(Debug, Clone)]
pub struct VersionSchema {
    /// `metadata.name` of the CRD.
    pub crd: String,
    /// The version name, e.g. `v1`.
    pub version: String,
    /// Whether the version is served.
    pub served: bool,
    /// The CRD's index in the objects the index was built from, and the version's index in its
    /// `spec.versions`: the schema is read from there ([`VersionSchema::schema`]), not copied —
    /// a large CRD's schemas are most of its bytes.
    at: (usize, usize),
}

impl VersionSchema {
    /// `schema.openAPIV3Schema` of the version, when it has one; `objects` are the objects the
    /// [`CrdIndex`] was built from.
    pub fn schema<'o>(&self, objects: &'o [Resource]) -> Option<&'o Value> {
        let (crd, version) = self.at;
        let schema = objects
            .get(crd)?
            .raw
            .pointer("/spec/versions")?
            .get(version)?
            .get("schema")?
            .get("openAPIV3Schema")?;
        (!schema.is_null()).then_some(schema)
    }
}

/// The CRDs of an input, by `(group, kind, version)`. Holds positions, not schemas: read them
/// with [`VersionSchema::schema`] and the same objects.
#[derive(Debug, Default, Clone)]
pub struct CrdIndex {
    by_kind: HashMap<(String, String, String), VersionSchema>,
}

impl CrdIndex {
    /// Indexes every `CustomResourceDefinition` (apiextensions.k8s.io/v1) among `objects`.
    pub fn of(objects: &[Resource]) -> Self {
        let mut by_kind = HashMap::new();
        for (i, crd) in objects.iter().enumerate().filter(|(_, o)| {
            o.kind == "CustomResourceDefinition" && o.group == "apiextensions.k8s.io"
        }) {
            let spec = &crd.raw["spec"];
            let (Some(group), Some(kind)) =
                (spec["group"].as_str(), spec["names"]["kind"].as_str())
            else {
                continue;
            };
            for (n, v) in spec["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let Some(version) = v["name"].as_str() else {
                    continue;
                };
                by_kind.insert(
                    (group.to_string(), kind.to_string(), version.to_string()),
                    VersionSchema {
                        crd: crd.name.clone(),
                        version: version.to_string(),
                        served: v["served"].as_bool().unwrap_or(false),
                        at: (i, n),
                    },
                );
            }
        }
        Self { by_kind }
    }

    /// Whether the index holds no CRD.
    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }

    /// The schema entry for `group`/`kind`/`version`.
    pub fn get(&self, group: &str, kind: &str, version: &str) -> Option<&VersionSchema> {
        self.by_kind
            .get(&(group.to_string(), kind.to_string(), version.to_string()))
    }
}

/// The violations of custom resource `raw` against `schema` (the root `openAPIV3Schema`).
pub fn check(raw: &Value, schema: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(obj) = raw.as_object() else {
        return out;
    };
    // apiVersion, kind and metadata are the API server's, whatever the schema lists; status is
    // not applied through the main resource.
    let props = schema["properties"].as_object();
    for (key, value) in obj {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
            continue;
        }
        let pointer = format!("/{}", escape(key));
        match props.and_then(|p| p.get(key)) {
            Some(sub) => walk(value, sub, &pointer, &mut out),
            None if preserves_unknown(schema) => {}
            None => out.push(unknown(pointer)),
        }
    }
    required(obj, schema, "", &mut out);
    out
}

fn walk(value: &Value, schema: &Value, pointer: &str, out: &mut Vec<Violation>) {
    if value.is_null() {
        if !schema["nullable"].as_bool().unwrap_or(false) && schema.get("type").is_some() {
            // The API server drops a null of a non-nullable field before validation
            // (structural pruning of nulls): not an error.
        }
        return;
    }
    if schema["x-kubernetes-int-or-string"].as_bool() == Some(true) {
        if !(value.is_string() || is_integer(value)) {
            out.push(wrong(pointer, "integer or string", value));
        }
        return;
    }
    let declared = schema["type"].as_str();
    let fits = match declared {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("integer") => is_integer(value),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        _ => true,
    };
    if !fits {
        out.push(wrong(pointer, declared.unwrap_or_default(), value));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.is_empty()
        && !allowed.contains(value)
    {
        out.push(Violation {
            pointer: pointer.to_string(),
            kind: ViolationKind::NotAllowed,
            message: format!(
                "Unsupported value: {}: supported values: {}",
                value,
                allowed
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    match value {
        Value::Object(map) => {
            if schema["x-kubernetes-embedded-resource"].as_bool() == Some(true) {
                // An embedded object (apiVersion/kind/metadata of its own): its schema is
                // usually partial; only its declared properties are walked.
                walk_properties(map, schema, pointer, out, true);
            } else {
                walk_properties(map, schema, pointer, out, preserves_unknown(schema));
            }
            required(map, schema, pointer, out);
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    walk(item, item_schema, &format!("{pointer}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

fn walk_properties(
    map: &Map<String, Value>,
    schema: &Value,
    pointer: &str,
    out: &mut Vec<Violation>,
    lenient: bool,
) {
    let props = schema["properties"].as_object();
    let additional = &schema["additionalProperties"];
    for (key, value) in map {
        let here = format!("{pointer}/{}", escape(key));
        if let Some(sub) = props.and_then(|p| p.get(key)) {
            walk(value, sub, &here, out);
        } else if additional.is_object() {
            walk(value, additional, &here, out);
        } else if additional.as_bool() == Some(true) || lenient {
            // a map of anything, or unknown fields preserved
        } else if props.is_some() {
            out.push(unknown(here));
        } else if schema.get("type").is_none() || schema["type"] == "object" && props.is_none() {
            // `type: object` with neither properties nor additionalProperties: the API server
            // prunes every field of it. A strict apply refuses them.
            if schema.get("type").is_some() {
                out.push(unknown(here));
            }
        }
    }
}

fn required(map: &Map<String, Value>, schema: &Value, pointer: &str, out: &mut Vec<Violation>) {
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        if map.get(name).is_none_or(Value::is_null) {
            out.push(Violation {
                pointer: format!("{pointer}/{}", escape(name)),
                kind: ViolationKind::MissingField,
                message: format!("Required value: {name}"),
            });
        }
    }
}

fn preserves_unknown(schema: &Value) -> bool {
    schema["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true)
}

fn is_integer(v: &Value) -> bool {
    v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn unknown(pointer: String) -> Violation {
    let field = pointer
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .replace("~1", "/")
        .replace("~0", "~");
    Violation {
        message: format!("unknown field \"{field}\""),
        pointer,
        kind: ViolationKind::UnknownField,
    }
}

fn wrong(pointer: &str, expected: &str, found: &Value) -> Violation {
    let found = match found {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    Violation {
        pointer: pointer.to_string(),
        kind: ViolationKind::WrongType,
        message: format!("Invalid value: \"{found}\": must be of type {expected}"),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["size"],
                    "properties": {
                        "size": {"type": "integer"},
                        "mode": {"type": "string", "enum": ["fast", "safe"]},
                        "port": {"x-kubernetes-int-or-string": true},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
                    }
                }
            }
        })
    }

    fn kinds(raw: Value) -> Vec<(String, ViolationKind)> {
        check(&raw, &schema())
            .into_iter()
            .map(|v| (v.pointer, v.kind))
            .collect()
    }

    #[test]
    fn a_conforming_resource_passes() {
        let raw = json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"}, "status": {"x": 1},
            "spec": {"size": 3, "mode": "fast", "port": "http", "labels": {"a": "b"}, "extra": {"any": [1]}, "items": [{"name": "n"}]}});
        assert_eq!(kinds(raw), vec![]);
    }

    #[test]
    fn unknown_fields_types_enums_and_required_fields_are_found() {
        let raw = json!({"spec": {"mode": "slow", "port": true, "labels": {"a": 1}, "items": [{"nmae": "n"}], "sise": 3}});
        let mut got = kinds(raw);
        got.sort();
        assert_eq!(
            got,
            vec![
                ("/spec/items/0/nmae".into(), ViolationKind::UnknownField),
                ("/spec/labels/a".into(), ViolationKind::WrongType),
                ("/spec/mode".into(), ViolationKind::NotAllowed),
                ("/spec/port".into(), ViolationKind::WrongType),
                ("/spec/sise".into(), ViolationKind::UnknownField),
                ("/spec/size".into(), ViolationKind::MissingField),
            ]
        );
    }
}
