//! The floor server: parse the AdmissionReview, answer `allowed: true` with its uid.
//!
//! ```sh
//! syncguard-floor-server --listen 127.0.0.1:8443 --cert-dir DIR
//! ```
//!
//! `DIR` holds `tls.crt` and `tls.key` as written by `syncguard certs`. Routes: `POST /validate`
//! (and `POST /mutate`, same answer), `GET /readyz` (200 once serving). The TLS setup mirrors
//! `src/webhook/tls.rs` (ring provider, TLS 1.3 and 1.2, ALPN h2 + http/1.1) and the runtime
//! mirrors `syncguard serve` (tokio multi-thread, one worker per available CPU), so the only
//! difference under load is what happens between "body read" and "answer written".

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum_server::tls_rustls::RustlsConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

/// Same as syncguard's `BODY_LIMIT`.
const BODY_LIMIT: usize = 7 * 1024 * 1024;

fn main() {
    let mut listen: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 8443));
    let mut cert_dir = PathBuf::from("certs/dev");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value) {
            ("--listen", Some(v)) => {
                listen = v.parse().unwrap_or_else(|e| die(&format!("--listen: {e}")))
            }
            ("--cert-dir", Some(v)) => cert_dir = PathBuf::from(v),
            _ => die("usage: syncguard-floor-server --listen ADDR --cert-dir DIR"),
        }
    }
    let tls = tls_config(&cert_dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("floor")
        .build()
        .unwrap_or_else(|e| die(&format!("runtime: {e}")));
    runtime.block_on(async move {
        let app = Router::new()
            .route("/validate", post(review))
            .route("/mutate", post(review))
            .route("/readyz", get(|| async { "ok\n" }))
            .layer(DefaultBodyLimit::max(BODY_LIMIT));
        eprintln!("floor server on https://{listen}");
        if let Err(e) = axum_server::bind_rustls(listen, RustlsConfig::from_config(tls))
            .serve(app.into_make_service())
            .await
        {
            die(&format!("serve: {e}"));
        }
    });
}

async fn review(body: Bytes) -> Response {
    let review: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}\n")).into_response(),
    };
    let Some(uid) = review.pointer("/request/uid").and_then(Value::as_str) else {
        return (StatusCode::BAD_REQUEST, "no request.uid\n").into_response();
    };
    let answer = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": { "uid": uid, "allowed": true },
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&answer).unwrap_or_default(),
    )
        .into_response()
}

fn tls_config(dir: &std::path::Path) -> Arc<rustls::ServerConfig> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("tls.crt"))
        .and_then(|it| it.collect::<Result<_, _>>())
        .unwrap_or_else(|e| die(&format!("{}/tls.crt: {e}", dir.display())));
    let key = PrivateKeyDer::from_pem_file(dir.join("tls.key"))
        .unwrap_or_else(|e| die(&format!("{}/tls.key: {e}", dir.display())));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))
        .unwrap_or_else(|e| die(&format!("TLS: {e}")));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}

fn die(message: &str) -> ! {
    eprintln!("syncguard-floor-server: {message}");
    std::process::exit(2);
}
