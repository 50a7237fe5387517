//! Where the throwaway control plane's programs come from, and which Kubernetes they are.
//!
//! `kube-apiserver` and `etcd` are looked for, in this order, in the directory given by
//! `--kube-binaries DIR`, in `$SYNCGUARD_KUBE_BINARIES`, in the cache directory
//! (`$XDG_CACHE_HOME/syncguard/bin`, else `~/.cache/syncguard/bin`) and on `PATH`. Both must be
//! found in the same place, so a stray `etcd` on `PATH` is never paired with another release's
//! API server. `scripts/install-kube.sh` builds them from the Go module proxy; the release
//! binaries of a Kubernetes release and of its etcd serve as well (docs/ephemeral-cluster.md).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable naming the directory of `kube-apiserver` and `etcd`.
pub const ENV: &str = "SYNCGUARD_KUBE_BINARIES";

/// The oldest Kubernetes minor release the control plane is started with: its flags (the
/// service-account issuer, `--endpoint-reconciler-type`) and server-side apply as used here.
const OLDEST_MINOR: u32 = 27;

/// The two programs, and the Kubernetes version of the API server.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `kube-apiserver`.
    pub apiserver: PathBuf,
    /// `etcd`.
    pub etcd: PathBuf,
    /// What `kube-apiserver --version` says, e.g. `v1.34.4`.
    pub version: String,
}

/// Why the programs cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BinariesError {
    /// Neither program found anywhere.
    #[error(
        "kube-apiserver and etcd were not found (looked in {looked}); build them with scripts/install-kube.sh and pass --kube-binaries DIR or set {ENV}, or put a Kubernetes release's kube-apiserver and etcd there (docs/ephemeral-cluster.md)"
    )]
    NotFound {
        /// The places searched.
        looked: String,
    },
    /// One of the two programs is missing from the directory that holds the other.
    #[error("{dir} holds {found} but not {missing}; both must come from the same place")]
    Half {
        /// The directory.
        dir: String,
        /// The program present.
        found: &'static str,
        /// The program absent.
        missing: &'static str,
    },
    /// A program did not run or did not say what it is.
    #[error("{path} is not a usable {what}: {why}")]
    Unusable {
        /// The program's path.
        path: String,
        /// `kube-apiserver` or `etcd`.
        what: &'static str,
        /// What went wrong.
        why: String,
    },
}

/// Finds both programs; `dir` is `--kube-binaries`.
pub fn find(dir: Option<&Path>) -> Result<Binaries, BinariesError> {
    let mut places: Vec<PathBuf> = Vec::new();
    if let Some(d) = dir {
        places.push(d.to_path_buf());
    } else {
        if let Some(d) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
            places.push(PathBuf::from(d));
        }
        if let Some(d) = cache_dir() {
            places.push(d);
        }
        if let Some(path) = std::env::var_os("PATH") {
            places.extend(std::env::split_paths(&path));
        }
    }
    for place in &places {
        let apiserver = place.join("kube-apiserver");
        let etcd = place.join("etcd");
        match (is_program(&apiserver), is_program(&etcd)) {
            (true, true) => {
                let version = apiserver_version(&apiserver)?;
                check_etcd(&etcd)?;
                return Ok(Binaries {
                    apiserver,
                    etcd,
                    version,
                });
            }
            // An explicit directory must be complete; on PATH the two usually live apart.
            (true, false) | (false, true) if dir.is_some() || places.first() == Some(place) => {
                let (found, missing) = if is_program(&apiserver) {
                    ("kube-apiserver", "etcd")
                } else {
                    ("etcd", "kube-apiserver")
                };
                return Err(BinariesError::Half {
                    dir: place.display().to_string(),
                    found,
                    missing,
                });
            }
            _ => {}
        }
    }
    let looked = if dir.is_some() {
        places
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        format!("--kube-binaries, ${ENV}, the cache directory and PATH")
    };
    Err(BinariesError::NotFound { looked })
}

/// `$XDG_CACHE_HOME/syncguard/bin`, else `~/.cache/syncguard/bin`.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("syncguard").join("bin"))
}

fn is_program(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Runs `program --version` and returns its standard output.
fn version_output(program: &Path, what: &'static str) -> Result<String, BinariesError> {
    let unusable = |why: String| BinariesError::Unusable {
        path: program.display().to_string(),
        what,
        why,
    };
    let out = Command::new(program)
        .arg("--version")
        .output()
        .map_err(|e| unusable(e.to_string()))?;
    if !out.status.success() {
        return Err(unusable(format!("`--version` exited with {}", out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The version `kube-apiserver --version` reports (`Kubernetes v1.34.4`), at least 1.27.
fn apiserver_version(program: &Path) -> Result<String, BinariesError> {
    let text = version_output(program, "kube-apiserver")?;
    let version = parse_apiserver_version(&text).ok_or_else(|| BinariesError::Unusable {
        path: program.display().to_string(),
        what: "kube-apiserver",
        why: format!(
            "`--version` said {:?}, not `Kubernetes v1.MINOR.PATCH`",
            text.trim()
        ),
    })?;
    let minor = minor_of(&version).unwrap_or(0);
    if minor < OLDEST_MINOR {
        return Err(BinariesError::Unusable {
            path: program.display().to_string(),
            what: "kube-apiserver",
            why: format!("it is Kubernetes {version}; 1.{OLDEST_MINOR} or newer is needed"),
        });
    }
    Ok(version)
}

fn check_etcd(program: &Path) -> Result<(), BinariesError> {
    let text = version_output(program, "etcd")?;
    if text.lines().any(|l| l.starts_with("etcd Version: ")) {
        Ok(())
    } else {
        Err(BinariesError::Unusable {
            path: program.display().to_string(),
            what: "etcd",
            why: format!("`--version` said {:?}", text.trim()),
        })
    }
}

/// `v1.34.4` from `Kubernetes v1.34.4`.
fn parse_apiserver_version(text: &str) -> Option<String> {
    let v = text.trim().strip_prefix("Kubernetes ")?;
    minor_of(v)?;
    Some(v.to_string())
}

fn minor_of(version: &str) -> Option<u32> {
    let rest = version.strip_prefix("v1.")?;
    rest.split(['.', '-', '+']).next()?.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_the_api_servers_own_words() {
        assert_eq!(
            parse_apiserver_version("Kubernetes v1.34.4\n").as_deref(),
            Some("v1.34.4")
        );
        assert_eq!(minor_of("v1.34.4"), Some(34));
        assert_eq!(minor_of("v1.30.0-rc.1"), Some(30));
        assert_eq!(parse_apiserver_version("etcd Version: 3.6.5"), None);
        assert_eq!(parse_apiserver_version("Kubernetes v2.0.0"), None);
    }

    #[cfg(unix)]
    fn script(dir: &Path, name: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_must_hold_both_programs_of_a_usable_release() {
        let dir = tempfile::tempdir().unwrap();
        let err = find(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("not found"), "{err}");
        script(dir.path(), "kube-apiserver", "echo 'Kubernetes v1.34.4'");
        let err = find(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("but not etcd"), "{err}");
        script(dir.path(), "etcd", "echo 'etcd Version: 3.6.5'");
        let found = find(Some(dir.path())).unwrap();
        assert_eq!(found.version, "v1.34.4");
        script(dir.path(), "kube-apiserver", "echo 'Kubernetes v1.20.1'");
        let err = find(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("1.27 or newer"), "{err}");
        script(dir.path(), "kube-apiserver", "echo nonsense");
        let err = find(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("not a usable kube-apiserver"), "{err}");
        script(dir.path(), "kube-apiserver", "exit 3");
        let err = find(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("exited"), "{err}");
    }
}
