//! `syncguard render`: Applications rendered from the local checkout, as a manifest stream.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{InputArgs, RenderArgs, RenderFlags, RenderMode};
use crate::manifest::{Loaded, load_paths};
use crate::model::Resource;
use crate::render::{
    AppSpec, RenderOptions, Rendered, Repos, as_the_controller_sees, render_all, render_all_except,
    tracked_app,
};

use super::Outcome;

/// Renders every Application of the input and writes the objects as a YAML stream (each
/// document is JSON, which is YAML, preceded by a comment naming its Application and file).
/// A line per Application goes to stderr; any error makes the exit code 2, after every other
/// Application has been rendered and written.
pub fn run(args: &RenderArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let loaded = load_paths(&args.paths);
    let mut failed = !loaded.errors.is_empty();
    for e in &loaded.errors {
        eprintln!("syncguard: {e}");
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
            writeln!(out, "---\n# Application {} ({from}): {file}", app.app)?;
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

/// The stderr lines of one Application's render.
fn say(app: &Rendered) {
    let from = app.origin.as_deref().unwrap_or("?");
    let parent = app
        .parent
        .as_ref()
        .map(|p| format!(", rendered by {p}"))
        .unwrap_or_default();
    eprintln!(
        "syncguard: Application {} ({from}{parent}): {} object(s)",
        app.app,
        app.resources.len()
    );
    for s in &app.skipped {
        eprintln!("syncguard:   skipped {s}");
    }
    for e in &app.errors {
        eprintln!("syncguard:   error: {e}");
    }
}

/// One line per missing tool, naming the Applications that needed it.
fn say_missing_tools(rendered: &[Rendered], options: &RenderOptions) {
    for (tool, given) in [("helm", &options.helm), ("kustomize", &options.kustomize)] {
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
    if input.render == RenderMode::Never {
        return Vec::new();
    }
    let (repos, options) = match prepare(&input.render_flags) {
        Ok(prepared) => prepared,
        Err(e) => return vec![e],
    };
    let always = input.render == RenderMode::Always;
    let roots: Vec<Resource> = loaded
        .resources
        .iter()
        .filter(|r| {
            AppSpec::from_resource(r).is_some_and(|spec| {
                always
                    || spec
                        .sources
                        .iter()
                        .any(|s| repos.dir_for(&s.repo_url).is_some())
            })
        })
        .cloned()
        .collect();
    if roots.is_empty() {
        return Vec::new();
    }
    // Applications whose objects are in the input already (`syncguard render | syncguard check
    // -`) are not rendered again.
    let done: std::collections::HashSet<String> = loaded
        .resources
        .iter()
        .filter_map(|r| tracked_app(r).map(str::to_string))
        .collect();
    let rendered = render_all_except(&roots, &repos, &options, done);
    let present: std::collections::HashSet<(String, String)> = loaded
        .resources
        .iter()
        .filter(|r| AppSpec::from_resource(r).is_some())
        .map(|r| (r.namespace.clone().unwrap_or_default(), r.name.clone()))
        .collect();
    let mut errors = Vec::new();
    for app in &rendered {
        say(app);
        let from = app.origin.as_deref().unwrap_or("?");
        errors.extend(
            app.errors
                .iter()
                .map(|e| format!("Application {} ({from}): {e}", app.app)),
        );
        if always {
            errors.extend(
                app.skipped
                    .iter()
                    .map(|s| format!("Application {} ({from}): not rendered: {s}", app.app)),
            );
        }
        for r in &app.resources {
            let seen = AppSpec::from_resource(r).is_some()
                && present.contains(&(r.namespace.clone().unwrap_or_default(), r.name.clone()));
            if !seen {
                loaded.resources.push(as_the_controller_sees(
                    r.clone(),
                    &app.destination_namespace,
                ));
            }
        }
    }
    say_missing_tools(&rendered, &options);
    errors
}

/// The repositories and options of the render flags.
fn prepare(flags: &RenderFlags) -> Result<(Repos, RenderOptions), String> {
    Ok((repos(&flags.repos)?, options(flags)?))
}

/// The render options of the flags.
fn options(args: &RenderFlags) -> Result<RenderOptions, String> {
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
    Ok(RenderOptions {
        control_plane_namespace: args.control_plane_namespace.clone(),
        helm: args.helm.clone(),
        kustomize: args.kustomize.clone(),
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
        let revision = head(&dir).unwrap_or_default();
        repos.add(url, dir, &revision);
    }
    if let Some((root, urls)) = local_checkout(Path::new(".")) {
        let revision = head(&root).unwrap_or_default();
        for url in urls {
            repos.add(&url, root.clone(), &revision);
        }
    }
    Ok(repos)
}

/// `git -C dir ARGS...`'s output when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The commit checked out in `dir` (Argo CD's `ARGOCD_APP_REVISION`).
fn head(dir: &Path) -> Option<String> {
    git(dir, &["rev-parse", "HEAD"]).map(|s| s.trim().to_string())
}

/// The top of the git checkout holding `dir`, and the fetch URLs of its remotes.
fn local_checkout(dir: &Path) -> Option<(PathBuf, Vec<String>)> {
    let git = |args: &[&str]| git(dir, args);
    let root = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?.trim());
    let remotes = git(&["remote", "-v"]).unwrap_or_default();
    let mut urls: Vec<String> = remotes
        .lines()
        .filter(|l| l.ends_with("(fetch)"))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect();
    urls.dedup();
    Some((root, urls))
}
