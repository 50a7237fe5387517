//! The JSON report: the stable, documented format for scripts (`docs/report-json.md`).
//!
//! The shape is a typed struct rather than a `json!` literal so that the key order is fixed by
//! the code (not by whichever `serde_json` map features the build happens to enable) and the
//! schema documentation has one place to be checked against.

use serde::Serialize;

use super::{RenderOptions, TOOL_NAME, sorted_findings};
use crate::finding::{Finding, Report, ServerUsed, Summary};

/// The `version` field of the JSON report. It changes only when a field is removed, renamed or
/// changes meaning; new fields may appear within a version, so readers must ignore unknown keys.
pub const JSON_REPORT_VERSION: u32 = 1;

/// The document, top-level keys in the documented order.
#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    tool: Tool<'a>,
    summary: &'a Summary,
    findings: Vec<&'a Finding>,
    errors: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<&'a ServerUsed>,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    version: &'a str,
}

/// Renders the JSON report (pretty-printed, findings in [`super::sorted_findings`] order, load
/// errors in the order they were met). Patches are always included, whatever
/// `opts.show_patches` says: a script decides for itself whether to apply them.
pub fn render_json(report: &Report, opts: &RenderOptions) -> Result<String, serde_json::Error> {
    let doc = JsonReport {
        version: JSON_REPORT_VERSION,
        tool: Tool {
            name: TOOL_NAME,
            version: opts.tool_version,
        },
        summary: &report.summary,
        findings: sorted_findings(report),
        errors: &report.errors,
        server: report.server.as_ref(),
    };
    let mut out = serde_json::to_string_pretty(&doc)?;
    out.push('\n');
    Ok(out)
}
