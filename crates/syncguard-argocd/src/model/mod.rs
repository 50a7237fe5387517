//! The resource model: one Kubernetes object as syncguard sees it, plus where it came from.
//!
//! A [`Resource`] is deliberately thin: identity (group/version/kind, name, namespace), the raw
//! JSON exactly as it will be applied, and an optional [`Origin`] that maps JSON pointers back to
//! `file:line:column`. Everything Argo CD will *do* with the object lives in [`argo`]; what the
//! object *points at* lives in [`refs`]; how Argo CD judges its *health* lives in [`health`].

pub mod app;
pub mod apply;
pub mod argo;
pub mod diff;
pub mod explain;
pub mod generated;
pub mod governed;
pub mod health;
pub mod immutable;
pub mod normalise;
pub mod ownership;
pub mod phase;
pub mod refs;
pub mod tracking;
pub mod validity;
pub mod version;
pub mod waits;
pub mod writers;

use std::sync::Arc;

use serde_json::{Map, Value};
use thiserror::Error;

use crate::origin::{Origin, SourceLocation};

/// Why a JSON document cannot be a [`Resource`].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// The document is valid YAML/JSON but not a mapping (a list, a scalar...).
    #[error("document is not a mapping (found {found})")]
    NotAMapping {
        /// The JSON type found instead, e.g. "array".
        found: &'static str,
    },
    /// A required top-level field is absent or not a non-empty string.
    #[error("missing or empty `{field}`")]
    MissingField {
        /// The field, e.g. "kind" or "metadata.name".
        field: &'static str,
    },
}

/// One Kubernetes object: identity, raw JSON and (when it was loaded from a file) its origin.
#[derive(Debug, Clone)]
pub struct Resource {
    /// `apiVersion` as written, e.g. `apps/v1` or `v1`.
    pub api_version: String,
    /// API group: the part of `apiVersion` before `/`, empty for the core group.
    pub group: String,
    /// API version: the part of `apiVersion` after `/` (or all of it for the core group).
    pub version: String,
    /// `kind`, case as written.
    pub kind: String,
    /// `metadata.name`; empty when only `metadata.generateName` is set.
    pub name: String,
    /// `metadata.generateName` when present.
    pub generate_name: Option<String>,
    /// `metadata.namespace` when present and non-empty. Argo CD fills the app destination
    /// namespace later; that is a plan decision, not a fact of the object.
    pub namespace: Option<String>,
    /// The whole object as JSON, exactly as loaded.
    pub raw: Value,
    /// Where the object was read from; `None` for objects that did not come from a file
    /// (admission requests, live cluster objects).
    pub origin: Option<Arc<Origin>>,
    /// The Application instance whose render produced the object (`render`, `review`,
    /// `check --render`): Argo CD knows which Application's manifests hold an object even when
    /// it writes no tracking id on it, as for CustomResourceDefinitions. `None` elsewhere.
    pub rendered_by: Option<Arc<str>>,
}

impl Resource {
    /// Builds a resource from a JSON object, checking the fields every Kubernetes object needs:
    /// `apiVersion`, `kind`, and `metadata.name` or `metadata.generateName`.
    pub fn from_value(raw: Value, origin: Option<Arc<Origin>>) -> Result<Self, ModelError> {
        let obj = match &raw {
            Value::Object(obj) => obj,
            other => {
                return Err(ModelError::NotAMapping {
                    found: json_type_name(other),
                });
            }
        };
        let api_version = non_empty_str(obj.get("apiVersion"))
            .ok_or(ModelError::MissingField {
                field: "apiVersion",
            })?
            .to_string();
        let kind = non_empty_str(obj.get("kind"))
            .ok_or(ModelError::MissingField { field: "kind" })?
            .to_string();
        let metadata = obj.get("metadata").and_then(Value::as_object);
        let name = non_empty_str(metadata.and_then(|m| m.get("name")))
            .unwrap_or_default()
            .to_string();
        let generate_name =
            non_empty_str(metadata.and_then(|m| m.get("generateName"))).map(str::to_string);
        if name.is_empty() && generate_name.is_none() {
            return Err(ModelError::MissingField {
                field: "metadata.name",
            });
        }
        let namespace =
            non_empty_str(metadata.and_then(|m| m.get("namespace"))).map(str::to_string);
        let (group, version) = split_api_version(&api_version);
        Ok(Self {
            group: group.to_string(),
            version: version.to_string(),
            api_version,
            kind,
            name,
            generate_name,
            namespace,
            raw,
            origin,
            rendered_by: None,
        })
    }

    /// The same object with `raw` changed (origin and render attribution kept).
    pub fn with_raw(&self, raw: Value) -> Result<Self, ModelError> {
        let mut r = Resource::from_value(raw, self.origin.clone())?;
        r.rendered_by.clone_from(&self.rendered_by);
        Ok(r)
    }

    /// `metadata.annotations` as a JSON map, if present.
    pub fn annotations(&self) -> Option<&Map<String, Value>> {
        self.raw
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object)
    }

    /// `metadata.labels` as a JSON map, if present.
    pub fn labels(&self) -> Option<&Map<String, Value>> {
        self.raw
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
    }

    /// One annotation value, if present *and a string* (Kubernetes only accepts strings).
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    }

    /// True if the annotation key is present, whatever its value (Argo CD treats a present but
    /// empty `hook` annotation differently from an absent one).
    pub fn has_annotation(&self, key: &str) -> bool {
        self.annotations().is_some_and(|a| a.contains_key(key))
    }

    /// One label value, if present and a string.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels()
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
    }

    /// The name used in messages: `metadata.name`, or `generateName` followed by `*`.
    pub fn display_name(&self) -> String {
        if !self.name.is_empty() {
            self.name.clone()
        } else {
            format!("{}*", self.generate_name.as_deref().unwrap_or_default())
        }
    }

    /// Where a JSON pointer inside this object was written, falling back to the closest
    /// ancestor that has a position (e.g. a missing field points at its parent mapping).
    pub fn locate(&self, pointer: &str) -> Option<SourceLocation> {
        self.origin.as_ref().and_then(|o| o.locate(pointer))
    }
}

/// Splits `apiVersion` into (group, version); the core group is the empty string.
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The JSON type name used in error messages.
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn core_group_is_empty_and_named_groups_split_on_the_last_slash() {
        assert_eq!(split_api_version("v1"), ("", "v1"));
        assert_eq!(split_api_version("apps/v1"), ("apps", "v1"));
        assert_eq!(
            split_api_version("networking.k8s.io/v1"),
            ("networking.k8s.io", "v1")
        );
    }

    #[test]
    fn a_resource_needs_kind_api_version_and_a_name_or_generate_name() {
        let ok =
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"generateName": "mig-"}});
        let r = Resource::from_value(ok, None).unwrap();
        assert_eq!(r.name, "");
        assert_eq!(r.display_name(), "mig-*");
        assert_eq!(r.group, "batch");

        let no_kind = json!({"apiVersion": "v1", "metadata": {"name": "x"}});
        assert_eq!(
            Resource::from_value(no_kind, None).unwrap_err(),
            ModelError::MissingField { field: "kind" }
        );
        let no_name = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        assert_eq!(
            Resource::from_value(no_name, None).unwrap_err(),
            ModelError::MissingField {
                field: "metadata.name"
            }
        );
        assert_eq!(
            Resource::from_value(json!([1]), None).unwrap_err(),
            ModelError::NotAMapping { found: "array" }
        );
    }

    #[test]
    fn annotations_are_read_only_when_they_are_strings() {
        let r = Resource::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "annotations": {"a": "1", "b": 2, "c": ""}}}),
            None,
        )
        .unwrap();
        assert_eq!(r.annotation("a"), Some("1"));
        assert_eq!(r.annotation("b"), None);
        assert!(r.has_annotation("c"));
        assert!(!r.has_annotation("d"));
    }
}
