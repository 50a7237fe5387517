//! `syncguard determinism -- CMD...`: render several times and report what changes (SG302).

use std::io::Write;
use std::time::Duration;

use crate::cli::DeterminismArgs;
use crate::determinism::{DeterminismOptions, check_determinism};
use crate::output::report::RenderOptions;

use super::Outcome;
use super::check::{fail_on, outcome_of, write_report};

/// Runs the render command `--runs` times and reports every changing field.
pub fn run(
    args: &DeterminismArgs,
    stdout_is_terminal: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let options = DeterminismOptions {
        timeout: (args.timeout > 0).then(|| Duration::from_secs(args.timeout)),
        delay: Duration::from_millis(args.delay_ms),
        save_to: args.save_to.clone(),
    };
    let runs = usize::try_from(args.runs)?;
    let report = check_determinism(&args.command, runs, &options)?.into_report();
    let opts = RenderOptions {
        color: args.color.enabled(stdout_is_terminal),
        ..RenderOptions::default()
    };
    write_report(&report, args.format, &opts, out)?;
    Ok(outcome_of(&report, fail_on(args.fail_on)))
}
