//! HTTP: routes, the body limit and read timeout, the memory budget of reviews in flight,
//! worker slots and the deadline around [`super::service`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State as Extract;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::BodyExt as _;
use tokio::sync::OwnedSemaphorePermit;

use super::response::{Failure, Reviewed};
use super::review::AdmissionRequest;
use super::service::{
    Endpoint, decode_with_limit, encode, error_body, needs_evaluation, record, record_bad_request,
    review_owned,
};
use super::state::State;
use crate::metrics::EndpointLabels;

/// Bodies up to this many times the limit are read and discarded before the 413 is sent, so the
/// client (which is still sending) reliably receives the answer instead of a connection reset.
/// Larger ones are refused without reading and the connection is closed.
const DRAIN_FACTOR: usize = 4;

/// The webhook router: `POST /validate`, `POST /mutate`, and the probes and metrics. Usable
/// in-process (tests, benchmarks) without TLS: `router(state).oneshot(request)`.
pub fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/validate", post(validate))
        .route("/mutate", post(mutate))
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state)
}

/// Only `GET /livez`, `GET /readyz` and `GET /metrics`, for the optional plain-HTTP probe port
/// (kubelet probes and Prometheus scrapes then need no TLS configuration).
pub fn probe_router(state: Arc<State>) -> Router {
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state)
}

async fn validate(Extract(state): Extract<Arc<State>>, headers: HeaderMap, body: Body) -> Response {
    admission(state, Endpoint::Validate, &headers, body).await
}

async fn mutate(Extract(state): Extract<Arc<State>>, headers: HeaderMap, body: Body) -> Response {
    admission(state, Endpoint::Mutate, &headers, body).await
}

async fn admission(
    state: Arc<State>,
    endpoint: Endpoint,
    headers: &HeaderMap,
    body: Body,
) -> Response {
    // The review's deadline runs from the request's arrival: reading and decoding the body and
    // the wait for a worker all count, so the answer goes out within `eval_timeout` of it.
    let deadline = tokio::time::Instant::now() + state.options().eval_timeout;
    let limit = state.options().body_limit;
    let read_timeout = state.options().body_read_timeout;
    // The review's share of the memory budget, taken before its body is read when its size is
    // declared (the API server always declares it), else as soon as the body is in.
    let declared = content_length(headers).map(|n| n.min(limit));
    let mut budget = match declared {
        Some(n) => Budget::acquire(&state, n, deadline).await,
        None => None,
    };
    let read = tokio::time::timeout(read_timeout, read_body(body, headers, limit)).await;
    let bytes = match read.unwrap_or(Err(BodyError::TimedOut)) {
        Ok(b) => b,
        Err(BodyError::TimedOut) => {
            let message = format!(
                "the request body did not arrive within syncguard's body read timeout of {} ms",
                read_timeout.as_millis()
            );
            record_bad_request(&state, endpoint, "timeout", &message);
            let mut response = text(StatusCode::REQUEST_TIMEOUT, &message);
            // The rest of the body may never come: do not wait for it on this connection.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
        Err(BodyError::TooLarge { drained }) => {
            let message = format!(
                "the AdmissionReview exceeds syncguard's body limit of {limit} bytes ({} MiB); \
                 the API server sends at most ~3 MiB objects, twice on UPDATE",
                limit / (1024 * 1024)
            );
            record_bad_request(&state, endpoint, "too_large", &message);
            let mut response = text(StatusCode::PAYLOAD_TOO_LARGE, &message);
            if !drained {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            return response;
        }
        Err(BodyError::Read(e)) => {
            let message = format!("cannot read the body: {e}");
            record_bad_request(&state, endpoint, "bad_request", &message);
            return text(StatusCode::BAD_REQUEST, &message);
        }
    };
    if declared.is_none() {
        budget = Budget::acquire(&state, bytes.len(), deadline).await;
    }
    let within_budget = budget.is_some();
    // Without a share of the budget by the deadline, only the envelope is read (no object is
    // parsed: limit 0), for the uid the failure-mode answer needs.
    let max_object_bytes = if within_budget {
        state.options().max_object_bytes
    } else {
        0
    };
    let request = match decode_with_limit(&bytes, max_object_bytes) {
        Ok(r) => r,
        Err(bad) => {
            record_bad_request(&state, endpoint, "bad_request", &bad.message);
            return text(StatusCode::BAD_REQUEST, &bad.message);
        }
    };
    // The objects are parsed: the body is not needed any more.
    drop(bytes);
    let header = request.without_objects();
    let (reviewed, elapsed) = if within_budget {
        evaluate(&state, endpoint, request, budget, deadline).await
    } else {
        let mode = state.options().on_error;
        (
            Reviewed::failed(&header.uid, mode, overrun(state.options().eval_timeout)),
            Duration::ZERO,
        )
    };
    record(&state, endpoint, &header, &reviewed, elapsed);
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        encode(&reviewed),
    )
        .into_response()
}

/// Runs [`review`] on a blocking thread, holding a worker slot, before `deadline` (set when the
/// request arrived, so the wait for a slot counts). A deadline overrun — while waiting for a
/// slot or while evaluating — or a panic is answered by the failure mode at once; the evaluation
/// itself cannot be cancelled, but it keeps its slot until it finishes (and regorus's own
/// deadline stops a runaway rule), so overruns cannot pile up unbounded work. A request whose
/// deadline has passed before it is evaluated (a slow body) is answered without evaluation.
///
/// Returns the answer and the time spent evaluating on the worker (the wait for a slot is
/// observed separately in `syncguard_worker_wait_seconds`; on a deadline overrun, the time until
/// the overrun).
async fn evaluate(
    state: &Arc<State>,
    endpoint: Endpoint,
    request: AdmissionRequest,
    budget: Option<Budget>,
    deadline: tokio::time::Instant,
) -> (Reviewed, Duration) {
    let snapshot = state.snapshot();
    let mode = snapshot.on_error;
    if !needs_evaluation(&request, snapshot.policies.judges_deletes())
        || request.oversized.is_some()
    {
        let started = Instant::now();
        let reviewed = review_owned(&snapshot, endpoint, request);
        return (reviewed, started.elapsed());
    }
    let _inflight = Inflight::new(state);
    let timeout = state.options().eval_timeout;
    let workers = state.workers().clone();
    let uid = request.uid.clone();
    let metrics = state.metrics().clone();
    let queued = Instant::now();
    if tokio::time::Instant::now() >= deadline {
        return (
            Reviewed::failed(&uid, mode, overrun(timeout)),
            Duration::ZERO,
        );
    }
    let work = async move {
        let permit = workers.acquire_owned().await.map_err(|_| Failure {
            reason: "internal",
            message: "the worker pool is closed".into(),
        })?;
        metrics
            .worker_wait_seconds
            .get_or_create(&EndpointLabels {
                endpoint: endpoint.as_str(),
            })
            .observe(queued.elapsed().as_secs_f64());
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || {
            // Both held until the evaluation is over, also when the deadline answered first:
            // the work (and its memory) is still there until then.
            let _permit = permit;
            let large = budget
                .as_ref()
                .is_some_and(|b| b.bytes >= LARGE_REVIEW_BYTES);
            let _budget = budget;
            let _entered = span.enter();
            let started = Instant::now();
            let reviewed = review_owned(&snapshot, endpoint, request);
            let elapsed = started.elapsed();
            if large {
                // Everything the review built is freed by now, but into this thread's arena,
                // where the next large review (likely on another thread) cannot reuse it.
                release_free_memory();
            }
            (reviewed, elapsed)
        })
        .await
        .map_err(|e| Failure {
            reason: "internal",
            message: format!("the evaluation failed: {e}"),
        })
    };
    match tokio::time::timeout_at(deadline, work).await {
        Ok(Ok(done)) => done,
        Ok(Err(failure)) => (Reviewed::failed(&uid, mode, failure), queued.elapsed()),
        Err(_) => (
            Reviewed::failed(&uid, mode, overrun(timeout)),
            queued.elapsed(),
        ),
    }
}

/// The failure of a review that missed its deadline (`timeout`: `--eval-timeout-ms`).
fn overrun(timeout: Duration) -> Failure {
    Failure {
        reason: "timeout",
        message: format!(
            "the review did not finish within its {} ms deadline (counted from the request's \
             arrival, including the wait for a free worker and for --max-inflight-bytes)",
            timeout.as_millis()
        ),
    }
}

/// A review's share of the `--max-inflight-bytes` budget ([`State::inflight_bytes`]), counted
/// in `syncguard_inflight_review_bytes` while held.
struct Budget {
    _permit: OwnedSemaphorePermit,
    bytes: i64,
    state: Arc<State>,
}

impl Budget {
    /// Waits for `bytes` of the budget until `deadline`; `None` when the deadline passed first.
    async fn acquire(
        state: &Arc<State>,
        bytes: usize,
        deadline: tokio::time::Instant,
    ) -> Option<Self> {
        let share = state.budget_share(bytes);
        let semaphore = state.inflight_bytes().clone();
        if semaphore.available_permits() < share as usize {
            state.metrics().inflight_bytes_waits.inc();
        }
        let permit = tokio::time::timeout_at(deadline, semaphore.acquire_many_owned(share))
            .await
            .ok()?
            .ok()?;
        let bytes = i64::from(share);
        state.metrics().inflight_review_bytes.inc_by(bytes);
        Some(Self {
            _permit: permit,
            bytes,
            state: state.clone(),
        })
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        self.state
            .metrics()
            .inflight_review_bytes
            .dec_by(self.bytes);
    }
}

/// Reviews with a body at least this large hand the memory they freed back to the OS when they
/// finish ([`release_free_memory`]).
const LARGE_REVIEW_BYTES: i64 = 1024 * 1024;

/// Returns the free pages of every jemalloc arena to the OS (`arena.<all>.purge`). jemalloc
/// keeps freed pages per arena (one per thread group) for its decay time, 10 s: after a large
/// review its tree's pages would sit in the arena of the thread that evaluated it while the next
/// large review, on another blocking thread, takes new ones — so several large reviews in a
/// row reached the peak of all of them at once, not of the ones in flight. Purging costs a few
/// `madvise` calls, against milliseconds of evaluation for a review this size. A no-op when
/// jemalloc is not the global allocator (tests): nothing was allocated there.
fn release_free_memory() {
    #[cfg(not(target_env = "msvc"))]
    {
        // MALLCTL_ARENAS_ALL is 4096 in jemalloc 5.
        const PURGE_ALL: &[u8] = b"arena.4096.purge\0";
        // SAFETY: a NUL-terminated mallctl name that takes no argument and returns nothing
        // (null old/new pointers, zero length), as jemalloc(3) documents for `arena.<i>.purge`.
        let _ = unsafe {
            tikv_jemalloc_sys::mallctl(
                PURGE_ALL.as_ptr().cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            )
        };
    }
}

/// The declared `Content-Length`, if any.
fn content_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
}

/// Counts a review in `syncguard_inflight_reviews` for as long as it lives — also when the
/// client goes away and the handler future is dropped mid-review.
struct Inflight(Arc<State>);

impl Inflight {
    fn new(state: &Arc<State>) -> Self {
        state.metrics().inflight.inc();
        Self(state.clone())
    }
}

impl Drop for Inflight {
    fn drop(&mut self) {
        self.0.metrics().inflight.dec();
    }
}

enum BodyError {
    /// Over the limit; `drained` says whether the rest of the body was read (so the connection
    /// can stay open).
    TooLarge {
        drained: bool,
    },
    Read(String),
    /// Not all there within the body read timeout.
    TimedOut,
}

async fn read_body(body: Body, headers: &HeaderMap, limit: usize) -> Result<Bytes, BodyError> {
    let drain_limit = limit.saturating_mul(DRAIN_FACTOR);
    let declared = content_length(headers);
    if declared.is_some_and(|n| n > drain_limit) {
        return Err(BodyError::TooLarge { drained: false });
    }
    let mut body = body;
    let mut buffer: Vec<u8> = Vec::with_capacity(declared.unwrap_or(0).min(limit));
    let mut received = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Read(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        received = received.saturating_add(data.len());
        if received > drain_limit {
            return Err(BodyError::TooLarge { drained: false });
        }
        if received <= limit {
            buffer.extend_from_slice(&data);
        }
    }
    if received > limit {
        return Err(BodyError::TooLarge { drained: true });
    }
    Ok(Bytes::from(buffer))
}

fn text(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        error_body(message),
    )
        .into_response()
}

async fn livez() -> Response {
    text(StatusCode::OK, "ok")
}

async fn readyz(Extract(state): Extract<Arc<State>>) -> Response {
    match state.not_ready_reason() {
        None => text(StatusCode::OK, "ok"),
        Some(reason) => text(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("not ready: {reason}"),
        ),
    }
}

async fn metrics(Extract(state): Extract<Arc<State>>) -> Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        state.metrics().encode(),
    )
        .into_response()
}
