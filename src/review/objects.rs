//! The manifest diff of one Application between two revisions: objects added, removed and
//! changed, each change as the fields that differ.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::Resource;

/// An object's identity in a sync: group, kind, namespace and name. An object with
/// `generateName` and no name (a hook Argo CD names anew at each sync) is matched across
/// revisions by where it runs and what it is instead: phase and wave, kind, `generateName`,
/// and its position among the objects equal in all of those.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectId {
    pub group: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    /// `metadata.generateName` of an object without a name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub generate_name: String,
    /// For a `generateName` object: its phases and wave (`PreSync wave 0`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub at: String,
    /// For a `generateName` object: 1-based position among the objects equal in all of the
    /// above, in render order.
    #[serde(skip_serializing_if = "is_zero")]
    pub position: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ObjectId {
    /// The identity of `r` alone (a `generateName` object's position is 0: see [`ids`]).
    pub fn of(r: &Resource) -> Self {
        let generate_name = if r.name.is_empty() {
            r.raw
                .pointer("/metadata/generateName")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        } else {
            String::new()
        };
        let at = if generate_name.is_empty() {
            String::new()
        } else {
            let facts = crate::model::argo::SyncFacts::of(r);
            let phases: Vec<String> = facts.phases.iter().map(ToString::to_string).collect();
            format!("{} wave {}", phases.join("+"), facts.wave)
        };
        Self {
            group: r.group.clone(),
            kind: r.kind.clone(),
            namespace: r.namespace.clone().unwrap_or_default(),
            name: r.name.clone(),
            generate_name,
            at,
            position: 0,
        }
    }
}

/// The identities of `objects`, in order: `generateName` objects numbered among their equals.
pub fn ids(objects: &[Resource]) -> Vec<ObjectId> {
    let mut seen: BTreeMap<ObjectId, usize> = BTreeMap::new();
    objects
        .iter()
        .map(|r| {
            let mut id = ObjectId::of(r);
            if !id.generate_name.is_empty() {
                let n = seen.entry(id.clone()).or_default();
                *n += 1;
                id.position = *n;
            }
            id
        })
        .collect()
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        let name = if self.generate_name.is_empty() {
            self.name.clone()
        } else {
            format!("{}*", self.generate_name)
        };
        if !self.namespace.is_empty() {
            write!(f, " {}/{name}", self.namespace)?;
        } else {
            write!(f, " {name}")?;
        }
        if !self.generate_name.is_empty() {
            write!(f, " ({}, #{})", self.at, self.position)?;
        }
        Ok(())
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
/// `base_ids` and `head_ids` are the objects' identities ([`ids`]).
pub fn diff(
    base: &[Resource],
    base_ids: &[ObjectId],
    head: &[Resource],
    head_ids: &[ObjectId],
) -> Vec<ObjectChange> {
    let index = |rs: &[Resource], ids: &[ObjectId]| -> BTreeMap<ObjectId, Value> {
        rs.iter()
            .zip(ids)
            .map(|(r, id)| (id.clone(), redacted(r)))
            .collect()
    };
    let (b, h) = (index(base, base_ids), index(head, head_ids));
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
        let d = diff(&base, &ids(&base), &head, &ids(&head));
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
        assert!(diff(&base, &ids(&base), &base, &ids(&base)).is_empty());
    }

    #[test]
    fn secret_values_never_show_but_their_changes_do() {
        let secret = |v: &str| {
            objects(&format!(
                "apiVersion: v1\nkind: Secret\nmetadata: {{name: s, namespace: n}}\nstringData: {{token: {v}}}\n"
            ))
        };
        let (a, b) = (secret("hunter2"), secret("hunter3"));
        let d = diff(&a, &ids(&a), &b, &ids(&b));
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

    /// Hooks Argo CD names anew at each sync (`generateName`) are matched by phase, wave, kind,
    /// `generateName` and position: the changed one shows as changed, the other not at all.
    #[test]
    fn generate_name_hooks_are_matched_by_a_stable_key() {
        let hooks = |first: &str, second: &str| {
            objects(&format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata: {{generateName: migrate-, namespace: s, annotations: {{argocd.argoproj.io/hook: PreSync}}}}\nspec: {{x: {first}}}\n---\n\
                 apiVersion: batch/v1\nkind: Job\nmetadata: {{generateName: migrate-, namespace: s, annotations: {{argocd.argoproj.io/hook: PreSync}}}}\nspec: {{x: {second}}}\n---\n\
                 apiVersion: batch/v1\nkind: Job\nmetadata: {{generateName: smoke-, namespace: s, annotations: {{argocd.argoproj.io/hook: PostSync}}}}\nspec: {{x: 1}}\n"
            ))
        };
        let (base, head) = (hooks("1", "2"), hooks("1", "3"));
        let (bi, hi) = (ids(&base), ids(&head));
        assert_eq!(bi[0].position, 1);
        assert_eq!(bi[1].position, 2);
        assert_eq!(bi[2].position, 1);
        let d = diff(&base, &bi, &head, &hi);
        assert_eq!(d.len(), 1, "{d:?}");
        let ObjectChange::Changed { object, fields, .. } = &d[0] else {
            panic!("{d:?}")
        };
        assert_eq!(object.to_string(), "Job s/migrate-* (PreSync wave 0, #2)");
        assert_eq!(fields[0].path, "/spec/x");
    }
}
