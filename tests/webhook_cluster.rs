//! `syncguard serve --cluster`: the Application cache as admission context. A reflector store is
//! filled the way the watcher fills it (Init, InitApply…, InitDone) and the seed incident's
//! recorded AdmissionReview goes through `webhook::handle_review`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};
use syncguard::metrics::Metrics;
use syncguard::policy::builtin::PolicySource;
use syncguard::webhook::cluster::IndexedApplication;
use syncguard::webhook::{
    AppContext, ClusterContext, Endpoint, ReviewOptions, State, handle_review, load_policies,
};

fn seed_review() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/admission/seed-job-create.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The seed incident's Application as Argo CD shows it: the ExternalSecret that produces the
/// Secret the PreSync Job needs sits at Sync wave 2.
struct App {
    value: Value,
}

impl App {
    fn orders() -> Self {
        Self {
            value: json!({
                "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "orders", "namespace": "argocd", "uid": "app-uid"},
                "spec": {"destination": {"namespace": "orders"},
                         "syncPolicy": {"automated": {"selfHeal": true}}},
                "status": {"resources": [
                    {"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "orders",
                     "name": "orders-config", "syncWave": 2},
                    {"group": "external-secrets.io", "version": "v1beta1", "kind": "ExternalSecret",
                     "namespace": "orders", "name": "db-credentials", "syncWave": 2},
                    {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "orders",
                     "name": "orders", "syncWave": 6}
                ]}
            }),
        }
    }

    /// A previous sync recorded the hook itself.
    fn listing_the_hook(mut self) -> Self {
        if let Some(list) = self.value["status"]["resources"].as_array_mut() {
            list.push(json!({"group": "batch", "version": "v1", "kind": "Job",
                             "namespace": "orders", "name": "db-migrate", "hook": true}));
        }
        self
    }

    fn object(self) -> IndexedApplication {
        serde_json::from_value(self.value).unwrap()
    }
}

/// A cache whose watch delivered `apps` and completed its first list (when `synced`).
fn cache(apps: Vec<IndexedApplication>, synced: bool) -> ClusterContext {
    let mut writer = Writer::default();
    let ctx = ClusterContext::new(vec![writer.as_reader()]);
    writer.apply_watcher_event(&Event::Init);
    for app in apps {
        writer.apply_watcher_event(&Event::InitApply(app));
    }
    if synced {
        writer.apply_watcher_event(&Event::InitDone);
    }
    assert_eq!(ctx.refresh(), synced);
    ctx
}

fn state(context: ClusterContext) -> Arc<State> {
    let policies = load_policies(&PolicySource::Builtin, Duration::from_millis(250)).unwrap();
    let context: Arc<dyn AppContext> = Arc::new(context);
    State::new(
        policies,
        context,
        ReviewOptions::default(),
        1,
        Arc::new(Metrics::new()),
    )
}

fn answer(state: &State, review: &Value) -> Value {
    let body = serde_json::to_vec(review).unwrap();
    let (status, bytes) = handle_review(state, Endpoint::Validate, &body);
    assert_eq!(status.as_u16(), 200);
    let review: Value = serde_json::from_slice(&bytes).unwrap();
    review["response"].clone()
}

fn denied_by_sg201(response: &Value) -> bool {
    response["allowed"] == false
        && response["status"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("SG201: Job orders/db-migrate"))
}

#[test]
fn the_seed_job_is_denied_with_sg201_when_its_application_lists_it() {
    let state = state(cache(vec![App::orders().listing_the_hook().object()], true));
    let response = answer(&state, &seed_review());
    assert!(denied_by_sg201(&response), "{response:#}");
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("ExternalSecret orders/db-credentials"),
        "{message}"
    );
    assert!(
        message.contains("a Sync hook with a wave after 2"),
        "{message}"
    );
}

#[test]
fn the_seed_job_is_denied_with_sg201_when_it_carries_the_apps_tracking_id() {
    let state = state(cache(vec![App::orders().object()], true));
    let mut review = seed_review();
    review["request"]["object"]["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] =
        json!("orders:batch/Job:orders/db-migrate");
    let response = answer(&state, &review);
    assert!(denied_by_sg201(&response), "{response:#}");
}

#[test]
fn an_unsynced_cache_keeps_sg201_silent() {
    let state = state(cache(
        vec![App::orders().listing_the_hook().object()],
        false,
    ));
    let response = answer(&state, &seed_review());
    assert_eq!(response["allowed"], true, "{response:#}");
    let warnings = response["warnings"].to_string();
    assert!(!warnings.contains("SG201"), "{warnings}");
    assert!(warnings.contains("no Application context"), "{warnings}");
}

#[test]
fn a_synced_cache_without_the_owning_application_keeps_sg201_silent() {
    let state = state(cache(Vec::new(), true));
    let response = answer(&state, &seed_review());
    assert_eq!(response["allowed"], true, "{response:#}");
    assert!(!response["warnings"].to_string().contains("SG201"));
}
