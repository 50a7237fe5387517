//! The admission logic in-process, without sockets: recorded AdmissionReview bodies through
//! `webhook::handle_review`, the entry point fuzzers and benchmarks use.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use syncguard::metrics::Metrics;
use syncguard::policy::builtin::PolicySource;
use syncguard::webhook::{
    AppContext, Endpoint, ManifestContext, NoContext, ReviewOptions, State, handle_review,
    load_policies,
};

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/admission")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn state(context: Arc<dyn AppContext>) -> Arc<State> {
    let policies = load_policies(&PolicySource::Builtin, Duration::from_millis(250)).unwrap();
    State::new(
        policies,
        context,
        ReviewOptions::default(),
        1,
        Arc::new(Metrics::new()),
    )
}

fn seed_context() -> Arc<dyn AppContext> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/seed-incident");
    Arc::new(ManifestContext::load(&dir).unwrap())
}

fn answer(state: &State, endpoint: Endpoint, body: &[u8]) -> Value {
    let (status, bytes) = handle_review(state, endpoint, body);
    assert_eq!(status.as_u16(), 200, "{}", String::from_utf8_lossy(&bytes));
    let review: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    review["response"].clone()
}

fn uid_of(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap();
    v["request"]["uid"].as_str().unwrap().to_string()
}

#[test]
fn the_seed_job_is_denied_with_sg201_when_its_app_context_is_known() {
    let state = state(seed_context());
    let body = fixture("seed-job-create.json");
    let response = answer(&state, Endpoint::Validate, &body);
    assert_eq!(response["uid"], uid_of(&body));
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("SG201: Job orders/db-migrate"),
        "{message}"
    );
    assert!(message.contains("Fix:"), "{message}");
    assert!(message.contains("docs/rules/SG201.md"), "{message}");
    assert!(
        response["auditAnnotations"]["SG201"]
            .as_str()
            .unwrap()
            .starts_with("deny: ")
    );
    println!("{}", serde_json::to_string_pretty(&response).unwrap());
}

#[test]
fn the_seed_job_is_only_warned_about_without_app_context() {
    let state = state(Arc::new(NoContext));
    let response = answer(&state, Endpoint::Validate, &fixture("seed-job-create.json"));
    assert_eq!(response["allowed"], true);
    let warnings: Vec<&str> = response["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    println!("{warnings:#?}");
    assert!(
        warnings[0].contains("no Application context for Job/db-migrate"),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("SG103: ")),
        "{warnings:?}"
    );
    assert!(warnings.iter().all(|w| w.len() <= 120));
}

#[test]
fn the_fix_of_a_built_in_finding_reaches_the_warnings() {
    let state = state(Arc::new(NoContext));
    let response = answer(&state, Endpoint::Validate, &fixture("seed-job-create.json"));
    let warnings: Vec<&str> = response["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    // SG103's message is far over the limit and ends with its fix: the fix has its own warning.
    assert!(
        warnings.contains(&"SG103: Job orders/db-migrate is a PreSync hook whose pod template sets restartPolicy: OnFailure"),
        "{warnings:?}"
    );
    assert!(
        warnings.contains(&"SG103 fix: Use restartPolicy: Never"),
        "{warnings:?}"
    );
    // Every warned finding whose message did not fit in one warning: its fix, taken from the
    // full message in the audit annotation, is in a `fix` warning.
    let annotations = response["auditAnnotations"].as_object().unwrap();
    let mut checked = 0;
    for (rule, value) in annotations {
        let value = value.as_str().unwrap();
        let Some(message) = value
            .strip_prefix("warn: ")
            .or_else(|| value.strip_prefix("mutate: "))
        else {
            continue;
        };
        if format!("{rule}: {message}").len() <= 120 {
            continue;
        }
        let fix = message.trim_end_matches('.').rsplit(". ").next().unwrap();
        let expected = format!("{rule} fix: {fix}");
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with(&format!("{rule} fix: "))
                    && expected.starts_with(w.trim_end_matches('…'))),
            "{rule}: no warning carries {expected:?}: {warnings:?}"
        );
        checked += 1;
    }
    assert!(checked >= 2, "{annotations:?}");
    assert!(warnings.iter().all(|w| w.len() <= 120), "{warnings:?}");
}

#[test]
fn dry_run_requests_get_the_same_answer() {
    let state = state(seed_context());
    let mut normal = answer(&state, Endpoint::Validate, &fixture("seed-job-create.json"));
    let mut dry = answer(
        &state,
        Endpoint::Validate,
        &fixture("seed-job-create-dryrun.json"),
    );
    normal["uid"] = json!("");
    dry["uid"] = json!("");
    assert_eq!(normal, dry);
}

#[test]
fn a_hook_job_without_a_deadline_is_patched_once() {
    let state = state(Arc::new(NoContext));
    let body = fixture("hook-job-no-deadline.json");
    let response = answer(&state, Endpoint::Mutate, &body);
    assert_eq!(response["allowed"], true);
    assert_eq!(response["patchType"], "JSONPatch");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    let patch: json_patch::Patch = serde_json::from_slice(&patch).unwrap();
    let mut review: Value = serde_json::from_slice(&body).unwrap();
    json_patch::patch(&mut review["request"]["object"], &patch).unwrap();
    assert_eq!(
        review["request"]["object"]["spec"]["activeDeadlineSeconds"],
        900
    );
    // The API server's default backoffLimit (6) is the user's value as far as we can tell.
    assert_eq!(review["request"]["object"]["spec"]["backoffLimit"], 6);
    println!("{}", serde_json::to_string_pretty(&response).unwrap());

    // reinvocationPolicy: IfNeeded — the patched object comes back and needs nothing more.
    let again = answer(
        &state,
        Endpoint::Mutate,
        &serde_json::to_vec(&review).unwrap(),
    );
    assert_eq!(again["allowed"], true);
    assert!(
        again.get("patch").is_none() && again.get("patchType").is_none(),
        "{again}"
    );
}

/// Ad-hoc latency of one review in-process (decode + evaluate + encode), for the record:
/// `cargo test --release --test webhook_review -- --ignored --nocapture`. The load benchmark
/// over TLS lives with the benchmarks.
#[test]
#[ignore = "timing; run in release"]
fn latency_of_one_review_in_process() {
    let cases = [
        (
            "seed Job, /validate, with app context",
            Endpoint::Validate,
            "seed-job-create.json",
            true,
        ),
        (
            "seed Job, /validate, no context",
            Endpoint::Validate,
            "seed-job-create.json",
            false,
        ),
        (
            "hook Job, /mutate",
            Endpoint::Mutate,
            "hook-job-no-deadline.json",
            false,
        ),
        (
            "ConfigMap, /validate",
            Endpoint::Validate,
            "configmap-clean.json",
            false,
        ),
        (
            "Deployment UPDATE, /validate",
            Endpoint::Validate,
            "deployment-update.json",
            false,
        ),
    ];
    for (label, endpoint, name, with_context) in cases {
        let ctx: Arc<dyn AppContext> = if with_context {
            seed_context()
        } else {
            Arc::new(NoContext)
        };
        let state = state(ctx);
        let body = fixture(name);
        for _ in 0..200 {
            handle_review(&state, endpoint, &body);
        }
        let mut times: Vec<Duration> = (0..2000)
            .map(|_| {
                let t = std::time::Instant::now();
                let (status, _) = handle_review(&state, endpoint, &body);
                let e = t.elapsed();
                assert_eq!(status.as_u16(), 200);
                e
            })
            .collect();
        times.sort();
        let p = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize].as_micros();
        println!(
            "{label:45} p50 {:>5} µs  p99 {:>5} µs  max {:>6} µs",
            p(0.5),
            p(0.99),
            p(1.0)
        );
    }
}

/// A policy directory with one organisation rule that judges deletions only: deleting a Job
/// annotated `example.com/protect: "true"` is refused.
fn delete_rule_policies() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("protected_delete.rego"),
        r#"package syncguard.rules.protected_delete

meta := {
	"id": "ORG001",
	"title": "Protected object deleted",
	"severity": "high",
	"action": "deny",
	"operations": ["DELETE"],
}

violations contains {"msg": msg, "path": "/metadata"} if {
	input.operation == "DELETE"
	input.resource.metadata.annotations["example.com/protect"] == "true"
	msg := sprintf("%s is protected; remove the example.com/protect annotation first", [input.resource.metadata.name])
}

# Would fire on every object; must not, since the rule only declared DELETE.
violations contains {"msg": "any operation", "path": "/metadata"} if {
	input.operation != "DELETE"
	input.resource.metadata.annotations["example.com/protect"] == "true"
}
"#,
    )
    .unwrap();
    dir
}

fn protected(body: &[u8]) -> Vec<u8> {
    let mut review: Value = serde_json::from_slice(body).unwrap();
    for key in ["object", "oldObject"] {
        let o = &mut review["request"][key];
        if o.is_object() {
            o["metadata"]["annotations"]["example.com/protect"] = json!("true");
        }
    }
    serde_json::to_vec(&review).unwrap()
}

#[test]
fn deletions_are_judged_only_when_a_rule_declares_delete_and_only_by_such_rules() {
    let dir = delete_rule_policies();
    let policies = load_policies(
        &PolicySource::Dir(dir.path().into()),
        Duration::from_millis(250),
    )
    .unwrap();
    assert!(policies.judges_deletes());
    let state = State::new(
        policies,
        Arc::new(NoContext),
        ReviewOptions::default(),
        1,
        Arc::new(Metrics::new()),
    );
    let delete = protected(&fixture("job-delete.json"));
    let response = answer(&state, Endpoint::Validate, &delete);
    assert_eq!(response["allowed"], false, "{response}");
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("ORG001") && message.contains("db-migrate is protected"),
        "{message}"
    );
    // /mutate never patches a deletion.
    assert_eq!(answer(&state, Endpoint::Mutate, &delete)["allowed"], true);
    // The same object on CREATE: the rule did not declare CREATE, so it does not report.
    let create = protected(&fixture("configmap-clean.json"));
    let response = answer(&state, Endpoint::Validate, &create);
    assert_eq!(response["allowed"], true, "{response}");
    assert!(response.get("warnings").is_none(), "{response}");

    // The built-in rules judge no deletion: DELETE is admitted without evaluation.
    let builtin = state_with_builtin();
    assert_eq!(
        answer(&builtin, Endpoint::Validate, &delete)["allowed"],
        true
    );
}

fn state_with_builtin() -> Arc<State> {
    let policies = load_policies(&PolicySource::Builtin, Duration::from_millis(250)).unwrap();
    assert!(!policies.judges_deletes());
    State::new(
        policies,
        Arc::new(NoContext),
        ReviewOptions::default(),
        1,
        Arc::new(Metrics::new()),
    )
}

#[test]
fn at_admission_a_reference_outside_the_app_context_is_unknown_not_missing() {
    // The app context lists what the Application manages; a Secret made by hand is not in it but
    // exists in the cluster. `check` would call it missing; admission must not deny on that.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("shop.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop, labels: {app.kubernetes.io/instance: shop}}\n",
    )
    .unwrap();
    let state = state(Arc::new(ManifestContext::load(dir.path()).unwrap()));
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "shop",
                     "labels": {"app.kubernetes.io/instance": "shop"},
                     "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
        "spec": {"backoffLimit": 1, "activeDeadlineSeconds": 300, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "m", "image": "busybox",
                            "envFrom": [{"secretRef": {"name": "hand-made"}}]}]}}}
    });
    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u-1", "kind": {"group": "batch", "version": "v1", "kind": "Job"},
                    "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
                    "namespace": "shop", "name": "migrate", "operation": "CREATE",
                    "userInfo": {"username": "admin"}, "object": job}
    });
    let response = answer(
        &state,
        Endpoint::Validate,
        &serde_json::to_vec(&review).unwrap(),
    );
    assert_eq!(response["allowed"], true, "{response}");
    assert!(!response.to_string().contains("SG201"), "{response}");
}

/// The AdmissionReview a real kube-apiserver sent for `kubectl apply` of the seed Job
/// (tests/fixtures/live): backoffLimit already defaulted to 6, the client's own copy in the
/// last-applied-configuration annotation. SG102 replaces the default; a second pass (webhook
/// reinvocation) changes nothing.
#[test]
fn a_defaulted_backoff_limit_is_replaced_when_the_client_declared_none() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/live/admission-review-job-create.json");
    let body = std::fs::read(&path).unwrap();
    let mut review: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(review["request"]["object"]["spec"]["backoffLimit"], 6);
    let state = state(Arc::new(NoContext));
    let response = answer(&state, Endpoint::Mutate, &body);
    assert_eq!(response["allowed"], true);
    let patch = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    let patch: json_patch::Patch = serde_json::from_slice(&patch).unwrap();
    json_patch::patch(&mut review["request"]["object"], &patch).unwrap();
    let spec = &review["request"]["object"]["spec"];
    assert_eq!(
        (&spec["activeDeadlineSeconds"], &spec["backoffLimit"]),
        (&json!(900), &json!(2))
    );
    let warnings = response["warnings"].to_string();
    assert!(warnings.contains("SG102"), "{warnings}");

    let again = answer(
        &state,
        Endpoint::Mutate,
        &serde_json::to_vec(&review).unwrap(),
    );
    assert!(again.get("patch").is_none(), "{again}");
}

/// The webhook builds a review's input document without the object and adds the object (and
/// `oldObject`) straight into the policy engine's input, so the largest tree of a review is not
/// copied. That must be the very document `syncguard check` semantics give: the same outcomes as
/// the full document, for every recorded review, with and without Application context.
#[test]
fn the_object_handed_over_apart_gives_the_outcomes_of_the_whole_document() {
    use syncguard::evaluate::{AdmissionFacts, EvaluateOptions, Source, build_admission_input};
    use syncguard::model::Resource;
    use syncguard::webhook::service::decode;

    let policies = load_policies(&PolicySource::Builtin, Duration::from_secs(5)).unwrap();
    let contexts: [Arc<dyn AppContext>; 2] = [Arc::new(NoContext), seed_context()];
    let mut compared = 0;
    for name in [
        "configmap-clean.json",
        "deployment-update.json",
        "hook-job-no-deadline.json",
        "seed-job-create.json",
        "seed-job-create-dryrun.json",
        "unknown-kind.json",
    ] {
        let request = decode(&fixture(name)).unwrap();
        let Ok(mut resource) = Resource::from_value(request.object.clone().unwrap(), None) else {
            continue;
        };
        if resource.namespace.is_none() {
            resource.namespace.clone_from(&request.namespace);
        }
        let facts = |old: Option<Value>| AdmissionFacts {
            operation: request.operation.as_str().to_string(),
            old,
            dry_run: request.dry_run.unwrap_or(false),
            user: request.user_info.clone(),
        };
        let options = |omit_resource: bool| EvaluateOptions {
            source: Source::Admission,
            destination_namespace: request.namespace.clone(),
            omit_resource,
            ..EvaluateOptions::default()
        };
        for context in &contexts {
            let objects = context.objects_for(&resource);
            let build = |facts: &AdmissionFacts, options: &EvaluateOptions| match &objects {
                Some(c) => c.set.admission_input(&resource, facts, options),
                None => build_admission_input(&resource, &[], facts, options),
            };
            let whole = build(&facts(request.old_object.clone()), &options(false));
            let apart = build(&facts(None), &options(true));
            // The documents differ in exactly the two members handed over apart.
            let mut trimmed = whole.clone();
            let map = trimmed.as_object_mut().unwrap();
            assert_eq!(
                map.remove("resource").as_ref(),
                Some(&resource.raw),
                "{name}"
            );
            assert_eq!(map.remove("old"), request.old_object.clone(), "{name}");
            assert_eq!(trimmed, apart, "{name}");

            let mut parts: Vec<(&str, &Value)> = vec![("resource", &resource.raw)];
            if let Some(old) = &request.old_object {
                parts.push(("old", old));
            }
            let expected = policies.evaluate(&whole);
            assert_eq!(policies.evaluate_parts(&apart, &parts), expected, "{name}");
            assert_eq!(
                policies.findings_for_parts(&resource, &apart, &parts),
                policies.findings_for(&resource, &whole),
                "{name}"
            );
            compared += usize::from(!expected.is_empty());
        }
    }
    // Not only silent documents: some of them have findings.
    assert!(compared >= 3, "only {compared} comparisons with findings");
}
