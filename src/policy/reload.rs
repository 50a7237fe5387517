//! Loading the policy set for the long-running commands (`serve`, `reconcile`), and the rule
//! that makes hot reload safe: a policy
//! directory becomes live only when it loads *and* its own `test_*` rules pass.
//!
//! Load and tests read the directory separately, so a change landing between the two could make
//! the tests vouch for files that are not the ones loaded. The directory's fingerprint is taken
//! before and after; if it moved, the whole check is repeated.

use std::path::Path;
use std::time::Duration;

use thiserror::Error;

use super::builtin::PolicySource;
use super::test_runner::{TestOptions, TestOutcome, run_source_tests};
use super::watch::{DirWatch, fingerprint};
use super::{LoadOptions, PolicyError, PolicySet};

/// How often a moving directory is re-read before giving up for this round.
const ATTEMPTS: usize = 3;

/// Why a policy set was not (re)loaded.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The files do not load (syntax, config, rule contract).
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The set loads but its own tests fail.
    #[error("{dir}: {failed} policy test(s) failed: {names}")]
    Tests {
        /// The directory.
        dir: String,
        /// How many failed or errored.
        failed: usize,
        /// The first few, `package.test_name`.
        names: String,
    },
    /// The directory kept changing while it was being checked.
    #[error("{0}: the directory kept changing while it was loaded; will retry on the next change")]
    Moving(String),
}

impl LoadError {
    /// A short label for `syncguard_reload_failures_total{reason}`.
    pub fn metric_label(&self) -> &'static str {
        match self {
            LoadError::Policy(e) => e.metric_label(),
            LoadError::Tests { .. } => "tests",
            LoadError::Moving(_) => "moving",
        }
    }
}

/// Loads a policy source with the webhook's per-rule deadline. A directory must also pass its
/// own tests; the built-in set was tested when the binary was built.
///
/// Returns the set and the directory's fingerprint (`None` for the built-in set).
pub fn load(
    source: &PolicySource,
    rule_deadline: Duration,
) -> Result<(PolicySet, Option<u64>), LoadError> {
    let options = LoadOptions {
        deadline: rule_deadline,
        ..LoadOptions::default()
    };
    match source.watched_dir() {
        None => Ok((PolicySet::load_source(source, &options)?, None)),
        Some(_) => {
            let (set, fp) = load_tested(source, &options)?;
            Ok((set, Some(fp)))
        }
    }
}

/// Loads a directory (or a directory laid over the built-in set) and runs its tests; both must
/// succeed on the same content of the directory.
pub fn load_tested(
    source: &PolicySource,
    options: &LoadOptions,
) -> Result<(PolicySet, u64), LoadError> {
    let dir = source.label();
    let dir = dir.as_path();
    let label = dir.display().to_string();
    for _ in 0..ATTEMPTS {
        let before = fingerprint(dir, false);
        // Loading (prepare, compile) and testing are independent reads of the same files; doing
        // them side by side roughly halves the reload time on two cores.
        // The test run parses the test files; the load need not parse them a second time.
        let load_options = LoadOptions {
            parse_tests: false,
            ..options.clone()
        };
        let (set, report) = rayon::join(
            || PolicySet::load_source(source, &load_options),
            || run_source_tests(source, &TestOptions::default()),
        );
        let set = set?;
        let report = report?;
        if !report.success() {
            let failing: Vec<String> = report
                .results
                .iter()
                .filter(|r| !matches!(r.outcome, TestOutcome::Pass))
                .map(|r| format!("{}.{}", r.package, r.name))
                .collect();
            let mut names = failing
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if failing.len() > 5 {
                names.push_str(", …");
            }
            return Err(LoadError::Tests {
                dir: label,
                failed: failing.len(),
                names,
            });
        }
        let after = fingerprint(dir, false);
        if let (Some(b), Some(a)) = (before, after)
            && a == b
        {
            return Ok((set, a));
        }
    }
    Err(LoadError::Moving(label))
}

/// Follows the directory of a policy source (a whole set or an overlay) for hot reload (the
/// webhook's and the reconciler's): on every change of its content, loads the source with
/// [`load_tested`]; a set that loads and passes its tests
/// goes to `accept`, a broken one to `reject` — once per content, not on every poll. `last` is
/// the fingerprint of the content the live set was loaded from; the directory is compared with
/// it once at the start too. Runs until the task is dropped.
pub(crate) async fn follow(
    source: PolicySource,
    options: LoadOptions,
    mut last: u64,
    debounce: Duration,
    poll: Duration,
    mut accept: impl FnMut(PolicySet, Duration),
    mut reject: impl FnMut(&LoadError),
) {
    let Some(dir) = source.watched_dir().map(Path::to_path_buf) else {
        return;
    };
    let mut watch = DirWatch::new(&dir, false, debounce, poll);
    // The first pass looks at once: `last` describes the content the live set was loaded from,
    // and the directory may have changed before the watch existed.
    let mut first = true;
    loop {
        if !std::mem::take(&mut first) && watch.changed().await.is_none() {
            return;
        }
        let d = dir.clone();
        let Ok(Some(fp)) = tokio::task::spawn_blocking(move || fingerprint(&d, false)).await else {
            continue;
        };
        if fp == last {
            continue;
        }
        let s = source.clone();
        let o = options.clone();
        let started = std::time::Instant::now();
        let Ok(result) = tokio::task::spawn_blocking(move || load_tested(&s, &o)).await else {
            continue;
        };
        match result {
            Ok((set, loaded_fp)) => {
                last = loaded_fp;
                accept(set, started.elapsed());
            }
            // Not a broken policy: the next event or poll retries.
            Err(LoadError::Moving(_)) => {}
            Err(e) => {
                // Remember the broken content so it is reported once, not on every poll.
                last = fp;
                reject(&e);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const RULE: &str = "package syncguard.rules.bad_label\n\
        meta := {\"id\": \"SG990\", \"title\": \"t\", \"severity\": \"low\", \"action\": \"warn\"}\n\
        violations contains {\"msg\": \"bad\"} if input.resource.metadata.labels.bad == \"true\"\n";

    #[test]
    fn a_directory_whose_tests_fail_is_not_loaded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad_label.rego"), RULE).unwrap();
        std::fs::write(
            dir.path().join("bad_label_test.rego"),
            "package syncguard.rules.bad_label_test\nimport data.syncguard.rules.bad_label\n\
             test_reports if count(bad_label.violations) == 1 with input as {\"resource\": {\"metadata\": {\"labels\": {\"bad\": \"true\"}}}}\n",
        )
        .unwrap();
        let (set, fp) = load(
            &PolicySource::Dir(dir.path().into()),
            Duration::from_millis(250),
        )
        .unwrap();
        assert_eq!(set.rules().len(), 1);
        assert!(fp.is_some());
        std::fs::write(
            dir.path().join("bad_label_test.rego"),
            "package syncguard.rules.bad_label_test\ntest_fails if false\n",
        )
        .unwrap();
        let err = load(
            &PolicySource::Dir(dir.path().into()),
            Duration::from_millis(250),
        )
        .unwrap_err();
        assert_eq!(err.metric_label(), "tests");
        assert!(err.to_string().contains("test_fails"), "{err}");
    }

    #[test]
    fn the_builtin_set_loads_with_the_webhook_deadline() {
        let (set, fp) = load(&PolicySource::Builtin, Duration::from_millis(100)).unwrap();
        assert!(set.rules().iter().any(|r| r.id.as_str() == "SG201"));
        assert!(fp.is_none());
    }
}
