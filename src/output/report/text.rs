//! The text report: what a person at a terminal reads after `syncguard check`.
//!
//! Findings that count (open ones and policy errors) come first, grouped by Application when the
//! input names any, each group in file order. Skipped findings follow in their own dimmed
//! section so that waivers stay visible without being mistaken for problems, then the inputs
//! that could not be read, then one summary line — the line people look at first, so it is last
//! (nearest the prompt).

use std::fmt::Write as _;

use super::{
    Group, NO_APPLICATION, RenderOptions, also_list, docs_link, group_by_application,
    groups_by_application, hidden_info, hidden_info_note, object_label, sorted_findings,
    summary_sentence, visible,
};
use crate::finding::{Action, Finding, Report, Severity, Status};
use crate::output::style::Style;

/// Renders the human-readable report (colour only when `opts.color`).
pub fn render_text(report: &Report, opts: &RenderOptions) -> String {
    let st = Style { on: opts.color };
    let mut out = String::new();
    let sorted = sorted_findings(report);
    let (skipped, active): (Vec<&Finding>, Vec<&Finding>) = sorted
        .into_iter()
        .partition(|f| matches!(f.status, Status::Skipped { .. }));
    let (hidden, active): (Vec<&Finding>, Vec<&Finding>) =
        active.into_iter().partition(|f| hidden_info(f, opts));
    let grouped = groups_by_application(report);

    if grouped {
        for Group {
            application,
            findings,
        } in group_by_application(&active)
        {
            let title = match application {
                Some(app) => format!("Application {}", visible(app)),
                None => NO_APPLICATION.to_string(),
            };
            let _ = writeln!(out, "{}\n", st.bold(&title));
            for f in findings {
                write_finding(&mut out, f, "  ", false, opts, st);
            }
        }
    } else {
        for f in &active {
            write_finding(&mut out, f, "", false, opts, st);
        }
    }

    if !skipped.is_empty() {
        let _ = writeln!(
            out,
            "{}\n",
            st.bold(&format!(
                "Skipped ({}): exempted, never fail a run",
                skipped.len()
            ))
        );
        for f in &skipped {
            write_finding(&mut out, f, "  ", grouped, opts, st);
        }
    }

    if !report.errors.is_empty() {
        let _ = writeln!(
            out,
            "{}\n",
            st.bold_red(&format!(
                "Load errors ({}): these inputs were not checked",
                report.errors.len()
            ))
        );
        for e in &report.errors {
            let _ = writeln!(out, "  {}", indent_continuation(&visible(e), "  "));
        }
        out.push('\n');
    }

    // What stops the sync, again, right above the summary: in a long report the one finding
    // that breaks a sync must not be buried among warnings.
    let blocking: Vec<&&Finding> = active
        .iter()
        .filter(|f| f.action == Action::Deny && f.status == Status::Open)
        .collect();
    if !blocking.is_empty() && active.len() > blocking.len() {
        let _ = writeln!(
            out,
            "{}",
            st.bold_red(&format!("Blocks the sync ({}):", blocking.len()))
        );
        for f in blocking {
            let place = f
                .location
                .as_ref()
                .map(|l| format!("  {}:{}", l.file, l.line))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {}  {}{}",
                f.rule_id.as_str(),
                visible(&object_label(&f.resource)),
                visible(&place)
            );
        }
        out.push('\n');
    }

    if let Some(server) = &report.server {
        let _ = writeln!(out, "{}", server_line(server));
    }
    let _ = writeln!(out, "{}", summary_line(report, hidden.len(), st));
    out
}

/// Which API server judged the objects, so a result is never read without its Kubernetes.
fn server_line(s: &crate::finding::ServerUsed) -> String {
    let which = if s.kind == "ephemeral" {
        "a throwaway API server"
    } else {
        "the cluster's API server"
    };
    format!(
        "Judged by {which}, Kubernetes {}: {} accepted, {} refused, {} not checked (judged offline).",
        s.kubernetes, s.accepted, s.refused, s.not_checked
    )
}

/// One finding: a header line (`file:line:col  SEVERITY  action  SGxxx  Kind ns/name`), then the
/// message, the Helm template, the reason it was skipped, the docs and (optionally) the patch,
/// then a blank line. Skipped findings are dimmed as a whole; `tag_application` adds the
/// Application to the header where the section does not already say it.
fn write_finding(
    out: &mut String,
    f: &Finding,
    indent: &str,
    tag_application: bool,
    opts: &RenderOptions,
    st: Style,
) {
    let skipped_reason = match &f.status {
        Status::Skipped { reason } => Some(reason.as_str()),
        _ => None,
    };
    let dimmed = skipped_reason.is_some();
    // Inside a dimmed block, no other colour: dim plus red is still loud.
    let paint = |s: &str, f: fn(Style, &str) -> String| -> String {
        let s = visible(s);
        if dimmed { st.dim(&s) } else { f(st, &s) }
    };

    let location = match &f.location {
        Some(l) => format!("{}:{}:{}", l.file, l.line, l.column),
        None => "(no location)".to_string(),
    };
    let mut header = format!(
        "{}  {}  {}  {}  {}",
        paint(&location, Style::bold),
        paint(
            &f.severity.as_str().to_uppercase(),
            severity_colour(f.severity)
        ),
        paint(f.action.as_str(), action_colour(f.action)),
        paint(f.rule_id.as_str(), Style::bold),
        paint(&object_label(&f.resource), plain),
    );
    if matches!(f.status, Status::PolicyError) {
        header.push_str(&format!("  {}", st.bold_red("POLICY ERROR")));
    }
    if tag_application && let Some(app) = &f.application {
        header.push_str(&format!(
            "  {}",
            paint(&format!("(Application {app})"), plain)
        ));
    }
    let _ = writeln!(out, "{indent}{header}");

    let body = format!("{indent}  ");
    let mut line = |text: &str| {
        let _ = writeln!(
            out,
            "{body}{}",
            paint(&indent_continuation(text, &body), plain)
        );
    };
    line(&f.message);
    if let Some(others) = also_list(f) {
        line(&format!("also: {others}"));
    }
    if let Some(template) = f.location.as_ref().and_then(|l| l.helm_template.as_deref()) {
        line(&format!("(from {template})"));
    }
    if let Some(reason) = skipped_reason {
        line(&format!("skipped: {reason}"));
    }
    if let Some(docs) = docs_link(f, opts) {
        line(&format!("docs: {docs}"));
    }
    if f.action == Action::Mutate && f.status == Status::Open && f.patch.is_some() {
        line(if opts.show_patches {
            "fixed at admission: `syncguard serve` applies the patch below"
        } else {
            "fixed at admission: `syncguard serve` applies the patch (--show-patches shows it)"
        });
    }
    if opts.show_patches
        && let Some(patch) = &f.patch
    {
        line("patch:");
        let pretty = serde_json::to_string_pretty(patch)
            .unwrap_or_else(|e| format!("(patch cannot be shown: {e})"));
        for patch_line in pretty.lines() {
            let _ = writeln!(out, "{body}  {}", paint(patch_line, plain));
        }
    }
    out.push('\n');
}

fn plain(_: Style, s: &str) -> String {
    s.to_string()
}

fn severity_colour(s: Severity) -> fn(Style, &str) -> String {
    match s {
        Severity::Critical => Style::bold_red,
        Severity::High => Style::red,
        Severity::Medium => Style::yellow,
        Severity::Low => Style::blue,
        Severity::Info => Style::dim,
    }
}

fn action_colour(a: Action) -> fn(Style, &str) -> String {
    match a {
        Action::Deny => Style::bold_red,
        Action::Warn => Style::yellow,
        Action::Mutate => Style::cyan,
        Action::Audit | Action::Off => Style::blue,
    }
}

/// Keeps multi-line messages inside their block: every line after the first gets the indent.
fn indent_continuation(text: &str, indent: &str) -> String {
    text.lines()
        .collect::<Vec<_>>()
        .join(&format!("\n{indent}"))
}

/// The closing line, green when nothing counts against the run, red when something would deny
/// or a rule or an input failed, yellow otherwise.
fn summary_line(report: &Report, hidden: usize, st: Style) -> String {
    let s = &report.summary;
    let sentence = summary_sentence(s) + &hidden_info_note(hidden);
    if s.open_by_action.deny > 0 || s.policy_errors > 0 || s.errors > 0 {
        st.bold_red(&sentence)
    } else if s.open > 0 {
        st.yellow(&sentence)
    } else {
        st.green(&sentence)
    }
}
