//! `HttpServer`: an [`HttpService`] served on a TCP listener through the one accept loop
//! ([`Acceptor`]: HTTP/1.1 with keep-alive and pipelining, and HTTP/2, one task per
//! connection).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use tokio::net::TcpListener;

use super::acceptor::{Acceptor, DEFAULT_HEADER_TIMEOUT};
use super::service::{HttpService, HyperService};
use crate::dispatch::Router;
use crate::tls::ServerTls;

/// Serves JSON-RPC over HTTP on a listener: the [`HttpService`] behind hyper's connection
/// builder, HTTP/1.1 (keep-alive, pipelining) and HTTP/2 (prior knowledge) on one port,
/// with a timeout on reading request heads; over TLS with [`with_tls`](HttpServer::with_tls).
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
    acceptor: Acceptor,
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

    /// The accept loop this server serves on: its header timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new())
    ///     .with_header_timeout(Duration::from_secs(3));
    /// assert_eq!(server.acceptor().header_timeout(), Duration::from_secs(3));
    /// ```
    pub fn acceptor(&self) -> Acceptor {
        self.acceptor.clone()
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
            acceptor: Acceptor::new().with_header_timeout(DEFAULT_HEADER_TIMEOUT),
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
        self.acceptor = self.acceptor.with_header_timeout(timeout);
        self
    }

    /// Serves HTTPS (and WSS) with `tls`: see [`Acceptor::with_tls`].
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// let tls = rpcwire_http::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    /// let server = rpcwire_http::http::HttpServer::new(rpcwire_core::dispatch::Router::new()).with_tls(tls);
    /// assert!(server.acceptor().tls().is_some());
    /// ```
    pub fn with_tls(mut self, tls: ServerTls) -> HttpServer {
        self.acceptor = self.acceptor.with_tls(tls);
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
        self.acceptor()
            .accept(listener, shutdown, move || service.clone())
            .await
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
        self.acceptor()
            .serve(listener, service, std::future::pending())
            .await
    }
}
