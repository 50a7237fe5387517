//! Writing the audit's reports: one per namespace and selected report API
//! (`wgpolicyk8s.io/v1alpha2` `PolicyReport`, `openreports.io/v1alpha1` `Report`, or both:
//! `--report-api`), only when its content changed.
//!
//! The reports are rendered by [`crate::output::policy_report`] (a view of the findings); this
//! module reconciles them with the cluster, each API on its own and by the same rules:
//!
//! - one LIST of syncguard's live reports (by the `app.kubernetes.io/managed-by: syncguard`
//!   label) per pass, instead of a GET per namespace;
//! - per namespace: carry each unchanged result's timestamp over from the live report, compare
//!   the content syncguard owns (results, summary, its label and annotations) and write nothing
//!   when it is equal — an audit of an unchanged cluster writes nothing at all, so etcd and every
//!   report watcher stay quiet;
//! - otherwise server-side apply with syncguard's field manager, forced (the report is ours;
//!   a conflicting manager is overridden rather than failing every pass);
//! - delete syncguard's reports in namespaces that have no findings any more (only reports
//!   carrying the label and named `syncguard`: other tools' reports are never touched).
//!
//! An API whose CRD is not installed: for `wgpolicyk8s.io` the pass fails with
//! [`ReportError::NotServed`] (as it always has); for `openreports.io` the reconciler logs a
//! warning the first time ([`ServedLog`]) and carries on with the other API and the metrics.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value;
use thiserror::Error;

use super::context::Config;
use crate::output::policy_report::{
    MANAGED_BY, MANAGED_BY_LABEL, REPORT_NAME, RenderedReport, ReportApi, carry_timestamps,
    same_content,
};

/// What happened to the reports in one pass (the `report_writes` metric's outcomes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteSummary {
    /// Written with server-side apply (new or changed).
    pub applied: usize,
    /// Equal to the live report: not written.
    pub unchanged: usize,
    /// Deleted: the namespace has no findings any more.
    pub deleted: usize,
    /// Writes or deletes that failed.
    pub failed: usize,
}

impl WriteSummary {
    /// Adds `other`'s counts (another API's writes in the same pass).
    pub fn add(&mut self, other: &WriteSummary) {
        self.applied += other.applied;
        self.unchanged += other.unchanged;
        self.deleted += other.deleted;
        self.failed += other.failed;
    }
}

/// Why reports could not be reconciled.
#[derive(Debug, Error)]
pub enum ReportError {
    /// The API server does not serve the report API (its CRD is not installed).
    #[error("{}", not_served_message(*.0))]
    NotServed(ReportApi),
    /// The live reports could not be listed.
    #[error("cannot list {kind}: {source}", kind = .0.display(), source = .1)]
    List(ReportApi, #[source] kube::Error),
    /// Some writes failed (the others were made).
    #[error("{} report write(s) failed; first: {first}", summary.failed)]
    Writes {
        /// The first failure.
        first: String,
        /// Everything that happened, failures included.
        summary: WriteSummary,
    },
}

fn not_served_message(api: ReportApi) -> String {
    match api {
        ReportApi::WgPolicy => {
            "the PolicyReport API (wgpolicyk8s.io/v1alpha2 policyreports) is not \
             served: install the PolicyReport CRD (e.g. from kubernetes-sigs/wg-policy-prototypes) \
             to get audit reports"
                .to_string()
        }
        ReportApi::OpenReports => "the OpenReports API (openreports.io/v1alpha1 reports) is not \
             served: install the OpenReports CRDs (from openreports/reports-api) to get audit \
             reports as Reports, or choose --report-api wgpolicyk8s"
            .to_string(),
    }
}

/// Says once that the OpenReports API is missing (and once that it is back), however many
/// passes find it so: a warning per pass would repeat the same sentence every audit interval.
#[derive(Debug, Default)]
pub struct ServedLog {
    missing: AtomicBool,
}

impl ServedLog {
    /// Records whether `api` was served in this pass; logs only when that changed (and then
    /// returns `true`).
    pub fn record(&self, api: ReportApi, served: bool) -> bool {
        let was_missing = self.missing.swap(!served, Ordering::AcqRel);
        if !served && !was_missing {
            tracing::warn!(
                api = %api.display(),
                "{}; the audit goes on without these reports (said once)",
                not_served_message(api)
            );
            true
        } else if served && was_missing {
            tracing::info!(api = %api.display(), "the report API is served now: writing reports");
            true
        } else {
            false
        }
    }

    /// Whether the last pass found the API missing.
    pub fn missing(&self) -> bool {
        self.missing.load(Ordering::Acquire)
    }
}

/// The process's [`ServedLog`] of the OpenReports API.
static OPENREPORTS_SERVED: ServedLog = ServedLog {
    missing: AtomicBool::new(false),
};

/// The `ApiResource` of PolicyReports (not in k8s-openapi; written as JSON).
pub fn policy_report_resource() -> ApiResource {
    report_resource(ReportApi::WgPolicy)
}

/// The `ApiResource` of the namespaced reports of `api`.
pub fn report_resource(api: ReportApi) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(api.group(), api.version(), api.kind()),
        api.plural(),
    )
}

/// Reconciles the cluster's syncguard reports with `render(api)` for every API selected in
/// `config.report_apis` (wgpolicyk8s.io first). A missing OpenReports API is logged once and
/// skipped; every other error fails the pass after the other APIs were written, with the
/// writes of all APIs in [`ReportError::Writes`].
pub async fn write_selected(
    client: &Client,
    config: &Config,
    mut render: impl FnMut(ReportApi) -> Vec<RenderedReport>,
    now: i64,
) -> Result<WriteSummary, ReportError> {
    let mut total = WriteSummary::default();
    let mut error: Option<ReportError> = None;
    for &api in config.report_apis.apis() {
        let result = write_reports(client, config, api, render(api), now).await;
        if api == ReportApi::OpenReports {
            let served = !matches!(result, Err(ReportError::NotServed(_)));
            OPENREPORTS_SERVED.record(api, served);
            if !served {
                continue;
            }
        }
        match result {
            Ok(summary) => total.add(&summary),
            Err(ReportError::Writes { first, summary }) => {
                total.add(&summary);
                error.get_or_insert(ReportError::Writes {
                    first,
                    summary: WriteSummary::default(),
                });
            }
            Err(e) => {
                error.get_or_insert(e);
            }
        }
    }
    match error {
        None => Ok(total),
        Some(ReportError::Writes { first, .. }) => Err(ReportError::Writes {
            first,
            summary: total,
        }),
        Some(e) => Err(e),
    }
}

/// Reconciles the cluster's syncguard reports of `api` with `reports` (one per namespace with
/// findings, rendered for `api`). `now` (Unix seconds) stamps results that are new or changed.
pub async fn write_reports(
    client: &Client,
    config: &Config,
    api: ReportApi,
    reports: Vec<RenderedReport>,
    now: i64,
) -> Result<WriteSummary, ReportError> {
    let resource = report_resource(api);
    let kind = api.kind();
    let live = list_live(client, config, api, &resource).await?;
    let mut summary = WriteSummary::default();
    let mut first_failure: Option<String> = None;
    let params = PatchParams::apply(&config.field_manager).force();
    let mut desired_namespaces = Vec::with_capacity(reports.len());

    for report in reports {
        let RenderedReport {
            namespace,
            mut object,
            ..
        } = report;
        let current = live.get(&namespace);
        carry_timestamps(&mut object, current, now);
        desired_namespaces.push(namespace.clone());
        if current.is_some_and(|c| same_content(&object, c)) {
            summary.unchanged += 1;
            continue;
        }
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &namespace, &resource);
        match api
            .patch(REPORT_NAME, &params, &Patch::Apply(&object))
            .await
        {
            Ok(_) => summary.applied += 1,
            Err(e) => {
                summary.failed += 1;
                tracing::warn!(namespace = %namespace, kind, error = %e, "report write failed");
                first_failure.get_or_insert_with(|| format!("{kind} {namespace}: {e}"));
            }
        }
    }

    for namespace in live.keys() {
        if desired_namespaces.contains(namespace) {
            continue;
        }
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
        match api.delete(REPORT_NAME, &DeleteParams::default()).await {
            Ok(_) => summary.deleted += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => summary.deleted += 1,
            Err(e) => {
                summary.failed += 1;
                tracing::warn!(namespace = %namespace, kind, error = %e, "report delete failed");
                first_failure.get_or_insert_with(|| format!("{kind} {namespace}: {e}"));
            }
        }
    }

    match first_failure {
        None => Ok(summary),
        Some(first) => Err(ReportError::Writes { first, summary }),
    }
}

/// syncguard's live reports by namespace (only those named [`REPORT_NAME`]).
async fn list_live(
    client: &Client,
    config: &Config,
    api: ReportApi,
    resource: &ApiResource,
) -> Result<BTreeMap<String, Value>, ReportError> {
    let apis: Vec<Api<DynamicObject>> = if config.audit_namespaces.is_empty() {
        vec![Api::all_with(client.clone(), resource)]
    } else {
        config
            .audit_namespaces
            .iter()
            .map(|ns| Api::namespaced_with(client.clone(), ns, resource))
            .collect()
    };
    let selector = format!("{MANAGED_BY_LABEL}={MANAGED_BY}");
    let mut out = BTreeMap::new();
    for endpoint in apis {
        let mut params = ListParams::default().labels(&selector).limit(500);
        loop {
            let page = match endpoint.list(&params).await {
                Ok(page) => page,
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    return Err(ReportError::NotServed(api));
                }
                Err(e) => return Err(ReportError::List(api, e)),
            };
            for item in page.items {
                let (Some(name), Some(ns)) = (&item.metadata.name, &item.metadata.namespace) else {
                    continue;
                };
                if name != REPORT_NAME {
                    continue;
                }
                let ns = ns.clone();
                if let Ok(value) = serde_json::to_value(&item) {
                    out.insert(ns, value);
                }
            }
            match page.metadata.continue_.filter(|t| !t.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => break,
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::finding::{Action, Finding, ResourceRef, RuleId, Severity, Status};
    use crate::output::policy_report::render_report;
    use crate::reconciler::context::ReportApis;
    use crate::reconciler::fixtures::{
        Exchange, assert_no_more_requests, mock_client, serve, within_2s,
    };

    const WG_LIST: &str = "/apis/wgpolicyk8s.io/v1alpha2/policyreports";
    const WG_ORDERS: &str =
        "/apis/wgpolicyk8s.io/v1alpha2/namespaces/orders/policyreports/syncguard";
    const OR_LIST: &str = "/apis/openreports.io/v1alpha1/reports";
    const OR_ORDERS: &str = "/apis/openreports.io/v1alpha1/namespaces/orders/reports/syncguard";
    const OR_GONE: &str = "/apis/openreports.io/v1alpha1/namespaces/gone/reports/syncguard";
    const SELECTOR: &str = "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dsyncguard";

    fn finding(rule: &str, severity: Severity, action: Action) -> Finding {
        Finding {
            rule_id: RuleId::new(rule),
            title: format!("title of {rule}"),
            severity,
            action,
            status: Status::Open,
            message: format!("{rule} on db-migrate"),
            resource: ResourceRef {
                group: "batch".into(),
                version: "v1".into(),
                kind: "Job".into(),
                name: "db-migrate".into(),
                namespace: Some("orders".into()),
            },
            application: Some("orders".into()),
            location: None,
            path: None,
            patch: None,
            docs: None,
            cause: None,
            also: Vec::new(),
        }
    }

    /// Two findings in `orders`, rendered for `api` with a cap of 1.
    fn render(api: ReportApi) -> Vec<RenderedReport> {
        let findings = [
            finding("SG201", Severity::Critical, Action::Deny),
            finding("SG103", Severity::Medium, Action::Warn),
        ];
        let refs: Vec<&Finding> = findings.iter().collect();
        vec![render_report(api, "orders", &refs, 1, |_| None)]
    }

    fn config(apis: ReportApis) -> Config {
        Config {
            report_apis: apis,
            report_max_results: 1,
            ..Config::default()
        }
    }

    /// A written body: the kind of `api`, one result (the cap), timestamps set.
    fn written(api: ReportApi) -> impl Fn(&Value) + Send + 'static {
        move |body: &Value| {
            assert_eq!(body["apiVersion"], api.api_version());
            assert_eq!(body["kind"], api.kind());
            assert_eq!(body["metadata"]["name"], REPORT_NAME);
            assert_eq!(body["metadata"]["labels"][MANAGED_BY_LABEL], MANAGED_BY);
            let results = body["results"].as_array().unwrap();
            assert_eq!(results.len(), 1, "{body}");
            assert_eq!(results[0]["policy"], "SG201");
            assert_eq!(results[0]["timestamp"]["seconds"], 1_000);
            assert_eq!(body["summary"]["warn"], 1);
            let openreports = api == ReportApi::OpenReports;
            assert_eq!(body.get("source").is_some(), openreports, "{body}");
            assert_eq!(body.get("configuration").is_some(), openreports, "{body}");
        }
    }

    fn stale_open_report(namespace: &str) -> Value {
        json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
               "metadata": {"name": "syncguard", "namespace": namespace,
                            "labels": {MANAGED_BY_LABEL: MANAGED_BY}},
               "summary": {"warn": 1}, "results": []})
    }

    #[tokio::test]
    async fn with_openreports_only_reports_of_openreports_io_are_listed_written_and_cleaned_up() {
        let (client, handle) = mock_client();
        let server = serve(
            handle,
            vec![
                Exchange::list(
                    OR_LIST,
                    &[SELECTOR, "limit=500"],
                    vec![stale_open_report("gone")],
                ),
                Exchange::patch(OR_ORDERS, written(ReportApi::OpenReports)),
                Exchange::delete(OR_GONE),
            ],
        );
        let config = config(ReportApis::OpenReports);
        let summary = within_2s(write_selected(&client, &config, render, 1_000))
            .await
            .unwrap();
        assert_eq!(
            summary,
            WriteSummary {
                applied: 1,
                deleted: 1,
                ..WriteSummary::default()
            }
        );
        let mut handle = server.await.unwrap();
        assert_no_more_requests(&mut handle).await;
    }

    #[tokio::test]
    async fn with_both_each_api_gets_its_own_report_wgpolicyk8s_first() {
        let (client, handle) = mock_client();
        let server = serve(
            handle,
            vec![
                Exchange::list(WG_LIST, &[SELECTOR], vec![]),
                Exchange::patch(WG_ORDERS, written(ReportApi::WgPolicy)),
                Exchange::list(OR_LIST, &[SELECTOR], vec![]),
                Exchange::patch(OR_ORDERS, written(ReportApi::OpenReports)),
            ],
        );
        let config = config(ReportApis::Both);
        let summary = within_2s(write_selected(&client, &config, render, 1_000))
            .await
            .unwrap();
        assert_eq!(summary.applied, 2);
        assert_eq!(summary.failed, 0);
        let mut handle = server.await.unwrap();
        assert_no_more_requests(&mut handle).await;
    }

    #[tokio::test]
    async fn a_missing_openreports_crd_does_not_fail_the_pass_but_a_missing_policyreport_crd_does()
    {
        // both, OpenReports not installed: the PolicyReport is written and the pass succeeds.
        let (client, handle) = mock_client();
        let server = serve(
            handle,
            vec![
                Exchange::list(WG_LIST, &[SELECTOR], vec![]),
                Exchange::patch(WG_ORDERS, written(ReportApi::WgPolicy)),
                Exchange::not_found(OR_LIST),
            ],
        );
        let summary = within_2s(write_selected(
            &client,
            &config(ReportApis::Both),
            render,
            1_000,
        ))
        .await
        .unwrap();
        assert_eq!(summary.applied, 1);
        let mut handle = server.await.unwrap();
        assert_no_more_requests(&mut handle).await;

        // both, PolicyReport not installed: the Report is still written, then the pass fails
        // with the error that names the missing CRD (as with wgpolicyk8s alone).
        let (client, handle) = mock_client();
        let server = serve(
            handle,
            vec![
                Exchange::not_found(WG_LIST),
                Exchange::list(OR_LIST, &[SELECTOR], vec![]),
                Exchange::patch(OR_ORDERS, written(ReportApi::OpenReports)),
            ],
        );
        let error = within_2s(write_selected(
            &client,
            &config(ReportApis::Both),
            render,
            1_000,
        ))
        .await
        .unwrap_err();
        assert!(
            matches!(error, ReportError::NotServed(ReportApi::WgPolicy)),
            "{error}"
        );
        assert!(error.to_string().contains("install the PolicyReport CRD"));
        let mut handle = server.await.unwrap();
        assert_no_more_requests(&mut handle).await;
    }

    #[test]
    fn a_missing_api_is_logged_when_it_goes_missing_and_when_it_comes_back_only() {
        let log = ServedLog::default();
        assert!(!log.record(ReportApi::OpenReports, true));
        assert!(log.record(ReportApi::OpenReports, false));
        assert!(log.missing());
        assert!(!log.record(ReportApi::OpenReports, false));
        assert!(!log.record(ReportApi::OpenReports, false));
        assert!(log.record(ReportApi::OpenReports, true));
        assert!(!log.missing());
        assert!(!log.record(ReportApi::OpenReports, true));
        assert!(
            not_served_message(ReportApi::OpenReports).contains("openreports.io/v1alpha1 reports")
        );
    }
}
