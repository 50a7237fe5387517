//! The built-in policy set, compiled into the binary (see `build.rs`).
//!
//! `PolicySet::load` reads a directory, so the embedded files are written to a private temporary
//! directory first. That keeps one loading path for built-in and user policies: what users test
//! with `syncguard test policies/` is exactly what the binary runs.

use std::path::PathBuf;

use super::{PolicyError, PolicySet};

include!(concat!(env!("OUT_DIR"), "/builtin_policies.rs"));

/// Where a policy set comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The rules compiled into this binary.
    Builtin,
    /// A directory of `*.rego` files and an optional `config.yaml`.
    Dir(PathBuf),
}

impl PolicySource {
    /// `--policies DIR` when given, else the built-in set.
    pub fn from_arg(dir: Option<PathBuf>) -> Self {
        dir.map_or(PolicySource::Builtin, PolicySource::Dir)
    }

    /// Human-readable name for messages.
    pub fn describe(&self) -> String {
        match self {
            PolicySource::Builtin => "built-in policies".to_string(),
            PolicySource::Dir(d) => d.display().to_string(),
        }
    }

    /// Loads the policy set.
    pub fn load(&self) -> Result<PolicySet, PolicyError> {
        match self {
            PolicySource::Dir(dir) => PolicySet::load(dir),
            PolicySource::Builtin => {
                let dir = tempfile::Builder::new()
                    .prefix("syncguard-policies-")
                    .tempdir()
                    .map_err(|e| PolicyError::Io {
                        path: std::env::temp_dir(),
                        source: e,
                    })?;
                for (name, text) in BUILTIN_POLICY_FILES {
                    let path = dir.path().join(name);
                    std::fs::write(&path, text).map_err(|e| PolicyError::Io { path, source: e })?;
                }
                // Everything is in memory once loaded; the directory is removed on drop. The
                // built-in tests are not parsed: `cargo test` runs them (policy_test_runner), so
                // a broken test cannot ship, and they are the larger half of the directory.
                PolicySet::load_with(
                    dir.path(),
                    &super::LoadOptions {
                        parse_tests: false,
                        ..super::LoadOptions::default()
                    },
                )
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_set_is_the_policies_directory() {
        let on_disk = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/policies"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".rego") || n == "config.yaml")
            .count();
        assert_eq!(BUILTIN_POLICY_FILES.len(), on_disk);
        let set = PolicySource::Builtin.load().unwrap();
        assert!(set.rules().iter().any(|r| r.id.as_str() == "SG101"));
    }
}
