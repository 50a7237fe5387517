//! `syncguard test`: run the `test_*` rules of a policy directory, like `opa test`.
//!
//! regorus has no test runner, so this is ours (rust-notes §1.5):
//!
//! 1. every `*.rego` at the top level of the directory (rules *and* tests) goes into an
//!    interpreter engine, with `config.yaml` as `data.syncguard.config`, exactly as for evaluation.
//!    Without coverage the test packages are split over one engine per core (each with all the
//!    rules, the files of one package together), and a test that does not pass there is run again
//!    in one engine with every file, so what is reported is what the whole directory gives;
//! 2. tests are discovered by scanning each file for rule heads that start a line with
//!    `test_<name>` (with or without `if`, `:=`, `{`); several bodies of one name are one test;
//! 3. each test is `eval_rule("data.<package>.<name>")`: `true` passes, undefined or `false`
//!    fails, an error is an error (with `file:line:column`).
//!
//! Tests run in the interpreter (the VM cannot run `with`) and, by default, with *strict* builtin
//! errors: evaluation is lenient (a type error makes an expression undefined, as in OPA), which
//! means a buggy rule silently stops reporting; tests are where that must surface.
//!
//! Coverage (optional) uses regorus's line coverage and is summarised for rule files only
//! (coverage of the tests themselves says nothing).

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::{Duration, Instant};

use regorus::utils::limits::ExecutionTimerConfig;
use regorus::{Engine, Value as RegoValue};
use serde::{Serialize, Serializer};
use serde_json::json;

use rayon::prelude::*;

use super::builtin::PolicySource;
use super::source::{self, RegoFile, one_line};
use super::{Config, PolicyError};

/// Knobs for [`run_tests`].
#[derive(Debug, Clone)]
pub struct TestOptions {
    /// Collect line coverage of the rule files.
    pub coverage: bool,
    /// Builtin errors (e.g. `count(5)`) fail the test instead of making the expression undefined.
    pub strict_builtin_errors: bool,
    /// Per-test wall-clock limit, so a runaway test fails instead of hanging CI.
    pub deadline: Duration,
}

impl Default for TestOptions {
    fn default() -> Self {
        Self {
            coverage: false,
            strict_builtin_errors: true,
            deadline: Duration::from_secs(10),
        }
    }
}

/// How one test ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum TestOutcome {
    /// Evaluated to `true`.
    Pass,
    /// Undefined, `false`, or another value.
    Fail {
        /// Which of those.
        reason: String,
    },
    /// Evaluation failed.
    Error {
        /// One line, `file:line:column: message` when positioned.
        message: String,
    },
}

/// One test and its outcome.
#[derive(Debug, Clone, Serialize)]
pub struct TestResult {
    /// The test's package, e.g. `syncguard.rules.hook_deadline_test`.
    pub package: String,
    /// The rule name, e.g. `test_job_without_deadline_is_reported`.
    pub name: String,
    /// The file that defines it (first definition).
    pub file: String,
    /// 1-based line of the first definition.
    pub line: u32,
    /// Pass, fail or error.
    #[serde(flatten)]
    pub outcome: TestOutcome,
    /// Wall-clock time of the evaluation.
    #[serde(rename = "duration_us", serialize_with = "micros")]
    pub duration: Duration,
}

fn micros<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Line coverage of one rule file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileCoverage {
    /// The file.
    pub file: String,
    /// False when no test evaluated anything in the file: regorus then reports no lines at all,
    /// so the counts are 0 and `percent` is 0 (the file is listed so it cannot hide).
    pub evaluated: bool,
    /// Lines evaluated at least once.
    pub covered: usize,
    /// Lines that hold evaluable code but were never evaluated.
    pub not_covered: usize,
    /// `covered / (covered + not_covered)` in percent (100 for a file without evaluable lines).
    pub percent: f64,
    /// The lines never evaluated.
    pub uncovered_lines: Vec<u32>,
}

/// Coverage over all rule files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageReport {
    /// Per file, sorted by file.
    pub files: Vec<FileCoverage>,
    /// Sum of `covered`.
    pub covered: usize,
    /// Sum of `not_covered`.
    pub not_covered: usize,
    /// Overall percentage over the evaluated files (files never evaluated have no line counts).
    pub percent: f64,
}

/// Everything a `syncguard test` run found.
#[derive(Debug, Clone, Serialize)]
pub struct TestReport {
    /// In file order, then line order.
    pub results: Vec<TestResult>,
    /// Count of passes.
    pub passed: usize,
    /// Count of failures.
    pub failed: usize,
    /// Count of errors.
    pub errored: usize,
    /// Present when requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageReport>,
}

impl TestReport {
    /// True if every test passed (an empty run succeeds).
    pub fn success(&self) -> bool {
        self.failed == 0 && self.errored == 0
    }
}

/// A discovered test.
struct TestCase {
    package: Vec<String>,
    name: String,
    file: String,
    line: u32,
}

/// Loads `dir` into one engine and runs every `test_*` rule.
///
/// Load problems (unreadable files, syntax errors, invalid `config.yaml`, compile errors such as
/// unknown functions) are a [`PolicyError`], not failed tests: nothing could run.
pub fn run_tests(dir: &Path, options: &TestOptions) -> Result<TestReport, PolicyError> {
    run_tests_of(source::read_dir(dir)?, dir, options)
}

/// Runs the tests of a policy source: a directory, the built-in set, or a directory laid over
/// it (every test of the merged set: the built-in tests of rules the overlay keeps or
/// reconfigures, and the overlay's own).
pub fn run_source_tests(
    source: &PolicySource,
    options: &TestOptions,
) -> Result<TestReport, PolicyError> {
    run_tests_of(source.files()?, &source.label(), options)
}

fn run_tests_of(
    files: source::PolicyDir,
    dir: &Path,
    options: &TestOptions,
) -> Result<TestReport, PolicyError> {
    let config = match &files.config {
        Some((path, text)) => Config::parse(text).map_err(|e| PolicyError::Config {
            file: path.clone(),
            line: e.line,
            message: e.message,
        })?,
        None => Config::default(),
    };
    let dir_label = dir.display().to_string();

    // The rule files, parsed once; every engine below starts from a clone of this one.
    let mut base = Engine::new();
    base.set_strict_builtin_errors(options.strict_builtin_errors);
    base.set_enable_coverage(options.coverage);
    for f in files.rego.iter().filter(|f| !f.is_test) {
        base.add_policy(f.label.clone(), f.text.clone())
            .map_err(|e| PolicyError::from_regorus(&f.label, &e))?;
    }
    base.add_data(RegoValue::from(
        json!({"syncguard": {"config": config.to_data()}}),
    ))
    .map_err(|e| PolicyError::from_regorus(&dir_label, &e))?;
    base.set_execution_timer_config(ExecutionTimerConfig {
        limit: options.deadline,
        check_interval: NonZeroU32::new(64).unwrap_or(NonZeroU32::MIN),
    });
    let tests: Vec<&RegoFile> = files.rego.iter().filter(|f| f.is_test).collect();

    let shards = shards(&tests, rayon::current_num_threads());
    let (results, engine) = if options.coverage || shards.len() < 2 {
        let mut engine = Shard::prepare(&base, &tests, &dir_label)?;
        if options.coverage {
            engine.engine.clear_coverage_data();
        }
        let results = engine.run();
        (results, Some(engine.engine))
    } else {
        // Test packages run side by side, each shard in its own engine (the rules plus its test
        // files). A test that does not pass is run again with every test file loaded, so any
        // failure or error reported is the one the whole directory gives.
        let ran: Vec<Result<Vec<Ran>, PolicyError>> = shards
            .par_iter()
            .map(|shard| {
                let files: Vec<&RegoFile> = shard
                    .iter()
                    .filter_map(|&i| tests.get(i).copied())
                    .collect();
                let order: Vec<usize> = shard.clone();
                let mut engine = Shard::prepare(&base, &files, &dir_label)?;
                Ok(engine.run_ordered(&order))
            })
            .collect();
        let mut ran_all: Vec<Ran> = Vec::new();
        for shard in ran {
            ran_all.extend(shard?);
        }
        ran_all.sort_by_key(|(file, _, r)| (*file, r.line));
        if ran_all
            .iter()
            .any(|(_, _, r)| r.outcome != TestOutcome::Pass)
        {
            let mut whole = Shard::prepare(&base, &tests, &dir_label)?;
            for (_, package, r) in ran_all
                .iter_mut()
                .filter(|(_, _, r)| r.outcome != TestOutcome::Pass)
            {
                let case = TestCase {
                    package: package.clone(),
                    name: r.name.clone(),
                    file: r.file.clone(),
                    line: r.line,
                };
                *r = whole.run_case(case);
            }
        }
        (ran_all.into_iter().map(|(_, _, r)| r).collect(), None)
    };

    let coverage = match (options.coverage, engine) {
        (true, Some(engine)) => {
            let report = engine
                .get_coverage_report()
                .map_err(|e| PolicyError::from_regorus(&dir_label, &e))?;
            let rule_files: Vec<&str> = files
                .rego
                .iter()
                .filter(|f| !f.is_test)
                .map(|f| f.label.as_str())
                .collect();
            Some(summarize_coverage(
                &rule_files,
                report
                    .files
                    .iter()
                    .filter(|f| rule_files.contains(&f.path.as_str()))
                    .map(|f| (f.path.as_str(), &f.covered, &f.not_covered)),
            ))
        }
        _ => None,
    };

    let count =
        |pred: fn(&TestOutcome) -> bool| results.iter().filter(|r| pred(&r.outcome)).count();
    Ok(TestReport {
        passed: count(|o| matches!(o, TestOutcome::Pass)),
        failed: count(|o| matches!(o, TestOutcome::Fail { .. })),
        errored: count(|o| matches!(o, TestOutcome::Error { .. })),
        results,
        coverage,
    })
}

/// Splits the test files (indexes into `tests`) into up to `n` shards of similar size, keeping
/// the files of one package together (their rules merge). One shard when a file's package
/// cannot be read from its text.
fn shards(tests: &[&RegoFile], n: usize) -> Vec<Vec<usize>> {
    let mut packages: Vec<(String, Vec<usize>, usize)> = Vec::new();
    for (i, f) in tests.iter().enumerate() {
        let Some(package) = package_of(&f.text) else {
            return vec![(0..tests.len()).collect()];
        };
        match packages.iter_mut().find(|(p, _, _)| *p == package) {
            Some((_, files, size)) => {
                files.push(i);
                *size += f.text.len();
            }
            None => packages.push((package, vec![i], f.text.len())),
        }
    }
    let n = n.clamp(1, packages.len().max(1));
    // Largest first into the currently smallest shard.
    packages.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let mut shards: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new()); n];
    for (_, files, size) in packages {
        if let Some(smallest) = shards.iter_mut().min_by_key(|(total, _)| *total) {
            smallest.0 += size;
            smallest.1.extend(files);
        }
    }
    shards
        .into_iter()
        .map(|(_, mut files)| {
            files.sort_unstable();
            files
        })
        .filter(|files| !files.is_empty())
        .collect()
}

/// The package a Rego file declares: the first line starting with `package `.
fn package_of(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix("package ")?;
        let name = rest.split('#').next().unwrap_or_default().trim();
        (!name.is_empty()).then(|| name.to_string())
    })
}

/// A test run in a shard: the index of its file among the test files, its package, the result.
type Ran = (usize, Vec<String>, TestResult);

/// An engine with the rules and some test files, and the tests found in those files.
struct Shard {
    engine: Engine,
    /// (position of the file in the shard's list, case).
    cases: Vec<(usize, TestCase)>,
}

impl Shard {
    /// Adds `tests` to a clone of `base` and prepares it, so that compile errors are reported
    /// as a load error with a position, not as N identical test errors.
    fn prepare(base: &Engine, tests: &[&RegoFile], dir_label: &str) -> Result<Self, PolicyError> {
        let mut engine = base.clone();
        for f in tests {
            engine
                .add_policy(f.label.clone(), f.text.clone())
                .map_err(|e| PolicyError::from_regorus(&f.label, &e))?;
        }
        let packages = engine
            .get_policy_package_components()
            .map_err(|e| PolicyError::from_regorus(dir_label, &e))?;
        let mut cases: Vec<(usize, TestCase)> = Vec::new();
        let mut seen: BTreeSet<(Vec<String>, String)> = BTreeSet::new();
        for (position, f) in tests.iter().enumerate() {
            let Some(package) = packages.iter().find(|p| p.source_file == f.label) else {
                continue;
            };
            for (name, line) in test_heads(&f.text) {
                if seen.insert((package.components.clone(), name.clone())) {
                    cases.push((
                        position,
                        TestCase {
                            package: package.components.clone(),
                            name,
                            file: f.label.clone(),
                            line,
                        },
                    ));
                }
            }
        }
        engine
            .eval_query("true".to_string(), false)
            .map_err(|e| PolicyError::from_regorus(dir_label, &e))?;
        Ok(Self { engine, cases })
    }

    /// Every case, in file order.
    fn run(&mut self) -> Vec<TestResult> {
        let cases = std::mem::take(&mut self.cases);
        cases.into_iter().map(|(_, c)| self.run_case(c)).collect()
    }

    /// Every case, tagged with the index of its file in the caller's list (`order[position]`)
    /// and its package.
    fn run_ordered(&mut self, order: &[usize]) -> Vec<Ran> {
        let cases = std::mem::take(&mut self.cases);
        cases
            .into_iter()
            .map(|(position, c)| {
                let file = order.get(position).copied().unwrap_or(usize::MAX);
                let package = c.package.clone();
                (file, package, self.run_case(c))
            })
            .collect()
    }

    fn run_case(&mut self, case: TestCase) -> TestResult {
        let started = Instant::now();
        let value = self.engine.eval_rule(rule_path(&case.package, &case.name));
        let duration = started.elapsed();
        let outcome = match value {
            Ok(RegoValue::Bool(true)) => TestOutcome::Pass,
            Ok(RegoValue::Undefined) => TestOutcome::Fail {
                reason: "undefined: a condition in the test body did not hold".into(),
            },
            Ok(RegoValue::Bool(false)) => TestOutcome::Fail {
                reason: "the test evaluated to false".into(),
            },
            Ok(other) => TestOutcome::Fail {
                reason: format!(
                    "the test evaluated to {}, expected true",
                    serde_json::to_string(&other).unwrap_or_else(|_| "a non-boolean".into())
                ),
            },
            Err(e) => TestOutcome::Error {
                message: one_line(&e.to_string()),
            },
        };
        TestResult {
            package: case.package.join("."),
            name: case.name,
            file: case.file,
            line: case.line,
            outcome,
            duration,
        }
    }
}

/// `(name, 1-based line)` of every line that starts with a `test_*` rule head.
fn test_heads(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.strip_prefix("test_")?;
            let tail: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let after = rest[tail.len()..].trim_start();
            // A rule head continues with `if`, `{`, `:=`, `=`, `contains`, `[` or ends the line;
            // anything else (e.g. `test_x.y`) is not a test rule.
            let is_head = after.is_empty()
                || after.starts_with("if")
                || after.starts_with('{')
                || after.starts_with(":=")
                || after.starts_with('=')
                || after.starts_with('#');
            is_head.then(|| {
                (
                    format!("test_{tail}"),
                    u32::try_from(i + 1).unwrap_or(u32::MAX),
                )
            })
        })
        .collect()
}

/// `data.a.b.test_x`, with bracket notation for components that are not identifiers.
fn rule_path(package: &[String], name: &str) -> String {
    let mut path = String::from("data");
    for c in package
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(name))
    {
        let identifier = c
            .chars()
            .next()
            .is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
            && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
        if identifier {
            path.push('.');
            path.push_str(c);
        } else {
            path.push_str(&format!("[{}]", serde_json::Value::from(c)));
        }
    }
    path
}

fn percent(covered: usize, not_covered: usize) -> f64 {
    let total = covered + not_covered;
    if total == 0 {
        100.0
    } else {
        // Line counts are far below 2^52: the conversion is exact.
        (covered as f64) * 100.0 / (total as f64)
    }
}

fn summarize_coverage<'a>(
    rule_files: &[&str],
    reported: impl Iterator<Item = (&'a str, &'a BTreeSet<u32>, &'a BTreeSet<u32>)>,
) -> CoverageReport {
    let mut out: Vec<FileCoverage> = reported
        .map(|(file, covered, not_covered)| FileCoverage {
            file: file.to_string(),
            evaluated: true,
            covered: covered.len(),
            not_covered: not_covered.len(),
            percent: percent(covered.len(), not_covered.len()),
            uncovered_lines: not_covered.iter().copied().collect(),
        })
        .collect();
    for file in rule_files {
        if !out.iter().any(|f| f.file == *file) {
            out.push(FileCoverage {
                file: (*file).to_string(),
                evaluated: false,
                covered: 0,
                not_covered: 0,
                percent: 0.0,
                uncovered_lines: Vec::new(),
            });
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    let covered = out.iter().map(|f| f.covered).sum();
    let not_covered = out.iter().map(|f| f.not_covered).sum();
    CoverageReport {
        files: out,
        covered,
        not_covered,
        percent: percent(covered, not_covered),
    }
}

/// `3-5, 9`: compact line ranges for the coverage table.
fn ranges(lines: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = lines.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(", ")
}

/// Plain-text rendering for the CLI: one `PASS`/`FAIL`/`ERROR` line per test (failures and
/// errors followed by an indented reason), the coverage table when present, and the summary
/// line `N passed, M failed, K errored`.
pub fn render_text(report: &TestReport) -> String {
    let mut out = String::new();
    for r in &report.results {
        let (tag, detail) = match &r.outcome {
            TestOutcome::Pass => ("PASS ", None),
            TestOutcome::Fail { reason } => ("FAIL ", Some(reason)),
            TestOutcome::Error { message } => ("ERROR", Some(message)),
        };
        let _ = writeln!(
            out,
            "{tag} {}.{} ({}:{}, {:.1} ms)",
            r.package,
            r.name,
            r.file,
            r.line,
            r.duration.as_secs_f64() * 1000.0
        );
        if let Some(d) = detail {
            let _ = writeln!(out, "      {d}");
        }
    }
    if let Some(c) = &report.coverage {
        let width = c
            .files
            .iter()
            .map(|f| f.file.len())
            .chain(std::iter::once("total".len()))
            .max()
            .unwrap_or(5);
        let _ = writeln!(out, "\ncoverage of rule files:");
        let _ = writeln!(
            out,
            "  {:width$}  {:>7}  {:>5}  {:>7}  not covered",
            "file", "covered", "lines", "percent"
        );
        for f in &c.files {
            if !f.evaluated {
                let _ = writeln!(
                    out,
                    "  {:width$}  {:>7}  {:>5}  {:>7}  never evaluated by any test",
                    f.file, "-", "-", "-"
                );
                continue;
            }
            let row = format!(
                "  {:width$}  {:>7}  {:>5}  {:>6.1}%  {}",
                f.file,
                f.covered,
                f.covered + f.not_covered,
                f.percent,
                ranges(&f.uncovered_lines)
            );
            let _ = writeln!(out, "{}", row.trim_end());
        }
        let _ = writeln!(
            out,
            "  {:width$}  {:>7}  {:>5}  {:>6.1}%",
            "total",
            c.covered,
            c.covered + c.not_covered,
            c.percent
        );
    }
    let _ = writeln!(
        out,
        "\n{} passed, {} failed, {} errored",
        report.passed, report.failed, report.errored
    );
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn test_heads_are_found_at_line_start_with_or_without_if() {
        let text = "package p\n\
                    test_a if { true }\n\
                    test_b {\n  true\n}\n\
                    test_c := true\n\
                    \x20 test_indented if true\n\
                    test_a if { 1 == 1 }\n\
                    test_x.y := 1\n\
                    not_a_test if true\n";
        let names: Vec<(String, u32)> = test_heads(text);
        assert_eq!(
            names,
            vec![
                ("test_a".into(), 2),
                ("test_b".into(), 3),
                ("test_c".into(), 6),
                ("test_a".into(), 8)
            ]
        );
    }

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }

    /// Outcomes by (file name, line, test name), the part that must not depend on sharding.
    fn outcomes(report: &TestReport) -> Vec<(String, u32, String, TestOutcome)> {
        report
            .results
            .iter()
            .map(|r| {
                let file = Path::new(&r.file)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (file, r.line, r.name.clone(), r.outcome.clone())
            })
            .collect()
    }

    #[test]
    fn sharded_runs_report_what_one_engine_reports() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        write(d, "a.rego", "package syncguard.rules.a\nx := 1\n");
        // Two files of one package (their tests must land in one shard), a failing test, an
        // erroring test, and a test that reads a helper from another test package (undefined
        // in a shard without that package; the re-run in the whole engine makes it pass).
        write(
            d,
            "a_test.rego",
            "package syncguard.rules.a_test\nimport data.syncguard.rules.a\n\
             test_one if a.x == 1\ntest_fails if a.x == 2\n",
        );
        write(
            d,
            "a_more_test.rego",
            "package syncguard.rules.a_test\nimport data.syncguard.rules.a\n\
             test_more if a.x > 0\nhelper := 41\n",
        );
        write(
            d,
            "b_test.rego",
            "package syncguard.rules.b_test\n\
             test_cross if data.syncguard.rules.a_test.helper + 1 == 42\n\
             test_error if to_number(\"x\") == 1\n",
        );
        write(
            d,
            "c_test.rego",
            "package syncguard.rules.c_test\ntest_c if true\n",
        );
        let files = source::read_dir(d).unwrap_or_else(|e| panic!("{e}"));
        let tests: Vec<&RegoFile> = files.rego.iter().filter(|f| f.is_test).collect();
        let split = shards(&tests, 2);
        assert_eq!(split.len(), 2);
        let a_files: Vec<usize> = tests
            .iter()
            .enumerate()
            .filter(|(_, f)| f.text.starts_with("package syncguard.rules.a_test"))
            .map(|(i, _)| i)
            .collect();
        assert!(
            split.iter().any(|s| a_files.iter().all(|i| s.contains(i))),
            "{split:?}"
        );

        let sharded = run_tests(d, &TestOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let single = run_tests(
            d,
            &TestOptions {
                coverage: true,
                ..TestOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(outcomes(&sharded), outcomes(&single));
        let by_name = |n: &str| {
            sharded
                .results
                .iter()
                .find(|r| r.name == n)
                .map(|r| r.outcome.clone())
        };
        assert_eq!(by_name("test_cross"), Some(TestOutcome::Pass));
        assert!(matches!(
            by_name("test_fails"),
            Some(TestOutcome::Fail { .. })
        ));
        assert!(matches!(
            by_name("test_error"),
            Some(TestOutcome::Error { .. })
        ));
        assert_eq!((sharded.passed, sharded.failed, sharded.errored), (4, 1, 1));
    }

    #[test]
    fn packages_are_read_from_the_first_package_line() {
        assert_eq!(
            package_of("# comment\npackage a.b_test # trailing\n"),
            Some("a.b_test".into())
        );
        assert_eq!(package_of("test_x if true\n"), None);
    }

    #[test]
    fn rule_paths_use_brackets_only_when_needed() {
        let pkg = vec![
            "syncguard".to_string(),
            "rules".to_string(),
            "x-y".to_string(),
        ];
        assert_eq!(
            rule_path(&pkg, "test_a"),
            "data.syncguard.rules[\"x-y\"].test_a"
        );
    }

    #[test]
    fn uncovered_lines_are_shown_as_ranges() {
        assert_eq!(ranges(&[3, 4, 5, 9, 11, 12]), "3-5, 9, 11-12");
        assert_eq!(ranges(&[]), "");
    }
}
