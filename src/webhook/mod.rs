//! The admission webhook (`syncguard serve`): validating and mutating endpoints that run the
//! same policy pipeline as `syncguard check` on every object the API server admits.
//!
//! # Layout
//!
//! - [`review`]: the `admission.k8s.io/v1` wire types (ours, not kube-rs's: the patch must be
//!   base64).
//! - [`service`]: decode → evaluate → answer, synchronous and pure; [`handle_review`] is the
//!   entry point for fuzzers and in-process benchmarks.
//! - [`response`]: findings → deny message, warnings, audit annotations, base64 JSON patch, within
//!   the API server's limits; the failure mode (`--on-error`).
//! - [`context`]: [`AppContext`] — the owning Application's other objects, so cross-resource rules
//!   (SG2xx) can judge an admitted object.
//! - [`cluster`]: [`ClusterContext`], that context from a read-only cache of live Argo CD
//!   Applications (`serve --cluster`); in-memory lookups only, silent until synced.
//! - [`state`]: what handlers share (live policy set behind an `ArcSwap`, worker semaphore,
//!   metrics, readiness).
//! - [`router`] / `handler`: axum routes, the 7 MiB body limit with a clear 413, the memory
//!   budget of reviews in flight, worker slots and the deadline.
//! - `tls`, `watch`, `policies`: certificate loading, directory watching, tested policy loads.
//! - [`start`] / [`serve`] / [`Server`]: binding, hot reload, graceful shutdown.
//!
//! # Request handling in one paragraph
//!
//! A body over [`BODY_LIMIT`] gets 413; malformed JSON or another AdmissionReview version gets
//! 400 with the reason; both are counted and the server carries on. Before its body is read a
//! review takes its size from the `--max-inflight-bytes` budget (waiting inside its deadline),
//! so concurrent large reviews cannot together take more memory than the budget allows. An
//! `object` or `oldObject` over `--max-object-bytes` ([`MAX_OBJECT_BYTES`]) is not parsed: the
//! review is admitted with a warning and counted in `syncguard_oversized_reviews_total`. CONNECT and subresource
//! requests are admitted without evaluation, and so is DELETE unless a rule opted in with
//! `"operations": [..., "DELETE"]` in its `meta`. Everything else is evaluated on a
//! blocking thread, holding one of N worker permits, within `--eval-timeout-ms` counted from the
//! request's arrival (body read and the wait for a permit included); a deadline
//! overrun, a panic, a failing deny rule or a patch that does not apply is answered by
//! `--on-error` (allow with a warning by default, or deny) and counted in
//! `syncguard_evaluation_errors_total`. `dryRun` requests are evaluated identically: syncguard
//! has no side effects (`sideEffects: None`). Connections: the TLS handshake and each request's
//! headers within `--header-read-timeout-ms`, the body within `--body-read-timeout-ms` (else
//! 408), at most `--max-connections` open (`connections`: further ones wait to be accepted).

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod cluster;
mod connections;
pub mod context;
mod handler;
pub mod response;
pub mod review;
mod server;
pub mod service;
pub mod state;
mod tls;

pub use crate::policy::reload::LoadError;
pub use cluster::ClusterContext;
pub use context::{AppContext, AppObjects, ManifestContext, NoContext};
pub use handler::{probe_router, router};
pub use response::{Decision, FailureMode};
pub use server::{Config, ServeError, Server, serve, start};
pub use service::{Endpoint, handle_review};
pub use state::{ReviewOptions, State};
pub use tls::{CertInfo, TlsError};

/// Largest AdmissionReview body accepted: 7 MiB. The API server accepts request bodies up to
/// 3 MiB and an UPDATE review carries the object twice (`object` and `oldObject`), plus
/// envelope; 7 MiB is what controller-runtime settled on (axum's default of 2 MiB would reject
/// legitimate large updates).
pub const BODY_LIMIT: usize = 7 * 1024 * 1024;

/// Default `--max-object-bytes`: 3 MiB, the API server's own limit on a write request's body
/// (`MaxRequestBodyBytes` of k8s.io/apiserver; etcd's default `--max-request-bytes` keeps
/// stored objects under 1.5 MiB). A larger `object` or `oldObject` (its JSON in the review) is
/// admitted with a warning, unparsed and unevaluated. BENCHMARKS.md ("Memory per review")
/// measures what an evaluated review of this size costs.
pub const MAX_OBJECT_BYTES: usize = 3 * 1024 * 1024;

/// Default `--max-inflight-bytes`: 8 MiB of review bodies read, decoded or evaluated at once —
/// two of the largest CREATE reviews, or one UPDATE carrying two such objects. A review's peak
/// memory is a multiple of its body (about 15× for a CRD, BENCHMARKS.md), so this bounds what
/// concurrent large reviews take together; small reviews (a few KiB) never wait for it.
pub const INFLIGHT_BYTES: usize = 8 * 1024 * 1024;

/// Loads the policy source the way `serve` does (built-in set with the given per-rule deadline,
/// or a directory that must pass its own tests) — for building a [`State`] in-process.
pub fn load_policies(
    source: &crate::policy::builtin::PolicySource,
    rule_deadline: std::time::Duration,
) -> Result<crate::policy::PolicySet, LoadError> {
    crate::policy::reload::load(source, rule_deadline).map(|(set, _)| set)
}
