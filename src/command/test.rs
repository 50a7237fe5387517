//! `syncguard test`: run the `test_*` rules of a policy directory.

use std::io::Write;

use crate::cli::{TestArgs, TestFormat};
use crate::policy::builtin::PolicySource;
use crate::policy::test_runner::{TestOptions, render_text, run_source_tests};

use super::Outcome;

/// Runs the tests; load errors are returned (exit 2), failures give [`Outcome::Blocking`].
///
/// A directory without a single test is an error too (exit 2), not a pass: "0 passed" most
/// often means the wrong directory, or tests that are never discovered (a file not named
/// `*_test.rego`, rules not named `test_*`).
pub fn run(args: &TestArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let options = TestOptions {
        coverage: args.coverage,
        ..TestOptions::default()
    };
    let source = if args.overlay {
        PolicySource::Overlay(args.dir.clone())
    } else {
        PolicySource::Dir(args.dir.clone())
    };
    let report = run_source_tests(&source, &options)
        .map_err(|e| anyhow::anyhow!("cannot load policies from {}: {e}", args.dir.display()))?;
    if report.results.is_empty() {
        anyhow::bail!(
            "no tests in {}: no rule named test_* in a *_test.rego file, so nothing was tested \
             (is this the policy directory?)",
            args.dir.display()
        );
    }
    match args.format {
        TestFormat::Text => out.write_all(render_text(&report).as_bytes())?,
        TestFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
    }
    Ok(if report.success() {
        Outcome::Clean
    } else {
        Outcome::Blocking
    })
}
