//! Where the Applications of a checkout are, and which of them render a Helm chart.
//!
//! `review` reads a revision's Applications from every file under its paths that holds one.
//! `check`, `explain` and `inputs` take paths too, and a GitOps repository whose Applications
//! are themselves a Helm chart (`apps/Chart.yaml`, `apps/templates/web.yaml` with `{{ }}`) hands
//! them files that are not manifests: a pre-commit hook passes `apps/templates/web.yaml`. Such a
//! path stands for its chart, and the chart for the Applications of the checkout whose source
//! renders it (the root Application of an app-of-apps); when no Application renders it, for an
//! Application of that path with the chart's own values, as Argo CD would render one.

use std::path::{Path, PathBuf};

use super::{Application, Repos, is_application_set};
use crate::manifest::load_str;
use crate::model::Resource;

/// The Applications and ApplicationSets under `paths` of the checkout, read from every YAML/JSON
/// file that mentions `Application`, with paths relative to the checkout. A file that does not
/// parse is an error when it looks like an Application manifest and is not a template (`{{`).
pub fn applications_in(dir: &Path, paths: &[PathBuf]) -> (Vec<Resource>, Vec<String>) {
    let mut files = Vec::new();
    for p in paths {
        // Only paths of the repository: an absolute one would read the working tree.
        if p.is_absolute() {
            continue;
        }
        let full = dir.join(p);
        if full.is_dir() {
            walk(&full, &mut files);
        } else if full.is_file() {
            files.push(full);
        }
    }
    files.sort();
    files.dedup();
    let mut resources = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        if !text.contains("Application") {
            continue;
        }
        let label = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        let loaded = load_str(&label, &text);
        let wanted =
            |r: &Resource| Application::from_resource(r).is_some() || is_application_set(r);
        if loaded.resources.iter().any(wanted) {
            errors.extend(loaded.errors.iter().map(ToString::to_string));
            resources.extend(loaded.resources.into_iter().filter(|r| wanted(r)));
        } else if !loaded.errors.is_empty() && !text.contains("{{") && names_application_kind(&text)
        {
            // A broken Application file (a Helm template that mentions Applications is not).
            errors.extend(loaded.errors.iter().map(ToString::to_string));
        }
    }
    (resources, errors)
}

/// Whether a document of `text` is of kind Application or ApplicationSet at its top level (a
/// kustomization whose patch targets `kind: Application` is not).
fn names_application_kind(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_end();
        l == "kind: Application" || l == "kind: ApplicationSet"
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        if name == ".git" {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else if path
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        {
            out.push(path);
        }
    }
}

/// The paths given, split into those loaded as manifests and the Helm charts some of them lie in
/// (a chart's directory, or any file under it: templates, values files, `Chart.yaml`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ChartPaths {
    pub manifests: Vec<PathBuf>,
    /// Chart directories, each once, in the order first named.
    pub charts: Vec<PathBuf>,
}

/// Splits `paths` (`-`, standard input, is a manifest path).
pub fn chart_paths(paths: &[PathBuf]) -> ChartPaths {
    let mut out = ChartPaths::default();
    for p in paths {
        match chart_of(p) {
            Some(chart) if !out.charts.contains(&chart) => out.charts.push(chart),
            Some(_) => {}
            None => out.manifests.push(p.clone()),
        }
    }
    out
}

/// The Helm chart `path` is or lies in: the nearest directory from it upwards holding
/// `Chart.yaml`, not above the top of its git checkout.
fn chart_of(path: &Path) -> Option<PathBuf> {
    if path.as_os_str() == "-" {
        return None;
    }
    let path = std::fs::canonicalize(path).ok()?;
    let mut dir = if path.is_dir() {
        path.as_path()
    } else {
        path.parent()?
    };
    loop {
        if dir.join("Chart.yaml").is_file() {
            return helm_input(dir, &path).then(|| dir.to_path_buf());
        }
        if dir.join(".git").exists() {
            return None;
        }
        dir = dir.parent()?;
    }
}

/// Whether `path`, inside the chart at `chart`, is what Helm reads as the chart: the chart's
/// directory, `Chart.yaml`, a values file at its top, or anything under `templates/`. Other files
/// of a chart's directory (an example Application in `examples/`, plain `crds/`) are manifests.
fn helm_input(chart: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(chart) else {
        return false;
    };
    let mut parts = rel.components();
    let Some(first) = parts.next() else {
        return true; // the chart's directory
    };
    let first = first.as_os_str().to_string_lossy();
    if first == "templates" {
        return true;
    }
    parts.next().is_none()
        && (first == "Chart.yaml"
            || (first.starts_with("values")
                && (first.ends_with(".yaml") || first.ends_with(".yml"))))
}

/// The Applications of the checkouts holding `charts` (every file of each checkout, as
/// [`applications_in`] reads them) with a source that renders one of them, and the charts none
/// of them renders. A chart outside every checkout `repos` knows is an error: an Application
/// could not name it.
#[derive(Debug, Default)]
pub struct ChartApplications {
    pub applications: Vec<Resource>,
    pub unrendered: Vec<UnrenderedChart>,
    pub errors: Vec<String>,
}

/// A chart no Application of its checkout names as its source (it may still be rendered by an
/// Application that is itself a template of another chart: see [`renders_chart`]).
#[derive(Debug, Clone)]
pub struct UnrenderedChart {
    pub dir: PathBuf,
    /// A URL of its repository, and its path there.
    pub url: String,
    pub path: PathBuf,
}

impl UnrenderedChart {
    /// An Application of this chart as a user would write it: named after its directory, in
    /// `namespace`, project `default`, destination namespace `default`, the chart's own values.
    pub fn application(&self, namespace: &str) -> Option<Resource> {
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_else(|| "chart".into());
        let value = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "project": "default",
                "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"},
                "source": {"repoURL": self.url, "path": self.path.to_string_lossy().replace('\\', "/")},
            },
        });
        Resource::from_value(value, None).ok()
    }
}

pub fn chart_applications(charts: &[PathBuf], repos: &Repos) -> ChartApplications {
    let mut out = ChartApplications::default();
    let mut read: Vec<(PathBuf, Vec<Resource>)> = Vec::new();
    for chart in charts {
        let Some((url, root)) = repos.checkout_holding(chart) else {
            out.errors.push(format!(
                "{} is a Helm chart outside a git checkout with a remote: the Applications that \
                 render it name a repository URL (map one with --repo URL=DIR)",
                chart.display()
            ));
            continue;
        };
        if !read.iter().any(|(r, _)| *r == root) {
            let (apps, _) = applications_in(&root, &[PathBuf::from(".")]);
            read.push((root.clone(), apps));
        }
        let apps = read
            .iter()
            .find(|(r, _)| *r == root)
            .map(|(_, a)| a.as_slice())
            .unwrap_or_default();
        let found: Vec<&Resource> = apps
            .iter()
            .filter(|r| renders_chart(r, repos, chart))
            .collect();
        if found.is_empty() {
            out.unrendered.push(UnrenderedChart {
                dir: chart.clone(),
                url,
                path: chart.strip_prefix(&root).unwrap_or(chart).to_path_buf(),
            });
        }
        for r in found {
            let same =
                |x: &Resource| x.kind == r.kind && x.name == r.name && x.namespace == r.namespace;
            if !out.applications.iter().any(same) {
                out.applications.push(r.clone());
            }
        }
    }
    out
}

/// Whether `r` is an Application with a source of the chart directory `chart` (a path of a
/// repository `repos` knows).
pub fn renders_chart(r: &Resource, repos: &Repos, chart: &Path) -> bool {
    Application::from_resource(r).is_some_and(|app| {
        app.sources.iter().any(|s| {
            s.chart.is_empty()
                && repos
                    .dir_for(&s.repo_url)
                    .is_some_and(|d| same_dir(&d.join(&s.path), chart))
        })
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_template_stands_for_its_chart_and_other_paths_stay_manifests() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        for (path, text) in [
            (
                "apps/Chart.yaml",
                "apiVersion: v2\nname: apps\nversion: 1.0.0\n",
            ),
            ("apps/templates/web.yaml", "kind: {{ .Values.kind }}\n"),
            ("apps/values.yaml", "kind: Application\n"),
            ("plain/cm.yaml", "kind: ConfigMap\n"),
            ("apps/examples/app.yaml", "kind: Application\n"),
            ("apps/crds/crd.yaml", "kind: CustomResourceDefinition\n"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let apps = std::fs::canonicalize(root.join("apps")).unwrap();
        let split = chart_paths(&[
            root.join("apps/templates/web.yaml"),
            root.join("plain/cm.yaml"),
            root.join("apps/values.yaml"),
            PathBuf::from("-"),
            root.join("apps"),
            // Files of the chart's directory Helm does not read as the chart are manifests.
            root.join("apps/examples/app.yaml"),
            root.join("apps/crds/crd.yaml"),
        ]);
        assert_eq!(
            split,
            ChartPaths {
                manifests: vec![
                    root.join("plain/cm.yaml"),
                    PathBuf::from("-"),
                    root.join("apps/examples/app.yaml"),
                    root.join("apps/crds/crd.yaml"),
                ],
                charts: vec![apps],
            }
        );
    }
}
