//! The reconciler's life: build the client, load the policies, serve the probes, campaign for
//! the leader Lease, run the Application controller (and any extra tasks, e.g. the background
//! audit) until shutdown, then stop in the order that keeps "one writer" true: writers stop
//! first, the Lease is released last.

use std::future::Future;
use std::sync::Arc;

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

    let controller = tokio::spawn(controller::run(ctx.clone(), Shutdown(work.clone()).wait()));
    let extras: Vec<_> = extra
        .into_iter()
        .map(|task| tokio::spawn(task(ctx.clone(), Shutdown(work.clone()))))
        .collect();

    shutdown.await;
    tracing::info!("shutting down: stopping writers");
    let _ = stop_work.send(true);
    if let Err(e) = controller.await {
        tracing::warn!(error = %e, "the controller task ended abnormally");
    }
    for task in extras {
        if let Err(e) = task.await {
            tracing::warn!(error = %e, "a reconciler task ended abnormally");
        }
    }
    tracing::info!("releasing the lease and stopping probes");
    let _ = stop_rest.send(true);
    if let Some(election) = election
        && let Err(e) = election.await
    {
        tracing::warn!(error = %e, "the leader election task ended abnormally");
    }
    match probes.await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(source)) => Err(Error::Probe {
            addr: probe_addr,
            source,
        }),
        Err(e) => {
            tracing::warn!(error = %e, "the probe server task ended abnormally");
            Ok(())
        }
    }
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
