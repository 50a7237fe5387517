//! Views of a [`Review`]: text for a terminal, JSON for tools, Markdown for pull-request
//! comments (each within a byte budget, a long review continuing in further comments), SARIF
//! for code scanning.

mod codequality;
mod json;
mod markdown;
mod parts;
mod text;

pub use codequality::render_codequality;
pub use json::render_json;
pub use markdown::render_markdown;
pub use parts::MIN_BUDGET as MIN_MARKDOWN_BUDGET;
pub use text::render_text;

use serde_json::Value;

use crate::finding::{Action, FailOn, Finding};
use crate::review::{NotJudged, ObjectChange, Place, Review, Standing};

/// `PreSync wave 0 (step 1)`.
fn place(p: &Place) -> String {
    format!("{} wave {} (step {})", p.phase, p.wave, p.step)
}

/// Findings that fail the run: new ones at the threshold, and unchanged ones too with
/// `--fail-on-existing`.
pub fn blocking(review: &Review, threshold: FailOn, fail_on_existing: bool) -> Vec<&Finding> {
    let mut out: Vec<&Finding> = review
        .findings
        .new
        .iter()
        .filter(|f| f.trips(threshold))
        .collect();
    if fail_on_existing {
        out.extend(
            review
                .findings
                .unchanged
                .iter()
                .filter(|f| f.trips(threshold)),
        );
    }
    out
}

/// The findings of `list` the text and Markdown views show, and how many `info` ones they leave
/// out (shown with `--show-info`; docs/severity.md).
fn shown(list: &[Finding], show_info: bool) -> (Vec<&Finding>, usize) {
    let (hidden, shown): (Vec<&Finding>, Vec<&Finding>) =
        list.iter().partition(|f| !show_info && f.is_info_fact());
    (shown, hidden.len())
}

/// `deny`, `warn`... as reports print them.
fn action(a: Action) -> String {
    format!("{a:?}").to_lowercase()
}

/// A finding's place: the chart template file for an object of a Helm render, else
/// `file:line`.
fn location(f: &Finding) -> String {
    match &f.location {
        Some(l) => crate::render::template_file(&l.file, l.helm_template.as_deref())
            .unwrap_or_else(|| l.to_string()),
        None => String::new(),
    }
}

/// The file and line a finding is annotated at in a repository view: the chart template file
/// (line 1) for an object of a Helm render, else the file and line it was read from; the
/// Application's nothing when the object came from no file.
fn location_of(f: &Finding) -> (String, u32) {
    let moved = at_template(f);
    moved
        .location
        .map(|l| (l.file.to_string(), l.line))
        .unwrap_or_default()
}

/// `f` with a Helm object's location moved to its chart template file (line 1: the rendered
/// line is not the template's), so code scanning annotates a file that exists in the change.
pub fn at_template(f: &Finding) -> Finding {
    let mut f = f.clone();
    if let Some(l) = &f.location
        && let Some(file) = crate::render::template_file(&l.file, l.helm_template.as_deref())
    {
        f.location = Some(crate::finding::SourceLocation {
            file: file.into(),
            line: 1,
            column: 1,
            helm_template: None,
        });
    }
    f
}

/// Counts of an object diff: added, changed, removed.
fn counts(objects: &[ObjectChange]) -> (usize, usize, usize) {
    let mut c = (0, 0, 0);
    for o in objects {
        match o {
            ObjectChange::Added { .. } => c.0 += 1,
            ObjectChange::Changed { .. } => c.1 += 1,
            ObjectChange::Removed { .. } => c.2 += 1,
        }
    }
    c
}

/// A value on one line (strings without quotes).
fn short(v: &Option<Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A manifest as YAML-compatible, readable text (JSON, indented).
fn manifest(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The first 7 characters of a commit.
fn abbrev(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// The Applications not judged that are listed first: those not judged on the head, the run
/// failing on them first, then those judged on the head only.
fn not_judged(review: &Review) -> Vec<&NotJudged> {
    let mut out: Vec<&NotJudged> = review.not_judged.iter().collect();
    let rank = |n: &NotJudged| match n.standing {
        Standing::New => 0,
        Standing::Unchanged | Standing::Accepted => 1,
        Standing::BaseOnly => 2,
    };
    out.sort_by_key(|n| rank(n));
    out
}

/// How many fail the run.
fn failing_not_judged(review: &Review) -> usize {
    review
        .not_judged
        .iter()
        .filter(|n| n.standing == Standing::New)
        .count()
}

/// The reasons shown for one not-judged Application: the head's, else the base's.
fn reasons_shown(n: &NotJudged) -> Vec<String> {
    let reasons = if n.on_head() {
        &n.reasons
    } else {
        &n.base_reasons
    };
    reasons
        .iter()
        .map(|r| format!("{}: {}", r.reason, r.detail))
        .collect()
}
