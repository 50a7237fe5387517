//! Parameters into an ApplicationSet's template, as Argo CD 3.6.1 puts them
//! (`applicationset/utils.Render`): every string of the template, map keys included, has its
//! `{{ … }}` tags replaced.
//!
//! - Default (fasttemplate): `{{ name }}` (spaces trimmed) is replaced by the parameter `name`
//!   when it is a string; any other tag is left as it is. A string with `{{` then `}}` on one
//!   line is a template, and then a `{{` without its `}}` is an error.
//! - `goTemplate: true`: Go's text/template with Sprig, as the shared engine
//!   (`syncguard_argocd::config::appset::gotemplate`) runs it: the whole language, and the
//!   functions templates use in practice; a function it does not evaluate (random values, time,
//!   cryptography...) is refused with an error naming the expression, rather than guessed. A
//!   missing key prints `<no value>` as Go does, or is an error with
//!   `goTemplateOptions: [missingkey=error]`.

use serde_json::{Map, Value};
use syncguard_argocd::config::appset::facts::fasttemplate_error;
use syncguard_argocd::config::appset::gotemplate::{self, ExecError};
pub use syncguard_argocd::config::appset::{Engine, MissingKey};

/// Why a template did not render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// The template itself is wrong (it does not parse): Argo CD fails whatever the parameters,
    /// and SG610 reports it on the ApplicationSet.
    Invalid(String),
    /// Argo CD fails with these parameters (a missing key with `missingkey=error`...).
    Failed(String),
    /// The template needs something syncguard does not evaluate.
    Unsupported(String),
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::Invalid(m) | RenderError::Failed(m) | RenderError::Unsupported(m) => {
                f.write_str(m)
            }
        }
    }
}

impl From<RenderError> for String {
    fn from(e: RenderError) -> String {
        e.to_string()
    }
}

/// `value` with every string (and map key) rendered with `params`.
pub fn render_value(value: &Value, params: &Value, engine: Engine) -> Result<Value, RenderError> {
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
pub fn render(text: &str, params: &Value, engine: Engine) -> Result<String, RenderError> {
    if !text.contains("{{") {
        return Ok(text.to_string());
    }
    match engine {
        Engine::Fast => fast(text, params),
        Engine::Go { missing_key } => {
            let t = gotemplate::parse(text).map_err(|e| {
                RenderError::Invalid(format!("failed to parse template {text}: {e}"))
            })?;
            t.execute(params, missing_key).map_err(|e| match e {
                ExecError::Failed(m) => {
                    let hint = if missing_key == MissingKey::Error && m.contains(MISSING_KEY) {
                        " (goTemplateOptions: missingkey=error)"
                    } else {
                        ""
                    };
                    RenderError::Failed(format!("failed to execute go template {text}: {m}{hint}"))
                }
                ExecError::Unsupported(m) => RenderError::Unsupported(m),
            })
        }
    }
}

/// fasttemplate, as Argo CD calls it.
fn fast(text: &str, params: &Value) -> Result<String, RenderError> {
    if let Some(e) = fasttemplate_error(text) {
        return Err(RenderError::Invalid(e));
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            // Not a template (no `}}` after a `{{` on one line): kept as written.
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let tag = &after[..end];
        match params.get(tag.trim()).and_then(Value::as_str) {
            Some(v) if !tag.trim().is_empty() => out.push_str(v),
            _ => {
                out.push_str("{{");
                out.push_str(tag);
                out.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// What a Go template says when a key is missing under `missingkey=error`.
const MISSING_KEY: &str = "map has no entry for key";

/// `text` rendered as a Go template when every key it names is in `params`, else as written:
/// how Argo CD 3.6.1 resolves a matrix's second generator's `values` with the first generator's
/// parameters, leaving the rest for the generator's own (`isMissingKeyError`).
pub fn render_if_known(text: &str, params: &Value) -> Result<String, RenderError> {
    match render(
        text,
        params,
        Engine::Go {
            missing_key: MissingKey::Error,
        },
    ) {
        Err(RenderError::Failed(e))
            if e.contains(MISSING_KEY) || e.contains("can't evaluate field") =>
        {
            Ok(text.to_string())
        }
        other => other,
    }
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
            missing_key: MissingKey::Default,
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
            missing_key: MissingKey::Error,
        };
        assert!(
            render("{{ .nope }}", &p, strict)
                .unwrap_err()
                .to_string()
                .contains("missingkey=error")
        );
        // The whole language: conditions, printf...
        assert_eq!(
            render("{{ if .x }}a{{ else }}b{{ end }}", &p, e).unwrap(),
            "b"
        );
        assert_eq!(
            render("{{ printf \"%s\" .path.basename }}", &p, e).unwrap(),
            "Web_App"
        );
        // ...but not what only Argo CD's controller can give (a random value here).
        let e2 = render("{{ randAlphaNum 8 }}", &p, e).unwrap_err();
        assert!(matches!(e2, RenderError::Unsupported(_)), "{e2:?}");
        assert!(
            e2.to_string()
                .contains("Argo CD's own ApplicationSet controller"),
            "{e2}"
        );
        // A template Go cannot parse is the template's own error.
        assert!(matches!(
            render("{{path.basename}}", &p, e),
            Err(RenderError::Invalid(m)) if m.contains(r#"function "path" not defined"#)
        ));
    }

    #[test]
    fn an_unclosed_fasttemplate_tag_in_a_template_is_an_error() {
        let p = json!({"a": "x"});
        assert!(matches!(
            render("{{a}} {{b", &p, Engine::Fast),
            Err(RenderError::Invalid(m)) if m.contains("Cannot find end tag")
        ));
    }

    #[test]
    fn keys_are_rendered_too() {
        let v = json!({"metadata": {"labels": {"{{name}}": "{{name}}"}}, "n": 1});
        let out = render_value(&v, &json!({"name": "x"}), Engine::Fast).unwrap();
        assert_eq!(out, json!({"metadata": {"labels": {"x": "x"}}, "n": 1}));
    }
}
