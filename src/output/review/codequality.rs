//! The head's findings as a GitLab Code Quality report (the JSON array GitLab's merge-request
//! widget reads from `artifacts:reports:codequality`). GitLab compares it with the target
//! branch's report itself, so every finding on the head is listed, new or not.

use serde_json::{Value, json};

use super::location_of;
use crate::finding::{Finding, Severity};
use crate::review::{Review, Standing};

/// The report.
pub fn render_codequality(review: &Review) -> Result<String, serde_json::Error> {
    // What could not be judged first: an empty report must not read as a clean one.
    let mut issues: Vec<Value> = review
        .not_judged
        .iter()
        .filter(|n| n.on_head())
        .map(|n| {
            let (path, line) = n
                .origin
                .as_deref()
                .and_then(|o| o.rsplit_once(':'))
                .map(|(f, l)| (f.to_string(), l.parse::<u32>().unwrap_or(1)))
                .unwrap_or_default();
            let reasons: Vec<String> = n
                .reasons
                .iter()
                .map(|r| format!("{}: {}", r.reason, r.detail))
                .collect();
            json!({
                "type": "issue",
                "check_name": "syncguard-not-judged",
                "description": format!("{}: {}: {}", n.id, n.summary(), reasons.join("; ")),
                "categories": ["Bug Risk"],
                "severity": if n.standing == Standing::New { "blocker" } else { "info" },
                "fingerprint": format!("not-judged|{}", n.id),
                "location": {"path": path, "lines": {"begin": line}},
            })
        })
        .collect();
    issues.extend(
        review
            .findings
            .new
            .iter()
            .chain(&review.findings.unchanged)
            .map(issue),
    );
    serde_json::to_string_pretty(&issues)
}

fn issue(f: &Finding) -> Value {
    let (path, line) = location_of(f);
    json!({
        "type": "issue",
        "check_name": f.rule_id.to_string(),
        "description": format!("{}: {}", f.rule_id, f.message),
        "categories": ["Bug Risk"],
        "severity": match f.severity {
            Severity::Critical => "critical",
            Severity::High => "major",
            Severity::Medium => "minor",
            _ => "info",
        },
        "fingerprint": fingerprint(f),
        "location": {"path": path, "lines": {"begin": line}},
    })
}

/// A stable id of a finding (rule, object, field): the same finding keeps it across revisions,
/// which is how GitLab tells new from resolved.
fn fingerprint(f: &Finding) -> String {
    let key = format!(
        "{}|{}|{}|{}|{}|{}",
        f.rule_id,
        f.resource.group,
        f.resource.kind,
        f.resource.namespace.as_deref().unwrap_or_default(),
        f.resource.name,
        f.path.as_deref().unwrap_or_default()
    );
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}
