//! One source of an Application: what Argo CD's repo-server is asked to render (Argo CD 3.6.1,
//! `ApplicationSource` in `pkg/apis/application/v1alpha1/types.go`).
//!
//! The `helm`, `kustomize` and `plugin` blocks are kept as written (the renderers read them);
//! their keys are still checked, so a key of another block (`include` written under `source`
//! instead of `source.directory`) is a [`Notes::unknown`] entry. Argo CD's CRD declares every
//! field, so the API server prunes such a key when the Application is stored: it never reaches
//! the controller.

use serde_json::Value;

use super::{Fields, Notes};

/// The keys of `ApplicationSource`.
const SOURCE_KEYS: &[&str] = &[
    "repoURL",
    "path",
    "targetRevision",
    "helm",
    "kustomize",
    "directory",
    "plugin",
    "chart",
    "ref",
    "name",
    "tagPrefix",
];
/// The keys of `ApplicationSourceHelm`.
const HELM_KEYS: &[&str] = &[
    "valueFiles",
    "parameters",
    "releaseName",
    "values",
    "fileParameters",
    "version",
    "passCredentials",
    "ignoreMissingValueFiles",
    "skipCrds",
    "valuesObject",
    "namespace",
    "kubeVersion",
    "apiVersions",
    "skipTests",
    "skipSchemaValidation",
];
/// The keys of `ApplicationSourceKustomize`.
const KUSTOMIZE_KEYS: &[&str] = &[
    "namePrefix",
    "nameSuffix",
    "images",
    "commonLabels",
    "version",
    "commonAnnotations",
    "forceCommonLabels",
    "forceCommonAnnotations",
    "namespace",
    "commonAnnotationsEnvsubst",
    "replicas",
    "patches",
    "components",
    "ignoreMissingComponents",
    "labelWithoutSelector",
    "kubeVersion",
    "apiVersions",
    "labelIncludeTemplates",
];
/// The keys of `ApplicationSourcePlugin`.
const PLUGIN_KEYS: &[&str] = &["name", "env", "parameters"];

/// One source of an Application.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// `name` (3.x): the source's name in the UI and CLI.
    pub name: String,
    /// The source-type blocks written on the source.
    pub blocks: Blocks,
    /// The JSON pointer of this source in its Application (`/spec/source`,
    /// `/spec/sources/1`).
    pub pointer: String,
    /// The source as written (override files patch it).
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
    /// `name`.
    pub name: String,
    /// The value; Argo CD's build environment (`$ARGOCD_APP_NAME`...) is substituted in it.
    pub value: String,
    /// `code`: the value is Jsonnet code, not a string.
    pub code: bool,
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

impl Source {
    /// Reads one source written at JSON pointer `at` (`/spec/source`, `/spec/sources/0`),
    /// noting unknown and malformed fields.
    pub fn read(v: &Value, at: &str, notes: &mut Notes) -> Source {
        let mut f = Fields::of(Some(v), at, notes);
        let repo_url = f.string("repoURL", notes);
        let path = f.string("path", notes);
        let target_revision = f.string("targetRevision", notes);
        let chart = f.string("chart", notes);
        let ref_name = f.string("ref", notes);
        let name = f.string("name", notes);
        let directory = {
            let d = f.block("directory", notes);
            d.present().then(|| Directory::read(d, notes))
        };
        let helm = kept_block(&mut f, "helm", HELM_KEYS, notes);
        let kustomize = kept_block(&mut f, "kustomize", KUSTOMIZE_KEYS, notes);
        let plugin = kept_block(&mut f, "plugin", PLUGIN_KEYS, notes);
        f.known(SOURCE_KEYS);
        f.finish(notes);
        Source {
            repo_url,
            path,
            target_revision,
            chart,
            ref_name,
            name,
            blocks: Blocks {
                directory,
                helm,
                kustomize,
                plugin,
            },
            pointer: at.to_string(),
            raw: v.clone(),
        }
    }

    /// Reads a source without keeping notes (override files, tests).
    pub fn from_value(v: &Value) -> Source {
        Source::read(v, "", &mut Notes::default())
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

/// A block kept as written whose keys are still checked against `keys`.
fn kept_block(
    f: &mut Fields<'_>,
    key: &'static str,
    keys: &'static [&'static str],
    notes: &mut Notes,
) -> Option<Value> {
    let mut b = f.block(key, notes);
    if !b.present() {
        return None;
    }
    let raw = f.value(key).cloned();
    b.known(keys);
    b.finish(notes);
    raw
}

impl Directory {
    fn read(mut d: Fields<'_>, notes: &mut Notes) -> Directory {
        let recurse = d.bool("recurse", notes).unwrap_or(false);
        let include = d.string("include", notes);
        let exclude = d.string("exclude", notes);
        let disable_extension_filter = d.bool("disableExtensionFilter", notes).unwrap_or(false);
        let jsonnet = Jsonnet::read(d.block("jsonnet", notes), notes);
        d.finish(notes);
        Directory {
            recurse,
            include,
            exclude,
            disable_extension_filter,
            jsonnet,
        }
    }
}

impl Jsonnet {
    fn read(mut j: Fields<'_>, notes: &mut Notes) -> Jsonnet {
        let ext_vars = vars(&mut j, "extVars", notes);
        let tlas = vars(&mut j, "tlas", notes);
        let libs = j.strings("libs", notes);
        j.finish(notes);
        Jsonnet {
            ext_vars,
            tlas,
            libs,
        }
    }
}

fn vars(j: &mut Fields<'_>, key: &'static str, notes: &mut Notes) -> Vec<JsonnetVar> {
    let at = j.pointer(key);
    j.list(key, notes)
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut v = Fields::of(Some(e), &format!("{at}/{i}"), notes);
            let var = JsonnetVar {
                name: v.string("name", notes),
                value: v.string("value", notes),
                code: v.bool("code", notes).unwrap_or(false),
            };
            v.finish(notes);
            var
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn include_under_source_is_unknown_and_the_directory_block_is_typed() {
        let v = json!({
            "repoURL": "https://x/repo.git", "path": "apps", "include": "*.yaml",
            "directory": {"recurse": true, "exclude": "*.json", "jsonnet": {"libs": ["vendor"]}},
            "helm": {"valueFile": "v.yaml"}
        });
        let mut notes = Notes::default();
        let s = Source::read(&v, "/spec/source", &mut notes);
        assert_eq!(
            notes.unknown,
            vec![
                "/spec/source/helm/valueFile".to_string(),
                "/spec/source/include".into()
            ]
        );
        let d = s.blocks.directory.clone().unwrap_or_default();
        assert!(d.recurse);
        assert_eq!(d.jsonnet.libs, vec!["vendor".to_string()]);
        assert_eq!(
            s.explicit_type(),
            Err("multiple application sources defined: Helm,Directory".into())
        );
        assert_eq!(s.pointer, "/spec/source");
    }
}
