//! `syncguard check`: load manifests, evaluate the policies, render the report.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use crate::cli::{CheckArgs, FailOnArg, ReportFormat as FormatArg};
use crate::evaluate::{EvaluateOptions, evaluate};
use crate::finding::{FailOn, Report};
use crate::output::report::{RenderOptions, ReportFormat, render};

use super::{Outcome, argocd_config_from, empty_input_error, input_config_problems};

/// Maps the CLI format to the renderer's.
pub fn report_format(f: FormatArg) -> ReportFormat {
    match f {
        FormatArg::Text => ReportFormat::Text,
        FormatArg::Json => ReportFormat::Json,
        FormatArg::Sarif => ReportFormat::Sarif,
        FormatArg::Junit => ReportFormat::Junit,
        FormatArg::Markdown => ReportFormat::Markdown,
    }
}

/// Maps the CLI threshold to the report's.
pub fn fail_on(f: FailOnArg) -> FailOn {
    match f {
        FailOnArg::Info => FailOn::Info,
        FailOnArg::Warn => FailOn::Warn,
        FailOnArg::Deny => FailOn::Deny,
    }
}

/// The exit outcome of a rendered report: errors first (exit 2), then the threshold.
///
/// Errors are load errors and policy errors alike: a rule that could not be evaluated on an
/// object (a runtime error in its Rego, malformed output, its deadline) judged nothing there,
/// whatever its action, so the run cannot pass. Skipped findings and rules set to `off` never
/// count.
pub fn outcome_of(report: &Report, threshold: FailOn) -> Outcome {
    if !report.errors.is_empty() || report.summary.policy_errors > 0 {
        Outcome::InputErrors
    } else if report.fails(threshold) {
        Outcome::Blocking
    } else {
        Outcome::Clean
    }
}

/// Writes a report in the requested format.
pub fn write_report(
    report: &Report,
    format: FormatArg,
    opts: &RenderOptions,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let text = render(report, report_format(format), opts)?;
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Runs `syncguard check`. Policy load errors are returned (exit 2, nothing checked).
pub fn run(
    args: &CheckArgs,
    stdout_is_terminal: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let progress = Progress::new(std::io::stderr().is_terminal());
    let source = args.policy.source();
    progress.say(&format!("loading {}", source.describe()));
    let policies = source
        .load()
        .map_err(|e| anyhow::anyhow!("cannot load {}: {e}", source.describe()))?;
    progress.say("reading manifests");
    let (loaded, render_errors) = super::render::load_and_expand(&args.input);
    progress.say(&format!("checking {} objects", loaded.resources.len()));
    let (argocd_config, config_errors) = argocd_config_from(&args.argocd_config);
    let server = if args.cluster || args.ephemeral_cluster {
        progress.say(&format!(
            "dry-running {} objects on {}",
            loaded.resources.len(),
            if args.cluster {
                "the cluster"
            } else {
                "a throwaway API server"
            }
        ));
        super::server::ask(args, &loaded.resources)?
    } else {
        super::server::Asked::default()
    };
    let options = EvaluateOptions {
        destination_namespace: args.dest_namespace.clone(),
        require_crds: args.require_crds,
        argocd: args
            .argocd_version
            .or(policies.config().argocd_version)
            .unwrap_or_default(),
        argocd_config: Arc::new(argocd_config),
        complete: args.complete,
        stored: Arc::new(server.stored),
        verdicts: Arc::new(server.verdicts),
        ..EvaluateOptions::default()
    };
    let mut errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
    errors.extend(render_errors);
    errors.extend(config_errors);
    errors.extend(input_config_problems(&loaded.resources));
    errors.extend(empty_input_error(&loaded, &args.input));
    errors.extend(server.errors);
    let report = evaluate(&loaded.resources, &policies, &options, errors).with_server(server.used);
    progress.done();
    let opts = RenderOptions {
        color: args.color.enabled(stdout_is_terminal),
        show_patches: args.show_patches,
        show_info: args.show_info,
        ..RenderOptions::default()
    };
    write_report(&report, args.format, &opts, out)?;
    Ok(outcome_of(&report, fail_on(args.fail_on)))
}

/// A one-line status on stderr while a long check runs; silent unless stderr is a terminal.
struct Progress {
    on: bool,
}

impl Progress {
    fn new(on: bool) -> Self {
        Self { on }
    }

    fn say(&self, what: &str) {
        if self.on {
            eprint!("\r\x1b[2Ksyncguard: {what}…");
        }
    }

    fn done(&self) {
        if self.on {
            eprint!("\r\x1b[2K");
        }
    }
}
