//! Writing PolicyReports: one per namespace, only when its content changed.
//!
//! The reports are rendered by [`crate::output::policy_report`] (a view of the findings); this
//! module reconciles them with the cluster:
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

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value;
use thiserror::Error;

use super::context::Config;
use crate::output::policy_report::{
    MANAGED_BY, MANAGED_BY_LABEL, REPORT_NAME, RenderedReport, carry_timestamps, same_content,
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

/// Why reports could not be reconciled.
#[derive(Debug, Error)]
pub enum ReportError {
    /// The API server does not serve `wgpolicyk8s.io/v1alpha2` PolicyReports.
    #[error(
        "the PolicyReport API (wgpolicyk8s.io/v1alpha2 policyreports) is not served: install the \
         PolicyReport CRD (e.g. from kubernetes-sigs/wg-policy-prototypes) to get audit reports"
    )]
    NotServed,
    /// The live reports could not be listed.
    #[error("cannot list PolicyReports: {0}")]
    List(#[source] kube::Error),
    /// Some writes failed (the others were made).
    #[error("{} PolicyReport write(s) failed; first: {first}", summary.failed)]
    Writes {
        /// The first failure.
        first: String,
        /// Everything that happened, failures included.
        summary: WriteSummary,
    },
}

/// The `ApiResource` of PolicyReports (not in k8s-openapi; written as JSON).
pub fn policy_report_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("wgpolicyk8s.io", "v1alpha2", "PolicyReport"),
        "policyreports",
    )
}

/// Reconciles the cluster's syncguard reports with `reports` (one per namespace with findings).
/// `now` (Unix seconds) stamps results that are new or changed.
pub async fn write_reports(
    client: &Client,
    config: &Config,
    reports: Vec<RenderedReport>,
    now: i64,
) -> Result<WriteSummary, ReportError> {
    let resource = policy_report_resource();
    let live = list_live(client, config, &resource).await?;
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
                tracing::warn!(namespace = %namespace, error = %e, "PolicyReport write failed");
                first_failure.get_or_insert_with(|| format!("{namespace}: {e}"));
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
                tracing::warn!(namespace = %namespace, error = %e, "PolicyReport delete failed");
                first_failure.get_or_insert_with(|| format!("{namespace}: {e}"));
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
    for api in apis {
        let mut params = ListParams::default().labels(&selector).limit(500);
        loop {
            let page = match api.list(&params).await {
                Ok(page) => page,
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    return Err(ReportError::NotServed);
                }
                Err(e) => return Err(ReportError::List(e)),
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
