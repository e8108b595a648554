//! Serving a Streamable HTTP service on a listener: each connection (HTTP/1.1 or HTTP/2) on
//! a task of its own, idle sessions swept at an interval, until the listener fails or a
//! signal comes.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Weak;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;

use super::body::McpBody;
use super::session::{Kept, Sessions};

/// A sweep of `sessions` for [`serve_connections`]: the idle ones ended while they are there.
pub(crate) fn sweep_of<K: Kept + 'static>(
    sessions: Weak<Sessions<K>>,
) -> impl FnMut() -> bool + Send + 'static {
    move || match sessions.upgrade() {
        Some(sessions) => {
            sessions.sweep();
            true
        }
        None => false,
    }
}

/// Serves `service` on `listener` until it fails (`Err`) or `signal` completes (`Ok`),
/// calling `sweep` every `every` (until it returns `false`: what it sweeps is gone).
pub(crate) async fn serve_connections<S>(
    service: S,
    listener: tokio::net::TcpListener,
    every: Duration,
    mut sweep: impl FnMut() -> bool + Send + 'static,
    signal: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<McpBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let sweeper = tokio::spawn(async move {
        // The first sweep one period after the start (there is nothing to sweep before; and a
        // sweep whose task first runs late on a loaded machine would end sessions idle for
        // less than a period, which the test of a 1 ms idle timeout caught).
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tick.tick().await;
            if !sweep() {
                break;
            }
        }
    });
    let mut signal = std::pin::pin!(signal);
    let served = loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => break Err(error),
            },
            () = &mut signal => break Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let builder = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            let _ = builder
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    };
    sweeper.abort();
    served
}
