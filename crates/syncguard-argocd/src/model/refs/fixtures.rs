//! Test builders: objects are assembled field by field so each test shows only what it is about.

use serde_json::{Map, Value, json};

use super::Reference;
use crate::model::Resource;

/// A test object under construction.
pub(super) struct ObjBuilder {
    raw: Value,
}

/// Starts an object with `apiVersion`, `kind` and `metadata.name`.
pub(super) fn obj(api_version: &str, kind: &str, name: &str) -> ObjBuilder {
    ObjBuilder {
        raw: json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}),
    }
}

impl ObjBuilder {
    /// Sets `metadata.namespace`.
    pub(super) fn namespace(self, ns: &str) -> Self {
        self.set("/metadata/namespace", json!(ns))
    }

    /// Sets the value at a JSON pointer made of object keys, creating missing mappings.
    pub(super) fn set(mut self, pointer: &str, value: Value) -> Self {
        let tokens: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let Some((last, parents)) = tokens.split_last() else {
            self.raw = value;
            return self;
        };
        let mut cur = &mut self.raw;
        for t in parents {
            if !cur.get(t).is_some_and(Value::is_object) {
                cur.as_object_mut()
                    .expect("parent is a mapping")
                    .insert(t.clone(), Value::Object(Map::new()));
            }
            cur = cur.get_mut(t).expect("just inserted");
        }
        cur.as_object_mut()
            .expect("parent is a mapping")
            .insert(last.clone(), value);
        self
    }

    /// Sets the pod spec at `/spec/template/spec` (Deployment, StatefulSet, Job, Rollout, …).
    pub(super) fn template(self, pod_spec: Value) -> Self {
        self.set("/spec/template/spec", pod_spec)
    }

    /// The finished resource.
    pub(super) fn build(self) -> Resource {
        Resource::from_value(self.raw, None).expect("test object is a valid resource")
    }
}

/// The reference read from `via`; fails the test listing what was found instead.
pub(super) fn find<'a>(refs: &'a [Reference], via: &str) -> &'a Reference {
    refs.iter()
        .find(|r| r.via == via)
        .unwrap_or_else(|| panic!("no reference via {via}; found {:?}", vias(refs)))
}

/// The `via` pointers of all references, in order.
pub(super) fn vias(refs: &[Reference]) -> Vec<&str> {
    refs.iter().map(|r| r.via.as_str()).collect()
}
