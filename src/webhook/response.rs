//! Findings → `AdmissionResponse`: the deny message, warnings, audit annotations and the JSON
//! patch, within the API server's limits.
//!
//! - **Deny** (`/validate`): one line per denying rule — `SG201: <what>. <fix> (docs/rules/…)` —
//!   capped at [`MAX_DENY_MESSAGE`] bytes. kubectl and Argo CD show this text verbatim, so it
//!   must name the rule and the fix without the full 300+ character explanation; the full text
//!   goes to the audit annotations.
//! - **Warnings**: per warn/mutate finding, `SG103: <what>` and, when the message is too long
//!   for one warning, a second `SG103 fix: <fix>` ([`finding_warnings`]), so the fix survives
//!   the length limit. Each is ≤ [`MAX_WARNING`] bytes (cut at a word boundary, with `…` only
//!   when still too long), ≤ [`MAX_WARNINGS_TOTAL`] bytes in all, deduplicated, single-line and
//!   free of control characters (they travel as HTTP `Warning` headers). The full message stays
//!   in the audit annotations, and a denial's message carries the fix too.
//! - **Audit annotations**: `<rule id>` → `<action>: <full message>` for every open finding. The
//!   API server prefixes keys with the webhook name (`validate.syncguard.dev/SG201`), so keys
//!   must be bare names without `/`.
//! - **Patch** (`/mutate`): base64 of the RFC 6902 patch, `patchType: JSONPatch`, both present or
//!   both absent. The patch is minimal ([`crate::mutate::combined_patch`]) and never lowers a
//!   number the user set, so a re-invoked webhook (`reinvocationPolicy: IfNeeded`) sends nothing.

use std::collections::BTreeMap;

use base64::Engine as _;
use json_patch::{Patch, PatchOperation};
use serde_json::Value;

use super::review::{AdmissionResponse, Status};
use crate::finding::{Action, Finding, Status as FindingStatus};
use crate::mutate::{MutateError, combined_patch};

/// Longest single warning, in bytes. The Kubernetes documentation asks admission webhooks to
/// keep each warning within 120 characters; the API server itself cuts warnings to 256
/// characters once they exceed [`MAX_WARNINGS_TOTAL`] together, and `kubectl` prints each on its
/// own `Warning:` line.
pub const MAX_WARNING: usize = 120;
/// All warnings together, in bytes (the API server keeps at most 4 KiB of warning text per
/// response: beyond it, it truncates each warning and drops the rest; it also drops repeats).
pub const MAX_WARNINGS_TOTAL: usize = 4096;
/// Longest deny message, in bytes: enough for a few rules with their fixes, short enough to read
/// in a terminal. The full text is in the audit annotations.
pub const MAX_DENY_MESSAGE: usize = 1024;
/// Longest audit annotation value, in bytes.
pub const MAX_ANNOTATION: usize = 4096;

/// What syncguard does when it cannot finish a review (internal error, deadline, a rule that
/// fails to evaluate): `--on-error`. Kubernetes' own `failurePolicy` covers the webhook being
/// unreachable; this covers the webhook being reachable but unable to judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailureMode {
    /// Admit the object with a warning saying it was not fully checked (the default: a broken
    /// policy must not stop deployments cluster-wide).
    #[default]
    Allow,
    /// Reject the object (fail closed).
    Deny,
}

impl FailureMode {
    /// `allow` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureMode::Allow => "allow",
            FailureMode::Deny => "deny",
        }
    }
}

/// The admission decision, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Admitted unchanged.
    Allowed,
    /// Rejected.
    Denied,
    /// Admitted with a patch.
    Patched,
}

impl Decision {
    /// `allowed`, `denied`, `patched`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Denied => "denied",
            Decision::Patched => "patched",
        }
    }
}

/// An internal failure that the failure mode turned into an answer (counted in
/// `syncguard_evaluation_errors_total`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `timeout`, `internal`, `rule`, `patch`.
    pub reason: &'static str,
    /// One line for logs and the user.
    pub message: String,
}

/// A finished review: the response plus what metrics and logs need.
#[derive(Debug, Clone)]
pub struct Reviewed {
    /// The `response` of the outgoing AdmissionReview.
    pub response: AdmissionResponse,
    /// What was decided.
    pub decision: Decision,
    /// Open findings (rule id, action), for `syncguard_findings_total`.
    pub findings: Vec<(String, Action)>,
    /// Failures handled by the failure mode.
    pub failures: Vec<Failure>,
    /// False when the request was admitted without evaluation (DELETE, CONNECT, subresources,
    /// objects that are not Kubernetes objects, objects over the size limit).
    pub evaluated: bool,
    /// True when it was admitted unevaluated because its object was over `--max-object-bytes`
    /// (`syncguard_oversized_reviews_total`).
    pub oversized: bool,
}

impl Reviewed {
    /// An unconditional allow without evaluation.
    pub fn skipped(uid: &str) -> Self {
        Self {
            response: allowed(uid),
            decision: Decision::Allowed,
            findings: Vec::new(),
            failures: Vec::new(),
            evaluated: false,
            oversized: false,
        }
    }

    /// The answer to a review whose object (`bytes` of JSON) is over the webhook's object
    /// limit (`limit` bytes): admitted without evaluation, with a warning that says so — the
    /// rules did not look at it, and silence must not read as a pass.
    pub fn oversized(uid: &str, bytes: usize, limit: usize) -> Self {
        let (size, max) = match (mib(bytes), mib(limit)) {
            // Too close to tell apart when rounded.
            (a, b) if a == b => (format!("{bytes} bytes"), format!("{limit} bytes")),
            pair => pair,
        };
        let mut response = allowed(uid);
        response.warnings = cap_warnings(vec![format!(
            "syncguard: not checked: the object is {size}, over this webhook's limit of {max} \
             (--max-object-bytes)"
        )]);
        Self {
            response,
            decision: Decision::Allowed,
            findings: Vec::new(),
            failures: Vec::new(),
            evaluated: false,
            oversized: true,
        }
    }

    /// The failure mode's answer to a review that could not be finished.
    pub fn failed(uid: &str, mode: FailureMode, failure: Failure) -> Self {
        let mut response = allowed(uid);
        let decision = apply_failure(&mut response, mode, &failure).unwrap_or(Decision::Allowed);
        Self {
            response,
            decision,
            findings: Vec::new(),
            failures: vec![failure],
            evaluated: true,
            oversized: false,
        }
    }
}

/// A size for people: `3.2 MiB`, or whole KiB below one MiB.
fn mib(bytes: usize) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let b = bytes as f64;
    if b >= MIB {
        format!("{:.1} MiB", b / MIB)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

fn allowed(uid: &str) -> AdmissionResponse {
    AdmissionResponse {
        uid: uid.to_string(),
        allowed: true,
        ..AdmissionResponse::default()
    }
}

/// Applies the failure mode to a response being built; returns `Some(Denied)` when it rejects
/// the object, `None` when the decision stands.
fn apply_failure(
    response: &mut AdmissionResponse,
    mode: FailureMode,
    failure: &Failure,
) -> Option<Decision> {
    match mode {
        FailureMode::Allow => {
            response.warnings.push(format!(
                "syncguard could not fully check this object ({}); allowed by --on-error=allow",
                failure.reason
            ));
            None
        }
        FailureMode::Deny => {
            response.allowed = false;
            response.patch = None;
            response.patch_type = None;
            response.status = Some(Status {
                code: 500,
                message: truncate(
                    &format!(
                        "syncguard could not check this object and --on-error=deny rejects it: {}",
                        failure.message
                    ),
                    MAX_DENY_MESSAGE,
                ),
                reason: Some("InternalError".to_string()),
            });
            Some(Decision::Denied)
        }
    }
}

/// The `/validate` answer for the findings about one object. `notes` are extra warnings (e.g.
/// "no Application context"), shown first.
pub fn validate(
    uid: &str,
    findings: &[Finding],
    notes: Vec<String>,
    mode: FailureMode,
) -> Reviewed {
    let mut response = allowed(uid);
    let mut failures = Vec::new();
    let mut warnings = notes;
    let mut annotations: BTreeMap<String, String> = BTreeMap::new();
    let mut deny_lines: Vec<String> = Vec::new();
    let mut open = Vec::new();
    for f in findings {
        match &f.status {
            FindingStatus::Open => {
                open.push((f.rule_id.to_string(), f.action));
                annotate(&mut annotations, f);
                match f.action {
                    Action::Deny => deny_lines.push(deny_line(f)),
                    Action::Warn | Action::Mutate => warnings.extend(finding_warnings(f)),
                    Action::Audit | Action::Off => {}
                }
            }
            FindingStatus::PolicyError => {
                let failure = Failure {
                    reason: "rule",
                    message: format!("rule {} failed: {}", f.rule_id, f.message),
                };
                // Only a rule that could have denied can make the failure mode deny: a broken
                // warning rule must not block anything.
                if f.action == Action::Deny && mode == FailureMode::Deny {
                    deny_lines.push(format!(
                        "{}: could not be evaluated and --on-error=deny rejects the object ({})",
                        f.rule_id, f.message
                    ));
                } else {
                    warnings.push(format!(
                        "syncguard rule {} could not be evaluated: {}",
                        f.rule_id, f.message
                    ));
                }
                failures.push(failure);
            }
            FindingStatus::Skipped { .. } => {}
        }
    }
    let decision = if deny_lines.is_empty() {
        Decision::Allowed
    } else {
        response.allowed = false;
        response.status = Some(Status {
            code: 403,
            message: deny_message(&deny_lines),
            reason: Some("Forbidden".to_string()),
        });
        Decision::Denied
    };
    response.warnings = cap_warnings(warnings);
    response.audit_annotations = annotations;
    Reviewed {
        response,
        decision,
        findings: open,
        failures,
        evaluated: true,
        oversized: false,
    }
}

/// The `/mutate` answer: the combined patch of the open mutate findings about `original`. Never
/// denies on findings (that is `/validate`'s job); only the failure mode can.
pub fn mutate(uid: &str, original: &Value, findings: &[Finding], mode: FailureMode) -> Reviewed {
    let mut response = allowed(uid);
    let open: Vec<(String, Action)> = findings
        .iter()
        .filter(|f| f.status == FindingStatus::Open)
        .map(|f| (f.rule_id.to_string(), f.action))
        .collect();
    let mut failures = Vec::new();
    for f in findings {
        if f.status == FindingStatus::PolicyError && f.action == Action::Mutate {
            failures.push(Failure {
                reason: "rule",
                message: format!("rule {} failed: {}", f.rule_id, f.message),
            });
        }
    }
    let mut decision = Decision::Allowed;
    match combined_patch(original, findings) {
        Ok(patch) if !patch.0.is_empty() => match encode_patch(&patch) {
            Some(encoded) => {
                response.warnings = cap_warnings(change_warnings(&patch, findings));
                response.patch = Some(encoded);
                response.patch_type = Some("JSONPatch");
                decision = Decision::Patched;
            }
            None => failures.push(Failure {
                reason: "internal",
                message: "the patch could not be serialized".into(),
            }),
        },
        Ok(_) => {}
        Err(e) => failures.push(patch_failure(&e)),
    }
    for failure in &failures {
        if let Some(d) = apply_failure(&mut response, mode, failure) {
            decision = d;
        }
    }
    response.warnings = cap_warnings(std::mem::take(&mut response.warnings));
    Reviewed {
        response,
        decision,
        findings: open,
        failures,
        evaluated: true,
        oversized: false,
    }
}

fn patch_failure(e: &MutateError) -> Failure {
    Failure {
        reason: "patch",
        message: format!("a rule's patch does not apply: {e}"),
    }
}

/// Base64 of the patch's JSON: the only encoding the API server accepts for `response.patch`.
pub fn encode_patch(patch: &Patch) -> Option<String> {
    let json = serde_json::to_vec(patch).ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(json))
}

/// One warning per operation of the final patch, naming the rule that asked for it.
fn change_warnings(patch: &Patch, findings: &[Finding]) -> Vec<String> {
    patch
        .0
        .iter()
        .map(|op| {
            let path = op.path().as_str();
            let rule = findings
                .iter()
                .filter(|f| f.action == Action::Mutate && f.status == FindingStatus::Open)
                .find(|f| {
                    f.patch.as_ref().is_some_and(|p| {
                        p.0.iter().any(|o| {
                            let theirs = o.path().as_str();
                            path == theirs
                                || path.starts_with(&format!("{theirs}/"))
                                || theirs.starts_with(&format!("{path}/"))
                        })
                    })
                })
                .map(|f| f.rule_id.to_string())
                .unwrap_or_else(|| "syncguard".to_string());
            match op {
                PatchOperation::Add(a) => format!("{rule}: set {path} to {}", compact(&a.value)),
                PatchOperation::Replace(r) => {
                    format!("{rule}: set {path} to {}", compact(&r.value))
                }
                PatchOperation::Remove(_) => format!("{rule}: removed {path}"),
                _ => format!("{rule}: changed {path}"),
            }
        })
        .collect()
}

fn compact(v: &Value) -> String {
    truncate(&v.to_string(), 40)
}

/// Records the full message of an open finding under its rule id.
fn annotate(annotations: &mut BTreeMap<String, String>, f: &Finding) {
    let key = annotation_key(f.rule_id.as_str());
    let text = format!("{}: {}", f.action, single_line(&f.message));
    let value = match annotations.remove(&key) {
        Some(previous) => format!("{previous} | {text}"),
        None => text,
    };
    annotations.insert(key, truncate(&value, MAX_ANNOTATION));
}

/// A qualified-name part: `[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]`, at most 63 characters.
fn annotation_key(rule: &str) -> String {
    let cleaned: String = rule
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    let trimmed = cleaned.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if trimmed.is_empty() {
        "rule".to_string()
    } else {
        trimmed.to_string()
    }
}

/// A rule message's first sentence (what is wrong) and its fix: the sentence starting with
/// `Fix:`, else the last sentence when there are several (built-in messages end with what to
/// do). Both single-line, without the final full stop.
fn what_and_fix(message: &str) -> (String, Option<String>) {
    let message = single_line(message);
    let sentences: Vec<&str> = message
        .split(". ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let what = sentences
        .first()
        .copied()
        .unwrap_or_default()
        .trim_end_matches('.')
        .to_string();
    let fix = sentences
        .iter()
        .find(|s| s.starts_with("Fix:"))
        .or_else(|| sentences.get(1..).and_then(|rest| rest.last()))
        .map(|s| s.trim_end_matches('.').to_string());
    (what, fix)
}

/// The warnings of one warn/mutate finding. A message that fits is one warning,
/// `SG103: <message>`. A longer one becomes `SG103: <what>` (its first sentence, down to the
/// clause before a `: ` when that is what fits) and `SG103 fix: <fix>`, so the fix is never the
/// part the length limit cuts off; each is cut at a word boundary only if still too long.
pub fn finding_warnings(f: &Finding) -> Vec<String> {
    let whole = format!("{}: {}", f.rule_id, single_line(&f.message));
    if whole.len() <= MAX_WARNING {
        return vec![whole];
    }
    let (what, fix) = what_and_fix(&f.message);
    let prefix = format!("{}: ", f.rule_id);
    let room = MAX_WARNING.saturating_sub(prefix.len());
    let what = if what.len() <= room {
        what
    } else {
        // The longest leading clause ending at a `: ` that fits and still says something.
        let mut end = room;
        while !what.is_char_boundary(end) {
            end -= 1;
        }
        match what[..end].rfind(": ") {
            Some(i) if i >= 40 => what[..i].to_string(),
            _ => clip(&what, room),
        }
    };
    let mut out = vec![format!("{prefix}{what}")];
    if let Some(fix) = fix {
        let fix = fix.strip_prefix("Fix:").map_or(fix.as_str(), str::trim);
        out.push(clip(&format!("{} fix: {fix}", f.rule_id), MAX_WARNING));
    }
    out
}

/// `SG201: <what>. <fix> (docs/rules/SG201.md)`.
fn deny_line(f: &Finding) -> String {
    let (first, fix) = what_and_fix(&f.message);
    let what = if first.len() > 200 {
        match first.find(": ") {
            Some(i) if i >= 40 => first[..i].to_string(),
            _ => truncate(&first, 200),
        }
    } else {
        first
    };
    let fix = fix.map(|s| truncate(&s, 300));
    let docs = f
        .docs
        .as_deref()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    match fix {
        Some(fix) => format!("{}: {what}. {fix}.{docs}", f.rule_id),
        None => format!("{}: {what}.{docs}", f.rule_id),
    }
}

fn deny_message(lines: &[String]) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let sep = if out.is_empty() { "" } else { "\n" };
        let rest = lines.len() - i;
        let note = format!("\n… and {rest} more (see the audit annotations)");
        if out.len() + sep.len() + line.len() + note.len() > MAX_DENY_MESSAGE && !out.is_empty() {
            out.push_str(&note);
            return out;
        }
        out.push_str(sep);
        out.push_str(line);
    }
    truncate(&out, MAX_DENY_MESSAGE)
}

/// Single-line, control-free, each ≤ [`MAX_WARNING`] bytes (cut at a word boundary), no
/// repeats (the API server drops them anyway), all ≤ [`MAX_WARNINGS_TOTAL`] bytes.
pub fn cap_warnings(warnings: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let warnings: Vec<String> = warnings
        .into_iter()
        .map(|w| clip(&single_line(&w), MAX_WARNING))
        .filter(|w| !w.is_empty() && seen.insert(w.clone()))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut total = 0;
    let count = warnings.len();
    for (i, w) in warnings.into_iter().enumerate() {
        let rest = count - i;
        // Keep room for the "more omitted" note.
        let reserve = if rest > 1 { 64 } else { 0 };
        if total + w.len() + reserve > MAX_WARNINGS_TOTAL {
            out.push(format!(
                "syncguard: {rest} more warnings omitted (see the audit annotations)"
            ));
            return out;
        }
        total += w.len();
        out.push(w);
    }
    out
}

/// Collapses whitespace and drops control characters.
fn single_line(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Cuts `s` to at most `max` bytes at a word boundary, ending with `…` when cut (mid-word only
/// when the last word boundary would lose more than half of the text).
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let ellipsis = "…";
    let budget = max.saturating_sub(ellipsis.len());
    let mut end = budget;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    let head = &s[..end];
    let head = if s[end..].starts_with(char::is_whitespace) {
        head
    } else {
        match head.rfind(char::is_whitespace) {
            Some(i) if i >= budget / 2 => &head[..i],
            _ => head,
        }
    };
    let head = head.trim_end_matches(|c: char| c.is_whitespace() || ",;:(".contains(c));
    format!("{head}{ellipsis}")
}

/// Cuts `s` to at most `max` bytes on a character boundary, ending with `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let ellipsis = "…";
    let mut end = max.saturating_sub(ellipsis.len());
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ellipsis}", s[..end].trim_end())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::finding::{ResourceRef, RuleId, Severity};
    use serde_json::json;

    fn finding(id: &str, action: Action, message: &str) -> Finding {
        Finding {
            rule_id: RuleId::from(id),
            title: String::new(),
            severity: Severity::High,
            action,
            status: FindingStatus::Open,
            message: message.into(),
            resource: ResourceRef {
                group: "batch".into(),
                version: "v1".into(),
                kind: "Job".into(),
                name: "db-migrate".into(),
                namespace: Some("orders".into()),
            },
            application: None,
            location: None,
            path: None,
            patch: None,
            docs: Some(format!("docs/rules/{id}.md")),
            cause: None,
            also: Vec::new(),
        }
    }

    const SG201: &str = "Job orders/db-migrate, a hook at PreSync wave 5, needs Secret orders/db-credentials before it exists: it is produced by ExternalSecret orders/db-credentials at Sync wave 2, a step Argo CD starts only after this hook has finished, so the hook's pod cannot start and the sync waits for it forever (argo-cd#13429). Fix: make this hook a Sync hook with a wave after 2 (argocd.argoproj.io/hook: Sync, argocd.argoproj.io/sync-wave: \"3\") or an init container of the workload that needs it; or create ExternalSecret orders/db-credentials earlier, as a PreSync hook with a wave below 5. Note: the Secret of an asynchronous producer appears only after its controller has reconciled it.";

    #[test]
    fn a_deny_names_the_rule_the_problem_the_fix_and_the_docs() {
        let r = validate(
            "u",
            &[finding("SG201", Action::Deny, SG201)],
            vec![],
            FailureMode::Allow,
        );
        assert_eq!(r.decision, Decision::Denied);
        assert!(!r.response.allowed);
        let status = r.response.status.unwrap();
        assert_eq!(status.code, 403);
        assert_eq!(
            status.message,
            "SG201: Job orders/db-migrate, a hook at PreSync wave 5, needs Secret \
             orders/db-credentials before it exists. Fix: make this hook a Sync hook with a wave \
             after 2 (argocd.argoproj.io/hook: Sync, argocd.argoproj.io/sync-wave: \"3\") or an \
             init container of the workload that needs it; or create ExternalSecret \
             orders/db-credentials earlier, as a PreSync hook with a wave below 5. \
             (docs/rules/SG201.md)"
        );
        assert!(r.response.audit_annotations["SG201"].starts_with("deny: Job orders/db-migrate"));
        assert!(r.response.audit_annotations["SG201"].contains("Note: the Secret"));
    }

    #[test]
    fn many_denials_stay_within_the_message_limit() {
        let findings: Vec<Finding> = (0..20)
            .map(|i| finding(&format!("SG{i:03}"), Action::Deny, SG201))
            .collect();
        let r = validate("u", &findings, vec![], FailureMode::Allow);
        let message = r.response.status.unwrap().message;
        assert!(message.len() <= MAX_DENY_MESSAGE, "{}", message.len());
        assert!(
            message.contains("more (see the audit annotations)"),
            "{message}"
        );
    }

    #[test]
    fn warnings_are_short_single_lines_within_four_kib() {
        let long = "a\nvery long message ".repeat(50);
        let findings: Vec<Finding> = (0..100)
            .map(|i| finding(&format!("SG{i:03}"), Action::Warn, &long))
            .collect();
        let r = validate("u", &findings, vec![], FailureMode::Allow);
        assert!(r.response.allowed);
        let w = &r.response.warnings;
        assert!(
            w.iter()
                .all(|w| w.len() <= MAX_WARNING && !w.contains('\n')),
            "{w:?}"
        );
        assert!(w.iter().map(String::len).sum::<usize>() <= MAX_WARNINGS_TOTAL);
        assert!(w.last().unwrap().contains("more warnings omitted"));
        assert!(w[0].starts_with("SG000: a very long message"));
        assert!(w[0].ends_with('…'));
        // Cut between words, not inside one.
        let last_word = w[0].trim_end_matches('…').rsplit(' ').next().unwrap();
        assert!(
            ["a", "very", "long", "message"].contains(&last_word),
            "{}",
            w[0]
        );
    }

    #[test]
    fn a_long_warning_keeps_its_fix_in_a_second_warning() {
        // SG201's real message (see SG201 above) as a warn finding: the first sentence alone is
        // over the limit, and the fix comes after 300 characters of explanation.
        let r = validate(
            "u",
            &[finding("SG201", Action::Warn, SG201)],
            vec![],
            FailureMode::Allow,
        );
        assert!(r.response.allowed);
        assert_eq!(
            r.response.warnings,
            vec![
                "SG201: Job orders/db-migrate, a hook at PreSync wave 5, needs Secret \
                 orders/db-credentials before it exists",
                "SG201 fix: make this hook a Sync hook with a wave after 2 \
                 (argocd.argoproj.io/hook: Sync…",
            ]
        );
        assert!(r.response.warnings.iter().all(|w| w.len() <= MAX_WARNING));
        // The full text is still in the audit annotation.
        assert!(r.response.audit_annotations["SG201"].contains("or an init container"));
    }

    #[test]
    fn a_fix_that_fits_is_kept_whole_and_repeats_are_dropped() {
        // SG103's message shape: a long explanation, then the fix as the last sentence.
        let message = "Job orders/db-migrate is a PreSync hook whose pod template sets \
                       restartPolicy: OnFailure: a failing container restarts in place, Argo CD \
                       shows the hook Progressing, not Degraded, until Kubernetes gives up and \
                       deletes the pod with its logs. Nothing bounds the wait: \
                       spec.activeDeadlineSeconds is not set (see SG101). Use restartPolicy: Never.";
        let r = validate(
            "u",
            &[
                finding("SG103", Action::Warn, message),
                finding("SG103", Action::Warn, message),
                finding("SG104", Action::Warn, "short. Do this."),
            ],
            vec![],
            FailureMode::Allow,
        );
        assert_eq!(
            r.response.warnings,
            vec![
                "SG103: Job orders/db-migrate is a PreSync hook whose pod template sets \
                 restartPolicy: OnFailure",
                "SG103 fix: Use restartPolicy: Never",
                "SG104: short. Do this.",
            ]
        );
    }

    #[test]
    fn audit_findings_only_annotate() {
        let r = validate(
            "u",
            &[finding("SG301", Action::Audit, "volatile")],
            vec![],
            FailureMode::Allow,
        );
        assert!(r.response.allowed && r.response.warnings.is_empty());
        assert_eq!(r.response.audit_annotations["SG301"], "audit: volatile");
    }

    #[test]
    fn a_failing_deny_rule_follows_the_failure_mode() {
        let mut f = finding("SG201", Action::Deny, "execution exceeded time limit");
        f.status = FindingStatus::PolicyError;
        let allow = validate("u", std::slice::from_ref(&f), vec![], FailureMode::Allow);
        assert!(allow.response.allowed);
        assert!(allow.response.warnings[0].contains("SG201 could not be evaluated"));
        assert_eq!(allow.failures.len(), 1);
        let deny = validate("u", &[f], vec![], FailureMode::Deny);
        assert!(!deny.response.allowed);
    }

    #[test]
    fn mutate_returns_a_base64_patch_that_applies_and_says_what_changed() {
        let original = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "m"},
                              "spec": {"activeDeadlineSeconds": 60}});
        let mut deadline = finding("SG101", Action::Mutate, "no deadline");
        deadline.patch = Some(
            serde_json::from_value(json!([
            {"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}]))
            .unwrap(),
        );
        let mut backoff = finding("SG102", Action::Mutate, "no backoff");
        backoff.patch = Some(
            serde_json::from_value(json!([
            {"op": "add", "path": "/spec/backoffLimit", "value": 2}]))
            .unwrap(),
        );
        let r = mutate("u", &original, &[deadline, backoff], FailureMode::Allow);
        assert_eq!(r.decision, Decision::Patched);
        assert_eq!(r.response.patch_type, Some("JSONPatch"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(r.response.patch.unwrap())
            .unwrap();
        let patch: Patch = serde_json::from_slice(&bytes).unwrap();
        let mut patched = original.clone();
        json_patch::patch(&mut patched, &patch).unwrap();
        // 60 is raised to the floor of 900; the missing backoffLimit is added.
        assert_eq!(
            patched["spec"],
            json!({"activeDeadlineSeconds": 900, "backoffLimit": 2})
        );
        assert_eq!(
            r.response.warnings,
            vec![
                "SG101: set /spec/activeDeadlineSeconds to 900",
                "SG102: set /spec/backoffLimit to 2"
            ]
        );
    }

    #[test]
    fn mutate_without_changes_sends_no_patch() {
        let original = json!({"kind": "Job", "spec": {"activeDeadlineSeconds": 3600}});
        let mut deadline = finding("SG101", Action::Mutate, "no deadline");
        deadline.patch = Some(
            serde_json::from_value(json!([
            {"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}]))
            .unwrap(),
        );
        let r = mutate("u", &original, &[deadline], FailureMode::Allow);
        assert_eq!(r.decision, Decision::Allowed);
        assert!(r.response.patch.is_none() && r.response.patch_type.is_none());
    }

    #[test]
    fn a_patch_that_does_not_apply_follows_the_failure_mode() {
        let original = json!({"kind": "Pod", "metadata": {"name": "p"}});
        let mut bad = finding("SG104", Action::Mutate, "x");
        bad.patch = Some(
            serde_json::from_value(json!([
            {"op": "add", "path": "/spec/x/y", "value": 1}]))
            .unwrap(),
        );
        let allow = mutate(
            "u",
            &original,
            std::slice::from_ref(&bad),
            FailureMode::Allow,
        );
        assert!(allow.response.allowed && allow.response.patch.is_none());
        assert_eq!(allow.failures[0].reason, "patch");
        let deny = mutate("u", &original, &[bad], FailureMode::Deny);
        assert!(!deny.response.allowed);
        assert_eq!(deny.response.status.unwrap().code, 500);
    }

    #[test]
    fn clipping_cuts_at_word_boundaries() {
        assert_eq!(clip("short enough", 20), "short enough");
        assert_eq!(clip("one two three four", 12), "one two…");
        assert_eq!(clip("one two, three four", 13), "one two…");
        // A single long word is cut inside, on a character boundary.
        let t = clip(&"é".repeat(100), 21);
        assert!(t.len() <= 21 && t.ends_with('…'), "{t}");
        assert!(clip("a bb ccc", 8).len() <= 8);
    }

    #[test]
    fn truncation_respects_character_boundaries() {
        let s = "é".repeat(100);
        let t = truncate(&s, 120);
        assert!(t.len() <= 120 && t.ends_with('…'));
        assert_eq!(annotation_key("SG201"), "SG201");
        assert_eq!(annotation_key("a/b"), "a-b");
    }
}
