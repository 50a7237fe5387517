//! What an Application asks Argo CD's repo-server to render: its sources, read from the
//! Application object as the controller reads them (Argo CD 3.6.1,
//! `pkg/apis/application/v1alpha1/types.go`).

use serde_json::Value;

use crate::model::Resource;
use crate::model::app::Application;

/// One Application, as far as rendering is concerned.
#[derive(Debug, Clone, PartialEq)]
pub struct AppSpec {
    /// What the rest of syncguard reads of it (name, project, destination...).
    pub app: Application,
    /// `metadata.namespace` (empty when unset: the control-plane namespace).
    pub namespace: String,
    /// The sources in order: `spec.sources` when it is non-empty, else `spec.source`.
    pub sources: Vec<Source>,
    /// `spec.sources` was used (a multi-source Application).
    pub multi_source: bool,
}

/// One source of an Application.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// `repoURL` as written.
    pub repo_url: String,
    /// `path` (empty when unset).
    pub path: String,
    /// `targetRevision` (empty when unset).
    pub target_revision: String,
    /// `chart`: a Helm chart from a Helm repository (not rendered from a checkout).
    pub chart: String,
    /// `ref`: the name `$<ref>` other sources use for this source's files.
    pub ref_name: String,
    /// The source-type blocks written on the source.
    pub blocks: Blocks,
    /// The source as written (override files patch it: overrides.rs).
    pub raw: Value,
}

/// The type blocks of a source, as written (an empty block still names its type).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Blocks {
    /// `directory`.
    pub directory: Option<Directory>,
    /// `helm`, kept as written.
    pub helm: Option<Value>,
    /// `kustomize`, kept as written.
    pub kustomize: Option<Value>,
    /// `plugin`, kept as written.
    pub plugin: Option<Value>,
}

/// The `directory` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Directory {
    /// `recurse`: also read subdirectories.
    pub recurse: bool,
    /// `include`: a glob the file's path (relative to the source's directory) must match.
    pub include: String,
    /// `exclude`: a glob of files to leave out.
    pub exclude: String,
    /// `disableExtensionFilter`: every file is read, not only `.yaml`/`.yml`/`.json`/`.jsonnet`.
    pub disable_extension_filter: bool,
    /// `jsonnet`: how `.jsonnet` files are evaluated.
    pub jsonnet: Jsonnet,
}

/// The `directory.jsonnet` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Jsonnet {
    /// `extVars`: external variables (`std.extVar`).
    pub ext_vars: Vec<JsonnetVar>,
    /// `tlas`: top-level arguments.
    pub tlas: Vec<JsonnetVar>,
    /// `libs`: library search directories, relative to the repository root.
    pub libs: Vec<String>,
}

/// One entry of `extVars` or `tlas`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsonnetVar {
    pub name: String,
    /// The value; Argo CD's build environment (`$ARGOCD_APP_NAME`...) is substituted in it.
    pub value: String,
    /// `code`: the value is Jsonnet code, not a string.
    pub code: bool,
}

impl Jsonnet {
    fn from_value(v: Option<&Value>) -> Self {
        let vars = |key: &str| -> Vec<JsonnetVar> {
            v.and_then(|v| v.get(key))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|e| JsonnetVar {
                            name: string_of(e.get("name")),
                            value: string_of(e.get("value")),
                            code: e.get("code").and_then(Value::as_bool).unwrap_or(false),
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            ext_vars: vars("extVars"),
            tlas: vars("tlas"),
            libs: v
                .and_then(|v| v.get("libs"))
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|l| string_of(Some(l))).collect())
                .unwrap_or_default(),
        }
    }
}

/// A string field, empty when absent or not a string.
fn string_of(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

impl AppSpec {
    /// Reads an Application; `None` for any other kind.
    pub fn from_resource(r: &Resource) -> Option<Self> {
        let app = Application::from_resource(r)?;
        let raw = &r.raw;
        let many: Vec<Source> = raw
            .pointer("/spec/sources")
            .and_then(Value::as_array)
            .map(|items| items.iter().map(Source::from_value).collect())
            .unwrap_or_default();
        let multi_source = !many.is_empty();
        let sources = if multi_source {
            many
        } else {
            raw.pointer("/spec/source")
                .filter(|v| v.is_object())
                .map(Source::from_value)
                .into_iter()
                .collect()
        };
        Some(Self {
            app,
            namespace: r.namespace.clone().unwrap_or_default(),
            sources,
            multi_source,
        })
    }

    /// Argo CD's instance name (`InstanceName`): the name, prefixed with `<namespace>_` when the
    /// Application lives outside the control-plane namespace. It names the app in tracking ids
    /// and in `ARGOCD_APP_NAME`.
    pub fn instance_name(&self, control_plane_namespace: &str) -> String {
        if self.namespace.is_empty() || self.namespace == control_plane_namespace {
            self.app.name.clone()
        } else {
            format!("{}_{}", self.namespace, self.app.name)
        }
    }
}

impl Source {
    /// Reads one entry of `spec.sources` (or `spec.source`).
    pub fn from_value(v: &Value) -> Self {
        let text = |key: &str| string_of(v.get(key));
        let block = |key: &str| v.get(key).filter(|b| !b.is_null()).cloned();
        let directory = block("directory").map(|d| Directory {
            recurse: d.get("recurse").and_then(Value::as_bool).unwrap_or(false),
            include: d
                .get("include")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            exclude: d
                .get("exclude")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            disable_extension_filter: d
                .get("disableExtensionFilter")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            jsonnet: Jsonnet::from_value(d.get("jsonnet")),
        });
        Self {
            repo_url: text("repoURL"),
            path: text("path"),
            target_revision: text("targetRevision"),
            chart: text("chart"),
            ref_name: text("ref"),
            blocks: Blocks {
                directory,
                helm: block("helm"),
                kustomize: block("kustomize"),
                plugin: block("plugin"),
            },
            raw: v.clone(),
        }
    }

    /// The source's path as written, or `.` for the repository root.
    pub fn path_label(&self) -> &str {
        if self.path.is_empty() {
            "."
        } else {
            &self.path
        }
    }

    /// The source's type when its blocks decide it (`GetAppSourceType`'s explicit step): `Err`
    /// when more than one block is written, `Ok(None)` when none is (then the files decide).
    pub fn explicit_type(&self) -> Result<Option<SourceType>, String> {
        let written: Vec<SourceType> = [
            (self.blocks.kustomize.is_some(), SourceType::Kustomize),
            (self.blocks.helm.is_some(), SourceType::Helm),
            (self.blocks.directory.is_some(), SourceType::Directory),
            (self.blocks.plugin.is_some(), SourceType::Plugin),
        ]
        .into_iter()
        .filter_map(|(set, t)| set.then_some(t))
        .collect();
        match written.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(format!(
                "multiple application sources defined: {}",
                many.iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        }
    }
}

/// The strings of the array `block[key]` (other items and a missing key: none).
pub(crate) fn strings(block: &Value, key: &str) -> Vec<String> {
    block
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The entries of the object `block[key]` with their string values (others as empty), sorted by
/// key.
pub(crate) fn string_map(block: &Value, key: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = block
        .get(key)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    pairs
}

/// How a source is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceType {
    /// Plain YAML/JSON files and Jsonnet.
    Directory,
    /// `helm template`.
    Helm,
    /// `kustomize build`.
    Kustomize,
    /// A config management plugin (cannot be rendered outside Argo CD).
    Plugin,
}

impl SourceType {
    /// The name Argo CD uses.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceType::Directory => "Directory",
            SourceType::Helm => "Helm",
            SourceType::Kustomize => "Kustomize",
            SourceType::Plugin => "Plugin",
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    fn app(yaml: &str) -> AppSpec {
        let loaded = load_str("app.yaml", yaml);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        AppSpec::from_resource(&loaded.resources[0]).unwrap()
    }

    #[test]
    fn sources_win_over_source_and_blocks_name_the_type() {
        let a = app(r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: team}
spec:
  project: p
  destination: {namespace: shop}
  source: {repoURL: 'https://x/ignored.git', path: ignored}
  sources:
  - {repoURL: 'https://x/repo.git', path: apps/web, directory: {recurse: true, exclude: '*.json'}}
  - {repoURL: 'https://x/values.git', ref: values}
"#);
        assert!(a.multi_source);
        assert_eq!(a.sources.len(), 2);
        assert_eq!(a.sources[0].path, "apps/web");
        let d = a.sources[0].blocks.directory.clone().unwrap();
        assert!(d.recurse);
        assert_eq!(d.exclude, "*.json");
        assert_eq!(
            a.sources[0].explicit_type(),
            Ok(Some(SourceType::Directory))
        );
        assert_eq!(a.sources[1].ref_name, "values");
        assert_eq!(a.sources[1].explicit_type(), Ok(None));
        assert_eq!(a.instance_name("argocd"), "team_web");
        assert_eq!(a.app.destination_namespace, "shop");
        assert_eq!(a.app.project, "p");
    }

    #[test]
    fn two_blocks_are_refused_as_argo_cd_refuses_them() {
        let a = app("apiVersion: argoproj.io/v1alpha1\nkind: Application\n\
             metadata: {name: web, namespace: argocd}\n\
             spec:\n  source: {repoURL: r, path: p, helm: {}, kustomize: {}}\n");
        assert_eq!(a.instance_name("argocd"), "web");
        assert_eq!(
            a.sources[0].explicit_type(),
            Err("multiple application sources defined: Kustomize,Helm".into())
        );
    }
}
