//! What a command leaves behind while it runs, and its removal when the process is stopped.
//!
//! `review` checks revisions out into throwaway git worktrees; renders work in temporary
//! directories and run helm/kustomize in process groups of their own. Their destructors remove
//! them on every normal path, but a CI runner that cancels a job sends SIGTERM (a terminal
//! SIGINT, a closed session SIGHUP), and a process killed by a signal runs no destructor: the
//! worktree stays registered in the user's repository (`git worktree list`), the directories
//! stay in `$TMPDIR`, and a render that was running keeps running.
//!
//! So each of them is registered here while it exists ([`Leftover`], unregistered when its
//! [`Registered`] guard drops), and [`install`] starts a thread that, on SIGTERM, SIGINT or
//! SIGHUP, kills the registered process groups, removes the registered worktrees and
//! directories, and ends the process with 128 + the signal's number, as a shell reports it.
//! A part of the program that stops in order on a signal itself (the throwaway API server of
//! `--ephemeral-cluster`, which selects on the signal and drops its control plane) takes a
//! [`hold`] for that time: the leftovers are still removed, and the holder ends the process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One thing to remove when the process is stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leftover {
    /// A directory, removed with everything in it.
    Dir(PathBuf),
    /// A git worktree at `path` of the repository at `repo`: removed from the repository's
    /// list of worktrees (`git worktree remove --force`, then `prune`), and its files.
    Worktree { repo: PathBuf, path: PathBuf },
    /// A process group (a render and everything it started), killed.
    ProcessGroup(u32),
}

/// Keeps a [`Leftover`] registered; dropping it unregisters (its owner removed it itself).
#[derive(Debug)]
#[must_use = "the leftover is unregistered as soon as the guard drops"]
pub struct Registered(u64);

impl Drop for Registered {
    fn drop(&mut self) {
        registry().remove(&self.0);
    }
}

/// Registers `leftover` until the returned guard drops.
pub fn register(leftover: Leftover) -> Registered {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry().insert(id, leftover);
    Registered(id)
}

/// A temporary directory (under `$TMPDIR`) removed when it drops or when the process is stopped.
#[derive(Debug)]
pub struct TempDir {
    // Dropped in this order: unregister, then remove.
    _registered: Registered,
    dir: tempfile::TempDir,
}

impl TempDir {
    pub fn new() -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("syncguard-").tempdir()?;
        Ok(Self {
            _registered: register(Leftover::Dir(dir.path().to_path_buf())),
            dir,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// While a hold is alive, a signal removes the leftovers but does not end the process: the
/// holder does (see the module docs).
#[derive(Debug)]
#[must_use = "the hold ends as soon as it drops"]
pub struct Hold(());

impl Drop for Hold {
    fn drop(&mut self) {
        HOLDS.fetch_sub(1, Ordering::SeqCst);
    }
}

static HOLDS: AtomicUsize = AtomicUsize::new(0);

pub fn hold() -> Hold {
    HOLDS.fetch_add(1, Ordering::SeqCst);
    Hold(())
}

fn registry() -> MutexGuard<'static, BTreeMap<u64, Leftover>> {
    static REGISTRY: Mutex<BTreeMap<u64, Leftover>> = Mutex::new(BTreeMap::new());
    // A panic while the map was held leaves it whole (insert and remove do not unwind half
    // way), so it is still the truth.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes every registered leftover, newest first (a directory created inside a worktree goes
/// before the worktree; process groups are killed before their files are removed).
pub fn remove_all() {
    let mut taken: Vec<(u64, Leftover)> = std::mem::take(&mut *registry()).into_iter().collect();
    taken.sort_by_key(|(id, l)| {
        (
            !matches!(l, Leftover::ProcessGroup(_)),
            std::cmp::Reverse(*id),
        )
    });
    for (_, leftover) in taken {
        remove(&leftover);
    }
}

fn remove(leftover: &Leftover) {
    match leftover {
        Leftover::Dir(dir) => {
            let _ = std::fs::remove_dir_all(dir);
        }
        Leftover::Worktree { repo, path } => {
            let git = |args: &[&std::ffi::OsStr]| {
                let _ = Command::new("git")
                    .arg("-C")
                    .arg(repo)
                    .args(args)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status();
            };
            git(&[
                "worktree".as_ref(),
                "remove".as_ref(),
                "--force".as_ref(),
                path.as_os_str(),
            ]);
            let _ = std::fs::remove_dir_all(path);
            git(&["worktree".as_ref(), "prune".as_ref()]);
        }
        Leftover::ProcessGroup(group) => {
            #[cfg(unix)]
            if let Ok(group) = libc::pid_t::try_from(*group) {
                // SAFETY: kill(2) takes plain integers and has no memory-safety preconditions.
                // The group is registered only while its leader is unreaped (process.rs), so
                // its id names no other group.
                unsafe {
                    libc::kill(-group, libc::SIGKILL);
                }
            }
        }
    }
}

/// Starts the thread that removes the leftovers on SIGTERM, SIGINT or SIGHUP and ends the
/// process (see the module docs). Commands that leave nothing behind need not call it; calling
/// it twice starts one thread.
pub fn install() {
    #[cfg(unix)]
    {
        static STARTED: std::sync::Once = std::sync::Once::new();
        STARTED.call_once(|| {
            let (ready_tx, ready_rx) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("interrupt".into())
                .spawn(move || watch(&ready_tx));
            // The handlers are in place before the command starts its work, so no signal
            // arrives in between with the default action (an end without cleanup).
            if spawned.is_ok() {
                let _ = ready_rx.recv();
            }
        });
    }
}

#[cfg(unix)]
fn watch(ready: &std::sync::mpsc::Sender<()>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        let _ = ready.send(());
        return;
    };
    let number = runtime.block_on(async {
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            let _ = ready.send(());
            return None;
        };
        let _ = ready.send(());
        tokio::select! {
            _ = term.recv() => Some(libc::SIGTERM),
            _ = int.recv() => Some(libc::SIGINT),
            _ = hup.recv() => Some(libc::SIGHUP),
        }
    });
    let Some(number) = number else { return };
    remove_all();
    if HOLDS.load(Ordering::SeqCst) == 0 {
        std::process::exit(128 + number);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn registered(leftover: &Leftover) -> bool {
        registry().values().any(|l| l == leftover)
    }

    // remove_all() is left to tests/review.rs (a real SIGTERM to a real review): here, other
    // tests of this binary register their own leftovers concurrently.
    #[test]
    fn a_dropped_guard_unregisters_and_a_worktree_leaves_the_repository_list() {
        let place = tempfile::tempdir().unwrap();
        let dir = Leftover::Dir(place.path().join("d"));
        let guard = register(dir.clone());
        assert!(registered(&dir));
        drop(guard);
        assert!(!registered(&dir));

        let repo = place.path().join("repo");
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        std::fs::create_dir(&repo).unwrap();
        git(&["init", "-q"]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "c",
        ]);
        let tree = place.path().join("tree");
        git(&["worktree", "add", "-q", "--detach", tree.to_str().unwrap()]);
        assert_eq!(git(&["worktree", "list"]).lines().count(), 2);
        remove(&Leftover::Worktree {
            repo: repo.clone(),
            path: tree.clone(),
        });
        assert_eq!(git(&["worktree", "list"]).lines().count(), 1);
        assert!(!tree.exists());
    }

    #[test]
    fn a_temp_dir_is_registered_while_it_lives() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().to_path_buf();
        assert!(
            registry()
                .values()
                .any(|l| *l == Leftover::Dir(path.clone())),
            "registered"
        );
        drop(dir);
        assert!(!path.exists());
        assert!(
            !registry()
                .values()
                .any(|l| *l == Leftover::Dir(path.clone()))
        );
    }
}
