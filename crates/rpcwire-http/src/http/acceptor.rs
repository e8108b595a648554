//! `Acceptor`: the one accept loop of rpcwire's HTTP servers — [`HttpServer`](super::HttpServer),
//! the MCP Streamable HTTP server and the MCP gateway all serve their connections through it,
//! with the same protections.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::idle::{serve_watched, Activity, Watched};
use crate::tls::ServerTls;

/// How long the request head may take to arrive by default (slow-header protection).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The most an HTTP/1 connection's read buffer grows to.
const MAX_READ_BUFFER: usize = 64 << 10;

/// The accept loop: each connection — HTTP/1.1 (keep-alive, pipelining, upgrades) or HTTP/2
/// (prior knowledge), told apart by its first bytes, or TLS ([`with_tls`](Acceptor::with_tls))
/// with HTTP/2 or HTTP/1.1 chosen in ALPN — on a task of its own, with:
///
/// - a deadline on the request head (the header timeout): an HTTP/1.1 connection on which
///   no head completes and nothing is under way for that long is closed, and so is one
///   that does not show its protocol in its first bytes within it;
/// - a read buffer bounded at 64 KiB per HTTP/1 connection;
/// - a deadline on the TLS handshake, when serving TLS;
/// - a connection that fails (reset, timed-out head, bad HTTP) ending alone, and accept
///   errors that concern one connection (aborted, reset) skipped.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use rpcwire_http::http::Acceptor;
///
/// // Any tower service of HTTP requests; this one answers 204 to everything.
/// let service = tower_service_fn(|_request| async {
///     let mut response = http::Response::new(http_body_util::Empty::<bytes::Bytes>::new());
///     *response.status_mut() = http::StatusCode::NO_CONTENT;
///     Ok::<_, Infallible>(response)
/// });
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let acceptor = Acceptor::new().with_header_timeout(Duration::from_secs(5));
/// acceptor.serve(listener, service, async {}).await.unwrap(); // stops at once
/// # });
/// # #[derive(Clone)]
/// # struct ServiceFn<F>(F);
/// # fn tower_service_fn<F>(f: F) -> ServiceFn<F> { ServiceFn(f) }
/// # impl<F, Fut, B> tower_service::Service<http::Request<hyper::body::Incoming>> for ServiceFn<F>
/// # where F: Fn(http::Request<hyper::body::Incoming>) -> Fut, Fut: std::future::Future<Output = Result<http::Response<B>, std::convert::Infallible>> {
/// #     type Response = http::Response<B>;
/// #     type Error = std::convert::Infallible;
/// #     type Future = Fut;
/// #     fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), std::convert::Infallible>> { std::task::Poll::Ready(Ok(())) }
/// #     fn call(&mut self, request: http::Request<hyper::body::Incoming>) -> Fut { (self.0)(request) }
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Acceptor {
    header_timeout: Duration,
    tls: Option<ServerTls>,
}

impl Default for Acceptor {
    fn default() -> Acceptor {
        Acceptor::new()
    }
}

impl Acceptor {
    /// An accept loop with the default header timeout ([`DEFAULT_HEADER_TIMEOUT`]).
    ///
    /// ```
    /// let acceptor = rpcwire_http::http::Acceptor::new();
    /// assert_eq!(acceptor.header_timeout(), rpcwire_http::http::DEFAULT_HEADER_TIMEOUT);
    /// ```
    pub fn new() -> Acceptor {
        Acceptor {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            tls: None,
        }
    }

    /// Serves TLS with `tls` on every connection (HTTPS, and WSS for WebSocket upgrades):
    /// its handshake within its deadline, then HTTP/2 when the client asked for it in ALPN,
    /// HTTP/1.1 otherwise; plain HTTP sent to the port gets a `400` that says it speaks
    /// HTTPS.
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// let tls = rpcwire_http::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    /// let acceptor = rpcwire_http::http::Acceptor::new().with_tls(tls);
    /// assert!(acceptor.tls().is_some());
    /// ```
    pub fn with_tls(mut self, tls: ServerTls) -> Acceptor {
        self.tls = Some(tls);
        self
    }

    /// The TLS this loop serves, if any.
    ///
    /// ```
    /// assert!(rpcwire_http::http::Acceptor::new().tls().is_none());
    /// ```
    pub fn tls(&self) -> Option<&ServerTls> {
        self.tls.as_ref()
    }

    /// Sets how long a request head (and a new connection's first bytes) may take to arrive.
    ///
    /// ```
    /// use std::time::Duration;
    /// let acceptor = rpcwire_http::http::Acceptor::new().with_header_timeout(Duration::from_secs(2));
    /// assert_eq!(acceptor.header_timeout(), Duration::from_secs(2));
    /// ```
    pub fn with_header_timeout(mut self, timeout: Duration) -> Acceptor {
        self.header_timeout = timeout;
        self
    }

    /// How long a request head may take to arrive.
    ///
    /// ```
    /// assert_eq!(rpcwire_http::http::Acceptor::new().header_timeout().as_secs(), 10);
    /// ```
    pub fn header_timeout(&self) -> Duration {
        self.header_timeout
    }

    /// Serves `service` (any tower service of HTTP requests: a Streamable HTTP service, a
    /// layered `HttpService`, an axum router) on `listener` until `shutdown` completes
    /// (connections already accepted are served to their end on their own tasks) or
    /// accepting fails.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use rpcwire_http::http::{Acceptor, HttpService};
    /// let service = HttpService::new(rpcwire_core::dispatch::Router::new());
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8545").await?;
    /// Acceptor::new().serve(listener, service, std::future::pending()).await
    /// # }
    /// ```
    pub async fn serve<S, B>(
        &self,
        listener: TcpListener,
        service: S,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()>
    where
        S: tower_service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.accept(listener, shutdown, move || {
            TowerToHyperService::new(service.clone())
        })
        .await
    }

    /// The loop itself: each connection served with a hyper service from `service`.
    pub(crate) async fn accept<S, B>(
        &self,
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
            let service = service();
            let (http1, header_timeout) = (self.http1_builder(), self.header_timeout);
            if let Some(tls) = &self.tls {
                let tls = tls.clone();
                tokio::spawn(async move {
                    let Some((stream, http2)) = tls.accept(stream).await else {
                        return;
                    };
                    let protocol = if http2 { Protocol::Http2 } else { Protocol::Http1 };
                    serve_connection(TokioIo::new(stream), protocol, http1, service, header_timeout).await;
                });
                continue;
            }
            tokio::spawn(async move {
                // Told apart by the first bytes, peeked (not read): hyper is then given the
                // socket itself, with no wrapper to go through on every read and write. A
                // connection that does not show its protocol within the header timeout (it
                // sends nothing, or only the start of the HTTP/2 preface) is closed.
                let Ok(Ok(protocol)) = tokio::time::timeout(header_timeout, protocol_of(&stream)).await
                else {
                    return;
                };
                serve_connection(TokioIo::new(stream), protocol, http1, service, header_timeout).await;
            });
        }
    }

    /// hyper's HTTP/1.1 builder for one connection: keep-alive; no timer, so none of hyper's
    /// deadlines (the request head's is kept by [`serve_watched`], at less cost).
    fn http1_builder(&self) -> hyper::server::conn::http1::Builder {
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .header_read_timeout(None)
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

/// Serves one connection in `protocol` (HTTP/1.1 closed when idle for `header_timeout`); a
/// connection that fails (reset, timed-out head, bad HTTP) ends alone.
async fn serve_connection<I, S, B>(
    io: TokioIo<I>,
    protocol: Protocol,
    http1: hyper::server::conn::http1::Builder,
    service: S,
    header_timeout: Duration,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match protocol {
        Protocol::Http1 => {
            let activity = Arc::new(Activity::default());
            let service = Watched::new(service, activity.clone());
            let connection = http1.serve_connection(io, service).with_upgrades();
            serve_watched(connection, &activity, header_timeout, |connection| {
                connection.graceful_shutdown()
            })
            .await;
        }
        Protocol::Http2 => {
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(io, service)
                .await;
        }
    }
}

/// What an HTTP/2 client with prior knowledge sends first (RFC 9113, section 3.4).
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A connection's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    Http1,
    Http2,
}

/// The protocol of `stream`, from its first bytes, peeked: HTTP/2 when they are the HTTP/2
/// preface, HTTP/1.1 as soon as they differ from it; an error when the connection closes or
/// fails first. While they are only the start of the preface, peeks again a moment later
/// (what is peeked stays readable, so waiting for readiness would not wait).
async fn protocol_of(stream: &tokio::net::TcpStream) -> io::Result<Protocol> {
    let mut first = [0u8; HTTP2_PREFACE.len()];
    loop {
        let peeked = stream.peek(&mut first).await?;
        if peeked == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if first[..peeked] != HTTP2_PREFACE[..peeked] {
            return Ok(Protocol::Http1);
        }
        if peeked == HTTP2_PREFACE.len() {
            return Ok(Protocol::Http2);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Accept errors that concern one incoming connection, not the listener.
fn is_per_connection(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_loop_and_its_head_deadline() {
        assert_eq!(Acceptor::default().header_timeout(), DEFAULT_HEADER_TIMEOUT);
        let acceptor = Acceptor::new().with_header_timeout(Duration::from_millis(250));
        assert_eq!(acceptor.header_timeout(), Duration::from_millis(250));
    }

    #[test]
    fn accept_errors_of_one_connection_are_told_from_the_listeners() {
        for kind in [
            io::ErrorKind::ConnectionAborted,
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::Interrupted,
        ] {
            assert!(is_per_connection(&io::Error::from(kind)), "{kind:?}");
        }
        assert!(!is_per_connection(&io::Error::from(
            io::ErrorKind::PermissionDenied
        )));
    }

    #[tokio::test]
    async fn a_stopped_loop_accepts_nothing_more() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = crate::http::HttpService::new(rpcwire_core::dispatch::Router::new());
        let served = tokio::spawn(async move {
            Acceptor::new()
                .serve(listener, service, async move {
                    let _ = stopped.await;
                })
                .await
        });
        // Served while running: a request gets an answer.
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#;
        let head = format!(
            "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains("-32601"), "{answer}");
        stop.send(()).unwrap();
        served.await.unwrap().unwrap();
        // Stopped: the listener is gone with the loop, so a new connection is refused.
        assert!(tokio::net::TcpStream::connect(address).await.is_err());
    }
}
