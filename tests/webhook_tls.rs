//! `syncguard serve` over real TLS on a loopback port: certificates from `syncguard certs`, a
//! client that trusts only the generated `ca.crt`, and recorded AdmissionReview bodies.

mod webhook_support;

use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;
use webhook_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_over_tls_deny_patch_allow_and_survive_bad_requests() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let mut config = config(certs.path());
    config.app_context = Some(seed_context_dir());
    let server = start(config).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let mut conn = client.connect().await.unwrap();
    assert_eq!(conn.version, rustls::ProtocolVersion::TLSv1_3);
    assert_eq!(
        conn.peer,
        std::fs::read(certs.path().join("tls.crt"))
            .map(|pem| {
                use rustls::pki_types::pem::PemObject;
                rustls::pki_types::CertificateDer::from_pem_slice(&pem)
                    .unwrap()
                    .to_vec()
            })
            .unwrap()
    );

    // The seed incident Job, with its Application's manifests as context: denied with SG201.
    let seed = conn
        .post("/validate", &fixture("seed-job-create.json"))
        .await
        .unwrap();
    let response = seed.response();
    assert_eq!(response["uid"], "6a0c2f3e-91d4-4b7a-8e15-0c9d2b4f7a31");
    assert_eq!(response["allowed"], false);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(message.starts_with("SG201: "), "{message}");
    assert!(message.contains("Fix: "), "{message}");

    // dryRun: evaluated identically.
    let dry = conn
        .post("/validate", &fixture("seed-job-create-dryrun.json"))
        .await
        .unwrap();
    let dry = dry.response();
    assert_eq!(dry["allowed"], false);
    assert_eq!(dry["status"], response["status"]);
    assert_eq!(dry["warnings"], response["warnings"]);

    // A hook Job without a deadline is patched: the patch is base64 JSONPatch that applies.
    let body = fixture("hook-job-no-deadline.json");
    let mutated = conn.post("/mutate", &body).await.unwrap().response();
    assert_eq!(mutated["allowed"], true);
    assert_eq!(mutated["patchType"], "JSONPatch");
    let patch = mutated["patch"]
        .as_str()
        .expect("patch must be a base64 string");
    let patch: json_patch::Patch = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(patch)
            .unwrap(),
    )
    .unwrap();
    let mut review: Value = serde_json::from_slice(&body).unwrap();
    let mut object = review["request"]["object"].clone();
    json_patch::patch(&mut object, &patch).unwrap();
    assert_eq!(object["spec"]["activeDeadlineSeconds"], 900);
    // Re-invocation with the patched object: nothing more to do.
    review["request"]["object"] = object;
    let again = conn
        .post("/mutate", &serde_json::to_vec(&review).unwrap())
        .await
        .unwrap()
        .response();
    assert!(again.get("patch").is_none(), "{again}");
    // A value the user set is never lowered: a 3600 s deadline stays.
    review["request"]["object"]["spec"]["activeDeadlineSeconds"] = 3600.into();
    let kept = conn
        .post("/mutate", &serde_json::to_vec(&review).unwrap())
        .await
        .unwrap()
        .response();
    assert!(kept.get("patch").is_none(), "{kept}");

    // Clean objects, updates, deletes and unknown kinds are allowed.
    for (name, endpoint) in [
        ("configmap-clean.json", "/validate"),
        ("configmap-clean.json", "/mutate"),
        ("deployment-update.json", "/validate"),
        ("deployment-update.json", "/mutate"),
        ("job-delete.json", "/validate"),
        ("unknown-kind.json", "/validate"),
        ("unknown-kind.json", "/mutate"),
    ] {
        let r = conn
            .post(endpoint, &fixture(name))
            .await
            .unwrap()
            .response();
        assert_eq!(r["allowed"], true, "{name} {endpoint}: {r}");
        assert!(r.get("patch").is_none(), "{name} {endpoint}: {r}");
        assert!(r.get("warnings").is_none(), "{name} {endpoint}: {r}");
    }

    // Bad bodies: 400 with an explanation, and the same connection keeps working.
    let bad = conn
        .post("/validate", &fixture("malformed.json"))
        .await
        .unwrap();
    assert_eq!(bad.status, 400);
    assert!(
        bad.text()
            .contains("not an admission.k8s.io/v1 AdmissionReview"),
        "{}",
        bad.text()
    );
    let wrong = conn
        .post("/validate", &fixture("wrong-api-version.json"))
        .await
        .unwrap();
    assert_eq!(wrong.status, 400);
    assert!(
        wrong
            .text()
            .contains("unsupported apiVersion `admission.k8s.io/v1beta1`"),
        "{}",
        wrong.text()
    );
    let empty = conn.post("/mutate", b"").await.unwrap();
    assert_eq!(empty.status, 400);
    assert_eq!(
        conn.post("/validate", &fixture("configmap-clean.json"))
            .await
            .unwrap()
            .status,
        200
    );

    // HTTP/2, which the API server negotiates when offered.
    let h2 = client
        .post_h2("/validate", &fixture("seed-job-create.json"))
        .await
        .unwrap();
    assert_eq!(h2.response()["allowed"], false);

    // A large but legitimate UPDATE (two ~2.5 MiB copies of the object) is accepted: the limit
    // is 7 MiB, not axum's default 2 MiB.
    let mut large: Value = serde_json::from_slice(&fixture("deployment-update.json")).unwrap();
    let padding = "p".repeat(5 * 1024 * 1024 / 2);
    large["request"]["object"]["metadata"]["annotations"]["padding"] = padding.clone().into();
    large["request"]["oldObject"]["metadata"]["annotations"]["padding"] = padding.into();
    let large = client
        .post("/validate", &serde_json::to_vec(&large).unwrap())
        .await
        .unwrap();
    assert_eq!(large.response()["allowed"], true);

    // 8 MiB: 413 with the limit in the message; the server keeps serving.
    let mut huge: Value = serde_json::from_slice(&fixture("configmap-clean.json")).unwrap();
    huge["request"]["object"]["data"]["blob"] = "x".repeat(8 * 1024 * 1024).into();
    let huge = serde_json::to_vec(&huge).unwrap();
    let too_large = client.post("/validate", &huge).await.unwrap();
    assert_eq!(too_large.status, 413);
    assert!(
        too_large.text().contains("body limit of 7340032 bytes"),
        "{}",
        too_large.text()
    );
    let after = client
        .post("/validate", &fixture("seed-job-create.json"))
        .await
        .unwrap();
    assert_eq!(after.response()["allowed"], false);

    // Probes and metrics, on the TLS port and on the plain-HTTP probe port.
    assert_eq!(conn.get("/livez").await.unwrap().status, 200);
    assert_eq!(conn.get("/readyz").await.unwrap().status, 200);
    let probes = server.probe_addr().unwrap();
    assert_eq!(probe(probes, "/readyz").await.unwrap().status, 200);
    let metrics = probe(probes, "/metrics").await.unwrap().text();
    // Sub-millisecond buckets make p50/p99 below 1 ms readable.
    assert!(
        metrics.contains(
            "syncguard_evaluation_duration_seconds_bucket{le=\"0.00075\",endpoint=\"validate\"}"
        ),
        "{metrics}"
    );
    for (sample, at_least) in [
        (
            "syncguard_admission_requests_total{endpoint=\"validate\",operation=\"CREATE\",kind=\"Job\",decision=\"denied\"}",
            3.0,
        ),
        (
            "syncguard_admission_requests_total{endpoint=\"mutate\",operation=\"CREATE\",kind=\"Job\",decision=\"patched\"}",
            1.0,
        ),
        (
            "syncguard_worker_wait_seconds_count{endpoint=\"validate\"}",
            3.0,
        ),
        (
            "syncguard_admission_requests_total{endpoint=\"validate\",operation=\"\",kind=\"\",decision=\"bad_request\"}",
            2.0,
        ),
        (
            "syncguard_admission_requests_total{endpoint=\"validate\",operation=\"\",kind=\"\",decision=\"too_large\"}",
            1.0,
        ),
        (
            "syncguard_findings_total{endpoint=\"validate\",rule=\"SG201\",action=\"deny\"}",
            3.0,
        ),
        (
            "syncguard_evaluation_duration_seconds_count{endpoint=\"validate\"}",
            5.0,
        ),
        ("syncguard_ready", 1.0),
    ] {
        assert!(
            metric(&metrics, sample) >= at_least,
            "{sample} < {at_least} in\n{metrics}"
        );
    }
    assert!(metric(&metrics, "syncguard_certificate_expiry_timestamp_seconds") > 1.7e9);

    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_app_context_the_seed_job_is_warned_about_and_tls12_still_works() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let server = start(config(certs.path())).await;
    let ca = certs.path().join("ca.crt");
    let client = Client::with_versions(&ca, server.tls_addr(), &[&rustls::version::TLS12]);
    let mut conn = client.connect().await.unwrap();
    assert_eq!(conn.version, rustls::ProtocolVersion::TLSv1_2);
    let response = conn
        .post("/validate", &fixture("seed-job-create.json"))
        .await
        .unwrap()
        .response();
    assert_eq!(response["allowed"], true);
    let w = warnings(&response);
    assert!(
        w[0].contains("no Application context for Job/db-migrate"),
        "{w:?}"
    );
    assert!(w.iter().any(|w| w.starts_with("SG103: ")), "{w:?}");
    assert!(w.iter().all(|w| w.len() <= 120), "{w:?}");
    server.shutdown().await.unwrap();
}

/// A policy directory whose one rule takes a while on ConfigMaps labelled `slow: "true"`
/// (a long comprehension), so a review can be in flight on purpose.
fn slow_policies() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("slow.rego"),
        "package syncguard.rules.slow\n\
         meta := {\"id\": \"SG950\", \"title\": \"slow\", \"severity\": \"low\", \"action\": \"deny\"}\n\
         violations contains {\"msg\": sprintf(\"%d\", [n])} if {\n\
           input.resource.metadata.labels.slow == \"true\"\n\
           n := count([1 | some i in numbers.range(1, 3000); some j in numbers.range(1, 3000)])\n\
         }\n",
    )
    .unwrap();
    dir
}

fn slow_configmap() -> Vec<u8> {
    let mut review: Value = serde_json::from_slice(&fixture("configmap-clean.json")).unwrap();
    review["request"]["object"]["metadata"]["labels"]["slow"] = "true".into();
    serde_json::to_vec(&review).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_over_its_deadline_follows_the_failure_mode_and_is_counted() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let policies = slow_policies();
    let mut config = config(certs.path());
    config.policies = syncguard::policy::builtin::PolicySource::Dir(policies.path().into());
    config.eval_timeout = Duration::from_millis(100);
    // regorus's own deadline is longer on purpose, so the tokio deadline is what fires.
    config.rule_deadline = Duration::from_millis(1000);
    let server = start(config.clone()).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let allowed = client
        .post("/validate", &slow_configmap())
        .await
        .unwrap()
        .response();
    assert_eq!(allowed["allowed"], true, "{allowed}");
    let w = warnings(&allowed);
    assert!(
        w.iter()
            .any(|w| w.contains("could not fully check this object (timeout)")),
        "{w:?}"
    );
    // The server still answers other reviews.
    let normal = client
        .post("/validate", &fixture("configmap-clean.json"))
        .await
        .unwrap();
    assert_eq!(normal.response()["allowed"], true);
    let metrics = probe(server.probe_addr().unwrap(), "/metrics")
        .await
        .unwrap()
        .text();
    // At least the slow review (on a loaded machine the 100 ms deadline may catch another).
    assert!(
        metric(
            &metrics,
            "syncguard_evaluation_errors_total{endpoint=\"validate\",reason=\"timeout\",outcome=\"allowed\"}"
        ) >= 1.0,
        "{metrics}"
    );
    server.shutdown().await.unwrap();

    config.on_error = syncguard::webhook::FailureMode::Deny;
    let server = start(config).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let denied = client
        .post("/validate", &slow_configmap())
        .await
        .unwrap()
        .response();
    assert_eq!(denied["allowed"], false);
    assert_eq!(denied["status"]["code"], 500);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_turns_readiness_off_first_and_lets_in_flight_reviews_finish() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let policies = slow_policies();
    let mut config = config(certs.path());
    config.policies = syncguard::policy::builtin::PolicySource::Dir(policies.path().into());
    // The slow rule runs into regorus's deadline (then once more alone): a review of about a
    // second, answered with "could not be evaluated" under --on-error=allow.
    config.rule_deadline = Duration::from_millis(300);
    config.shutdown_delay = Duration::from_millis(400);
    let server = start(config).await;
    let probes = server.probe_addr().unwrap();
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let mut conn = client.connect().await.unwrap();

    let in_flight = tokio::spawn(async move { conn.post("/validate", &slow_configmap()).await });
    // Let the review reach the evaluator, then ask the server to stop.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stopping = tokio::spawn(server.shutdown());
    eventually("readiness 503", Duration::from_secs(5), || async {
        let r = probe(probes, "/readyz").await.ok()?;
        (r.status == 503 && r.text().contains("shutting down")).then_some(())
    })
    .await;
    // During the shutdown delay new reviews are still served.
    let late = client
        .post("/validate", &fixture("configmap-clean.json"))
        .await
        .unwrap();
    assert_eq!(late.status, 200);

    let answer = in_flight.await.unwrap().unwrap();
    let response = answer.response();
    assert_eq!(response["allowed"], true);
    assert!(
        warnings(&response)
            .iter()
            .any(|w| w.contains("SG950 could not be evaluated")),
        "{response}"
    );
    stopping.await.unwrap().unwrap();
    assert!(
        client.connect().await.is_err(),
        "the listener must be closed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_certificate_the_server_starts_not_ready_and_serves_once_one_appears() {
    let certs = tempfile::tempdir().unwrap();
    let server = start(config(certs.path())).await;
    let probes = server.probe_addr().unwrap();
    let not_ready = probe(probes, "/readyz").await.unwrap();
    assert_eq!(not_ready.status, 503);
    assert!(
        not_ready.text().contains("no serving certificate"),
        "{}",
        not_ready.text()
    );
    // Handshakes fail while there is no certificate (the probes keep answering).
    let ca_dir = tempfile::tempdir().unwrap();
    certs_with_binary(ca_dir.path());
    let early = Client::new(&ca_dir.path().join("ca.crt"), server.tls_addr());
    assert!(early.connect().await.is_err());

    // The Secret arrives (written by `syncguard certs` into the watched directory).
    certs_with_binary(certs.path());
    eventually(
        "readiness after the certificate appears",
        Duration::from_secs(10),
        || async { (probe(probes, "/readyz").await.ok()?.status == 200).then_some(()) },
    )
    .await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let response = client
        .post("/validate", &fixture("configmap-clean.json"))
        .await
        .unwrap()
        .response();
    assert_eq!(response["allowed"], true);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_certificate_at_start_is_an_error_not_a_silent_wait() {
    let certs = tempfile::tempdir().unwrap();
    std::fs::write(certs.path().join("tls.crt"), "not a certificate").unwrap();
    std::fs::write(certs.path().join("tls.key"), "not a key").unwrap();
    let error = syncguard::webhook::start(config(certs.path()))
        .await
        .err()
        .unwrap();
    assert!(error.to_string().contains("tls.crt"), "{error}");
}
