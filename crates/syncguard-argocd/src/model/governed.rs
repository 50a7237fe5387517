//! An Application's settings judged against the objects it governs (`input.governed` on the
//! Application object, policies/README.md): when the input holds an Application and the objects
//! Argo CD would sync for it (`render`, a GitOps directory), each `ignoreDifferences` entry can be
//! held to those objects — which ones it applies to, which of its pointers name a field in them,
//! which can never name one, which jq expressions select anything — instead of being judged by
//! its shape alone.

use serde::Serialize;

use super::Resource;
use super::normalise::{JqOutcome, PointerOutcome, Target, hidden, jq_parses, pointer_outcome};
use crate::config::application::Application;
use crate::config::ignore::IgnoreRule;

/// `input.governed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Governed {
    /// Objects of the Application in the input (the Application itself not counted).
    pub objects: usize,
    /// One entry per `spec.ignoreDifferences` entry, in order.
    pub ignore_differences: Vec<EntryFacts>,
    /// Namespaced objects by the namespace they land in (their own, else the destination), in
    /// first-seen order: `[namespace, count]`.
    pub namespaces: Vec<(String, usize)>,
    /// Namespaces the Application's own objects create (`Namespace` objects among them).
    pub creates_namespaces: Vec<String>,
}

/// One `ignoreDifferences` entry held to the Application's objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryFacts {
    /// JSON pointer of the entry in the Application.
    pub at: String,
    /// Objects it applies to.
    pub matched: usize,
    /// Objects it was probably written for but does not apply to: the same kind (ignoring
    /// case) in another group, or of its group and kind with another name or namespace.
    pub near: Vec<Near>,
    /// One per `jsonPointers` entry.
    pub pointers: Vec<PointerFacts>,
    /// One per `jqPathExpressions` entry.
    pub jq: Vec<JqFacts>,
    /// Lists a sync with RespectIgnoreDifferences=true takes whole from live because of this
    /// entry, as `<kind>/<name><pointer>`; empty without RespectIgnoreDifferences.
    pub frozen_lists: Vec<String>,
}

/// An object an entry was probably meant for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Near {
    /// Its API group.
    pub group: String,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// What differs: `group`, `kind` (case), `name` or `namespace`.
    pub differs: &'static str,
}

/// One JSON pointer of an entry across the objects the entry applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PointerFacts {
    /// The pointer as written.
    pub pointer: String,
    /// Matched objects that have the field.
    pub present: usize,
    /// Matched objects that do not (a live controller may set it).
    pub absent: usize,
    /// The list it steps into without an index, when it does in any matched object.
    pub through_list: Option<String>,
    /// Not a JSON pointer at all.
    pub invalid: bool,
    /// What to write instead, when the mistake is a known one: a jq expression for a pointer
    /// through a list (`.spec.containers[].image`), `/0` for a `[0]` index.
    pub fix: Option<String>,
}

/// One jq expression of an entry across the objects the entry applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JqFacts {
    /// The expression as written.
    pub expression: String,
    /// Matched objects in which it selects at least one field.
    pub selects: usize,
    /// Matched objects on which it fails (Argo CD skips it there).
    pub fails: usize,
    /// The parse error, when it does not parse (checked even when nothing matches).
    pub unparsable: Option<String>,
}

/// `app`'s settings held to `members` (its objects, the Application itself excluded);
/// `strategic_merge` as for [`hidden`].
pub fn governed(app: &Application, members: &[&Resource], strategic_merge: bool) -> Governed {
    let respect = app.respects_ignore_differences();
    let mut namespaces: Vec<(String, usize)> = Vec::new();
    let mut creates_namespaces = Vec::new();
    for r in members {
        if r.group.is_empty() && r.kind == "Namespace" {
            creates_namespaces.push(r.name.clone());
        }
        let ns = namespace_of(r, &app.destination_namespace);
        if ns.is_empty() {
            continue;
        }
        match namespaces.iter_mut().find(|(n, _)| n == ns) {
            Some((_, c)) => *c += 1,
            None => namespaces.push((ns.to_string(), 1)),
        }
    }
    Governed {
        namespaces,
        creates_namespaces,
        objects: members.len(),
        ignore_differences: app
            .ignore_rules
            .iter()
            .map(|rule| {
                let respect = respect.then_some(strategic_merge);
                entry_facts(rule, members, respect, &app.destination_namespace)
            })
            .collect(),
    }
}

/// The namespace Argo CD puts `r` in: its own, none for a cluster-scoped kind, else the
/// destination.
pub(crate) fn namespace_of<'r>(r: &'r Resource, destination: &'r str) -> &'r str {
    match r.namespace.as_deref() {
        Some(ns) => ns,
        None if super::refs::is_cluster_scoped(&r.group, &r.kind) => "",
        None => destination,
    }
}

fn entry_facts(
    rule: &IgnoreRule,
    members: &[&Resource],
    respect: Option<bool>,
    destination: &str,
) -> EntryFacts {
    let matched: Vec<&Resource> = members
        .iter()
        .copied()
        .filter(|r| rule.applies_to(&r.group, &r.kind, &r.name, namespace_of(r, destination)))
        .collect();
    let near = if matched.is_empty() {
        near_misses(rule, members, destination)
    } else {
        Vec::new()
    };
    let pointers = rule
        .json_pointers
        .iter()
        .map(|p| {
            let mut f = PointerFacts {
                pointer: p.clone(),
                present: 0,
                absent: 0,
                through_list: None,
                invalid: !p.starts_with('/'),
                fix: bracket_fix(p),
            };
            for r in &matched {
                match pointer_outcome(&r.raw, p) {
                    PointerOutcome::Present => f.present += 1,
                    PointerOutcome::Absent => f.absent += 1,
                    PointerOutcome::ThroughList { list } => {
                        f.fix = Some(jq_for(p, &list));
                        f.through_list.get_or_insert(list);
                    }
                    PointerOutcome::Invalid => f.invalid = true,
                }
            }
            f
        })
        .collect();
    let jq = rule
        .jq_path_expressions
        .iter()
        .map(|e| {
            let mut f = JqFacts {
                expression: e.clone(),
                selects: 0,
                fails: 0,
                unparsable: jq_parses(e).err(),
            };
            if f.unparsable.is_none() {
                for r in &matched {
                    match super::normalise::jq_outcome(&r.raw, e) {
                        JqOutcome::Selects { paths } if !paths.is_empty() => f.selects += 1,
                        JqOutcome::Selects { .. } => {}
                        JqOutcome::Fails { .. } | JqOutcome::Unparsable { .. } => f.fails += 1,
                    }
                }
            }
            f
        })
        .collect();
    let mut frozen_lists = Vec::new();
    if let Some(strategic_merge) = respect {
        for r in &matched {
            let t = Target {
                object: &r.raw,
                group: &r.group,
                kind: &r.kind,
                name: &r.name,
                namespace: namespace_of(r, destination),
            };
            let h = hidden(std::slice::from_ref(rule), t, strategic_merge);
            for list in h.frozen_lists {
                frozen_lists.push(format!("{}/{}{}", r.kind, r.name, list));
            }
        }
    }
    EntryFacts {
        at: rule.at.clone(),
        matched: matched.len(),
        near,
        pointers,
        jq,
        frozen_lists,
    }
}

/// A pointer written with `[n]` indexes (`/spec/containers[0]/image`), rewritten with `/n`.
fn bracket_fix(pointer: &str) -> Option<String> {
    let mut out = String::new();
    let mut changed = false;
    for token in pointer.strip_prefix('/')?.split('/') {
        out.push('/');
        match token.split_once('[') {
            Some((name, rest))
                if rest
                    .strip_suffix(']')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
            {
                out.push_str(name);
                out.push('/');
                out.push_str(rest.trim_end_matches(']'));
                changed = true;
            }
            _ => out.push_str(token),
        }
    }
    changed.then_some(out)
}

/// The jq path expression that names `pointer`'s field in every element of the list at
/// `list` (which the pointer steps into without an index).
fn jq_for(pointer: &str, list: &str) -> String {
    let path = |p: &str| -> String {
        super::normalise::tokens(p)
            .unwrap_or_default()
            .iter()
            .filter(|t| !t.is_empty())
            .map(|t| {
                if t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && !t.starts_with(|c: char| c.is_ascii_digit())
                {
                    format!(".{t}")
                } else if t.bytes().all(|b| b.is_ascii_digit()) {
                    format!("[{t}]")
                } else {
                    format!(".{t:?}")
                }
            })
            .collect()
    };
    let rest = pointer.get(list.len()..).unwrap_or_default();
    // `/list/*/field` (a wildcard Argo CD does not have): the `*` stands for the elements.
    let rest = ["/*", "/-", "/[]"]
        .iter()
        .find_map(|w| rest.strip_prefix(w))
        .unwrap_or(rest);
    format!("{}[]{}", path(list), path(rest))
}

/// Objects the entry was probably written for: one thing differs from an exact match.
fn near_misses(rule: &IgnoreRule, members: &[&Resource], destination: &str) -> Vec<Near> {
    let mut out = Vec::new();
    for r in members {
        let ns = namespace_of(r, destination);
        let group_ok = crate::config::glob::matches(&rule.group, &r.group);
        let kind_ok = crate::config::glob::matches(&rule.kind, &r.kind);
        let name_ok = rule.name.is_empty() || rule.name == r.name;
        let ns_ok = rule.namespace.is_empty() || rule.namespace == ns;
        let differs = if kind_ok && !group_ok && name_ok && ns_ok {
            "group"
        } else if !kind_ok
            && group_ok
            && name_ok
            && ns_ok
            && rule.kind.eq_ignore_ascii_case(&r.kind)
        {
            "kind"
        } else if kind_ok && group_ok && !name_ok && ns_ok {
            "name"
        } else if kind_ok && group_ok && name_ok && !ns_ok {
            "namespace"
        } else {
            continue;
        };
        if out.len() < 5 {
            out.push(Near {
                group: r.group.clone(),
                kind: r.kind.clone(),
                name: r.name.clone(),
                namespace: ns.to_string(),
                differs,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(v: serde_json::Value) -> Resource {
        Resource::from_value(v, None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn bracket_indexes_are_rewritten_as_pointer_tokens() {
        assert_eq!(
            bracket_fix("/spec/template/spec/containers[0]/image").as_deref(),
            Some("/spec/template/spec/containers/0/image")
        );
        assert_eq!(bracket_fix("/spec/replicas"), None);
        assert_eq!(
            jq_for("/spec/data/*/remoteRef/x", "/spec/data"),
            ".spec.data[].remoteRef.x"
        );
        assert_eq!(
            jq_for("/metadata/annotations/a~1b", "/metadata"),
            ".metadata[].annotations.\"a/b\""
        );
    }

    #[test]
    fn entries_are_held_to_the_objects_of_their_application() {
        let app = Application::read(&json!({
        "metadata": {"name": "web"},
        "spec": {"destination": {"namespace": "shop"},
            "syncPolicy": {"syncOptions": ["RespectIgnoreDifferences=true"]},
            "ignoreDifferences": [
                {"kind": "Deployment", "jsonPointers": ["/spec/replicas"]},
                {"group": "apps", "kind": "Deployment", "jsonPointers": [
                    "/spec/template/spec/containers/image", "/spec/replicas",
                    "/spec/template/spec/containers/0/args/0"]},
                {"group": "apps", "kind": "Deployment", "jqPathExpressions": [
                    ".spec.template.spec.containers[] | select(.name == \"app\") | .image",
                    ".spec.template.spec.containers[] | select(.name =="]}
            ]}}));
        let d = res(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "app", "image": "a:1", "args": ["-v"]}]}}}}));
        let s = res(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}));
        let g = governed(&app, &[&d, &s], true);
        assert_eq!(g.objects, 2);
        assert_eq!(g.namespaces, vec![("shop".to_string(), 2)]);
        let [no_group, pointers, jq] = g.ignore_differences.as_slice() else {
            panic!("{g:?}")
        };
        assert_eq!(no_group.matched, 0);
        assert_eq!(no_group.near[0].differs, "group");
        assert_eq!(no_group.near[0].group, "apps");
        assert_eq!(pointers.matched, 1);
        assert_eq!(
            pointers.pointers[0].through_list.as_deref(),
            Some("/spec/template/spec/containers")
        );
        assert_eq!(
            pointers.pointers[0].fix.as_deref(),
            Some(".spec.template.spec.containers[].image")
        );
        assert_eq!(pointers.pointers[1].present, 1);
        assert_eq!(
            pointers.frozen_lists,
            vec!["Deployment/web/spec/template/spec/containers/0/args".to_string()]
        );
        assert_eq!(jq.jq[0].selects, 1);
        assert!(jq.jq[1].unparsable.is_some());
    }
}
