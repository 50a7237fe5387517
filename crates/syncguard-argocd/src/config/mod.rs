//! Argo CD's own configuration as one typed vocabulary: the Application, the ApplicationSet, the
//! AppProject and the settings of `argocd-cm` / `argocd-cmd-params-cm`, each read once, by every
//! part of the product (render, the rule input, the live reader, the reconciler, plan settings).
//!
//! Reading is tolerant, as Argo CD's own controllers are with what the API server stored: every
//! field is optional, a field of the wrong type reads as absent, and nothing fails the whole
//! object. But nothing is dropped silently either: every key the vocabulary does not know is
//! kept in [`Notes::unknown`] (as a JSON pointer into the object), and every field of the wrong
//! type in [`Notes::malformed`], so a rule can say "`include` is not a field of a source: Argo CD
//! ignores it" with the file and line of the key.
//!
//! - [`application`]: `argoproj.io/Application` (spec and status).
//! - [`source`]: one source of an Application (Git, Helm repository, OCI).
//! - [`status`]: the status of an Application: comparison, health, operation, history.
//! - [`ignore`]: one `ignoreDifferences` rule and how Argo CD matches it to an object.
//! - [`project`]: `argoproj.io/AppProject` and what it permits (destinations, repositories,
//!   kinds), as Argo CD matches them release by release.
//! - [`sync_window`]: one sync window of a project: its schedule, duration and time zone as
//!   Argo CD parses them, and which Applications it applies to.
//! - [`appset`]: `argoproj.io/ApplicationSet`, its generators and its templates.
//! - [`settings`]: `argocd-cm` and `argocd-cmd-params-cm`, every key classified.

pub mod application;
pub mod appset;
pub mod glob;
pub mod ignore;
pub mod source;
pub mod status;

use serde::Serialize;
use serde_json::{Map, Value};

pub mod project;
pub mod settings;
pub mod sync_window;

/// What reading one object found that the vocabulary does not hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Notes {
    /// JSON pointers of keys the vocabulary does not know (a misspelling, a field of another
    /// release, a field in the wrong place), in reading order.
    pub unknown: Vec<String>,
    /// Fields present with a type Argo CD would not accept.
    pub malformed: Vec<Malformed>,
}

/// A field of the wrong type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Malformed {
    /// JSON pointer of the field.
    pub pointer: String,
    /// What the field should be (`string`, `boolean`, `list`, `mapping`, `integer`).
    pub expected: &'static str,
}

impl Notes {
    /// True when reading found nothing unknown or malformed.
    pub fn is_empty(&self) -> bool {
        self.unknown.is_empty() && self.malformed.is_empty()
    }
}

/// Reads the keys of one JSON mapping, remembering which ones were asked for, so that
/// [`Fields::finish`] can report the rest as unknown.
///
/// `Fields::of(None, ..)` (an absent block) reads every field as absent and reports nothing.
#[derive(Debug)]
pub struct Fields<'v> {
    map: Option<&'v Map<String, Value>>,
    at: String,
    asked: Vec<&'static str>,
}

impl<'v> Fields<'v> {
    /// The mapping `v` found at JSON pointer `at`. A value that is present but not a mapping is
    /// noted as malformed and read as absent.
    pub fn of(v: Option<&'v Value>, at: &str, notes: &mut Notes) -> Fields<'v> {
        let map = match v {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                notes.malformed.push(Malformed {
                    pointer: at.to_string(),
                    expected: "mapping",
                });
                None
            }
        };
        Fields {
            map,
            at: at.to_string(),
            asked: Vec::new(),
        }
    }

    /// True when the mapping was present.
    pub fn present(&self) -> bool {
        self.map.is_some()
    }

    /// The JSON pointer of `key` in this mapping.
    pub fn pointer(&self, key: &str) -> String {
        let mut p = self.at.clone();
        p.push('/');
        crate::pointers::push_escaped(&mut p, key);
        p
    }

    /// The raw value of `key`, if present and not null (marks it as known).
    pub fn value(&mut self, key: &'static str) -> Option<&'v Value> {
        self.asked.push(key);
        self.map?.get(key).filter(|v| !v.is_null())
    }

    /// A string field; another type is malformed.
    pub fn str(&mut self, key: &'static str, notes: &mut Notes) -> Option<&'v str> {
        let v = self.value(key)?;
        let s = v.as_str();
        if s.is_none() {
            self.malformed(key, "string", notes);
        }
        s
    }

    /// A string field as an owned string, empty when absent.
    pub fn string(&mut self, key: &'static str, notes: &mut Notes) -> String {
        self.str(key, notes).unwrap_or_default().to_string()
    }

    /// A boolean field; `"true"`/`"false"` strings are read as Argo CD's YAML would not, so they
    /// are malformed.
    pub fn bool(&mut self, key: &'static str, notes: &mut Notes) -> Option<bool> {
        let v = self.value(key)?;
        let b = v.as_bool();
        if b.is_none() {
            self.malformed(key, "boolean", notes);
        }
        b
    }

    /// An integer field.
    pub fn int(&mut self, key: &'static str, notes: &mut Notes) -> Option<i64> {
        let v = self.value(key)?;
        let i = v.as_i64();
        if i.is_none() {
            self.malformed(key, "integer", notes);
        }
        i
    }

    /// A list field, empty when absent.
    pub fn list(&mut self, key: &'static str, notes: &mut Notes) -> &'v [Value] {
        match self.value(key) {
            None => &[],
            Some(Value::Array(a)) => a,
            Some(_) => {
                self.malformed(key, "list", notes);
                &[]
            }
        }
    }

    /// A list of strings, empty when absent; items that are not strings are malformed and
    /// skipped.
    pub fn strings(&mut self, key: &'static str, notes: &mut Notes) -> Vec<String> {
        let at = self.pointer(key);
        let mut out = Vec::new();
        for (i, item) in self.list(key, notes).iter().enumerate() {
            match item.as_str() {
                Some(s) => out.push(s.to_string()),
                None => notes.malformed.push(Malformed {
                    pointer: format!("{at}/{i}"),
                    expected: "string",
                }),
            }
        }
        out
    }

    /// A mapping of strings to strings (labels, annotations, parameters), empty when absent.
    pub fn string_map(
        &mut self,
        key: &'static str,
        notes: &mut Notes,
    ) -> std::collections::BTreeMap<String, String> {
        let at = self.pointer(key);
        let mut out = std::collections::BTreeMap::new();
        let mut inner = Fields::of(self.value(key), &at, notes);
        if let Some(map) = inner.map {
            for (k, v) in map {
                match v.as_str() {
                    Some(s) => {
                        out.insert(k.clone(), s.to_string());
                    }
                    None if v.is_null() => {}
                    None => notes.malformed.push(Malformed {
                        pointer: inner.pointer(k),
                        expected: "string",
                    }),
                }
            }
        }
        inner.map = None;
        out
    }

    /// A nested mapping, read with its own [`Fields`].
    pub fn block(&mut self, key: &'static str, notes: &mut Notes) -> Fields<'v> {
        let at = self.pointer(key);
        Fields::of(self.value(key), &at, notes)
    }

    /// Marks `keys` as known without reading them (kept as written elsewhere).
    pub fn known(&mut self, keys: &[&'static str]) {
        self.asked.extend_from_slice(keys);
    }

    fn malformed(&self, key: &str, expected: &'static str, notes: &mut Notes) {
        notes.malformed.push(Malformed {
            pointer: self.pointer(key),
            expected,
        });
    }

    /// Reports every key of the mapping that was never asked for as unknown.
    pub fn finish(self, notes: &mut Notes) {
        let Some(map) = self.map else { return };
        for key in map.keys() {
            if !self.asked.iter().any(|k| k == key) {
                notes.unknown.push(self.pointer(key));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_and_malformed_fields_are_kept_with_their_pointers() {
        let v = json!({"name": "a", "recurse": "yes", "inclde": "*.yaml", "a/b": 1});
        let mut notes = Notes::default();
        let mut f = Fields::of(Some(&v), "/spec/source", &mut notes);
        assert_eq!(f.str("name", &mut notes), Some("a"));
        assert_eq!(f.bool("recurse", &mut notes), None);
        f.finish(&mut notes);
        assert_eq!(
            notes.unknown,
            vec![
                "/spec/source/a~1b".to_string(),
                "/spec/source/inclde".into()
            ]
        );
        assert_eq!(
            notes.malformed,
            vec![Malformed {
                pointer: "/spec/source/recurse".into(),
                expected: "boolean"
            }]
        );
    }

    #[test]
    fn an_absent_block_reads_as_empty_and_reports_nothing() {
        let mut notes = Notes::default();
        let mut f = Fields::of(None, "/spec", &mut notes);
        assert!(!f.present());
        assert!(f.list("sources", &mut notes).is_empty());
        f.finish(&mut notes);
        assert!(notes.is_empty());
        let scalar = json!(3);
        let f = Fields::of(Some(&scalar), "/spec", &mut notes);
        f.finish(&mut notes);
        assert_eq!(notes.malformed.len(), 1);
    }
}
