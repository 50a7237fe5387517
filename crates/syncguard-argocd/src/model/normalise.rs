//! What Argo CD's ignoreDifferences normaliser hides in one object, and what a sync with
//! `RespectIgnoreDifferences=true` then does with it (Argo CD 3.6.1,
//! `util/argo/normalizers/diff_normalizer.go` and `normalizeTargetResources` in
//! `controller/sync.go`).
//!
//! For each rule that applies to the object ([`IgnoreRule::applies_to`]):
//! - a JSON pointer is a JSON-patch `remove`. It hides the field when the object has it; a field
//!   the object does not have is not an error (the remove is skipped), and the same pointer still
//!   hides the field on the live object, where a controller may have set it. A pointer that
//!   steps into a list with a token that is not an index (`/spec/containers/image`) can never
//!   name anything in that list: [`PointerOutcome::ThroughList`]. A pointer that does not start
//!   with `/` is not a JSON pointer: [`PointerOutcome::Invalid`].
//! - a jq expression becomes `del(<expr>)`; syncguard evaluates `path(<expr>)` on the object with
//!   a jq implementation to know the concrete fields it selects. An expression that does not
//!   parse makes Argo CD's whole normaliser fail, so the Application cannot be compared; one that
//!   fails on this object (iterating over a missing list) is skipped for it.
//! - `managedFieldsManagers` hides the fields those managers own on the live object; a rendered
//!   object has no managed fields, so offline this is only named, never resolved.
//!
//! With `RespectIgnoreDifferences=true` a sync copies the live values of the hidden fields into
//! what it applies. It does so with a merge patch: for a built-in kind a strategic merge, where
//! a list whose elements have a merge key (containers by `name`) is merged element by element
//! and any other list is replaced whole; for a custom resource a JSON merge patch, which replaces
//! every list whole. So hiding one element of such a list takes the whole list from live, and a
//! change to any other element in Git never reaches the cluster: [`Hidden::frozen_lists`].

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use crate::config::ignore::IgnoreRule;
use crate::model::diff::stored::merge_keys;
use crate::model::refs::is_builtin_group;

/// What one JSON pointer of a rule does to one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PointerOutcome {
    /// The object has the field: it is hidden.
    Present,
    /// The object does not have the field (the live object may, and then it is hidden there).
    Absent,
    /// The pointer steps into the list at `list` with a token that is not an index, so it can
    /// name nothing in it.
    ThroughList {
        /// JSON pointer of the list.
        list: String,
    },
    /// Not a JSON pointer (does not start with `/`): Argo CD's remove fails on every object.
    Invalid,
}

/// What one jq expression of a rule does to one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum JqOutcome {
    /// The concrete fields it selects in the object (possibly none).
    Selects {
        /// JSON pointers of the selected fields.
        paths: Vec<String>,
    },
    /// It fails on this object (Argo CD skips it for the object).
    Fails {
        /// The jq error.
        error: String,
    },
    /// It does not parse: Argo CD cannot build the normaliser, the Application is not compared.
    Unparsable {
        /// The parse error.
        error: String,
    },
}

/// What one rule hides in one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleEffect {
    /// The rule's index in the list the caller passed.
    pub rule: usize,
    /// One outcome per `jsonPointers` entry, in order.
    pub pointers: Vec<PointerOutcome>,
    /// One outcome per `jqPathExpressions` entry, in order.
    pub jq: Vec<JqOutcome>,
    /// `managedFieldsManagers` (resolved only against live managed fields).
    pub managers: Vec<String>,
}

/// Everything the rules hide in one object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Hidden {
    /// One entry per rule that applies to the object.
    pub effects: Vec<RuleEffect>,
    /// The JSON pointers the comparison removes: every valid JSON pointer of the applying rules
    /// (present or not: it hides the live field too) and every path a jq expression selects in
    /// the object, deduplicated, in order.
    pub fields: Vec<String>,
    /// Lists a sync with RespectIgnoreDifferences takes whole from live (see the module docs).
    pub frozen_lists: Vec<String>,
}

impl Hidden {
    /// True when no rule applies to the object.
    pub fn is_empty(&self) -> bool {
        self.effects.is_empty()
    }
}

/// The object `rules` are applied to: its JSON and identity.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The object as rendered (or live).
    pub object: &'a Value,
    /// API group.
    pub group: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// `metadata.name`.
    pub name: &'a str,
    /// Effective namespace (empty for cluster-scoped objects).
    pub namespace: &'a str,
}

/// What `rules` hide in `t`. `strategic_merge`: the release patches built-in kinds with a
/// strategic merge under RespectIgnoreDifferences
/// (`Behaviour::RespectIgnoreDifferencesStrategicMerge`); without it every list is replaced
/// whole.
pub fn hidden(rules: &[IgnoreRule], t: Target<'_>, strategic_merge: bool) -> Hidden {
    let Target {
        object,
        group,
        kind,
        name,
        namespace,
    } = t;
    let mut out = Hidden::default();
    for (i, rule) in rules.iter().enumerate() {
        if !rule.applies_to(group, kind, name, namespace) {
            continue;
        }
        let pointers: Vec<PointerOutcome> = rule
            .json_pointers
            .iter()
            .map(|p| pointer_outcome(object, p))
            .collect();
        for (p, outcome) in rule.json_pointers.iter().zip(&pointers) {
            if matches!(outcome, PointerOutcome::Present | PointerOutcome::Absent) {
                push_unique(&mut out.fields, p);
            }
        }
        let jq: Vec<JqOutcome> = rule
            .jq_path_expressions
            .iter()
            .map(|e| jq_outcome(object, e))
            .collect();
        for outcome in &jq {
            if let JqOutcome::Selects { paths } = outcome {
                for p in paths {
                    push_unique(&mut out.fields, p);
                }
            }
        }
        out.effects.push(RuleEffect {
            rule: i,
            pointers,
            jq,
            managers: rule.managed_fields_managers.clone(),
        });
    }
    let builtin = strategic_merge && is_builtin_group(group);
    for field in &out.fields {
        if let Some(list) = frozen_list(object, field, builtin) {
            push_unique(&mut out.frozen_lists, &list);
        }
    }
    out
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_string());
    }
}

/// Splits a JSON pointer into unescaped tokens; `None` when it is not one.
pub fn tokens(pointer: &str) -> Option<Vec<String>> {
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// What the JSON pointer `pointer` names in `object`.
pub fn pointer_outcome(object: &Value, pointer: &str) -> PointerOutcome {
    let Some(tokens) = tokens(pointer) else {
        return PointerOutcome::Invalid;
    };
    let mut at = object;
    let mut walked = String::new();
    for token in &tokens {
        match at {
            Value::Object(map) => match map.get(token) {
                Some(next) => at = next,
                None => return PointerOutcome::Absent,
            },
            Value::Array(items) => {
                let index = token
                    .parse::<usize>()
                    .ok()
                    .filter(|_| token == "0" || !token.starts_with('0'));
                match index {
                    Some(i) => match items.get(i) {
                        Some(next) => at = next,
                        None => return PointerOutcome::Absent,
                    },
                    None => return PointerOutcome::ThroughList { list: walked },
                }
            }
            _ => return PointerOutcome::Absent,
        }
        walked.push('/');
        crate::pointers::push_escaped(&mut walked, token);
    }
    PointerOutcome::Present
}

/// The list a sync with RespectIgnoreDifferences replaces whole from live when `field` is
/// hidden: the outermost list on the way to `field` whose element is named by index and that a
/// merge patch replaces whole (every list of a custom resource, and of every kind before the
/// strategic merge; a list of a built-in kind without a strategic-merge key).
fn frozen_list(object: &Value, field: &str, builtin: bool) -> Option<String> {
    let tokens = tokens(field)?;
    let mut at = object;
    let mut walked = String::new();
    let mut last_key = "";
    for token in &tokens {
        match at {
            Value::Object(map) => {
                at = map.get(token)?;
                last_key = token;
            }
            Value::Array(items) => {
                let i = token.parse::<usize>().ok()?;
                let whole = !builtin || !merged_element_by_element(last_key, items);
                if whole {
                    return Some(walked);
                }
                at = items.get(i)?;
            }
            _ => return None,
        }
        walked.push('/');
        crate::pointers::push_escaped(&mut walked, token);
    }
    None
}

/// The fields `managers` own on the live object `live`, as JSON pointers, read from its
/// `metadata.managedFields` (`fieldsType: FieldsV1`): `f:<name>` a field, `k:<json>` the list
/// element whose keys have those values, `v:<json>` the set element of that value, `i:<n>` the
/// element at that index, `.` the node itself. Managers are matched by exact name, as Argo CD's
/// `managedFieldsManagers` matches them. A rendered object has no managed fields: nothing.
pub fn managed_fields(live: &Value, managers: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(entries) = live
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return out;
    };
    for entry in entries {
        let manager = entry
            .get("manager")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !managers.iter().any(|m| m == manager) {
            continue;
        }
        if let Some(fields) = entry.get("fieldsV1") {
            owned(fields, Some(live), String::new(), &mut out);
        }
    }
    out
}

fn owned(fields: &Value, node: Option<&Value>, at: String, out: &mut Vec<String>) {
    let Some(map) = fields.as_object() else {
        return;
    };
    if map.is_empty() {
        push_unique(out, &at);
        return;
    }
    for (k, sub) in map {
        if k == "." {
            push_unique(out, &at);
            continue;
        }
        let (child_at, child) = if let Some(name) = k.strip_prefix("f:") {
            let mut p = at.clone();
            p.push('/');
            crate::pointers::push_escaped(&mut p, name);
            (p, node.and_then(|n| n.get(name)))
        } else {
            let items = node.and_then(Value::as_array);
            let index = if let Some(key) = k.strip_prefix("k:") {
                let Ok(Value::Object(want)) = serde_json::from_str::<Value>(key) else {
                    continue;
                };
                items.and_then(|items| {
                    items.iter().position(|item| {
                        want.iter()
                            .all(|(wk, wv)| item.get(wk).is_some_and(|v| v == wv))
                    })
                })
            } else if let Some(value) = k.strip_prefix("v:") {
                let Ok(want) = serde_json::from_str::<Value>(value) else {
                    continue;
                };
                items.and_then(|items| items.iter().position(|item| *item == want))
            } else {
                k.strip_prefix("i:").and_then(|i| i.parse::<usize>().ok())
            };
            let Some(i) = index else { continue };
            (format!("{at}/{i}"), items.and_then(|items| items.get(i)))
        };
        owned(sub, child, child_at, out);
    }
}

/// True when a strategic merge patch merges the list `field` element by element: the lists
/// with a merge key the diff model knows, plus those only a patch merges by key (a webhook
/// configuration's `webhooks` by `name`) or as a set (`finalizers`).
fn merged_element_by_element(field: &str, items: &[Value]) -> bool {
    merge_keys(field, items).is_some() || matches!(field, "webhooks" | "finalizers")
}

/// Compiled `[path(<expr>)]` programs by expression (the same few expressions are evaluated on
/// every object of an Application).
type Compiled = Result<
    jaq_core::compile::Filter<jaq_core::Native<jaq_core::data::JustLut<jaq_json::Val>>>,
    String,
>;

fn compiled(expression: &str) -> Result<std::sync::Arc<Compiled>, String> {
    static CACHE: Mutex<Option<HashMap<String, std::sync::Arc<Compiled>>>> = Mutex::new(None);
    let mut guard = CACHE.lock().map_err(|_| "jq cache poisoned".to_string())?;
    let cache = guard.get_or_insert_with(HashMap::new);
    if let Some(c) = cache.get(expression) {
        return Ok(c.clone());
    }
    let c = std::sync::Arc::new(compile(expression));
    if cache.len() < 4096 {
        cache.insert(expression.to_string(), c.clone());
    }
    Ok(c)
}

fn compile(expression: &str) -> Compiled {
    use jaq_core::load::{Arena, File, Loader};
    // Argo CD parses `del(<expr>)`; `[path(<expr>)]` accepts exactly the same expressions.
    let code = format!("[path({expression})]");
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let modules = loader
        .load(
            &arena,
            File {
                code: code.as_str(),
                path: (),
            },
        )
        .map_err(|errs| {
            format!(
                "cannot parse jq expression {expression:?} ({} error(s))",
                errs.len()
            )
        })?;
    jaq_core::Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errs| {
            format!(
                "cannot compile jq expression {expression:?} ({} error(s))",
                errs.len()
            )
        })
}

/// True when Argo CD can parse `expression` (the whole Application is not compared otherwise).
pub fn jq_parses(expression: &str) -> Result<(), String> {
    match compiled(expression)?.as_ref() {
        Ok(_) => Ok(()),
        Err(e) => Err(e.clone()),
    }
}

/// What the jq path expression selects in `object`.
pub fn jq_outcome(object: &Value, expression: &str) -> JqOutcome {
    let filter = match compiled(expression) {
        Err(error) => return JqOutcome::Fails { error },
        Ok(c) => c,
    };
    let filter = match filter.as_ref() {
        Ok(f) => f,
        Err(error) => {
            return JqOutcome::Unparsable {
                error: error.clone(),
            };
        }
    };
    let Ok(input) = jaq_json::read::parse_single(object.to_string().as_bytes()) else {
        return JqOutcome::Fails {
            error: "object is not JSON".into(),
        };
    };
    let ctx = jaq_core::Ctx::<jaq_core::data::JustLut<jaq_json::Val>>::new(
        &filter.lut,
        jaq_core::Vars::new([]),
    );
    let mut results = filter.id.run((ctx, input)).map(jaq_core::unwrap_valr);
    let first = match results.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            return JqOutcome::Fails {
                error: e.to_string(),
            };
        }
        None => return JqOutcome::Selects { paths: Vec::new() },
    };
    let Ok(Value::Array(paths)) = serde_json::from_str::<Value>(&first.to_string()) else {
        return JqOutcome::Fails {
            error: "unexpected jq output".into(),
        };
    };
    let mut out = Vec::new();
    for path in paths {
        let Value::Array(steps) = path else { continue };
        let mut p = String::new();
        for step in steps {
            p.push('/');
            match step {
                Value::String(s) => crate::pointers::push_escaped(&mut p, &s),
                Value::Number(n) => p.push_str(&n.to_string()),
                _ => {}
            }
        }
        if !out.contains(&p) {
            out.push(p);
        }
    }
    JqOutcome::Selects { paths: out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Notes;
    use crate::config::ignore::Layer;
    use serde_json::json;

    fn rule(v: Value) -> IgnoreRule {
        IgnoreRule::read(
            &v,
            "/spec/ignoreDifferences/0",
            Layer::Application,
            &mut Notes::default(),
        )
    }

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "shop"},
               "spec": {"replicas": 2, "template": {"spec": {"containers": [
                   {"name": "app", "image": "app:1", "args": ["--a", "--b"],
                    "env": [{"name": "X", "value": "1"}]},
                   {"name": "proxy", "image": "envoy:1"}]}}}})
    }

    #[test]
    fn pointers_name_present_absent_or_impossible_fields() {
        let d = deployment();
        assert_eq!(
            pointer_outcome(&d, "/spec/replicas"),
            PointerOutcome::Present
        );
        assert_eq!(pointer_outcome(&d, "/spec/paused"), PointerOutcome::Absent);
        assert_eq!(
            pointer_outcome(&d, "/spec/template/spec/containers/image"),
            PointerOutcome::ThroughList {
                list: "/spec/template/spec/containers".into()
            }
        );
        assert_eq!(
            pointer_outcome(&d, "/spec/template/spec/containers/1/image"),
            PointerOutcome::Present
        );
        assert_eq!(
            pointer_outcome(&d, "spec/replicas"),
            PointerOutcome::Invalid
        );
    }

    #[test]
    fn managed_fields_of_named_managers_are_resolved_to_pointers() {
        let live = json!({
            "metadata": {"managedFields": [
                {"manager": "hpa-controller", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                {"manager": "injector", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                     "k:{\"name\":\"proxy\"}": {".": {}, "f:image": {}}}}}}}},
                {"manager": "argocd-controller", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}}]},
            "spec": {"replicas": 4, "template": {"spec": {"containers": [
                {"name": "app"}, {"name": "proxy", "image": "envoy"}]}}}});
        assert_eq!(
            managed_fields(&live, &["hpa-controller".into(), "injector".into()]),
            vec![
                "/spec/replicas".to_string(),
                "/spec/template/spec/containers/1".into(),
                "/spec/template/spec/containers/1/image".into()
            ]
        );
        assert!(managed_fields(&json!({}), &["x".into()]).is_empty());
    }

    #[test]
    fn jq_expressions_select_concrete_paths_and_bad_ones_are_told_apart() {
        let d = deployment();
        assert_eq!(
            jq_outcome(
                &d,
                ".spec.template.spec.containers[] | select(.name == \"proxy\") | .image"
            ),
            JqOutcome::Selects {
                paths: vec!["/spec/template/spec/containers/1/image".into()]
            }
        );
        assert!(matches!(
            jq_outcome(&d, ".spec.template.spec.containers[] | select(.name == "),
            JqOutcome::Unparsable { .. }
        ));
        assert!(matches!(
            jq_outcome(&d, ".spec.volumes[] | .name"),
            JqOutcome::Fails { .. }
        ));
        assert_eq!(
            jq_outcome(
                &d,
                ".spec.template.spec.containers[] | select(.name == \"none\")"
            ),
            JqOutcome::Selects { paths: vec![] }
        );
    }

    #[test]
    fn a_rule_without_its_group_hides_nothing_and_respect_freezes_atomic_lists() {
        let d = deployment();
        let without_group = rule(json!({"kind": "Deployment", "jsonPointers": ["/spec/replicas"]}));
        let t = Target {
            object: &d,
            group: "apps",
            kind: "Deployment",
            name: "web",
            namespace: "shop",
        };
        assert!(hidden(&[without_group], t, true).is_empty());

        let r = rule(
            json!({"group": "apps", "kind": "Deployment", "jsonPointers": [
            "/spec/replicas", "/spec/template/spec/containers/0/args/1",
            "/spec/template/spec/containers/0/env/0/value"]}),
        );
        let h = hidden(std::slice::from_ref(&r), t, true);
        assert_eq!(h.fields.len(), 3);
        // containers and env merge by name; args is replaced whole.
        assert_eq!(
            h.frozen_lists,
            vec!["/spec/template/spec/containers/0/args".to_string()]
        );
        // Before the strategic merge (argo-cd#11876): the whole containers list.
        let h = hidden(&[r], t, false);
        assert_eq!(
            h.frozen_lists,
            vec!["/spec/template/spec/containers".to_string()]
        );

        // A webhook configuration's webhooks merge by name: its caBundle is kept, nothing frozen.
        let hook = json!({"webhooks": [{"name": "a", "clientConfig": {"caBundle": "x"}}]});
        let r2 = rule(json!({"group": "admissionregistration.k8s.io",
            "kind": "ValidatingWebhookConfiguration",
            "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle"]}));
        let t = Target {
            object: &hook,
            group: "admissionregistration.k8s.io",
            kind: "ValidatingWebhookConfiguration",
            name: "v",
            namespace: "",
        };
        let h = hidden(&[r2], t, true);
        assert_eq!(
            h.fields,
            vec!["/webhooks/0/clientConfig/caBundle".to_string()]
        );
        assert!(h.frozen_lists.is_empty());

        // A custom resource is patched with a JSON merge patch: every list is replaced whole.
        let cr = json!({"spec": {"hosts": [{"name": "a", "weight": 1}, {"name": "b"}]}});
        let r = rule(
            json!({"group": "x.io", "kind": "Route", "jsonPointers": ["/spec/hosts/0/weight"]}),
        );
        let t = Target {
            object: &cr,
            group: "x.io",
            kind: "Route",
            name: "r",
            namespace: "shop",
        };
        let h = hidden(&[r], t, true);
        assert_eq!(h.frozen_lists, vec!["/spec/hosts".to_string()]);
    }
}
