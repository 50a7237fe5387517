//! Which Argo CD syncguard reasons about: a release number (`--argocd-version`, `argocd.version`
//! in `policies/config.yaml`) and the gitops-engine generation it implies.
//!
//! Argo CD up to 3.2 vendors the standalone `argoproj/gitops-engine` ("GE" in the spec); from 3.3
//! the engine lives in the argo-cd repository ("GE-mono") and differs in a handful of execution
//! and health rules (spec §5.9). Task building and ordering are the same in both.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// The gitops-engine generation a release runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flavor {
    /// Standalone `argoproj/gitops-engine`: Argo CD 3.2 and earlier.
    Ge,
    /// The `gitops-engine/` directory inside `argoproj/argo-cd`: Argo CD 3.3 and later.
    #[default]
    GeMono,
}

impl Flavor {
    /// How the flavour is named in reports.
    pub fn describe(self) -> &'static str {
        match self {
            Flavor::Ge => "standalone gitops-engine",
            Flavor::GeMono => "gitops-engine inside argo-cd",
        }
    }
}

/// An Argo CD release, `major.minor[.patch]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArgoCdVersion {
    /// Major release.
    pub major: u32,
    /// Minor release.
    pub minor: u32,
    /// Patch release, when given.
    pub patch: Option<u32>,
}

impl ArgoCdVersion {
    /// The newest release syncguard knows; the default.
    pub const NEWEST: ArgoCdVersion = ArgoCdVersion::new(3, 4);
    /// The first release whose engine is GE-mono.
    pub const FIRST_MONO: ArgoCdVersion = ArgoCdVersion::new(3, 3);
    /// The oldest release syncguard accepts (its hook finalizer and tracking came later, but
    /// older installations still exist and their rules are version-gated).
    pub const OLDEST: ArgoCdVersion = ArgoCdVersion::new(2, 0);

    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        ArgoCdVersion {
            major,
            minor,
            patch: None,
        }
    }

    /// The gitops-engine generation of this release.
    pub fn flavor(self) -> Flavor {
        if self.at_least(Self::FIRST_MONO.major, Self::FIRST_MONO.minor) {
            Flavor::GeMono
        } else {
            Flavor::Ge
        }
    }

    /// `self >= major.minor` (patch ignored).
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl Default for ArgoCdVersion {
    fn default() -> Self {
        Self::NEWEST
    }
}

impl fmt::Display for ArgoCdVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{}.{p}", self.major, self.minor),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

impl Serialize for ArgoCdVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not `MAJOR.MINOR[.PATCH]`.
    #[error(
        "{0:?} is not an Argo CD version: expected MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 3.2 or v3.2.11"
    )]
    Malformed(String),
    /// Older than syncguard supports.
    #[error("Argo CD {0} is older than {oldest}, the oldest release syncguard models", oldest = ArgoCdVersion::OLDEST)]
    TooOld(String),
}

impl FromStr for ArgoCdVersion {
    type Err = VersionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || VersionError::Malformed(text.to_string());
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        // A pre-release or build suffix (3.3.0-rc2, 3.2.11+abc) belongs to its release.
        let core = t.split(['-', '+']).next().unwrap_or("");
        let parts: Vec<&str> = core.split('.').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let num = |p: &str| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            p.parse::<u32>().map_err(|_| bad())
        };
        let v = ArgoCdVersion {
            major: num(parts[0])?,
            minor: num(parts[1])?,
            patch: parts.get(2).map(|p| num(p)).transpose()?,
        };
        if !v.at_least(Self::OLDEST.major, Self::OLDEST.minor) {
            return Err(VersionError::TooOld(text.trim().to_string()));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_up_to_3_2_run_the_standalone_engine_and_3_3_on_the_monorepo_one() {
        for (v, f) in [
            ("2.14", Flavor::Ge),
            ("3.2", Flavor::Ge),
            ("v3.2.11", Flavor::Ge),
            ("3.3.0-rc1", Flavor::GeMono),
            ("3.3", Flavor::GeMono),
            ("3.4.2", Flavor::GeMono),
            ("4.0", Flavor::GeMono),
        ] {
            assert_eq!(v.parse::<ArgoCdVersion>().unwrap().flavor(), f, "{v}");
        }
        assert_eq!(ArgoCdVersion::default().flavor(), Flavor::GeMono);
    }

    #[test]
    fn versions_parse_with_or_without_v_and_patch_and_print_as_given() {
        let v: ArgoCdVersion = "v3.2.11".parse().unwrap();
        assert_eq!((v.major, v.minor, v.patch), (3, 2, Some(11)));
        assert_eq!(v.to_string(), "3.2.11");
        assert_eq!("3.3".parse::<ArgoCdVersion>().unwrap().to_string(), "3.3");
        assert!(v.at_least(3, 2) && !v.at_least(3, 3) && v.at_least(2, 14));
        assert!("3.2".parse::<ArgoCdVersion>().unwrap() < v);
    }

    #[test]
    fn bad_versions_are_refused_with_what_was_expected() {
        for bad in ["", "3", "three.two", "3.2.1.4", "3..2", "3.-2", "latest"] {
            let e = bad.parse::<ArgoCdVersion>().unwrap_err();
            assert!(matches!(e, VersionError::Malformed(_)), "{bad}: {e}");
            assert!(e.to_string().contains("e.g. 3.2"), "{e}");
        }
        let old = "1.8".parse::<ArgoCdVersion>().unwrap_err();
        assert_eq!(
            old.to_string(),
            "Argo CD 1.8 is older than 2.0, the oldest release syncguard models"
        );
    }
}
