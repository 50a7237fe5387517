//! The generators that combine other generators, as Argo CD 3.6.1 evaluates them
//! (`applicationset/generators/matrix.go`, `merge.go`):
//!
//! - `matrix`: exactly two generators; the second is evaluated once per parameter set of the
//!   first, with that set's parameters rendered into its spec first (so a git generator can read
//!   `{{path}}` found by the first), and every pair becomes one set. With the default templating
//!   the pair's flat maps are joined and a key both give with different values is an error; with
//!   `goTemplate: true` they are merged deeply and the first generator's values win.
//! - `merge`: two or more generators and `mergeKeys`; the first generator's sets are the base,
//!   and a later generator's set with the same merge-key values is laid over the base set it
//!   matches (flat overwrite, or a deep merge with `goTemplate: true`). Sets of a later
//!   generator that match no base set are dropped; a generator whose sets share merge-key values
//!   is an error. syncguard keeps the base's order (Argo CD's is a Go map's and varies).
//!
//! Argo CD nests these one level: a matrix or merge may hold one matrix or merge, whose own
//! generators are plain ones.

use serde_json::{Map, Value};
use syncguard_argocd::config::Notes;
use syncguard_argocd::config::appset::{Generator, GeneratorBlock, GeneratorSpec};

use super::JUDGED;
use super::clusters::Known;
use super::generators::{leaf_text, params_at};
use super::template::{Engine, RenderError, render_if_known, render_value};

/// The parameter sets of a `matrix` generator block; `depth` is the nesting level of its
/// child generators.
pub fn matrix(
    block: &GeneratorBlock,
    engine: Engine,
    known: &Known<'_>,
    depth: usize,
) -> Result<Vec<Value>, String> {
    let children = block.children();
    let [first, second] = children else {
        return Err(format!(
            "a matrix generator combines exactly two generators ({} given) {JUDGED}",
            children.len()
        ));
    };
    let firsts =
        params_at(first, engine, known, depth).map_err(|e| format!("matrix generator 1: {e}"))?;
    let mut out = Vec::new();
    for a in &firsts {
        let interpolated = interpolate(&second.raw, a, engine)
            .map_err(|e| format!("matrix generator 2, with the parameters of generator 1: {e}"))?;
        let interpolated = Generator::read(&interpolated, &second.pointer, &mut Notes::default());
        let seconds = params_at(&interpolated, engine, known, depth)
            .map_err(|e| format!("matrix generator 2: {e}"))?;
        for b in seconds {
            out.push(match engine {
                Engine::Fast => join_flat(a, &b)?,
                Engine::Go { .. } => {
                    let mut pair = Value::Object(Map::new());
                    merge_deep(&mut pair, &b);
                    merge_deep(&mut pair, a);
                    pair
                }
            });
        }
    }
    Ok(out)
}

/// The parameter sets of a `merge` generator block.
pub fn merge(
    block: &GeneratorBlock,
    engine: Engine,
    known: &Known<'_>,
    depth: usize,
) -> Result<Vec<Value>, String> {
    let children = block.children();
    if children.len() < 2 {
        return Err(format!(
            "a merge generator needs at least two generators ({} given) {JUDGED}",
            children.len()
        ));
    }
    let mut keys: Vec<String> = match &block.spec {
        GeneratorSpec::Combination { merge_keys, .. } => merge_keys.clone(),
        _ => Vec::new(),
    };
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return Err(format!("a merge generator needs mergeKeys {JUDGED}"));
    }
    let mut base: Vec<(String, Value)> = Vec::new();
    for (n, child) in children.iter().enumerate() {
        let sets = params_at(child, engine, known, depth)
            .map_err(|e| format!("merge generator {}: {e}", n + 1))?;
        let keyed =
            by_merge_key(&keys, sets).map_err(|e| format!("merge generator {}: {e}", n + 1))?;
        if n == 0 {
            base = keyed;
            continue;
        }
        for (key, over) in keyed {
            if let Some((_, set)) = base.iter_mut().find(|(k, _)| *k == key) {
                match engine {
                    Engine::Fast => {
                        if let (Some(set), Some(over)) = (set.as_object_mut(), over.as_object()) {
                            set.extend(over.clone());
                        }
                    }
                    Engine::Go { .. } => merge_deep(set, &over),
                }
            }
        }
    }
    Ok(base.into_iter().map(|(_, set)| set).collect())
}

/// Each set with its merge key: the JSON of its merge-key values (absent ones `null`), as
/// Argo CD compares them; two sets with one key are an error.
fn by_merge_key(keys: &[String], sets: Vec<Value>) -> Result<Vec<(String, Value)>, String> {
    let mut out: Vec<(String, Value)> = Vec::with_capacity(sets.len());
    for set in sets {
        let key = keys
            .iter()
            .map(|k| {
                let v = set.get(k).unwrap_or(&Value::Null);
                format!("{}:{}", Value::String(k.clone()), canonical(v))
            })
            .collect::<Vec<_>>()
            .join(",");
        let key = format!("{{{key}}}");
        if out.iter().any(|(k, _)| *k == key) {
            return Err(format!(
                "the parameter sets are not unique by the merge keys: {key} is given twice"
            ));
        }
        out.push((key, set));
    }
    Ok(out)
}

/// JSON with object keys sorted (Go's encoding of a map), whatever order `v` keeps.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The second generator of a matrix with the first's parameters rendered into its spec. With
/// Go templates the `values` of a git or clusters generator keep every entry that names a key
/// the first generator does not give: the generator fills those from its own parameters.
fn interpolate(generator: &Value, params: &Value, engine: Engine) -> Result<Value, RenderError> {
    if params.as_object().is_none_or(Map::is_empty) {
        return Ok(generator.clone());
    }
    let Some(fields) = generator.as_object() else {
        return Ok(generator.clone());
    };
    let mut out = Map::new();
    for (kind, spec) in fields {
        let keeps_values = matches!(engine, Engine::Go { .. })
            && (kind == "git" || kind == "clusters")
            && spec.get("values").is_some_and(Value::is_object);
        let rendered = if keeps_values {
            let mut without = spec.clone();
            let values = without
                .as_object_mut()
                .and_then(|m| m.remove("values"))
                .unwrap_or(Value::Null);
            let mut rendered = render_value(&without, params, engine)?;
            let mut resolved = Map::new();
            for (k, v) in values.as_object().into_iter().flatten() {
                let text = v.as_str().unwrap_or_default();
                resolved.insert(
                    k.clone(),
                    Value::String(
                        render_if_known(text, params)
                            .map_err(|e| RenderError::Failed(format!("{kind}.values.{k}: {e}")))?,
                    ),
                );
            }
            if let Some(m) = rendered.as_object_mut() {
                m.insert("values".into(), Value::Object(resolved));
            }
            rendered
        } else {
            render_value(spec, params, engine)?
        };
        out.insert(kind.clone(), rendered);
    }
    Ok(Value::Object(out))
}

/// Two flat parameter maps joined (fasttemplate): a key both give must have one value.
fn join_flat(a: &Value, b: &Value) -> Result<Value, String> {
    let mut out = Map::new();
    for (k, v) in a.as_object().into_iter().flatten() {
        out.insert(k.clone(), Value::String(leaf_text(v)));
    }
    for (k, v) in b.as_object().into_iter().flatten() {
        let text = leaf_text(v);
        if let Some(current) = out.get(k).and_then(Value::as_str)
            && current != text
        {
            return Err(format!(
                "found duplicate key {k} with different value, a: {current} ,b: {text}"
            ));
        }
        out.insert(k.clone(), Value::String(text));
    }
    Ok(Value::Object(out))
}

/// `src` merged into `dst`, `src` winning (mergo.Merge with WithOverride): maps are merged key by
/// key, a null leaves `dst` as it is, a map does not replace a non-empty value of another kind,
/// anything else replaces.
fn merge_deep(dst: &mut Value, src: &Value) {
    let (Some(dst), Some(src)) = (dst.as_object_mut(), src.as_object()) else {
        return;
    };
    for (k, s) in src {
        match (dst.get_mut(k), s) {
            (_, Value::Null) => {}
            (Some(d @ Value::Object(_)), Value::Object(_)) => merge_deep(d, s),
            (Some(d), Value::Object(_)) if !is_empty(d) => {}
            _ => {
                dst.insert(k.clone(), s.clone());
            }
        }
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::generators::params;
    use super::*;
    use crate::render::Repos;
    use serde_json::json;

    const FAST: Engine = Engine::Fast;
    const GO: Engine = Engine::Go {
        missing_key: syncguard_argocd::config::appset::MissingKey::Default,
    };

    fn sets(generator: Value, engine: Engine) -> Result<Vec<Value>, String> {
        let generator = Generator::read(&generator, "", &mut Notes::default());
        params(&generator, engine, &Known::repos(&Repos::default()))
    }

    fn field(sets: &[Value], pointer: &str) -> Vec<String> {
        sets.iter()
            .map(|s| leaf_text(s.pointer(pointer).unwrap_or(&Value::Null)))
            .collect()
    }

    fn list(elements: Value) -> Value {
        json!({"list": {"elements": elements}})
    }

    #[test]
    fn a_matrix_pairs_every_set_of_the_first_with_every_set_of_the_second() {
        let got = sets(
            json!({"matrix": {"generators": [
                list(json!([{"cluster": "prod", "url": "https://prod"}, {"cluster": "dev", "url": "https://dev"}])),
                list(json!([{"app": "web"}, {"app": "api"}])),
            ]}}),
            FAST,
        )
        .unwrap();
        assert_eq!(field(&got, "/cluster"), ["prod", "prod", "dev", "dev"]);
        assert_eq!(field(&got, "/app"), ["web", "api", "web", "api"]);
        assert_eq!(field(&got, "/url")[2], "https://dev");
    }

    #[test]
    fn the_second_generator_sees_the_first_ones_parameters() {
        let got = sets(
            json!({"matrix": {"generators": [
                list(json!([{"cluster": "prod"}, {"cluster": "dev"}])),
                list(json!([{"name": "{{cluster}}-web", "keep": "{{unknown}}"}])),
            ]}}),
            FAST,
        )
        .unwrap();
        assert_eq!(field(&got, "/name"), ["prod-web", "dev-web"]);
        // fasttemplate leaves a tag it has no parameter for as written.
        assert_eq!(field(&got, "/keep"), ["{{unknown}}", "{{unknown}}"]);
    }

    #[test]
    fn flat_sets_must_agree_on_shared_keys() {
        let pair = |second: Value| {
            sets(
                json!({"matrix": {"generators": [list(json!([{"name": "a"}])), list(second)]}}),
                FAST,
            )
        };
        assert_eq!(pair(json!([{"name": "a", "x": "1"}])).unwrap().len(), 1);
        let err = pair(json!([{"name": "b"}])).unwrap_err();
        assert!(
            err.contains("duplicate key name with different value, a: a ,b: b"),
            "{err}"
        );
    }

    #[test]
    fn go_template_sets_merge_deeply_and_the_first_wins() {
        let got = sets(
            json!({"matrix": {"generators": [
                list(json!([{"path": {"basename": "web"}, "x": "1"}])),
                list(json!([{"path": {"basename": "other", "extra": "e"}, "x": "2", "y": "3"}])),
            ]}}),
            GO,
        )
        .unwrap();
        assert_eq!(
            got,
            [json!({"path": {"basename": "web", "extra": "e"}, "x": "1", "y": "3"})]
        );
    }

    #[test]
    fn nesting_is_one_level_deep_and_a_matrix_has_two_generators() {
        let leaf = || list(json!([{"a": "1"}]));
        let nested = json!({"matrix": {"generators": [
            leaf(),
            {"merge": {"mergeKeys": ["a"], "generators": [leaf(), leaf()]}},
        ]}});
        assert_eq!(sets(nested, FAST).unwrap().len(), 1);
        let too_deep = json!({"matrix": {"generators": [
            leaf(),
            {"matrix": {"generators": [leaf(), {"matrix": {"generators": [leaf(), leaf()]}}]}},
        ]}});
        let err = sets(too_deep, FAST).unwrap_err();
        assert!(err.contains("one level deep"), "{err}");
        // Each generator a matrix combines names exactly one kind.
        let empty = json!({"matrix": {"generators": [leaf(), {}]}});
        assert!(sets(empty, FAST).unwrap_err().contains("names no kind"));
        let two =
            json!({"matrix": {"generators": [leaf(), {"list": {"elements": []}, "clusters": {}}]}});
        assert!(sets(two, FAST).unwrap_err().contains("names 2 kinds"));
        let three = json!({"matrix": {"generators": [leaf(), leaf(), leaf()]}});
        assert!(
            sets(three, FAST)
                .unwrap_err()
                .contains("exactly two generators (3 given)")
        );
    }

    #[test]
    fn merge_lays_matching_sets_over_the_base() {
        let got = sets(
            json!({"merge": {"mergeKeys": ["server"], "generators": [
                list(json!([{"server": "s1", "name": "one", "replicas": "1"}, {"server": "s2", "name": "two"}])),
                list(json!([{"server": "s1", "replicas": "3"}, {"server": "s9", "name": "nine"}])),
            ]}}),
            FAST,
        )
        .unwrap();
        assert_eq!(field(&got, "/name"), ["one", "two"]);
        assert_eq!(field(&got, "/replicas"), ["3", "<nil>"]);
    }

    #[test]
    fn go_template_merge_is_deep_and_bad_merges_are_errors() {
        let got = sets(
            json!({"merge": {"mergeKeys": ["name"], "generators": [
                list(json!([{"name": "a", "values": {"x": "1", "y": "2"}}])),
                list(json!([{"name": "a", "values": {"y": "9"}}])),
            ]}}),
            GO,
        )
        .unwrap();
        assert_eq!(got, [json!({"name": "a", "values": {"x": "1", "y": "9"}})]);
        let dup = json!({"merge": {"mergeKeys": ["name"], "generators": [
            list(json!([{"name": "a"}, {"name": "a"}])), list(json!([])),
        ]}});
        let err = sets(dup, FAST).unwrap_err();
        assert!(
            err.contains("merge generator 1") && err.contains("given twice"),
            "{err}"
        );
        let no_keys = json!({"merge": {"generators": [list(json!([])), list(json!([]))]}});
        assert!(sets(no_keys, FAST).unwrap_err().contains("needs mergeKeys"));
    }

    #[test]
    fn selectors_filter_a_child_and_the_combined_sets() {
        let got = sets(
            json!({
                "matrix": {"generators": [
                    {"list": {"elements": [{"env": "prod"}, {"env": "dev"}, {"env": "qa"}]},
                     "selector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["qa"]}]}},
                    list(json!([{"app": "web"}, {"app": "api"}])),
                ]},
                "selector": {"matchLabels": {"app": "web"}}
            }),
            FAST,
        )
        .unwrap();
        assert_eq!(field(&got, "/env"), ["prod", "dev"]);
        assert_eq!(field(&got, "/app"), ["web", "web"]);
    }

    #[test]
    fn go_values_keep_what_the_first_generator_does_not_give() {
        let rendered = interpolate(
            &json!({"git": {"repoURL": "https://x/{{ .org }}.git", "values": {
                "org": "{{ .org }}", "dir": "{{ .path.basename }}"
            }}}),
            &json!({"org": "acme"}),
            GO,
        )
        .unwrap();
        assert_eq!(
            rendered,
            json!({"git": {"repoURL": "https://x/acme.git", "values": {
                "org": "acme", "dir": "{{ .path.basename }}"
            }}})
        );
    }
}
