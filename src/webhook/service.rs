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
use super::review::{API_VERSION, AdmissionRequest, KIND, Operation, ReviewOut, WireReview};
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

/// Parses and checks an AdmissionReview body (objects of any size).
pub fn decode(body: &[u8]) -> Result<AdmissionRequest, BadReview> {
    decode_with_limit(body, usize::MAX)
}

/// Parses and checks an AdmissionReview body; an `object` or `oldObject` larger than
/// `max_object_bytes` (its JSON, as sent) is not parsed at all: the request comes back with
/// [`AdmissionRequest::oversized`] set and no objects, and [`review`] admits it unevaluated with
/// a warning. Everything else is read once, straight from the body into the objects' trees.
pub fn decode_with_limit(
    body: &[u8],
    max_object_bytes: usize,
) -> Result<AdmissionRequest, BadReview> {
    let bad = |e: serde_json::Error| BadReview {
        message: format!("the body is not an admission.k8s.io/v1 AdmissionReview: {e}"),
    };
    let review: WireReview<'_> = serde_json::from_slice(body).map_err(bad)?;
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
    review
        .request
        .ok_or_else(|| BadReview {
            message: "the AdmissionReview has no `request`".to_string(),
        })?
        .parse(max_object_bytes)
        .map_err(bad)
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
/// - A request whose `object` or `oldObject` was over the object limit
///   ([`AdmissionRequest::oversized`], `--max-object-bytes`) is admitted without evaluation,
///   with a warning saying so.
///
/// Copies the request's objects; [`review_owned`] takes them instead.
pub fn review(snapshot: &Snapshot, endpoint: Endpoint, request: &AdmissionRequest) -> Reviewed {
    review_owned(snapshot, endpoint, request.clone())
}

/// [`review`] of a request it owns: its objects are moved into the evaluation, never copied.
/// The object is held once as JSON (the [`Resource`], which findings and patches refer to) and
/// once as the policy engine's input; the input document around it is built without it
/// ([`EvaluateOptions::omit_resource`]) and it is converted straight into the engine's value.
pub fn review_owned(
    snapshot: &Snapshot,
    endpoint: Endpoint,
    request: AdmissionRequest,
) -> Reviewed {
    let judges_deletes = snapshot.policies.judges_deletes();
    if !needs_evaluation(&request, judges_deletes)
        || (is_delete(&request) && endpoint == Endpoint::Mutate)
    {
        return Reviewed::skipped(&request.uid);
    }
    if let Some(bytes) = request.oversized {
        return Reviewed::oversized(&request.uid, bytes, snapshot.max_object_bytes);
    }
    let delete = is_delete(&request);
    let AdmissionRequest {
        uid,
        namespace,
        operation,
        user_info,
        object,
        old_object,
        dry_run,
        ..
    } = request;
    // A deletion is judged on the object being deleted, which is also its `input.old`.
    let (object, old) = if delete {
        let old = old_object.clone();
        (old_object, old)
    } else {
        (object, old_object)
    };
    let Some(object) = object else {
        return Reviewed::skipped(&uid);
    };
    let Ok(mut resource) = Resource::from_value(object, None) else {
        return Reviewed::skipped(&uid);
    };
    let namespace = namespace.filter(|n| !n.is_empty());
    if resource.namespace.is_none() {
        // The API server fills metadata.namespace in from the URL, but not always before
        // admission; the request says where the object goes.
        resource.namespace.clone_from(&namespace);
    }
    let context: Option<AppObjects> = snapshot.context.objects_for(&resource);
    let facts = AdmissionFacts {
        operation: operation.as_str().to_string(),
        // Added to the engine's input below, without a copy in the document.
        old: None,
        dry_run: dry_run.unwrap_or(false),
        user: user_info,
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
        omit_resource: true,
        ..EvaluateOptions::default()
    };
    let input = match &context {
        Some(c) => c.set.admission_input(&resource, &facts, &options),
        None => build_admission_input(&resource, &[], &facts, &options),
    };
    // The document as `syncguard check` builds it: `resource`, and `old` when the request has
    // one, are its members.
    let mut parts: Vec<(&str, &Value)> = vec![("resource", &resource.raw)];
    if let Some(old) = old.as_ref().filter(|v| !v.is_null()) {
        parts.push(("old", old));
    }
    let mut findings = snapshot
        .policies
        .findings_for_parts(&resource, &input, &parts);
    drop(parts);
    drop(old);
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
            response::validate(&uid, &findings, notes, snapshot.on_error)
        }
        Endpoint::Mutate => response::mutate(&uid, &resource.raw, &findings, snapshot.on_error),
    }
}

/// False for requests admitted without evaluation (see [`review`]): CONNECT, subresources,
/// requests without an object, and DELETE unless a rule of the set judges deletions
/// (`judges_deletes`, from `meta.operations`) and the request carries the deleted object.
/// True for an oversized request that would otherwise be evaluated (it is answered with a
/// warning instead).
pub fn needs_evaluation(request: &AdmissionRequest, judges_deletes: bool) -> bool {
    let subresource = request
        .sub_resource
        .as_deref()
        .is_some_and(|s| !s.is_empty());
    // An object over the limit is not parsed, but it is there: it is answered with a warning.
    let present =
        |o: &Option<Value>| request.oversized.is_some() || o.as_ref().is_some_and(|o| !o.is_null());
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
    let request = match decode_with_limit(body, state.options().max_object_bytes) {
        Ok(r) => r,
        Err(bad) => {
            record_bad_request(state, endpoint, "bad_request", &bad.message);
            return (StatusCode::BAD_REQUEST, error_body(&bad.message));
        }
    };
    let started = Instant::now();
    let header = request.without_objects();
    let reviewed = review_owned(&state.snapshot(), endpoint, request);
    record(state, endpoint, &header, &reviewed, started.elapsed());
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
    if reviewed.oversized {
        metrics
            .oversized_reviews
            .get_or_create(&EndpointLabels { endpoint: ep })
            .inc();
        tracing::warn!(
            uid = %request.uid,
            endpoint = ep,
            kind = %request.kind.kind,
            namespace = request.namespace.as_deref().unwrap_or(""),
            name = request.name.as_deref().unwrap_or(""),
            object_bytes = request.oversized.unwrap_or(0),
            max_object_bytes = state.options().max_object_bytes,
            "admitted without evaluation: the object is over --max-object-bytes"
        );
    }
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
