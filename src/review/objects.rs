//! The manifest diff of one Application between two revisions: objects added, removed and
//! changed, each change as the fields that differ.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::Resource;

/// An object's identity in a sync: group, kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectId {
    pub group: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

impl ObjectId {
    /// The identity of `r`.
    pub fn of(r: &Resource) -> Self {
        Self {
            group: r.group.clone(),
            kind: r.kind.clone(),
            namespace: r.namespace.clone().unwrap_or_default(),
            name: r.name.clone(),
        }
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.namespace.is_empty() {
            write!(f, " {}/{}", self.namespace, self.name)
        } else {
            write!(f, " {}", self.name)
        }
    }
}

/// One field that differs (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// JSON pointer into the object.
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<Value>,
}

/// How one object differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum ObjectChange {
    /// Only on the head revision: the whole object.
    Added { object: ObjectId, manifest: Value },
    /// Only on the base revision.
    Removed { object: ObjectId, manifest: Value },
    /// On both, with different content.
    Changed {
        object: ObjectId,
        fields: Vec<FieldChange>,
        /// The object on the head revision.
        manifest: Value,
    },
}

impl ObjectChange {
    /// The object changed.
    pub fn object(&self) -> &ObjectId {
        match self {
            ObjectChange::Added { object, .. }
            | ObjectChange::Removed { object, .. }
            | ObjectChange::Changed { object, .. } => object,
        }
    }
}

/// The objects that differ between `base` and `head`, in identity order. Secret values never
/// appear: each is replaced by its length and a fingerprint, so a change still shows.
pub fn diff(base: &[Resource], head: &[Resource]) -> Vec<ObjectChange> {
    let index = |rs: &[Resource]| -> BTreeMap<ObjectId, Value> {
        rs.iter().map(|r| (ObjectId::of(r), redacted(r))).collect()
    };
    let (b, h) = (index(base), index(head));
    let mut out = Vec::new();
    for (id, hv) in &h {
        match b.get(id) {
            None => out.push(ObjectChange::Added {
                object: id.clone(),
                manifest: hv.clone(),
            }),
            Some(bv) if bv != hv => {
                let mut fields = Vec::new();
                fields_of(String::new(), Some(bv), Some(hv), &mut fields);
                out.push(ObjectChange::Changed {
                    object: id.clone(),
                    fields,
                    manifest: hv.clone(),
                });
            }
            Some(_) => {}
        }
    }
    for (id, bv) in &b {
        if !h.contains_key(id) {
            out.push(ObjectChange::Removed {
                object: id.clone(),
                manifest: bv.clone(),
            });
        }
    }
    out.sort_by(|x, y| x.object().cmp(y.object()));
    out
}

/// The object, with a Secret's `data` and `stringData` values replaced by
/// `<redacted: N bytes, fingerprint F>`.
fn redacted(r: &Resource) -> Value {
    let mut v = r.raw.clone();
    if r.group.is_empty() && r.kind == "Secret" {
        for field in ["data", "stringData"] {
            if let Some(map) = v.get_mut(field).and_then(Value::as_object_mut) {
                for value in map.values_mut() {
                    let text = value
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| value.to_string());
                    *value = Value::String(format!(
                        "<redacted: {} bytes, fingerprint {:08x}>",
                        text.len(),
                        fingerprint(&text)
                    ));
                }
            }
        }
    }
    v
}

/// FNV-1a, 32 bits: enough to see that a value changed, too short to guess it back.
fn fingerprint(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// The leaf differences below `path`: objects field by field, arrays of equal length item by
/// item, anything else as a whole.
fn fields_of(path: String, base: Option<&Value>, head: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (base, head) {
        (Some(Value::Object(b)), Some(Value::Object(h))) => {
            let mut keys: Vec<&String> = b.keys().chain(h.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                if b.get(k) != h.get(k) {
                    fields_of(p, b.get(k), h.get(k), out);
                }
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(h))) if b.len() == h.len() => {
            for (i, (x, y)) in b.iter().zip(h).enumerate() {
                if x != y {
                    fields_of(format!("{path}/{i}"), Some(x), Some(y), out);
                }
            }
        }
        _ => out.push(FieldChange {
            path,
            base: base.cloned(),
            head: head.cloned(),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    fn objects(yaml: &str) -> Vec<Resource> {
        load_str("x.yaml", yaml).resources
    }

    #[test]
    fn added_removed_and_changed_fields() {
        let base = objects(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: s}\ndata: {x: '1', v: '2'}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone, namespace: s}\n---\n\
             apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: s}\nspec: {template: {spec: {containers: [{name: m, command: [a, b]}]}}}\n",
        );
        let head = objects(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: s}\ndata: {x: '1', z: '3'}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: s}\n---\n\
             apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: s}\nspec: {template: {spec: {containers: [{name: m, command: [a, b, c]}]}}}\n",
        );
        let d = diff(&base, &head);
        let summary: Vec<String> = d
            .iter()
            .map(|c| match c {
                ObjectChange::Added { object, .. } => format!("+ {object}"),
                ObjectChange::Removed { object, .. } => format!("- {object}"),
                ObjectChange::Changed { object, fields, .. } => format!(
                    "~ {object}: {}",
                    fields
                        .iter()
                        .map(|f| f.path.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "~ ConfigMap s/a: /data/v /data/z",
                "- ConfigMap s/gone",
                "+ ConfigMap s/new",
                "~ Job s/j: /spec/template/spec/containers/0/command",
            ]
        );
        assert!(diff(&base, &base).is_empty());
    }

    #[test]
    fn secret_values_never_show_but_their_changes_do() {
        let secret = |v: &str| {
            objects(&format!(
                "apiVersion: v1\nkind: Secret\nmetadata: {{name: s, namespace: n}}\nstringData: {{token: {v}}}\n"
            ))
        };
        let d = diff(&secret("hunter2"), &secret("hunter3"));
        let ObjectChange::Changed {
            fields, manifest, ..
        } = &d[0]
        else {
            panic!("{d:?}")
        };
        let shown = format!("{fields:?} {manifest}");
        assert!(!shown.contains("hunter"), "{shown}");
        assert!(shown.contains("<redacted: 7 bytes, fingerprint"), "{shown}");
        assert_eq!(fields[0].path, "/stringData/token");
    }
}
