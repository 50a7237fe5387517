//! `syncguard render`: Applications rendered from a local checkout as Argo CD's repo-server
//! renders them, so that `check`, `plan` and `review` can work on a GitOps repository instead of
//! on manifests someone rendered by hand.
//!
//! Per Application, per source: find the source's directory (the local repository, or one given
//! with `--repo URL=DIR`), decide its type as Argo CD does (the block written on the source, else
//! the files of its directory), render it, and write the tracking id on every object. A source
//! that is not local is skipped with a note; a source that cannot be rendered is an error of its
//! Application only — every other Application is still rendered.
//!
//! Rendered today: directory sources (plain YAML/JSON). Helm and Kustomize sources are named as
//! such and reported as not rendered (issue 24 continues with them); config management plugins
//! cannot be rendered outside Argo CD.

mod directory;
mod source;
mod tracking;

use std::path::{Component, Path, PathBuf};

pub use source::{AppSpec, Directory, Source, SourceType};
pub use tracking::TRACKING_ID;

use crate::model::Resource;

/// Where sources' repositories are on this machine.
#[derive(Debug, Clone, Default)]
pub struct Repos {
    /// (normalised repository URL, checkout directory), the first match wins.
    entries: Vec<(String, PathBuf)>,
}

impl Repos {
    /// Adds `url` as checked out at `dir`.
    pub fn add(&mut self, url: &str, dir: PathBuf) {
        self.entries.push((normalise_url(url), dir));
    }

    /// The checkout of `url`, when known.
    pub fn dir_for(&self, url: &str) -> Option<&Path> {
        let key = normalise_url(url);
        self.entries
            .iter()
            .find(|(u, _)| *u == key)
            .map(|(_, d)| d.as_path())
    }
}

/// A repository URL reduced to what identifies it: no scheme or user, `host/path`, no `.git`
/// suffix or trailing slash, lower case (`git@github.com:org/repo.git` and
/// `https://github.com/org/repo` are the same repository).
pub fn normalise_url(url: &str) -> String {
    let mut u = url.trim().to_ascii_lowercase();
    for scheme in ["https://", "http://", "ssh://", "git://", "file://"] {
        if let Some(rest) = u.strip_prefix(scheme) {
            u = rest.to_string();
            break;
        }
    }
    if let Some((user, rest)) = u.split_once('@')
        && !user.contains('/')
    {
        u = rest.to_string();
    }
    // scp-like `host:path` (but not `host:port/path`).
    if let Some((host, rest)) = u.split_once(':')
        && !host.contains('/')
        && !rest
            .split('/')
            .next()
            .is_some_and(|p| p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty())
    {
        u = format!("{host}/{rest}");
    }
    let u = u.trim_end_matches('/');
    u.strip_suffix(".git").unwrap_or(u).to_string()
}

/// Options of a render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// The namespace Argo CD's control plane runs in (Applications elsewhere are named
    /// `<namespace>_<name>`).
    pub control_plane_namespace: String,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            control_plane_namespace: "argocd".into(),
        }
    }
}

/// One Application's render.
#[derive(Debug)]
pub struct Rendered {
    /// The Application's instance name (as in its tracking ids).
    pub app: String,
    /// Where the Application was read from (`file:line`), when known.
    pub origin: Option<String>,
    /// The objects, in Argo CD's order, each with its tracking id.
    pub resources: Vec<Resource>,
    /// Sources not rendered on purpose (not local), one line each.
    pub skipped: Vec<String>,
    /// Why sources could not be rendered, one line each.
    pub errors: Vec<String>,
}

/// Renders every Application among `resources` (other objects are ignored).
pub fn render_all(resources: &[Resource], repos: &Repos, options: &RenderOptions) -> Vec<Rendered> {
    resources
        .iter()
        .filter_map(|r| AppSpec::from_resource(r).map(|spec| render_app(r, &spec, repos, options)))
        .collect()
}

fn render_app(r: &Resource, spec: &AppSpec, repos: &Repos, options: &RenderOptions) -> Rendered {
    let app = spec.instance_name(&options.control_plane_namespace);
    let mut out = Rendered {
        app: app.clone(),
        origin: r
            .origin
            .as_ref()
            .map(|o| format!("{}:{}", o.file, o.start.line)),
        resources: Vec::new(),
        skipped: Vec::new(),
        errors: Vec::new(),
    };
    if spec.sources.is_empty() {
        out.errors
            .push("the Application has no source (spec.source or spec.sources)".into());
    }
    for (n, source) in spec.sources.iter().enumerate() {
        let which = if spec.multi_source {
            format!("source {} ({})", n + 1, source.repo_url)
        } else {
            format!("source {}", source.repo_url)
        };
        // In a multi-source Application a source without path and chart only lends its files
        // (`ref`) and renders nothing.
        if spec.multi_source && source.path.is_empty() && source.chart.is_empty() {
            continue;
        }
        if !source.chart.is_empty() {
            out.skipped.push(format!(
                "{which}: Helm chart {} from a chart repository, not from a checkout",
                source.chart
            ));
            continue;
        }
        let Some(root) = repos.dir_for(&source.repo_url) else {
            out.skipped.push(format!(
                "{which}: not the local repository (map it with --repo {}=DIR)",
                source.repo_url
            ));
            continue;
        };
        match render_source(root, source) {
            Ok(objects) => out.resources.extend(
                objects
                    .into_iter()
                    .map(|o| tracking::track(o, &app, &spec.app.destination_namespace)),
            ),
            Err(e) => out.errors.push(format!("{which}: {e}")),
        }
    }
    out
}

fn render_source(root: &Path, source: &Source) -> Result<Vec<Resource>, String> {
    let app_dir = app_dir(root, &source.path)?;
    let kind = match source.explicit_type()? {
        Some(t) => t,
        None => discover(&app_dir)?,
    };
    match kind {
        SourceType::Directory => {
            let spec = source.blocks.directory.clone().unwrap_or_default();
            directory::render(&app_dir, root, &spec)
        }
        SourceType::Helm | SourceType::Kustomize => Err(format!(
            "path {}: a {} source, which syncguard render does not render yet",
            source.path,
            kind.as_str()
        )),
        SourceType::Plugin => Err(format!(
            "path {}: a config management plugin source, which only Argo CD can render",
            source.path
        )),
    }
}

/// The source's directory: `path` below the repository root, which must stay inside it, exist
/// and be a directory (Argo CD's `path.Path`).
fn app_dir(root: &Path, path: &str) -> Result<PathBuf, String> {
    let rel = Path::new(path);
    if rel.is_absolute() || rel.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!(
            "path {path:?} must be relative and stay inside the repository"
        ));
    }
    let dir = root.join(rel);
    if !dir.is_dir() {
        return Err(format!(
            "path {path:?} is not a directory of {}",
            root.display()
        ));
    }
    Ok(dir)
}

/// The type the files directly in `dir` give (Argo CD's discovery): a file whose name ends
/// with `Chart.yaml` means Helm, `kustomization.yaml`, `kustomization.yml` or `Kustomization`
/// means Kustomize; the last such file in name order decides; none means Directory.
fn discover(dir: &Path) -> Result<SourceType, String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names
        .iter()
        .filter_map(|n| {
            if n.ends_with("Chart.yaml") {
                Some(SourceType::Helm)
            } else if matches!(
                n.as_str(),
                "kustomization.yaml" | "kustomization.yml" | "Kustomization"
            ) {
                Some(SourceType::Kustomize)
            } else {
                None
            }
        })
        .next_back()
        .unwrap_or(SourceType::Directory))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    #[test]
    fn urls_of_one_repository_normalise_alike() {
        for u in [
            "https://github.com/Org/Repo.git",
            "https://github.com/org/repo/",
            "git@github.com:org/repo.git",
            "ssh://git@github.com/org/repo",
        ] {
            assert_eq!(normalise_url(u), "github.com/org/repo", "{u}");
        }
        assert_eq!(
            normalise_url("ssh://git@host:2222/org/repo"),
            "host:2222/org/repo"
        );
        assert_ne!(
            normalise_url("https://github.com/org/other"),
            "github.com/org/repo"
        );
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn every_application_is_rendered_or_says_why_not() {
        let repo = tempfile::tempdir().unwrap();
        write(
            repo.path(),
            "apps/web/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n",
        );
        write(
            repo.path(),
            "apps/chart/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 1.0.0\n",
        );
        write(
            repo.path(),
            "apps/both/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 1.0.0\n",
        );
        write(
            repo.path(),
            "apps/both/kustomization.yaml",
            "resources: []\n",
        );
        let apps = load_str(
            "apps.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\n\
             spec: {destination: {namespace: shop}, source: {repoURL: 'git@example.com:org/gitops.git', path: apps/web}}\n\
             ---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: chart, namespace: team}\n\
             spec: {source: {repoURL: 'https://example.com/org/gitops', path: apps/chart}}\n\
             ---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: both}\n\
             spec: {source: {repoURL: 'https://example.com/org/gitops', path: apps/both}}\n\
             ---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: remote}\n\
             spec: {source: {repoURL: 'https://example.com/org/other', path: x}}\n\
             ---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: escape}\n\
             spec: {source: {repoURL: 'https://example.com/org/gitops', path: ../x}}\n",
        );
        assert!(apps.errors.is_empty(), "{:?}", apps.errors);
        let mut repos = Repos::default();
        repos.add(
            "https://example.com/org/gitops.git",
            repo.path().to_path_buf(),
        );
        let out = render_all(&apps.resources, &repos, &RenderOptions::default());
        assert_eq!(out.len(), 5);
        assert_eq!(out[0].app, "web");
        assert_eq!(out[0].resources.len(), 1);
        assert_eq!(
            out[0].resources[0].raw["metadata"]["annotations"][TRACKING_ID],
            "web:/ConfigMap:shop/cfg"
        );
        assert!(out[0].errors.is_empty() && out[0].skipped.is_empty());
        assert_eq!(out[1].app, "team_chart");
        assert!(
            out[1].errors[0].contains("a Helm source"),
            "{:?}",
            out[1].errors
        );
        // Chart.yaml and kustomization.yaml: the last in name order (kustomization) decides.
        assert!(
            out[2].errors[0].contains("a Kustomize source"),
            "{:?}",
            out[2].errors
        );
        assert!(
            out[3].skipped[0].contains("not the local repository"),
            "{:?}",
            out[3].skipped
        );
        assert!(out[3].errors.is_empty());
        assert!(
            out[4].errors[0].contains("stay inside the repository"),
            "{:?}",
            out[4].errors
        );
    }
}
