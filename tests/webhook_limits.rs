//! `syncguard serve` against slow, stalled and too many clients, over real TLS on loopback: the
//! header, body and handshake timeouts close what stalls, the connection cap holds, and the
//! review deadline counts from the request's arrival (the wait for a worker and a slow body
//! included).

mod webhook_support;

use std::time::{Duration, Instant};

use serde_json::Value;
use syncguard::webhook::FailureMode;
use tokio::io::AsyncWriteExt as _;
use webhook_support::*;

/// Far above every configured timeout here: only proves that a connection is closed at all.
const GENEROUS: Duration = Duration::from_secs(30);

/// A raw HTTP/1.1 POST of `body` to /validate: its headers, then its body.
fn raw_post(body: &[u8], close: bool) -> (Vec<u8>, Vec<u8>) {
    let connection = if close { "Connection: close\r\n" } else { "" };
    let head = format!(
        "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         {connection}Content-Length: {}\r\n\r\n",
        body.len()
    );
    (head.into_bytes(), body.to_vec())
}

/// The JSON body of a raw HTTP/1.1 response.
fn response_json(raw: &[u8]) -> Value {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{text}");
    let review: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    review["response"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_clients_are_closed_while_other_reviews_are_answered() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let mut config = config(certs.path());
    config.header_read_timeout = Duration::from_secs(1);
    config.body_read_timeout = Duration::from_secs(1);
    let server = start(config).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let (head, body) = raw_post(&fixture("configmap-clean.json"), false);

    // Half the headers, then nothing.
    let mut half_head = client.tls().await.unwrap();
    half_head.write_all(&head[..head.len() / 2]).await.unwrap();
    half_head.flush().await.unwrap();
    // All the headers and half the body, then nothing.
    let mut half_body = client.tls().await.unwrap();
    half_body.write_all(&head).await.unwrap();
    half_body.write_all(&body[..body.len() / 2]).await.unwrap();
    half_body.flush().await.unwrap();
    // A TCP connection that never starts the TLS handshake.
    let mut no_handshake = tokio::net::TcpStream::connect(server.tls_addr())
        .await
        .unwrap();
    let started = Instant::now();
    let stalled = tokio::spawn(async move {
        let head = read_until_closed(&mut half_head, GENEROUS).await;
        let body = read_until_closed(&mut half_body, GENEROUS).await;
        let handshake = read_until_closed(&mut no_handshake, GENEROUS).await;
        (head, body, handshake)
    });

    // Meanwhile a normal review on another connection is answered.
    let normal = client
        .post("/validate", &fixture("configmap-clean.json"))
        .await
        .unwrap()
        .response();
    assert_eq!(normal["allowed"], true, "{normal}");

    let ((_, head_closed), (body_answer, body_closed), (_, handshake_closed)) =
        stalled.await.unwrap();
    assert!(
        head_closed,
        "a connection stalled in its headers must be closed"
    );
    assert!(
        handshake_closed,
        "a connection without a handshake must be closed"
    );
    assert!(
        body_closed,
        "a connection stalled in its body must be closed"
    );
    let body_answer = String::from_utf8_lossy(&body_answer);
    assert!(
        body_answer.starts_with("HTTP/1.1 408"),
        "a stalled body gets 408: {body_answer}"
    );
    assert!(
        body_answer.contains("body read timeout of 1000 ms"),
        "{body_answer}"
    );
    assert!(started.elapsed() < GENEROUS);

    let metrics = probe(server.probe_addr().unwrap(), "/metrics")
        .await
        .unwrap()
        .text();
    assert_eq!(
        metric(
            &metrics,
            "syncguard_admission_requests_total{endpoint=\"validate\",operation=\"\",kind=\"\",decision=\"timeout\"}"
        ),
        1.0,
        "{metrics}"
    );
    assert!(
        metric(
            &metrics,
            "syncguard_connection_errors_total{reason=\"handshake_timeout\"}"
        ) >= 1.0,
        "{metrics}"
    );
    // Every connection above is gone and its slot given back.
    eventually("no HTTPS connection left open", GENEROUS, || async {
        let text = probe(server.probe_addr().unwrap(), "/metrics")
            .await
            .ok()?
            .text();
        (metric(&text, "syncguard_https_connections") == 0.0).then_some(())
    })
    .await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_connection_cap_a_new_connection_waits_until_one_closes() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let mut config = config(certs.path());
    config.max_connections = 2;
    let server = start(config).await;
    let probes = server.probe_addr().unwrap();
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());

    let mut first = client.connect().await.unwrap();
    let mut second = client.connect().await.unwrap();
    assert_eq!(first.get("/livez").await.unwrap().status, 200);
    assert_eq!(second.get("/livez").await.unwrap().status, 200);

    let third_client = client.clone();
    let mut third = tokio::spawn(async move {
        third_client
            .post("/validate", &fixture("configmap-clean.json"))
            .await
    });
    // With both slots taken the third connection is not even handshaken. (This waits for
    // something that must not happen, so a slow machine cannot make it fail.)
    assert!(
        tokio::time::timeout(Duration::from_secs(1), &mut third)
            .await
            .is_err(),
        "a connection over the cap must wait"
    );
    let metrics = probe(probes, "/metrics").await.unwrap().text();
    assert_eq!(
        metric(&metrics, "syncguard_https_connections"),
        2.0,
        "{metrics}"
    );
    assert!(
        metric(&metrics, "syncguard_connection_limit_waits_total") >= 1.0,
        "{metrics}"
    );
    // The open connections are still served while the third one waits.
    assert_eq!(second.get("/livez").await.unwrap().status, 200);

    drop(first);
    let answer = tokio::time::timeout(GENEROUS, third)
        .await
        .expect("the waiting connection is served once a slot is free")
        .unwrap()
        .unwrap();
    assert_eq!(answer.response()["allowed"], true);
    assert_eq!(second.get("/livez").await.unwrap().status, 200);
    server.shutdown().await.unwrap();
}

/// Takes every worker slot of the server for as long as the returned permit lives, as a long
/// evaluation would.
async fn hold_the_workers(
    server: &syncguard::webhook::Server,
) -> tokio::sync::OwnedSemaphorePermit {
    let workers = server.state().workers().clone();
    let n = u32::try_from(workers.available_permits()).unwrap();
    workers.acquire_many_owned(n).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_busy_worker_counts_against_the_deadline() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let deadline = Duration::from_secs(1);
    for mode in [FailureMode::Allow, FailureMode::Deny] {
        let mut config = config(certs.path());
        config.workers = 1;
        config.eval_timeout = deadline;
        config.on_error = mode;
        let server = start(config).await;
        let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
        let mut conn = client.connect().await.unwrap();

        // The only worker is busy for the next 5 seconds.
        let busy = hold_the_workers(&server).await;
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(busy);
        });

        let sent = Instant::now();
        let answer = conn
            .post("/validate", &fixture("configmap-clean.json"))
            .await
            .unwrap()
            .response();
        let took = sent.elapsed();
        // By the deadline (plus a margin for a loaded machine), not after the busy worker.
        assert!(
            took < deadline + Duration::from_millis(1500),
            "{mode:?}: answered after {took:?}"
        );
        match mode {
            FailureMode::Allow => {
                assert_eq!(answer["allowed"], true, "{answer}");
                assert!(
                    warnings(&answer)
                        .iter()
                        .any(|w| w.contains("could not fully check this object (timeout)")),
                    "{answer}"
                );
            }
            FailureMode::Deny => {
                assert_eq!(answer["allowed"], false, "{answer}");
                assert_eq!(answer["status"]["code"], 500, "{answer}");
                let message = answer["status"]["message"].as_str().unwrap();
                assert!(message.contains("wait for a free worker"), "{message}");
            }
        }

        // Once the worker is free again reviews are evaluated as usual.
        release.await.unwrap();
        let normal = conn
            .post("/validate", &fixture("configmap-clean.json"))
            .await
            .unwrap()
            .response();
        assert_eq!(normal["allowed"], true, "{normal}");
        assert!(warnings(&normal).is_empty(), "{normal}");
        server.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_runs_from_the_request_s_arrival_so_a_slow_body_counts() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let mut config = config(certs.path());
    config.eval_timeout = Duration::from_secs(2);
    let server = start(config).await;
    let _busy = hold_the_workers(&server).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let (head, body) = raw_post(&fixture("configmap-clean.json"), true);
    let mut stream = client.tls().await.unwrap();
    stream.write_all(&head).await.unwrap();
    stream.write_all(&body[..body.len() / 2]).await.unwrap();
    stream.flush().await.unwrap();
    // The rest of the body comes after the whole deadline has passed.
    tokio::time::sleep(Duration::from_secs(3)).await;
    stream.write_all(&body[body.len() / 2..]).await.unwrap();
    stream.flush().await.unwrap();
    let body_sent = Instant::now();
    let (raw, closed) = read_until_closed(&mut stream, GENEROUS).await;
    let took = body_sent.elapsed();
    assert!(closed);
    let answer = response_json(&raw);
    assert_eq!(answer["allowed"], true, "{answer}");
    assert!(
        warnings(&answer)
            .iter()
            .any(|w| w.contains("could not fully check this object (timeout)")),
        "{answer}"
    );
    // At once: had the deadline started only after the body, this would take 2 s more.
    assert!(
        took < Duration::from_secs(1),
        "answered {took:?} after the body"
    );
    server.shutdown().await.unwrap();
}

/// `body` with `metadata.annotations.padding` set on `object` (and `oldObject` when `old`) so
/// that the object's JSON, as the compact body carries it, is exactly `size` bytes.
fn padded(body: &[u8], size: usize, old: bool) -> Vec<u8> {
    let mut review: Value = serde_json::from_slice(body).unwrap();
    for field in ["object", "oldObject"] {
        if field == "oldObject" && !old {
            continue;
        }
        let object = &mut review["request"][field];
        object["metadata"]["annotations"]["padding"] = Value::from("");
        let bare = serde_json::to_vec(object).unwrap().len();
        assert!(bare < size, "{field} is already {bare} bytes");
        object["metadata"]["annotations"]["padding"] = Value::from("p".repeat(size - bare));
        assert_eq!(serde_json::to_vec(object).unwrap().len(), size);
    }
    serde_json::to_vec(&review).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_over_max_object_bytes_is_admitted_unevaluated_with_a_warning() {
    const LIMIT: usize = 64 * 1024;
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let mut config = config(certs.path());
    config.max_object_bytes = LIMIT;
    let server = start(config).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let mut conn = client.connect().await.unwrap();
    let hook = fixture("hook-job-no-deadline.json");
    let not_checked = |w: &String| w.starts_with("syncguard: not checked: the object is");

    // Exactly at the limit: evaluated as usual — the rules warn about the hook and /mutate
    // patches it.
    let at = padded(&hook, LIMIT, false);
    let validated = conn.post("/validate", &at).await.unwrap().response();
    assert_eq!(validated["allowed"], true, "{validated}");
    let evaluated = warnings(&validated);
    assert!(
        evaluated.iter().any(|w| w.starts_with("SG1")),
        "{evaluated:?}"
    );
    assert!(!evaluated.iter().any(not_checked), "{evaluated:?}");
    let mutated = conn.post("/mutate", &at).await.unwrap().response();
    assert!(mutated.get("patch").is_some(), "{mutated}");

    // One byte over: admitted without evaluation, with one warning that says so and why, on
    // both endpoints; no finding, no patch.
    let over = padded(&hook, LIMIT + 1, false);
    for path in ["/validate", "/mutate"] {
        let answer = conn.post(path, &over).await.unwrap().response();
        assert_eq!(answer["allowed"], true, "{path}: {answer}");
        assert_eq!(
            warnings(&answer),
            vec![
                "syncguard: not checked: the object is 65 KiB, over this webhook's limit of \
                 64 KiB (--max-object-bytes)"
                    .to_string()
            ],
            "{path}"
        );
        assert!(answer.get("patch").is_none(), "{path}: {answer}");
        assert!(answer.get("auditAnnotations").is_none(), "{path}: {answer}");
        assert_eq!(
            answer["uid"],
            serde_json::from_slice::<Value>(&hook).unwrap()["request"]["uid"]
        );
    }

    // On UPDATE the old object counts too; far over, the sizes read in MiB.
    let update = padded(&fixture("deployment-update.json"), 2 * 1024 * 1024, true);
    let answer = conn.post("/validate", &update).await.unwrap().response();
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(
        warnings(&answer),
        vec![
            "syncguard: not checked: the object is 2.0 MiB, over this webhook's limit of 64 KiB \
             (--max-object-bytes)"
                .to_string()
        ]
    );

    let metrics = probe(server.probe_addr().unwrap(), "/metrics")
        .await
        .unwrap()
        .text();
    for (sample, expected) in [
        (
            "syncguard_oversized_reviews_total{endpoint=\"validate\"}",
            2.0,
        ),
        (
            "syncguard_oversized_reviews_total{endpoint=\"mutate\"}",
            1.0,
        ),
        // Answered, not evaluated: only the review at the limit was timed on a worker.
        (
            "syncguard_evaluation_duration_seconds_count{endpoint=\"validate\"}",
            1.0,
        ),
        ("syncguard_inflight_review_bytes", 0.0),
    ] {
        assert_eq!(metric(&metrics, sample), expected, "{sample} in\n{metrics}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_wait_for_the_inflight_bytes_budget_inside_their_deadline() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    let deadline = Duration::from_secs(1);
    let mut config = config(certs.path());
    config.eval_timeout = deadline;
    // Room for one configmap-clean review (~1.6 KB) at a time.
    config.max_inflight_bytes = 4096;
    let server = start(config).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let mut conn = client.connect().await.unwrap();
    let body = fixture("configmap-clean.json");

    // Another review holds the whole budget for the next 5 seconds: this one is answered by
    // its deadline with the failure mode, and still carries its own uid.
    let budget = server.state().inflight_bytes().clone();
    let held = budget.clone().acquire_many_owned(4096).await.unwrap();
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        drop(held);
    });
    let sent = Instant::now();
    let answer = conn.post("/validate", &body).await.unwrap().response();
    let took = sent.elapsed();
    assert!(
        took < deadline + Duration::from_millis(1500),
        "answered after {took:?}"
    );
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(
        answer["uid"],
        serde_json::from_slice::<Value>(&body).unwrap()["request"]["uid"]
    );
    assert!(
        warnings(&answer)
            .iter()
            .any(|w| w.contains("could not fully check this object (timeout)")),
        "{answer}"
    );
    release.await.unwrap();

    // With the budget free, several reviews at once all get evaluated answers (one at a time)
    // and give their share back.
    let answers = futures::future::join_all((0..6).map(|_| {
        let client = client.clone();
        let body = body.clone();
        async move { client.post("/validate", &body).await.unwrap().response() }
    }))
    .await;
    for answer in answers {
        assert_eq!(answer["allowed"], true, "{answer}");
        assert!(warnings(&answer).is_empty(), "{answer}");
    }
    assert_eq!(budget.available_permits(), 4096);
    let metrics = probe(server.probe_addr().unwrap(), "/metrics")
        .await
        .unwrap()
        .text();
    assert!(
        metric(&metrics, "syncguard_inflight_bytes_waits_total") >= 1.0,
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, "syncguard_inflight_review_bytes"),
        0.0,
        "{metrics}"
    );
    assert_eq!(
        metric(
            &metrics,
            "syncguard_evaluation_errors_total{endpoint=\"validate\",reason=\"timeout\",outcome=\"allowed\"}"
        ),
        1.0,
        "{metrics}"
    );
    server.shutdown().await.unwrap();
}
