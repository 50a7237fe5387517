//! A directory source rendered as Argo CD 3.6.1's repo-server renders it
//! (`reposerver/repository/repository.go`, `findManifests` and `getPotentiallyValidManifestFile`):
//! the files of the source's directory in lexical order (subdirectories only with `recurse`),
//! filtered by extension, `exclude`, `include` and the skip marker, each parsed into objects.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};

use super::source::Directory;
use crate::manifest::load_str;
use crate::model::Resource;

/// A file holding this text anywhere is left out (Argo CD's marker).
const SKIP_MARKER: &str = "+argocd:skip-file-rendering";

/// `--max-combined-directory-manifests-size`'s default (`10M`, a decimal quantity).
const MAX_COMBINED_BYTES: u64 = 10_000_000;

/// The objects of the directory source at `app_dir` (inside `repo_root`), in Argo CD's order.
/// Each object's origin names its file relative to `repo_root`, with its line. A `.jsonnet` file
/// is given to `jsonnet` (its path as found, its path in the repository), which evaluates it.
pub fn render(
    app_dir: &Path,
    repo_root: &Path,
    spec: &Directory,
    mut jsonnet: impl FnMut(&Path, &str) -> Result<Vec<Resource>, String>,
) -> Result<Vec<Resource>, String> {
    let include = glob(&spec.include);
    let exclude = glob(&spec.exclude);
    let mut files = Vec::new();
    walk(app_dir, spec.recurse, &mut files)?;
    let mut total: u64 = 0;
    let mut out = Vec::new();
    for path in files {
        let relative = path.strip_prefix(app_dir).unwrap_or(&path);
        let relative = relative.to_string_lossy().replace('\\', "/");
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(ext) = manifest_extension(&name, spec.disable_extension_filter) else {
            continue;
        };
        let real = match resolve_in_repo(&path, repo_root)? {
            Some(real) => real,
            None => continue, // a link to nothing, or to something that is not a file
        };
        if exclude.as_ref().is_some_and(|g| g.is_match(&relative)) {
            continue;
        }
        if !spec.include.is_empty() && !include.as_ref().is_some_and(|g| g.is_match(&relative)) {
            continue; // an invalid include pattern matches nothing, as in Argo CD
        }
        let label = path
            .strip_prefix(repo_root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let bytes = std::fs::read(&real).map_err(|e| format!("{label}: {e}"))?;
        if ext != "jsonnet" {
            // Jsonnet files do not count: their memory is Jsonnet's business (Argo CD's words).
            total += bytes.len() as u64;
            if total > MAX_COMBINED_BYTES {
                return Err(format!(
                    "the files of this directory source exceed Argo CD's combined limit of 10M \
                     bytes (--max-combined-directory-manifests-size) at {label}"
                ));
            }
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(format!("{label}: not UTF-8 text"));
        };
        if text.contains(SKIP_MARKER) {
            continue;
        }
        if ext == "jsonnet" {
            out.extend(jsonnet(&path, &label)?);
        } else {
            out.extend(objects_of(&label, &text, ext == "json")?);
        }
    }
    Ok(out)
}

/// The objects of one file, or why Argo CD refuses it. YAML that is not Kubernetes manifests
/// (a CI workflow, a values file) is skipped, as Argo CD skips it: a file is an error only when
/// one of its documents was an object already or it looks like a manifest.
fn objects_of(label: &str, text: &str, json: bool) -> Result<Vec<Resource>, String> {
    let loaded = load_str(label, text);
    if json {
        // Argo CD decodes a .json file as exactly one object.
        if loaded.resources.len() > 1 {
            return Err(format!(
                "{label}: a JSON file must hold exactly one object, this one holds {}",
                loaded.resources.len()
            ));
        }
        if let Some(e) = loaded.errors.first() {
            return Err(e.to_string());
        }
        return Ok(loaded.resources);
    }
    if let Some(e) = loaded.errors.first() {
        let looks_like_manifest =
            text.contains("apiVersion:") && text.contains("kind:") && text.contains("metadata:");
        if loaded.resources.is_empty() && !looks_like_manifest {
            return Ok(Vec::new());
        }
        return Err(e.to_string());
    }
    Ok(loaded.resources)
}

/// `.yaml`, `.yml`, `.json` or `.jsonnet` (case-sensitive, as Argo CD's filter). With the
/// filter disabled every file is read: `.jsonnet` evaluated, `.json` decoded as JSON, anything
/// else as YAML.
fn manifest_extension(name: &str, filter_disabled: bool) -> Option<&'static str> {
    if filter_disabled {
        return Some(match name.rsplit_once('.').map(|(_, e)| e) {
            Some("jsonnet") => "jsonnet",
            Some("json") => "json",
            _ => "yaml",
        });
    }
    ["yaml", "yml", "json", "jsonnet"]
        .into_iter()
        .find(|ext| name.len() > ext.len() + 1 && name.ends_with(&format!(".{ext}")))
}

/// A pattern as Argo CD compiles it (gobwas/glob without separators: `*` also matches `/`,
/// `{a,b}` alternatives); `None` for an empty or invalid one.
fn glob(pattern: &str) -> Option<GlobMatcher> {
    if pattern.is_empty() {
        return None;
    }
    Glob::new(pattern).ok().map(|g| g.compile_matcher())
}

/// The files under `dir` in `filepath.Walk` order: entries sorted by name, a directory's
/// contents right after it; subdirectories only when `recurse`. Links are listed as entries.
fn walk(dir: &Path, recurse: bool, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let meta =
            std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if meta.is_dir() {
            if recurse {
                walk(&path, recurse, out)?;
            }
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The real file behind `path`: itself, or a link's target when that is a regular file inside
/// the repository. A link that leaves the repository is an error (Argo CD refuses the render);
/// a link to nothing or to a non-file is skipped (`None`).
fn resolve_in_repo(path: &Path, repo_root: &Path) -> Result<Option<PathBuf>, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.file_type().is_symlink() {
        return Ok(meta.is_file().then(|| path.to_path_buf()));
    }
    let Ok(real) = std::fs::canonicalize(path) else {
        return Ok(None);
    };
    let root =
        std::fs::canonicalize(repo_root).map_err(|e| format!("{}: {e}", repo_root.display()))?;
    if !real.starts_with(&root) {
        return Err(format!(
            "{}: a symbolic link to {}, outside the repository",
            path.display(),
            real.display()
        ));
    }
    Ok(real.is_file().then_some(real))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn cm(name: &str) -> String {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n")
    }

    fn names(r: &[Resource]) -> Vec<String> {
        r.iter().map(|r| r.name.clone()).collect()
    }

    fn dir(recurse: bool, include: &str, exclude: &str) -> Directory {
        Directory {
            recurse,
            include: include.into(),
            exclude: exclude.into(),
            ..Directory::default()
        }
    }

    fn no_jsonnet(_: &Path, label: &str) -> Result<Vec<Resource>, String> {
        Err(format!("{label}: no jsonnet here"))
    }

    #[test]
    fn files_come_in_lexical_order_and_subdirectories_only_with_recurse() {
        let repo = tempfile::tempdir().unwrap();
        let app = repo.path().join("apps/web");
        write(&app, "b.yaml", &cm("b"));
        write(&app, "a.yml", &cm("a"));
        write(
            &app,
            "sub/c.json",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#,
        );
        write(&app, ".github/workflows/ci.yaml", "on: push\njobs: {}\n");
        write(&app, "UPPER.YAML", &cm("upper"));
        write(&app, "notes.txt", &cm("txt"));
        let flat = render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap();
        assert_eq!(names(&flat), ["a", "b"]);
        let deep = render(&app, repo.path(), &dir(true, "", ""), no_jsonnet).unwrap();
        // .github is visited (nothing special about hidden directories) and its workflow,
        // which is not a manifest, is skipped.
        assert_eq!(names(&deep), ["a", "b", "c"]);
        let origin = deep[2].origin.as_ref().unwrap();
        assert_eq!(&*origin.file, "apps/web/sub/c.json");
    }

    #[test]
    fn exclude_then_include_match_the_path_below_the_source_with_star_crossing_slashes() {
        let repo = tempfile::tempdir().unwrap();
        let app = repo.path().join("app");
        write(&app, "a.yaml", &cm("a"));
        write(&app, "b.yaml", &cm("b"));
        write(
            &app,
            "sub/x.json",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#,
        );
        let r = render(&app, repo.path(), &dir(true, "", "*.json"), no_jsonnet).unwrap();
        assert_eq!(names(&r), ["a", "b"]);
        let r = render(
            &app,
            repo.path(),
            &dir(true, "{a.yaml,sub/x.json}", ""),
            no_jsonnet,
        )
        .unwrap();
        assert_eq!(names(&r), ["a", "x"]);
        // An invalid include matches nothing.
        let r = render(&app, repo.path(), &dir(true, "[", ""), no_jsonnet).unwrap();
        assert!(r.is_empty());
    }

    #[test]
    fn the_skip_marker_bad_manifests_and_jsonnet() {
        let repo = tempfile::tempdir().unwrap();
        let app = repo.path().join("app");
        write(
            &app,
            "a.yaml",
            &format!("# +argocd:skip-file-rendering\n{}", cm("a")),
        );
        write(&app, "b.yaml", &cm("b"));
        assert_eq!(
            names(&render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap()),
            ["b"]
        );
        // A second document that is not an object, after an object: an error naming the file.
        write(
            &app,
            "c.yaml",
            &format!("{}---\n- just\n- a list\n", cm("c")),
        );
        let e = render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap_err();
        assert!(e.contains("app/c.yaml"), "{e}");
        std::fs::remove_file(app.join("c.yaml")).unwrap();
        write(&app, "two.json", "[1]\n");
        let e = render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap_err();
        assert!(e.contains("app/two.json"), "{e}");
        std::fs::remove_file(app.join("two.json")).unwrap();
        // A .jsonnet file goes to the evaluator (with its path in the repository), unless it
        // holds the skip marker; .libsonnet files are not manifests.
        write(&app, "main.jsonnet", "{}");
        write(&app, "x.libsonnet", "{}");
        write(
            &app,
            "skipped.jsonnet",
            "// +argocd:skip-file-rendering\n{}",
        );
        let mut seen = Vec::new();
        let r = render(&app, repo.path(), &dir(false, "", ""), |file, label| {
            seen.push((file.to_path_buf(), label.to_string()));
            Ok(vec![])
        })
        .unwrap();
        assert_eq!(names(&r), ["b"]);
        assert_eq!(
            seen,
            [(app.join("main.jsonnet"), "app/main.jsonnet".to_string())]
        );
        let e = render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap_err();
        assert_eq!(e, "app/main.jsonnet: no jsonnet here");
    }

    #[test]
    fn without_the_extension_filter_every_file_is_read() {
        let repo = tempfile::tempdir().unwrap();
        let app = repo.path().join("app");
        write(&app, "a.yaml", &cm("a"));
        write(&app, "b.txt", &cm("b"));
        write(&app, "README", "Just words, not a manifest.\n");
        let spec = Directory {
            disable_extension_filter: true,
            ..dir(false, "", "")
        };
        assert_eq!(
            names(&render(&app, repo.path(), &spec, no_jsonnet).unwrap()),
            ["a", "b"]
        );
        assert_eq!(
            names(&render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap()),
            ["a"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_the_repository_are_followed_and_outside_it_refused() {
        let repo = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let app = repo.path().join("app");
        write(repo.path(), "shared/cm.yaml", &cm("shared"));
        write(outside.path(), "evil.yaml", &cm("evil"));
        std::fs::create_dir_all(&app).unwrap();
        std::os::unix::fs::symlink(repo.path().join("shared/cm.yaml"), app.join("a.yaml")).unwrap();
        std::os::unix::fs::symlink(repo.path().join("missing.yaml"), app.join("b.yaml")).unwrap();
        let r = render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap();
        assert_eq!(names(&r), ["shared"]);
        std::os::unix::fs::symlink(outside.path().join("evil.yaml"), app.join("c.yaml")).unwrap();
        let e = render(&app, repo.path(), &dir(false, "", ""), no_jsonnet).unwrap_err();
        assert!(e.contains("outside the repository"), "{e}");
    }
}
