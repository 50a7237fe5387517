//! The kube-apiserver and etcd the tests that need a real API server run (scripts/install-kube.sh
//! builds them into .tools/bin; SYNCGUARD_KUBE_BINARIES names another directory).
//!
//! A machine without them skips those tests with a line saying so; under `CI=true` they fail
//! instead (.ci/run installs the binaries first), unless SYNCGUARD_KUBE_OPTIONAL=1 says the
//! installer could not build them there.

use std::path::{Path, PathBuf};

/// The directory of kube-apiserver and etcd, or `None` (after saying why) when the test skips.
pub fn binaries() -> Option<PathBuf> {
    let dir = std::env::var_os("SYNCGUARD_KUBE_BINARIES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/bin"));
    if dir.join("kube-apiserver").is_file() && dir.join("etcd").is_file() {
        return Some(dir);
    }
    let optional = std::env::var("SYNCGUARD_KUBE_OPTIONAL").is_ok_and(|v| v == "1");
    if std::env::var("CI").is_ok_and(|v| v == "true") && !optional {
        panic!(
            "kube-apiserver and etcd are not in {} (run scripts/install-kube.sh); CI never skips these tests",
            dir.display()
        );
    }
    eprintln!(
        "skipped: kube-apiserver and etcd are not in {} (scripts/install-kube.sh builds them)",
        dir.display()
    );
    None
}
