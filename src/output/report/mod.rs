//! `syncguard check` renderings: five views of one [`Report`].
//!
//! | format     | for                                   | function             |
//! |------------|---------------------------------------|----------------------|
//! | `text`     | people at a terminal (the default)    | [`render_text`]      |
//! | `json`     | scripts; schema in `docs/report-json.md` | [`render_json`]   |
//! | `sarif`    | GitHub code scanning and SARIF viewers | [`render_sarif`]    |
//! | `junit`    | CI test-report widgets                | [`render_junit`]     |
//! | `markdown` | pull-request comments                 | [`render_markdown`]  |
//!
//! Every renderer is a pure function of the report and [`RenderOptions`] that returns the whole
//! document, ending with a newline, ready to be written as-is. None of them reorders, filters or
//! recounts on its own terms: they share one ordering ([`sorted_findings`]), one grouping by
//! Application and the counts of [`crate::finding::Summary`], so the five views always agree.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::finding::{Finding, Report, ResourceRef, Status, Summary, UnknownName};

mod json;
mod junit;
mod markdown;
mod sarif;
mod text;

pub use json::{JSON_REPORT_VERSION, render_json};
pub use junit::render_junit;
pub use markdown::render_markdown;
pub use sarif::{SARIF_SCHEMA_URI, render_sarif};
pub use text::render_text;

/// The tool name written into machine-readable reports (JSON `tool.name`, SARIF driver name).
pub const TOOL_NAME: &str = "syncguard";

/// Choices that change how a report is shown, never what it says.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions<'a> {
    /// ANSI colour in the text format (ignored by the others, which are files, not terminals).
    pub color: bool,
    /// Show each finding's proposed RFC 6902 patch in the text and Markdown formats. JSON always
    /// carries patches (machines decide what to do with them); SARIF carries them as a result
    /// property; JUnit never shows them.
    pub show_patches: bool,
    /// Show open `info` findings in the text and Markdown formats. They state facts whose
    /// acting on changes no sync (docs/severity.md), so by default those formats only count
    /// them; JSON, SARIF (level `note`), JUnit and PolicyReports always carry them.
    pub show_info: bool,
    /// The tool version recorded in JSON and SARIF. Defaults to this crate's version; tests pin
    /// it so golden files do not change on every release.
    pub tool_version: &'a str,
    /// Prefix that turns a rule's relative `meta.docs` path (`docs/rules/SG101.md`) into a link,
    /// e.g. `https://github.com/ORG/syncguard/blob/main/`. Without it relative paths are shown
    /// as they are, and SARIF omits `helpUri` (the schema requires an absolute URI there).
    pub docs_base_url: Option<&'a str>,
    /// The project home page, written as SARIF `tool.driver.informationUri` when given (again an
    /// absolute URI, so there is no made-up default).
    pub information_uri: Option<&'a str>,
}

impl Default for RenderOptions<'_> {
    fn default() -> Self {
        Self {
            color: false,
            show_patches: false,
            show_info: false,
            tool_version: env!("CARGO_PKG_VERSION"),
            docs_base_url: None,
            information_uri: None,
        }
    }
}

/// The report formats of `syncguard check --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportFormat {
    /// Findings grouped by Application and file, for people.
    Text,
    /// The documented JSON report (`docs/report-json.md`).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// JUnit XML.
    Junit,
    /// GitHub-flavoured Markdown for pull-request comments.
    Markdown,
}

impl ReportFormat {
    /// All formats, the default first.
    pub const ALL: [ReportFormat; 5] = [
        ReportFormat::Text,
        ReportFormat::Json,
        ReportFormat::Sarif,
        ReportFormat::Junit,
        ReportFormat::Markdown,
    ];

    /// The spelling used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportFormat::Text => "text",
            ReportFormat::Json => "json",
            ReportFormat::Sarif => "sarif",
            ReportFormat::Junit => "junit",
            ReportFormat::Markdown => "markdown",
        }
    }
}

impl fmt::Display for ReportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ReportFormat {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ReportFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| UnknownName {
                what: "report format",
                value: s.to_string(),
                expected: "text, json, sarif, junit, markdown",
            })
    }
}

/// Renders a report in the given format. Only the JSON-based formats can fail, and only if
/// serde_json cannot serialize a value (it can for every value a [`Report`] holds).
pub fn render(
    report: &Report,
    format: ReportFormat,
    opts: &RenderOptions,
) -> Result<String, serde_json::Error> {
    Ok(match format {
        ReportFormat::Text => render_text(report, opts),
        ReportFormat::Json => render_json(report, opts)?,
        ReportFormat::Sarif => render_sarif(report, opts)?,
        ReportFormat::Junit => render_junit(report, opts),
        ReportFormat::Markdown => render_markdown(report, opts),
    })
}

/// The findings in report order: by file, line and column (findings without a location last),
/// then rule id, then resource (kind, namespace, name, group, version), then JSON pointer,
/// Application, status and message. Every field takes part, so the order does not depend on the
/// order rules ran in, which varies with parallelism.
pub fn sorted_findings(report: &Report) -> Vec<&Finding> {
    let mut out: Vec<&Finding> = report.findings.iter().collect();
    out.sort_by(|a, b| compare_findings(a, b));
    out
}

fn compare_findings(a: &Finding, b: &Finding) -> Ordering {
    let location = |f: &Finding| {
        f.location
            .as_ref()
            .map(|l| (l.file.clone(), l.line, l.column))
    };
    // `None` sorts first for `Option`; findings without a place read better at the end.
    match (location(a), location(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.rule_id.cmp(&b.rule_id))
    .then_with(|| resource_key(&a.resource).cmp(&resource_key(&b.resource)))
    .then_with(|| a.path.cmp(&b.path))
    .then_with(|| a.application.cmp(&b.application))
    .then_with(|| status_rank(&a.status).cmp(&status_rank(&b.status)))
    .then_with(|| a.message.cmp(&b.message))
}

fn resource_key(r: &ResourceRef) -> (&str, Option<&str>, &str, &str, &str) {
    (
        &r.kind,
        r.namespace.as_deref(),
        &r.name,
        &r.group,
        &r.version,
    )
}

fn status_rank(s: &Status) -> (u8, &str) {
    match s {
        Status::Open => (0, ""),
        Status::PolicyError => (1, ""),
        Status::Skipped { reason } => (2, reason),
    }
}

/// Findings of one Application (or of none), in report order.
pub(crate) struct Group<'a> {
    /// The Application; `None` for objects no Application claims.
    pub(crate) application: Option<&'a str>,
    pub(crate) findings: Vec<&'a Finding>,
}

/// True when the views should group by Application: when any finding of the report names one.
pub(crate) fn groups_by_application(report: &Report) -> bool {
    report.findings.iter().any(|f| f.application.is_some())
}

/// Splits sorted findings by Application: Applications by name, then the findings no Application
/// claims. Empty groups are left out.
pub(crate) fn group_by_application<'a>(findings: &[&'a Finding]) -> Vec<Group<'a>> {
    let mut names: Vec<&str> = findings
        .iter()
        .filter_map(|f| f.application.as_deref())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut groups: Vec<Group<'a>> = names
        .into_iter()
        .map(|name| Group {
            application: Some(name),
            findings: findings
                .iter()
                .copied()
                .filter(|f| f.application.as_deref() == Some(name))
                .collect(),
        })
        .collect();
    let orphans: Vec<&Finding> = findings
        .iter()
        .copied()
        .filter(|f| f.application.is_none())
        .collect();
    if !orphans.is_empty() {
        groups.push(Group {
            application: None,
            findings: orphans,
        });
    }
    groups
}

/// The heading of a group of findings no Application claims.
pub(crate) const NO_APPLICATION: &str = "Objects outside any Application";

/// `Kind namespace/name`, or `Kind name` for cluster-scoped objects: how people name objects
/// (`kubectl get job shop/migrate` reads the same way).
pub(crate) fn object_label(r: &ResourceRef) -> String {
    match &r.namespace {
        Some(ns) => format!("{} {}/{}", r.kind, ns, r.name),
        None => format!("{} {}", r.kind, r.name),
    }
}

/// The other objects of a finding about several objects (one cause), each with its place:
/// `"Role ns/a (file:3), RoleBinding ns/a (file:9)"`; `None` for a finding about one object.
pub(crate) fn also_list(f: &Finding) -> Option<String> {
    if f.also.is_empty() {
        return None;
    }
    let others: Vec<String> = f
        .also
        .iter()
        .map(|r| match &r.location {
            Some(l) => format!("{} ({}:{})", object_label(&r.resource), l.file, l.line),
            None => object_label(&r.resource),
        })
        .collect();
    Some(others.join(", "))
}

/// The message with the other objects named (`"<message> Also: <also_list>."`), for views that
/// have one text field per finding.
pub(crate) fn message_with_also(f: &Finding) -> String {
    match also_list(f) {
        Some(others) => format!("{} Also: {others}.", f.message),
        None => f.message.clone(),
    }
}

/// The rule's documentation as a link: absolute as written, or joined to
/// [`RenderOptions::docs_base_url`] when it is a relative path and a base is given.
pub(crate) fn docs_link(f: &Finding, opts: &RenderOptions) -> Option<String> {
    let docs = f.docs.as_deref()?;
    if is_absolute_url(docs) {
        return Some(docs.to_string());
    }
    Some(match opts.docs_base_url {
        Some(base) => join_url(base, docs),
        None => docs.to_string(),
    })
}

/// The rule's documentation as an absolute URL, if it can be one.
pub(crate) fn docs_url(f: &Finding, opts: &RenderOptions) -> Option<String> {
    docs_link(f, opts).filter(|l| is_absolute_url(l))
}

fn is_absolute_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches("./").trim_start_matches('/')
    )
}

/// Text from manifests and rules with control characters (other than line breaks and tabs)
/// shown as `\u{..}`: an escape sequence in an object name or message must not be able to
/// recolour, move the cursor in or retitle the terminal of whoever reads the report.
pub(crate) fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() && !matches!(c, '\n' | '\t') {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `1 warning` / `2 warnings`.
pub(crate) fn count(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// The parts of the one-line summary, e.g. `["3 denied", "2 warnings", …]`, shared by the text
/// and Markdown views so they always say the same thing. Policy errors appear only when there
/// are some; the object count and load errors are added by [`summary_sentence`].
pub(crate) fn summary_parts(s: &Summary) -> Vec<String> {
    let a = &s.open_by_action;
    let mut parts = vec![
        format!("{} denied", a.deny),
        count(a.warn, "warning", "warnings"),
        count(a.mutate, "mutation proposed", "mutations proposed"),
        format!("{} audit", a.audit),
        format!("{} skipped", s.skipped),
    ];
    if s.policy_errors > 0 {
        parts.push(count(s.policy_errors, "policy error", "policy errors"));
    }
    parts
}

/// `3 denied, 2 warnings, 1 mutation proposed, 0 audit, 1 skipped in 12 objects` (plus
/// `; 1 load error` when some input could not be read).
pub(crate) fn summary_sentence(s: &Summary) -> String {
    let mut out = format!(
        "{} in {}",
        summary_parts(s).join(", "),
        count(s.objects, "object", "objects")
    );
    if s.errors > 0 {
        out.push_str(&format!(
            "; {}",
            count(s.errors, "load error", "load errors")
        ));
    }
    out
}

/// True for a finding the text and Markdown formats hide unless `--show-info`: open and `info`.
/// Skipped findings and policy errors are always shown: a waiver and a rule that could not judge
/// stay visible whatever the rule's severity.
pub(crate) fn hidden_info(f: &Finding, opts: &RenderOptions) -> bool {
    !opts.show_info && f.is_info_fact()
}

/// "; 3 info findings not shown (--show-info)", or nothing when none is hidden.
pub(crate) fn hidden_info_note(hidden: usize) -> String {
    if hidden == 0 {
        String::new()
    } else {
        format!(
            "; {} not shown (--show-info)",
            count(hidden, "info finding", "info findings")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_only_their_exact_spelling() {
        for f in ReportFormat::ALL {
            assert_eq!(f.as_str().parse::<ReportFormat>(), Ok(f));
        }
        assert!("JSON".parse::<ReportFormat>().is_err());
    }

    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(
            visible("a\u{1b}[31mb\u{7}\tc\n"),
            "a\\u{1b}[31mb\\u{7}\tc\n"
        );
    }

    #[test]
    fn docs_paths_become_links_only_with_a_base() {
        assert!(is_absolute_url("https://example.org/x"));
        assert!(!is_absolute_url("docs/rules/SG101.md"));
        assert!(!is_absolute_url("://x"));
        assert_eq!(
            join_url("https://example.org/repo/", "./docs/rules/SG101.md"),
            "https://example.org/repo/docs/rules/SG101.md"
        );
    }

    #[test]
    fn the_summary_sentence_uses_singulars_and_mentions_errors_only_when_present() {
        let mut s = Summary {
            objects: 1,
            ..Summary::default()
        };
        s.open_by_action.warn = 1;
        s.open_by_action.mutate = 2;
        assert_eq!(
            summary_sentence(&s),
            "0 denied, 1 warning, 2 mutations proposed, 0 audit, 0 skipped in 1 object"
        );
        s.policy_errors = 2;
        s.errors = 1;
        assert_eq!(
            summary_sentence(&s),
            "0 denied, 1 warning, 2 mutations proposed, 0 audit, 0 skipped, 2 policy errors \
             in 1 object; 1 load error"
        );
    }
}
