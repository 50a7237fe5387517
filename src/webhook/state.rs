//! The state every request handler shares: the live policy set, the app context, the worker
//! semaphore, the metrics, and the readiness flags.
//!
//! Everything a review reads is immutable and reached through an `Arc`: a request takes a
//! [`Snapshot`] (two reference-count increments) and evaluates without holding any lock, while a
//! reload swaps the policy set atomically ([`ArcSwap`]). A request that started before a swap
//! finishes with the set it started with; no request ever sees a half-loaded set.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::Semaphore;

use super::context::AppContext;
use super::response::FailureMode;
use crate::metrics::Metrics;
use crate::policy::PolicySet;

/// Request-handling settings (validated once, from `syncguard serve` flags).
#[derive(Debug, Clone)]
pub struct ReviewOptions {
    /// What to answer when a review cannot be finished.
    pub on_error: FailureMode,
    /// Budget for one review from the moment its request arrives (its headers are read):
    /// reading and decoding the body and the wait for a worker count. Below the webhook's
    /// `timeoutSeconds` so the API server gets *our* answer, not its own timeout.
    pub eval_timeout: Duration,
    /// Largest accepted request body.
    pub body_limit: usize,
    /// Time allowed for the whole request body to arrive, from the moment its headers were read;
    /// a client still sending after that gets 408 and its connection is closed.
    pub body_read_timeout: Duration,
    /// Largest `object` (or `oldObject`), in bytes of its JSON in the review, that is evaluated;
    /// a larger one is not parsed, and the review is admitted with a warning.
    pub max_object_bytes: usize,
    /// Most bytes of review bodies being read, decoded or evaluated at once; a review waits
    /// (inside its deadline) until its body fits. Bounds the memory of concurrent large
    /// reviews: each costs a multiple of its body (see [`super::INFLIGHT_BYTES`]).
    pub max_inflight_bytes: usize,
}

impl Default for ReviewOptions {
    fn default() -> Self {
        Self {
            on_error: FailureMode::Allow,
            eval_timeout: Duration::from_secs(2),
            body_limit: super::BODY_LIMIT,
            body_read_timeout: Duration::from_secs(5),
            max_object_bytes: super::MAX_OBJECT_BYTES,
            max_inflight_bytes: super::INFLIGHT_BYTES,
        }
    }
}

/// What one review needs, taken once at its start.
#[derive(Clone)]
pub struct Snapshot {
    /// The policy set live when the review started.
    pub policies: Arc<PolicySet>,
    /// Where Application context comes from.
    pub context: Arc<dyn AppContext>,
    /// What to answer on internal errors.
    pub on_error: FailureMode,
    /// Largest object evaluated (`--max-object-bytes`), for the warning of an oversized review.
    pub max_object_bytes: usize,
}

/// Shared state of one webhook server.
pub struct State {
    policies: ArcSwap<PolicySet>,
    context: Arc<dyn AppContext>,
    workers: Arc<Semaphore>,
    inflight_bytes: Arc<Semaphore>,
    options: ReviewOptions,
    metrics: Arc<Metrics>,
    certificate: AtomicBool,
    shutting_down: AtomicBool,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("policies", &self.policies.load().dir())
            .field("context", &self.context.describe())
            .field("options", &self.options)
            .field("ready", &self.is_ready())
            .finish_non_exhaustive()
    }
}

/// The budget as semaphore permits, one per byte: at least one, at most what one acquire can
/// ask for (`u32`, 4 GiB).
fn budget_permits(bytes: usize) -> usize {
    bytes.clamp(1, u32::MAX as usize)
}

impl State {
    /// State with `workers` evaluation slots (0: one per CPU). The certificate flag starts
    /// unset: a server sets it once TLS is configured; an in-process router (tests, benchmarks)
    /// that wants `/readyz` to say 200 calls [`State::set_certificate_present`].
    pub fn new(
        policies: PolicySet,
        context: Arc<dyn AppContext>,
        options: ReviewOptions,
        workers: usize,
        metrics: Arc<Metrics>,
    ) -> Arc<Self> {
        let workers = if workers == 0 {
            std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
        } else {
            workers
        };
        let state = Arc::new(Self {
            policies: ArcSwap::from_pointee(policies),
            context,
            workers: Arc::new(Semaphore::new(workers)),
            inflight_bytes: Arc::new(Semaphore::new(budget_permits(options.max_inflight_bytes))),
            options,
            metrics,
            certificate: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
        });
        state.update_ready_metric();
        state
    }

    /// The live policy set and context, for one review.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            policies: self.policies.load_full(),
            context: self.context.clone(),
            on_error: self.options.on_error,
            max_object_bytes: self.options.max_object_bytes,
        }
    }

    /// The live policy set.
    pub fn policies(&self) -> Arc<PolicySet> {
        self.policies.load_full()
    }

    /// Replaces the live policy set (already validated and tested by the caller).
    pub fn replace_policies(&self, set: PolicySet) {
        self.policies.store(Arc::new(set));
    }

    /// The app context.
    pub fn context(&self) -> &Arc<dyn AppContext> {
        &self.context
    }

    /// Request-handling settings.
    pub fn options(&self) -> &ReviewOptions {
        &self.options
    }

    /// The metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The evaluation slots: a review holds one permit while it runs on a blocking thread, so
    /// at most this many evaluations compete for the CPUs and the rest queue (inside their
    /// deadline).
    pub fn workers(&self) -> &Arc<Semaphore> {
        &self.workers
    }

    /// The memory budget of reviews in flight, in bytes of their bodies
    /// ([`ReviewOptions::max_inflight_bytes`]): a review holds [`State::budget_share`] permits
    /// from before its body is read until its answer is built.
    pub fn inflight_bytes(&self) -> &Arc<Semaphore> {
        &self.inflight_bytes
    }

    /// The permits a body of `bytes` takes from [`State::inflight_bytes`]: its size, at least
    /// one, and at most the whole budget (a body larger than the budget runs alone).
    pub fn budget_share(&self, bytes: usize) -> u32 {
        let whole = budget_permits(self.options.max_inflight_bytes);
        u32::try_from(bytes.clamp(1, whole)).unwrap_or(u32::MAX)
    }

    /// Records whether a serving certificate is loaded.
    pub fn set_certificate_present(&self, present: bool) {
        self.certificate.store(present, Ordering::SeqCst);
        self.update_ready_metric();
    }

    /// Flips readiness to 503 for good: the first step of a graceful shutdown, so load balancers
    /// stop sending new reviews while in-flight ones finish.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        self.update_ready_metric();
    }

    /// True once shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// Why the server is not ready, or `None` when it is. Policies are always loaded (a state
    /// cannot exist without a policy set), so readiness means: certificate present and not
    /// shutting down.
    pub fn not_ready_reason(&self) -> Option<&'static str> {
        if self.is_shutting_down() {
            Some("shutting down")
        } else if !self.certificate.load(Ordering::SeqCst) {
            Some("no serving certificate loaded")
        } else {
            None
        }
    }

    /// True when `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.not_ready_reason().is_none()
    }

    fn update_ready_metric(&self) {
        self.metrics.ready.set(i64::from(self.is_ready()));
    }
}
