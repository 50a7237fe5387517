//! A Helm source rendered as Argo CD 3.6.1's repo-server renders it (`helmTemplate` in
//! `reposerver/repository/repository.go`, the argv of `util/helm/cmd.go`): `helm template .` in
//! the source's directory with the release name, namespace, kube version, value files, values,
//! parameters and flags Argo CD passes, in Argo CD's order, with isolated Helm homes.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::SourceCtx;
use super::output::{objects, tail};
use super::paths::{self, Resolved};
use crate::model::Resource;
use crate::process::{RunFailure, run};

/// What Helm prints when a chart's dependencies are not in `charts/`; Argo CD then builds them
/// and templates again.
const MISSING_DEPENDENCIES: [&str; 2] = [
    "found in Chart.yaml, but missing in charts/ directory",
    "found in requirements.yaml, but missing in charts/ directory",
];

/// What follows the source's path in the file label of Helm's objects (`charts/web (helm
/// template)`), so a location can be traced back to the chart's template file.
const HELM_LABEL: &str = " (helm template)";

/// The repository file a Helm object comes from: its source's directory joined with the
/// template path of Helm's `# Source:` comment below the chart's own name
/// (`charts/web` + `web/templates/job.yaml` → `charts/web/templates/job.yaml`). `None` for
/// objects that are not from a Helm render.
pub fn template_file(file_label: &str, helm_template: Option<&str>) -> Option<String> {
    let dir = file_label.strip_suffix(HELM_LABEL)?;
    let (_, inside) = helm_template?.split_once('/')?;
    Some(if dir == "." {
        inside.to_string()
    } else {
        format!("{dir}/{inside}")
    })
}

/// The `helm` block of a source, as Argo CD reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HelmSpec {
    pub release_name: String,
    pub namespace: String,
    pub kube_version: String,
    pub api_versions: Vec<String>,
    pub version: String,
    pub value_files: Vec<String>,
    pub ignore_missing_value_files: bool,
    /// `valuesObject` as YAML when set, else `values` (no merge between the two).
    pub values: String,
    /// (name, value, forceString), the last of a name wins.
    pub parameters: Vec<(String, String, bool)>,
    /// (name, path).
    pub file_parameters: Vec<(String, String)>,
    pub pass_credentials: bool,
    pub skip_crds: bool,
    pub skip_schema_validation: bool,
    pub skip_tests: bool,
}

impl HelmSpec {
    /// Reads the block (`None`: no block, every default).
    pub fn from_value(block: Option<&Value>) -> Result<Self, String> {
        let Some(b) = block else {
            return Ok(Self::default());
        };
        let text = |key: &str| {
            b.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let flag = |key: &str| b.get(key).and_then(Value::as_bool).unwrap_or(false);
        let list = |key: &str| super::source::strings(b, key);
        let values = match b.get("valuesObject").filter(|v| !v.is_null()) {
            Some(object) => serde_json::to_string(object).map_err(|e| e.to_string())?,
            None => text("values"),
        };
        let items = |key: &str| -> Vec<Value> {
            b.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let field = |v: &Value, key: &str| {
            v.get(key)
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                })
                .unwrap_or_default()
        };
        Ok(Self {
            release_name: text("releaseName"),
            namespace: text("namespace"),
            kube_version: text("kubeVersion"),
            api_versions: list("apiVersions"),
            version: text("version"),
            value_files: list("valueFiles"),
            ignore_missing_value_files: flag("ignoreMissingValueFiles"),
            values,
            parameters: items("parameters")
                .iter()
                .map(|p| {
                    (
                        field(p, "name"),
                        field(p, "value"),
                        p.get("forceString").and_then(Value::as_bool) == Some(true),
                    )
                })
                .collect(),
            file_parameters: items("fileParameters")
                .iter()
                .map(|p| (field(p, "name"), field(p, "path")))
                .collect(),
            pass_credentials: flag("passCredentials"),
            skip_crds: flag("skipCrds"),
            skip_schema_validation: flag("skipSchemaValidation"),
            skip_tests: flag("skipTests"),
        })
    }
}

/// Renders the Helm source of `ctx`.
pub fn render(ctx: &SourceCtx<'_>) -> Result<Vec<Resource>, String> {
    let spec = HelmSpec::from_value(ctx.source.blocks.helm.as_ref())?;
    if !matches!(spec.version.as_str(), "" | "v3" | "v4") {
        return Err(format!(
            "helm.version {:?} is not one of v3, v4 (Argo CD refuses it)",
            spec.version
        ));
    }
    if !ctx.app_dir.join("Chart.yaml").is_file() {
        return Err(format!(
            "path {}: a Helm source without Chart.yaml",
            ctx.source.path
        ));
    }
    let work =
        crate::interrupt::TempDir::new().map_err(|e| format!("a temporary directory: {e}"))?;
    let args = arguments(ctx, &spec, work.path())?;
    let label = format!("{}{HELM_LABEL}", ctx.label());
    let output = match helm(ctx, &ctx.app_dir, &args, work.path()) {
        Err(HelmFailure::Failed(stderr))
            if MISSING_DEPENDENCIES.iter().any(|m| stderr.contains(m)) =>
        {
            with_dependencies(ctx, &args, work.path())?
        }
        other => other.map_err(|e| e.describe(ctx))?,
    };
    objects(&label, &String::from_utf8_lossy(&output))
}

/// `helm template`'s arguments, in Argo CD's order.
fn arguments(ctx: &SourceCtx<'_>, spec: &HelmSpec, work: &Path) -> Result<Vec<String>, String> {
    let release = if spec.release_name.is_empty() {
        // `ParseInstanceName`: the part after the first `_` of the instance name.
        ctx.app_name
            .split_once('_')
            .map_or(ctx.app_name, |(_, name)| name)
            .to_string()
    } else {
        spec.release_name.clone()
    };
    let namespace = if spec.namespace.is_empty() {
        ctx.dest_namespace
    } else {
        &spec.namespace
    };
    let kube_version = if spec.kube_version.is_empty() {
        &ctx.options.kube_version
    } else {
        &spec.kube_version
    };
    let kube_version = parse_kube_version(kube_version)?;
    let api_versions = if spec.api_versions.is_empty() {
        &ctx.options.api_versions
    } else {
        &spec.api_versions
    };
    let mut args = vec![
        "template".to_string(),
        ".".into(),
        "--name-template".into(),
        release,
    ];
    if !namespace.is_empty() {
        args.extend(["--namespace".into(), namespace.to_string()]);
    }
    if !kube_version.is_empty() {
        args.extend(["--kube-version".into(), kube_version]);
    }
    // Argo CD keeps parameters in maps (the last of a name wins) and passes them in Go's random
    // map order; Helm's result does not depend on it. Sorted here, so a render is repeatable.
    let mut set = BTreeMap::new();
    let mut set_string = BTreeMap::new();
    for (name, value, force_string) in &spec.parameters {
        let value = ctx.env.substitute(value);
        if *force_string {
            set_string.insert(name.clone(), value);
        } else {
            set.insert(name.clone(), value);
        }
    }
    for (flag, map) in [("--set", &set), ("--set-string", &set_string)] {
        for (name, value) in map {
            args.extend([flag.into(), format!("{name}={}", escape_commas(value))]);
        }
    }
    let mut set_file = BTreeMap::new();
    for (name, path) in &spec.file_parameters {
        let path = match paths::resolve(ctx, path)? {
            Resolved::Local(p) => p.to_string_lossy().into_owned(),
            Resolved::Url(u) => u,
        };
        set_file.insert(name.clone(), path);
    }
    for (name, path) in &set_file {
        args.extend([
            "--set-file".into(),
            format!("{name}={}", escape_commas(path)),
        ]);
    }
    for file in value_files(ctx, spec)? {
        args.extend(["--values".into(), file]);
    }
    if !spec.values.is_empty() {
        let file = work.join("values.yaml");
        std::fs::write(&file, &spec.values).map_err(|e| format!("{}: {e}", file.display()))?;
        args.extend(["--values".into(), file.to_string_lossy().into_owned()]);
    }
    for v in api_versions {
        args.extend(["--api-versions".into(), v.clone()]);
    }
    if !spec.skip_crds {
        args.push("--include-crds".into());
    }
    if spec.skip_schema_validation {
        args.push("--skip-schema-validation".into());
    }
    if spec.skip_tests {
        args.push("--skip-tests".into());
    }
    Ok(args)
}

/// `getResolvedValueFiles`: each entry resolved (a `$ref/` path in its source, else substituted
/// and resolved in this one; allowed URLs pass as they are), globs expanded in lexical order
/// (a file also listed on its own keeps that position), duplicates passed once, a missing file
/// skipped only with `ignoreMissingValueFiles` (otherwise Helm reports it).
fn value_files(ctx: &SourceCtx<'_>, spec: &HelmSpec) -> Result<Vec<String>, String> {
    let mut resolved = Vec::new();
    for raw in &spec.value_files {
        resolved.push((raw, paths::resolve(ctx, raw)?));
    }
    let explicit: HashSet<PathBuf> = resolved
        .iter()
        .filter_map(|(_, r)| match r {
            Resolved::Local(p) if !paths::is_glob(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for (raw, r) in resolved {
        match r {
            Resolved::Url(u) => push(u),
            Resolved::Local(p) if paths::is_glob(&p) => {
                let matches = paths::glob(ctx, &p)?;
                if matches.is_empty() {
                    if spec.ignore_missing_value_files {
                        continue;
                    }
                    return Err(format!("values file glob {raw:?} matches no file"));
                }
                for m in matches.into_iter().filter(|m| !explicit.contains(m)) {
                    push(m.to_string_lossy().into_owned());
                }
            }
            Resolved::Local(p) => {
                if !p.exists() && spec.ignore_missing_value_files {
                    continue;
                }
                push(p.to_string_lossy().into_owned());
            }
        }
    }
    Ok(out)
}

/// Argo CD's `cleanSetParameters`: every `,` not already escaped becomes `\,`, so a value is one
/// value; a value in braces (Helm's list syntax) is left alone.
fn escape_commas(value: &str) -> String {
    if value.starts_with('{') && value.ends_with('}') {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len());
    let mut previous = '\0';
    for c in value.chars() {
        if c == ',' && previous != '\\' {
            out.push('\\');
        }
        out.push(c);
        previous = c;
    }
    out
}

/// Argo CD's `parseKubeVersion` (apimachinery's `ParseGeneric(...).String()`): the leading `v`
/// and anything after the numbers go (`v1.30.2-eks-1` is `1.30.2`); at least major.minor.
pub fn parse_kube_version(v: &str) -> Result<String, String> {
    if v.is_empty() {
        return Ok(String::new());
    }
    let s = v.trim_start();
    let s = s.strip_prefix('v').unwrap_or(s);
    let numbers: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let numbers = numbers.trim_end_matches('.');
    let parts: Vec<&str> = numbers.split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "kube version {v:?} is not a version (want 1.30 or v1.30.2)"
        ));
    }
    let parts: Result<Vec<u64>, _> = parts.iter().map(|p| p.parse::<u64>()).collect();
    let parts = parts.map_err(|_| format!("kube version {v:?} is out of range"))?;
    Ok(parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("."))
}

/// Why one `helm` run failed.
enum HelmFailure {
    /// Helm is not installed where we looked.
    Missing,
    /// Helm ran and failed; its stderr.
    Failed(String),
    /// Anything else (timeout, I/O).
    Other(String),
}

impl HelmFailure {
    fn describe(self, ctx: &SourceCtx<'_>) -> String {
        match self {
            HelmFailure::Missing => super::missing_tool("helm", &ctx.options.helm),
            HelmFailure::Failed(stderr) => format!("helm template failed: {stderr}"),
            HelmFailure::Other(e) => format!("helm: {e}"),
        }
    }
}

/// Runs helm in `dir` with Argo CD's isolated homes under `work`.
fn helm(
    ctx: &SourceCtx<'_>,
    dir: &Path,
    args: &[String],
    work: &Path,
) -> Result<Vec<u8>, HelmFailure> {
    let mut command = Command::new(&ctx.options.helm);
    command
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", work.join("cache"))
        .env("XDG_CONFIG_HOME", work.join("config"))
        .env("XDG_DATA_HOME", work.join("data"))
        .env("HELM_CONFIG_HOME", work.join("config"));
    match run(command, ctx.options.timeout) {
        Ok(out) => Ok(out),
        Err(RunFailure::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(HelmFailure::Missing)
        }
        Err(RunFailure::Spawn(e)) | Err(RunFailure::Io(e)) => {
            Err(HelmFailure::Other(e.to_string()))
        }
        Err(RunFailure::Exit { stderr, .. }) => Err(HelmFailure::Failed(tail(&stderr, 600))),
        Err(RunFailure::Timeout { .. }) => Err(HelmFailure::Other(format!(
            "timed out after {:?}",
            ctx.options.timeout.unwrap_or_default()
        ))),
    }
}

/// The dependency build Argo CD does when `charts/` lacks a dependency: in a copy of the
/// repository (the user's checkout is never written), `helm repo add` for each chart repository
/// the chart names, `helm dependency build`, then the same `helm template` again.
fn with_dependencies(ctx: &SourceCtx<'_>, args: &[String], work: &Path) -> Result<Vec<u8>, String> {
    let copy = work.join("checkout");
    paths::copy_tree(ctx.root, &copy)?;
    let rel = ctx.app_dir.strip_prefix(ctx.root).unwrap_or(Path::new(""));
    let dir = copy.join(rel);
    let chart = std::fs::read_to_string(dir.join("Chart.yaml"))
        .map_err(|e| format!("{}/Chart.yaml: {e}", ctx.source.path))?;
    for (name, url) in dependency_repositories(&chart) {
        helm(ctx, &dir, &["repo".into(), "add".into(), name, url], work)
            .map_err(|e| e.describe(ctx))?;
    }
    helm(ctx, &dir, &["dependency".into(), "build".into()], work).map_err(|e| {
        format!(
            "the chart's dependencies are not in charts/ and could not be built: {}",
            e.describe(ctx)
        )
    })?;
    helm(ctx, &dir, args, work).map_err(|e| e.describe(ctx))
}

/// The chart repositories of `Chart.yaml`'s dependencies that `helm repo add` must know, named
/// as Argo CD names them (the URL with `/` replaced by `-`); `file://`, OCI and by-name
/// (`@name`, `alias:name`) repositories need none here.
fn dependency_repositories(chart_yaml: &str) -> Vec<(String, String)> {
    let loaded = crate::manifest::parse_yaml_value(chart_yaml).unwrap_or(Value::Null);
    let mut out: Vec<(String, String)> = Vec::new();
    for dep in loaded
        .get("dependencies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(url) = dep.get("repository").and_then(Value::as_str) else {
            continue;
        };
        if url.starts_with("https://") || url.starts_with("http://") {
            let entry = (url.replace('/', "-"), url.to_string());
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::render::source::Application;
    use crate::render::{AppEnv, EnvInputs, RenderOptions};

    fn write(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "a: 1\n").unwrap();
    }

    /// `helm template`'s argv for a source with `helm` block `block`, in a repository with
    /// `files`, as Application `team_web` (destination `shop`).
    fn argv(files: &[&str], block: Value, dest_namespace: &str) -> Result<Vec<String>, String> {
        let repo = tempfile::tempdir().unwrap();
        for f in files {
            write(repo.path(), f);
        }
        let app = crate::manifest::load_str(
            "app.yaml",
            &serde_json::to_string(&json!({
                "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "web", "namespace": "team"},
                "spec": {"destination": {"namespace": dest_namespace},
                         "source": {"repoURL": "r", "path": "chart", "helm": block}}
            }))
            .unwrap(),
        );
        let spec = Application::from_resource(&app.resources[0]).unwrap();
        let options = RenderOptions {
            kube_version: "v1.34.1-eks-3".into(),
            api_versions: vec!["v1".into(), "apps/v1/Deployment".into()],
            ..RenderOptions::default()
        };
        let ctx = SourceCtx {
            root: repo.path(),
            app_dir: repo.path().join("chart"),
            source: &spec.sources[0],
            app_name: "team_web",
            dest_namespace,
            env: AppEnv::new(&EnvInputs {
                app_name: "team_web",
                namespace: dest_namespace,
                ..EnvInputs::default()
            }),
            refs: &[],
            multi_source: false,
            options: &options,
            chart: None,
        };
        let spec = HelmSpec::from_value(spec.sources[0].blocks.helm.as_ref())?;
        let work = tempfile::tempdir().unwrap();
        let root = repo.path().to_string_lossy().into_owned();
        Ok(arguments(&ctx, &spec, work.path())?
            .into_iter()
            .map(|a| {
                a.replace(&root, "<repo>")
                    .replace(&*work.path().to_string_lossy(), "<tmp>")
            })
            .collect())
    }

    #[test]
    fn the_argv_is_argo_cds() {
        let args = argv(
            &[
                "chart/Chart.yaml",
                "chart/values-team_web.yaml",
                "chart/env/b.yaml",
                "chart/env/a.yaml",
                "chart/env/c.yaml",
                "shared/common.yaml",
            ],
            json!({
                "valueFiles": ["values-$ARGOCD_APP_NAME.yaml", "env/*.yaml", "env/b.yaml",
                               "/shared/common.yaml", "https://example.com/v.yaml",
                               "values-team_web.yaml", "gone.yaml"],
                "ignoreMissingValueFiles": true,
                "parameters": [{"name": "z", "value": "a,b"}, {"name": "a", "value": "x"},
                               {"name": "s", "value": "80", "forceString": true},
                               {"name": "a", "value": "$ARGOCD_APP_NAMESPACE"}],
                "valuesObject": {"k": "v"},
                "skipTests": true
            }),
            "shop",
        )
        .unwrap();
        let want = [
            "template",
            ".",
            "--name-template",
            "web",
            "--namespace",
            "shop",
            "--kube-version",
            "1.34.1",
            "--set",
            "a=shop",
            "--set",
            "z=a\\,b",
            "--set-string",
            "s=80",
            "--values",
            "<repo>/chart/values-team_web.yaml",
            // The glob in lexical order, without b.yaml, which is listed on its own after it.
            "--values",
            "<repo>/chart/env/a.yaml",
            "--values",
            "<repo>/chart/env/c.yaml",
            "--values",
            "<repo>/chart/env/b.yaml",
            "--values",
            "<repo>/shared/common.yaml",
            "--values",
            "https://example.com/v.yaml",
            "--values",
            "<tmp>/values.yaml",
            "--api-versions",
            "v1",
            "--api-versions",
            "apps/v1/Deployment",
            "--include-crds",
            "--skip-tests",
        ];
        assert_eq!(args, want);
    }

    #[test]
    fn options_that_change_the_argv() {
        let args = argv(
            &["chart/Chart.yaml"],
            json!({"releaseName": "shop-web", "namespace": "other", "kubeVersion": "1.29",
                   "apiVersions": ["x/v1"], "skipCrds": true, "valueFiles": ["missing.yaml"]}),
            "",
        )
        .unwrap();
        assert_eq!(
            args,
            [
                "template",
                ".",
                "--name-template",
                "shop-web",
                "--namespace",
                "other",
                "--kube-version",
                "1.29",
                // Not ignored: passed on, and helm names it in its error.
                "--values",
                "<repo>/chart/missing.yaml",
                "--api-versions",
                "x/v1"
            ]
        );
        // No namespace anywhere: no --namespace.
        let args = argv(&["chart/Chart.yaml"], json!({}), "").unwrap();
        assert!(!args.contains(&"--namespace".to_string()), "{args:?}");
    }

    #[test]
    fn value_files_outside_the_repository_and_empty_globs_are_refused() {
        let e = argv(
            &["chart/Chart.yaml"],
            json!({"valueFiles": ["../../etc/passwd"]}),
            "s",
        )
        .unwrap_err();
        assert!(e.contains("outside the repository"), "{e}");
        let e = argv(
            &["chart/Chart.yaml"],
            json!({"valueFiles": ["env/*.yaml"]}),
            "s",
        )
        .unwrap_err();
        assert!(e.contains("matches no file"), "{e}");
        let e = argv(
            &["chart/Chart.yaml"],
            json!({"valueFiles": ["s3://b/v.yaml"]}),
            "s",
        )
        .unwrap_err();
        assert!(e.contains("'s3' is not allowed"), "{e}");
        let e = argv(&["chart/Chart.yaml"], json!({"kubeVersion": "latest"}), "s").unwrap_err();
        assert!(e.contains("not a version"), "{e}");
    }

    #[test]
    fn helm_locations_lead_back_to_the_template_file() {
        assert_eq!(
            template_file("charts/web (helm template)", Some("web/templates/job.yaml")).as_deref(),
            Some("charts/web/templates/job.yaml")
        );
        assert_eq!(
            template_file(". (helm template)", Some("c/charts/sub/templates/a.yaml")).as_deref(),
            Some("charts/sub/templates/a.yaml")
        );
        assert_eq!(
            template_file("apps/cm.yaml", Some("c/templates/a.yaml")),
            None
        );
        assert_eq!(template_file("charts/web (helm template)", None), None);
    }

    #[test]
    fn kube_versions_parse_as_argo_cd_parses_them() {
        assert_eq!(parse_kube_version("v1.30.2-eks-1").unwrap(), "1.30.2");
        assert_eq!(parse_kube_version("1.29").unwrap(), "1.29");
        assert_eq!(parse_kube_version("v1.034.0").unwrap(), "1.34.0");
        assert_eq!(parse_kube_version("").unwrap(), "");
        assert!(parse_kube_version("latest").is_err());
        assert!(parse_kube_version("1").is_err());
    }

    #[test]
    fn commas_are_escaped_unless_escaped_or_a_list() {
        assert_eq!(escape_commas("a,b"), "a\\,b");
        assert_eq!(escape_commas("a\\,b"), "a\\,b");
        assert_eq!(escape_commas("{a,b}"), "{a,b}");
        assert_eq!(escape_commas("plain"), "plain");
    }

    #[test]
    fn values_object_replaces_values_and_parameters_are_read() {
        let spec = HelmSpec::from_value(Some(&json!({
            "values": "a: 1",
            "valuesObject": {"b": 2},
            "parameters": [
                {"name": "image.tag", "value": "v1"},
                {"name": "port", "value": "80", "forceString": true}
            ],
            "fileParameters": [{"name": "cfg", "path": "files/cfg.txt"}],
            "skipCrds": true,
            "valueFiles": ["values-prod.yaml"]
        })))
        .unwrap();
        assert_eq!(spec.values, r#"{"b":2}"#);
        assert_eq!(
            spec.parameters,
            [
                ("image.tag".to_string(), "v1".to_string(), false),
                ("port".to_string(), "80".to_string(), true)
            ]
        );
        assert_eq!(spec.file_parameters[0].1, "files/cfg.txt");
        assert!(spec.skip_crds && !spec.skip_tests);
        assert_eq!(spec.value_files, ["values-prod.yaml"]);
        assert_eq!(HelmSpec::from_value(None).unwrap(), HelmSpec::default());
    }

    #[test]
    fn dependency_repositories_are_named_as_argo_cd_names_them() {
        let chart = "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n\
             - {name: redis, version: 1.0.0, repository: 'https://charts.example.com/stable'}\n\
             - {name: common, version: 1.0.0, repository: 'file://../common'}\n\
             - {name: pg, version: 1.0.0, repository: 'oci://registry.example.com/charts'}\n\
             - {name: other, version: 1.0.0, repository: '@stable'}\n";
        assert_eq!(
            dependency_repositories(chart),
            [(
                "https:--charts.example.com-stable".to_string(),
                "https://charts.example.com/stable".to_string()
            )]
        );
    }
}
