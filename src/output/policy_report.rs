//! Findings of one namespace as a `wgpolicyk8s.io/v1alpha2` `PolicyReport`, the format
//! policy-reporter, Kyverno's UI and many dashboards read, or as its successor, an
//! `openreports.io/v1alpha1` `Report` ([`ReportApi`]).
//!
//! The two APIs share the result format (`policy`, `rule`, `category`, `severity`, `result`,
//! `scored`, `source`, `message`, `resources`, `properties`, `timestamp`) and the `summary`, so
//! both are rendered from the same results. An OpenReports `Report` also carries the report-level
//! `source` and `configuration.limits.maxResults` (the cap below), which `PolicyReport` has no
//! field for.
//!
//! A view like the CLI renderers: a pure function of findings. Two decisions make it safe to
//! write into a cluster:
//!
//! - **Bounded.** At most `max_results` results (the most severe are kept, in a fixed order).
//!   Peers' reports are known to overload etcd (kyverno#2674, #6462: "request is too large" with
//!   thousands of results per namespace). The `summary` still counts every finding, and the
//!   annotations say how many results were left out and where the full list is.
//! - **Deterministic.** The same findings always give the same document, result for result, so
//!   the writer can compare it with the live report and skip unchanged writes. Timestamps are
//!   not set here: the writer carries each unchanged result's timestamp over from the live
//!   report ([`carry_timestamps`]).

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::cmp::Ordering;

use serde_json::{Map, Value, json};

use crate::finding::{Action, Finding, ResourceRef, Status};

/// `apiVersion` of the wgpolicyk8s.io reports.
pub const API_VERSION: &str = "wgpolicyk8s.io/v1alpha2";
/// `kind` of the wgpolicyk8s.io reports.
pub const KIND: &str = "PolicyReport";
/// `apiVersion` of the OpenReports reports.
pub const OPENREPORTS_API_VERSION: &str = "openreports.io/v1alpha1";
/// `kind` of the OpenReports reports (namespaced; `ClusterReport` is the cluster-scoped one).
pub const OPENREPORTS_KIND: &str = "Report";
/// Every namespace's report has this name: one report per namespace, easy to find.
pub const REPORT_NAME: &str = "syncguard";
/// The label that marks reports syncguard owns (and may delete).
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Its value.
pub const MANAGED_BY: &str = "syncguard";
/// How many findings the namespace has (results may be fewer, see [`OMITTED_ANNOTATION`]).
pub const TOTAL_ANNOTATION: &str = "syncguard.dev/findings-total";
/// How many findings were left out of `results` because of the cap.
pub const OMITTED_ANNOTATION: &str = "syncguard.dev/results-omitted";
/// A sentence for people reading the report when results were left out.
pub const NOTE_ANNOTATION: &str = "syncguard.dev/note";
/// `results[].source`.
pub const SOURCE: &str = "syncguard";

/// The report API a report is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReportApi {
    /// `wgpolicyk8s.io/v1alpha2` `PolicyReport` (policy-reporter, Kyverno before OpenReports).
    WgPolicy,
    /// `openreports.io/v1alpha1` `Report`, the Policy Working Group API's successor.
    OpenReports,
}

impl ReportApi {
    /// API group.
    pub fn group(self) -> &'static str {
        match self {
            ReportApi::WgPolicy => "wgpolicyk8s.io",
            ReportApi::OpenReports => "openreports.io",
        }
    }

    /// Version.
    pub fn version(self) -> &'static str {
        match self {
            ReportApi::WgPolicy => "v1alpha2",
            ReportApi::OpenReports => "v1alpha1",
        }
    }

    /// `group/version`.
    pub fn api_version(self) -> &'static str {
        match self {
            ReportApi::WgPolicy => API_VERSION,
            ReportApi::OpenReports => OPENREPORTS_API_VERSION,
        }
    }

    /// `kind` of the namespaced report.
    pub fn kind(self) -> &'static str {
        match self {
            ReportApi::WgPolicy => KIND,
            ReportApi::OpenReports => OPENREPORTS_KIND,
        }
    }

    /// Resource name of the namespaced report in URLs.
    pub fn plural(self) -> &'static str {
        match self {
            ReportApi::WgPolicy => "policyreports",
            ReportApi::OpenReports => "reports",
        }
    }

    /// `plural.group`, for messages and CRD names.
    pub fn display(self) -> String {
        format!("{}.{}", self.plural(), self.group())
    }
}

/// A rendered report and what was left out.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedReport {
    /// The namespace.
    pub namespace: String,
    /// The `PolicyReport` (or OpenReports `Report`) object, without result timestamps.
    pub object: Value,
    /// Findings left out of `results` by the cap.
    pub omitted: usize,
}

/// The family of a rule (`SG1xx` …) as a PolicyReport `category`.
pub fn category(rule_id: &str) -> &'static str {
    match rule_id.get(..3) {
        Some("SG1") => "Argo CD hooks and annotations",
        Some("SG2") => "Argo CD sync ordering",
        Some("SG3") => "Determinism and drift",
        Some("SG5") => "Live Argo CD operations",
        _ => "syncguard",
    }
}

/// `results[].result`: `fail` for what admission would deny, `warn` for every other open
/// finding, `skip` for exempted ones and `error` when a rule could not judge the object.
fn result_of(f: &Finding) -> &'static str {
    match (&f.status, f.action) {
        (Status::Skipped { .. }, _) => "skip",
        (Status::PolicyError, _) => "error",
        (Status::Open, Action::Deny) => "fail",
        (Status::Open, _) => "warn",
    }
}

fn result_rank(result: &str) -> u8 {
    match result {
        "fail" => 0,
        "error" => 1,
        "warn" => 2,
        _ => 3,
    }
}

/// Order of results: most severe first, then fail before warn, then rule, object and message —
/// every field takes part, so the order never depends on evaluation order.
fn compare(a: &Finding, b: &Finding) -> Ordering {
    b.severity
        .cmp(&a.severity)
        .then_with(|| result_rank(result_of(a)).cmp(&result_rank(result_of(b))))
        .then_with(|| a.rule_id.cmp(&b.rule_id))
        .then_with(|| resource_key(&a.resource).cmp(&resource_key(&b.resource)))
        .then_with(|| a.path.cmp(&b.path))
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

/// One `results[]` entry (without `timestamp`).
fn result_entry(f: &Finding, uid: Option<String>) -> Value {
    let r = &f.resource;
    let api_version = if r.group.is_empty() {
        r.version.clone()
    } else {
        format!("{}/{}", r.group, r.version)
    };
    let mut object_ref = Map::new();
    object_ref.insert("apiVersion".into(), Value::from(api_version));
    object_ref.insert("kind".into(), Value::from(r.kind.clone()));
    object_ref.insert("name".into(), Value::from(r.name.clone()));
    if let Some(ns) = &r.namespace {
        object_ref.insert("namespace".into(), Value::from(ns.clone()));
    }
    if let Some(uid) = uid {
        object_ref.insert("uid".into(), Value::from(uid));
    }
    // `properties` is map[string]string in the CRD: every value is a string, or the API server
    // prunes it and the report would differ from the live one forever.
    let mut properties = Map::new();
    properties.insert("action".into(), Value::from(f.action.as_str()));
    if let Some(app) = &f.application {
        properties.insert("application".into(), Value::from(app.clone()));
    }
    if let Some(path) = &f.path {
        properties.insert("path".into(), Value::from(path.clone()));
    }
    if let Some(patch) = &f.patch
        && let Ok(text) = serde_json::to_string(patch)
    {
        properties.insert("fix".into(), Value::from(text));
    }
    if let Some(docs) = &f.docs {
        properties.insert("docs".into(), Value::from(docs.clone()));
    }
    if let Status::Skipped { reason } = &f.status {
        properties.insert("skipReason".into(), Value::from(reason.clone()));
    }
    json!({
        "policy": f.rule_id.to_string(),
        "rule": f.title,
        "category": category(&f.rule_id.to_string()),
        "severity": f.severity.as_str(),
        "result": result_of(f),
        "scored": true,
        "source": SOURCE,
        "message": f.message,
        "resources": [Value::Object(object_ref)],
        "properties": properties,
    })
}

/// Renders the findings of `namespace` as a PolicyReport with at most `max_results` results.
/// `uid_of` supplies object uids when known (PolicyReport consumers link results to objects by
/// uid).
pub fn render_policy_report(
    namespace: &str,
    findings: &[&Finding],
    max_results: usize,
    uid_of: impl Fn(&ResourceRef) -> Option<String>,
) -> RenderedReport {
    render_report(
        ReportApi::WgPolicy,
        namespace,
        findings,
        max_results,
        uid_of,
    )
}

/// Renders the findings of `namespace` as a report of `api` with at most `max_results` results:
/// the same results, summary, name, label and annotations for either API.
pub fn render_report(
    api: ReportApi,
    namespace: &str,
    findings: &[&Finding],
    max_results: usize,
    uid_of: impl Fn(&ResourceRef) -> Option<String>,
) -> RenderedReport {
    let mut sorted: Vec<&Finding> = findings.to_vec();
    sorted.sort_by(|a, b| compare(a, b));
    let mut summary = json!({"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0});
    for f in &sorted {
        if let Some(n) = summary.get_mut(result_of(f)) {
            *n = Value::from(n.as_u64().unwrap_or(0) + 1);
        }
    }
    let kept = sorted.len().min(max_results);
    let omitted = sorted.len() - kept;
    let results: Vec<Value> = sorted
        .iter()
        .take(kept)
        .map(|f| result_entry(f, uid_of(&f.resource)))
        .collect();
    let mut annotations = Map::new();
    annotations.insert(
        TOTAL_ANNOTATION.into(),
        Value::from(sorted.len().to_string()),
    );
    annotations.insert(OMITTED_ANNOTATION.into(), Value::from(omitted.to_string()));
    if omitted > 0 {
        annotations.insert(
            NOTE_ANNOTATION.into(),
            Value::from(format!(
                "{omitted} of {} results left out (at most {max_results} per report, the most \
                 severe kept; summary counts all). For the full list run `syncguard check` on \
                 the rendered manifests of this namespace's Applications.",
                sorted.len()
            )),
        );
    }
    let mut object = json!({
        "apiVersion": api.api_version(),
        "kind": api.kind(),
        "metadata": {
            "name": REPORT_NAME,
            "namespace": namespace,
            "labels": {MANAGED_BY_LABEL: MANAGED_BY},
            "annotations": annotations,
        },
        "summary": summary,
        "results": results,
    });
    if api == ReportApi::OpenReports
        && let Some(obj) = object.as_object_mut()
    {
        // Report-level fields only OpenReports has: every result comes from one engine, and
        // the cap is the documented generator/consumer contract `limits.maxResults`.
        obj.insert("source".into(), Value::from(SOURCE));
        obj.insert(
            "configuration".into(),
            json!({"limits": {"maxResults": max_results}}),
        );
    }
    RenderedReport {
        namespace: namespace.to_string(),
        object,
        omitted,
    }
}

/// Gives every result of `desired` a timestamp: the live report's timestamp for a result that is
/// unchanged (equal in every field but the timestamp), else `now`. A report whose findings did
/// not change is then identical to the live one, and no write happens.
pub fn carry_timestamps(desired: &mut Value, live: Option<&Value>, now_seconds: i64) {
    let live_results: Vec<(&Value, Value)> = live
        .and_then(|l| l.get("results"))
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .filter_map(|r| {
                    let stamp = r.get("timestamp")?;
                    let mut bare = r.clone();
                    if let Some(obj) = bare.as_object_mut() {
                        obj.remove("timestamp");
                    }
                    Some((stamp, bare))
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(results) = desired.get_mut("results").and_then(Value::as_array_mut) else {
        return;
    };
    for result in results.iter_mut() {
        // Reports hold at most a few hundred results: a linear scan per result is cheap and,
        // unlike a key built from serialized JSON, independent of key order.
        let stamp = live_results
            .iter()
            .find(|(_, bare)| bare == result)
            .map(|(stamp, _)| (*stamp).clone())
            .unwrap_or_else(|| json!({"seconds": now_seconds, "nanos": 0}));
        if let Some(obj) = result.as_object_mut() {
            obj.insert("timestamp".into(), stamp);
        }
    }
}

/// True when the live report already says what `desired` says, in every field syncguard owns:
/// results, summary, (OpenReports) source and configuration, our label and our annotations. Other fields (added by other managers or
/// the API server) are ignored.
pub fn same_content(desired: &Value, live: &Value) -> bool {
    let field = |v: &Value, p: &str| v.pointer(p).cloned();
    if ["/results", "/summary", "/source", "/configuration"]
        .iter()
        .any(|p| field(desired, p) != field(live, p))
    {
        return false;
    }
    let label = "/metadata/labels";
    let ours = |v: &Value, key: &str| v.pointer(label).and_then(|l| l.get(key)).cloned();
    if ours(desired, MANAGED_BY_LABEL) != ours(live, MANAGED_BY_LABEL) {
        return false;
    }
    let annotation = |v: &Value, key: &str| {
        v.pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .cloned()
    };
    [TOTAL_ANNOTATION, OMITTED_ANNOTATION, NOTE_ANNOTATION]
        .iter()
        .all(|k| annotation(desired, k) == annotation(live, k))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::finding::{RuleId, Severity};

    fn finding(rule: &str, severity: Severity, action: Action, name: &str) -> Finding {
        Finding {
            rule_id: RuleId::new(rule),
            title: format!("title of {rule}"),
            severity,
            action,
            status: Status::Open,
            message: format!("{rule} on {name}"),
            resource: ResourceRef {
                group: "batch".into(),
                version: "v1".into(),
                kind: "Job".into(),
                name: name.into(),
                namespace: Some("orders".into()),
            },
            application: Some("orders".into()),
            location: None,
            path: Some("/spec".into()),
            patch: None,
            docs: Some(format!("docs/rules/{rule}.md")),
            cause: None,
            also: Vec::new(),
        }
    }

    fn five() -> Vec<Finding> {
        vec![
            finding("SG103", Severity::Medium, Action::Warn, "a"),
            finding("SG201", Severity::Critical, Action::Deny, "a"),
            finding("SG101", Severity::High, Action::Mutate, "a"),
            finding("SG102", Severity::Low, Action::Mutate, "b"),
            finding("SG101", Severity::High, Action::Mutate, "b"),
        ]
    }

    #[test]
    fn the_cap_keeps_the_most_severe_results_and_says_how_many_were_left_out() {
        let findings = five();
        let refs: Vec<&Finding> = findings.iter().collect();
        let report = render_policy_report("orders", &refs, 3, |_| Some("u-1".into()));
        assert_eq!(report.omitted, 2);
        let results = report.object["results"].as_array().unwrap();
        let policies: Vec<&str> = results
            .iter()
            .map(|r| r["policy"].as_str().unwrap())
            .collect();
        assert_eq!(policies, vec!["SG201", "SG101", "SG101"]);
        assert_eq!(results[0]["result"], "fail");
        assert_eq!(results[1]["result"], "warn");
        assert_eq!(results[0]["resources"][0]["uid"], "u-1");
        assert_eq!(results[0]["category"], "Argo CD sync ordering");
        assert_eq!(report.object["summary"]["fail"], 1);
        assert_eq!(report.object["summary"]["warn"], 4);
        let annotations = &report.object["metadata"]["annotations"];
        assert_eq!(annotations[OMITTED_ANNOTATION], "2");
        assert_eq!(annotations[TOTAL_ANNOTATION], "5");
        assert!(
            annotations[NOTE_ANNOTATION]
                .as_str()
                .unwrap()
                .contains("syncguard check")
        );
    }

    #[test]
    fn the_order_does_not_depend_on_the_order_findings_arrive_in() {
        let findings = five();
        let forward: Vec<&Finding> = findings.iter().collect();
        let backward: Vec<&Finding> = findings.iter().rev().collect();
        assert_eq!(
            render_policy_report("orders", &forward, 10, |_| None),
            render_policy_report("orders", &backward, 10, |_| None)
        );
    }

    #[test]
    fn unchanged_results_keep_their_timestamp_and_the_report_compares_equal() {
        let findings = five();
        let refs: Vec<&Finding> = findings.iter().collect();
        let mut first = render_policy_report("orders", &refs, 10, |_| None).object;
        carry_timestamps(&mut first, None, 1_000);
        assert_eq!(first["results"][0]["timestamp"]["seconds"], 1_000);

        let mut second = render_policy_report("orders", &refs, 10, |_| None).object;
        carry_timestamps(&mut second, Some(&first), 2_000);
        assert_eq!(second["results"][0]["timestamp"]["seconds"], 1_000);
        assert!(same_content(&second, &first));

        let mut changed = findings.clone();
        changed[0].message = "a new message".into();
        let refs: Vec<&Finding> = changed.iter().collect();
        let mut third = render_policy_report("orders", &refs, 10, |_| None).object;
        carry_timestamps(&mut third, Some(&first), 3_000);
        assert!(!same_content(&third, &first));
        let stamps: Vec<i64> = third["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["timestamp"]["seconds"].as_i64().unwrap())
            .collect();
        assert_eq!(stamps.iter().filter(|s| **s == 3_000).count(), 1);
    }

    /// The fields of `openreports.io/v1alpha1` `Report` and of its `results[]` items, as in
    /// the CRD (openreports/reports-api config/crd/openreports.io_reports.yaml, v0.2.1).
    const OPENREPORTS_FIELDS: [&str; 9] = [
        "apiVersion",
        "kind",
        "metadata",
        "source",
        "scope",
        "scopeSelector",
        "configuration",
        "summary",
        "results",
    ];
    const OPENREPORTS_RESULT_FIELDS: [&str; 12] = [
        "source",
        "policy",
        "rule",
        "category",
        "severity",
        "timestamp",
        "result",
        "scored",
        "resources",
        "resourceSelector",
        "message",
        "properties",
    ];

    #[test]
    fn an_openreports_report_has_its_api_kind_and_fields_and_keeps_the_cap() {
        let findings = five();
        let refs: Vec<&Finding> = findings.iter().collect();
        let mut report = render_report(ReportApi::OpenReports, "orders", &refs, 3, |_| {
            Some("u-1".into())
        });
        carry_timestamps(&mut report.object, None, 1_000);
        let object = &report.object;
        assert_eq!(object["apiVersion"], "openreports.io/v1alpha1");
        assert_eq!(object["kind"], "Report");
        assert_eq!(object["metadata"]["name"], REPORT_NAME);
        assert_eq!(object["metadata"]["namespace"], "orders");
        assert_eq!(object["metadata"]["labels"][MANAGED_BY_LABEL], MANAGED_BY);
        assert_eq!(object["source"], "syncguard");
        assert_eq!(object["configuration"]["limits"]["maxResults"], 3);
        for key in object.as_object().unwrap().keys() {
            assert!(
                OPENREPORTS_FIELDS.contains(&key.as_str()),
                "not in the CRD: {key}"
            );
        }

        // Bounded like a PolicyReport: 3 of 5 kept, the summary counts all 5.
        assert_eq!(report.omitted, 2);
        let results = object["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        assert_eq!(object["summary"]["fail"], 1);
        assert_eq!(object["summary"]["warn"], 4);
        assert_eq!(object["metadata"]["annotations"][OMITTED_ANNOTATION], "2");
        for result in results {
            for key in result.as_object().unwrap().keys() {
                assert!(
                    OPENREPORTS_RESULT_FIELDS.contains(&key.as_str()),
                    "result field not in the CRD: {key}"
                );
            }
            // properties is map[string]string; timestamp needs seconds and nanos.
            for value in result["properties"].as_object().unwrap().values() {
                assert!(value.is_string(), "{value}");
            }
            assert!(result["timestamp"]["seconds"].is_i64());
            assert!(result["timestamp"]["nanos"].is_i64());
        }
        let first = &results[0];
        assert_eq!(first["policy"], "SG201");
        assert_eq!(first["result"], "fail");
        assert_eq!(first["severity"], "critical");
        assert_eq!(first["message"], "SG201 on a");
        assert_eq!(first["source"], "syncguard");
        assert_eq!(first["resources"][0]["kind"], "Job");
        assert_eq!(first["resources"][0]["apiVersion"], "batch/v1");
        assert_eq!(first["resources"][0]["uid"], "u-1");

        // The same results as the PolicyReport; only the envelope differs.
        let policy_report = render_policy_report("orders", &refs, 3, |_| Some("u-1".into()));
        let mut bare = report.object.clone();
        for r in bare["results"].as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("timestamp");
        }
        assert_eq!(bare["results"], policy_report.object["results"]);
        assert_eq!(bare["summary"], policy_report.object["summary"]);
        assert_eq!(
            policy_report.object["apiVersion"],
            "wgpolicyk8s.io/v1alpha2"
        );
        assert!(policy_report.object.get("source").is_none());
        assert!(policy_report.object.get("configuration").is_none());
    }

    #[test]
    fn a_new_cap_is_a_change_of_an_openreports_report_even_when_nothing_is_left_out() {
        let findings = five();
        let refs: Vec<&Finding> = findings.iter().collect();
        let mut live = render_report(ReportApi::OpenReports, "orders", &refs, 10, |_| None).object;
        carry_timestamps(&mut live, None, 1_000);
        let mut same = render_report(ReportApi::OpenReports, "orders", &refs, 10, |_| None).object;
        carry_timestamps(&mut same, Some(&live), 2_000);
        assert!(same_content(&same, &live));
        let mut raised =
            render_report(ReportApi::OpenReports, "orders", &refs, 20, |_| None).object;
        carry_timestamps(&mut raised, Some(&live), 2_000);
        assert_eq!(raised["results"], live["results"]);
        assert!(!same_content(&raised, &live));
    }
}
