//! Findings: what the rules concluded about one resource, as plain data.
//!
//! A [`Finding`] is produced by [`crate::policy::PolicySet`] and consumed by every front end: the
//! CLI renders a [`Report`] as text/JSON/SARIF/JUnit, the webhook turns findings into an
//! `AdmissionResponse`, the reconciler into PolicyReports. None of those views live here; this
//! module only fixes the vocabulary and the JSON shape (`serde::Serialize`), which is the
//! documented JSON report format, so field names and enum spellings are part of the contract.
//!
//! Two scales are easy to confuse:
//!
//! - [`Severity`] is the rule author's judgement of *how bad* the problem is (`meta.severity`:
//!   `info` < `low` < `medium` < `high` < `critical`). It orders and colours reports.
//! - [`Action`] is *what syncguard does about it* (`deny`, `warn`, `mutate`, `audit`, `off`),
//!   resolved per finding from the rule's `meta.action` and the configuration. Gates such as the
//!   CLI's `--fail-on` and the webhook's allow/deny decision look at the action, never at the
//!   severity: a `critical` rule that a team configured to `audit` must not break their build.
//!   [`FailOn`] documents the `--fail-on` mapping.

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::Serialize;

pub use crate::manifest::SourceLocation;
use crate::model::Resource;

/// How bad a problem is, as judged by the rule author (`meta.severity`).
///
/// The derived order is the severity order, so `Severity::High > Severity::Low`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing will break because of it.
    Info,
    /// A smell or a risk that needs unusual circumstances to bite.
    Low,
    /// Will cause trouble in some syncs (drift, noisy diffs, slow rollouts).
    Medium,
    /// Will stall or break syncs (hooks that never finish, objects never applied).
    High,
    /// Will break syncs or lose data as soon as it is applied.
    Critical,
}

impl Severity {
    /// All severities, lowest first.
    pub const ALL: [Severity; 5] = [
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// The spelling used in `meta.severity` and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the accepted spellings of a [`Severity`] or an [`Action`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}` (expected one of: {expected})")]
pub struct UnknownName {
    /// "severity" or "action".
    pub what: &'static str,
    /// The rejected value.
    pub value: String,
    /// The accepted values, comma separated.
    pub expected: &'static str,
}

impl FromStr for Severity {
    type Err = UnknownName;

    /// Exact, lowercase spellings only: a typo in `meta.severity` must fail loudly at load time
    /// rather than silently becoming some default.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Severity::ALL
            .into_iter()
            .find(|sev| sev.as_str() == s)
            .ok_or_else(|| UnknownName {
                what: "severity",
                value: s.to_string(),
                expected: "info, low, medium, high, critical",
            })
    }
}

/// What syncguard does when a rule reports a violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Reject the object (admission) / block the build (CLI with `--fail-on deny` or lower).
    Deny,
    /// Allow, but tell the user (AdmissionResponse warnings, ≤ 120 chars each).
    Warn,
    /// Allow with the rule's patch applied, plus a warning saying what was changed. Without a
    /// usable patch a mutate finding behaves like `warn`.
    Mutate,
    /// Allow silently; record the finding (reports, PolicyReports, metrics) only.
    Audit,
    /// The rule is disabled: its findings are dropped before they become [`Finding`]s.
    Off,
}

impl Action {
    /// All actions, strongest first.
    pub const ALL: [Action; 5] = [
        Action::Deny,
        Action::Warn,
        Action::Mutate,
        Action::Audit,
        Action::Off,
    ];

    /// The spelling used in `meta.action`, `config.yaml` and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Deny => "deny",
            Action::Warn => "warn",
            Action::Mutate => "mutate",
            Action::Audit => "audit",
            Action::Off => "off",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Action {
    type Err = UnknownName;

    /// Exact, lowercase spellings only (see [`Severity::from_str`] for why).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Action::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| UnknownName {
                what: "action",
                value: s.to_string(),
                expected: "deny, warn, mutate, audit, off",
            })
    }
}

/// The CLI's `--fail-on info|warn|deny` threshold: which findings make `syncguard check` exit 1.
///
/// The threshold is about [`Action`]s (what would happen at admission), not [`Severity`]:
///
/// | `--fail-on` | findings that fail the run                                     |
/// |-------------|----------------------------------------------------------------|
/// | `deny`      | action `deny`                                                  |
/// | `warn`      | action `deny`, `warn` or `mutate` (a mutation is a change the author did not write) |
/// | `info`      | any action except `off` (i.e. also `audit`)                    |
///
/// Only [`Status::Open`] and [`Status::PolicyError`] findings count: a rule that could not judge
/// a resource is treated as if it had reported it (fail closed, never a silent pass), while
/// [`Status::Skipped`] findings never fail a run. Load errors ([`Report::errors`]) are not
/// findings; the CLI exits 2 on them whatever the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Fail on anything that is not skipped.
    Info,
    /// Fail on deny, warn and mutate.
    Warn,
    /// Fail on deny only.
    Deny,
}

impl FailOn {
    /// True if a finding with this action and status trips the threshold.
    pub fn is_tripped_by(self, action: Action, status: &Status) -> bool {
        if matches!(status, Status::Skipped { .. }) {
            return false;
        }
        match self {
            FailOn::Deny => action == Action::Deny,
            FailOn::Warn => matches!(action, Action::Deny | Action::Warn | Action::Mutate),
            FailOn::Info => action != Action::Off,
        }
    }
}

impl FromStr for FailOn {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "info" => Ok(FailOn::Info),
            "warn" => Ok(FailOn::Warn),
            "deny" => Ok(FailOn::Deny),
            _ => Err(UnknownName {
                what: "--fail-on threshold",
                value: s.to_string(),
                expected: "info, warn, deny",
            }),
        }
    }
}

/// A stable rule identifier such as `SG101` (`meta.id`). IDs never change once published; titles
/// and messages may.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RuleId(Arc<str>);

impl RuleId {
    /// Wraps an identifier; validation (non-empty, allowed characters) happens where IDs are read
    /// from rules and configuration.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self(id.into())
    }

    /// The identifier as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for RuleId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for RuleId {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

/// Which object a finding is about, independent of where it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceRef {
    /// API group, empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Job`.
    pub kind: String,
    /// `metadata.name`, or `metadata.generateName` followed by `*` when the object has no fixed
    /// name (so reports never show an empty name).
    pub name: String,
    /// `metadata.namespace`; absent for cluster-scoped objects and for namespaced objects whose
    /// namespace Argo CD fills in from the destination.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl From<&Resource> for ResourceRef {
    fn from(r: &Resource) -> Self {
        Self {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            name: r.display_name(),
            namespace: r.namespace.clone(),
        }
    }
}

impl fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{}/{}/{}", self.kind, ns, self.name),
            None => write!(f, "{}/{}", self.kind, self.name),
        }
    }
}

/// Whether a finding is live, exempted, or could not be decided.
///
/// Serialized flat into the finding: `"status": "open"`, `"status": "skipped", "reason": "..."`,
/// `"status": "policy-error"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Status {
    /// The rule reported a violation and nothing exempts it.
    Open,
    /// The rule reported a violation but the resource is exempted (an exempt namespace, or a
    /// `syncguard.dev/skip` annotation with a reason). Kept so reports show what was waived.
    Skipped {
        /// Why: the `syncguard.dev/skip-reason` text, or which config entry exempted it.
        reason: String,
    },
    /// The rule failed to evaluate for this resource (runtime error, deadline, malformed
    /// output). The message says what went wrong; gates treat it like an open finding.
    PolicyError,
}

/// One conclusion of one rule about one resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// `meta.id` of the rule, e.g. `SG101`.
    pub rule_id: RuleId,
    /// `meta.title` of the rule.
    pub title: String,
    /// `meta.severity` of the rule.
    pub severity: Severity,
    /// The effective action after configuration overrides (never `off`: those are dropped).
    pub action: Action,
    /// Open, skipped (with reason) or policy error.
    #[serde(flatten)]
    pub status: Status,
    /// The rule's message (`violations[_].msg`), or the error for a policy error.
    pub message: String,
    /// The object the finding is about.
    pub resource: ResourceRef,
    /// The Argo CD Application that owns the object (from its tracking id or instance label),
    /// filled in by the pipeline. Reports group findings by it when any finding has one, because
    /// platform teams triage per Application, not per file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub application: Option<String>,
    /// Where in the input files the finding points (the `path` field, or its closest written
    /// ancestor); absent for objects that did not come from files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// JSON pointer (RFC 6901) inside the object, when the rule gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The rule's proposed fix as a minimal RFC 6902 patch against the object, whatever the
    /// action: front ends apply it only when `action` is `mutate` and `status` is `open`, and
    /// may show it as a suggestion otherwise. Every finding of the same rule on the same object
    /// carries the same patch; use [`crate::mutate::combined_patch`] to merge them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<json_patch::Patch>,
    /// `meta.docs` of the rule, e.g. `docs/rules/SG101.md`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    /// The violation's `cause`, when the rule gave one: findings of one rule with the same
    /// cause in one Application are one fact ([`Report::group_causes`]).
    #[serde(skip)]
    pub cause: Option<String>,
    /// The other objects of a finding that states one fact about several objects (the same
    /// `cause`), in input order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Related>,
}

/// Another object a finding is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Related {
    /// The object.
    pub resource: ResourceRef,
    /// Where it is in the input files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
}

impl Finding {
    /// An open `info` finding: a fact whose acting on changes no sync, which the text and
    /// Markdown views count instead of listing unless `--show-info` (docs/severity.md).
    pub fn is_info_fact(&self) -> bool {
        self.severity == Severity::Info && self.status == Status::Open
    }

    /// True if the finding trips the given `--fail-on` threshold (see [`FailOn`]).
    pub fn trips(&self, threshold: FailOn) -> bool {
        threshold.is_tripped_by(self.action, &self.status)
    }
}

/// Counts over a report, so views and exit codes need not recount.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// All findings, whatever their status.
    pub total: usize,
    /// Findings with status `open`.
    pub open: usize,
    /// Findings with status `skipped`.
    pub skipped: usize,
    /// Findings with status `policy-error`.
    pub policy_errors: usize,
    /// Open findings per effective action.
    pub open_by_action: ActionCounts,
    /// Open findings per severity.
    pub open_by_severity: SeverityCounts,
    /// Entries of [`Report::errors`].
    pub errors: usize,
    /// Objects the rules were run over, so a clean report can say how much it covered ("0
    /// findings in 0 objects" is a misconfigured input, not a pass). [`Report::new`] cannot know
    /// it and leaves 0; the pipeline sets it with [`Report::with_objects`].
    pub objects: usize,
}

/// A count per [`Action`] (`off` never occurs in findings, so it has no field).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ActionCounts {
    /// Count of `deny`.
    pub deny: usize,
    /// Count of `warn`.
    pub warn: usize,
    /// Count of `mutate`.
    pub mutate: usize,
    /// Count of `audit`.
    pub audit: usize,
}

/// A count per [`Severity`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SeverityCounts {
    /// Count of `info`.
    pub info: usize,
    /// Count of `low`.
    pub low: usize,
    /// Count of `medium`.
    pub medium: usize,
    /// Count of `high`.
    pub high: usize,
    /// Count of `critical`.
    pub critical: usize,
}

/// Everything one run concluded: findings, plus the inputs that could not be judged at all.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Findings in the order they were produced (front ends sort as they see fit).
    pub findings: Vec<Finding>,
    /// Load errors, each a one-line message starting with `file:line` when known (invalid YAML,
    /// a document that is not a Kubernetes object...). They are not findings: nothing judged
    /// those inputs, so the CLI exits 2 when there are any.
    pub errors: Vec<String>,
    /// Counts over `findings` and `errors`.
    pub summary: Summary,
    /// The API server the objects were dry-run on, when one was asked (`check --cluster`,
    /// `--ephemeral-cluster`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerUsed>,
}

/// Which API server judged the objects, and how many it judged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ServerUsed {
    /// `ephemeral` (a throwaway etcd + kube-apiserver) or `cluster` (the kubeconfig's).
    pub kind: &'static str,
    /// The Kubernetes version it reported, e.g. `v1.34.4`.
    pub kubernetes: String,
    /// Objects it accepted in a dry-run.
    pub accepted: usize,
    /// Objects it refused as invalid (each an SG401 finding).
    pub refused: usize,
    /// Objects it could not dry-run (kind not served, a generateName, …), judged offline only.
    pub not_checked: usize,
}

impl Report {
    /// Builds a report and its summary.
    pub fn new(findings: Vec<Finding>, errors: Vec<String>) -> Self {
        let summary = summarize(&findings, errors.len());
        Self {
            findings,
            errors,
            summary,
            server: None,
        }
    }

    /// Records the API server that judged the objects.
    pub fn with_server(mut self, server: Option<ServerUsed>) -> Self {
        self.server = server;
        self
    }

    /// Records how many objects were checked (see [`Summary::objects`]).
    pub fn with_objects(mut self, objects: usize) -> Self {
        self.summary.objects = objects;
        self
    }

    /// True if any finding trips the `--fail-on` threshold.
    pub fn fails(&self, threshold: FailOn) -> bool {
        self.findings.iter().any(|f| f.trips(threshold))
    }
}

/// Merges findings that state one fact about several objects: same rule, same `cause`, same
/// Application, action, severity and status. The first (in input order) keeps its place and
/// message and names the others in [`Finding::also`]. Findings without a cause are unchanged.
pub fn group_causes(findings: Vec<Finding>) -> Vec<Finding> {
    type Key = (RuleId, Option<String>, String, Action, Severity, String);
    let mut first_of: std::collections::HashMap<Key, usize> = std::collections::HashMap::new();
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings {
        let Some(cause) = f.cause.clone() else {
            out.push(f);
            continue;
        };
        let key: Key = (
            f.rule_id.clone(),
            f.application.clone(),
            cause,
            f.action,
            f.severity,
            format!("{:?}", f.status),
        );
        match first_of.get(&key).and_then(|&i| out.get_mut(i)) {
            Some(first) if first.resource != f.resource => first.also.push(Related {
                resource: f.resource,
                location: f.location,
            }),
            // The same object twice (two paths, one cause): one finding is enough.
            Some(_) => {}
            None => {
                first_of.insert(key, out.len());
                out.push(f);
            }
        }
    }
    out
}

fn summarize(findings: &[Finding], errors: usize) -> Summary {
    let mut s = Summary {
        total: findings.len(),
        errors,
        ..Summary::default()
    };
    for f in findings {
        match f.status {
            Status::Open => {
                s.open += 1;
                let a = &mut s.open_by_action;
                match f.action {
                    Action::Deny => a.deny += 1,
                    Action::Warn => a.warn += 1,
                    Action::Mutate => a.mutate += 1,
                    Action::Audit => a.audit += 1,
                    Action::Off => {}
                }
                let v = &mut s.open_by_severity;
                match f.severity {
                    Severity::Info => v.info += 1,
                    Severity::Low => v.low += 1,
                    Severity::Medium => v.medium += 1,
                    Severity::High => v.high += 1,
                    Severity::Critical => v.critical += 1,
                }
            }
            Status::Skipped { .. } => s.skipped += 1,
            Status::PolicyError => s.policy_errors += 1,
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn findings_of_one_cause_in_one_application_become_one_naming_every_object() {
        let with = |name: &str, cause: Option<&str>, app: &str| {
            let mut f = finding(Action::Warn, Status::Open);
            f.resource.name = name.into();
            f.cause = cause.map(str::to_string);
            f.application = Some(app.into());
            f
        };
        let grouped = group_causes(vec![
            with("job", Some("one-sided pre-install"), "shop"),
            with("job", Some("one-sided pre-install"), "shop"),
            with("role", Some("one-sided pre-install"), "shop"),
            with("other", Some("one-sided pre-install"), "blog"),
            with("alone", None, "shop"),
            with("alone-too", None, "shop"),
        ]);
        let names: Vec<(&str, Vec<&str>)> = grouped
            .iter()
            .map(|f| {
                (
                    f.resource.name.as_str(),
                    f.also.iter().map(|r| r.resource.name.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                ("job", vec!["role"]),
                ("other", vec![]),
                ("alone", vec![]),
                ("alone-too", vec![]),
            ]
        );
        assert_eq!(Report::new(grouped, vec![]).summary.open, 4);
    }

    fn finding(action: Action, status: Status) -> Finding {
        Finding {
            rule_id: RuleId::from("SG101"),
            title: "hook Job without activeDeadlineSeconds".into(),
            severity: Severity::High,
            action,
            status,
            message: "hook Job `migrate` can run forever".into(),
            resource: ResourceRef {
                group: "batch".into(),
                version: "v1".into(),
                kind: "Job".into(),
                name: "migrate".into(),
                namespace: Some("shop".into()),
            },
            application: None,
            location: None,
            path: Some("/spec/activeDeadlineSeconds".into()),
            patch: None,
            docs: Some("docs/rules/SG101.md".into()),
            cause: None,
            also: Vec::new(),
        }
    }

    #[test]
    fn severities_are_ordered_from_info_to_critical() {
        assert!(Severity::Info < Severity::Low);
        assert!(Severity::Low < Severity::Medium);
        assert!(Severity::High < Severity::Critical);
        assert_eq!("medium".parse::<Severity>(), Ok(Severity::Medium));
        assert!("warn".parse::<Severity>().is_err());
        assert!("High".parse::<Severity>().is_err());
    }

    #[test]
    fn actions_parse_only_their_exact_spelling() {
        for a in Action::ALL {
            assert_eq!(a.as_str().parse::<Action>(), Ok(a));
        }
        let err = "block".parse::<Action>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown action `block` (expected one of: deny, warn, mutate, audit, off)"
        );
    }

    #[test]
    fn fail_on_is_about_actions_and_ignores_skipped_findings() {
        let open = Status::Open;
        assert!(FailOn::Deny.is_tripped_by(Action::Deny, &open));
        assert!(!FailOn::Deny.is_tripped_by(Action::Warn, &open));
        assert!(FailOn::Warn.is_tripped_by(Action::Mutate, &open));
        assert!(!FailOn::Warn.is_tripped_by(Action::Audit, &open));
        assert!(FailOn::Info.is_tripped_by(Action::Audit, &open));
        let skipped = Status::Skipped {
            reason: "approved".into(),
        };
        assert!(!FailOn::Info.is_tripped_by(Action::Deny, &skipped));
        assert!(FailOn::Deny.is_tripped_by(Action::Deny, &Status::PolicyError));
    }

    #[test]
    fn a_finding_serializes_with_a_flat_status_and_without_empty_fields() {
        let f = finding(
            Action::Warn,
            Status::Skipped {
                reason: "owned by the DBA team".into(),
            },
        );
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            json!({
                "rule_id": "SG101",
                "title": "hook Job without activeDeadlineSeconds",
                "severity": "high",
                "action": "warn",
                "status": "skipped",
                "reason": "owned by the DBA team",
                "message": "hook Job `migrate` can run forever",
                "resource": {"group": "batch", "version": "v1", "kind": "Job",
                             "name": "migrate", "namespace": "shop"},
                "path": "/spec/activeDeadlineSeconds",
                "docs": "docs/rules/SG101.md"
            })
        );
        let e = finding(Action::Deny, Status::PolicyError);
        assert_eq!(serde_json::to_value(&e).unwrap()["status"], "policy-error");
    }

    #[test]
    fn the_summary_counts_open_findings_by_action_and_severity() {
        let report = Report::new(
            vec![
                finding(Action::Deny, Status::Open),
                finding(Action::Mutate, Status::Open),
                finding(Action::Deny, Status::Skipped { reason: "r".into() }),
                finding(Action::Warn, Status::PolicyError),
            ],
            vec!["a.yaml:3: not a mapping".into()],
        );
        let s = &report.summary;
        assert_eq!((s.total, s.open, s.skipped, s.policy_errors), (4, 2, 1, 1));
        assert_eq!((s.open_by_action.deny, s.open_by_action.mutate), (1, 1));
        assert_eq!(s.open_by_severity.high, 2);
        assert_eq!(s.errors, 1);
        assert!(report.fails(FailOn::Deny));
        assert!(report.fails(FailOn::Warn));
    }
}
