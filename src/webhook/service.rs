//! Reviewing one AdmissionReview: decode, evaluate with the same pipeline as `syncguard check`,
//! answer. Pure and synchronous — the HTTP layer ([`super::handler`]) adds the body limit, the
//! worker slots and the deadline around it — so benchmarks and fuzzers can call
//! [`handle_review`] directly with bytes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::context::AppObjects;
use super::response::{self, Decision, Failure, Reviewed};
use super::review::{API_VERSION, AdmissionRequest, KIND, Operation, ReviewIn, ReviewOut};
use super::state::{Snapshot, State};
use crate::evaluate::{AdmissionFacts, EvaluateOptions, Source, build_admission_input};
use crate::metrics::{EndpointLabels, ErrorLabels, FindingLabels, RequestLabels};
use crate::model::Resource;

/// The two admission endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `POST /validate`: deny, warnings, audit annotations.
    Validate,
    /// `POST /mutate`: a JSON patch for the mutating rules' fixes.
    Mutate,
}

impl Endpoint {
    /// `validate` or `mutate` (metric label, log field).
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Validate => "validate",
            Endpoint::Mutate => "mutate",
        }
    }
}

/// A request that is not an AdmissionReview syncguard can answer: HTTP 400 with `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadReview {
    /// What is wrong, for the caller.
    pub message: String,
}

/// Parses and checks an AdmissionReview body.
pub fn decode(body: &[u8]) -> Result<AdmissionRequest, BadReview> {
    let review: ReviewIn = serde_json::from_slice(body).map_err(|e| BadReview {
        message: format!("the body is not an admission.k8s.io/v1 AdmissionReview: {e}"),
    })?;
    if review.api_version != API_VERSION {
        return Err(BadReview {
            message: format!(
                "unsupported apiVersion `{}`: syncguard answers only {API_VERSION} (set \
                 admissionReviewVersions: [\"v1\"] in the webhook configuration)",
                review.api_version
            ),
        });
    }
    if review.kind != KIND {
        return Err(BadReview {
            message: format!("unsupported kind `{}`: expected {KIND}", review.kind),
        });
    }
    review.request.ok_or_else(|| BadReview {
        message: "the AdmissionReview has no `request`".to_string(),
    })
}

/// Evaluates one request and builds the answer. CPU-bound: the server runs it on a blocking
/// thread.
///
/// - CONNECT is admitted without evaluation, and so is DELETE unless a rule declared
///   `"operations": [..., "DELETE"]` in its `meta`: then /validate judges the object being
///   deleted (`oldObject`) with `input.operation == "DELETE"`, and only such rules report.
///   /mutate never patches a deletion.
/// - Subresources (`status`, `scale`, …) are admitted without evaluation: they are written by
///   controllers, and judging the whole object again on every status update would let a policy
///   change block controllers from recording progress of objects admitted earlier.
/// - An `object` that is not a Kubernetes object (no kind or name) is admitted: there is nothing
///   the rules could say. Kinds the rules do not know pass because no rule reports them.
/// - `dryRun` requests are evaluated exactly the same way; syncguard has no side effects to skip.
pub fn review(snapshot: &Snapshot, endpoint: Endpoint, request: &AdmissionRequest) -> Reviewed {
    let judges_deletes = snapshot.policies.judges_deletes();
    if !needs_evaluation(request, judges_deletes)
        || (is_delete(request) && endpoint == Endpoint::Mutate)
    {
        return Reviewed::skipped(&request.uid);
    }
    // A deletion is judged on the object being deleted.
    let object = if is_delete(request) {
        &request.old_object
    } else {
        &request.object
    };
    let Some(object) = object else {
        return Reviewed::skipped(&request.uid);
    };
    let Ok(mut resource) = Resource::from_value(object.clone(), None) else {
        return Reviewed::skipped(&request.uid);
    };
    let namespace = request.namespace.clone().filter(|n| !n.is_empty());
    if resource.namespace.is_none() {
        // The API server fills metadata.namespace in from the URL, but not always before
        // admission; the request says where the object goes.
        resource.namespace.clone_from(&namespace);
    }
    let context: Option<AppObjects> = snapshot.context.objects_for(&resource);
    let facts = AdmissionFacts {
        operation: request.operation.as_str().to_string(),
        old: request.old_object.clone().filter(|v| !v.is_null()),
        dry_run: request.dry_run.unwrap_or(false),
        user: request.user_info.clone(),
    };
    // config.yaml pins the release when it names one; else the cluster's controller says.
    let installation = snapshot.context.installation();
    let options = EvaluateOptions {
        source: Source::Admission,
        destination_namespace: namespace,
        require_crds: false,
        argocd: snapshot
            .policies
            .config()
            .argocd_version
            .or(installation.as_ref().and_then(|i| i.version))
            .unwrap_or_default(),
        argocd_config: installation
            .map(|i| Arc::new(i.config.clone()))
            .unwrap_or_default(),
        ..EvaluateOptions::default()
    };
    let input = match &context {
        Some(c) => c.set.admission_input(&resource, &facts, &options),
        None => build_admission_input(&resource, &[], &facts, &options),
    };
    let mut findings = snapshot.policies.findings_for(&resource, &input);
    let application = context.as_ref().and_then(|c| c.app.clone());
    for f in &mut findings {
        f.application.clone_from(&application);
    }
    match endpoint {
        Endpoint::Validate => {
            let mut notes = Vec::new();
            if context.is_none() && needs_context(&input) {
                notes.push(format!(
                    "syncguard: no Application context for {}/{}; ordering rules (SG2xx) not \
                     evaluated",
                    resource.kind,
                    resource.display_name()
                ));
            }
            response::validate(&request.uid, &findings, notes, snapshot.on_error)
        }
        Endpoint::Mutate => response::mutate(&request.uid, object, &findings, snapshot.on_error),
    }
}

/// False for requests admitted without evaluation (see [`review`]): CONNECT, subresources,
/// requests without an object, and DELETE unless a rule of the set judges deletions
/// (`judges_deletes`, from `meta.operations`) and the request carries the deleted object.
pub fn needs_evaluation(request: &AdmissionRequest, judges_deletes: bool) -> bool {
    let subresource = request
        .sub_resource
        .as_deref()
        .is_some_and(|s| !s.is_empty());
    let present = |o: &Option<Value>| o.as_ref().is_some_and(|o| !o.is_null());
    let evaluated = match request.operation {
        Operation::Create | Operation::Update => present(&request.object),
        Operation::Delete => judges_deletes && present(&request.old_object),
        Operation::Connect => false,
    };
    evaluated && !subresource
}

fn is_delete(request: &AdmissionRequest) -> bool {
    request.operation == Operation::Delete
}

/// A hook that references other objects is exactly what the ordering rules judge; without
/// context they are silent, and the user should know that rather than read silence as safety.
/// Other objects get no such note (it would be noise on every Deployment).
fn needs_context(input: &Value) -> bool {
    let is_hook = input.pointer("/sync/is_hook") == Some(&Value::Bool(true));
    let unresolved = input
        .get("refs")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r.pointer("/target/resolution") == Some(&json!("unknown")))
        });
    is_hook && unresolved
}

/// Serializes a response review.
pub fn encode(reviewed: &Reviewed) -> Vec<u8> {
    // Serializing our own plain structs cannot fail; fall back to a minimal allowed answer.
    serde_json::to_vec(&ReviewOut::new(reviewed.response.clone())).unwrap_or_else(|_| {
        format!(
            "{{\"apiVersion\":\"{API_VERSION}\",\"kind\":\"{KIND}\",\"response\":{{\"uid\":{},\"allowed\":true}}}}",
            Value::from(reviewed.response.uid.clone())
        )
        .into_bytes()
    })
}

/// A plain-text error body for a 4xx answer.
pub fn error_body(message: &str) -> Vec<u8> {
    let mut body = message.as_bytes().to_vec();
    body.push(b'\n');
    body
}

/// The whole review of one body, synchronously: decode, evaluate, encode, count. The entry point
/// for fuzzing and in-process benchmarks; the HTTP server does the same steps with a deadline.
pub fn handle_review(state: &State, endpoint: Endpoint, body: &[u8]) -> (StatusCode, Vec<u8>) {
    let request = match decode(body) {
        Ok(r) => r,
        Err(bad) => {
            record_bad_request(state, endpoint, "bad_request", &bad.message);
            return (StatusCode::BAD_REQUEST, error_body(&bad.message));
        }
    };
    let started = Instant::now();
    let reviewed = review(&state.snapshot(), endpoint, &request);
    record(state, endpoint, &request, &reviewed, started.elapsed());
    (StatusCode::OK, encode(&reviewed))
}

/// Counts and logs an unreadable request (`decision`: `bad_request` or `too_large`).
pub fn record_bad_request(state: &State, endpoint: Endpoint, decision: &'static str, why: &str) {
    state
        .metrics()
        .requests
        .get_or_create(&RequestLabels {
            endpoint: endpoint.as_str(),
            operation: "",
            kind: String::new(),
            decision,
        })
        .inc();
    tracing::warn!(
        endpoint = endpoint.as_str(),
        decision,
        error = why,
        "rejected an unreadable review"
    );
}

/// Counts and logs one answered review.
pub fn record(
    state: &State,
    endpoint: Endpoint,
    request: &AdmissionRequest,
    reviewed: &Reviewed,
    elapsed: Duration,
) {
    let metrics = state.metrics();
    let ep = endpoint.as_str();
    if reviewed.evaluated {
        metrics
            .evaluation_seconds
            .get_or_create(&EndpointLabels { endpoint: ep })
            .observe(elapsed.as_secs_f64());
    }
    metrics
        .requests
        .get_or_create(&RequestLabels {
            endpoint: ep,
            operation: request.operation.as_str(),
            kind: request.kind.kind.clone(),
            decision: reviewed.decision.as_str(),
        })
        .inc();
    for (rule, action) in &reviewed.findings {
        metrics
            .findings
            .get_or_create(&FindingLabels {
                endpoint: ep,
                rule: rule.clone(),
                action: action.as_str(),
            })
            .inc();
    }
    let outcome = if reviewed.response.allowed {
        "allowed"
    } else {
        "denied"
    };
    for Failure { reason, message } in &reviewed.failures {
        metrics
            .evaluation_errors
            .get_or_create(&ErrorLabels {
                endpoint: ep,
                reason,
                outcome,
            })
            .inc();
        tracing::warn!(
            uid = %request.uid,
            endpoint = ep,
            reason,
            outcome,
            error = %message,
            "review could not be finished; answered by the failure mode"
        );
    }
    // Every decision that changes something is logged at info; plain allows at debug (thousands
    // per second in a busy cluster).
    let notable = reviewed.decision != Decision::Allowed || !reviewed.failures.is_empty();
    let rules: Vec<&str> = reviewed.findings.iter().map(|(r, _)| r.as_str()).collect();
    let rules = rules.join(",");
    macro_rules! review_event {
        ($level:ident) => {
            tracing::$level!(
                uid = %request.uid,
                endpoint = ep,
                operation = request.operation.as_str(),
                kind = %request.kind.kind,
                namespace = request.namespace.as_deref().unwrap_or(""),
                name = request.name.as_deref().unwrap_or(""),
                dry_run = request.dry_run.unwrap_or(false),
                decision = reviewed.decision.as_str(),
                rules = %rules,
                elapsed_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
                "admission review"
            )
        };
    }
    if notable {
        review_event!(info);
    } else {
        review_event!(debug);
    }
}
