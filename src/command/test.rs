//! `syncguard test`: run the `test_*` rules of a policy directory.

use std::io::Write;

use crate::cli::{PlanFormat, TestArgs};
use crate::policy::test_runner::{TestOptions, render_text, run_tests};

use super::Outcome;

/// Runs the tests; load errors are returned (exit 2), failures give [`Outcome::Blocking`].
pub fn run(args: &TestArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let options = TestOptions {
        coverage: args.coverage,
        ..TestOptions::default()
    };
    let report = run_tests(&args.dir, &options)
        .map_err(|e| anyhow::anyhow!("cannot load policies from {}: {e}", args.dir.display()))?;
    match args.format {
        PlanFormat::Text => out.write_all(render_text(&report).as_bytes())?,
        PlanFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
    }
    Ok(if report.success() {
        Outcome::Clean
    } else {
        Outcome::Blocking
    })
}
