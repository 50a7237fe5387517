//! The server's life: start (load, bind, serve), hot reload (policies, certificate, app context),
//! graceful shutdown.

use std::future::Future;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use thiserror::Error;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::connections::ConnectionLimit;
use super::context::{AppContext, ContextError, ManifestContext, NoContext};
use super::handler::{probe_router, router};
use super::response::FailureMode;
use super::state::{ReviewOptions, State};
use super::tls::{self, TlsError};
use crate::metrics::Metrics;
use crate::policy::builtin::PolicySource;
use crate::policy::reload::{self as policies, LoadError};
use crate::policy::watch::{DirWatch, fingerprint};

/// Everything `syncguard serve` needs, validated once from flags and environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// HTTPS address for the admission endpoints (and the probes). Port 0 picks a free port
    /// ([`Server::tls_addr`] tells which).
    pub listen: SocketAddr,
    /// Optional plain-HTTP address for `/livez`, `/readyz` and `/metrics` only.
    pub probe_listen: Option<SocketAddr>,
    /// Directory holding `tls.crt` and `tls.key` (a mounted TLS Secret); watched.
    pub cert_dir: PathBuf,
    /// The rules: built in, or a directory (watched and hot-reloaded).
    pub policies: PolicySource,
    /// Rendered manifests giving admission-time Application context; watched.
    pub app_context: Option<PathBuf>,
    /// Keep a read-only cache of live Argo CD Applications as the admission-time context
    /// (`--cluster`); see [`super::cluster`].
    pub cluster: bool,
    /// Namespaces whose Applications the cache watches; empty = all namespaces.
    pub app_namespaces: Vec<String>,
    /// With `cluster`: Argo CD's namespace, where the release it runs and its configuration
    /// (`argocd-cm`, AppProjects) are read.
    pub argocd_namespace: String,
    /// What to answer when a review cannot be finished.
    pub on_error: FailureMode,
    /// Deadline of one review (see [`ReviewOptions::eval_timeout`]).
    pub eval_timeout: Duration,
    /// regorus's own per-object deadline. Kept well below `eval_timeout`: regorus checks it only
    /// between evaluation steps, and a rule that hits it is re-run alone once to find the
    /// culprit, so a runaway evaluation can take about twice this.
    pub rule_deadline: Duration,
    /// Evaluation slots (0: one per CPU).
    pub workers: usize,
    /// Largest accepted request body.
    pub body_limit: usize,
    /// Largest object evaluated (see [`ReviewOptions::max_object_bytes`]).
    pub max_object_bytes: usize,
    /// Memory budget of reviews in flight (see [`ReviewOptions::max_inflight_bytes`]).
    pub max_inflight_bytes: usize,
    /// Bounds how long a client may take, on the HTTPS listener, for the TLS handshake, and then
    /// for the headers of each HTTP/1.1 request (the wait for the next request on a kept-alive
    /// connection included) and for its first request over HTTP/2. Past it the connection is
    /// closed.
    pub header_read_timeout: Duration,
    /// Time for a request's whole body to arrive once its headers are read; then 408 and the
    /// connection is closed.
    pub body_read_timeout: Duration,
    /// Concurrent HTTPS connections; further ones wait (in the listen backlog) until one closes.
    pub max_connections: usize,
    /// After SIGTERM, keep serving (readiness already 503) this long so endpoints controllers
    /// and load balancers stop routing here before connections are closed.
    pub shutdown_delay: Duration,
    /// Then give in-flight reviews at most this long to finish.
    pub shutdown_timeout: Duration,
    /// Quiet time after a file event before reloading (mounted volumes change in bursts).
    pub reload_debounce: Duration,
    /// Re-check watched directories this often even without events.
    pub poll_interval: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([0, 0, 0, 0], 8443)),
            probe_listen: None,
            cert_dir: PathBuf::from("/etc/syncguard/tls"),
            policies: PolicySource::Builtin,
            app_context: None,
            cluster: false,
            app_namespaces: Vec::new(),
            argocd_namespace: "argocd".to_string(),
            on_error: FailureMode::Allow,
            eval_timeout: Duration::from_secs(2),
            rule_deadline: Duration::from_millis(250),
            workers: 0,
            body_limit: super::BODY_LIMIT,
            max_object_bytes: super::MAX_OBJECT_BYTES,
            max_inflight_bytes: super::INFLIGHT_BYTES,
            header_read_timeout: Duration::from_secs(5),
            body_read_timeout: Duration::from_secs(5),
            max_connections: 256,
            shutdown_delay: Duration::ZERO,
            shutdown_timeout: Duration::from_secs(10),
            reload_debounce: Duration::from_millis(250),
            poll_interval: Duration::from_secs(60),
        }
    }
}

/// Why the server could not start or stopped with an error.
#[derive(Debug, Error)]
pub enum ServeError {
    /// The policies do not load or their tests fail.
    #[error("cannot load {source_name}: {error}")]
    Policies {
        /// Which policies.
        source_name: String,
        /// Why.
        error: LoadError,
    },
    /// The app-context directory is unusable.
    #[error("--app-context: {0}")]
    Context(#[from] ContextError),
    /// `--cluster` without a usable kubeconfig or in-cluster service account.
    #[error("--cluster: no Kubernetes client configuration: {0}")]
    Cluster(#[source] kube::Error),
    /// No usable certificate at start.
    #[error("serving certificate: {0}")]
    Tls(#[from] TlsError),
    /// An address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The HTTPS server stopped with an error.
    #[error("the HTTPS server failed: {0}")]
    Io(#[from] std::io::Error),
    /// A server task panicked or was cancelled.
    #[error("a server task ended unexpectedly: {0}")]
    Task(String),
}

/// A running webhook server. Dropping it does not stop it; call [`Server::shutdown`].
pub struct Server {
    state: Arc<State>,
    tls_addr: SocketAddr,
    probe_addr: Option<SocketAddr>,
    handle: axum_server::Handle<SocketAddr>,
    https: JoinHandle<std::io::Result<()>>,
    probes: Option<JoinHandle<std::io::Result<()>>>,
    stop_probes: watch::Sender<bool>,
    reloaders: Vec<JoinHandle<()>>,
    shutdown_delay: Duration,
    shutdown_timeout: Duration,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("tls_addr", &self.tls_addr)
            .field("probe_addr", &self.probe_addr)
            .finish_non_exhaustive()
    }
}

/// Starts the server: loads policies, context and certificate (failing fast if any is
/// unusable), binds the listeners, starts serving and watching. Returns once it accepts
/// connections; readiness is then 200 — or 503 until the certificate appears, when the
/// certificate directory has no `tls.crt`/`tls.key` yet.
pub async fn start(config: Config) -> Result<Server, ServeError> {
    // rustls needs a process-wide provider for anything built without an explicit one; ours are
    // explicit, but libraries may not be. A second call (tests) is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let metrics = Arc::new(Metrics::new());

    let source = config.policies.clone();
    let deadline = config.rule_deadline;
    let (policy_set, policy_fp) =
        tokio::task::spawn_blocking(move || policies::load(&source, deadline))
            .await
            .map_err(|e| ServeError::Task(e.to_string()))?
            .map_err(|error| ServeError::Policies {
                source_name: config.policies.describe(),
                error,
            })?;
    for note in policy_set.notes() {
        tracing::info!(note = %note, "policy load note");
    }
    tracing::info!(
        policies = %config.policies.describe(),
        rules = policy_set.rules().len(),
        backend = ?policy_set.backend(),
        "policies loaded"
    );

    let manifest_context = match &config.app_context {
        Some(dir) => {
            let dir = dir.clone();
            // Fingerprint first, then load: an edit in between only causes one extra reload,
            // whereas a fingerprint taken later (in the reload task) could already include an
            // edit the loaded index lacks, and that edit would never be picked up.
            let (ctx, fp) = tokio::task::spawn_blocking(move || {
                let fp = fingerprint(&dir, true);
                ManifestContext::load(&dir).map(|ctx| (ctx, fp))
            })
            .await
            .map_err(|e| ServeError::Task(e.to_string()))??;
            tracing::info!(context = %ctx.describe(), "application context loaded");
            Some((Arc::new(ctx), fp))
        }
        None => None,
    };
    // The Application cache never delays start or readiness: it fills in the background.
    let cluster = if config.cluster {
        let client = crate::kube_client::client("serve")
            .await
            .map_err(ServeError::Cluster)?;
        tracing::info!(
            namespaces = ?config.app_namespaces,
            "application cache starting; ordering rules (SG2xx) stay silent until it has synced"
        );
        Some(super::cluster::start(
            client,
            &config.app_namespaces,
            &config.argocd_namespace,
        ))
    } else {
        None
    };
    let context: Arc<dyn AppContext> = match (&manifest_context, &cluster) {
        (Some((c, _)), _) => c.clone(),
        (None, Some((c, _))) => Arc::new(c.clone()),
        (None, None) => Arc::new(NoContext),
    };

    let state = State::new(
        policy_set,
        context,
        ReviewOptions {
            on_error: config.on_error,
            eval_timeout: config.eval_timeout,
            body_limit: config.body_limit,
            body_read_timeout: config.body_read_timeout,
            max_object_bytes: config.max_object_bytes,
            max_inflight_bytes: config.max_inflight_bytes,
        },
        config.workers,
        metrics.clone(),
    );

    // A missing certificate is not fatal: the server starts not-ready and the reloader picks the
    // pair up when it appears (a Secret still being issued). An unusable one (garbage, key
    // mismatch) is a configuration error and fails the start.
    let (tls_config, first_seen) = match tls::load(&config.cert_dir) {
        Ok((tls_config, info, pair)) => {
            metrics.certificate_expiry.set(info.not_after as f64);
            state.set_certificate_present(true);
            tracing::info!(dir = %config.cert_dir.display(), serial = %info.serial, not_after = info.not_after, "serving certificate loaded");
            (tls_config, Seen::Pair(pair_fingerprint(&pair)))
        }
        Err(e @ tls::TlsError::Missing { .. }) => {
            tracing::warn!(error = %e, "no serving certificate yet; starting not ready and watching for it");
            (
                tls::placeholder_config()?,
                Seen::Unreadable(e.metric_label()),
            )
        }
        Err(e) => return Err(e.into()),
    };
    let rustls = RustlsConfig::from_config(tls_config);

    // Bind everything before serving anything, so a failure leaves nothing running.
    let probe_listener = match config.probe_listen {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| ServeError::Bind { addr, source })?,
        ),
        None => None,
    };
    let listener = TcpListener::bind(config.listen).map_err(|source| ServeError::Bind {
        addr: config.listen,
        source,
    })?;
    listener.set_nonblocking(true)?;
    let tls_addr = listener.local_addr()?;
    let handle = axum_server::Handle::new();
    let app = router(state.clone());
    // Slow or stalled clients must not hold connections (and file descriptors) for long: the
    // TLS handshake, then the first request (whatever the protocol) and every HTTP/1.1 request's
    // headers get `header_read_timeout`; bodies get `body_read_timeout` in the handler.
    let acceptor =
        RustlsAcceptor::new(rustls.clone()).handshake_timeout(config.header_read_timeout);
    let mut https_server = axum_server::from_tcp(listener)?
        .acceptor(acceptor)
        .handle(handle.clone())
        .first_request_timeout(config.header_read_timeout)
        .accept_error_handler(connection_error_handler(metrics.clone()));
    https_server
        .http_builder()
        .http1()
        .header_read_timeout(config.header_read_timeout);
    let https = tokio::spawn(https_server.serve(ConnectionLimit::new(
        app,
        config.max_connections,
        metrics.clone(),
    )));

    let (stop_probes, mut stop_rx) = watch::channel(false);
    let (probes, probe_addr) = match probe_listener {
        Some(listener) => {
            let bound = listener.local_addr()?;
            let app = probe_router(state.clone());
            let task = tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stop_rx.wait_for(|stop| *stop).await;
                    })
                    .await
            });
            (Some(task), Some(bound))
        }
        None => (None, None),
    };

    let mut reloaders = Vec::new();
    reloaders.push(tokio::spawn(reload_certificates(
        state.clone(),
        config.clone(),
        rustls,
        first_seen,
    )));
    if let (Some(_), Some(fp)) = (config.policies.watched_dir(), policy_fp) {
        reloaders.push(tokio::spawn(reload_policies(
            state.clone(),
            config.clone(),
            fp,
        )));
    }
    if let Some((_, watch)) = cluster {
        reloaders.push(tokio::spawn(watch));
    }
    if let Some((ctx, fp)) = manifest_context {
        reloaders.push(tokio::spawn(reload_context(
            state.clone(),
            config.clone(),
            ctx,
            fp,
        )));
    }

    let probe_label = probe_addr.map_or_else(|| "off".to_string(), |a| a.to_string());
    tracing::info!(https = %tls_addr, probes = %probe_label, "syncguard webhook serving");
    Ok(Server {
        state,
        tls_addr,
        probe_addr,
        handle,
        https,
        probes,
        stop_probes,
        reloaders,
        shutdown_delay: config.shutdown_delay,
        shutdown_timeout: config.shutdown_timeout,
    })
}

/// Runs the server until `shutdown` completes (e.g. SIGTERM), then shuts down gracefully.
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    let mut server = start(config).await?;
    tokio::select! {
        () = shutdown => {}
        result = &mut server.https => {
            // The HTTPS server stopped on its own: report why.
            server.state.begin_shutdown();
            return match result {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(ServeError::Io(e)),
                Err(e) => Err(ServeError::Task(e.to_string())),
            };
        }
    }
    server.shutdown().await
}

impl Server {
    /// The bound HTTPS address.
    pub fn tls_addr(&self) -> SocketAddr {
        self.tls_addr
    }

    /// The bound plain-HTTP probe address, if enabled.
    pub fn probe_addr(&self) -> Option<SocketAddr> {
        self.probe_addr
    }

    /// The shared state (metrics, live policy set, readiness).
    pub fn state(&self) -> &Arc<State> {
        &self.state
    }

    /// Graceful shutdown: readiness 503 at once, keep serving for the shutdown delay, then stop
    /// accepting and let in-flight reviews finish within the shutdown timeout.
    pub async fn shutdown(self) -> Result<(), ServeError> {
        self.state.begin_shutdown();
        tracing::info!(
            delay_ms = self.shutdown_delay.as_millis() as u64,
            timeout_ms = self.shutdown_timeout.as_millis() as u64,
            "shutting down: readiness is 503"
        );
        tokio::time::sleep(self.shutdown_delay).await;
        self.handle.graceful_shutdown(Some(self.shutdown_timeout));
        let https = self.https.await;
        let _ = self.stop_probes.send(true);
        if let Some(probes) = self.probes {
            // Probe connections are short; a stuck one must not hold the process.
            let _ = tokio::time::timeout(self.shutdown_timeout, probes).await;
        }
        for r in self.reloaders {
            r.abort();
        }
        tracing::info!("stopped");
        match https {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ServeError::Io(e)),
            Err(e) => Err(ServeError::Task(e.to_string())),
        }
    }
}

/// Counts (and logs at debug level: scanners and probes fail handshakes all day) connections
/// dropped before their first request.
fn connection_error_handler(
    metrics: Arc<Metrics>,
) -> impl Fn(Option<&SocketAddr>, &std::io::Error) + Send + Sync + 'static {
    move |peer, error| {
        let reason = match (peer, error.kind()) {
            (None, _) => "accept",
            (Some(_), std::io::ErrorKind::TimedOut) => "handshake_timeout",
            (Some(_), _) => "handshake",
        };
        metrics
            .connection_errors
            .get_or_create(&crate::metrics::ConnectionErrorLabels { reason })
            .inc();
        if reason == "accept" {
            tracing::warn!(error = %error, "cannot accept HTTPS connections");
        } else {
            tracing::debug!(peer = ?peer, error = %error, reason, "HTTPS connection dropped");
        }
    }
}

fn pair_fingerprint(pair: &tls::PairBytes) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    pair.cert.hash(&mut h);
    pair.key.hash(&mut h);
    h.finish()
}

/// What the certificate reloader last saw, so one broken state is reported once, not on every
/// event or poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// A pair with this fingerprint (loaded or rejected).
    Pair(u64),
    /// The files could not be read, for this reason.
    Unreadable(&'static str),
}

/// Reloads the serving certificate when `tls.crt`/`tls.key` change. Connections already open
/// keep their session; new handshakes get the new certificate.
async fn reload_certificates(state: Arc<State>, config: Config, rustls: RustlsConfig, first: Seen) {
    let dir = config.cert_dir.clone();
    let mut watch = DirWatch::new(&dir, false, config.reload_debounce, config.poll_interval);
    let metrics = state.metrics().clone();
    let mut last = first;
    while watch.changed().await.is_some() {
        let d = dir.clone();
        let Ok(read) = tokio::task::spawn_blocking(move || tls::read_pair(&d)).await else {
            continue;
        };
        let pair = match read {
            Ok(pair) => pair,
            Err(e) => {
                // Files mid-swap or removed: keep the last good pair.
                let seen = Seen::Unreadable(e.metric_label());
                if seen != last {
                    last = seen;
                    metrics.reload_failed("certificate", e.metric_label());
                    tracing::error!(error = %e, "certificate reload failed; keeping the current certificate");
                }
                continue;
            }
        };
        let seen = Seen::Pair(pair_fingerprint(&pair));
        if seen == last {
            continue;
        }
        last = seen;
        match tls::server_config(&dir, &pair) {
            Ok((config, info)) => {
                rustls.reload_from_config(config);
                metrics.certificate_expiry.set(info.not_after as f64);
                metrics.reloaded("certificate");
                state.set_certificate_present(true);
                tracing::info!(serial = %info.serial, not_after = info.not_after, "serving certificate reloaded");
            }
            Err(e) => {
                metrics.reload_failed("certificate", e.metric_label());
                tracing::error!(error = %e, "certificate reload failed; keeping the current certificate");
            }
        }
    }
}

/// Reloads the policy directory (a whole set or an overlay) when it changes; the new set must
/// load and pass its tests.
async fn reload_policies(state: Arc<State>, config: Config, last: u64) {
    let metrics = state.metrics().clone();
    let options = crate::policy::LoadOptions {
        deadline: config.rule_deadline,
        ..crate::policy::LoadOptions::default()
    };
    let label = config.policies.label().display().to_string();
    policies::follow(
        config.policies.clone(),
        options,
        last,
        config.reload_debounce,
        config.poll_interval,
        |set, elapsed| {
            let rules = set.rules().len();
            state.replace_policies(set);
            metrics.reloaded("policies");
            tracing::info!(
                dir = %label,
                rules,
                elapsed_ms = elapsed.as_millis() as u64,
                "policies reloaded"
            );
        },
        |e| {
            metrics.reload_failed("policies", e.metric_label());
            tracing::error!(error = %e, "policy reload rejected; the previous policies stay live");
        },
    )
    .await;
}

/// Reloads the app-context directory when it changes.
async fn reload_context(
    state: Arc<State>,
    config: Config,
    context: Arc<ManifestContext>,
    loaded: Option<u64>,
) {
    let dir = context.dir().to_path_buf();
    let mut watch = DirWatch::new(&dir, true, config.reload_debounce, config.poll_interval);
    let metrics = state.metrics().clone();
    // The fingerprint taken when the live index was loaded.
    let mut last = loaded;
    while watch.changed().await.is_some() {
        let d = dir.clone();
        let Ok(fp) = tokio::task::spawn_blocking(move || fingerprint(&d, true)).await else {
            continue;
        };
        if fp == last {
            continue;
        }
        last = fp;
        let ctx = context.clone();
        match tokio::task::spawn_blocking(move || ctx.reload()).await {
            Ok(Ok(objects)) => {
                metrics.reloaded("app_context");
                tracing::info!(dir = %dir.display(), objects, "application context reloaded");
            }
            Ok(Err(e)) => {
                metrics.reload_failed("app_context", "load");
                tracing::error!(error = %e, "application context reload failed; keeping the previous one");
            }
            Err(_) => {}
        }
    }
}
