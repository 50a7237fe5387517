//! The few git questions syncguard asks of a checkout (the `git` binary, no network): where a
//! checkout's top is, its remotes, what a revision names, and throwaway worktrees of a revision.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `git -C dir ARGS...`: its stdout when it succeeds, else its stderr (or why it did not run).
pub fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("git could not be run: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// The top directory of the checkout holding `dir`.
pub fn toplevel(dir: &Path) -> Option<PathBuf> {
    git(dir, &["rev-parse", "--show-toplevel"])
        .ok()
        .map(|s| PathBuf::from(s.trim()))
}

/// The commit checked out in `dir`.
pub fn head(dir: &Path) -> Option<String> {
    git(dir, &["rev-parse", "HEAD"])
        .ok()
        .map(|s| s.trim().to_string())
}

/// The fetch URLs of the checkout's remotes, each once.
pub fn remote_urls(dir: &Path) -> Vec<String> {
    let remotes = git(dir, &["remote", "-v"]).unwrap_or_default();
    let mut urls: Vec<String> = Vec::new();
    for url in remotes
        .lines()
        .filter(|l| l.ends_with("(fetch)"))
        .filter_map(|l| l.split_whitespace().nth(1))
    {
        if !urls.iter().any(|u| u == url) {
            urls.push(url.to_string());
        }
    }
    urls
}

/// The commit `rev` names in the checkout at `dir`, or an error saying it names none.
pub fn resolve(dir: &Path, rev: &str) -> Result<String, String> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(format!("{rev:?} is not a revision"));
    }
    git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map(|s| s.trim().to_string())
    .map_err(|_| format!("revision {rev:?} does not exist in {}", dir.display()))
}

/// A detached worktree of one commit, removed (with its administrative files) when dropped.
#[derive(Debug)]
pub struct Worktree {
    repo: PathBuf,
    path: PathBuf,
    // Removed on SIGTERM too (`interrupt`); unregistered after `drop` removed it.
    _registered: crate::interrupt::Registered,
}

impl Worktree {
    /// Checks `commit` of the checkout at `repo` out into `path` (which must not exist).
    pub fn add(repo: &Path, commit: &str, path: &Path) -> Result<Self, String> {
        let target = path.to_string_lossy();
        git(
            repo,
            &["worktree", "add", "--quiet", "--detach", &target, commit],
        )
        .map_err(|e| format!("cannot check out {commit} into {target}: {e}"))?;
        Ok(Self {
            repo: repo.to_path_buf(),
            path: path.to_path_buf(),
            _registered: crate::interrupt::register(crate::interrupt::Leftover::Worktree {
                repo: repo.to_path_buf(),
                path: path.to_path_buf(),
            }),
        })
    }

    /// Where the commit is checked out.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let target = self.path.to_string_lossy().into_owned();
        // A failure leaves a stale entry that the next `git worktree prune` removes.
        let _ = git(&self.repo, &["worktree", "remove", "--force", &target]);
        let _ = git(&self.repo, &["worktree", "prune"]);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let ok = Command::new("git")
                .current_dir(dir.path())
                .args(args)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.com")
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        run(&["init", "-q", "-b", "main"]);
        run(&[
            "remote",
            "add",
            "origin",
            "https://example.com/org/repo.git",
        ]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        run(&["add", "a.txt"]);
        run(&["commit", "-q", "-m", "one"]);
        std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
        run(&["commit", "-q", "-am", "two"]);
        dir
    }

    #[test]
    fn revisions_resolve_and_worktrees_come_and_go() {
        let dir = repo();
        let root = toplevel(dir.path()).unwrap();
        assert_eq!(remote_urls(&root), ["https://example.com/org/repo.git"]);
        let first = resolve(&root, "HEAD~1").unwrap();
        assert_eq!(first.len(), 40);
        assert_ne!(Some(first.clone()), head(&root));
        let e = resolve(&root, "no-such-branch").unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        assert!(resolve(&root, "--all").is_err());
        let place = tempfile::tempdir().unwrap();
        let path = place.path().join("base");
        {
            let wt = Worktree::add(&root, &first, &path).unwrap();
            assert_eq!(
                std::fs::read_to_string(wt.path().join("a.txt")).unwrap(),
                "one\n"
            );
            assert_eq!(head(wt.path()).as_deref(), Some(first.as_str()));
        }
        assert!(!path.exists());
        let list = git(&root, &["worktree", "list"]).unwrap();
        assert_eq!(list.lines().count(), 1, "{list}");
    }
}
