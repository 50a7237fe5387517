//! What an ApplicationSet's templates and generators are, as facts for the rules
//! (`input.appset`, documented in policies/README.md): the engine its templates are rendered
//! with, the parameters the templates read and those each generator gives (Argo CD 3.6's
//! `applicationset/generators`), the template tags written for the other engine, the templates
//! that do not parse, the generators and the fields the CRD does not know.
//!
//! Rust says what is there; the rule (SG610, policies/applicationset_template.rego) decides
//! what is wrong with it.

use serde::Serialize;
use serde_json::Value;

use super::gotemplate;
use super::{
    ApplicationSet, Engine, Generator, GeneratorKind, GeneratorSpec, MissingKey,
    valid_go_template_option,
};
use crate::config::Malformed;

/// `input.appset`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Facts {
    /// `go` (`goTemplate: true`) or `fasttemplate`.
    pub engine: &'static str,
    /// With `go`: what a missing key does (`default`, `zero`, `error`).
    pub missing_key: &'static str,
    /// `spec.goTemplateOptions`, each with whether Go accepts it.
    pub go_template_options: Vec<TemplateOption>,
    /// Every generator, nested ones included, in reading order.
    pub generators: Vec<GeneratorFacts>,
    /// What each generator of `spec.generators` gives its template, by index.
    pub parameters_provided: Vec<Provided>,
    /// The parameters the templates read, in the syntax of the engine in force.
    pub parameters_used: Vec<Use>,
    /// Template tags written in the syntax of the other engine.
    pub foreign_syntax: Vec<Foreign>,
    /// Templates the engine in force refuses.
    pub template_errors: Vec<TemplateError>,
    /// JSON pointers of keys the ApplicationSet CRD does not declare (the API server drops them).
    pub unknown: Vec<String>,
    /// Fields of a type the CRD does not accept.
    pub malformed: Vec<Malformed>,
}

/// One `goTemplateOptions` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TemplateOption {
    pub pointer: String,
    pub option: String,
    /// `missingkey=default|invalid|zero|error`: any other makes Go's `Template.Option` panic.
    pub valid: bool,
}

/// One generator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GeneratorFacts {
    pub pointer: String,
    /// The kinds it names (`list`, `git`...), in Argo CD's order; empty: none.
    pub kinds: Vec<&'static str>,
    /// 0 for `spec.generators`, 1 inside a matrix or merge, 2 inside a nested one.
    pub depth: usize,
    /// For a matrix or merge: how many generators it combines.
    pub children: usize,
    /// For a merge: its `mergeKeys`.
    pub merge_keys: Vec<String>,
}

/// The parameters one generator of `spec.generators` gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provided {
    pub pointer: String,
    pub kinds: Vec<&'static str>,
    /// Parameter names (with `go`, every parent of a nested one too: `path`, `path.basename`).
    pub names: Vec<String>,
    /// Families of names: any name starting with one is given (`metadata.labels.`, `path[`).
    pub prefixes: Vec<String>,
    /// The generator gives more names than syncguard can know (git files, cluster decision
    /// resources, plugins, `elementsYaml`): a name missing from `names` may still be given.
    pub open: bool,
}

/// One parameter a template reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Use {
    /// `path.basename`, `values.env`, `name`.
    pub name: String,
    /// The field (or key) of the ApplicationSet the template is in.
    pub pointer: String,
    /// The tag as written (`{{path.basename}}`), for messages.
    pub tag: String,
    /// What a missing parameter does there (`go` only; always `none` with fasttemplate):
    /// `none` (read plainly), `default` (through `default`, `coalesce`...: tolerated unless
    /// `missingkey=error`), `condition` (`if .x`: false unless `missingkey=error`), `checked`
    /// (only read under a condition that checks it: never read when missing).
    pub guard: &'static str,
    /// The indexes in `spec.generators` of the generators whose Applications this template
    /// renders (a generator's own template replaces the ApplicationSet's where it says
    /// something; a generator naming no kind renders none).
    pub generators: Vec<usize>,
}

/// A tag in the syntax of the other engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Foreign {
    pub pointer: String,
    pub tag: String,
    /// The syntax it is written in: `go` or `fasttemplate`.
    pub syntax: &'static str,
}

/// A template the engine refuses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TemplateError {
    pub pointer: String,
    /// The engine's message (`template: base:1: function "path" not defined`).
    pub message: String,
}

/// The facts of `set`.
pub fn of(set: &ApplicationSet) -> Facts {
    let engine = set.engine();
    let mut facts = Facts {
        engine: engine.name(),
        missing_key: match engine {
            Engine::Go { missing_key } => missing_key.name(),
            Engine::Fast => MissingKey::Default.name(),
        },
        go_template_options: set
            .go_template_options
            .iter()
            .enumerate()
            .map(|(i, o)| TemplateOption {
                pointer: format!("/spec/goTemplateOptions/{i}"),
                option: o.clone(),
                valid: valid_go_template_option(o),
            })
            .collect(),
        generators: Vec::new(),
        parameters_provided: set.generators.iter().map(|g| provided(g, engine)).collect(),
        parameters_used: Vec::new(),
        foreign_syntax: Vec::new(),
        template_errors: Vec::new(),
        unknown: set.notes.unknown.clone(),
        malformed: set.notes.malformed.clone(),
    };
    for g in &set.generators {
        list_generators(g, 0, &mut facts.generators);
    }
    let generating: Vec<usize> = set
        .generators
        .iter()
        .enumerate()
        .filter(|(_, g)| !g.blocks.is_empty())
        .map(|(i, _)| i)
        .collect();
    // The ApplicationSet's template, for the generators that do not replace the field.
    let mut strings = Vec::new();
    collect_strings(&set.template.raw, &mut Vec::new(), &mut strings);
    for (path, text) in strings {
        let pointer = pointer_of(&set.template.pointer, &path);
        let scope: Vec<usize> = generating
            .iter()
            .copied()
            .filter(|&i| !replaced(&set.generators[i], &path))
            .collect();
        analyse(&text, &pointer, engine, &scope, &mut facts);
    }
    // Each generator's own template, for its Applications.
    for &i in &generating {
        for block in &set.generators[i].blocks {
            let Some(t) = &block.template else { continue };
            let mut strings = Vec::new();
            collect_strings(&t.raw, &mut Vec::new(), &mut strings);
            for (path, text) in strings {
                analyse(
                    &text,
                    &pointer_of(&t.pointer, &path),
                    engine,
                    &[i],
                    &mut facts,
                );
            }
        }
    }
    if let Some(patch) = &set.template_patch {
        analyse(
            patch,
            "/spec/templatePatch",
            engine,
            &generating,
            &mut facts,
        );
    }
    facts
}

fn list_generators(g: &Generator, depth: usize, out: &mut Vec<GeneratorFacts>) {
    let (children, merge_keys) = g
        .blocks
        .iter()
        .find_map(|b| match &b.spec {
            GeneratorSpec::Combination {
                generators,
                merge_keys,
            } => Some((generators.len(), merge_keys.clone())),
            _ => None,
        })
        .unwrap_or_default();
    out.push(GeneratorFacts {
        pointer: g.pointer.clone(),
        kinds: g.blocks.iter().map(|b| b.kind.key()).collect(),
        depth,
        children,
        merge_keys,
    });
    for b in &g.blocks {
        for c in b.children() {
            list_generators(c, depth + 1, out);
        }
    }
}

/// Every string of `v` (map keys included), with its path of keys and indexes.
fn collect_strings(v: &Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match v {
        Value::String(s) if s.contains("{{") => out.push((path.clone(), s.clone())),
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                path.push(i.to_string());
                collect_strings(x, path, out);
                path.pop();
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                if k.contains("{{") {
                    out.push((path.clone(), k.clone()));
                }
                collect_strings(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn pointer_of(base: &str, path: &[String]) -> String {
    let mut p = base.to_string();
    for token in path {
        p.push('/');
        crate::pointers::push_escaped(&mut p, token);
    }
    p
}

/// Whether generator `g`'s own template says something at `path` (Argo CD lays the
/// ApplicationSet's template under it, filling only what it leaves empty).
fn replaced(g: &Generator, path: &[String]) -> bool {
    g.blocks.iter().any(|b| {
        let Some(t) = &b.template else {
            return false;
        };
        let mut v = &t.raw;
        for token in path {
            match v {
                Value::Object(m) => match m.get(token) {
                    Some(x) => v = x,
                    None => return false,
                },
                Value::Array(a) => match token.parse::<usize>().ok().and_then(|i| a.get(i)) {
                    Some(x) => v = x,
                    None => return !a.is_empty(),
                },
                other => return !is_empty(other),
            }
        }
        !is_empty(v)
    })
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
    }
}

/// The syntax a tag is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Go template syntax: `.field`, `$`, pipes, trim markers, keywords, function calls.
    Go,
    /// A fasttemplate parameter name: `path.basename`, `name`, `values.env`, `path[0]`.
    Fast,
    /// Either (a bare word that is also a Go function), or neither.
    Other,
}

const KEYWORDS: &[&str] = &[
    "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue",
];

/// The syntax of the inside of one `{{ ... }}` tag.
pub fn syntax(inner: &str) -> Syntax {
    let trimmed = inner.trim();
    if trimmed.is_empty() {
        return Syntax::Other;
    }
    let b = inner.as_bytes();
    let left_trim = b.len() >= 2 && b[0] == b'-' && matches!(b[1], b' ' | b'\t' | b'\n' | b'\r');
    let right_trim = inner.len() >= 2
        && inner.ends_with('-')
        && inner[..inner.len() - 1].ends_with([' ', '\t', '\n', '\r']);
    let first = trimmed.split_whitespace().next().unwrap_or_default();
    let words = trimmed.split_whitespace().count();
    if left_trim
        || right_trim
        || trimmed.starts_with(['.', '$', '(', '"', '`'])
        || trimmed.starts_with("/*")
        || trimmed.contains('|')
        || KEYWORDS.contains(&first)
        || (words > 1 && gotemplate::is_function(first))
    {
        return Syntax::Go;
    }
    let name_like = words == 1
        && trimmed.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && !trimmed.contains(['{', '}', '(', ')', '|', '"', '\'', '$', '`']);
    if name_like {
        let head = trimmed.split(['.', '[']).next().unwrap_or_default();
        let plain_word = head == trimmed;
        if !plain_word
            || !(gotemplate::is_function(trimmed)
                || matches!(trimmed, "true" | "false" | "nil")
                || KEYWORDS.contains(&trimmed))
        {
            return Syntax::Fast;
        }
    }
    Syntax::Other
}

/// The `{{ ... }}` tags of `text` as fasttemplate finds them: `(tag, inside)`.
fn tags(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        out.push((&rest[start..start + 2 + end + 2], &after[..end]));
        rest = &after[end + 2..];
    }
    out
}

/// fasttemplate's error for `text`, as Argo CD runs it: only a text with `{{` then `}}` on one
/// line is a template at all, and then every `{{` needs its `}}`.
pub fn fasttemplate_error(text: &str) -> Option<String> {
    let templated = text.lines().any(|l| {
        l.find("{{")
            .is_some_and(|i| l.get(i + 2..).is_some_and(|r| r.contains("}}")))
    });
    if !templated {
        return None;
    }
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Some(format!(
                "invalid template: Cannot find end tag=\"}}}}\" in the template={text:?} starting from {after:?}"
            ));
        };
        rest = &after[end + 2..];
    }
    None
}

fn analyse(text: &str, pointer: &str, engine: Engine, scope: &[usize], facts: &mut Facts) {
    match engine {
        Engine::Fast => {
            if let Some(message) = fasttemplate_error(text) {
                facts.template_errors.push(TemplateError {
                    pointer: pointer.to_string(),
                    message,
                });
            }
            for (tag, inner) in tags(text) {
                match syntax(inner) {
                    Syntax::Go => facts.foreign_syntax.push(Foreign {
                        pointer: pointer.to_string(),
                        tag: tag.to_string(),
                        syntax: "go",
                    }),
                    Syntax::Fast => facts.parameters_used.push(Use {
                        name: inner.trim().to_string(),
                        pointer: pointer.to_string(),
                        tag: tag.to_string(),
                        guard: gotemplate::Guard::None.name(),
                        generators: scope.to_vec(),
                    }),
                    Syntax::Other => {}
                }
            }
        }
        Engine::Go { .. } => {
            for (tag, inner) in tags(text) {
                if syntax(inner) == Syntax::Fast {
                    facts.foreign_syntax.push(Foreign {
                        pointer: pointer.to_string(),
                        tag: tag.to_string(),
                        syntax: "fasttemplate",
                    });
                }
            }
            match gotemplate::parse(text) {
                Err(message) => facts.template_errors.push(TemplateError {
                    pointer: pointer.to_string(),
                    message,
                }),
                Ok(t) => {
                    for r in t.references() {
                        let tag = tags(text)
                            .into_iter()
                            .find(|(_, inner)| mentions(inner, &r.path))
                            .map_or_else(
                                || format!("{{{{ .{} }}}}", r.path),
                                |(t, _)| t.to_string(),
                            );
                        facts.parameters_used.push(Use {
                            name: r.path,
                            pointer: pointer.to_string(),
                            tag,
                            guard: r.guard.name(),
                            generators: scope.to_vec(),
                        });
                    }
                }
            }
        }
    }
}

/// Whether the inside of a tag reads `path` (`.a.b`, or `index .a "b"`).
fn mentions(inner: &str, path: &str) -> bool {
    let dotted = format!(".{path}");
    if let Some(i) = inner.find(&dotted) {
        let end = i + dotted.len();
        return !inner[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
    }
    path.split('.')
        .next()
        .is_some_and(|head| inner.contains(&format!(".{head}")))
}

/// What generator `g` gives its template.
fn provided(g: &Generator, engine: Engine) -> Provided {
    let mut out = Provided {
        pointer: g.pointer.clone(),
        kinds: g.blocks.iter().map(|b| b.kind.key()).collect(),
        names: Vec::new(),
        prefixes: Vec::new(),
        open: false,
    };
    add_provided(g, engine, &mut out);
    if matches!(engine, Engine::Go { .. }) {
        let parents: Vec<String> = out
            .names
            .iter()
            .flat_map(|n| {
                n.match_indices('.')
                    .map(|(i, _)| n[..i].to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        out.names.extend(parents);
        let prefix_parents: Vec<String> = out
            .prefixes
            .iter()
            .flat_map(|p| {
                let p = p.trim_end_matches('.');
                p.match_indices('.')
                    .map(|(i, _)| p[..i].to_string())
                    .chain(std::iter::once(p.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        out.names.extend(prefix_parents);
    }
    out.names.sort();
    out.names.dedup();
    out.prefixes.sort();
    out.prefixes.dedup();
    out
}

fn add_provided(g: &Generator, engine: Engine, out: &mut Provided) {
    let go = matches!(engine, Engine::Go { .. });
    let names = |list: &[&str], out: &mut Provided| {
        out.names.extend(list.iter().map(|s| s.to_string()));
    };
    for block in &g.blocks {
        match &block.spec {
            GeneratorSpec::List {
                elements,
                elements_yaml,
            } => {
                for e in elements {
                    let Some(m) = e.as_object() else { continue };
                    if go {
                        go_paths("", e, out);
                    } else {
                        for (k, v) in m {
                            match v.as_object() {
                                Some(values) if k == "values" => {
                                    out.names
                                        .extend(values.keys().map(|vk| format!("values.{vk}")));
                                }
                                _ => out.names.push(k.clone()),
                            }
                        }
                    }
                }
                if elements_yaml
                    .as_deref()
                    .is_some_and(|y| !y.trim().is_empty())
                {
                    out.open = true;
                }
            }
            GeneratorSpec::Clusters { flat_list, .. } => {
                if *flat_list {
                    names(&["clusters"], out);
                    if go {
                        out.prefixes.push("clusters.".into());
                    }
                } else {
                    names(&["name", "nameNormalized", "server", "project"], out);
                    out.prefixes.push("metadata.labels.".into());
                    out.prefixes.push("metadata.annotations.".into());
                }
            }
            GeneratorSpec::Git {
                files,
                path_param_prefix,
                ..
            } => {
                let with_files = !files.is_empty();
                if go {
                    let root = if path_param_prefix.is_empty() {
                        "path".to_string()
                    } else {
                        format!("{path_param_prefix}.path")
                    };
                    for leaf in ["path", "basename", "basenameNormalized", "segments"] {
                        out.names.push(format!("{root}.{leaf}"));
                    }
                    out.prefixes.push(format!("{root}.segments."));
                    if with_files {
                        out.names.push(format!("{root}.filename"));
                        out.names.push(format!("{root}.filenameNormalized"));
                    }
                } else {
                    let root = if path_param_prefix.is_empty() {
                        "path".to_string()
                    } else {
                        format!("{path_param_prefix}.path")
                    };
                    out.names.push(root.clone());
                    out.names.push(format!("{root}.basename"));
                    out.names.push(format!("{root}.basenameNormalized"));
                    out.prefixes.push(format!("{root}["));
                    if with_files {
                        out.names.push(format!("{root}.filename"));
                        out.names.push(format!("{root}.filenameNormalized"));
                    }
                }
                // The files' own keys are parameters too: not known here.
                out.open |= with_files;
            }
            GeneratorSpec::Combination { generators, .. } => {
                for child in generators {
                    add_provided(child, engine, out);
                }
            }
            GeneratorSpec::External => match block.kind {
                GeneratorKind::ScmProvider => names(
                    &[
                        "organization",
                        "repository",
                        "repository_id",
                        "url",
                        "branch",
                        "sha",
                        "short_sha",
                        "short_sha_7",
                        "labels",
                        "branchNormalized",
                    ],
                    out,
                ),
                GeneratorKind::PullRequest => {
                    names(
                        &[
                            "number",
                            "title",
                            "branch",
                            "branch_slug",
                            "target_branch",
                            "target_branch_slug",
                            "head_sha",
                            "head_short_sha",
                            "head_short_sha_7",
                            "author",
                        ],
                        out,
                    );
                    if go {
                        names(&["labels"], out);
                        out.prefixes.push("labels.".into());
                    }
                }
                GeneratorKind::ClusterDecisionResource => {
                    names(&["name", "server"], out);
                    out.open = true;
                }
                _ => {
                    if go {
                        names(&["generator.input.parameters"], out);
                        out.prefixes.push("generator.input.parameters.".into());
                    }
                    out.open = true;
                }
            },
        }
        for k in block.values.keys() {
            out.names.push(format!("values.{k}"));
        }
    }
}

/// Every path of a Go-template parameter set: `a`, `a.b`; a list also gives `a.<anything>`
/// (`index .a 0`).
fn go_paths(prefix: &str, v: &Value, out: &mut Provided) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.names.push(path.clone());
                go_paths(&path, x, out);
            }
        }
        Value::Array(_) if !prefix.is_empty() => out.prefixes.push(format!("{prefix}.")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts(spec: Value) -> Facts {
        of(&ApplicationSet::from_value(&json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
            "metadata": {"name": "s", "namespace": "argocd"},
            "spec": spec,
        })))
    }

    #[test]
    fn tags_are_classified_by_syntax() {
        assert_eq!(syntax(" .path.basename "), Syntax::Go);
        assert_eq!(syntax(".name"), Syntax::Go);
        assert_eq!(syntax("- .name "), Syntax::Go);
        assert_eq!(syntax(" .name -"), Syntax::Go);
        assert_eq!(syntax(" if .x "), Syntax::Go);
        assert_eq!(syntax(" lower .x "), Syntax::Go);
        assert_eq!(syntax(" name | upper "), Syntax::Go);
        assert_eq!(syntax("path.basename"), Syntax::Fast);
        assert_eq!(syntax(" name "), Syntax::Fast);
        assert_eq!(syntax("values.tier"), Syntax::Fast);
        assert_eq!(syntax("path[1]"), Syntax::Fast);
        assert_eq!(
            syntax("metadata.labels.topology.kubernetes.io/region"),
            Syntax::Fast
        );
        assert_eq!(syntax(" now "), Syntax::Other);
        assert_eq!(syntax(""), Syntax::Other);
    }

    #[test]
    fn go_syntax_without_go_template_is_foreign_and_reads_nothing() {
        let f = facts(json!({
            "generators": [{"list": {"elements": [{"name": "a"}]}}],
            "template": {"metadata": {"name": "{{ .name }}-{{name}}"}, "spec": {}},
        }));
        assert_eq!(f.engine, "fasttemplate");
        assert_eq!(
            f.foreign_syntax,
            [Foreign {
                pointer: "/spec/template/metadata/name".into(),
                tag: "{{ .name }}".into(),
                syntax: "go"
            }]
        );
        assert_eq!(f.parameters_used.len(), 1);
        assert_eq!(f.parameters_used[0].name, "name");
        assert_eq!(f.parameters_used[0].generators, [0]);
        assert_eq!(f.parameters_provided[0].names, ["name"]);
        assert!(f.template_errors.is_empty());
    }

    #[test]
    fn fasttemplate_syntax_with_go_template_does_not_parse() {
        let f = facts(json!({
            "goTemplate": true,
            "goTemplateOptions": ["missingkey=error", "missingkey=strict"],
            "generators": [{"git": {"repoURL": "r", "revision": "HEAD", "directories": [{"path": "apps/*"}]}}],
            "template": {"metadata": {"name": "{{path.basename}}"},
                         "spec": {"source": {"path": "{{ .path.path }}", "targetRevision": "{{ .revision }}"}}},
        }));
        assert_eq!(f.engine, "go");
        assert_eq!(f.missing_key, "error");
        assert!(f.go_template_options[0].valid);
        assert!(!f.go_template_options[1].valid);
        assert_eq!(f.foreign_syntax[0].syntax, "fasttemplate");
        assert_eq!(f.foreign_syntax[0].pointer, "/spec/template/metadata/name");
        assert_eq!(
            f.template_errors,
            [TemplateError {
                pointer: "/spec/template/metadata/name".into(),
                message: r#"template: base:1: function "path" not defined"#.into(),
            }]
        );
        let used: Vec<&str> = f.parameters_used.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(used, ["path.path", "revision"]);
        assert_eq!(f.parameters_used[1].tag, "{{ .revision }}");
        let p = &f.parameters_provided[0];
        assert!(p.names.contains(&"path.path".to_string()));
        assert!(p.names.contains(&"path".to_string()));
        assert!(!p.names.contains(&"revision".to_string()));
        assert!(!p.open);
    }

    #[test]
    fn generators_own_templates_replace_the_base_where_they_say_something() {
        let f = facts(json!({
            "generators": [
                {"list": {"elements": [{"cluster": "a"}], "template": {"metadata": {"name": "{{cluster}}"}, "spec": {}}}},
                {"clusters": {}},
                {},
            ],
            "template": {"metadata": {"name": "{{name}}"}, "spec": {"destination": {"server": "{{server}}"}}},
        }));
        let by_name = |n: &str| f.parameters_used.iter().find(|u| u.name == n).unwrap();
        // The base name is rendered for the clusters generator only; the list generator's own
        // template names its Applications; the empty generator renders nothing.
        assert_eq!(by_name("name").generators, [1]);
        assert_eq!(by_name("server").generators, [0, 1]);
        assert_eq!(by_name("cluster").generators, [0]);
        assert_eq!(
            by_name("cluster").pointer,
            "/spec/generators/0/list/template/metadata/name"
        );
        assert_eq!(f.generators.len(), 3);
        assert!(f.generators[2].kinds.is_empty());
        assert!(
            f.parameters_provided[1]
                .prefixes
                .contains(&"metadata.labels.".to_string())
        );
    }

    #[test]
    fn nested_generators_unknown_fields_and_the_template_patch() {
        let f = facts(json!({
            "goTemplate": true,
            "goTmplate": true,
            "generators": [{"matrix": {"generators": [
                {"git": {"repoURL": "r", "revision": "HEAD", "files": [{"path": "*.json"}], "pathParamPrefix": "cfg"}},
                {"list": {"elements": [{"env": {"name": "prod"}}]}, "selectr": {}},
            ]}}],
            "template": {"metadata": {"name": "{{ .env.name }}"}, "spec": {}},
            "templatePatch": "spec:\n  project: {{ .project\n",
        }));
        assert_eq!(
            f.generators.iter().map(|g| g.depth).collect::<Vec<_>>(),
            [0, 1, 1]
        );
        assert_eq!(f.generators[0].children, 2);
        assert_eq!(
            f.unknown,
            [
                "/spec/generators/0/matrix/generators/1/selectr",
                "/spec/goTmplate"
            ]
        );
        let p = &f.parameters_provided[0];
        assert!(p.open, "git files give their own keys");
        assert!(p.names.contains(&"cfg.path.filename".to_string()));
        assert!(p.names.contains(&"env.name".to_string()));
        assert_eq!(f.template_errors[0].pointer, "/spec/templatePatch");
        assert_eq!(
            f.template_errors[0].message,
            "template: base:3: unclosed action started at base:2"
        );
    }

    #[test]
    fn an_unclosed_fasttemplate_tag_fails_only_in_a_template() {
        assert_eq!(fasttemplate_error("open {{name"), None);
        assert!(
            fasttemplate_error("{{a}} {{b")
                .unwrap()
                .contains("Cannot find end tag")
        );
        assert_eq!(fasttemplate_error("{{a\n}}"), None);
    }
}
