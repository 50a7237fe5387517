//! The parameter sets of an ApplicationSet's generators, as Argo CD 3.6.1 makes them
//! (`applicationset/generators`): `list` (elements and elementsYaml), `git` (directories and
//! files, read from the local checkout of the generator's repository) and `clusters` (over the
//! cluster Secrets given, clusters.rs); `matrix` and `merge` combine them (nesting.rs) and a
//! generator's `selector` filters what it made (selector.rs).

use std::collections::BTreeMap;
use std::path::Path;

use globset::GlobBuilder;
use serde_json::{Map, Value};
use syncguard_argocd::config::appset::{
    Generator, GeneratorBlock, GeneratorKind, GeneratorSpec, PathPattern,
};

use super::clusters::{self, Known};
use super::sanitize_name;
use super::template::{Engine, render};
use super::{JUDGED, nesting, selector};
use crate::render::Repos;

/// One generator's parameter sets (each a JSON object), or why it cannot be evaluated here.
#[cfg(test)]
pub fn params(
    generator: &Generator,
    engine: Engine,
    known: &Known<'_>,
) -> Result<Vec<Value>, String> {
    params_at(generator, engine, known, 0)
}

/// The parameter sets of a generator `depth` matrix/merge generators deep: those of every kind
/// it names, in Argo CD's order, each filtered by its `selector`.
pub(super) fn params_at(
    generator: &Generator,
    engine: Engine,
    known: &Known<'_>,
    depth: usize,
) -> Result<Vec<Value>, String> {
    // A generator a matrix or merge combines must name exactly one kind
    // (`MatrixGenerator.getParams`, `MergeGenerator.getParams`).
    if depth > 0 {
        match generator.blocks.len() {
            1 => {}
            0 => {
                return Err(format!(
                    "a generator a matrix or merge combines names no kind: Argo CD fails \
                     (\"child generator generated no parameters\") {JUDGED}"
                ));
            }
            n => {
                return Err(format!(
                    "a generator a matrix or merge combines names {n} kinds: Argo CD fails \
                     (\"found more than one generator in matrix.Generators\") {JUDGED}"
                ));
            }
        }
    }
    let mut sets = Vec::new();
    for block in &generator.blocks {
        sets.extend(selected(
            generator,
            block_params(block, engine, known, depth)?,
        )?);
    }
    Ok(sets)
}

/// `sets` filtered by `generator`'s selector.
pub(super) fn selected(generator: &Generator, sets: Vec<Value>) -> Result<Vec<Value>, String> {
    selector::filter(generator.selector.as_ref(), sets)
}

/// The parameter sets of one kind of a generator `depth` matrix/merge generators deep.
pub(super) fn block_params(
    block: &GeneratorBlock,
    engine: Engine,
    known: &Known<'_>,
    depth: usize,
) -> Result<Vec<Value>, String> {
    let k = block.kind.key();
    match &block.spec {
        GeneratorSpec::List {
            elements,
            elements_yaml,
        } => list(elements, elements_yaml.as_deref(), engine),
        GeneratorSpec::Git { .. } => git(block, engine, known.repos),
        GeneratorSpec::Clusters { .. } => clusters::generate(block, engine, known.clusters),
        GeneratorSpec::Combination { .. } if depth >= 2 => Err(format!(
            "a {k} generator nested in a nested matrix or merge: Argo CD nests them one level deep"
        )),
        GeneratorSpec::Combination { .. } if block.kind == GeneratorKind::Matrix => {
            nesting::matrix(block, engine, known, depth + 1)
        }
        GeneratorSpec::Combination { .. } => nesting::merge(block, engine, known, depth + 1),
        GeneratorSpec::External => Err(format!(
            "the {k} generator needs data {OUTSIDE} (SCM providers, pull requests, \
             plugins, cluster decision resources, OCI registries) that syncguard does not read"
        )),
    }
}

/// Why a generator that names no kind generates nothing (`{}`, or only keys that are not
/// generators: the API server drops them).
pub(super) fn no_kind() -> String {
    format!(
        "names no generator kind: Argo CD generates nothing from it (\"contains unrecognized \
         generators\") {JUDGED}"
    )
}

fn list(
    elements: &[Value],
    elements_yaml: Option<&str>,
    engine: Engine,
) -> Result<Vec<Value>, String> {
    let mut elements: Vec<Value> = elements.to_vec();
    if let Some(yaml) = elements_yaml
        && !yaml.trim().is_empty()
    {
        let parsed = crate::manifest::parse_yaml_value(yaml)
            .map_err(|e| format!("list.elementsYaml: {e}"))?;
        elements.extend(parsed.as_array().cloned().unwrap_or_default());
    }
    elements
        .into_iter()
        .map(|element| {
            let Some(object) = element.as_object() else {
                return Err("a list element is not an object".to_string());
            };
            if engine != Engine::Fast {
                return Ok(element.clone());
            }
            // fasttemplate: every value must be a string; `values` becomes `values.<key>`.
            let mut out = Map::new();
            for (k, v) in object {
                if k == "values" {
                    let Some(values) = v.as_object() else {
                        return Err("error parsing values map".into());
                    };
                    for (vk, vv) in values {
                        let s = vv
                            .as_str()
                            .ok_or_else(|| format!("list element values.{vk} is not a string"))?;
                        out.insert(format!("values.{vk}"), Value::String(s.into()));
                    }
                } else {
                    let s = v
                        .as_str()
                        .ok_or_else(|| format!("list element {k} is not a string"))?;
                    out.insert(k.clone(), Value::String(s.into()));
                }
            }
            Ok(Value::Object(out))
        })
        .collect()
}

/// How a generator that needs data syncguard cannot read says so: such a generator is a
/// skipped source of its ApplicationSet, not an error.
pub const OUTSIDE: &str = "from outside the repository";

fn git(block: &GeneratorBlock, engine: Engine, repos: &Repos) -> Result<Vec<Value>, String> {
    let GeneratorSpec::Git {
        repo_url: url,
        directories,
        files,
        path_param_prefix: prefix,
        ..
    } = &block.spec
    else {
        return Ok(Vec::new());
    };
    let Some(root) = repos.dir_for(url) else {
        return Err(format!(
            "git generator: {url} is not a local repository (map it with --repo {url}=DIR)"
        ));
    };
    let patterns = |list: &[PathPattern]| -> Vec<(String, bool)> {
        list.iter().map(|p| (p.path.clone(), p.exclude)).collect()
    };
    let (dirs, files) = (patterns(directories), patterns(files));
    let mut sets = Vec::new();
    if !dirs.is_empty() {
        for dir in matching_directories(root, &dirs)? {
            sets.push(path_params(&dir, prefix, engine, None));
        }
    } else if !files.is_empty() {
        for (file, text) in matching_files(root, &files)? {
            let parsed = crate::manifest::parse_yaml_value(&text)
                .map_err(|e| format!("git generator file {file}: unable to parse file: {e}"))?;
            let objects = match parsed {
                Value::Array(items) => items,
                other => vec![other],
            };
            for object in objects {
                sets.push(path_params(&file, prefix, engine, Some(&object)));
            }
        }
    } else {
        return Err("git generator: neither directories nor files".into());
    }
    for set in &mut sets {
        add_values(set, &block.values, engine)?;
    }
    Ok(sets)
}

/// The parameters of one directory (`file` = None) or of one object of a file.
fn path_params(path: &str, prefix: &str, engine: Engine, file: Option<&Value>) -> Value {
    let dir = match file {
        Some(_) => Path::new(path)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| ".".into()),
        None => path.to_string(),
    };
    let basename = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let filename = basename(path);
    let mut out = Map::new();
    if engine == Engine::Fast {
        if let Some(object) = file {
            flatten("", object, &mut out);
        }
        let name = if prefix.is_empty() {
            "path".to_string()
        } else {
            format!("{prefix}.path")
        };
        out.insert(name.clone(), Value::String(dir.clone()));
        out.insert(format!("{name}.basename"), Value::String(basename(&dir)));
        out.insert(
            format!("{name}.basenameNormalized"),
            Value::String(sanitize_name(&basename(&dir))),
        );
        if file.is_some() {
            out.insert(format!("{name}.filename"), Value::String(filename.clone()));
            out.insert(
                format!("{name}.filenameNormalized"),
                Value::String(sanitize_name(&filename)),
            );
        }
        for (i, segment) in dir.split('/').enumerate() {
            if !segment.is_empty() {
                out.insert(format!("{name}[{i}]"), Value::String(segment.into()));
            }
        }
    } else {
        if let Some(Value::Object(object)) = file {
            out.extend(object.clone());
        }
        let mut p = Map::new();
        p.insert("path".into(), Value::String(dir.clone()));
        p.insert("basename".into(), Value::String(basename(&dir)));
        p.insert(
            "basenameNormalized".into(),
            Value::String(sanitize_name(&basename(&dir))),
        );
        if file.is_some() {
            p.insert("filename".into(), Value::String(filename.clone()));
            p.insert(
                "filenameNormalized".into(),
                Value::String(sanitize_name(&filename)),
            );
        }
        p.insert(
            "segments".into(),
            Value::Array(dir.split('/').map(|s| Value::String(s.into())).collect()),
        );
        if prefix.is_empty() {
            out.insert("path".into(), Value::Object(p));
        } else {
            let mut wrapper = Map::new();
            wrapper.insert("path".into(), Value::Object(p));
            out.insert(prefix.into(), Value::Object(wrapper));
        }
    }
    Value::Object(out)
}

/// Flattens an object into `a.b.c` keys with Go's `%v` of each leaf (fasttemplate parameters).
pub(super) fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                let key = if prefix.is_empty() {
                    i.to_string()
                } else {
                    format!("{prefix}.{i}")
                };
                flatten(&key, x, out);
            }
        }
        leaf => {
            out.insert(prefix.into(), Value::String(leaf_text(leaf)));
        }
    }
}

/// A parameter as Go's `%v` prints it.
pub(super) fn leaf_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

/// The generator's `values`, rendered with the set's own parameters.
pub(super) fn add_values(
    set: &mut Value,
    values: &BTreeMap<String, String>,
    engine: Engine,
) -> Result<(), String> {
    let mut rendered = Map::new();
    for (k, v) in values {
        rendered.insert(k.clone(), Value::String(render(v, set, engine)?));
    }
    let Some(map) = set.as_object_mut() else {
        return Ok(());
    };
    if engine == Engine::Fast {
        for (k, v) in rendered {
            map.insert(format!("values.{k}"), v);
        }
    } else if !rendered.is_empty() {
        map.insert("values".into(), Value::Object(rendered));
    }
    Ok(())
}

/// The repository's directories (relative, lexical walk order, hidden ones skipped) that an
/// include pattern matches and no exclude pattern does (Go's `path.Match`: `*` stays within a
/// directory).
fn matching_directories(root: &Path, patterns: &[(String, bool)]) -> Result<Vec<String>, String> {
    let compiled: Vec<(globset::GlobMatcher, bool)> = patterns
        .iter()
        .filter_map(|(p, exclude)| {
            GlobBuilder::new(p)
                .literal_separator(true)
                .build()
                .ok()
                .map(|g| (g.compile_matcher(), *exclude))
        })
        .collect();
    let mut all = Vec::new();
    walk_dirs(root, root, &mut all);
    Ok(all
        .into_iter()
        .filter(|d| {
            let include = compiled.iter().any(|(g, ex)| !ex && g.is_match(d));
            let exclude = compiled.iter().any(|(g, ex)| *ex && g.is_match(d));
            include && !exclude
        })
        .collect())
}

fn walk_dirs(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut dirs: Vec<_> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        if let Ok(rel) = d.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
        walk_dirs(root, &d, out);
    }
}

/// The tracked files (`git ls-files`, whose pathspec `*` also crosses `/`, as Argo CD's default
/// file globbing) an include pattern matches and no exclude pattern does, sorted, with their
/// text.
fn matching_files(
    root: &Path,
    patterns: &[(String, bool)],
) -> Result<Vec<(String, String)>, String> {
    let ls = |pattern: &str| -> Result<Vec<String>, String> {
        crate::git::git(root, &["ls-files", "--full-name", "-z", "--", pattern])
            .map(|out| {
                out.split('\0')
                    .filter(|f| !f.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .map_err(|e| format!("git generator: git ls-files {pattern}: {e}"))
    };
    let mut found: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for (p, exclude) in patterns {
        if !exclude {
            found.extend(ls(p)?);
        }
    }
    for (p, exclude) in patterns {
        if *exclude {
            for f in ls(p)? {
                found.remove(&f);
            }
        }
    }
    found
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(root.join(&f))
                .map_err(|e| format!("git generator file {f}: {e}"))?;
            Ok((f, text))
        })
        .collect()
}
