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
//! Rendered: directory sources (plain YAML/JSON, and Jsonnet with the `jsonnet` command),
//! Helm sources (`helm template`) and Kustomize sources (`kustomize build`), each with the
//! arguments and environment Argo CD gives them, multi-source Applications with `$ref` value
//! files. Config management plugins cannot be rendered outside Argo CD and are reported as such.

mod appset;
mod chart_repo;
mod credentials;
mod directory;
mod discover;
mod env;
mod expand;
mod helm;
mod jsonnet;
mod kustomize;
mod normalise;
mod output;
mod overrides;
mod paths;
mod source;
mod tracking;

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use appset::{clusters_of, is_application_set};
pub use chart_repo::{
    FAILED as CHART_PULL_FAILED, NOT_FOUND as CHART_VERSION_NOT_FOUND,
    REFUSED as CHART_CREDENTIALS_REFUSED, UNREACHABLE as CHART_REPOSITORY_UNREACHABLE,
    default_cache as default_chart_cache,
};
pub use discover::{
    ChartApplications, ChartPaths, UnrenderedChart, applications_in, chart_applications,
    chart_paths, renders_chart,
};
pub use env::{AppEnv, EnvInputs};
pub use expand::{Expansion, expand};
pub use helm::{parse_kube_version, template_file};
pub use kustomize::HELM_NOT_ENABLED as KUSTOMIZE_HELM_NOT_ENABLED;
pub use normalise::as_the_controller_sees;
pub use source::{Application, Directory, Source, SourceType};
pub use tracking::{TRACKING_ID, tracked_app};

use crate::model::Resource;

/// Where sources' repositories are on this machine.
#[derive(Debug, Clone, Default)]
pub struct Repos {
    entries: Vec<Checkout>,
}

/// One known repository.
#[derive(Debug, Clone)]
struct Checkout {
    /// The normalised repository URL.
    url: String,
    /// Its checkout directory.
    dir: PathBuf,
    /// The commit rendered (`ARGOCD_APP_REVISION`), empty when unknown.
    revision: String,
}

impl Repos {
    /// Adds `url` as checked out at `dir`, at commit `revision` (empty when unknown).
    pub fn add(&mut self, url: &str, dir: PathBuf, revision: &str) {
        self.entries.push(Checkout {
            url: normalise_url(url),
            dir,
            revision: revision.to_string(),
        });
    }

    /// The checkout of `url`, when known.
    pub fn dir_for(&self, url: &str) -> Option<&Path> {
        self.find(url).map(|c| c.dir.as_path())
    }

    /// The checkout `path` lies in (the deepest one), with a URL that names it.
    pub fn checkout_holding(&self, path: &Path) -> Option<(String, PathBuf)> {
        let path = std::fs::canonicalize(path).ok()?;
        self.entries
            .iter()
            .filter_map(|c| Some((c, std::fs::canonicalize(&c.dir).ok()?)))
            .filter(|(_, dir)| path.starts_with(dir))
            .max_by_key(|(_, dir)| dir.components().count())
            .map(|(c, dir)| (c.url.clone(), dir))
    }

    fn find(&self, url: &str) -> Option<&Checkout> {
        let key = normalise_url(url);
        self.entries.iter().find(|c| c.url == key)
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
    /// The helm binary (a name looked up on PATH, or a path).
    pub helm: String,
    /// The kustomize binary.
    pub kustomize: String,
    /// The jsonnet binary (go-jsonnet's command) `.jsonnet` files are evaluated with.
    pub jsonnet: String,
    /// Kustomize binaries registered by version name (argocd-cm `kustomize.path.<name>`).
    pub kustomize_versions: Vec<(String, String)>,
    /// argocd-cm `kustomize.buildOptions`.
    pub kustomize_build_options: String,
    /// The destination cluster's version as Argo CD reads it (`v1.34.1`); empty: none passed.
    pub kube_version: String,
    /// The destination cluster's API versions (`apps/v1`, `apps/v1/Deployment`...); empty: none.
    pub api_versions: Vec<String>,
    /// How long one helm or kustomize run may take.
    pub timeout: Option<Duration>,
    /// Objects holding the cluster Secrets ApplicationSets' clusters generators choose among
    /// (`--clusters`), besides those of the input.
    pub clusters: Vec<Resource>,
    /// Where charts pulled from chart repositories and OCI registries are kept, by repository,
    /// chart and version (`--chart-cache`).
    pub chart_cache: PathBuf,
    /// OCI registries (`host:port`) spoken to over plain HTTP (`--oci-plain-http`; Argo CD's
    /// `insecureOCIForceHttp`).
    pub oci_plain_http: Vec<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            control_plane_namespace: "argocd".into(),
            helm: "helm".into(),
            kustomize: "kustomize".into(),
            jsonnet: "jsonnet".into(),
            kustomize_versions: Vec::new(),
            kustomize_build_options: String::new(),
            kube_version: String::new(),
            api_versions: Vec::new(),
            timeout: Some(Duration::from_secs(120)),
            clusters: Vec::new(),
            chart_cache: chart_repo::default_cache(),
            oci_plain_http: Vec::new(),
        }
    }
}

/// Everything one source's render needs.
pub(crate) struct SourceCtx<'a> {
    /// The source's repository checkout.
    pub root: &'a Path,
    /// The source's directory inside it.
    pub app_dir: PathBuf,
    pub source: &'a Source,
    /// The instance name.
    pub app_name: &'a str,
    pub dest_namespace: &'a str,
    pub env: AppEnv,
    /// `$<ref>` → that source's checkout (`None`: not a local repository).
    pub refs: &'a [(String, Option<PathBuf>)],
    pub multi_source: bool,
    pub options: &'a RenderOptions,
    /// A pulled chart's `name-version` (`web-2.0.0`): the label of its objects, instead of a
    /// path of the checkout.
    pub chart: Option<String>,
}

impl SourceCtx<'_> {
    /// The source's path as written, or `.` for the repository root; a pulled chart's
    /// `name-version`.
    pub fn label(&self) -> &str {
        self.chart.as_deref().unwrap_or(self.source.path_label())
    }
}

/// The error of a tool that is not there, naming how to give it.
pub(crate) fn missing_tool(tool: &str, given: &str) -> String {
    format!(
        "{tool} is not installed: {given:?} was not found (put {tool} on PATH or give it with \
         --{tool} PATH)"
    )
}

/// One Application's render (or one ApplicationSet's Applications).
#[derive(Debug)]
pub struct Rendered {
    /// The Application's instance name (as in its tracking ids); an ApplicationSet's name.
    pub app: String,
    /// The namespace the Application or ApplicationSet itself lives in (its
    /// `metadata.namespace`, else the control-plane namespace): with its name, its identity.
    pub namespace: String,
    /// Where the Application was read from (`file:line`), when known.
    pub origin: Option<String>,
    /// The objects, in Argo CD's order, each with its tracking id.
    pub resources: Vec<Resource>,
    /// Sources not rendered on purpose (not local), one line each.
    pub skipped: Vec<String>,
    /// Why sources could not be rendered, one line each.
    pub errors: Vec<String>,
    /// Problems of an ApplicationSet itself that Argo CD refuses or ignores (a generator naming
    /// no kind, a template that does not parse), one line each: `syncguard check` reports them
    /// as SG610 findings on the ApplicationSet, so they are not input errors.
    pub judged: Vec<String>,
    /// The Application whose render holds this one (app-of-apps), when any.
    pub parent: Option<String>,
    /// `spec.destination.namespace`.
    pub destination_namespace: String,
    /// An ApplicationSet: `resources` are the Applications it generates.
    pub application_set: bool,
}

/// How deep app-of-apps renders go (a parent, its children, their children...).
const MAX_APP_DEPTH: usize = 8;

/// Renders every Application among `resources` (other objects are ignored), then, app-of-apps
/// style, every Application a render produced, in turn (each instance once).
pub fn render_all(resources: &[Resource], repos: &Repos, options: &RenderOptions) -> Vec<Rendered> {
    render_all_except(resources, repos, options, HashSet::new())
}

/// [`render_all`], leaving out the Applications (instance names) of `done`: those whose objects
/// the caller already has.
pub fn render_all_except(
    resources: &[Resource],
    repos: &Repos,
    options: &RenderOptions,
    done: HashSet<String>,
) -> Vec<Rendered> {
    let mut out = Vec::new();
    let mut seen = done;
    // The cluster Secrets the clusters generators choose among: those of the input and of
    // --clusters.
    let clusters = appset::clusters_of(
        resources.iter().chain(&options.clusters),
        &options.control_plane_namespace,
    );
    let mut queue: Vec<(Resource, Option<Application>, Option<String>, usize)> = resources
        .iter()
        .filter_map(|r| {
            if appset::is_application_set(r) {
                return Some((r.clone(), None, None, 0));
            }
            Application::from_resource(r).map(|spec| (r.clone(), Some(spec), None, 0))
        })
        .collect();
    queue = last_of_each(queue, &options.control_plane_namespace);
    queue.reverse();
    while let Some((r, spec, parent, depth)) = queue.pop() {
        let (mut rendered, parent_namespace) = match &spec {
            Some(spec) => {
                if !seen.insert(spec.instance_name(&options.control_plane_namespace)) {
                    continue;
                }
                (
                    render_app(&r, spec, repos, options),
                    spec.destination_namespace.clone(),
                )
            }
            None => {
                let namespace = r
                    .namespace
                    .clone()
                    .unwrap_or_else(|| options.control_plane_namespace.clone());
                if !seen.insert(format!("ApplicationSet {namespace}/{}", r.name)) {
                    continue;
                }
                let known = appset::Known {
                    repos,
                    clusters: &clusters,
                };
                (generate_set(&r, &known, options), namespace)
            }
        };
        rendered.parent = parent;
        if depth + 1 < MAX_APP_DEPTH {
            // Children go next, before the parent's siblings, in their order.
            let mut children: Vec<_> = rendered
                .resources
                .iter()
                .filter_map(|child| {
                    // Applications a parent renders are rendered in turn, and ApplicationSets
                    // generate theirs, as once synced.
                    let is_app = crate::model::app::is_application(child);
                    if !is_app && !appset::is_application_set(child) {
                        return None;
                    }
                    let child = in_namespace(child, &parent_namespace);
                    let spec = if is_app {
                        Some(Application::from_resource(&child)?)
                    } else {
                        None
                    };
                    Some((child, spec, Some(rendered.app.clone()), depth + 1))
                })
                .collect();
            children = last_of_each(children, &options.control_plane_namespace);
            children.reverse();
            queue.extend(children);
        }
        out.push(rendered);
    }
    out
}

/// Of Applications (ApplicationSets) of one identity, the last in order: what both `kubectl
/// apply` of the files and Argo CD's sync of a parent's manifests leave (SG115: the controller
/// keeps the last object of each identity). The kept ones stay in their order.
fn last_of_each(
    items: Vec<(Resource, Option<Application>, Option<String>, usize)>,
    control_plane_namespace: &str,
) -> Vec<(Resource, Option<Application>, Option<String>, usize)> {
    let key = |(r, spec, _, _): &(Resource, Option<Application>, Option<String>, usize)| match spec
    {
        Some(spec) => spec.instance_name(control_plane_namespace),
        None => format!(
            "ApplicationSet {}/{}",
            r.namespace.as_deref().unwrap_or(control_plane_namespace),
            r.name
        ),
    };
    let keys: Vec<String> = items.iter().map(key).collect();
    let last: std::collections::HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let keep: Vec<bool> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| last.get(k.as_str()) == Some(&i))
        .collect();
    items
        .into_iter()
        .zip(keep)
        .filter_map(|(item, keep)| keep.then_some(item))
        .collect()
}

/// `r` in `namespace` when it names none (the controller gives a namespaced object without one
/// its Application's destination namespace).
fn in_namespace(r: &Resource, namespace: &str) -> Resource {
    if r.namespace.is_some() || namespace.is_empty() {
        return r.clone();
    }
    let mut raw = r.raw.clone();
    if let Some(metadata) = raw.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        metadata.insert("namespace".into(), namespace.into());
    }
    r.with_raw(raw).unwrap_or_else(|_| r.clone())
}

/// An ApplicationSet's "render": the Applications it generates (no tracking id: Argo CD ties them
/// to their ApplicationSet by owner reference). A generator whose repository is not local is a
/// skipped source; any other that cannot be evaluated is an error.
fn generate_set(r: &Resource, known: &appset::Known<'_>, options: &RenderOptions) -> Rendered {
    let (apps, problems) = appset::generate(r, known, &options.control_plane_namespace);
    let (judged, problems): (Vec<String>, Vec<String>) = problems
        .into_iter()
        .partition(|p| p.contains(appset::JUDGED));
    let (skipped, errors) = problems
        .into_iter()
        .partition(|p| p.contains("is not a local repository") || p.contains(appset::OUTSIDE));
    Rendered {
        app: r.name.clone(),
        namespace: r
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| options.control_plane_namespace.clone()),
        application_set: true,
        origin: r
            .origin
            .as_ref()
            .map(|o| format!("{}:{}", o.file, o.start.line)),
        resources: apps,
        skipped,
        errors,
        judged,
        parent: None,
        destination_namespace: String::new(),
    }
}

fn render_app(
    r: &Resource,
    spec: &Application,
    repos: &Repos,
    options: &RenderOptions,
) -> Rendered {
    let app = spec.instance_name(&options.control_plane_namespace);
    let rendered_by: Arc<str> = Arc::from(app.as_str());
    let mut out = Rendered {
        app: app.clone(),
        namespace: if spec.namespace.is_empty() {
            options.control_plane_namespace.clone()
        } else {
            spec.namespace.clone()
        },
        origin: r
            .origin
            .as_ref()
            .map(|o| format!("{}:{}", o.file, o.start.line)),
        resources: Vec::new(),
        skipped: Vec::new(),
        errors: Vec::new(),
        judged: Vec::new(),
        parent: None,
        destination_namespace: spec.destination_namespace.clone(),
        application_set: false,
    };
    if spec.sources.is_empty() {
        out.errors
            .push("the Application has no source (spec.source or spec.sources)".into());
    }
    let refs: Vec<(String, Option<PathBuf>)> = spec
        .sources
        .iter()
        .filter(|s| spec.multi_source && !s.ref_name.is_empty())
        .map(|s| {
            (
                format!("${}", s.ref_name),
                repos.dir_for(&s.repo_url).map(Path::to_path_buf),
            )
        })
        .collect();
    for (n, source) in spec.sources.iter().enumerate() {
        let place = if source.path.is_empty() {
            source.repo_url.clone()
        } else {
            format!("{} path {}", source.repo_url, source.path)
        };
        let which = if spec.multi_source {
            format!("source {} ({place})", n + 1)
        } else {
            format!("source {place}")
        };
        // In a multi-source Application a source without path and chart only lends its files
        // (`ref`) and renders nothing.
        if spec.multi_source && source.path.is_empty() && source.chart.is_empty() {
            continue;
        }
        // A chart repository or OCI registry: pulled (or read from the cache) and rendered
        // from there; `ARGOCD_APP_REVISION` is the version pulled, as in Argo CD.
        let fetched;
        let (root, revision, chart) = match chart_repo::Origin::of(source) {
            Some(origin) => {
                let pass = source
                    .blocks
                    .helm
                    .as_ref()
                    .and_then(|h| h.get("passCredentials"))
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false);
                match chart_repo::fetch(&origin, source, pass, options) {
                    Ok(f) => fetched = f,
                    Err(e) => {
                        out.errors.push(format!("{which}: {e}"));
                        continue;
                    }
                }
                (
                    fetched.dir.as_path(),
                    fetched.version.as_str(),
                    Some(format!("{}-{}", origin.chart(), fetched.version)),
                )
            }
            None => {
                let Some(root) = repos.dir_for(&source.repo_url) else {
                    out.skipped.push(format!(
                        "{which}: not the local repository (map it with --repo {}=DIR)",
                        source.repo_url
                    ));
                    continue;
                };
                let revision = repos
                    .find(&source.repo_url)
                    .map(|c| c.revision.as_str())
                    .unwrap_or_default();
                (root, revision, None)
            }
        };
        let env = AppEnv::new(&EnvInputs {
            app_name: &app,
            namespace: &spec.destination_namespace,
            project: &spec.project,
            revision,
            repo_url: &source.repo_url,
            path: &source.path,
            target_revision: &source.target_revision,
        });
        let ctx = SourceCtx {
            root,
            app_dir: PathBuf::new(),
            source,
            app_name: &app,
            dest_namespace: &spec.destination_namespace,
            env,
            refs: &refs,
            multi_source: spec.multi_source,
            options,
            chart,
        };
        match render_source(ctx) {
            Ok(objects) => out.resources.extend(
                objects
                    .into_iter()
                    .map(|o| tracking::track(o, &app, &spec.destination_namespace))
                    .map(|mut o| {
                        o.rendered_by = Some(Arc::clone(&rendered_by));
                        o
                    }),
            ),
            Err(e) => out.errors.push(format!("{which}: {e}")),
        }
    }
    out
}

fn render_source(mut ctx: SourceCtx<'_>) -> Result<Vec<Resource>, String> {
    ctx.app_dir = app_dir(ctx.root, &ctx.source.path)?;
    let merged = overrides::apply(ctx.source, &ctx.app_dir, ctx.app_name)?;
    let ctx = SourceCtx {
        source: &merged,
        ..ctx
    };
    let kind = match ctx.source.explicit_type()? {
        Some(t) => t,
        None => discover(&ctx.app_dir)?,
    };
    match kind {
        SourceType::Directory => {
            let spec = ctx.source.blocks.directory.clone().unwrap_or_default();
            directory::render(&ctx.app_dir, ctx.root, &spec, |file, label| {
                jsonnet::evaluate(&ctx, &spec.jsonnet, file, label)
            })
        }
        SourceType::Helm => helm::render(&ctx),
        SourceType::Kustomize => kustomize::render(&ctx),
        SourceType::Plugin => Err(format!(
            "path {}: a config management plugin source, which only Argo CD can render",
            ctx.source.path
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
            "",
        );
        let options = RenderOptions {
            helm: "/nonexistent/helm".into(),
            kustomize: "/nonexistent/kustomize".into(),
            ..RenderOptions::default()
        };
        let out = render_all(&apps.resources, &repos, &options);
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
            out[1].errors[0].contains("helm is not installed"),
            "{:?}",
            out[1].errors
        );
        // Chart.yaml and kustomization.yaml: the last in name order (kustomization) decides.
        assert!(
            out[2].errors[0].contains("kustomize is not installed"),
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

    #[test]
    fn override_files_of_the_source_directory_are_applied_per_application() {
        let repo = tempfile::tempdir().unwrap();
        let cm =
            |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n");
        write(repo.path(), "apps/web/top.yaml", &cm("top"));
        write(repo.path(), "apps/web/sub/deep.yaml", &cm("deep"));
        // Only the Application `deep` (in the control-plane namespace) recurses.
        write(
            repo.path(),
            "apps/web/.argocd-source-deep.yaml",
            "directory: {recurse: true}\npath: elsewhere\n",
        );
        write(repo.path(), "apps/broken/.argocd-source.yaml", "helm: [\n");
        let app = |name: &str, path: &str| {
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\n\
                 spec: {{source: {{repoURL: 'https://example.com/gitops', path: {path}}}}}\n"
            )
        };
        let apps = load_str(
            "apps.yaml",
            &[
                app("flat", "apps/web"),
                app("deep", "apps/web"),
                app("broken", "apps/broken"),
            ]
            .join("---\n"),
        );
        let mut repos = Repos::default();
        repos.add("https://example.com/gitops", repo.path().to_path_buf(), "");
        let out = render_all(&apps.resources, &repos, &RenderOptions::default());
        let names =
            |n: usize| -> Vec<&str> { out[n].resources.iter().map(|r| r.name.as_str()).collect() };
        assert_eq!(names(0), ["top"]);
        assert_eq!(names(1), ["deep", "top"]);
        assert!(
            out[2].errors[0].contains("apps/broken/.argocd-source.yaml"),
            "{:?}",
            out[2].errors
        );
    }

    /// An app-of-apps root that renders ApplicationSets: each generates its Applications (in the
    /// root's destination namespace when it names none), which are rendered in turn; sets of
    /// one name in two namespaces are two sets.
    #[test]
    fn application_sets_a_parent_renders_generate_their_applications() {
        let repo = tempfile::tempdir().unwrap();
        write(
            repo.path(),
            "apps/web/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
        );
        let set = |namespace: &str, env: &str| {
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {{name: envs{namespace}}}\n\
                 spec:\n  generators: [{{list: {{elements: [{{env: {env}}}]}}}}]\n  template:\n    \
                 metadata: {{name: 'web-{{{{env}}}}'}}\n    spec:\n      destination: {{namespace: '{{{{env}}}}'}}\n      \
                 source: {{repoURL: 'https://example.com/gitops', path: apps/web}}\n"
            )
        };
        write(repo.path(), "sets/a.yaml", &set("", "dev"));
        write(
            repo.path(),
            "sets/b.yaml",
            &set(", namespace: team", "prod"),
        );
        let root = load_str(
            "root.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: root, namespace: argocd}\n\
             spec: {destination: {namespace: argocd}, source: {repoURL: 'https://example.com/gitops', path: sets}}\n",
        );
        let mut repos = Repos::default();
        repos.add("https://example.com/gitops", repo.path().to_path_buf(), "");
        let out = render_all(&root.resources, &repos, &RenderOptions::default());
        let summary: Vec<String> = out
            .iter()
            .map(|r| {
                format!(
                    "{} {} <{}> {}",
                    if r.application_set { "set" } else { "app" },
                    r.app,
                    r.parent.as_deref().unwrap_or("-"),
                    r.resources.len()
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                "app root <-> 2",
                "set envs <root> 1",
                "app web-dev <envs> 1",
                "set envs <root> 1",
                "app team_web-prod <envs> 1",
            ]
        );
        assert!(out.iter().all(|r| r.errors.is_empty()), "{out:?}");
        // The generated Application of the set without a namespace is in the root's destination
        // namespace.
        assert_eq!(out[1].resources[0].namespace.as_deref(), Some("argocd"));
    }

    /// A generator that needs data syncguard does not read is a skipped source of its
    /// ApplicationSet (exit 0), not an error.
    #[test]
    fn generators_of_data_outside_the_repository_are_skipped_not_errors() {
        let set = load_str(
            "set.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: prs}\n\
             spec:\n  generators: [{pullRequest: {github: {owner: o, repo: r}}}, \
             {clusters: {selector: {matchLabels: {env: prod}}}}]\n  \
             template: {metadata: {name: x}, spec: {}}\n",
        );
        let out = render_all(&set.resources, &Repos::default(), &RenderOptions::default());
        assert!(out[0].errors.is_empty(), "{:?}", out[0].errors);
        assert_eq!(out[0].skipped.len(), 2, "{:?}", out[0].skipped);
    }
}
