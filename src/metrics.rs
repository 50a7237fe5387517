//! Prometheus metrics (OpenMetrics text on `GET /metrics`), shared by the webhook and, later, the
//! reconciler.
//!
//! One [`Metrics`] value owns its own [`Registry`] — no global state — so tests can start several
//! servers in one process and read each one's numbers. Label values are bounded: endpoints,
//! operations, decisions, actions and reasons are fixed vocabularies; `kind` and `rule` come from
//! the cluster's API types and the policy set, both small and slow-changing. Object names and
//! namespaces are never labels (they belong in logs).

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Evaluation latency buckets, in seconds. A review normally takes tens of microseconds
/// (DESIGN.md §7: p99 ≤ 1 ms), so the buckets start at 50 µs to make that visible, and reach the
/// webhook deadline (seconds) so timeouts land in a bucket too.
pub const LATENCY_BUCKETS: [f64; 16] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0,
];

/// `syncguard_admission_requests_total` labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `validate` or `mutate`.
    pub endpoint: &'static str,
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT`, or empty for unreadable requests.
    pub operation: &'static str,
    /// The object's kind as the API server names it (empty for unreadable requests).
    pub kind: String,
    /// `allowed`, `denied`, `patched`, or `bad_request` / `too_large` for HTTP errors.
    pub decision: &'static str,
}

/// Labels of metrics split by endpoint only.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EndpointLabels {
    /// `validate` or `mutate`.
    pub endpoint: &'static str,
}

/// `syncguard_findings_total` labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FindingLabels {
    /// `validate` or `mutate` (both endpoints see the same object, so they are kept apart).
    pub endpoint: &'static str,
    /// The rule id, e.g. `SG201`.
    pub rule: String,
    /// The effective action: `deny`, `warn`, `mutate`, `audit`.
    pub action: &'static str,
}

/// `syncguard_evaluation_errors_total` labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    /// `validate` or `mutate`.
    pub endpoint: &'static str,
    /// `timeout`, `internal`, `rule` (a rule failed to evaluate) or `patch` (a rule's patch did
    /// not apply).
    pub reason: &'static str,
    /// What the failure mode made of it: `allowed` or `denied`.
    pub outcome: &'static str,
}

/// `syncguard_reloads_total` labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReloadLabels {
    /// `policies`, `certificate` or `app_context`.
    pub what: &'static str,
}

/// `syncguard_reload_failures_total` labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReloadFailureLabels {
    /// `policies`, `certificate` or `app_context`.
    pub what: &'static str,
    /// Why, e.g. `rego`, `tests`, `config`, `io`, `parse`, `key_mismatch`.
    pub reason: &'static str,
}

/// Every metric syncguard exports, plus the registry that encodes them.
pub struct Metrics {
    registry: Registry,
    /// Admission requests by endpoint, operation, kind and decision.
    pub requests: Family<RequestLabels, Counter>,
    /// Time spent evaluating one review (decode excluded, queueing for a worker included).
    pub evaluation_seconds: Family<EndpointLabels, Histogram>,
    /// Open findings by rule and action.
    pub findings: Family<FindingLabels, Counter>,
    /// Internal errors and deadline overruns, and what the failure mode answered.
    pub evaluation_errors: Family<ErrorLabels, Counter>,
    /// Successful hot reloads.
    pub reloads: Family<ReloadLabels, Counter>,
    /// Rejected hot reloads: the last good policy set / certificate stayed in use.
    pub reload_failures: Family<ReloadFailureLabels, Counter>,
    /// `notAfter` of the serving certificate in use, as a Unix timestamp (alert on
    /// `syncguard_certificate_expiry_timestamp_seconds - time() < 7 * 86400`).
    pub certificate_expiry: Gauge<f64, AtomicU64>,
    /// Reviews being evaluated right now.
    pub inflight: Gauge,
    /// 1 when `/readyz` answers 200.
    pub ready: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("syncguard");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "admission_requests",
            "AdmissionReview requests by endpoint, operation, kind and decision",
            requests.clone(),
        );
        let evaluation_seconds = Family::<EndpointLabels, Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        registry.register(
            "evaluation_duration_seconds",
            "Time to evaluate one admission review, including the wait for a worker",
            evaluation_seconds.clone(),
        );
        let findings = Family::<FindingLabels, Counter>::default();
        registry.register(
            "findings",
            "Open findings reported at admission, by rule and action",
            findings.clone(),
        );
        let evaluation_errors = Family::<ErrorLabels, Counter>::default();
        registry.register(
            "evaluation_errors",
            "Reviews that hit an internal error or the deadline, and the failure-mode answer",
            evaluation_errors.clone(),
        );
        let reloads = Family::<ReloadLabels, Counter>::default();
        registry.register(
            "reloads",
            "Successful hot reloads of policies, certificate or app context",
            reloads.clone(),
        );
        let reload_failures = Family::<ReloadFailureLabels, Counter>::default();
        registry.register(
            "reload_failures",
            "Rejected hot reloads; the last good version stays in use",
            reload_failures.clone(),
        );
        let certificate_expiry = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "certificate_expiry_timestamp_seconds",
            "notAfter of the serving certificate in use (Unix time)",
            certificate_expiry.clone(),
        );
        let inflight = Gauge::default();
        registry.register(
            "inflight_reviews",
            "Admission reviews being evaluated",
            inflight.clone(),
        );
        let ready = Gauge::default();
        registry.register(
            "ready",
            "1 when policies are loaded, a certificate is present and the server is not shutting down",
            ready.clone(),
        );
        Self {
            registry,
            requests,
            evaluation_seconds,
            findings,
            evaluation_errors,
            reloads,
            reload_failures,
            certificate_expiry,
            inflight,
            ready,
        }
    }

    /// The OpenMetrics text exposition of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; an error would only mean a metric was skipped.
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.push_str("# encoding error\n");
        }
        out
    }

    /// Counts a successful reload.
    pub fn reloaded(&self, what: &'static str) {
        self.reloads.get_or_create(&ReloadLabels { what }).inc();
    }

    /// Counts a rejected reload.
    pub fn reload_failed(&self, what: &'static str, reason: &'static str) {
        self.reload_failures
            .get_or_create(&ReloadFailureLabels { what, reason })
            .inc();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn counters_get_the_total_suffix_and_the_syncguard_prefix() {
        let m = Metrics::new();
        m.requests
            .get_or_create(&RequestLabels {
                endpoint: "validate",
                operation: "CREATE",
                kind: "Job".into(),
                decision: "denied",
            })
            .inc();
        m.reload_failed("policies", "tests");
        let text = m.encode();
        assert!(
            text.contains(
                "syncguard_admission_requests_total{endpoint=\"validate\",operation=\"CREATE\",kind=\"Job\",decision=\"denied\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("syncguard_reload_failures_total{what=\"policies\",reason=\"tests\"} 1")
        );
    }

    #[test]
    fn latency_buckets_start_at_fifty_microseconds_and_ascend() {
        assert_eq!(LATENCY_BUCKETS[0], 0.000_05);
        assert!(LATENCY_BUCKETS.windows(2).all(|w| w[0] < w[1]));
    }
}
