//! Fuzzes `syncguard::webhook::handle_review`, the pure entry point behind `POST /validate` and
//! `POST /mutate`, with arbitrary bytes and with structure-aware mutations of recorded
//! AdmissionReviews (see `fuzz/README.md`).
//!
//! Every input goes through four reviews: /validate and /mutate with the seed incident's
//! Application as context and `--on-error=allow`, and both again without context and with
//! `--on-error=deny`. Besides "no panic, no hang", each answer must keep the contract that
//! `src/webhook/response.rs` and `service.rs` document:
//!
//! - HTTP 400 exactly when the body does not decode as a v1 AdmissionReview, 200 otherwise;
//! - a 200 body is an `admission.k8s.io/v1` AdmissionReview whose `response.uid` is the request's;
//! - a denial carries a status message of at most `MAX_DENY_MESSAGE` bytes;
//! - warnings are single-line, free of control characters, each at most `MAX_WARNING` bytes and
//!   at most `MAX_WARNINGS_TOTAL` bytes together;
//! - audit annotation keys contain no `/` and values are at most `MAX_ANNOTATION` bytes;
//! - `patch` and `patchType: JSONPatch` come together, only from /mutate, and the patch is base64
//!   of an RFC 6902 patch that applies to `request.object`;
//! - re-invoking /mutate on the patched object asks for no further change (the documented
//!   `reinvocationPolicy: IfNeeded` behaviour).

#![no_main]

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use libfuzzer_sys::{fuzz_mutator, fuzz_target, fuzzer_mutate};
use serde_json::{Map, Value, json};
use syncguard::metrics::Metrics;
use syncguard::policy::builtin::PolicySource;
use syncguard::webhook::response::{
    MAX_ANNOTATION, MAX_DENY_MESSAGE, MAX_WARNING, MAX_WARNINGS_TOTAL,
};
use syncguard::webhook::review::AdmissionRequest;
use syncguard::webhook::service::decode;
use syncguard::webhook::{
    Endpoint, FailureMode, ManifestContext, NoContext, ReviewOptions, State, handle_review,
    load_policies,
};

struct States {
    /// Built-in rules, the seed incident's manifests as Application context, on-error allow.
    context_allow: Arc<State>,
    /// Built-in rules, no context, on-error deny.
    bare_deny: Arc<State>,
}

fn states() -> &'static States {
    static STATES: OnceLock<States> = OnceLock::new();
    STATES.get_or_init(|| {
        // A generous per-rule deadline: hitting it depends on timing, and a fuzzer needs
        // deterministic runs. Real hangs are caught by libFuzzer's -timeout.
        let deadline = Duration::from_secs(5);
        let load = || load_policies(&PolicySource::Builtin, deadline).expect("built-in policies");
        let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/seed-incident");
        let context = ManifestContext::load(&seed).expect("examples/seed-incident loads");
        let options = |on_error| ReviewOptions {
            on_error,
            ..ReviewOptions::default()
        };
        States {
            context_allow: State::new(
                load(),
                Arc::new(context),
                options(FailureMode::Allow),
                1,
                Arc::new(Metrics::new()),
            ),
            bare_deny: State::new(
                load(),
                Arc::new(NoContext),
                options(FailureMode::Deny),
                1,
                Arc::new(Metrics::new()),
            ),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let states = states();
    let decoded = decode(data).ok();
    for state in [&states.context_allow, &states.bare_deny] {
        for endpoint in [Endpoint::Validate, Endpoint::Mutate] {
            let (status, body) = handle_review(state, endpoint, data);
            check(
                state,
                endpoint,
                decoded.as_ref(),
                status.as_u16(),
                &body,
                true,
            );
        }
    }
});

/// Asserts the answer contract for one review. `reinvoke`: also check that /mutate is idempotent
/// on its own output (not recursively).
fn check(
    state: &State,
    endpoint: Endpoint,
    request: Option<&AdmissionRequest>,
    status: u16,
    body: &[u8],
    reinvoke: bool,
) {
    let Some(request) = request else {
        assert_eq!(status, 400, "an undecodable body must get 400");
        assert!(std::str::from_utf8(body).is_ok(), "400 body must be text");
        return;
    };
    assert_eq!(
        status,
        200,
        "a decodable review must get 200: {}",
        lossy(body)
    );
    let answer: Value = serde_json::from_slice(body).expect("the answer is JSON");
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(answer["kind"], "AdmissionReview");
    let response = &answer["response"];
    assert_eq!(response["uid"].as_str(), Some(request.uid.as_str()), "uid");
    let allowed = response["allowed"].as_bool().expect("allowed is a bool");
    if !allowed {
        let message = response["status"]["message"]
            .as_str()
            .expect("a denial carries status.message");
        assert!(!message.is_empty(), "empty deny message");
        assert!(
            message.len() <= MAX_DENY_MESSAGE,
            "deny message of {} bytes",
            message.len()
        );
    }
    if let Some(warnings) = response.get("warnings") {
        let warnings = warnings.as_array().expect("warnings is an array");
        let mut total = 0;
        for w in warnings {
            let w = w.as_str().expect("a warning is a string");
            assert!(
                w.len() <= MAX_WARNING,
                "warning of {} bytes: {w:?}",
                w.len()
            );
            assert!(
                !w.chars().any(char::is_control),
                "control character in {w:?}"
            );
            total += w.len();
        }
        assert!(total <= MAX_WARNINGS_TOTAL, "{total} bytes of warnings");
    }
    if let Some(annotations) = response.get("auditAnnotations") {
        for (key, value) in annotations.as_object().expect("auditAnnotations is a map") {
            assert!(
                !key.is_empty() && !key.contains('/'),
                "annotation key {key:?}"
            );
            let value = value.as_str().expect("annotation value is a string");
            assert!(
                value.len() <= MAX_ANNOTATION,
                "annotation of {} bytes",
                value.len()
            );
        }
    }
    let patch = response.get("patch");
    assert_eq!(
        patch.is_some(),
        response.get("patchType").is_some(),
        "patch and patchType come together"
    );
    let Some(patch) = patch else {
        return;
    };
    assert_eq!(endpoint, Endpoint::Mutate, "only /mutate patches");
    assert_eq!(response["patchType"], "JSONPatch");
    assert!(allowed, "a patched answer is an allow");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(patch.as_str().expect("patch is a string"))
        .expect("patch is base64");
    let ops: json_patch::Patch = serde_json::from_slice(&bytes).expect("patch is RFC 6902 JSON");
    assert!(!ops.0.is_empty(), "an empty patch is sent as no patch");
    let mut object = request
        .object
        .clone()
        .expect("a patch needs request.object");
    json_patch::patch(&mut object, &ops).unwrap_or_else(|e| {
        panic!(
            "the patch does not apply to request.object: {e}\npatch: {}",
            lossy(&bytes)
        )
    });
    if reinvoke {
        // reinvocationPolicy: IfNeeded — the API server calls /mutate again with the patched
        // object; syncguard must not ask for more.
        let again = reinvocation(request, &object);
        let decoded = decode(&again).expect("the re-invocation review decodes");
        let (status, body) = handle_review(state, Endpoint::Mutate, &again);
        check(
            state,
            Endpoint::Mutate,
            Some(&decoded),
            status.as_u16(),
            &body,
            false,
        );
        let answer: Value = serde_json::from_slice(&body).expect("JSON");
        assert!(
            answer["response"].get("patch").is_none(),
            "re-invoked /mutate patched again: {}\nfirst patch: {}",
            lossy(&body),
            lossy(&bytes)
        );
    }
}

/// The review the API server would send when re-invoking /mutate after our patch.
fn reinvocation(request: &AdmissionRequest, patched: &Value) -> Vec<u8> {
    let mut r = Map::new();
    r.insert("uid".into(), json!(request.uid));
    r.insert("kind".into(), json!(request.kind));
    r.insert("operation".into(), json!(request.operation));
    r.insert("userInfo".into(), request.user_info.clone());
    r.insert("object".into(), patched.clone());
    if let Some(v) = &request.resource {
        r.insert("resource".into(), json!(v));
    }
    if let Some(v) = &request.sub_resource {
        r.insert("subResource".into(), json!(v));
    }
    if let Some(v) = &request.name {
        r.insert("name".into(), json!(v));
    }
    if let Some(v) = &request.namespace {
        r.insert("namespace".into(), json!(v));
    }
    if let Some(v) = &request.old_object {
        r.insert("oldObject".into(), v.clone());
    }
    if let Some(v) = request.dry_run {
        r.insert("dryRun".into(), json!(v));
    }
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": Value::Object(r),
    }))
    .expect("serializable")
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(2000)]).into_owned()
}

// ---- structure-aware mutation ------------------------------------------------------------------

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = Rng::new(seed);
    // Three times in four, when the input is JSON: edit the document (replace, delete, insert,
    // splice, retype nodes with Kubernetes/Argo CD vocabulary) and re-serialize. Otherwise, and
    // for inputs that are not JSON, libFuzzer's own byte-level mutations (with -dict tokens).
    if rng.below(4) != 0
        && let Ok(mut doc) = serde_json::from_slice::<Value>(&data[..size])
    {
        for _ in 0..=rng.below(3) {
            mutate_json(&mut doc, &mut rng);
        }
        let out = if rng.below(3) == 0 {
            serde_json::to_vec_pretty(&doc)
        } else {
            serde_json::to_vec(&doc)
        };
        if let Ok(out) = out
            && out.len() <= max_size
        {
            data[..out.len()].copy_from_slice(&out);
            return out.len();
        }
    }
    fuzzer_mutate(data, size, max_size)
});

/// xorshift64*: deterministic from libFuzzer's seed, so a mutation sequence can be replayed.
struct Rng(u64);

impl Rng {
    fn new(seed: u32) -> Self {
        Self(u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Keys the rules and the decoder look at.
const KEYS: &[&str] = &[
    "argocd.argoproj.io/hook",
    "argocd.argoproj.io/hook-delete-policy",
    "argocd.argoproj.io/sync-wave",
    "argocd.argoproj.io/sync-options",
    "argocd.argoproj.io/compare-options",
    "argocd.argoproj.io/tracking-id",
    "argocd.argoproj.io/hook-finalizer",
    "argocd.argoproj.io/deletion-approved",
    "argocd.argoproj.io/ignore-restart-policy",
    "argocd.argoproj.io/instance",
    "app.kubernetes.io/instance",
    "helm.sh/hook",
    "helm.sh/hook-delete-policy",
    "helm.sh/hook-weight",
    "syncguard.dev/skip",
    "syncguard.dev/skip-reason",
    "syncguard.dev/mutated",
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "generateName",
    "namespace",
    "annotations",
    "labels",
    "ownerReferences",
    "finalizers",
    "spec",
    "template",
    "jobTemplate",
    "containers",
    "initContainers",
    "image",
    "command",
    "env",
    "envFrom",
    "valueFrom",
    "secretKeyRef",
    "configMapKeyRef",
    "secretRef",
    "configMapRef",
    "volumes",
    "secret",
    "secretName",
    "configMap",
    "persistentVolumeClaim",
    "claimName",
    "serviceAccountName",
    "activeDeadlineSeconds",
    "backoffLimit",
    "ttlSecondsAfterFinished",
    "restartPolicy",
    "replicas",
    "selector",
    "matchLabels",
    "data",
    "stringData",
    "uid",
    "operation",
    "object",
    "oldObject",
    "subResource",
    "dryRun",
    "userInfo",
    "request",
    "group",
    "version",
    "resource",
];

/// String values the rules compare against, plus awkward ones.
const STRINGS: &[&str] = &[
    "PreSync",
    "Sync",
    "PostSync",
    "SyncFail",
    "PostDelete",
    "Skip",
    "PreSync,PostSync",
    "pre-install",
    "post-upgrade",
    "pre-install,pre-upgrade",
    "HookSucceeded",
    "HookFailed",
    "BeforeHookCreation",
    "before-hook-creation",
    "hook-succeeded",
    "Replace=true",
    "Prune=false",
    "ServerSideApply=true",
    "SkipDryRunOnMissingResource=true",
    "Delete=false",
    "-5",
    "0",
    "10",
    "1e3",
    "99999999999999999999",
    "CREATE",
    "UPDATE",
    "DELETE",
    "CONNECT",
    "Job",
    "CronJob",
    "Pod",
    "Deployment",
    "StatefulSet",
    "ConfigMap",
    "Secret",
    "Service",
    "Namespace",
    "ExternalSecret",
    "Application",
    "CustomResourceDefinition",
    "HorizontalPodAutoscaler",
    "batch/v1",
    "apps/v1",
    "v1",
    "argoproj.io/v1alpha1",
    "external-secrets.io/v1beta1",
    "admission.k8s.io/v1",
    "AdmissionReview",
    "Never",
    "OnFailure",
    "Always",
    "status",
    "scale",
    "orders",
    "db-migrate",
    "db-migrate-",
    "db-credentials",
    "inventory",
    "",
    " ",
    "\n",
    "\u{0}",
    "\u{1b}[31m",
    "a/b",
    "../..",
    "~1~0",
    "ü\u{301}",
    "\u{202e}",
    "{{ .Values.x }}",
    "$(date)",
];

fn interesting(rng: &mut Rng) -> Value {
    match rng.below(14) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(false),
        3 => json!(0),
        4 => json!(-1),
        5 => json!(i64::MAX),
        6 => json!(u64::MAX),
        7 => json!(i64::MIN),
        8 => json!(1.5e300),
        9 => json!(-0.0),
        10 => json!({}),
        11 => json!([]),
        12 => Value::String(rng.pick(STRINGS).repeat(1 + rng.below(300))),
        _ => Value::String((*rng.pick(STRINGS)).to_string()),
    }
}

/// Paths (as key/index lists) of every node, root first.
fn paths(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                prefix.push(Step::Key(k.clone()));
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                prefix.push(Step::Index(i));
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut cur = v;
    for step in path {
        cur = match (step, cur) {
            (Step::Key(k), Value::Object(m)) => m.get_mut(k)?,
            (Step::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn mutate_json(doc: &mut Value, rng: &mut Rng) {
    let mut all = Vec::new();
    paths(doc, &mut Vec::new(), &mut all);
    let path = rng.pick(&all).clone();
    let donor_path = rng.pick(&all).clone();
    let donor = at(doc, &donor_path).cloned().unwrap_or(Value::Null);
    match rng.below(9) {
        // Delete the node from its parent.
        0 => {
            if let Some((last, parent)) = path.split_last()
                && let Some(parent) = at(doc, parent)
            {
                match (last, parent) {
                    (Step::Key(k), Value::Object(m)) => {
                        m.remove(k);
                    }
                    (Step::Index(i), Value::Array(a)) if *i < a.len() => {
                        a.remove(*i);
                    }
                    _ => {}
                }
            }
        }
        // Insert a known key (or append an element) with an interesting value or a donor subtree.
        1 | 2 => {
            let value = if rng.below(2) == 0 {
                interesting(rng)
            } else {
                donor
            };
            match at(doc, &path) {
                Some(Value::Object(m)) => {
                    m.insert((*rng.pick(KEYS)).to_string(), value);
                }
                Some(Value::Array(a)) => a.push(value),
                Some(other) => *other = json!({ *rng.pick(KEYS): value }),
                None => {}
            }
        }
        // Splice: overwrite with another part of the document (e.g. object into oldObject).
        3 => {
            if let Some(node) = at(doc, &path) {
                *node = donor;
            }
        }
        // Replace with an interesting value.
        4 | 5 => {
            let value = interesting(rng);
            if let Some(node) = at(doc, &path) {
                *node = value;
            }
        }
        // Tweak a scalar in place.
        6 | 7 => {
            let token = *rng.pick(STRINGS);
            let choice = rng.below(6);
            let cut = rng.next() as usize;
            if let Some(node) = at(doc, &path) {
                tweak(node, token, choice, cut);
            }
        }
        // Wrap or unwrap (type confusion).
        _ => {
            if let Some(node) = at(doc, &path) {
                let inner = node.take();
                *node = match inner {
                    Value::Array(mut a) if !a.is_empty() => a.swap_remove(0),
                    Value::Object(m) if !m.is_empty() => {
                        m.into_iter().next().map(|(_, v)| v).unwrap_or(Value::Null)
                    }
                    other => json!([other]),
                };
            }
        }
    }
}

fn tweak(node: &mut Value, token: &str, choice: usize, cut: usize) {
    match node {
        Value::String(s) => match choice {
            0 => s.push_str(token),
            1 => s.insert_str(0, token),
            2 => {
                let mut end = cut % (s.len() + 1);
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.truncate(end);
            }
            3 => *s = s.repeat(2 + cut % 64),
            4 => {
                if let Ok(n) = s.parse::<f64>() {
                    *node = json!(n);
                } else {
                    *s = s.to_uppercase();
                }
            }
            _ => *s = format!("{s}\u{7f}\t{token}"),
        },
        Value::Number(n) => {
            let i = n.as_i64().unwrap_or(1);
            *node = match choice {
                0 => json!(i.wrapping_add(1)),
                1 => json!(i.wrapping_sub(1)),
                2 => json!(i.wrapping_neg()),
                3 => json!(i.wrapping_mul(1_000_000)),
                4 => json!(i.to_string()),
                _ => json!(i as f64 + 0.5),
            };
        }
        Value::Bool(b) => *b = !*b,
        Value::Null => *node = json!(token),
        Value::Object(m) => {
            m.insert(token.to_string(), Value::Null);
        }
        Value::Array(a) => {
            if let Some(first) = a.first().cloned() {
                a.push(first);
            }
        }
    }
}
