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

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_label_or_annotation_that_is_not_a_string_is_an_input_error_and_the_rest_is_checked() {
    let yaml = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: shop
  labels: {tier: 1}
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/sync-wave: 5
    example.com/paused: true
spec:
  backoffLimit: 1
  template: {spec: {restartPolicy: Never, containers: [{name: m, image: m:1}]}}
";
    let o = run(&["check", "-", "--format", "json"], Some(yaml));
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    let report = json(&o);
    let errors: Vec<&str> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        [
            "<stdin>:6:12: metadata.labels.tier: value 1 is a number; Kubernetes labels must be \
             strings — quote it: \"1\"",
            "<stdin>:9:5: metadata.annotations.argocd.argoproj.io/sync-wave: value 5 is a number; \
             Kubernetes annotations must be strings — quote it: \"5\"",
            "<stdin>:10:5: metadata.annotations.example.com/paused: value true is a boolean; \
             Kubernetes annotations must be strings — quote it: \"true\"",
        ]
    );
    // The object itself is still judged.
    assert!(
        open_rules(&report).contains(&"SG101".to_string()),
        "{report:#}"
    );
}

#[test]
fn a_key_repeated_in_one_mapping_is_an_input_error_naming_both_lines() {
    let yaml = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  LOG_LEVEL: info
  TIMEOUT: \"5\"
  LOG_LEVEL: debug
";
    let o = run(&["check", "-"], Some(yaml));
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(
        out(&o).contains(
            "<stdin>:9:3: mapping key \"LOG_LEVEL\" already defined at line 7 of the same mapping"
        ),
        "{}",
        out(&o)
    );
}

#[test]
fn require_crds_makes_a_missing_crd_a_stated_denial() {
    let yaml = "\
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web
  namespace: shop
spec:
  secretName: web-tls
";
    // The CRD may well be installed (by another Application, the platform): a fact nobody can
    // act on from here, recorded at info and not shown, exit 0; --show-info shows it with "if".
    let maybe = run(&["check", "-"], Some(yaml));
    assert_eq!(maybe.status.code(), Some(0), "{}", out(&maybe));
    assert!(!out(&maybe).contains("SG203"), "{}", out(&maybe));
    assert!(
        out(&maybe).contains("1 info finding not shown (--show-info)"),
        "{}",
        out(&maybe)
    );
    let shown = run(&["check", "-", "--show-info"], Some(yaml));
    assert_eq!(shown.status.code(), Some(0), "{}", out(&shown));
    assert!(out(&shown).contains("audit  SG203"), "{}", out(&shown));
    assert!(
        out(&shown).contains("if that CRD is not installed"),
        "{}",
        out(&shown)
    );
    // --require-crds: it is not installed, so Argo CD refuses the sync: a denial, exit 1.
    let known = run(&["check", "-", "--require-crds"], Some(yaml));
    assert_eq!(known.status.code(), Some(1), "{}", out(&known));
    let text = out(&known);
    assert!(text.contains("HIGH  deny  SG203"), "{text}");
    assert!(
        text.contains("neither in this Application nor installed in the cluster"),
        "{text}"
    );
    assert!(!text.contains("if that CRD is not installed"), "{text}");
}

#[test]
fn syncguard_test_without_any_test_is_an_error_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rule.rego"),
        "package syncguard.rules.r\n\nmeta := {\"id\": \"SG990\", \"title\": \"t\", \
         \"severity\": \"low\", \"action\": \"warn\"}\n\nviolations contains {\"msg\": \"x\"} if false\n",
    )
    .unwrap();
    let o = run(&["test", dir.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(err(&o).contains("no tests in"), "{}", err(&o));
    assert!(err(&o).contains("nothing was tested"), "{}", err(&o));
    let empty = tempfile::tempdir().unwrap();
    let o = run(&["test", empty.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
}

#[test]
fn a_warn_rule_that_fails_to_evaluate_is_a_policy_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    // A runtime error in both regorus backends (float overflow), in a rule that only warns.
    std::fs::write(
        dir.path().join("broken.rego"),
        "package syncguard.rules.broken\n\nmeta := {\"id\": \"SG990\", \"title\": \"t\", \
         \"severity\": \"low\", \"action\": \"warn\"}\n\n\
         budget := (input.resource.spec.backoffLimit + 0.5) * 1e308 * 1e308\n\n\
         violations contains {\"msg\": \"x\"} if budget > 1\n",
    )
    .unwrap();
    let yaml = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: shop}\n\
                spec: {backoffLimit: 1, template: {spec: {containers: []}}}\n";
    let policies = dir.path().to_str().unwrap();
    let o = run(&["check", "-", "--policies", policies], Some(yaml));
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(out(&o).contains("POLICY ERROR"), "{}", out(&o));
    assert!(out(&o).contains("1 policy error"), "{}", out(&o));
    // Turned off, the rule judges nothing and its errors are dropped too.
    std::fs::write(dir.path().join("config.yaml"), "actions: {SG990: off}\n").unwrap();
    let off = run(&["check", "-", "--policies", policies], Some(yaml));
    assert_eq!(off.status.code(), Some(0), "{}", out(&off));
}

#[test]
fn a_policy_directory_with_only_a_config_tunes_the_builtin_rules() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        "actions:\n  SG103: off\n  SG201: warn\n",
    )
    .unwrap();
    let policies = dir.path().to_str().unwrap();
    let o = run(
        &[
            "check",
            "examples/seed-incident",
            "--policies",
            policies,
            "--format",
            "json",
        ],
        None,
    );
    // SG201 is only a warning now, so nothing denies; SG103 is gone; the other rules still run.
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let report = json(&o);
    let rules = open_rules(&report);
    assert!(!rules.contains(&"SG103".to_string()), "{rules:?}");
    assert!(rules.contains(&"SG101".to_string()), "{rules:?}");
    let sg201 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "SG201")
        .unwrap();
    assert_eq!(sg201["action"], "warn");
    // A mistake in that config is still caught, with the file and line.
    std::fs::write(dir.path().join("config.yaml"), "actions:\n  SG999: off\n").unwrap();
    let bad = run(
        &["check", "examples/seed-incident", "--policies", policies],
        None,
    );
    assert_eq!(bad.status.code(), Some(2), "{}", out(&bad));
    assert!(err(&bad).contains("config.yaml:2"), "{}", err(&bad));
    assert!(err(&bad).contains("unknown rule SG999"), "{}", err(&bad));
    // And `syncguard test` runs the built-in tests with that configuration.
    std::fs::write(dir.path().join("config.yaml"), "actions: {SG103: off}\n").unwrap();
    let tested = run(&["test", policies], None);
    assert_eq!(tested.status.code(), Some(0), "{}", out(&tested));
    assert!(
        out(&tested).contains(" passed, 0 failed"),
        "{}",
        out(&tested)
    );
}

#[test]
fn determinism_counts_the_objects_and_an_empty_render_is_an_error() {
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
    assert!(!out(&stable).contains("in 0 objects"), "{}", out(&stable));
    let empty = run(&["determinism", "--delay-ms", "0", "--", "true"], None);
    assert_eq!(empty.status.code(), Some(2), "{}", out(&empty));
    assert!(
        out(&empty).contains("render#1: the command printed no Kubernetes objects"),
        "{}",
        out(&empty)
    );
    // Output that is not YAML at all: the syntax error, and that nothing was compared.
    let garbage = run(
        &["determinism", "--delay-ms", "0", "--", "echo", "kind: ["],
        None,
    );
    assert_eq!(garbage.status.code(), Some(2), "{}", out(&garbage));
    assert!(
        out(&garbage).contains("printed no readable Kubernetes objects"),
        "{}",
        out(&garbage)
    );
}

#[test]
fn the_example_readmes_name_files_that_exist() {
    for example in ["examples/seed-incident", "examples/clean-app"] {
        let dir = repo().join(example);
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        // Every `name.yaml` in backticks is a file of the example.
        for piece in readme.split('`').skip(1).step_by(2) {
            if piece.ends_with(".yaml") && !piece.contains(' ') && !piece.contains('/') {
                assert!(
                    dir.join(piece).is_file(),
                    "{example}/README.md names {piece}, which does not exist"
                );
            }
        }
    }
}

/// SG304 and a resource's own `argocd.argoproj.io/ignore-differences` (Argo CD 3.6): the
/// annotation is read into the input and honoured from 3.6 only.
#[test]
fn a_resources_own_ignore_differences_annotation_counts_from_argo_cd_3_6() {
    let hpa = |annotation: &str| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  \
             namespace: shop\n{annotation}spec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  \
             minReplicas: 2\n  maxReplicas: 5\n  metrics:\n  \
             - {{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 70}}}}}}\n  \
             - {{type: Resource, resource: {{name: memory, target: {{type: Utilization, averageUtilization: 80}}}}}}\n"
        )
    };
    let sg304 = |yaml: &str, version: &str| -> usize {
        let o = run(
            &[
                "check",
                "--format",
                "json",
                "--argocd-version",
                version,
                "-",
            ],
            Some(yaml),
        );
        open_rules(&json(&o))
            .iter()
            .filter(|r| r.as_str() == "SG304")
            .count()
    };
    let annotated = hpa(
        "  annotations:\n    argocd.argoproj.io/ignore-differences: |\n      jsonPointers:\n      - /spec/metrics\n",
    );
    assert_eq!(sg304(&hpa(""), "3.6"), 1);
    assert_eq!(sg304(&annotated, "3.6"), 0);
    assert_eq!(sg304(&annotated, "3.5.7"), 1);
    let inputs = run(&["inputs", "-"], Some(&annotated));
    assert!(
        out(&inputs).contains("\"own_ignore_differences\""),
        "{}",
        out(&inputs)
    );
}

#[test]
fn check_cluster_says_when_the_cluster_cannot_be_reached_and_checks_nothing() {
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: gone\n\
             clusters: [{{name: gone, cluster: {{server: \"https://127.0.0.1:{port}\", insecure-skip-tls-verify: true}}}}]\n\
             users: [{{name: u, user: {{token: t}}}}]\n\
             contexts: [{{name: gone, context: {{cluster: gone, user: u}}}}]\n"
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "--cluster", "examples/clean-app"])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("SYNCGUARD_POLICIES")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--cluster: cannot reach the cluster"),
        "{stderr}"
    );
    assert!(
        out(&o).is_empty(),
        "no report without the dry-run: {}",
        out(&o)
    );
    // The limits are validated before anything is sent.
    let bad = run(
        &[
            "check",
            "--cluster",
            "--cluster-qps",
            "0",
            "examples/clean-app",
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    // Without --cluster the limits make no sense and are refused.
    let alone = run(
        &["check", "--cluster-concurrency", "2", "examples/clean-app"],
        None,
    );
    assert_eq!(alone.status.code(), Some(2));
}

#[test]
fn a_policy_overlay_adds_a_rule_reconfigures_the_built_in_ones_and_is_tested_as_one_set() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().to_str().unwrap();
    std::fs::write(
        dir.path().join("team_label.rego"),
        "package syncguard.rules.team_label\n\nmeta := {\"id\": \"TEAM1\", \"title\": \"team label\", \
         \"severity\": \"low\", \"action\": \"warn\"}\n\n\
         violations contains {\"msg\": \"no team label\", \"path\": \"/metadata/labels\"} if {\n\
         \tinput.resource.kind == \"Job\"\n\tnot input.resource.metadata.labels.team\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("team_label_test.rego"),
        "package syncguard.rules.team_label_test\n\nimport data.syncguard.rules.team_label\n\n\
         test_reports if count(team_label.violations) == 1 with input as \
         {\"resource\": {\"kind\": \"Job\", \"metadata\": {}}}\n",
    )
    .unwrap();
    // SG101 (hook Job without a deadline) is a mutation by default; the overlay turns it off.
    std::fs::write(dir.path().join("config.yaml"), "actions:\n  SG101: off\n").unwrap();

    let plain = json(&run(
        &["check", "examples/seed-incident", "--format", "json"],
        None,
    ));
    let laid = run(
        &[
            "check",
            "examples/seed-incident",
            "--format",
            "json",
            "--policy-overlay",
            overlay,
        ],
        None,
    );
    let laid = json(&laid);
    let (before, after) = (open_rules(&plain), open_rules(&laid));
    assert!(before.contains(&"SG101".to_string()), "{before:?}");
    assert!(!after.contains(&"SG101".to_string()), "{after:?}");
    assert!(after.contains(&"TEAM1".to_string()), "{after:?}");
    // Every other built-in rule still runs.
    for rule in before.iter().filter(|r| *r != "SG101") {
        assert!(
            after.contains(rule),
            "{rule} lost under the overlay: {after:?}"
        );
    }

    // `test --overlay` runs the built-in tests and the overlay's own; `test` alone only the
    // overlay's, against its rule only.
    let merged = run(&["test", "--overlay", overlay, "--format", "json"], None);
    assert_eq!(merged.status.code(), Some(0), "{}", out(&merged));
    let merged = json(&merged);
    let alone = json(&run(&["test", overlay, "--format", "json"], None));
    let count = |r: &Value| r["results"].as_array().unwrap().len();
    assert_eq!(count(&alone), 1);
    assert!(count(&merged) > 100, "{}", count(&merged));

    // The two sources exclude each other.
    let both = run(
        &[
            "check",
            "examples/seed-incident",
            "--policies",
            overlay,
            "--policy-overlay",
            overlay,
        ],
        None,
    );
    assert_eq!(both.status.code(), Some(2), "{}", err(&both));
    assert!(err(&both).contains("cannot be used with"), "{}", err(&both));
}
