//! Leader election on a `coordination.k8s.io/v1` Lease (kube-lease-manager), so that of several
//! reconciler replicas exactly one writes Events and reports.
//!
//! The outcome is a `watch` channel of `bool` (the [`Context::leader`] receiver) and the
//! `leader` gauge. Safety over liveness: when the lease cannot be confirmed (an API error), this
//! replica steps down at once and rebuilds its lease manager after a backoff; it becomes leader
//! again only when the Lease says so. On shutdown it steps down first, then releases the Lease
//! so a standby takes over without waiting for the lease to expire.
//!
//! [`Context::leader`]: super::Context::leader

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;

use super::context::LeaseConfig;
use super::error::{Error, Result};
use crate::metrics::ReconcilerMetrics;

/// Backoff after a lease error: first wait, doubling, cap.
const BACKOFF: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(30));

/// The lease duration used when [`LeaseConfig::duration`] is shorter than kube-lease-manager's
/// minimum (it needs a whole-second grace period shorter than the duration).
const MIN_DURATION_SECS: u64 = 2;

/// Builds a lease manager for `lease`. The holder renews a third of the duration before expiry
/// (at least one second), which is also the clock skew tolerated between nodes.
pub async fn manager(client: kube::Client, lease: &LeaseConfig) -> Result<LeaseManager> {
    let duration = lease.duration.as_secs().max(MIN_DURATION_SECS);
    let grace = (duration / 3).clamp(1, duration - 1);
    LeaseManagerBuilder::new(client, &lease.name)
        .with_namespace(&lease.namespace)
        .with_identity(&lease.identity)
        .with_duration(duration)
        .with_grace(grace)
        .build()
        .await
        .map_err(Error::Lease)
}

fn publish(
    tx: &watch::Sender<bool>,
    metrics: &ReconcilerMetrics,
    leader: bool,
    lease: &LeaseConfig,
) {
    let was = tx.send_replace(leader);
    metrics.leader.set(i64::from(leader));
    if was != leader {
        tracing::info!(lease = %lease.name, identity = %lease.identity, leader,
            "leadership changed");
    }
}

/// Releases `lease` if this replica holds it (kube-lease-manager reads it first), logging the
/// outcome. Without an answer from the API server this does not return; the runner bounds it
/// ([`super::run::ShutdownBudget::lease`]).
async fn release(manager: &LeaseManager, lease: &LeaseConfig) {
    match manager.release().await {
        Ok(()) => tracing::info!(lease = %lease.name, identity = %lease.identity,
            "leader Lease released"),
        Err(e) => tracing::warn!(lease = %lease.name, error = %e, expires_in = ?lease.duration,
            "cannot release the leader Lease: it expires on its own, then a standby takes over"),
    }
}

/// Campaigns for `lease` until `shutdown` completes, publishing leadership on `tx`. On
/// shutdown it steps down, then releases the Lease if it ever got to read it.
pub async fn run(
    client: kube::Client,
    lease: LeaseConfig,
    tx: watch::Sender<bool>,
    metrics: Arc<ReconcilerMetrics>,
    shutdown: impl Future<Output = ()>,
) {
    let mut shutdown = std::pin::pin!(shutdown);
    let mut delay = BACKOFF.0;
    'rebuild: loop {
        let built = tokio::select! {
            () = &mut shutdown => {
                tracing::info!(lease = %lease.name,
                    "shutting down before the leader Lease could be read: nothing to release");
                break 'rebuild;
            }
            m = manager(client.clone(), &lease) => m,
        };
        let manager = match built {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?delay, "cannot set up the leader lease");
                tokio::select! {
                    () = &mut shutdown => {
                        tracing::info!(lease = %lease.name,
                            "shutting down before the leader Lease could be read: nothing to release");
                        break 'rebuild;
                    }
                    () = tokio::time::sleep(delay) => {}
                }
                delay = (delay * 2).min(BACKOFF.1);
                continue;
            }
        };
        loop {
            tokio::select! {
                () = &mut shutdown => {
                    // Stop writing before anyone else may start.
                    publish(&tx, &metrics, false, &lease);
                    release(&manager, &lease).await;
                    break 'rebuild;
                }
                changed = manager.changed() => match changed {
                    Ok(leader) => {
                        publish(&tx, &metrics, leader, &lease);
                        delay = BACKOFF.0;
                    }
                    Err(e) => {
                        publish(&tx, &metrics, false, &lease);
                        tracing::warn!(error = %e, retry_in = ?delay,
                            "leader lease unconfirmed; stepping down");
                        tokio::select! {
                            () = &mut shutdown => {
                                // The Lease may still name this replica (the error may have
                                // been a renewal that did land): release it if it does.
                                release(&manager, &lease).await;
                                break 'rebuild;
                            }
                            () = tokio::time::sleep(delay) => {}
                        }
                        delay = (delay * 2).min(BACKOFF.1);
                        continue 'rebuild;
                    }
                }
            }
        }
    }
    publish(&tx, &metrics, false, &lease);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::reconciler::fixtures::{LeaseServer, mock_client};

    fn lease(identity: &str) -> LeaseConfig {
        LeaseConfig {
            name: "syncguard-reconciler".into(),
            namespace: "syncguard".into(),
            identity: identity.into(),
            duration: Duration::from_secs(2),
        }
    }

    struct Replica {
        rx: watch::Receiver<bool>,
        metrics: Arc<ReconcilerMetrics>,
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        task: tokio::task::JoinHandle<()>,
    }

    fn replica(server: &LeaseServer, identity: &str) -> Replica {
        let (client, handle) = mock_client();
        server.serve(handle, "syncguard", "syncguard-reconciler");
        let (tx, rx) = watch::channel(false);
        let metrics = Arc::new(ReconcilerMetrics::new());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(run(
            client,
            lease(identity),
            tx,
            metrics.clone(),
            async move {
                let _ = stopped.await;
            },
        ));
        Replica {
            rx,
            metrics,
            stop: Some(stop),
            task,
        }
    }

    async fn becomes(rx: &mut watch::Receiver<bool>, leader: bool) {
        tokio::time::timeout(Duration::from_secs(6), rx.wait_for(|l| *l == leader))
            .await
            .expect("leadership did not change in time")
            .unwrap();
    }

    #[tokio::test]
    async fn a_standby_takes_over_when_the_leader_shuts_down_and_releases_the_lease() {
        let server = LeaseServer::default();
        let mut a = replica(&server, "replica-a");
        becomes(&mut a.rx, true).await;
        assert_eq!(server.holder().as_deref(), Some("replica-a"));
        assert!(a.metrics.encode().contains("syncguard_leader 1"));

        let mut b = replica(&server, "replica-b");
        // b sees a valid lease held by a and stays a follower.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!*b.rx.borrow());

        a.stop.take().unwrap().send(()).unwrap();
        a.task.await.unwrap();
        assert!(!*a.rx.borrow(), "a steps down before releasing");
        assert!(a.metrics.encode().contains("syncguard_leader 0"));

        becomes(&mut b.rx, true).await;
        assert_eq!(server.holder().as_deref(), Some("replica-b"));
        b.stop.take().unwrap().send(()).unwrap();
        b.task.await.unwrap();
    }

    #[tokio::test]
    async fn a_standby_takes_over_when_the_leader_stops_renewing() {
        let server = LeaseServer::default();
        let mut a = replica(&server, "replica-a");
        becomes(&mut a.rx, true).await;
        let mut b = replica(&server, "replica-b");
        // a dies without releasing: its lease simply stops being renewed.
        a.task.abort();
        becomes(&mut b.rx, true).await;
        assert_eq!(server.holder().as_deref(), Some("replica-b"));
        b.stop.take().unwrap().send(()).unwrap();
        b.task.await.unwrap();
    }
}
