//! JUnit XML, for the test-report widgets of CI systems (GitLab, Jenkins, Azure, GitHub actions
//! that publish test results).
//!
//! Shape (decisions a CI widget makes visible):
//!
//! - One `<testsuite>` per rule id (`SG101 hook Job without activeDeadlineSeconds`), so the
//!   widget lists rules and, under each, the objects it flagged.
//! - One `<testcase>` per finding: `classname` is the rule id, `name` is the object plus the JSON
//!   pointer (no line number, so test history survives edits that move lines); `file` and
//!   `line` attributes point at the manifest.
//!   - open `deny`, `warn` and `mutate` findings → `<failure type="deny|warn|mutate">`;
//!   - open `audit` findings pass (audit never blocks) and keep the message in `<system-out>`;
//!   - skipped findings → `<skipped message="reason">`;
//!   - policy errors → `<error type="policy-error">` (the rule could not judge the object).
//! - Load errors get their own suite, `load errors`, one `<error>` test case each.
//! - A report with no findings and no load errors still has one passing test case
//!   (`N objects checked`): widgets show "no tests" as a warning, and a clean run is a pass.
//!
//! The report does not list objects that passed every rule, so there are no per-object passing
//! test cases. Character data that XML 1.0 cannot carry (most control characters) is written as
//! a visible `\u{..}` escape instead of producing a file CI parsers reject.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{RenderOptions, TOOL_NAME, message_with_also, object_label, sorted_findings};
use crate::finding::{Action, Finding, Report, Status};

/// What one test case says.
enum Outcome<'a> {
    Pass { output: Option<String> },
    Failure { kind: &'a str, text: String },
    Error { kind: &'a str, text: String },
    Skipped { reason: &'a str },
}

struct Case<'a> {
    classname: &'a str,
    name: String,
    file: Option<&'a str>,
    line: Option<u32>,
    outcome: Outcome<'a>,
}

/// Renders the report as JUnit XML (`<testsuites>` root). No option applies (JUnit widgets show
/// neither colour nor patches); the parameter keeps every renderer's signature the same.
pub fn render_junit(report: &Report, _opts: &RenderOptions) -> String {
    let findings = sorted_findings(report);
    let mut suites: BTreeMap<&str, (String, Vec<Case>)> = BTreeMap::new();
    for f in &findings {
        let suite = suites.entry(f.rule_id.as_str()).or_insert_with(|| {
            let name = if f.title.is_empty() {
                f.rule_id.to_string()
            } else {
                format!("{} {}", f.rule_id, f.title)
            };
            (name, Vec::new())
        });
        suite.1.push(case(f));
    }
    let mut suites: Vec<(String, Vec<Case>)> = suites.into_values().collect();
    if !report.errors.is_empty() {
        suites.push((
            "load errors".to_string(),
            report
                .errors
                .iter()
                .map(|e| Case {
                    classname: TOOL_NAME,
                    name: e.clone(),
                    file: None,
                    line: None,
                    outcome: Outcome::Error {
                        kind: "load-error",
                        text: e.clone(),
                    },
                })
                .collect(),
        ));
    }
    if suites.is_empty() {
        let objects = report.summary.objects;
        suites.push((
            TOOL_NAME.to_string(),
            vec![Case {
                classname: TOOL_NAME,
                name: format!(
                    "{objects} object{} checked",
                    if objects == 1 { "" } else { "s" }
                ),
                file: None,
                line: None,
                outcome: Outcome::Pass { output: None },
            }],
        ));
    }

    let totals = suites
        .iter()
        .flat_map(|(_, cases)| cases)
        .fold(Counts::default(), Counts::add);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" {}>",
        attr(TOOL_NAME),
        totals.attrs()
    );
    for (name, cases) in &suites {
        let counts = cases.iter().fold(Counts::default(), Counts::add);
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" {}>",
            attr(name),
            counts.attrs()
        );
        for c in cases {
            write_case(&mut out, c);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn case(f: &Finding) -> Case<'_> {
    let mut name = object_label(&f.resource);
    if let Some(path) = &f.path {
        name.push(' ');
        name.push_str(path);
    }
    if let Some(app) = &f.application {
        name.push_str(&format!(" (Application {app})"));
    }
    let outcome = match (&f.status, f.action) {
        (Status::Skipped { reason }, _) => Outcome::Skipped { reason },
        (Status::PolicyError, _) => Outcome::Error {
            kind: "policy-error",
            text: details(f),
        },
        (Status::Open, Action::Audit | Action::Off) => Outcome::Pass {
            output: Some(details(f)),
        },
        (Status::Open, action) => Outcome::Failure {
            kind: action.as_str(),
            text: details(f),
        },
    };
    Case {
        classname: f.rule_id.as_str(),
        name,
        file: f.location.as_ref().map(|l| l.file.as_ref()),
        line: f.location.as_ref().map(|l| l.line),
        outcome,
    }
}

/// The body of a failure: everything a person needs without opening another report.
fn details(f: &Finding) -> String {
    let mut s = format!(
        "{} {} {}: {}",
        f.severity.as_str().to_uppercase(),
        f.action,
        object_label(&f.resource),
        message_with_also(f)
    );
    if let Some(l) = &f.location {
        let _ = write!(s, "\nat {}:{}:{}", l.file, l.line, l.column);
        if let Some(t) = &l.helm_template {
            let _ = write!(s, " (from {t})");
        }
    }
    if let Some(docs) = &f.docs {
        let _ = write!(s, "\ndocs: {docs}");
    }
    s
}

fn write_case(out: &mut String, c: &Case) {
    let mut open = format!(
        "    <testcase classname=\"{}\" name=\"{}\"",
        attr(c.classname),
        attr(&c.name)
    );
    if let Some(file) = c.file {
        let _ = write!(open, " file=\"{}\"", attr(file));
    }
    if let Some(line) = c.line {
        let _ = write!(open, " line=\"{line}\"");
    }
    match &c.outcome {
        Outcome::Pass { output: None } => {
            let _ = writeln!(out, "{open}/>");
        }
        Outcome::Pass { output: Some(text) } => {
            let _ = writeln!(
                out,
                "{open}>\n      <system-out>{}</system-out>\n    </testcase>",
                text_content(text)
            );
        }
        Outcome::Failure { kind, text } | Outcome::Error { kind, text } => {
            let element = if matches!(c.outcome, Outcome::Failure { .. }) {
                "failure"
            } else {
                "error"
            };
            let first_line = text.lines().next().unwrap_or_default();
            let _ = writeln!(
                out,
                "{open}>\n      <{element} type=\"{}\" message=\"{}\">{}</{element}>\n    </testcase>",
                attr(kind),
                attr(first_line),
                text_content(text)
            );
        }
        Outcome::Skipped { reason } => {
            let _ = writeln!(
                out,
                "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                attr(reason)
            );
        }
    }
}

#[derive(Default, Clone, Copy)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Counts {
    fn add(mut self, c: &Case) -> Self {
        self.tests += 1;
        match c.outcome {
            Outcome::Pass { .. } => {}
            Outcome::Failure { .. } => self.failures += 1,
            Outcome::Error { .. } => self.errors += 1,
            Outcome::Skipped { .. } => self.skipped += 1,
        }
        self
    }

    fn attrs(self) -> String {
        format!(
            "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"",
            self.tests, self.failures, self.errors, self.skipped
        )
    }
}

/// Escapes text for an attribute value in double quotes. Tabs and line breaks become character
/// references, because XML attribute normalization would otherwise turn them into spaces.
fn attr(s: &str) -> String {
    escape(s, true)
}

/// Escapes character data. `\r` becomes a character reference so that XML's line-end
/// normalization does not drop it.
fn text_content(s: &str) -> String {
    escape(s, false)
}

fn escape(s: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\'' if in_attribute => out.push_str("&apos;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            '\n' | '\t' => out.push(c),
            c if is_xml_char(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    out
}

/// XML 1.0's `Char` production: the characters a document may contain at all, even escaped.
fn is_xml_char(c: char) -> bool {
    matches!(c,
        '\u{9}' | '\u{A}' | '\u{D}'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_quotes_line_breaks_and_forbidden_characters() {
        assert_eq!(
            attr("a<b>&\"c'\n\t\r"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;&#9;&#13;"
        );
        assert_eq!(text_content("x\n\"y\"\r"), "x\n\"y\"&#13;");
        assert_eq!(
            text_content("bell\u{7} nul\u{0} ff\u{fffe}"),
            "bell\\u{7} nul\\u{0} ff\\u{fffe}"
        );
    }
}
