//! The field fixtures: manifests modelled on public Argo CD bug reports, one directory per
//! report under `tests/fixtures/field/` (README.md there). Each directory names the rules that
//! must report on it (`EXPECT`), the report it comes from (`SOURCE`) and, optionally, extra
//! `syncguard check` arguments (`ARGS`, e.g. `--argocd-version 2.9`).
//!
//! `syncguard check` — the real binary, with the repository's `policies/` — must report exactly
//! the rules of `EXPECT`: a rule that stops firing on the report it was written for fails here,
//! and so does a rule that starts firing where it should not.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn field_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root().join("tests/fixtures/field"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Words of a file, without `#` comments.
fn words(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect()
}

/// Rule ids with open findings when `syncguard check` runs on `dir`.
fn reported(dir: &Path) -> BTreeSet<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_syncguard"));
    cmd.arg("check")
        .arg(dir)
        .arg("--policies")
        .arg(root().join("policies"))
        .args(["--format", "json", "--color", "never"]);
    let args = dir.join("ARGS");
    if args.exists() {
        cmd.args(words(&args));
    }
    let out = cmd.output().unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "{}: exit {code:?}\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "open")
        .map(|f| f["rule_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_field_fixture_reports_exactly_its_expected_rules() {
    let dirs = field_dirs();
    assert!(dirs.len() >= 13, "one fixture per hazard family at least");
    let mut wrong = Vec::new();
    for dir in &dirs {
        let mut expected: BTreeSet<String> = words(&dir.join("EXPECT")).into_iter().collect();
        assert!(
            !expected.is_empty(),
            "{}: EXPECT is empty (write `none` when no rule is expected)",
            dir.display()
        );
        // `none`: syncguard is known not to report this one (yet); the test holds that too, so
        // a rule that starts firing here has to update the file.
        expected.remove("none");
        let got = reported(dir);
        if got != expected {
            wrong.push(format!(
                "{}: expected {expected:?}, syncguard check reports {got:?}",
                dir.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_field_fixture_names_the_public_report_it_comes_from() {
    for dir in field_dirs() {
        let source = fs::read_to_string(dir.join("SOURCE"))
            .unwrap_or_else(|e| panic!("{}: SOURCE: {e}", dir.display()));
        assert!(
            source.contains("https://github.com/argoproj/")
                || source.contains("https://argo-cd.readthedocs.io/"),
            "{}: SOURCE must link the public report: {source}",
            dir.display()
        );
    }
}

/// Every second-generation rule (issue 13), and every rule added since (SG121, issue 20; SG306, SG307,
/// SG610, SG620 and SG621, issue 35; SG309 and SG310, the settings vocabulary), fires on at least one
/// field fixture. (SG308 has no public report with complete manifests yet.)
#[test]
fn every_second_generation_rule_has_a_field_fixture() {
    let mut covered = BTreeSet::new();
    for dir in field_dirs() {
        covered.extend(words(&dir.join("EXPECT")));
    }
    let missing: Vec<&str> = [
        "SG113", "SG114", "SG115", "SG116", "SG117", "SG118", "SG119", "SG120", "SG201", "SG203",
        "SG206", "SG207", "SG208", "SG301", "SG304", "SG121", "SG306", "SG307", "SG309", "SG310",
        "SG610", "SG620", "SG621",
    ]
    .into_iter()
    .filter(|id| !covered.contains(*id))
    .collect();
    assert!(missing.is_empty(), "no field fixture for {missing:?}");
}
