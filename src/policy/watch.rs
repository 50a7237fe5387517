//! Watching a mounted directory for changes.
//!
//! Kubernetes updates a mounted Secret or ConfigMap by writing a new timestamped folder and
//! atomically swapping the `..data` symlink; the visible files are symlinks through `..data`.
//! Watching the *files* misses that swap (the inotify watch follows the old inode —
//! kubernetes/kubernetes#111947), so syncguard watches the *directory* and, after events settle
//! (a short debounce), re-reads the content and compares a fingerprint. A slow poll backs the
//! watch up (inotify limits, network filesystems, a directory that did not exist yet).
//!
//! The watcher only says "something may have changed"; deciding whether it did is the
//! fingerprint's job, so spurious events (our own reads, attribute changes) cost one hash.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

/// Ticks when the watched directory may have changed.
pub struct DirWatch {
    ticks: mpsc::Receiver<()>,
    // Keeps the OS watch alive; dropping it stops the events.
    _watcher: Option<RecommendedWatcher>,
    _task: tokio::task::JoinHandle<()>,
}

impl DirWatch {
    /// Watches `dir` (recursively when asked). Events are debounced by `debounce`; a tick is
    /// also sent every `poll`. If the OS watch cannot be set up, polling alone is used and the
    /// reason is logged.
    pub fn new(dir: &Path, recursive: bool, debounce: Duration, poll: Duration) -> Self {
        let (raw_tx, mut raw_rx) = mpsc::unbounded_channel::<()>();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let relevant = match &event {
                Ok(e) => !matches!(e.kind, EventKind::Access(_)),
                Err(_) => true,
            };
            if relevant {
                // The receiver is gone only when the watch is being dropped.
                let _ = raw_tx.send(());
            }
        })
        .and_then(|mut w| {
            let mode = if recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            w.watch(dir, mode).map(|()| w)
        });
        let watcher = match watcher {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(
                    dir = %dir.display(),
                    error = %e,
                    poll_s = poll.as_secs(),
                    "cannot watch the directory; polling only"
                );
                None
            }
        };
        let (tx, ticks) = mpsc::channel::<()>(1);
        let task = tokio::spawn(async move {
            let mut interval = tokio::time::interval(poll);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            interval.tick().await; // the first tick fires immediately
            loop {
                tokio::select! {
                    event = raw_rx.recv() => {
                        if event.is_none() {
                            // The OS watch is gone; keep polling.
                            std::future::pending::<()>().await;
                        }
                        // Debounce: wait until no event arrived for `debounce`.
                        while let Ok(Some(())) =
                            tokio::time::timeout(debounce, raw_rx.recv()).await
                        {}
                    }
                    _ = interval.tick() => {}
                }
                // A full channel already holds a pending tick; that one covers this change.
                if let Err(mpsc::error::TrySendError::Closed(())) = tx.try_send(()) {
                    return;
                }
            }
        });
        Self {
            ticks,
            _watcher: watcher,
            _task: task,
        }
    }

    /// Waits for the next "may have changed". `None` when the watch has stopped.
    pub async fn changed(&mut self) -> Option<()> {
        self.ticks.recv().await
    }
}

impl Drop for DirWatch {
    fn drop(&mut self) {
        self._task.abort();
    }
}

/// A fingerprint of the regular files directly in `dir` (or below it when `recursive`),
/// following symlinks and skipping hidden entries (`..data`, `..2024_01_01…`: the targets are
/// reached through the visible symlinks). `None` when the directory cannot be read.
///
/// Not cryptographic: it only has to notice changes, and the files are ours.
pub fn fingerprint(dir: &Path, recursive: bool) -> Option<u64> {
    let mut files: Vec<PathBuf> = Vec::new();
    collect(dir, recursive, &mut files).ok()?;
    files.sort();
    let mut hasher = DefaultHasher::new();
    for f in &files {
        f.hash(&mut hasher);
        // A file that vanished between listing and reading changes the fingerprint too.
        match std::fs::read(f) {
            Ok(bytes) => bytes.hash(&mut hasher),
            Err(e) => e.kind().to_string().hash(&mut hasher),
        }
    }
    Some(hasher.finish())
}

fn collect(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        // `metadata` follows symlinks.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_file() {
            out.push(path);
        } else if meta.is_dir() && recursive {
            collect(&path, recursive, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_changes_with_content_and_ignores_hidden_entries() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rego"), "package a").unwrap();
        let first = fingerprint(dir.path(), false).unwrap();
        std::fs::create_dir(dir.path().join("..data")).unwrap();
        std::fs::write(dir.path().join("..data/x"), "x").unwrap();
        assert_eq!(fingerprint(dir.path(), false), Some(first));
        std::fs::write(dir.path().join("a.rego"), "package b").unwrap();
        assert_ne!(fingerprint(dir.path(), false), Some(first));
        assert_eq!(fingerprint(&dir.path().join("missing"), false), None);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_swap_in_the_directory_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("..v1")).unwrap();
        std::fs::write(d.join("..v1/tls.crt"), "one").unwrap();
        std::os::unix::fs::symlink("..v1", d.join("..data")).unwrap();
        std::os::unix::fs::symlink("..data/tls.crt", d.join("tls.crt")).unwrap();
        let before = fingerprint(d, false).unwrap();
        let mut watch = DirWatch::new(
            d,
            false,
            Duration::from_millis(50),
            Duration::from_secs(3600),
        );
        // Kubelet's swap: new folder, new symlink, rename over `..data`.
        std::fs::create_dir(d.join("..v2")).unwrap();
        std::fs::write(d.join("..v2/tls.crt"), "two").unwrap();
        std::os::unix::fs::symlink("..v2", d.join("..data_tmp")).unwrap();
        std::fs::rename(d.join("..data_tmp"), d.join("..data")).unwrap();
        tokio::time::timeout(Duration::from_secs(10), watch.changed())
            .await
            .unwrap()
            .unwrap();
        assert_ne!(fingerprint(d, false).unwrap(), before);
    }
}
