//! `syncguard check`, `test`, `inputs` and `determinism` end to end: the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env_remove("SYNCGUARD_POLICIES")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", out(o)))
}

fn open_rules(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "open")
        .map(|f| f["rule_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_seed_incident_is_blocked_with_the_hook_and_ordering_findings() {
    let o = run(&["check", "examples/seed-incident"], None);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let text = out(&o);
    for rule in ["SG101", "SG102", "SG103", "SG201"] {
        assert!(text.contains(rule), "{rule} missing:\n{text}");
    }
    // SG201 names the Secret, where it is created, and the hook's own phase and wave.
    assert!(text.contains("db-credentials"), "{text}");
    assert!(text.contains("ExternalSecret"), "{text}");
    assert!(
        text.contains("examples/seed-incident/migration-job.yaml:"),
        "{text}"
    );
}

#[test]
fn the_clean_example_passes() {
    let o = run(&["check", "examples/clean-app", "--format", "json"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let report = json(&o);
    assert!(open_rules(&report).is_empty(), "{report:#}");
    assert_eq!(report["summary"]["objects"], 7);
}

#[test]
fn fail_on_warn_also_blocks_on_warnings_and_proposed_mutations() {
    let yaml = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  backoffLimit: 1
  template: {spec: {restartPolicy: Never, containers: [{name: m, image: m:1}]}}
";
    let deny_only = run(&["check", "-"], Some(yaml));
    assert_eq!(deny_only.status.code(), Some(0), "{}", out(&deny_only));
    let warn = run(&["check", "-", "--fail-on", "warn"], Some(yaml));
    assert_eq!(warn.status.code(), Some(1), "{}", out(&warn));
    assert!(out(&warn).contains("SG101"));
}

#[test]
fn show_patches_prints_the_proposed_json_patch() {
    let o = run(&["check", "examples/seed-incident", "--show-patches"], None);
    let text = out(&o);
    assert!(text.contains("/spec/activeDeadlineSeconds"), "{text}");
    assert!(text.contains("/spec/backoffLimit"), "{text}");
}

#[test]
fn every_report_format_is_well_formed() {
    let sarif = run(
        &["check", "examples/seed-incident", "--format", "sarif"],
        None,
    );
    let v = json(&sarif);
    assert_eq!(v["version"], "2.1.0");
    assert!(!v["runs"][0]["results"].as_array().unwrap().is_empty());
    let junit = run(
        &["check", "examples/seed-incident", "--format", "junit"],
        None,
    );
    let xml = out(&junit);
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(xml.contains("<failure"), "{xml}");
    let md = run(
        &["check", "examples/seed-incident", "--format", "markdown"],
        None,
    );
    assert!(out(&md).contains("| Severity |"), "{}", out(&md));
    let js = run(
        &["check", "examples/seed-incident", "--format", "json"],
        None,
    );
    assert_eq!(json(&js)["version"], 1);
}

#[test]
fn an_unreadable_file_gives_exit_2_but_the_rest_is_still_checked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations: {argocd.argoproj.io/hook: PreSync}\nspec: {template: {spec: {containers: []}}}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.yaml"), "kind: [\n").unwrap();
    let o = run(&["check", dir.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    let text = out(&o);
    assert!(text.contains("SG101"), "{text}");
    assert!(text.contains("broken.yaml:2:1: invalid YAML"), "{text}");
}

#[test]
fn a_broken_policy_directory_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("broken.rego"),
        "package syncguard.rules.broken\n\nmeta := {\n",
    )
    .unwrap();
    let o = run(
        &[
            "check",
            "examples/clean-app",
            "--policies",
            dir.path().to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("broken.rego:"), "{err}");
}

#[test]
fn syncguard_test_runs_the_shipped_policy_tests() {
    let o = run(&["test", "policies"], None);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let text = out(&o);
    assert!(text.contains(" passed, 0 failed"), "{text}");
}

#[test]
fn syncguard_test_fails_on_a_failing_test() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("x_test.rego"),
        "package x_test\n\ntest_true if { true }\n\ntest_false if { false }\n",
    )
    .unwrap();
    let o = run(&["test", dir.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(out(&o).contains("1 passed, 1 failed"), "{}", out(&o));
}

#[test]
fn inputs_prints_what_the_rules_see() {
    let o = run(&["inputs", "examples/seed-incident"], None);
    assert_eq!(o.status.code(), Some(0));
    let docs = json(&o);
    let job = docs
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["resource"]["kind"] == "Job")
        .unwrap();
    assert_eq!(job["sync"]["phases"][0], "PreSync");
    let secret = job["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Secret")
        .unwrap();
    assert_eq!(secret["target"]["resolution"], "produced_by");
}

fn fixture(name: &str) -> String {
    Path::new("tests/fixtures/determinism")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn determinism_exits_0_for_a_stable_render_and_1_for_a_random_one() {
    let stable = run(
        &[
            "determinism",
            "--delay-ms",
            "0",
            "--",
            "sh",
            &fixture("deterministic.sh"),
        ],
        None,
    );
    assert_eq!(stable.status.code(), Some(0), "{}", out(&stable));
    let random = run(
        &[
            "determinism",
            "--delay-ms",
            "0",
            "--",
            "sh",
            &fixture("random.sh"),
        ],
        None,
    );
    assert_eq!(random.status.code(), Some(1), "{}", out(&random));
    assert!(out(&random).contains("SG302"));
    let failing = run(
        &[
            "determinism",
            "--delay-ms",
            "0",
            "--",
            "sh",
            &fixture("fails.sh"),
        ],
        None,
    );
    assert_eq!(failing.status.code(), Some(2));
}

#[test]
fn determinism_needs_at_least_two_runs() {
    let o = run(&["determinism", "--runs", "1", "--", "true"], None);
    assert_eq!(o.status.code(), Some(2));
}
