//! One `ignoreDifferences` rule and how Argo CD matches it to an object.
//!
//! Argo CD gathers the rules of an object from three layers (`NewIgnoreNormalizer` in
//! `util/argo/normalizers/diff_normalizer.go`, 3.6.1):
//! - the Application's `spec.ignoreDifferences` entries;
//! - argocd-cm's system-level entries, `resource.customizations.ignoreDifferences.<group>_<kind>`
//!   and `...ignoreDifferences.all` (or the older single `resource.customizations` block), which
//!   become entries with that group and kind (`*`/`*` for `all`);
//! - from 3.6, the object's own `argocd.argoproj.io/ignore-differences` annotation (its
//!   `jsonPointers`), for that object only.
//!
//! An entry applies to an object when its `group` and `kind` match as globs (an empty `group` is
//! the core group; an empty `kind` matches nothing), and `name` and `namespace`, when set, are
//! equal. Each JSON pointer becomes a JSON-patch `remove`, each jq expression `del(<expr>)`;
//! a remove of a path the object does not have fails and is skipped silently, so a pointer that
//! names nothing hides nothing. A jq expression that does not parse makes the whole normaliser
//! fail: the Application cannot be compared at all (ComparisonError).

use serde::Serialize;
use serde_json::Value;

use super::glob;
use super::{Fields, Notes};

/// Where a rule is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "layer", rename_all = "snake_case")]
pub enum Layer {
    /// The Application's `spec.ignoreDifferences`.
    Application,
    /// argocd-cm: `resource.customizations.ignoreDifferences.<key>` (`all` included) or the
    /// older `resource.customizations` block.
    System {
        /// The argocd-cm key it was read from.
        key: String,
    },
    /// The object's own `argocd.argoproj.io/ignore-differences` annotation (from 3.6).
    Annotation,
}

/// One ignoreDifferences entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoreRule {
    /// Where it is written.
    #[serde(flatten)]
    pub layer: Layer,
    /// JSON pointer of the entry in the object that holds it (`/spec/ignoreDifferences/0`; for
    /// argocd-cm the data key's pointer; `""` for an annotation).
    pub at: String,
    /// `group` (a glob; empty is the core group).
    pub group: String,
    /// `kind` (a glob; empty matches nothing).
    pub kind: String,
    /// `name`: exact, empty for any.
    pub name: String,
    /// `namespace`: exact, empty for any.
    pub namespace: String,
    /// `jsonPointers` as written.
    pub json_pointers: Vec<String>,
    /// `jqPathExpressions` as written.
    pub jq_path_expressions: Vec<String>,
    /// `managedFieldsManagers` as written.
    pub managed_fields_managers: Vec<String>,
}

impl IgnoreRule {
    /// Reads one entry of `spec.ignoreDifferences` written at `at`.
    pub fn read(v: &Value, at: &str, layer: Layer, notes: &mut Notes) -> IgnoreRule {
        let mut f = Fields::of(Some(v), at, notes);
        let rule = IgnoreRule {
            layer,
            at: at.to_string(),
            group: f.string("group", notes),
            kind: f.string("kind", notes),
            name: f.string("name", notes),
            namespace: f.string("namespace", notes),
            json_pointers: f.strings("jsonPointers", notes),
            jq_path_expressions: f.strings("jqPathExpressions", notes),
            managed_fields_managers: f.strings("managedFieldsManagers", notes),
        };
        f.finish(notes);
        rule
    }

    /// A system-level rule of argocd-cm for `group`/`kind` with these paths.
    pub fn system(key: &str, at: &str, group: &str, kind: &str, body: &Value) -> IgnoreRule {
        let mut notes = Notes::default();
        let mut rule = IgnoreRule::read(
            body,
            at,
            Layer::System {
                key: key.to_string(),
            },
            &mut notes,
        );
        rule.group = group.to_string();
        rule.kind = kind.to_string();
        rule.name.clear();
        rule.namespace.clear();
        rule
    }

    /// The rule an object's own annotation makes (its `jsonPointers`), for that object only.
    pub fn annotation(
        group: &str,
        kind: &str,
        name: &str,
        namespace: &str,
        pointers: Vec<String>,
    ) -> IgnoreRule {
        IgnoreRule {
            layer: Layer::Annotation,
            at: String::new(),
            group: group.to_string(),
            kind: kind.to_string(),
            name: name.to_string(),
            namespace: namespace.to_string(),
            json_pointers: pointers,
            jq_path_expressions: Vec::new(),
            managed_fields_managers: Vec::new(),
        }
    }

    /// True when Argo CD applies this rule to an object of `group`/`kind` named `name` in
    /// `namespace` (empty for cluster-scoped objects).
    pub fn applies_to(&self, group: &str, kind: &str, name: &str, namespace: &str) -> bool {
        glob::matches(&self.group, group)
            && glob::matches(&self.kind, kind)
            && (self.name.is_empty() || self.name == name)
            && (self.namespace.is_empty() || self.namespace == namespace)
    }

    /// True when the rule hides nothing whatever it matches (no pointer, expression or manager).
    pub fn is_empty(&self) -> bool {
        self.json_pointers.is_empty()
            && self.jq_path_expressions.is_empty()
            && self.managed_fields_managers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_matches_by_glob_group_and_kind_and_exact_name_and_namespace() {
        let mut notes = Notes::default();
        let v = json!({"group": "apps", "kind": "Deployment", "name": "web",
                       "jsonPointers": ["/spec/replicas"], "jsonPointer": "/x"});
        let r = IgnoreRule::read(
            &v,
            "/spec/ignoreDifferences/0",
            Layer::Application,
            &mut notes,
        );
        assert!(r.applies_to("apps", "Deployment", "web", "shop"));
        assert!(!r.applies_to("apps", "Deployment", "api", "shop"));
        assert!(!r.applies_to("", "Deployment", "web", "shop"));
        assert_eq!(
            notes.unknown,
            vec!["/spec/ignoreDifferences/0/jsonPointer".to_string()]
        );

        // No group: the core group only, so a Deployment is never matched.
        let v = json!({"kind": "Deployment", "jsonPointers": ["/spec/replicas"]});
        let r = IgnoreRule::read(&v, "/x", Layer::Application, &mut notes);
        assert!(!r.applies_to("apps", "Deployment", "web", "shop"));
        // No kind: nothing.
        let v = json!({"group": "*", "jsonPointers": ["/spec/replicas"]});
        let r = IgnoreRule::read(&v, "/x", Layer::Application, &mut notes);
        assert!(!r.applies_to("apps", "Deployment", "web", "shop"));
        // The system-level `all` entry matches everything.
        let r = IgnoreRule::system("all", "/data/x", "*", "*", &json!({"jsonPointers": ["/a"]}));
        assert!(r.applies_to("", "ConfigMap", "c", ""));
    }
}
