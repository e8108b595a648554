//! `HttpServer`: an [`HttpService`] served on a TCP listener with hyper (HTTP/1.1 with
//! keep-alive and pipelining, and HTTP/2), one task per connection.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::connection_clock::ConnectionClock;
use super::detect_deadline::DetectDeadline;
use super::service::{HttpService, HyperService};
use crate::dispatch::Router;

/// How long the request head may take to arrive by default (slow-header protection).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves JSON-RPC over HTTP on a listener: the [`HttpService`] behind hyper's connection
/// builder, HTTP/1.1 (keep-alive, pipelining) and HTTP/2 (prior knowledge) on one port,
/// with a timeout on reading request heads.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use rpcwire_http::http::HttpServer;
///
/// let mut router = rpcwire_core::dispatch::Router::new();
/// router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8545").await?;
/// HttpServer::new(router).with_max_body(1 << 20).serve(listener).await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct HttpServer {
    service: HttpService,
    header_timeout: Duration,
}

impl HttpServer {
    /// A server answering through `router`, with the default limits.
    ///
    /// ```
    /// let server = rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new());
    /// assert_eq!(server.service().max_body(), 1 << 20);
    /// ```
    pub fn new(router: impl Into<Arc<Router>>) -> HttpServer {
        HttpServer::from_service(HttpService::new(router))
    }

    /// A server for an already configured service.
    ///
    /// ```
    /// use rpcwire_http::http::{HttpServer, HttpService};
    /// let service = HttpService::new(rpcwire_core::dispatch::Router::new()).with_max_body(512);
    /// assert_eq!(HttpServer::from_service(service).service().max_body(), 512);
    /// ```
    pub fn from_service(service: HttpService) -> HttpServer {
        HttpServer {
            service,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
        }
    }

    /// Sets the largest request body accepted (see [`HttpService::with_max_body`]).
    ///
    /// ```
    /// let server = rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new())
    ///     .with_max_body(64);
    /// assert_eq!(server.service().max_body(), 64);
    /// ```
    pub fn with_max_body(mut self, bytes: usize) -> HttpServer {
        self.service = self.service.with_max_body(bytes);
        self
    }

    /// Sets how long a request head may take to arrive; a slower client is disconnected.
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new())
    ///     .with_header_timeout(Duration::from_secs(2));
    /// # let _ = server;
    /// ```
    pub fn with_header_timeout(mut self, timeout: Duration) -> HttpServer {
        self.header_timeout = timeout;
        self
    }

    /// The service each connection is served with.
    ///
    /// ```
    /// let server = rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new());
    /// let service: rpcwire_http::http::HttpService = server.service().clone();
    /// # let _ = service;
    /// ```
    pub fn service(&self) -> &HttpService {
        &self.service
    }

    /// Accepts and serves connections until accepting fails.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new()).serve(listener).await
    /// # }
    /// ```
    pub async fn serve(self, listener: TcpListener) -> io::Result<()> {
        self.serve_until(listener, std::future::pending()).await
    }

    /// Accepts and serves connections until `shutdown` completes (connections already
    /// accepted are served to their end on their own tasks) or accepting fails.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let server = rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new());
    /// server.serve_until(listener, async {}).await.unwrap();
    /// # });
    /// ```
    pub async fn serve_until(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        let service = HyperService(self.service.clone());
        self.accept(listener, shutdown, move || service.clone()).await
    }

    /// Accepts and serves connections as [`serve`](HttpServer::serve) does, each request
    /// going through `layer` — a tower layer around the service, such as the fleet's
    /// `FleetLayer` (`redis` feature) or tower-http's — on its way in and out; the same
    /// connections, limits and head deadline.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use rpcwire_http::http::{HttpServer, HttpService};
    ///
    /// // A layer that answers every request itself would do; this one passes them on.
    /// struct PassOn;
    /// impl<S> tower_layer::Layer<S> for PassOn {
    ///     type Service = S;
    ///     fn layer(&self, inner: S) -> S { inner }
    /// }
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8545").await?;
    /// HttpServer::new(rpcwire_core::dispatch::Router::new()).serve_layered(listener, PassOn).await
    /// # }
    /// ```
    pub async fn serve_layered<L, B>(self, listener: TcpListener, layer: L) -> io::Result<()>
    where
        L: tower_layer::Layer<HttpService>,
        L::Service: tower_service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        <L::Service as tower_service::Service<Request<Incoming>>>::Future: Send + 'static,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let service = layer.layer(self.service.clone());
        self.accept(listener, std::future::pending(), move || {
            TowerToHyperService::new(service.clone())
        })
        .await
    }

    /// The accept loop: each connection served with a service from `service`, on a task of
    /// its own, until `shutdown` completes or accepting fails.
    async fn accept<S, B>(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
        service: impl Fn() -> S,
    ) -> io::Result<()>
    where
        S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
            + Send
            + 'static,
        S::Future: Send + 'static,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        tokio::pin!(shutdown);
        loop {
            let (stream, _) = tokio::select! {
                biased;
                () = &mut shutdown => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // The connection went away before it was accepted: keep serving.
                    Err(error) if is_per_connection(&error) => continue,
                    Err(error) => return Err(error),
                },
            };
            let _ = stream.set_nodelay(true);
            let builder = self.connection_builder();
            let service = service();
            let stream = DetectDeadline::new(stream, self.header_timeout);
            tokio::spawn(async move {
                // A connection that fails (reset, timed-out head, bad HTTP) ends alone.
                let _ = builder
                    .serve_connection_with_upgrades(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}

/// The most an HTTP/1 connection's read buffer grows to.
const MAX_READ_BUFFER: usize = 64 << 10;

impl HttpServer {
    /// hyper's builder for one connection: HTTP/1.1 with keep-alive and HTTP/2, the request
    /// head deadline kept on the connection's own clock (one timer per connection, not one
    /// per request).
    fn connection_builder(&self) -> auto::Builder<TokioExecutor> {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(ConnectionClock::new())
            .header_read_timeout(self.header_timeout)
            // hyper's read buffer grows up to ~400 KiB by default and is made anew per
            // connection; bodies past this are read in pieces anyway.
            .max_buf_size(MAX_READ_BUFFER)
            // Not `pipeline_flush`: with it, a WebSocket handshake followed at once by a
            // frame loses its 101 answer (tests/transport_websocket.rs), and hyper's cap on
            // a connection's write buffer is bypassed.
            .keep_alive(true);
        builder
    }
}

/// Accept errors that concern one incoming connection, not the listener.
fn is_per_connection(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted
    )
}
