//! The GitOps fixture repository of `tests/fixtures/gitops/` as a real git repository in a temp
//! dir, and the helm/kustomize the render tests run.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository URL the fixture's Applications name (the checkout's `origin`).
pub const REPO_URL: &str = "https://git.example.com/platform/gitops.git";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gitops")
}

/// `git ARGS` in `dir` with a fixed identity and dates, so commits are the same everywhere.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Fixture")
        .env("GIT_AUTHOR_EMAIL", "fixture@example.com")
        .env("GIT_COMMITTER_NAME", "Fixture")
        .env("GIT_COMMITTER_EMAIL", "fixture@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The fixture repository: `base` committed on `main`, then `head` committed on top (when
/// `with_head`). Returns the checkout and the two commits (head empty without it).
pub fn repository(with_head: bool) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", REPO_URL]);
    copy(&fixture().join("base"), root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    let mut head = String::new();
    if with_head {
        copy(&fixture().join("head"), root);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "head"]);
        head = git(root, &["rev-parse", "HEAD"]);
    }
    (dir, base, head)
}

/// helm and kustomize at the versions Argo CD 3.6 bundles: `SYNCGUARD_HELM` /
/// `SYNCGUARD_KUSTOMIZE`, else `.tools/render-bin/` (scripts/install-render-tools.sh). `None`
/// (and a note) when they are not there, except under CI, where their absence fails the test
/// unless `.ci/run` found they cannot be built here (`SYNCGUARD_RENDER_TOOLS_OPTIONAL`).
pub fn tools() -> Option<(PathBuf, PathBuf)> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/render-bin");
    let pick = |var: &str, name: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| bin.join(name))
    };
    let (helm, kustomize) = (
        pick("SYNCGUARD_HELM", "helm"),
        pick("SYNCGUARD_KUSTOMIZE", "kustomize"),
    );
    if helm.is_file() && kustomize.is_file() {
        return Some((helm, kustomize));
    }
    missing(&format!("{} or {}", helm.display(), kustomize.display()))
}

/// A render tool is missing: a note (the test skips) outside CI, a failure under CI unless
/// `.ci/run` found the tools cannot be built here.
fn missing<T>(what: &str) -> Option<T> {
    let why = format!("{what} is missing: run scripts/install-render-tools.sh");
    assert!(
        std::env::var_os("CI").is_none()
            || std::env::var_os("SYNCGUARD_RENDER_TOOLS_OPTIONAL").is_some(),
        "{why}"
    );
    eprintln!("skipped: {why}");
    None
}

/// The jsonnet command Argo CD 3.6 links the library of (go-jsonnet v0.22.0):
/// `SYNCGUARD_JSONNET`, else `.tools/render-bin/jsonnet`; `None` (and a note) when it is not
/// there, except under CI as for [`tools`].
pub fn jsonnet_tool() -> Option<PathBuf> {
    let path = std::env::var_os("SYNCGUARD_JSONNET")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/render-bin/jsonnet"));
    if path.is_file() {
        return Some(path);
    }
    missing(&path.display().to_string())
}

/// A new git repository in a temp dir, `origin` [`REPO_URL`], holding `files` (path, text) in
/// one commit on `main`.
pub fn repository_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", REPO_URL]);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "files"]);
    dir
}

/// Runs the syncguard binary in `dir`.
pub fn syncguard(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(dir)
        .args(args)
        .env_remove("SYNCGUARD_HELM")
        .env_remove("SYNCGUARD_KUSTOMIZE")
        .env_remove("SYNCGUARD_JSONNET")
        // A chart source pulls into the chart cache: one of the temporary directory, not the
        // user's.
        .env(
            "SYNCGUARD_CHART_CACHE",
            std::env::temp_dir().join("syncguard-test-chart-cache"),
        )
        .output()
        .expect("run syncguard")
}

/// Compares `actual` with `tests/fixtures/golden/NAME`, naming the first line that differs;
/// `UPDATE_GOLDEN=1` rewrites the file instead.
pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run the test with UPDATE_GOLDEN=1", path.display()));
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from {} from line {}:\n- {}\n+ {}\n(the test with UPDATE_GOLDEN=1 \
             rewrites it; review the diff)",
            path.display(),
            first + 1,
            expected.lines().nth(first).unwrap_or("<end>"),
            actual.lines().nth(first).unwrap_or("<end>")
        );
    }
}
