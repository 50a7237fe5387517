//! GitHub-flavoured Markdown for pull-request comments.
//!
//! A heading with the summary, then one table per Application (or one table when the input
//! names none), skipped findings folded away in a `<details>` block, and load errors last.
//! Rule messages use backticks on purpose (`` hook Job `migrate` ``) and keep them; everything
//! that could break the table or inject markup (`|`, line breaks, `<`, `>`, `&`) is escaped.

use std::fmt::Write as _;

use super::{
    Group, NO_APPLICATION, RenderOptions, docs_url, group_by_application, groups_by_application,
    hidden_info, hidden_info_note, object_label, sorted_findings, summary_sentence, visible,
};
use crate::finding::{Action, Finding, Report, Status};

/// Renders the report as a Markdown comment.
pub fn render_markdown(report: &Report, opts: &RenderOptions) -> String {
    let mut out = String::new();
    let sorted = sorted_findings(report);
    let (skipped, active): (Vec<&Finding>, Vec<&Finding>) = sorted
        .into_iter()
        .partition(|f| matches!(f.status, Status::Skipped { .. }));
    let (hidden, active): (Vec<&Finding>, Vec<&Finding>) =
        active.into_iter().partition(|f| hidden_info(f, opts));
    let _ = writeln!(
        out,
        "## syncguard: {}{}\n",
        summary_sentence(&report.summary),
        hidden_info_note(hidden.len())
    );

    if active.is_empty() {
        out.push_str("No findings that count against this change.\n\n");
    } else if groups_by_application(report) {
        for Group {
            application,
            findings,
        } in group_by_application(&active)
        {
            match application {
                Some(app) => {
                    let _ = writeln!(out, "### Application {}\n", code(app));
                }
                None => {
                    let _ = writeln!(out, "### {NO_APPLICATION}\n");
                }
            }
            write_table(&mut out, &findings, opts);
        }
    } else {
        write_table(&mut out, &active, opts);
    }

    if !skipped.is_empty() {
        let _ = writeln!(
            out,
            "<details>\n<summary>{} skipped (exempted, never fail a run)</summary>\n",
            skipped.len()
        );
        out.push_str("| Severity | Rule | Object | Location | Reason | Message |\n");
        out.push_str("| --- | --- | --- | --- | --- | --- |\n");
        for f in &skipped {
            let reason = match &f.status {
                Status::Skipped { reason } => reason.as_str(),
                _ => "",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                severity_cell(f),
                rule_cell(f, opts),
                object_cell(f),
                location_cell(f),
                cell(reason),
                cell(&f.message)
            );
        }
        out.push_str("\n</details>\n\n");
    }

    if !report.errors.is_empty() {
        out.push_str("### Load errors\n\nThese inputs were not checked:\n\n");
        for e in &report.errors {
            let _ = writeln!(out, "- {}", cell(e));
        }
        out.push('\n');
    }
    // One trailing newline, whatever the last section was.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn write_table(out: &mut String, findings: &[&Finding], opts: &RenderOptions) {
    out.push_str("| Severity | Rule | Object | Location | Message |\n");
    out.push_str("| --- | --- | --- | --- | --- |\n");
    for f in findings {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            severity_cell(f),
            rule_cell(f, opts),
            object_cell(f),
            location_cell(f),
            cell(&f.message)
        );
    }
    out.push('\n');
    if opts.show_patches {
        for f in findings {
            if let Some(patch) = &f.patch {
                let json = serde_json::to_string_pretty(patch)
                    .unwrap_or_else(|e| format!("(patch cannot be shown: {e})"));
                let _ = writeln!(
                    out,
                    "Proposed patch for {} ({}):\n\n{}\n",
                    object_cell(f),
                    f.rule_id,
                    fenced("json", &json)
                );
            }
        }
    }
}

/// `high · deny`, with the action in bold when it blocks, and policy errors called out.
fn severity_cell(f: &Finding) -> String {
    let action = if f.action == Action::Deny {
        format!("**{}**", f.action)
    } else {
        f.action.to_string()
    };
    let mut s = format!("{} · {action}", f.severity);
    if matches!(f.status, Status::PolicyError) {
        s.push_str(" · **policy error**");
    }
    s
}

/// The rule id, linked to its documentation when that is an absolute URL (a relative link in a
/// PR comment would resolve against the PR page, not the repository).
fn rule_cell(f: &Finding, opts: &RenderOptions) -> String {
    match docs_url(f, opts) {
        Some(url) => format!("[{}]({})", cell(f.rule_id.as_str()), url_in_link(&url)),
        None => cell(f.rule_id.as_str()),
    }
}

fn object_cell(f: &Finding) -> String {
    let mut s = code(&object_label(&f.resource));
    // One fact about several objects: name them all in the one row.
    for r in &f.also {
        let _ = write!(s, "<br>{}", code(&object_label(&r.resource)));
    }
    s
}

fn location_cell(f: &Finding) -> String {
    match &f.location {
        None => "—".to_string(),
        Some(l) => {
            let mut s = code(&format!("{}:{}:{}", l.file, l.line, l.column));
            if let Some(t) = &l.helm_template {
                let _ = write!(s, "<br>from {}", code(t));
            }
            s
        }
    }
}

/// Free text in a table cell: markup-neutral, on one line, no column breaks.
fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' | '\n' => out.push_str("<br>"),
            c if c.is_control() && c != '\t' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// A code span. Entities are not decoded inside code spans, so only the table's `|` is escaped
/// (GFM honours `\|` even there) and line breaks become spaces; text that itself contains a
/// backtick falls back to escaped plain text rather than guessing fence lengths.
fn code(s: &str) -> String {
    if s.contains('`') {
        return cell(s);
    }
    let one_line: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    format!("`{}`", visible(&one_line).replace('|', "\\|"))
}

/// A fenced code block whose fence is longer than any backtick run inside, so a patch value
/// containing ``` cannot close it early.
fn fenced(lang: &str, body: &str) -> String {
    let longest = body
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or_default();
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{body}\n{fence}")
}

/// Parentheses and spaces would end a Markdown link destination early.
fn url_in_link(url: &str) -> String {
    url.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
        .replace('|', "%7C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_pipes_line_breaks_and_markup() {
        assert_eq!(
            cell("a|b\nc\r\nd <x> & `y`"),
            "a\\|b<br>c<br>d &lt;x&gt; &amp; `y`"
        );
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("a`b"), "a`b");
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fenced("json", "\"x\""), "```json\n\"x\"\n```");
        assert_eq!(fenced("json", "\"````\""), "`````json\n\"````\"\n`````");
    }
}
