//! Shared by the webhook integration tests: certificates from `syncguard certs`, a server on a
//! loopback port, and a TLS client that trusts only the generated `ca.crt`.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use syncguard::policy::builtin::PolicySource;
use syncguard::webhook::{self, Config, FailureMode, Server};
use tokio_rustls::TlsConnector;

/// An AdmissionReview body from `tests/fixtures/admission/`. They are shaped exactly like what the
/// API server sends: defaults applied (a Job always has `backoffLimit: 6` by admission time),
/// and for validating requests the fields PrepareForCreate adds (uid, creationTimestamp, the
/// generated selector and labels); mutating webhooks see the object before those.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/admission")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The seed incident's rendered manifests, used as app context.
pub fn seed_context_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed-incident")
}

/// Runs the real `syncguard certs` binary into `out` for localhost and 127.0.0.1.
pub fn certs_with_binary(out: &Path) {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["certs", "--out"])
        .arg(out)
        .args(["--dns", "localhost", "--dns", "127.0.0.1", "--days", "2"])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "syncguard certs failed");
}

/// A server configuration for tests: loopback, ephemeral ports, fast reloads.
pub fn config(cert_dir: &Path) -> Config {
    Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        probe_listen: Some("127.0.0.1:0".parse().unwrap()),
        cert_dir: cert_dir.to_path_buf(),
        policies: PolicySource::Builtin,
        app_context: None,
        on_error: FailureMode::Allow,
        // Generous: a loaded 2-core CI machine running debug builds in parallel.
        eval_timeout: Duration::from_secs(10),
        // Tests keep connections open across reloads; the tests of the timeouts set their own.
        header_read_timeout: Duration::from_secs(60),
        body_read_timeout: Duration::from_secs(60),
        reload_debounce: Duration::from_millis(50),
        poll_interval: Duration::from_secs(1),
        shutdown_timeout: Duration::from_secs(10),
        ..Config::default()
    }
}

pub async fn start(config: Config) -> Server {
    webhook::start(config).await.unwrap()
}

/// A TLS client that trusts exactly one CA file.
#[derive(Clone)]
pub struct Client {
    config: Arc<rustls::ClientConfig>,
    addr: SocketAddr,
}

/// One connection (HTTP/1.1 keep-alive), with what the server presented.
pub struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    /// The server's leaf certificate, DER.
    pub peer: Vec<u8>,
    /// The negotiated TLS version.
    pub version: rustls::ProtocolVersion,
}

/// A response.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    /// The `response` of a 200 AdmissionReview answer.
    pub fn response(&self) -> Value {
        assert_eq!(self.status, 200, "{}", self.text());
        let v: Value = serde_json::from_slice(&self.body).unwrap();
        v["response"].clone()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl Client {
    pub fn new(ca_crt: &Path, addr: SocketAddr) -> Self {
        Self::with_versions(
            ca_crt,
            addr,
            &[&rustls::version::TLS13, &rustls::version::TLS12],
        )
    }

    pub fn with_versions(
        ca_crt: &Path,
        addr: SocketAddr,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Self {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(ca_crt).unwrap() {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        Self {
            config: Arc::new(config),
            addr,
        }
    }

    /// A bare TLS connection (handshake done, no HTTP), to write raw bytes.
    pub async fn tls(
        &self,
    ) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        TlsConnector::from(self.config.clone())
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .map_err(|e| format!("tls: {e}"))
    }

    pub async fn connect(&self) -> Result<Conn, String> {
        let tls = self.tls().await?;
        let (_, session) = tls.get_ref();
        let peer = session
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| c.to_vec())
            .unwrap_or_default();
        let version = session.protocol_version().unwrap();
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .map_err(|e| format!("http: {e}"))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Conn {
            sender,
            peer,
            version,
        })
    }

    /// One request on a fresh connection.
    pub async fn post(&self, path: &str, body: &[u8]) -> Result<Answer, String> {
        self.connect().await?.post(path, body).await
    }

    pub async fn get(&self, path: &str) -> Result<Answer, String> {
        self.connect().await?.get(path).await
    }

    /// One POST over HTTP/2 (negotiated with ALPN, as the API server does).
    pub async fn post_h2(&self, path: &str, body: &[u8]) -> Result<Answer, String> {
        let mut config = (*self.config).clone();
        config.alpn_protocols = vec![b"h2".to_vec()];
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let tls = TlsConnector::from(Arc::new(config))
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .map_err(|e| format!("tls: {e}"))?;
        let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        if alpn.as_deref() != Some(b"h2") {
            return Err(format!("ALPN negotiated {alpn:?}, not h2"));
        }
        let (mut sender, connection) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(tls),
        )
        .await
        .map_err(|e| format!("h2: {e}"))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let request = hyper::Request::post(format!("https://localhost{path}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::copy_from_slice(body)))
            .unwrap();
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("send: {e}"))?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes()
            .to_vec();
        Ok(Answer { status, body })
    }
}

impl Conn {
    pub async fn post(&mut self, path: &str, body: &[u8]) -> Result<Answer, String> {
        let request = hyper::Request::post(path)
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::copy_from_slice(body)))
            .unwrap();
        self.send(request).await
    }

    pub async fn get(&mut self, path: &str) -> Result<Answer, String> {
        let request = hyper::Request::get(path)
            .header("host", "localhost")
            .body(Full::new(Bytes::new()))
            .unwrap();
        self.send(request).await
    }

    async fn send(&mut self, request: hyper::Request<Full<Bytes>>) -> Result<Answer, String> {
        self.sender
            .ready()
            .await
            .map_err(|e| format!("not ready: {e}"))?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(|e| format!("send: {e}"))?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes()
            .to_vec();
        Ok(Answer { status, body })
    }
}

/// Plain-HTTP GET on the probe port.
pub async fn probe(addr: SocketAddr, path: &str) -> Result<Answer, String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
            .await
            .map_err(|e| format!("http: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = hyper::Request::get(path)
        .header("host", "localhost")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("send: {e}"))?;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes()
        .to_vec();
    Ok(Answer { status, body })
}

/// The value of one sample line of the metrics text (0 when absent).
pub fn metric(text: &str, sample: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(sample)?.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// Reads until the peer closes the connection (EOF, or an error such as a reset or a missing
/// TLS close_notify) or `limit` passes. Returns what was read and whether the connection
/// ended (false: still open at the limit).
pub async fn read_until_closed<S>(stream: &mut S, limit: Duration) -> (Vec<u8>, bool)
where
    S: tokio::io::AsyncRead + Unpin,
{
    use tokio::io::AsyncReadExt as _;
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return (out, false),
            Ok(Ok(0)) | Ok(Err(_)) => return (out, true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// Polls `check` until it returns `Some`, or panics after `timeout` naming `what`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The warnings of a response as strings.
pub fn warnings(response: &Value) -> Vec<String> {
    response["warnings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
