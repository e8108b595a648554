//! Serving a Streamable HTTP service on a listener through the one accept loop
//! ([`Acceptor`], as `HttpServer` serves): each connection (HTTP/1.1 or HTTP/2) on
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
use crate::transport::http::Acceptor;

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

/// Serves `service` on `listener` (over TLS with `tls`) until it fails (`Err`) or `signal` completes (`Ok`),
/// calling `sweep` every `every` (until it returns `false`: what it sweeps is gone).
pub(crate) async fn serve_connections<S>(
    service: S,
    listener: tokio::net::TcpListener,
    tls: Option<crate::transport::tls::ServerTls>,
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
    // The one accept loop, with the plain HTTP server's protections (the head deadline, a
    // connection that sends nothing closed, per-connection errors skipped).
    let acceptor = match tls {
        Some(tls) => Acceptor::new().with_tls(tls),
        None => Acceptor::new(),
    };
    let served = acceptor.serve(listener, service, signal).await;
    sweeper.abort();
    served
}
