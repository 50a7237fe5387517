//! Parameters into an ApplicationSet's template, as Argo CD 3.6.1 puts them
//! (`applicationset/utils.Render`): every string of the template, map keys included, has its
//! `{{ … }}` tags replaced.
//!
//! - Default (fasttemplate): `{{ name }}` (spaces trimmed) is replaced by the parameter `name`
//!   when it is a string; any other tag is left as it is.
//! - `goTemplate: true`: Go's text/template with Sprig. syncguard evaluates the subset used in
//!   practice — field paths (`{{ .path.basename }}`), `index` with literal keys, and the pipeline
//!   functions `default`, `lower`, `upper`, `quote`, `trim`, `trimPrefix`, `trimSuffix`,
//!   `replace`, `trunc`, `normalize` — and refuses anything else with an error naming the
//!   expression, rather than guess. A missing key prints `<no value>` as Go does, or is an
//!   error with `goTemplateOptions: [missingkey=error]`.

use serde_json::{Map, Value};

/// How templates are evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// fasttemplate (`goTemplate` unset or false).
    Fast,
    /// A subset of Go templates; `missing_is_error` from `missingkey=error`.
    Go { missing_is_error: bool },
}

/// `value` with every string (and map key) rendered with `params`.
pub fn render_value(value: &Value, params: &Value, engine: Engine) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => Value::String(render(s, params, engine)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render_value(v, params, engine))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(render(k, params, engine)?, render_value(v, params, engine)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// One string rendered.
pub fn render(text: &str, params: &Value, engine: Engine) -> Result<String, String> {
    if !text.contains("{{") {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            // An unclosed tag: fasttemplate keeps the text; Go refuses to parse.
            if let Engine::Go { .. } = engine {
                return Err(format!("template {text:?}: unclosed action"));
            }
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let tag = &after[..end];
        match engine {
            Engine::Fast => match params.get(tag.trim()).and_then(Value::as_str) {
                Some(v) if !tag.trim().is_empty() => out.push_str(v),
                _ => {
                    out.push_str("{{");
                    out.push_str(tag);
                    out.push_str("}}");
                }
            },
            Engine::Go { missing_is_error } => {
                out.push_str(&go_action(tag, params, missing_is_error)?);
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// What a Go template says when a key is missing under `missingkey=error`.
const MISSING_KEY: &str = "map has no entry for the key";

/// `text` rendered as a Go template when every key it names is in `params`, else as written:
/// how Argo CD 3.6.1 resolves a matrix's second generator's `values` with the first generator's
/// parameters, leaving the rest for the generator's own.
pub fn render_if_known(text: &str, params: &Value) -> Result<String, String> {
    match render(
        text,
        params,
        Engine::Go {
            missing_is_error: true,
        },
    ) {
        Err(e) if e.contains(MISSING_KEY) => Ok(text.to_string()),
        other => other,
    }
}

/// The text of one Go template action.
fn go_action(tag: &str, params: &Value, missing_is_error: bool) -> Result<String, String> {
    let action = tag
        .strip_prefix('-')
        .unwrap_or(tag)
        .strip_suffix('-')
        .unwrap_or(tag.strip_prefix('-').unwrap_or(tag))
        .trim();
    let unsupported = || {
        format!(
            "{{{{{tag}}}}}: syncguard evaluates field paths, index and a few functions of Go \
             templates; this expression needs Argo CD's own ApplicationSet controller"
        )
    };
    let mut stages = split_pipeline(action).into_iter();
    let first = stages.next().ok_or_else(unsupported)?;
    let head = words(&first).ok_or_else(unsupported)?;
    // A field path that names a missing key fails at once under missingkey=error, whatever
    // the pipeline does next (`{{ .x | default "d" }}` is an error there, as in Go); `index`
    // of a missing map key is the zero value, never an error, and prints `<no value>`.
    let field = |path: &str| match lookup(params, path) {
        None if missing_is_error => Err(format!(
            "{{{{{tag}}}}}: {MISSING_KEY} (goTemplateOptions: missingkey=error)"
        )),
        v => Ok(v),
    };
    let mut value: Option<Value> = match head.as_slice() {
        [single] if single.starts_with('.') => field(single)?,
        [f, target, keys @ ..] if f == "index" && target.starts_with('.') => {
            let mut v = field(target)?;
            for k in keys {
                let key = literal(k).ok_or_else(unsupported)?;
                v = v.map(|v| match (&v, key.parse::<usize>()) {
                    (Value::Array(a), Ok(i)) => a.get(i).cloned().unwrap_or(Value::Null),
                    (Value::Object(m), _) => m.get(&key).cloned().unwrap_or(Value::Null),
                    _ => Value::Null,
                });
            }
            v
        }
        [s] if literal(s).is_some() => literal(s).map(Value::String),
        _ => return Err(unsupported()),
    };
    for stage in stages {
        let stage_words = words(&stage).ok_or_else(unsupported)?;
        let args: Vec<String> = stage_words[1..]
            .iter()
            .map(|a| literal(a).ok_or_else(unsupported))
            .collect::<Result<_, _>>()?;
        let text = value.as_ref().map(show);
        value = Some(Value::String(
            match (stage_words[0].as_str(), args.as_slice()) {
                ("default", [d]) => match &value {
                    None | Some(Value::Null) => d.clone(),
                    Some(Value::String(s)) if s.is_empty() => d.clone(),
                    Some(v) => show(v),
                },
                ("lower", []) => text.unwrap_or_default().to_lowercase(),
                ("upper", []) => text.unwrap_or_default().to_uppercase(),
                ("quote", []) => format!("{:?}", text.unwrap_or_default()),
                ("trim", []) => text.unwrap_or_default().trim().to_string(),
                ("trimPrefix", [p]) => {
                    let t = text.unwrap_or_default();
                    t.strip_prefix(p.as_str()).unwrap_or(&t).to_string()
                }
                ("trimSuffix", [p]) => {
                    let t = text.unwrap_or_default();
                    t.strip_suffix(p.as_str()).unwrap_or(&t).to_string()
                }
                ("replace", [from, to]) => text.unwrap_or_default().replace(from.as_str(), to),
                ("trunc", [n]) => {
                    let n: usize = n.parse().map_err(|_| unsupported())?;
                    text.unwrap_or_default().chars().take(n).collect()
                }
                ("normalize", []) => super::sanitize_name(&text.unwrap_or_default()),
                _ => return Err(unsupported()),
            },
        ));
    }
    match value {
        Some(v) => Ok(show(&v)),
        None if missing_is_error => Err(format!(
            "{{{{{tag}}}}}: {MISSING_KEY} (goTemplateOptions: missingkey=error)"
        )),
        None => Ok("<no value>".into()),
    }
}

/// How Go prints a value in a template.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<no value>".into(),
        Value::Array(items) => {
            format!("[{}]", items.iter().map(show).collect::<Vec<_>>().join(" "))
        }
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", show(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        other => other.to_string(),
    }
}

/// `.a.b.c` in `params`.
fn lookup(params: &Value, path: &str) -> Option<Value> {
    let mut v = params;
    for part in path
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
    {
        v = v.get(part)?;
    }
    Some(v.clone())
}

/// A string (`"x"`, `` `x` ``) or number literal.
fn literal(word: &str) -> Option<String> {
    if let Some(s) = word.strip_prefix('"').and_then(|w| w.strip_suffix('"')) {
        return Some(s.replace("\\\"", "\"").replace("\\\\", "\\"));
    }
    if let Some(s) = word.strip_prefix('`').and_then(|w| w.strip_suffix('`')) {
        return Some(s.to_string());
    }
    word.chars()
        .all(|c| c.is_ascii_digit())
        .then(|| word.to_string())
        .filter(|w| !w.is_empty())
}

/// The stages of a pipeline (`a | b "x" | c`), quotes respected.
fn split_pipeline(action: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in action.chars() {
        match (quote, c) {
            (None, '|') => out.push(std::mem::take(&mut current)),
            (None, '"' | '`') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            _ => current.push(c),
        }
    }
    out.push(current);
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

/// The words of one stage, quotes kept; `None` for parentheses or variables (`$x`), which the
/// subset does not evaluate.
fn words(stage: &str) -> Option<Vec<String>> {
    if stage.contains(['(', ')', '$']) || stage.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in stage.chars() {
        match (quote, c) {
            (None, ' ' | '\t') => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            (None, '"' | '`') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fasttemplate_replaces_known_string_parameters_only() {
        let p = json!({"path.basename": "web", "cluster": "prod", "n": 3});
        let e = Engine::Fast;
        assert_eq!(
            render("{{path.basename}}-{{ cluster }}", &p, e).unwrap(),
            "web-prod"
        );
        assert_eq!(
            render("{{unknown}} {{n}} {{}}", &p, e).unwrap(),
            "{{unknown}} {{n}} {{}}"
        );
        assert_eq!(
            render("open {{path.basename", &p, e).unwrap(),
            "open {{path.basename"
        );
    }

    #[test]
    fn go_templates_evaluate_the_common_subset() {
        let p = json!({"path": {"basename": "Web_App", "segments": ["apps", "web"]},
                       "values": {"env": "prod"}, "empty": ""});
        let e = Engine::Go {
            missing_is_error: false,
        };
        assert_eq!(render("{{ .path.basename }}", &p, e).unwrap(), "Web_App");
        assert_eq!(
            render("{{.path.basename | lower}}", &p, e).unwrap(),
            "web_app"
        );
        assert_eq!(
            render("{{ .path.basename | normalize }}", &p, e).unwrap(),
            "web-app"
        );
        assert_eq!(
            render("{{ index .path.segments 1 }}", &p, e).unwrap(),
            "web"
        );
        assert_eq!(render(r#"{{ .empty | default "x" }}"#, &p, e).unwrap(), "x");
        assert_eq!(
            render(r#"{{ .values.env | replace "prod" "p" }}"#, &p, e).unwrap(),
            "p"
        );
        assert_eq!(render("{{ .nope }}", &p, e).unwrap(), "<no value>");
        let strict = Engine::Go {
            missing_is_error: true,
        };
        assert!(
            render("{{ .nope }}", &p, strict)
                .unwrap_err()
                .contains("missingkey=error")
        );
        // What Argo CD 3.6.1's ApplicationSet controller answered (e2e argocd_appset_referee):
        // `default` does not save a missing field under missingkey=error ("map has no entry for
        // key"), while `index` of a missing key is the zero value.
        assert!(
            render(r#"{{ .nope | default "d" }}"#, &p, strict)
                .unwrap_err()
                .contains("missingkey=error")
        );
        assert_eq!(
            render(r#"{{ index .values "nope" | default "d" }}"#, &p, strict).unwrap(),
            "d"
        );
        assert_eq!(
            render(r#"{{ index .values "nope" }}"#, &p, strict).unwrap(),
            "<no value>"
        );
        assert_eq!(render(r#"{{ .nope | default "d" }}"#, &p, e).unwrap(), "d");
        let e2 = render("{{ if .x }}a{{ end }}", &p, e).unwrap_err();
        assert!(
            e2.contains("Argo CD's own ApplicationSet controller"),
            "{e2}"
        );
        assert!(render("{{ printf \"%s\" .path.basename }}", &p, e).is_err());
    }

    #[test]
    fn keys_are_rendered_too() {
        let v = json!({"metadata": {"labels": {"{{name}}": "{{name}}"}}, "n": 1});
        let out = render_value(&v, &json!({"name": "x"}), Engine::Fast).unwrap();
        assert_eq!(out, json!({"metadata": {"labels": {"x": "x"}}, "n": 1}));
    }
}
