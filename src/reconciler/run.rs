//! The reconciler's life: build the client, load the policies, serve the probes, campaign for
//! the leader Lease, run the Application controller (and any extra tasks, e.g. the background
//! audit) until shutdown, then stop in the order that keeps "one writer" true: writers stop
//! first, the Lease is released last.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::future::BoxFuture;
use tokio::sync::watch;

use super::context::{Config, Context};
use super::error::{Error, Result};
use super::{controller, leader};
use crate::metrics::ReconcilerMetrics;

/// The default of `--shutdown-timeout`: well below the 30 s Kubernetes grants a pod between
/// SIGTERM and SIGKILL (the chart's `terminationGracePeriodSeconds`).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// How the shutdown timeout ([`Config::shutdown_timeout`]) is shared between the steps of the
/// shutdown, which run in this order. A step that outlives its share is cut short and logged
/// with what it did not do, and the next step starts: without an API server the writes and
/// the Lease release cannot succeed, and waiting longer does not change that. The steps add up
/// to 90 % of the timeout; `syncguard reconcile` ends the process at 95 % at the latest and
/// gives the rest to the runtime's teardown, so the process is gone within the timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownBudget {
    total: Duration,
}

impl ShutdownBudget {
    /// The shares of `total`.
    pub fn new(total: Duration) -> Self {
        Self { total }
    }

    /// The whole timeout.
    pub fn total(&self) -> Duration {
        self.total
    }

    /// 40 %: the writers stop — in-flight reconciles finish their Events and the audit pass its
    /// PolicyReports.
    pub fn writers(&self) -> Duration {
        self.total * 4 / 10
    }

    /// 15 %: the last write of the loop state (one ConfigMap apply).
    pub fn flush(&self) -> Duration {
        self.total * 15 / 100
    }

    /// 30 %: stepping down and releasing the leader Lease.
    pub fn lease(&self) -> Duration {
        self.total * 3 / 10
    }

    /// 5 %: the probe server finishes the requests it is serving.
    pub fn probes(&self) -> Duration {
        self.total / 20
    }

    /// 95 %: when `syncguard reconcile` stops waiting for the shutdown (a step that ignored
    /// its share, or a start that never got as far as the shutdown).
    pub fn backstop(&self) -> Duration {
        self.total * 95 / 100
    }

    /// 5 %: the runtime's teardown (blocking threads, e.g. a policy evaluation in progress).
    pub fn teardown(&self) -> Duration {
        self.total / 20
    }
}

/// Tells a task that the reconciler is shutting down.
#[derive(Debug, Clone)]
pub struct Shutdown(watch::Receiver<bool>);

impl Shutdown {
    /// Completes when shutdown starts (also when the runner is gone).
    pub async fn wait(mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }

    /// Whether shutdown has started.
    pub fn is_shutting_down(&self) -> bool {
        *self.0.borrow()
    }
}

/// A task started with the reconciler and stopped with it, given the shared context (check
/// [`Context::is_leader`] before every write) and the shutdown signal. The background audit
/// (`crate::reconciler::audit`) is started this way by `syncguard reconcile` when
/// [`Config::audit_enabled`] is set.
pub type ExtraTask = Box<dyn FnOnce(Arc<Context>, Shutdown) -> BoxFuture<'static, ()> + Send>;

/// Runs the reconciler with the in-cluster configuration or `KUBECONFIG` until `shutdown`.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
    extra: Vec<ExtraTask>,
) -> Result<()> {
    validate(&config)?;
    let client = crate::kube_client::client("reconcile")
        .await
        .map_err(Error::Client)?;
    run_with_client(client, config, shutdown, extra).await
}

/// Checks what flags alone cannot.
pub fn validate(config: &Config) -> Result<()> {
    if let Some(lease) = &config.lease {
        if lease.namespace.trim().is_empty() {
            return Err(Error::Config(
                "leader election needs the Lease namespace (--lease-namespace or POD_NAMESPACE), \
                 or --no-leader-election for a single replica"
                    .into(),
            ));
        }
        if lease.identity.trim().is_empty() {
            return Err(Error::Config(
                "leader election needs an identity (--identity or POD_NAME)".into(),
            ));
        }
    }
    Ok(())
}

/// [`run`] with a given client (tests, or callers that build their own).
pub async fn run_with_client(
    client: kube::Client,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
    extra: Vec<ExtraTask>,
) -> Result<()> {
    let source = config.policies.clone();
    let deadline = config.rule_deadline;
    let (policies, policies_fingerprint) =
        tokio::task::spawn_blocking(move || crate::policy::reload::load(&source, deadline))
            .await
            .map_err(|e| Error::Config(format!("policy loading panicked: {e}")))?
            .map_err(Error::Policies)?;
    tracing::info!(rules = policies.rules().len(), "policies loaded");

    let metrics = Arc::new(ReconcilerMetrics::new());
    let (leader_tx, leader_rx) = watch::channel(config.lease.is_none());
    metrics.leader.set(i64::from(config.lease.is_none()));
    let listener = tokio::net::TcpListener::bind(config.probe_listen)
        .await
        .map_err(|source| Error::Probe {
            addr: config.probe_listen,
            source,
        })?;
    let probe_addr = listener.local_addr().unwrap_or(config.probe_listen);
    let ctx = Arc::new(Context {
        client: client.clone(),
        config: config.clone(),
        metrics: metrics.clone(),
        policies: Arc::new(arc_swap::ArcSwap::from_pointee(policies)),
        policies_fingerprint,
        leader: leader_rx,
        budget: super::budget::ApiBudget::new(config.api_qps, config.api_burst),
        hooks: super::hooks::SharedHooks::default(),
        applications: super::cached::SharedApplications::default(),
    });

    // Two stop signals: writers (controller, extra tasks) stop first; the probes and the lease
    // stop after them.
    let (stop_work, work) = watch::channel(false);
    let (stop_rest, rest) = watch::channel(false);

    let probes = tokio::spawn({
        let router = probe_router(metrics.clone());
        let rest = Shutdown(rest.clone());
        async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(rest.wait())
                .await
        }
    });
    tracing::info!(addr = %probe_addr, "probes and metrics listening");

    let election = config.lease.clone().map(|lease| {
        tokio::spawn(leader::run(
            client.clone(),
            lease,
            leader_tx,
            metrics.clone(),
            Shutdown(rest.clone()).wait(),
        ))
    });

    let reconciler = Arc::new(controller::Reconciler::new(ctx.clone()));
    let controller = tokio::spawn(controller::run(
        reconciler.clone(),
        Shutdown(work.clone()).wait(),
    ));
    let extras: Vec<_> = extra
        .into_iter()
        .map(|task| tokio::spawn(task(ctx.clone(), Shutdown(work.clone()))))
        .collect();

    shutdown.await;
    let budget = ShutdownBudget::new(config.shutdown_timeout);
    let started = Instant::now();
    let mut cut_short: Vec<&'static str> = Vec::new();

    // 1. Writers: the controller lets in-flight reconciles finish, the extra tasks (the audit)
    //    stop at their next await.
    tracing::info!(within = ?budget.writers(), "shutting down: stopping writers");
    let _ = stop_work.send(true);
    let mut writers = vec![(
        "the Application controller",
        "reconciles in flight were cancelled: an Event one was about to write may be missing \
         until the next leader reconciles every Application again",
        controller,
    )];
    writers.extend(extras.into_iter().map(|task| {
        (
            "a reconciler task (the audit)",
            "an audit pass in flight was cancelled: its PolicyReports may be partly written \
             until the next leader's first pass rewrites them",
            task,
        )
    }));
    let joined = tokio::time::timeout(
        budget.writers(),
        futures::future::join_all(writers.iter_mut().map(|(_, _, task)| task)),
    )
    .await;
    match joined {
        Ok(results) => {
            for ((name, _, _), result) in writers.iter().zip(results) {
                if let Err(e) = result {
                    tracing::warn!(task = name, error = %e, "a reconciler task ended abnormally");
                }
            }
        }
        Err(_) => {
            for (name, lost, task) in &writers {
                if !task.is_finished() {
                    task.abort();
                    tracing::warn!(task = name, within = ?budget.writers(),
                        "still writing at the end of its share of --shutdown-timeout (the API \
                         server does not answer?): {lost}");
                }
            }
            cut_short.push("stop writers");
        }
    }
    metrics.ready.set(0);

    // 2. The loop state, once more, while this replica is still the writer.
    if tokio::time::timeout(
        budget.flush(),
        reconciler.flush_state(time::OffsetDateTime::now_utc()),
    )
    .await
    .is_err()
    {
        tracing::warn!(within = ?budget.flush(),
            "the last loop-state write did not finish (the API server does not answer?): the \
             next writer recounts the OutOfSync flips since the previous write (at most 10 s)");
        cut_short.push("final loop-state write");
    }

    // 3. Step down and release the Lease, so that a standby takes over without waiting for it to
    //    expire; then stop the probes.
    tracing::info!(within = ?budget.lease(), "releasing the lease and stopping probes");
    let _ = stop_rest.send(true);
    if let Some(mut election) = election {
        match tokio::time::timeout(budget.lease(), &mut election).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the leader election task ended abnormally");
            }
            Err(_) => {
                election.abort();
                if let Some(lease) = &config.lease {
                    tracing::warn!(lease = %lease.name, within = ?budget.lease(),
                        expires_in = ?lease.duration,
                        "the leader Lease was not released (the API server does not answer): it \
                         expires on its own, then a standby takes over");
                }
                cut_short.push("Lease release");
            }
        }
    }
    let mut probes = probes;
    let served = match tokio::time::timeout(budget.probes(), &mut probes).await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(source))) => Err(Error::Probe {
            addr: probe_addr,
            source,
        }),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "the probe server task ended abnormally");
            Ok(())
        }
        Err(_) => {
            probes.abort();
            cut_short.push("stop probes");
            Ok(())
        }
    };
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if cut_short.is_empty() {
        tracing::info!(elapsed_ms, "shutdown complete");
    } else {
        tracing::warn!(elapsed_ms, cut_short = ?cut_short, timeout = ?budget.total(),
            "shutdown complete; steps cut short at their share of --shutdown-timeout");
    }
    served
}

/// `GET /livez` (the process serves), `GET /readyz` (the Application watch has synced and the
/// policies are loaded) and `GET /metrics` (OpenMetrics text).
pub fn probe_router(metrics: Arc<ReconcilerMetrics>) -> Router {
    Router::new()
        .route("/livez", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(metrics)
}

async fn readyz(State(metrics): State<Arc<ReconcilerMetrics>>) -> Response {
    if metrics.ready.get() == 1 {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: the Application watch has not synced yet\n",
        )
            .into_response()
    }
}

async fn metrics_text(State(metrics): State<Arc<ReconcilerMetrics>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        metrics.encode(),
    )
        .into_response()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::reconciler::context::LeaseConfig;
    use http_body_util::BodyExt;

    async fn body(res: Response) -> String {
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn readyz_follows_the_ready_gauge_and_metrics_are_served() {
        let metrics = Arc::new(ReconcilerMetrics::new());
        let _router = probe_router(metrics.clone());
        assert_eq!(
            readyz(State(metrics.clone())).await.status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        metrics.ready.set(1);
        assert_eq!(
            readyz(State(metrics.clone())).await.status(),
            StatusCode::OK
        );
        let res = metrics_text(State(metrics)).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert!(body(res).await.contains("syncguard_reconciler_ready 1"));
    }

    #[tokio::test]
    async fn the_runner_gets_ready_after_listing_applications_runs_extra_tasks_and_stops_in_order()
    {
        use crate::reconciler::fixtures::{mock_client, respond};
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::Duration;

        let (client, mut handle) = mock_client();
        let server = tokio::spawn(async move {
            let (req, send) = handle.next_request().await.unwrap();
            assert_eq!(req.uri().path(), "/apis/argoproj.io/v1alpha1/applications");
            assert!(!req.uri().query().unwrap_or_default().contains("watch=true"));
            respond(
                send,
                StatusCode::OK,
                &serde_json::json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationList",
                                    "metadata": {"resourceVersion": "7"}, "items": []}),
            );
            // Then the watch: held open (no events) until the client goes away.
            let mut held = Vec::new();
            while let Some((req, send)) = handle.next_request().await {
                assert!(req.uri().query().unwrap_or_default().contains("watch=true"));
                held.push(send);
            }
        });

        let (metrics_tx, metrics_rx) = tokio::sync::oneshot::channel();
        let stopped = Arc::new(AtomicBool::new(false));
        let seen_stop = stopped.clone();
        let extra: ExtraTask = Box::new(move |ctx: Arc<Context>, shutdown: Shutdown| {
            Box::pin(async move {
                let _ = metrics_tx.send(ctx.metrics.clone());
                assert!(
                    ctx.is_leader(),
                    "without election this replica is the writer"
                );
                shutdown.wait().await;
                seen_stop.store(true, Ordering::SeqCst);
            })
        });
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let config = Config {
            probe_listen: "127.0.0.1:0".parse().unwrap(),
            ..Config::default()
        };
        let runner = tokio::spawn(run_with_client(
            client,
            config,
            async move {
                let _ = stop_rx.await;
            },
            vec![extra],
        ));
        let metrics = tokio::time::timeout(Duration::from_secs(30), metrics_rx)
            .await
            .unwrap()
            .unwrap();
        tokio::time::timeout(Duration::from_secs(5), async {
            while metrics.ready.get() != 1 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap();
        assert_eq!(metrics.leader.get(), 1);

        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), runner)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(
            stopped.load(Ordering::SeqCst),
            "the extra task saw the shutdown"
        );
        assert_eq!(metrics.ready.get(), 0, "not ready once stopped");
        server.abort();
    }

    /// A writer that does not stop (a write the API server never answers) is cut short at
    /// its share of the shutdown timeout, and the rest of the shutdown still runs.
    #[tokio::test]
    async fn a_writer_that_does_not_stop_is_cut_short_and_the_shutdown_ends() {
        use crate::reconciler::fixtures::{mock_client, respond};
        use std::sync::atomic::{AtomicBool, Ordering};

        let (client, mut handle) = mock_client();
        let server = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Some((req, send)) = handle.next_request().await {
                if req.uri().query().unwrap_or_default().contains("watch=true") {
                    held.push(send);
                } else {
                    respond(
                        send,
                        StatusCode::OK,
                        &serde_json::json!({"apiVersion": "argoproj.io/v1alpha1",
                            "kind": "ApplicationList", "metadata": {"resourceVersion": "7"},
                            "items": []}),
                    );
                }
            }
        });
        /// Sets its flag when the task holding it is dropped (aborted).
        struct Dropped(Arc<AtomicBool>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let (started_tx, started) = tokio::sync::oneshot::channel();
        let flag = dropped.clone();
        let stuck: ExtraTask = Box::new(move |_ctx: Arc<Context>, _shutdown: Shutdown| {
            Box::pin(async move {
                let _dropped = Dropped(flag);
                let _ = started_tx.send(());
                std::future::pending::<()>().await;
            })
        });
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let config = Config {
            probe_listen: "127.0.0.1:0".parse().unwrap(),
            shutdown_timeout: Duration::from_secs(1),
            ..Config::default()
        };
        let runner = tokio::spawn(run_with_client(
            client,
            config,
            async move {
                let _ = stop_rx.await;
            },
            vec![stuck],
        ));
        tokio::time::timeout(Duration::from_secs(30), started)
            .await
            .unwrap()
            .unwrap();
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), runner)
            .await
            .unwrap_or_else(|_| panic!("the shutdown waited for a writer that never stops"))
            .unwrap()
            .unwrap();
        assert!(
            dropped.load(Ordering::SeqCst),
            "the stuck writer was aborted"
        );
        server.abort();
    }

    #[test]
    fn the_shutdown_steps_and_the_teardown_fit_in_the_timeout() {
        let b = ShutdownBudget::new(Duration::from_secs(10));
        let steps = b.writers() + b.flush() + b.lease() + b.probes();
        assert!(steps < b.backstop(), "{steps:?}");
        assert_eq!(b.backstop() + b.teardown(), b.total());
        assert!(
            b.lease() >= Duration::from_secs(3),
            "room for a GET and a PATCH"
        );
    }

    #[test]
    fn leader_election_without_a_namespace_is_refused() {
        let config = Config {
            lease: Some(LeaseConfig {
                name: "syncguard-reconciler".into(),
                namespace: String::new(),
                identity: "pod-0".into(),
                duration: std::time::Duration::from_secs(15),
            }),
            ..Config::default()
        };
        let err = validate(&config).unwrap_err();
        assert!(err.to_string().contains("--lease-namespace"), "{err}");
        assert!(validate(&Config::default()).is_ok());
    }
}
