//! Prometheus metrics (OpenMetrics text on `GET /metrics`), shared by the webhook ([`Metrics`]) and
//! the reconciler ([`ReconcilerMetrics`]).
//!
//! One [`Metrics`] value owns its own [`Registry`] — no global state — so tests can start several
//! servers in one process and read each one's numbers. Label values are bounded: endpoints,
//! operations, decisions, actions and reasons are fixed vocabularies; `kind` and `rule` come from
//! the cluster's API types and the policy set, both small and slow-changing. Object names and
//! namespaces are never labels (they belong in logs).

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Evaluation latency buckets, in seconds. A review normally takes a few hundred microseconds
/// (DESIGN.md §7: p99 ≤ 1 ms), so the buckets start at 50 µs and are dense below 1 ms to make
/// p50/p99 readable there, and reach the webhook deadline (seconds) so timeouts land in a bucket
/// too.
pub const LATENCY_BUCKETS: [f64; 21] = [
    0.000_05, 0.000_1, 0.000_15, 0.000_2, 0.000_25, 0.000_3, 0.000_4, 0.000_5, 0.000_75, 0.001,
    0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
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
    /// `allowed`, `denied`, `patched`, or `bad_request` / `too_large` / `timeout` (the body did
    /// not arrive within `--body-read-timeout-ms`: 408) for HTTP errors.
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

/// `syncguard_connection_errors_total` labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConnectionErrorLabels {
    /// `handshake_timeout` (no TLS handshake within `--header-read-timeout-ms`), `handshake`
    /// (a failed handshake) or `accept` (the listener could not accept, e.g. out of file
    /// descriptors).
    pub reason: &'static str,
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
    /// Time spent evaluating one review on a worker (decode and the wait for a worker
    /// excluded, so this is the per-review cost even when the server is saturated).
    pub evaluation_seconds: Family<EndpointLabels, Histogram>,
    /// Time a review waited for a free worker slot (the queue when the server is saturated).
    pub worker_wait_seconds: Family<EndpointLabels, Histogram>,
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
    /// Reviews admitted without evaluation because their object was over `--max-object-bytes`.
    pub oversized_reviews: Family<EndpointLabels, Counter>,
    /// Bytes of review bodies holding a share of the `--max-inflight-bytes` budget.
    pub inflight_review_bytes: Gauge,
    /// Times a review waited for the `--max-inflight-bytes` budget.
    pub inflight_bytes_waits: Counter,
    /// 1 when `/readyz` answers 200.
    pub ready: Gauge,
    /// HTTPS connections open, each holding one of `--max-connections` slots.
    pub https_connections: Gauge,
    /// Times a new HTTPS connection had to wait because `--max-connections` were open.
    pub connection_limit_waits: Counter,
    /// HTTPS connections closed before their first request, by reason.
    pub connection_errors: Family<ConnectionErrorLabels, Counter>,
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
            "Time to evaluate one admission review on a worker (queueing excluded)",
            evaluation_seconds.clone(),
        );
        let worker_wait_seconds = Family::<EndpointLabels, Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        registry.register(
            "worker_wait_seconds",
            "Time an admission review waited for a free evaluation worker",
            worker_wait_seconds.clone(),
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
        let oversized_reviews = Family::<EndpointLabels, Counter>::default();
        registry.register(
            "oversized_reviews",
            "Reviews admitted without evaluation, with a warning, because the object is over --max-object-bytes",
            oversized_reviews.clone(),
        );
        let inflight_review_bytes = Gauge::default();
        registry.register(
            "inflight_review_bytes",
            "Bytes of admission review bodies being read, decoded or evaluated (at most --max-inflight-bytes)",
            inflight_review_bytes.clone(),
        );
        let inflight_bytes_waits = Counter::default();
        registry.register(
            "inflight_bytes_waits",
            "Times an admission review waited because --max-inflight-bytes of reviews were in flight",
            inflight_bytes_waits.clone(),
        );
        let ready = Gauge::default();
        registry.register(
            "ready",
            "1 when policies are loaded, a certificate is present and the server is not shutting down",
            ready.clone(),
        );
        let https_connections = Gauge::default();
        registry.register(
            "https_connections",
            "HTTPS connections open (at most --max-connections)",
            https_connections.clone(),
        );
        let connection_limit_waits = Counter::default();
        registry.register(
            "connection_limit_waits",
            "Times a new HTTPS connection waited because --max-connections were open",
            connection_limit_waits.clone(),
        );
        let connection_errors = Family::<ConnectionErrorLabels, Counter>::default();
        registry.register(
            "connection_errors",
            "HTTPS connections dropped before a request: TLS handshake timeouts and failures, accept errors",
            connection_errors.clone(),
        );
        Self {
            registry,
            requests,
            evaluation_seconds,
            worker_wait_seconds,
            findings,
            evaluation_errors,
            reloads,
            reload_failures,
            certificate_expiry,
            inflight,
            oversized_reviews,
            inflight_review_bytes,
            inflight_bytes_waits,
            ready,
            https_connections,
            connection_limit_waits,
            connection_errors,
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

/// Labels of reconciler metrics split by rule.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RuleLabels {
    /// The rule id, e.g. `SG501`.
    pub rule: String,
}

/// Labels of the sync status changes: the status an Application turned to.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    /// `Synced`, `OutOfSync` or `Unknown` (any other status Argo CD reports).
    pub to: &'static str,
}

/// Labels of reconciler metrics split by outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// A fixed vocabulary per metric (documented on the metric).
    pub outcome: &'static str,
}

/// Labels of `syncguard_stuck_operations_terminated_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TerminationLabels {
    /// `terminated`, `dry_run` (would have), `skipped` (the operation changed or ended before
    /// the write), `failed`.
    pub outcome: &'static str,
    /// The proven cause: `image_pull`, `crash_loop`, `unschedulable`, `missing_ref`,
    /// `ordering_deadlock`.
    pub cause: &'static str,
}

/// Reconciler durations, in seconds: from a millisecond (one small Application) to minutes (a
/// full audit of a large cluster).
pub const RECONCILE_BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0, 120.0,
];

/// The reconciler's metrics (`syncguard reconcile`), in their own registry.
pub struct ReconcilerMetrics {
    registry: Registry,
    /// Live findings (SG501–SG503 and audit) by rule, counted once per new finding (repeats of
    /// an already reported finding are not counted).
    pub findings: Family<RuleLabels, Counter>,
    /// Findings open right now, by rule (set after every reconcile / audit). The live diagnosis
    /// sets SG501–SG503 itself; the audit's rules go through [`Self::set_audit_open`].
    pub open_findings: Family<RuleLabels, Gauge>,
    /// The rules the last audit published in `open_findings`.
    audit_open_rules: Mutex<BTreeSet<String>>,
    /// Identities of the open findings of the last audit pass (see [`Self::count_new_audit`]).
    audit_open_keys: Mutex<HashSet<u64>>,
    /// Events: `emitted`, `deduplicated` (suppressed repeat), `failed`.
    pub events: Family<OutcomeLabels, Counter>,
    /// Application reconciles: `ok`, `error`.
    pub reconciles: Family<OutcomeLabels, Counter>,
    /// Time to reconcile one Application.
    pub reconcile_seconds: Histogram,
    /// Background audit runs: `ok`, `error`, `skipped` (not leader).
    pub audits: Family<OutcomeLabels, Counter>,
    /// Time for one full audit pass.
    pub audit_seconds: Histogram,
    /// PolicyReport writes: `applied`, `unchanged`, `deleted`, `failed`.
    pub report_writes: Family<OutcomeLabels, Counter>,
    /// Results left out of PolicyReports because of the per-report cap (last audit).
    pub report_results_dropped: Gauge,
    /// Writes of the loop state ConfigMap: `applied`, `failed`.
    pub state_writes: Family<OutcomeLabels, Counter>,
    /// Sync status changes the reconciler saw, by the status turned to (a loop is a stream
    /// of `OutOfSync` after `Synced`; see [`crate::reconciler::sync_loop`]).
    pub status_changes: Family<StatusLabels, Counter>,
    /// Stuck operations ended (or, in a dry run, that would have been) for a proven cause.
    pub terminations: Family<TerminationLabels, Counter>,
    /// 1 while this replica holds the leader Lease.
    pub leader: Gauge,
    /// 1 when the Application watch has synced and the policies are loaded.
    pub ready: Gauge,
}

impl std::fmt::Debug for ReconcilerMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReconcilerMetrics").finish_non_exhaustive()
    }
}

impl Default for ReconcilerMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ReconcilerMetrics {
    /// Creates and registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("syncguard");
        let findings = Family::<RuleLabels, Counter>::default();
        registry.register(
            "live_findings",
            "New live findings (stuck syncs, sync loops, leftover hooks, audit) by rule",
            findings.clone(),
        );
        let open_findings = Family::<RuleLabels, Gauge>::default();
        registry.register(
            "open_live_findings",
            "Live findings open right now, by rule",
            open_findings.clone(),
        );
        let events = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "events",
            "Kubernetes Events: emitted, deduplicated (suppressed repeats) or failed",
            events.clone(),
        );
        let reconciles = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "application_reconciles",
            "Application reconciles by outcome",
            reconciles.clone(),
        );
        let reconcile_seconds = Histogram::new(RECONCILE_BUCKETS);
        registry.register(
            "application_reconcile_duration_seconds",
            "Time to reconcile one Application",
            reconcile_seconds.clone(),
        );
        let audits = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "audits",
            "Background audit passes by outcome",
            audits.clone(),
        );
        let audit_seconds = Histogram::new(RECONCILE_BUCKETS);
        registry.register(
            "audit_duration_seconds",
            "Time for one background audit pass",
            audit_seconds.clone(),
        );
        let report_writes = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "policyreport_writes",
            "PolicyReport writes: applied, unchanged (skipped), deleted, failed",
            report_writes.clone(),
        );
        let report_results_dropped = Gauge::default();
        registry.register(
            "policyreport_results_dropped",
            "Results left out of PolicyReports by the per-report cap in the last audit",
            report_results_dropped.clone(),
        );
        let state_writes = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "state_writes",
            "Writes of the reconciler's loop state ConfigMap: applied or failed",
            state_writes.clone(),
        );
        let status_changes = Family::<StatusLabels, Counter>::default();
        registry.register(
            "sync_status_changes",
            "Changes of an Application's sync status seen between two reconciles, by the status turned to",
            status_changes.clone(),
        );
        let terminations = Family::<TerminationLabels, Counter>::default();
        registry.register(
            "stuck_operations_terminated",
            "Stuck sync operations ended for a proven cause: terminated, dry_run (would have), skipped (changed before the write), failed",
            terminations.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica holds the leader Lease",
            leader.clone(),
        );
        let ready = Gauge::default();
        registry.register(
            "reconciler_ready",
            "1 when the Application watch has synced and policies are loaded",
            ready.clone(),
        );
        Self {
            registry,
            findings,
            open_findings,
            audit_open_rules: Mutex::new(BTreeSet::new()),
            audit_open_keys: Mutex::new(HashSet::new()),
            events,
            reconciles,
            reconcile_seconds,
            audits,
            audit_seconds,
            report_writes,
            report_results_dropped,
            state_writes,
            status_changes,
            terminations,
            leader,
            ready,
        }
    }

    /// The OpenMetrics text exposition of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.push_str("# encoding error\n");
        }
        out
    }

    /// Publishes the audit's open findings by rule: each rule's count, and the rules the previous
    /// audit published that have none now are removed. The other series of the family — the
    /// live diagnosis' SG501–SG503, set after every Application reconcile — are left alone.
    pub fn set_audit_open(&self, by_rule: &BTreeMap<String, usize>) {
        let mut previous = match self.audit_open_rules.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        for rule in previous.iter().filter(|r| !by_rule.contains_key(*r)) {
            self.open_findings
                .remove(&RuleLabels { rule: rule.clone() });
        }
        for (rule, n) in by_rule {
            self.open_findings
                .get_or_create(&RuleLabels { rule: rule.clone() })
                .set(i64::try_from(*n).unwrap_or(i64::MAX));
        }
        *previous = by_rule.keys().cloned().collect();
    }

    /// Counts in `findings` the open findings of an audit pass that the previous pass did not
    /// have (`open`: each finding's identity and rule), and remembers this pass's. The memory is
    /// this process's: after a restart or a leader change, the first pass counts everything.
    pub fn count_new_audit(&self, open: &[(u64, String)]) {
        let mut previous = match self.audit_open_keys.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        for (key, rule) in open {
            if !previous.contains(key) {
                self.findings
                    .get_or_create(&RuleLabels { rule: rule.clone() })
                    .inc();
            }
        }
        *previous = open.iter().map(|(key, _)| *key).collect();
    }

    /// Counts one outcome of a labelled counter family.
    pub fn count(family: &Family<OutcomeLabels, Counter>, outcome: &'static str) {
        family.get_or_create(&OutcomeLabels { outcome }).inc();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_audit_pass_replaces_its_own_open_findings_and_keeps_the_live_diagnosis_ones() {
        let m = ReconcilerMetrics::new();
        let live = RuleLabels {
            rule: "SG501".into(),
        };
        m.open_findings.get_or_create(&live).set(1);
        m.set_audit_open(&BTreeMap::from([("SG201".into(), 2), ("SG103".into(), 1)]));
        let text = m.encode();
        assert!(
            text.contains("syncguard_open_live_findings{rule=\"SG501\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("syncguard_open_live_findings{rule=\"SG201\"} 2"),
            "{text}"
        );
        m.set_audit_open(&BTreeMap::from([("SG103".into(), 3)]));
        let text = m.encode();
        assert!(
            text.contains("syncguard_open_live_findings{rule=\"SG501\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("syncguard_open_live_findings{rule=\"SG103\"} 3"),
            "{text}"
        );
        assert!(!text.contains("rule=\"SG201\""), "{text}");
    }

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
