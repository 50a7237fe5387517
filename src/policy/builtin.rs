//! The built-in policy set, compiled into the binary (see `build.rs`), and where a policy set
//! comes from.
//!
//! The built-in files are read from memory: nothing is unpacked to disk, so `serve` and
//! `reconcile` run with a read-only root filesystem and no writable volume. A user directory
//! either replaces the built-in set (`--policies DIR`) or is laid over it
//! (`--policy-overlay DIR`, [`super::source::overlay`]), so a deployment carries only its own
//! configuration and extra rules and always runs the rules of the binary that builds their input.

use std::path::{Path, PathBuf};

use super::source::{self, BUILTIN_LABEL_DIR, PolicyDir};
use super::{LoadOptions, PolicyError, PolicySet};

include!(concat!(env!("OUT_DIR"), "/builtin_policies.rs"));

/// Where a policy set comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The rules compiled into this binary.
    Builtin,
    /// A directory of `*.rego` files and an optional `config.yaml`: the whole set (a directory
    /// with only a `config.yaml` stands for the built-in rules with that configuration).
    Dir(PathBuf),
    /// The built-in files with a directory's files laid over them: same file name replaces,
    /// other files add, its `config.yaml` replaces the built-in one.
    Overlay(PathBuf),
}

impl PolicySource {
    /// `--policies DIR` when given, else `--policy-overlay DIR` when given, else the built-in
    /// set. (The CLI makes the two flags exclusive.)
    pub fn from_args(policies: Option<PathBuf>, overlay: Option<PathBuf>) -> Self {
        match (policies, overlay) {
            (Some(dir), _) => PolicySource::Dir(dir),
            (None, Some(dir)) => PolicySource::Overlay(dir),
            (None, None) => PolicySource::Builtin,
        }
    }

    /// Human-readable name for messages.
    pub fn describe(&self) -> String {
        match self {
            PolicySource::Builtin => "built-in policies".to_string(),
            PolicySource::Dir(d) => d.display().to_string(),
            PolicySource::Overlay(d) => format!("built-in policies with overlay {}", d.display()),
        }
    }

    /// The directory to watch for hot reload (none for the built-in set).
    pub fn watched_dir(&self) -> Option<&Path> {
        match self {
            PolicySource::Builtin => None,
            PolicySource::Dir(d) | PolicySource::Overlay(d) => Some(d),
        }
    }

    /// The label of the set in messages: the directory, or `<built-in>`.
    pub fn label(&self) -> PathBuf {
        self.watched_dir()
            .map_or_else(|| PathBuf::from(BUILTIN_LABEL_DIR), Path::to_path_buf)
    }

    /// Reads the files of the set.
    pub fn files(&self) -> Result<PolicyDir, PolicyError> {
        match self {
            PolicySource::Builtin => Ok(source::builtin()),
            PolicySource::Dir(d) => source::read_dir(d),
            PolicySource::Overlay(d) => source::overlay(d),
        }
    }

    /// Loads the policy set. The built-in tests are not parsed: `cargo test` runs them
    /// (policy_test_runner), so a broken test cannot ship.
    pub fn load(&self) -> Result<PolicySet, PolicyError> {
        PolicySet::load_source(self, &LoadOptions::default())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::finding::{Action, RuleId};

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
        assert_eq!(set.dir(), Path::new("<built-in>"));
    }

    #[test]
    fn an_overlay_adds_a_rule_replaces_one_and_reconfigures_the_rest() {
        let builtin = PolicySource::Builtin.load().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("my_label.rego"),
            "package syncguard.rules.my_label\n\
             meta := {\"id\": \"SG990\", \"title\": \"t\", \"severity\": \"low\", \"action\": \"warn\"}\n\
             violations contains {\"msg\": \"bad\"} if input.resource.metadata.labels.bad == \"true\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("config.yaml"), "actions: {SG101: off}\n").unwrap();
        let source = PolicySource::from_args(None, Some(dir.path().to_path_buf()));
        assert_eq!(source, PolicySource::Overlay(dir.path().to_path_buf()));
        let set = source.load().unwrap();
        assert_eq!(set.rules().len(), builtin.rules().len() + 1);
        assert!(set.rules().iter().any(|r| r.id.as_str() == "SG990"));
        assert_eq!(set.dir(), dir.path());
        let sg101 = RuleId::new("SG101");
        assert_eq!(
            set.config().action_for(&sg101, None, Action::Deny),
            Action::Off
        );
        assert_eq!(
            builtin.config().action_for(&sg101, None, Action::Deny),
            Action::Deny
        );

        // A second rule with a built-in ID is refused, naming both files.
        std::fs::write(
            dir.path().join("copy.rego"),
            "package syncguard.rules.copy\n\
             meta := {\"id\": \"SG101\", \"title\": \"t\", \"severity\": \"low\", \"action\": \"warn\"}\n\
             violations contains {\"msg\": \"x\"} if false\n",
        )
        .unwrap();
        let err = source.load().unwrap_err().to_string();
        assert!(err.contains("SG101 is already used by"), "{err}");
    }
}
