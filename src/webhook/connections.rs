//! The cap on concurrent HTTPS connections (`--max-connections`).
//!
//! [`ConnectionLimit`] is the make-service the HTTPS server asks for a service per accepted
//! connection. Before it answers, it takes one of N slots; the slot lives in the connection's
//! service, so it is given back when the connection has closed *and* its last request has been
//! answered. With all N slots taken the accept loop waits (like Go's `netutil.LimitListener`):
//! one accepted connection waits for a slot before its TLS handshake, and the rest wait in the
//! kernel's listen backlog, holding no file descriptor of ours. Nothing already open is touched,
//! so in-flight reviews are never harmed by the cap; the header and body read timeouts make sure
//! slots held by stalled clients come back.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower_service::Service;

use crate::metrics::Metrics;

type Acquire = Pin<Box<dyn Future<Output = Option<OwnedSemaphorePermit>> + Send>>;

/// Hands each accepted connection the router, holding one of `max` connection slots.
pub(super) struct ConnectionLimit {
    router: Router,
    slots: Arc<Semaphore>,
    max: usize,
    metrics: Arc<Metrics>,
    /// The slot taken for the next connection, between `poll_ready` and `call`.
    ready: Option<OwnedSemaphorePermit>,
    /// Waiting for a slot.
    acquiring: Option<Acquire>,
}

impl ConnectionLimit {
    /// At most `max` connections at once (at least 1).
    pub(super) fn new(router: Router, max: usize, metrics: Arc<Metrics>) -> Self {
        let max = max.max(1);
        Self {
            router,
            slots: Arc::new(Semaphore::new(max)),
            max,
            metrics,
            ready: None,
            acquiring: None,
        }
    }
}

impl<T> Service<T> for ConnectionLimit {
    type Response = Limited;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Limited, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if self.ready.is_some() {
            return Poll::Ready(Ok(()));
        }
        let acquiring = match &mut self.acquiring {
            Some(acquiring) => acquiring,
            None => match self.slots.clone().try_acquire_owned() {
                Ok(permit) => {
                    self.ready = Some(permit);
                    return Poll::Ready(Ok(()));
                }
                Err(_) => {
                    self.metrics.connection_limit_waits.inc();
                    tracing::warn!(
                        max_connections = self.max,
                        "HTTPS connection limit reached: new connections wait until one closes"
                    );
                    let slots = self.slots.clone();
                    self.acquiring
                        .insert(Box::pin(async move { slots.acquire_owned().await.ok() }))
                }
            },
        };
        match acquiring.as_mut().poll(cx) {
            Poll::Ready(permit) => {
                self.acquiring = None;
                // `None` only if the semaphore were closed, which it never is: serve uncapped
                // rather than stop accepting.
                self.ready = permit;
                Poll::Ready(Ok(()))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn call(&mut self, _target: T) -> Self::Future {
        self.metrics.https_connections.inc();
        std::future::ready(Ok(Limited {
            router: self.router.clone(),
            _slot: Arc::new(Slot {
                _permit: self.ready.take(),
                metrics: self.metrics.clone(),
            }),
        }))
    }
}

/// One connection's slot: given back (and the gauge lowered) when the last clone of the
/// connection's service is dropped.
struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
    metrics: Arc<Metrics>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.metrics.https_connections.dec();
    }
}

/// The router as one connection's service, holding that connection's slot.
#[derive(Clone)]
pub(super) struct Limited {
    router: Router,
    _slot: Arc<Slot>,
}

impl<R> Service<R> for Limited
where
    Router: Service<R>,
{
    type Response = <Router as Service<R>>::Response;
    type Error = <Router as Service<R>>::Error;
    type Future = <Router as Service<R>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        <Router as Service<R>>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        self.router.call(request)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::time::Duration;

    fn ready(limit: &mut ConnectionLimit) -> impl Future<Output = ()> + '_ {
        poll_fn(move |cx| {
            <ConnectionLimit as Service<()>>::poll_ready(limit, cx).map(|r| r.unwrap())
        })
    }

    #[tokio::test]
    async fn the_next_connection_waits_until_one_of_the_open_ones_is_gone() {
        let metrics = Arc::new(Metrics::new());
        let mut limit = ConnectionLimit::new(Router::new(), 2, metrics.clone());
        ready(&mut limit).await;
        let first = limit.call(()).await.unwrap();
        ready(&mut limit).await;
        let second = limit.call(()).await.unwrap();
        // A request still being answered holds the slot too (the service is cloned per request).
        let in_flight = second.clone();
        drop(second);
        assert_eq!(metrics.https_connections.get(), 2);

        let waited = tokio::time::timeout(Duration::from_millis(200), ready(&mut limit)).await;
        assert!(waited.is_err(), "a third connection must wait");
        assert_eq!(metrics.connection_limit_waits.get(), 1);

        drop(in_flight);
        tokio::time::timeout(Duration::from_secs(10), ready(&mut limit))
            .await
            .expect("the slot of the closed connection is given back");
        let third = limit.call(()).await.unwrap();
        assert_eq!(metrics.https_connections.get(), 2);
        drop((first, third));
        assert_eq!(metrics.https_connections.get(), 0);
    }
}
