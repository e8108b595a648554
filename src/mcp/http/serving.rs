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

/// Serves `service` on `listener` until it fails (`Err`) or `signal` completes (`Ok`),
/// sweeping `sessions` every `sweep`.
pub(crate) async fn serve_connections<S, K>(
    service: S,
    listener: tokio::net::TcpListener,
    sessions: Weak<Sessions<K>>,
    sweep: Duration,
    signal: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<McpBody>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    K: Kept + 'static,
{
    let sweeper = tokio::spawn(async move {
        let mut tick = tokio::time::interval(sweep);
        loop {
            tick.tick().await;
            match sessions.upgrade() {
                Some(sessions) => sessions.sweep(),
                None => break,
            };
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
