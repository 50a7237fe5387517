//! A Kustomize source rendered as Argo CD 3.6.1's repo-server renders it (`util/kustomize`
//! `Build`): the `kustomize edit` steps the source's `kustomize` block asks for, in Argo CD's
//! order, run in the source's directory — here in a copy of the repository, so the user's
//! checkout is never written — then `kustomize build <dir>` from the repository root with the
//! argocd-cm build options and the `ARGOCD_APP_*` environment.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::SourceCtx;
use super::helm::parse_kube_version;
use super::output::{objects, tail};
use super::paths::copy_tree;
use crate::model::Resource;
use crate::process::{RunFailure, run};

/// The names of a kustomization file, in the order Argo CD looks for them.
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The `kustomize` block of a source, as Argo CD reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KustomizeSpec {
    pub name_prefix: String,
    pub name_suffix: String,
    pub images: Vec<String>,
    /// (name, count) with the count as written (an integer or a string holding one).
    pub replicas: Vec<(String, Value)>,
    /// Sorted by key (Argo CD passes Go map order; kustomize's result does not depend on it).
    pub common_labels: Vec<(String, String)>,
    pub common_annotations: Vec<(String, String)>,
    pub common_annotations_envsubst: bool,
    pub force_common_labels: bool,
    pub force_common_annotations: bool,
    pub label_without_selector: bool,
    pub label_include_templates: bool,
    pub namespace: String,
    /// Patches with the fields Argo CD's typed patch keeps.
    pub patches: Vec<Value>,
    pub components: Vec<String>,
    pub ignore_missing_components: bool,
    pub version: String,
    pub kube_version: String,
    pub api_versions: Vec<String>,
}

impl KustomizeSpec {
    /// Reads the block (`None`: no block, no edits).
    pub fn from_value(block: Option<&Value>) -> Self {
        let Some(b) = block else {
            return Self::default();
        };
        let text = |key: &str| {
            b.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let flag = |key: &str| b.get(key).and_then(Value::as_bool).unwrap_or(false);
        let list = |key: &str| super::source::strings(b, key);
        let map = |key: &str| super::source::string_map(b, key);
        Self {
            name_prefix: text("namePrefix"),
            name_suffix: text("nameSuffix"),
            images: list("images"),
            replicas: b
                .get("replicas")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|r| {
                            (
                                r.get("name")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                                    .to_string(),
                                r.get("count").cloned().unwrap_or(Value::Null),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            common_labels: map("commonLabels"),
            common_annotations: map("commonAnnotations"),
            common_annotations_envsubst: flag("commonAnnotationsEnvsubst"),
            force_common_labels: flag("forceCommonLabels"),
            force_common_annotations: flag("forceCommonAnnotations"),
            label_without_selector: flag("labelWithoutSelector"),
            label_include_templates: flag("labelIncludeTemplates"),
            namespace: text("namespace"),
            patches: b
                .get("patches")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(typed_patch).collect())
                .unwrap_or_default(),
            components: list("components"),
            ignore_missing_components: flag("ignoreMissingComponents"),
            version: text("version"),
            kube_version: text("kubeVersion"),
            api_versions: list("apiVersions"),
        }
    }

    /// Whether any `kustomize edit` step (or the patch rewrite) runs.
    fn edits(&self) -> bool {
        !(self.name_prefix.is_empty()
            && self.name_suffix.is_empty()
            && self.images.is_empty()
            && self.replicas.is_empty()
            && self.common_labels.is_empty()
            && self.common_annotations.is_empty()
            && self.namespace.is_empty()
            && self.patches.is_empty()
            && self.components.is_empty())
    }
}

/// A patch as Argo CD's `KustomizePatch` type keeps it (unknown fields and empty ones go).
fn typed_patch(p: &Value) -> Value {
    let mut out = Map::new();
    for key in ["path", "patch"] {
        if let Some(s) = p.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()) {
            out.insert(key.into(), Value::String(s.into()));
        }
    }
    if let Some(t) = p.get("target").and_then(Value::as_object) {
        let mut target = Map::new();
        for key in [
            "group",
            "version",
            "kind",
            "name",
            "namespace",
            "annotationSelector",
            "labelSelector",
        ] {
            if let Some(s) = t.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()) {
                target.insert(key.into(), Value::String(s.into()));
            }
        }
        out.insert("target".into(), Value::Object(target));
    }
    if let Some(o) = p
        .get("options")
        .and_then(Value::as_object)
        .filter(|o| !o.is_empty())
    {
        let options: Map<String, Value> = o
            .iter()
            .filter_map(|(k, v)| v.as_bool().map(|b| (k.clone(), Value::Bool(b))))
            .collect();
        out.insert("options".into(), Value::Object(options));
    }
    Value::Object(out)
}

/// Renders the Kustomize source of `ctx`.
pub fn render(ctx: &SourceCtx<'_>) -> Result<Vec<Resource>, String> {
    let spec = KustomizeSpec::from_value(ctx.source.blocks.kustomize.as_ref());
    let binary = binary(ctx, &spec)?;
    let work =
        crate::interrupt::TempDir::new().map_err(|e| format!("a temporary directory: {e}"))?;
    let options = &ctx.options.kustomize_build_options;
    // Edits write into the source's directory, and `--enable-helm` pulls each `helmCharts`
    // chart into the kustomization's `charts/` (its default chartHome): both run in a copy of
    // the repository, so the user's checkout is never written.
    let enable_helm = options.split_whitespace().any(|o| o == "--enable-helm");
    let (root, dir) = if spec.edits() || enable_helm {
        let copy = work.path().join("checkout");
        copy_tree(ctx.root, &copy)?;
        let rel = ctx.app_dir.strip_prefix(ctx.root).unwrap_or(Path::new(""));
        let dir = copy.join(rel);
        if spec.edits() {
            edit(ctx, &binary, &spec, &copy, &dir)?;
        }
        (copy, dir)
    } else {
        (ctx.root.to_path_buf(), ctx.app_dir.clone())
    };
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let mut args = vec!["build".to_string(), dir.to_string_lossy().into_owned()];
    if !options.trim().is_empty() {
        args.extend(options.split_whitespace().map(str::to_string));
        if enable_helm && !options.contains("--helm-command") {
            // Argo CD's image has its helm on PATH, where kustomize looks for it; here it is
            // the helm Helm sources use (--helm), which may be elsewhere.
            args.extend(["--helm-command".into(), ctx.options.helm.clone()]);
        }
        if enable_helm && version_at_least(&binary, (5, 3, 0)) {
            let kube_version = if spec.kube_version.is_empty() {
                &ctx.options.kube_version
            } else {
                &spec.kube_version
            };
            let kube_version = parse_kube_version(kube_version)?;
            if !kube_version.is_empty() {
                args.extend(["--helm-kube-version".into(), kube_version]);
            }
            let api_versions = if spec.api_versions.is_empty() {
                &ctx.options.api_versions
            } else {
                &spec.api_versions
            };
            for v in api_versions {
                args.extend(["--helm-api-versions".into(), v.clone()]);
            }
        }
    }
    let mut command = Command::new(&binary);
    command
        .args(&args)
        .current_dir(&root)
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(ctx.env.vars());
    let output = kustomize(ctx, command, "kustomize build")?;
    let label = format!("{} (kustomize build)", ctx.label());
    objects(&label, &String::from_utf8_lossy(&output))
}

/// The binary: the one registered under `kustomize.version` when the source names one (argocd-cm
/// `kustomize.path.<version>`, here `--kustomize-version NAME=PATH`), else `--kustomize`.
fn binary(ctx: &SourceCtx<'_>, spec: &KustomizeSpec) -> Result<PathBuf, String> {
    if spec.version.is_empty() {
        return Ok(PathBuf::from(&ctx.options.kustomize));
    }
    ctx.options
        .kustomize_versions
        .iter()
        .find(|(name, _)| *name == spec.version)
        .map(|(_, path)| PathBuf::from(path))
        .ok_or_else(|| {
            format!(
                "kustomize version {} is not registered (Argo CD reads argocd-cm \
                 kustomize.path.{0}; give it with --kustomize-version {0}=PATH)",
                spec.version
            )
        })
}

/// The edit steps, in Argo CD's order, in `dir` (inside the copy `root`).
fn edit(
    ctx: &SourceCtx<'_>,
    binary: &Path,
    spec: &KustomizeSpec,
    root: &Path,
    dir: &Path,
) -> Result<(), String> {
    let step = |args: Vec<String>, with_env: bool| -> Result<(), String> {
        let mut command = Command::new(binary);
        command.args(&args).current_dir(dir);
        if with_env {
            command.envs(ctx.env.vars());
        }
        kustomize(ctx, command, &format!("kustomize {}", args.join(" "))).map(|_| ())
    };
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if !spec.name_prefix.is_empty() {
        let mut a = words(&["edit", "set", "nameprefix", "--"]);
        a.push(spec.name_prefix.clone());
        step(a, false)?;
    }
    if !spec.name_suffix.is_empty() {
        let mut a = words(&["edit", "set", "namesuffix", "--"]);
        a.push(spec.name_suffix.clone());
        step(a, false)?;
    }
    if !spec.images.is_empty() {
        let mut a = words(&["edit", "set", "image"]);
        a.extend(spec.images.iter().map(|i| ctx.env.substitute(i)));
        step(a, false)?;
    }
    if !spec.replicas.is_empty() {
        let mut a = words(&["edit", "set", "replicas"]);
        for (name, count) in &spec.replicas {
            let n = match count {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.parse::<i64>().ok(),
                _ => None,
            }
            .ok_or_else(|| format!("kustomize.replicas {name}: count {count} is not an integer"))?;
            a.push(format!("{name}={n}"));
        }
        step(a, false)?;
    }
    if !spec.common_labels.is_empty() {
        let mut a = words(&["edit", "add", "label"]);
        for (set, flag) in [
            (spec.force_common_labels, "--force"),
            (spec.label_without_selector, "--without-selector"),
            (spec.label_include_templates, "--include-templates"),
        ] {
            if set {
                a.push(flag.into());
            }
        }
        a.extend(
            spec.common_labels
                .iter()
                .map(|(k, v)| format!("{k}:{}", ctx.env.substitute(v))),
        );
        step(a, false)?;
    }
    if !spec.common_annotations.is_empty() {
        let mut a = words(&["edit", "add", "annotation"]);
        if spec.force_common_annotations {
            a.push("--force".into());
        }
        a.extend(spec.common_annotations.iter().map(|(k, v)| {
            if spec.common_annotations_envsubst {
                format!("{k}:{}", ctx.env.substitute(v))
            } else {
                format!("{k}:{v}")
            }
        }));
        step(a, false)?;
    }
    if !spec.namespace.is_empty() {
        let mut a = words(&["edit", "set", "namespace", "--"]);
        a.push(spec.namespace.clone());
        step(a, false)?;
    }
    if !spec.patches.is_empty() {
        add_patches(dir, &spec.patches)?;
    }
    if !spec.components.is_empty() {
        let mut found = spec.components.clone();
        if spec.ignore_missing_components {
            // Argo CD 3.6.1 stops at the first component it finds (its loop breaks out of the
            // outer label), so later components are dropped even when they exist.
            found = spec
                .components
                .iter()
                .find(|c| {
                    let d = dir.join(c);
                    d.starts_with(root) && KUSTOMIZATION_FILES.iter().any(|f| d.join(f).is_file())
                })
                .cloned()
                .into_iter()
                .collect();
        }
        if !found.is_empty() {
            let mut a = words(&["edit", "add", "component"]);
            a.extend(found);
            step(a, true)?;
        }
    }
    Ok(())
}

/// Appends the source's patches to the kustomization's `patches` (there is no edit command for
/// them; Argo CD rewrites the file).
fn add_patches(dir: &Path, patches: &[Value]) -> Result<(), String> {
    let Some(file) = KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
    else {
        return Err("kustomization file not found in the path".into());
    };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut k = crate::manifest::parse_yaml_value(&text)
        .map_err(|e| format!("failed to unmarshal kustomization.yaml: {e}"))?;
    let Some(map) = k.as_object_mut() else {
        return Err("kustomization.yaml is not a mapping".into());
    };
    match map.get_mut("patches") {
        Some(Value::Array(list)) => list.extend(patches.iter().cloned()),
        Some(other) => {
            return Err(format!(
                "expected 'patches' field in kustomization.yaml to be a list, but got {other}"
            ));
        }
        None => {
            map.insert("patches".into(), Value::Array(patches.to_vec()));
        }
    }
    let json = serde_json::to_string_pretty(&k).map_err(|e| e.to_string())?;
    std::fs::write(&file, json).map_err(|e| format!("{}: {e}", file.display()))
}

/// Runs one kustomize command; its failure names the command and kustomize's own words.
/// The reason `review` gives an Application whose kustomization inflates Helm charts while
/// `--enable-helm` is not among the build options.
pub const HELM_NOT_ENABLED: &str = "kustomize helmCharts need --enable-helm";

fn kustomize(ctx: &SourceCtx<'_>, command: Command, what: &str) -> Result<Vec<u8>, String> {
    match run(command, ctx.options.timeout) {
        Ok(out) => Ok(out),
        Err(RunFailure::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(super::missing_tool("kustomize", &ctx.options.kustomize))
        }
        Err(RunFailure::Spawn(e)) | Err(RunFailure::Io(e)) => Err(format!("{what}: {e}")),
        Err(RunFailure::Exit { stderr, .. }) => {
            let mut message = format!("{what} failed: {}", tail(&stderr, 600));
            if String::from_utf8_lossy(&stderr).contains("must specify --enable-helm") {
                // Argo CD builds with argocd-cm's kustomize.buildOptions; a repository whose
                // kustomizations inflate charts has --enable-helm there.
                message.push_str(&format!(
                    " ({HELM_NOT_ENABLED}: Argo CD passes argocd-cm's kustomize.buildOptions to \
                     kustomize build; give the same here with --kustomize-build-options \
                     --enable-helm)"
                ));
            }
            Err(message)
        }
        Err(RunFailure::Timeout { .. }) => Err(format!(
            "{what} timed out after {:?} (a remote base kustomize could not fetch?)",
            ctx.options.timeout.unwrap_or_default()
        )),
    }
}

/// Whether the kustomize binary is at least `want`: its `version` answer, read once per binary
/// as Argo CD reads it once per process; an answer without a version counts as newest.
fn version_at_least(binary: &Path, want: Semver) -> bool {
    static PROBED: OnceLock<std::sync::Mutex<Vec<(PathBuf, Semver)>>> = OnceLock::new();
    let cache = PROBED.get_or_init(Default::default);
    let found = cache
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|(b, _)| b == binary).map(|(_, v)| *v));
    let version = found.unwrap_or_else(|| {
        let answer = Command::new(binary)
            .args(["version"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let v = semver_in(&answer).unwrap_or((99, 99, 99));
        if let Ok(mut c) = cache.lock() {
            c.push((binary.to_path_buf(), v));
        }
        v
    });
    version >= want
}

/// major, minor, patch.
type Semver = (u64, u64, u64);

/// The first `v1.2.3`-like version in `text` (missing minor/patch count as 0).
fn semver_in(text: &str) -> Option<Semver> {
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let numbers: Vec<u64> = text[start..]
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .next()?
        .split('.')
        .filter(|p| !p.is_empty())
        .take(3)
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    Some((
        numbers[0],
        numbers.get(1).copied().unwrap_or(0),
        numbers.get(2).copied().unwrap_or(0),
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_block_is_read_as_argo_cd_types_it() {
        let spec = KustomizeSpec::from_value(Some(&json!({
            "namePrefix": "p-",
            "images": ["web=registry/web:$ARGOCD_APP_REVISION_SHORT"],
            "commonLabels": {"team": "shop", "app": "web"},
            "replicas": [{"name": "web", "count": "3"}],
            "patches": [{"target": {"kind": "Deployment", "name": "", "bogus": "x"},
                         "patch": "- op: add", "unknown": 1}]
        })));
        assert_eq!(spec.name_prefix, "p-");
        assert_eq!(
            spec.common_labels,
            vec![
                ("app".to_string(), "web".to_string()),
                ("team".to_string(), "shop".to_string())
            ]
        );
        assert_eq!(
            spec.patches,
            [json!({"patch": "- op: add", "target": {"kind": "Deployment"}})]
        );
        assert!(spec.edits());
        assert!(!KustomizeSpec::from_value(None).edits());
    }

    #[test]
    fn versions_are_found_in_kustomize_answers() {
        assert_eq!(semver_in("v5.8.3\n"), Some((5, 8, 3)));
        assert_eq!(
            semver_in("{kustomize/v3.8.1  2020-07-16T00:58:46Z  }"),
            Some((3, 8, 1))
        );
        assert_eq!(semver_in("(devel)"), None);
    }
}
