//! `syncguard render`: Applications rendered from the local checkout, as a manifest stream.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{InputArgs, RenderArgs, RenderFlags, RenderMode};
use crate::manifest::{Loaded, load_paths};
use crate::render::{RenderOptions, Rendered, Repos, render_all};

use super::Outcome;

/// Renders every Application of the input and writes the objects as a YAML stream (each
/// document is JSON, which is YAML, preceded by a comment naming its Application and file).
/// A line per Application goes to stderr; any error makes the exit code 2, after every other
/// Application has been rendered and written.
pub fn run(args: &RenderArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let loaded = load_paths(&args.paths);
    // A GitOps directory also holds chart templates, kustomizations and values files, which are
    // not manifests: what cannot be read in a file that holds no Argo CD object is passed over.
    let mut holds = std::collections::HashMap::new();
    let (errors, passed_over): (Vec<_>, Vec<_>) = loaded.errors.iter().partition(|e| {
        *holds
            .entry(e.file())
            .or_insert_with(|| may_hold_applications(e.file()))
    });
    let mut failed = !errors.is_empty();
    for e in &errors {
        eprintln!("syncguard: {e}");
    }
    if let Some(first) = passed_over.first() {
        eprintln!(
            "syncguard: passed over {} document(s) of files that hold no Argo CD object and are \
             not manifests (first: {first})",
            passed_over.len()
        );
    }
    let (repos, options) = match prepare(&args.flags) {
        Ok(prepared) => prepared,
        Err(e) => {
            eprintln!("syncguard: {e}");
            return Ok(Outcome::InputErrors);
        }
    };
    let rendered = render_all(&loaded.resources, &repos, &options);
    if rendered.is_empty() {
        eprintln!("syncguard: no Argo CD Application in the input");
        return Ok(Outcome::InputErrors);
    }
    for app in &rendered {
        let from = app.origin.as_deref().unwrap_or("?");
        for r in &app.resources {
            let file = r
                .origin
                .as_ref()
                .map(|o| match &o.helm_template {
                    Some(t) => format!("{}:{} ({t})", o.file, o.start.line),
                    None => format!("{}:{}", o.file, o.start.line),
                })
                .unwrap_or_default();
            let kind = if app.application_set {
                "ApplicationSet"
            } else {
                "Application"
            };
            writeln!(out, "---\n# {kind} {} ({from}): {file}", app.app)?;
            writeln!(out, "{}", serde_json::to_string_pretty(&r.raw)?)?;
        }
        say(app);
        failed |= !app.errors.is_empty();
    }
    say_missing_tools(&rendered, &options);
    Ok(if failed {
        Outcome::InputErrors
    } else {
        Outcome::Clean
    })
}

/// Whether the input file `file` may hold an Application or ApplicationSet: it mentions their
/// API group, or it cannot be read to tell.
fn may_hold_applications(file: &str) -> bool {
    std::fs::read(file).map_or(true, |bytes| {
        bytes
            .windows(b"argoproj.io".len())
            .any(|w| w == b"argoproj.io")
    })
}

/// The stderr lines of one Application's render.
pub(crate) fn say(app: &Rendered) {
    let from = app.origin.as_deref().unwrap_or("?");
    let parent = app
        .parent
        .as_ref()
        .map(|p| format!(", rendered by {p}"))
        .unwrap_or_default();
    if app.application_set {
        eprintln!(
            "syncguard: ApplicationSet {} ({from}{parent}): {} Application(s)",
            app.app,
            app.resources.len()
        );
    } else {
        eprintln!(
            "syncguard: Application {} ({from}{parent}): {} object(s)",
            app.app,
            app.resources.len()
        );
    }
    for s in &app.skipped {
        eprintln!("syncguard:   skipped {s}");
    }
    for e in &app.errors {
        eprintln!("syncguard:   error: {e}");
    }
    for j in &app.judged {
        eprintln!("syncguard:   invalid: {j}");
    }
}

/// One line per missing tool, naming the Applications that needed it.
pub(crate) fn say_missing_tools(rendered: &[Rendered], options: &RenderOptions) {
    for (tool, given) in [
        ("helm", &options.helm),
        ("kustomize", &options.kustomize),
        ("jsonnet", &options.jsonnet),
    ] {
        let needed: Vec<&str> = rendered
            .iter()
            .filter(|a| {
                a.errors
                    .iter()
                    .any(|e| e.contains(&format!("{tool} is not installed")))
            })
            .map(|a| a.app.as_str())
            .collect();
        if !needed.is_empty() {
            eprintln!(
                "syncguard: {tool} ({given}) was not found; the Applications that need it: {}",
                needed.join(", ")
            );
        }
    }
}

/// `--render` of the dry-run commands: the Applications of `loaded` rendered (all of them with
/// `always`, those with a local source with `auto`), their objects added to `loaded` as Argo
/// CD's controller sees them (namespaced objects without a namespace in the destination
/// namespace). Applications a parent rendered that are already in the input are not added
/// twice. Returns the render errors, one per line, for the report's input errors.
pub(crate) fn expand(loaded: &mut Loaded, input: &InputArgs) -> Vec<String> {
    expand_with(loaded, input, &[])
}

/// The input of the dry-run commands (`check`, `explain`, `inputs`): the paths loaded, and with
/// `--render` the Applications rendered ([`expand`]). A path inside a Helm chart (a pre-commit
/// hook passes `apps/templates/web.yaml` of a Helm-of-Applications repository) is not loaded
/// as a manifest: it stands for the Applications of the checkout that render that chart, or,
/// when none does, for an Application of the chart's path with its own values (said on stderr;
/// that one is rendered, not checked as an object). Returns the render errors.
pub(crate) fn load_and_expand(input: &InputArgs) -> (Loaded, Vec<String>) {
    if input.render == RenderMode::Never {
        return (load_paths(&input.paths), Vec::new());
    }
    let split = crate::render::chart_paths(&input.paths);
    if split.charts.is_empty() {
        let mut loaded = load_paths(&input.paths);
        let errors = expand(&mut loaded, input);
        return (loaded, errors);
    }
    let mut loaded = if split.manifests.is_empty() {
        Loaded::default()
    } else {
        load_paths(&split.manifests)
    };
    let (repos, options) = match prepare(&input.render_flags) {
        Ok(prepared) => prepared,
        Err(e) => return (loaded, vec![e]),
    };
    let found = crate::render::chart_applications(&split.charts, &repos);
    let mut errors = found.errors;
    for app in found.applications {
        let known = |r: &crate::model::Resource| {
            r.kind == app.kind && r.name == app.name && r.namespace == app.namespace
        };
        // Checked like the file it is in, as if its path had been given.
        if !loaded.resources.iter().any(known) {
            loaded.resources.push(app);
        }
    }
    errors.extend(expand(&mut loaded, input));
    // A chart no Application of the checkout names may be rendered by one that is a template
    // of another chart (an app-of-apps' child); only a chart nothing renders gets an
    // Application made for it, rendered but not checked as an object.
    // One at a time: the Applications one renders may render the next.
    for chart in found.unrendered {
        let rendered = loaded
            .resources
            .iter()
            .any(|r| crate::render::renders_chart(r, &repos, &chart.dir));
        if rendered {
            continue;
        }
        eprintln!(
            "syncguard: no Application of this checkout renders the Helm chart {}: rendered as \
             an Application of that path with the chart's own values",
            chart.path.display()
        );
        let Some(made) = chart.application(&options.control_plane_namespace) else {
            continue;
        };
        let mut more = Loaded::default();
        errors.extend(expand_with(&mut more, input, std::slice::from_ref(&made)));
        loaded.resources.extend(more.resources);
    }
    (loaded, errors)
}

/// [`expand`], rendering `extra` Applications too without adding them to the input.
fn expand_with(
    loaded: &mut Loaded,
    input: &InputArgs,
    extra: &[crate::model::Resource],
) -> Vec<String> {
    if input.render == RenderMode::Never {
        return Vec::new();
    }
    let (repos, options) = match prepare(&input.render_flags) {
        Ok(prepared) => prepared,
        Err(e) => return vec![e],
    };
    let always = input.render == RenderMode::Always;
    let expansion = if extra.is_empty() {
        crate::render::expand(&loaded.resources, always, &repos, &options)
    } else {
        let all: Vec<crate::model::Resource> =
            loaded.resources.iter().chain(extra).cloned().collect();
        crate::render::expand(&all, always, &repos, &options)
    };
    let errors = app_errors(&expansion.rendered, always);
    for app in &expansion.rendered {
        say(app);
    }
    say_missing_tools(&expansion.rendered, &options);
    expansion.attribute(&mut loaded.resources);
    loaded.resources.extend(expansion.objects);
    errors
}

fn kind(app: &Rendered) -> &'static str {
    if app.application_set {
        "ApplicationSet"
    } else {
        "Application"
    }
}

/// One error line per Application error (and per source not rendered, with `always`), naming
/// the Application and its file.
pub(crate) fn app_errors(rendered: &[Rendered], always: bool) -> Vec<String> {
    let mut errors = Vec::new();
    for app in rendered {
        let from = app.origin.as_deref().unwrap_or("?");
        errors.extend(
            app.errors
                .iter()
                .map(|e| format!("{} {} ({from}): {e}", kind(app), app.app)),
        );
        if always {
            errors.extend(
                app.skipped
                    .iter()
                    .map(|s| format!("{} {} ({from}): not rendered: {s}", kind(app), app.app)),
            );
        }
    }
    errors
}

/// The repositories and options of the render flags.
pub(crate) fn prepare(flags: &RenderFlags) -> Result<(Repos, RenderOptions), String> {
    Ok((repos(&flags.repos)?, options(flags)?))
}

/// The render options of the flags.
pub(crate) fn options(args: &RenderFlags) -> Result<RenderOptions, String> {
    let mut kustomize_versions = Vec::new();
    for m in &args.kustomize_versions {
        let Some((name, path)) = m.split_once('=') else {
            return Err(format!("--kustomize-version wants NAME=PATH, got {m:?}"));
        };
        kustomize_versions.push((name.to_string(), path.to_string()));
    }
    if !args.kube_version.is_empty() {
        crate::render::parse_kube_version(&args.kube_version)
            .map_err(|e| format!("--kube-version: {e}"))?;
    }
    let mut clusters = Vec::new();
    if !args.clusters.is_empty() {
        let loaded = load_paths(&args.clusters);
        if let Some(e) = loaded.errors.first() {
            return Err(format!("--clusters: {e}"));
        }
        let found = crate::render::clusters_of(&loaded.resources, &args.control_plane_namespace);
        if found.is_empty() {
            return Err(format!(
                "--clusters: no cluster Secret (label argocd.argoproj.io/secret-type: cluster, \
                 namespace {} or none) in {}",
                args.control_plane_namespace,
                args.clusters
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        clusters = loaded.resources;
    }
    Ok(RenderOptions {
        clusters,
        control_plane_namespace: args.control_plane_namespace.clone(),
        helm: args.helm.clone(),
        kustomize: args.kustomize.clone(),
        jsonnet: args.jsonnet.clone(),
        kustomize_versions,
        kustomize_build_options: args.kustomize_build_options.clone(),
        kube_version: args.kube_version.clone(),
        api_versions: args
            .api_versions
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .collect(),
        timeout: Some(args.render_timeout),
        chart_cache: args
            .chart_cache
            .clone()
            .unwrap_or_else(crate::render::default_chart_cache),
        oci_plain_http: args
            .oci_plain_http
            .iter()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect(),
    })
}

/// `--repo URL=DIR` mappings, then the git checkout of the working directory under every URL
/// its remotes name (when git is there and this is a checkout).
fn repos(mappings: &[String]) -> Result<Repos, String> {
    let mut repos = Repos::default();
    for m in mappings {
        let Some((url, dir)) = m.split_once('=') else {
            return Err(format!("--repo wants URL=DIR, got {m:?}"));
        };
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            return Err(format!(
                "--repo {url}: {} is not a directory",
                dir.display()
            ));
        }
        let revision = crate::git::head(&dir).unwrap_or_default();
        repos.add(url, dir, &revision);
    }
    if let Some((root, urls)) = local_checkout(Path::new(".")) {
        let revision = crate::git::head(&root).unwrap_or_default();
        for url in urls {
            repos.add(&url, root.clone(), &revision);
        }
    }
    Ok(repos)
}

/// The top of the git checkout holding `dir`, and the fetch URLs of its remotes.
fn local_checkout(dir: &Path) -> Option<(PathBuf, Vec<String>)> {
    let root = crate::git::toplevel(dir)?;
    let urls = crate::git::remote_urls(&root);
    Some((root, urls))
}
