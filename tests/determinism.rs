//! SG302 end to end: real render commands (the scripts in `tests/fixtures/determinism/`) run
//! as real processes through `check_determinism`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use syncguard::determinism::{
    Cause, DeterminismError, DeterminismOptions, DeterminismReport, FieldDiff, ShownValue,
    check_determinism,
};
use syncguard::finding::{Action, Severity};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/determinism")
        .join(name)
        .display()
        .to_string()
}

fn cmd(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// No delay: the fixtures are random anyway, and the tests must stay fast.
fn fast() -> DeterminismOptions {
    DeterminismOptions {
        delay: Duration::ZERO,
        ..DeterminismOptions::default()
    }
}

fn check(script: &str, runs: usize, opts: &DeterminismOptions) -> DeterminismReport {
    check_determinism(&cmd(&[&fixture(script)]), runs, opts).unwrap()
}

fn diff<'a>(report: &'a DeterminismReport, pointer: &str) -> &'a FieldDiff {
    report
        .diffs
        .iter()
        .find(|d| d.pointer == pointer)
        .unwrap_or_else(|| panic!("no diff at {pointer}: {:#?}", report.diffs))
}

fn location(d: &FieldDiff) -> String {
    d.location.as_ref().unwrap().to_string()
}

#[test]
fn a_deterministic_render_gives_no_findings_and_the_runs_are_spaced_by_the_delay() {
    let opts = DeterminismOptions {
        delay: Duration::from_millis(150),
        ..DeterminismOptions::default()
    };
    let started = Instant::now();
    let report = check("deterministic.sh", 3, &opts);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(report.is_deterministic(), "{report:#?}");
    assert_eq!((report.runs, report.objects), (3, 2));
    assert_eq!(report.sources, ["render#1", "render#2", "render#3"]);
    let summary = report.into_report();
    assert!(summary.findings.is_empty() && summary.errors.is_empty());
}

#[test]
fn every_random_field_is_reported_with_its_pointer_line_and_likely_cause() {
    let report = check("random.sh", 2, &fast());
    let pointers: Vec<&str> = report.diffs.iter().map(|d| d.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/data/password",
            "/data/tls.crt",
            "/spec/template/metadata/annotations/checksum~1secret",
            "/spec/template/metadata/annotations/deployed-at",
            "/spec/template/metadata/annotations/rollme",
        ]
    );
    assert!(report.presence.is_empty());

    let password = diff(&report, "/data/password");
    assert_eq!(
        location(password),
        "render#1:10:3 (shop/templates/secret.yaml)"
    );
    assert_eq!(password.cause, Some(Cause::RandomString));
    assert_eq!(
        password.values,
        [
            ShownValue::Redacted { bytes: 32 },
            ShownValue::Redacted { bytes: 32 }
        ]
    );

    let cert = diff(&report, "/data/tls.crt");
    assert_eq!(location(cert), "render#1:11:3 (shop/templates/secret.yaml)");
    assert_eq!(cert.cause, Some(Cause::GeneratedCertificate));

    let checksum = diff(
        &report,
        "/spec/template/metadata/annotations/checksum~1secret",
    );
    assert_eq!(
        location(checksum),
        "render#1:30:9 (shop/templates/deployment.yaml)"
    );
    assert_eq!(checksum.cause, Some(Cause::ChecksumAnnotation));
    let ShownValue::Shown { text, truncated } = &checksum.values[0] else {
        panic!("{:?}", checksum.values)
    };
    assert_eq!((text.len(), *truncated), (66, false)); // 64 hex digits, quoted

    let deployed_at = diff(&report, "/spec/template/metadata/annotations/deployed-at");
    assert_eq!(deployed_at.cause, Some(Cause::Timestamp));
    assert_eq!(
        location(deployed_at).split(' ').next(),
        Some("render#1:31:9")
    );
    let rollme = diff(&report, "/spec/template/metadata/annotations/rollme");
    assert_eq!(rollme.cause, Some(Cause::Timestamp));
}

#[test]
fn findings_explain_the_loop_the_cause_and_the_fix() {
    let report = check("random.sh", 2, &fast());
    assert_eq!(report.findings.len(), 5);
    let cert = report
        .findings
        .iter()
        .find(|f| f.path.as_deref() == Some("/data/tls.crt"))
        .unwrap();
    assert_eq!(cert.rule_id.as_str(), "SG302");
    assert_eq!(cert.title, "Render is not deterministic");
    assert_eq!(
        (cert.severity, cert.action),
        (Severity::Medium, Action::Warn)
    );
    assert_eq!(cert.resource.to_string(), "Secret/shop/shop-credentials");
    assert_eq!(cert.docs.as_deref(), Some("docs/rules/SG302.md"));
    let m = &cert.message;
    assert!(
        m.starts_with(
            "Secret/shop/shop-credentials: /data/tls.crt is different on every render \
             (render 1: <redacted, "
        ),
        "{m}"
    );
    for needle in [
        "OutOfSync",
        "selfHeal",
        "genSelfSignedCert",
        "cert-manager",
        "lookup finds nothing",
        "RespectIgnoreDifferences=true",
        "jsonPointers [\"/data/tls.crt\"]",
    ] {
        assert!(m.contains(needle), "{needle:?} not in {m}");
    }
    let checksum = report
        .findings
        .iter()
        .find(|f| f.path.as_deref().is_some_and(|p| p.contains("checksum")))
        .unwrap();
    assert!(
        checksum
            .message
            .contains("fix the template the checksum is computed from")
    );

    let summary = report.into_report().summary;
    assert_eq!((summary.open, summary.open_by_action.warn), (5, 5));
}

#[test]
fn secret_values_never_appear_in_the_report_and_saved_renders_are_real_files() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DeterminismOptions {
        save_to: Some(dir.path().join("renders")),
        ..fast()
    };
    let report = check("random.sh", 2, &opts);
    let first = dir.path().join("renders/render-1.yaml");
    let second = dir.path().join("renders/render-2.yaml");
    assert_eq!(
        report.sources,
        [first.display().to_string(), second.display().to_string()]
    );
    let password = diff(&report, "/data/password");
    assert_eq!(
        location(password),
        format!("{}:10:3 (shop/templates/secret.yaml)", first.display())
    );

    let everything = serde_json::to_string(&report).unwrap();
    for file in [&first, &second] {
        let text = std::fs::read_to_string(file).unwrap();
        for key in ["password: ", "tls.crt: "] {
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(key))
                .unwrap();
            let secret = line.trim_start().trim_start_matches(key);
            assert!(secret.len() >= 32, "{line}");
            assert!(!everything.contains(secret), "{key} leaked");
        }
    }
    assert!(!everything.contains("LS0tLS1CRUdJTi"));
}

#[test]
fn an_object_with_a_random_name_is_reported_as_present_in_one_run_only() {
    let report = check("random-name.sh", 2, &fast());
    assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
    assert_eq!(report.objects, 3);
    let [first, second] = report.presence.as_slice() else {
        panic!("{:#?}", report.presence)
    };
    assert_eq!(
        (first.present_in.as_slice(), second.present_in.as_slice()),
        (&[1][..], &[2][..])
    );
    assert!(first.resource.name.starts_with("db-init-"));
    assert_ne!(first.resource.name, second.resource.name);
    assert_eq!(first.instead, std::slice::from_ref(&second.resource));
    assert_eq!(first.cause, Some(Cause::RandomName));
    assert_eq!(first.location.as_ref().unwrap().to_string(), "render#1:9:1");
    assert_eq!(
        second.location.as_ref().unwrap().to_string(),
        "render#2:9:1"
    );

    let finding = &report.findings[0];
    assert_eq!(finding.path.as_deref(), Some("/metadata/name"));
    assert_eq!(
        finding.location.as_ref().unwrap().to_string(),
        "render#1:12:3"
    );
    assert!(finding.message.starts_with(&format!(
        "Job/shop/{} is in render 1 but not in render 2 (render 2 has Job/shop/{} instead).",
        first.resource.name, second.resource.name
    )));
    assert!(finding.message.contains("fixed metadata.name"));
}

#[test]
fn a_failing_render_is_an_error_with_the_command_and_the_last_lines_of_stderr() {
    let script = fixture("fails.sh");
    let err =
        check_determinism(&cmd(&[&script, "--values", "my values.yaml"]), 2, &fast()).unwrap_err();
    assert_eq!(err.metric_label(), "failed");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "render #1: `{script} --values 'my values.yaml'` failed (exit status: 1)\n  \
             stderr (last lines):\n"
        )),
        "{text}"
    );
    assert!(text.ends_with(
        "    Error: execution error at (shop/templates/secret.yaml:3:14): password is required"
    ));
    assert!(
        text.contains("path: line 6\n") && !text.contains("path: line 5\n"),
        "{text}"
    );
}

#[test]
fn a_render_that_outlives_the_timeout_is_killed_with_everything_it_started() {
    let opts = DeterminismOptions {
        timeout: Some(Duration::from_millis(200)),
        ..fast()
    };
    let started = Instant::now();
    let err = check_determinism(&cmd(&[&fixture("slow.sh")]), 2, &opts).unwrap_err();
    // `sleep 5` is a grandchild holding stdout open: without the group kill this takes 5 s.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(err, DeterminismError::Timeout { run: 1, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "render #1: `{}` did not finish within 0.2 s; it was killed\n  stderr (last \
             lines):\n    waiting for the chart repository...",
            fixture("slow.sh")
        )
    );
}

#[test]
fn a_missing_program_is_an_error_naming_it() {
    let err = check_determinism(&cmd(&["no-such-helm", "template"]), 2, &fast()).unwrap_err();
    assert_eq!(err.metric_label(), "spawn");
    assert!(
        err.to_string()
            .starts_with("render #1: cannot run `no-such-helm template`: "),
        "{err}"
    );
}

#[test]
fn nonsense_arguments_are_refused_before_anything_runs() {
    let err = check_determinism(&[], 2, &fast()).unwrap_err();
    assert!(matches!(err, DeterminismError::NoCommand));
    let err = check_determinism(&cmd(&["true"]), 1, &fast()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--runs must be at least 2 (got 1): one render has nothing to compare"
    );
}

#[test]
fn with_three_runs_every_run_has_its_value() {
    let report = check("random.sh", 3, &fast());
    let rollme = diff(&report, "/spec/template/metadata/annotations/rollme");
    assert_eq!(rollme.values.len(), 3);
    assert!(
        rollme
            .values
            .iter()
            .all(|v| matches!(v, ShownValue::Shown { .. }))
    );
    assert!(
        report.findings[0]
            .message
            .contains("render 3: <redacted, 32 bytes>")
    );
}
