//! A `.jsonnet` file of a directory source, evaluated as Argo CD 3.6.1's repo-server evaluates it
//! (`reposerver/repository/repository.go`, `findManifests` and `makeJsonnetVM`), with the
//! `jsonnet` command of the go-jsonnet release Argo CD links (v0.22.0), given the same
//! configuration the repo-server gives its in-process VM:
//!
//! - library paths: the source's directory, then each of `jsonnet.libs` resolved from the
//!   repository root (an absolute lib is rooted at the repository too) and refused when it leaves
//!   the repository; `-J` in that order makes the command's search order the VM's (the importing
//!   file's directory, then the paths last to first), and `JSONNET_PATH` is removed so that
//!   nothing else is searched;
//! - `tlas` and `extVars`, as strings or as code, with `$ARGOCD_APP_*` substituted in their
//!   values;
//! - the output, JSON, is an array of objects or one object; a List is expanded later as for any
//!   source, an object without `kind` fails the render.
//!
//! One difference is known: the repo-server also refuses an `import` that resolves outside the
//! repository; the command does not check, so such an import renders here.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::SourceCtx;
use super::output::{objects, tail};
use super::paths;
use super::source::{Jsonnet, JsonnetVar};
use crate::model::Resource;
use crate::process::{RunFailure, run};

/// The objects `file` (a `.jsonnet` file of the source, `label` its path in the repository)
/// evaluates to.
pub fn evaluate(
    ctx: &SourceCtx<'_>,
    spec: &Jsonnet,
    file: &Path,
    label: &str,
) -> Result<Vec<Resource>, String> {
    let args = arguments(ctx, spec, file)?;
    let mut command = Command::new(&ctx.options.jsonnet);
    command.args(&args).env_remove("JSONNET_PATH");
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stdout = match run(command, ctx.options.timeout) {
        Ok(out) => out,
        Err(RunFailure::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(super::missing_tool("jsonnet", &ctx.options.jsonnet));
        }
        Err(RunFailure::Spawn(e)) | Err(RunFailure::Io(e)) => {
            return Err(format!("jsonnet: {e}"));
        }
        Err(RunFailure::Exit { stderr, .. }) => {
            return Err(format!(
                "{label}: failed to evaluate jsonnet {name:?}: {}",
                tail(&stderr, 600)
            ));
        }
        Err(RunFailure::Timeout { .. }) => {
            return Err(format!(
                "{label}: jsonnet timed out after {:?}",
                ctx.options.timeout.unwrap_or_default()
            ));
        }
    };
    output_objects(label, &String::from_utf8_lossy(&stdout))
}

/// The `jsonnet` arguments for `file`.
fn arguments(ctx: &SourceCtx<'_>, spec: &Jsonnet, file: &Path) -> Result<Vec<String>, String> {
    let mut args = vec!["-J".to_string(), ctx.app_dir.to_string_lossy().into_owned()];
    for lib in &spec.libs {
        let joined = ctx.root.join(lib.trim_start_matches('/'));
        let resolved = paths::inside(ctx.root, &joined, lib)
            .map_err(|e| format!("jsonnet library path {e}"))?;
        args.push("-J".into());
        args.push(resolved.to_string_lossy().into_owned());
    }
    for (vars, code_flag, string_flag) in [
        (&spec.tlas, "--tla-code", "--tla-str"),
        (&spec.ext_vars, "--ext-code", "--ext-str"),
    ] {
        for var in vars {
            args.push(if var.code { code_flag } else { string_flag }.to_string());
            args.push(assignment(ctx, var)?);
        }
    }
    args.push(file.to_string_lossy().into_owned());
    Ok(args)
}

/// `name=value` with the build environment substituted in the value.
fn assignment(ctx: &SourceCtx<'_>, var: &JsonnetVar) -> Result<String, String> {
    if var.name.contains('=') {
        return Err(format!(
            "jsonnet variable name {:?} holds '=', which the jsonnet command cannot be given",
            var.name
        ));
    }
    Ok(format!("{}={}", var.name, ctx.env.substitute(&var.value)))
}

/// The objects of the JSON a file evaluated to: an array of objects (`null` entries are
/// dropped, as the repo-server drops them) or one object. Anything else is refused, as the
/// repo-server refuses it.
fn output_objects(label: &str, json: &str) -> Result<Vec<Resource>, String> {
    let refused = |why: &str| format!("{label}: failed to unmarshal the generated JSON: {why}");
    let value: Value = serde_json::from_str(json).map_err(|e| refused(&e.to_string()))?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(_) => vec![value],
        other => {
            return Err(refused(&format!(
                "the output is {}, not an object or an array of objects",
                type_name(&other)
            )));
        }
    };
    let mut stream = String::new();
    for item in items {
        match item {
            Value::Null => {}
            Value::Object(_) => {
                stream.push_str("---\n");
                stream.push_str(&item.to_string());
                stream.push('\n');
            }
            other => {
                return Err(refused(&format!(
                    "an entry of the output array is {}, not an object",
                    type_name(&other)
                )));
            }
        }
    }
    objects(&format!("{label} (jsonnet)"), &stream)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::render::{AppEnv, EnvInputs, RenderOptions, Source};
    use serde_json::json;

    fn ctx<'a>(root: &'a Path, source: &'a Source, options: &'a RenderOptions) -> SourceCtx<'a> {
        SourceCtx {
            root,
            app_dir: root.join("apps/web"),
            source,
            app_name: "web",
            dest_namespace: "shop",
            env: AppEnv::new(&EnvInputs {
                app_name: "web",
                namespace: "shop",
                ..EnvInputs::default()
            }),
            refs: &[],
            multi_source: false,
            options,
            chart: None,
        }
    }

    fn var(name: &str, value: &str, code: bool) -> JsonnetVar {
        JsonnetVar {
            name: name.into(),
            value: value.into(),
            code,
        }
    }

    #[test]
    fn arguments_follow_the_repo_server_vm() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("apps/web")).unwrap();
        let source = Source::from_value(&json!({}));
        let options = RenderOptions::default();
        let ctx = ctx(repo.path(), &source, &options);
        let spec = Jsonnet {
            ext_vars: vec![
                var("app", "$ARGOCD_APP_NAME-x", false),
                var("replicas", "2", true),
            ],
            tlas: vec![var("ns", "${ARGOCD_APP_NAMESPACE}", false)],
            libs: vec!["vendor".into(), "/lib/../shared".into()],
        };
        let file = repo.path().join("apps/web/main.jsonnet");
        let args = arguments(&ctx, &spec, &file).unwrap();
        let root = repo.path().to_string_lossy().into_owned();
        assert_eq!(
            args,
            [
                "-J".to_string(),
                format!("{root}/apps/web"),
                "-J".into(),
                format!("{root}/vendor"),
                "-J".into(),
                format!("{root}/shared"),
                "--tla-str".into(),
                "ns=shop".into(),
                "--ext-str".into(),
                "app=web-x".into(),
                "--ext-code".into(),
                "replicas=2".into(),
                format!("{root}/apps/web/main.jsonnet"),
            ]
        );
    }

    #[test]
    fn a_library_outside_the_repository_or_a_name_with_equals_is_refused() {
        let repo = tempfile::tempdir().unwrap();
        let source = Source::from_value(&json!({}));
        let options = RenderOptions::default();
        let ctx = ctx(repo.path(), &source, &options);
        let file = repo.path().join("apps/web/main.jsonnet");
        let spec = Jsonnet {
            libs: vec!["../elsewhere".into()],
            ..Jsonnet::default()
        };
        let e = arguments(&ctx, &spec, &file).unwrap_err();
        assert!(e.contains("../elsewhere") && e.contains("outside"), "{e}");
        let spec = Jsonnet {
            ext_vars: vec![var("a=b", "c", false)],
            ..Jsonnet::default()
        };
        let e = arguments(&ctx, &spec, &file).unwrap_err();
        assert!(e.contains("\"a=b\""), "{e}");
    }

    #[test]
    fn output_is_an_array_of_objects_or_one_object() {
        let objs = output_objects(
            "apps/web/main.jsonnet",
            r#"[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}, null,
                {"apiVersion":"v1","kind":"List","items":[
                  {"apiVersion":"v1","kind":"Service","metadata":{"name":"b"}}]}]"#,
        )
        .unwrap();
        let names: Vec<(&str, &str)> = objs
            .iter()
            .map(|r| (r.kind.as_str(), r.name.as_str()))
            .collect();
        assert_eq!(names, [("ConfigMap", "a"), ("Service", "b")]);
        assert_eq!(
            &*objs[0].origin.as_ref().unwrap().file,
            "apps/web/main.jsonnet (jsonnet)"
        );
        let one = output_objects(
            "m.jsonnet",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"solo"}}"#,
        )
        .unwrap();
        assert_eq!(one[0].name, "solo");
    }

    #[test]
    fn other_output_is_refused_naming_the_file() {
        for (json, why) in [
            ("\"text\"", "a string"),
            ("[1]", "a number"),
            ("[[{}]]", "an array"),
            ("{", "EOF"),
        ] {
            let e = output_objects("apps/web/m.jsonnet", json).unwrap_err();
            assert!(
                e.contains("apps/web/m.jsonnet") && e.contains(why),
                "{json}: {e}"
            );
        }
        let e = output_objects(
            "m.jsonnet",
            r#"[{"apiVersion":"v1","metadata":{"name":"x"}}]"#,
        )
        .unwrap_err();
        assert!(e.contains("kind"), "{e}");
    }
}
