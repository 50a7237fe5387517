//! `syncguard test`: the runner over real policy directories.

mod policy_support;

use std::path::Path;

use policy_support::fixture;
use syncguard::policy::PolicyError;
use syncguard::policy::test_runner::{TestOptions, TestOutcome, render_text, run_tests};

fn with_coverage() -> TestOptions {
    TestOptions {
        coverage: true,
        ..TestOptions::default()
    }
}

#[test]
fn passing_failing_and_erroring_tests_are_told_apart() {
    let report = run_tests(&fixture("runner"), &TestOptions::default()).unwrap();
    let outcomes: Vec<(&str, u32, &TestOutcome)> = report
        .results
        .iter()
        .map(|r| (r.name.as_str(), r.line, &r.outcome))
        .collect();
    assert_eq!(outcomes.len(), 5);
    assert_eq!(
        outcomes[0],
        ("test_one_replica_is_reported", 7, &TestOutcome::Pass)
    );
    assert_eq!(
        outcomes[1],
        ("test_three_replicas_pass", 11, &TestOutcome::Pass)
    );
    assert!(
        matches!(outcomes[2], ("test_wrong_expectation_fails", 16, TestOutcome::Fail { reason }) if reason.starts_with("undefined"))
    );
    assert!(
        matches!(outcomes[3], ("test_false_value_fails", 21, TestOutcome::Fail { reason }) if reason.contains("false"))
    );
    let TestOutcome::Error { message } = outcomes[4].2 else {
        panic!("{:?}", outcomes[4]);
    };
    assert!(message.contains("replicas_test.rego:27:"), "{message}");
    assert!(message.contains("`count` requires"), "{message}");
    assert_eq!((report.passed, report.failed, report.errored), (2, 2, 1));
    assert!(!report.success());
    assert!(
        report
            .results
            .iter()
            .all(|r| r.package == "syncguard.rules.replicas_test")
    );
    assert!(report.coverage.is_none());
}

#[test]
fn lenient_builtin_errors_can_be_requested() {
    let report = run_tests(
        &fixture("runner"),
        &TestOptions {
            strict_builtin_errors: false,
            ..TestOptions::default()
        },
    )
    .unwrap();
    // count(2) is then undefined: the test fails instead of erroring.
    assert_eq!((report.passed, report.failed, report.errored), (2, 3, 0));
}

#[test]
fn coverage_counts_covered_and_uncovered_lines_of_rule_files_only() {
    let report = run_tests(&fixture("runner"), &with_coverage()).unwrap();
    let coverage = report.coverage.unwrap();
    assert_eq!(
        coverage.files.len(),
        1,
        "test files are not part of coverage"
    );
    let f = &coverage.files[0];
    assert!(f.file.ends_with("runner/replicas.rego"));
    assert!(f.evaluated);
    // Only the "more than 100 replicas" condition is never reached by the tests.
    assert_eq!((f.covered, f.not_covered), (6, 1));
    assert_eq!(f.uncovered_lines, vec![11]);
    assert!((f.percent - 600.0 / 7.0).abs() < 1e-9);
    assert_eq!((coverage.covered, coverage.not_covered), (6, 1));
}

#[test]
fn rule_files_no_test_touches_are_listed_as_never_evaluated() {
    let report = run_tests(&fixture("basic"), &with_coverage()).unwrap();
    assert!(report.success());
    assert_eq!(report.passed, 4);
    let coverage = report.coverage.unwrap();
    let files: Vec<(String, bool)> = coverage
        .files
        .iter()
        .map(|f| {
            let name = Path::new(&f.file)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, f.evaluated)
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("lib_k8s.rego".into(), true),
            ("sample_hook_deadline.rego".into(), true),
            ("sample_latest_tag.rego".into(), false),
            ("sample_restart_policy.rego".into(), false),
        ]
    );
    assert_eq!(coverage.files[1].percent, 100.0);
}

#[test]
fn the_text_rendering_has_a_line_per_test_a_coverage_table_and_a_summary() {
    let report = run_tests(&fixture("runner"), &with_coverage()).unwrap();
    let text = render_text(&report);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("PASS  syncguard.rules.replicas_test.test_one_replica_is_reported (")
    );
    assert!(lines[0].contains("replicas_test.rego:7, "));
    assert!(text.contains("\nFAIL  syncguard.rules.replicas_test.test_wrong_expectation_fails ("));
    assert!(text.contains("\n      undefined: a condition in the test body did not hold\n"));
    assert!(text.contains("\nERROR syncguard.rules.replicas_test.test_type_error_errors ("));
    assert!(text.contains("coverage of rule files:"));
    let row = lines.iter().find(|l| l.contains("replicas.rego ")).unwrap();
    assert!(row.ends_with("6      7    85.7%  11"), "{row}");
    assert_eq!(lines.last(), Some(&"2 passed, 2 failed, 1 errored"));
    assert!(
        text.lines().all(|l| l == l.trim_end()),
        "no trailing spaces"
    );
}

#[test]
fn a_syntax_error_stops_the_run_with_file_and_line() {
    let err = run_tests(&fixture("syntax_error"), &TestOptions::default()).unwrap_err();
    assert!(matches!(err, PolicyError::Rego { line: 8, .. }), "{err}");
}

/// The shipped rules are tested by `cargo test` through this runner (DESIGN.md §6.3): a failing
/// or erroring `policies/*_test.rego` fails the build.
#[test]
fn the_shipped_policies_pass_their_own_tests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let report = run_tests(&dir, &TestOptions::default()).unwrap();
    assert!(report.success(), "{}", render_text(&report));
    // Guard against a runner that silently finds nothing: every test file has tests.
    let test_files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with("_test.rego")
        })
        .count();
    assert!(
        test_files >= 12,
        "expected the built-in rule tests, found {test_files}"
    );
    assert!(report.passed >= test_files * 2, "{}", render_text(&report));
}
