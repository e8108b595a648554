//! `Connections`: an HTTP client's connections to its one server — hyper's connection API
//! with a stack of idle HTTP/1.1 senders, or one HTTP/2 connection that carries every
//! request at once, over TCP or TLS — instead of a pool keyed by host that hashes the key,
//! and spawns a task to wait for the connection, at every request.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::HOST;
use http::{Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::endpoint::Endpoint;
use crate::sync::lock_unpoisoned;
use crate::tls::{ClientTls, Offer};

/// How many idle HTTP/1.1 connections are kept at most: more are closed when their
/// exchange ends.
pub const MAX_IDLE: usize = 128;

/// How many requests an HTTP/2 connection carries at once by default (fewer when the
/// server says so); more wait for one to end.
pub const DEFAULT_MAX_STREAMS: usize = 100;

/// Which HTTP a client speaks to its server.
///
/// ```
/// use rpcwire_http::http::{HttpClientTransport, HttpVersion};
/// let transport = HttpClientTransport::new("https://node.example/".parse().unwrap())
///     .unwrap()
///     .with_http_version(HttpVersion::Http1);
/// # let _ = transport;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpVersion {
    /// Over TLS, HTTP/2 when the server offers it (ALPN), else HTTP/1.1; over plain TCP,
    /// HTTP/1.1.
    #[default]
    Auto,
    /// HTTP/1.1 only.
    Http1,
    /// HTTP/2 only: over TLS asked for in ALPN (a server that does not agree is refused),
    /// over plain TCP with prior knowledge (h2c).
    Http2,
}

/// The connection side of one HTTP/1.1 exchange.
type Sender1 = http1::SendRequest<Full<Bytes>>;
/// The connection side of every HTTP/2 exchange of one connection.
type Sender2 = http2::SendRequest<Full<Bytes>>;

/// Why a request got no response.
#[derive(Debug)]
pub struct SendFailure {
    pub reason: String,
    /// `false` when the request was never sent: no connection could be made, or the
    /// connection closed before the request was written.
    pub reached: bool,
}

/// What the connections have cost so far.
///
/// ```
/// let transport = rpcwire_http::http::HttpClientTransport::new("http://127.0.0.1:9/".parse().unwrap()).unwrap();
/// let stats = transport.stats();
/// assert_eq!((stats.connections, stats.tls_handshakes, stats.tls_resumed), (0, 0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// Connections opened (TCP).
    pub connections: u64,
    /// TLS handshakes completed, resumed ones included.
    pub tls_handshakes: u64,
    /// Of those, the ones that resumed an earlier session (no certificate sent).
    pub tls_resumed: u64,
    /// Connections that agreed on HTTP/2.
    pub http2: u64,
}

/// The connections to one server; requests go out in origin form (`/path?query`) with the
/// `Host` header set over HTTP/1.1, in absolute form over HTTP/2.
pub struct Connections {
    endpoint: Endpoint,
    /// The request target in absolute form, for HTTP/2.
    absolute: Uri,
    /// For `https://`: the configuration given (else the system's roots).
    tls: Option<ClientTls>,
    version: HttpVersion,
    /// Senders of HTTP/1.1 connections whose last exchange ended, the most recent last.
    idle: Mutex<Vec<Sender1>>,
    /// The HTTP/2 connection every request goes on, once one is open.
    multiplexed: Mutex<Option<Sender2>>,
    /// One HTTP/2 connection opened at a time: requests that find none wait for it.
    opening: tokio::sync::Mutex<()>,
    /// The bound on HTTP/2 requests under way.
    streams: Arc<Semaphore>,
    max_streams: usize,
    /// What the last connection agreed on: [`UNKNOWN`], [`AGREED_HTTP1`] or [`AGREED_HTTP2`].
    agreed: AtomicU8,
    opened: AtomicU64,
    handshakes: AtomicU64,
    resumed: AtomicU64,
    http2: AtomicU64,
}

const UNKNOWN: u8 = 0;
const AGREED_HTTP1: u8 = 1;
const AGREED_HTTP2: u8 = 2;

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("host", &self.endpoint.host)
            .field("port", &self.endpoint.port)
            .field("tls", &self.endpoint.secure)
            .field("version", &self.version)
            .field("idle", &lock_unpoisoned(&self.idle).len())
            .field("multiplexed", &lock_unpoisoned(&self.multiplexed).is_some())
            .finish()
    }
}

/// A connection lent to one exchange: given back with [`Lease::give_back`] once its
/// response body has been read whole; dropped otherwise, which closes an HTTP/1.1
/// connection (an HTTP/2 one only ends the stream).
pub struct Lease<'c> {
    connections: &'c Connections,
    held: Held,
}

enum Held {
    Http1(Sender1),
    /// The HTTP/2 stream's place under the bound.
    Http2(#[allow(dead_code)] OwnedSemaphorePermit),
}

impl Lease<'_> {
    /// Keeps the connection for the next request, unless it closed or enough are idle.
    pub fn give_back(self) {
        let Held::Http1(sender) = self.held else { return };
        if sender.is_closed() {
            return;
        }
        let mut idle = lock_unpoisoned(&self.connections.idle);
        if idle.len() >= MAX_IDLE {
            // Connections the server closed deep in the stack make room.
            idle.retain(|sender| !sender.is_closed());
        }
        if idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }
}

/// A connection just opened.
enum Link {
    Http1(Sender1),
    Http2(Sender2),
}

/// What sending on the HTTP/2 connection came to: an answer, a failure, or the request
/// back, unsent, because the connection had ended.
enum Sent<'c> {
    Answered(Response<Incoming>, Lease<'c>),
    Failed(SendFailure),
    Unsent(Request<Full<Bytes>>),
}

impl Connections {
    /// Connections to `endpoint`, TLS through the system's roots when it is `https://`,
    /// HTTP/2 when the server offers it there.
    pub fn new(endpoint: Endpoint) -> Connections {
        let absolute = Uri::builder()
            .scheme(if endpoint.secure { "https" } else { "http" })
            .authority(endpoint.authority.as_bytes())
            .path_and_query(endpoint.target.to_string())
            .build()
            .unwrap_or_else(|_| endpoint.target.clone());
        Connections {
            endpoint,
            absolute,
            tls: None,
            version: HttpVersion::Auto,
            idle: Mutex::default(),
            multiplexed: Mutex::default(),
            opening: tokio::sync::Mutex::new(()),
            streams: Arc::new(Semaphore::new(DEFAULT_MAX_STREAMS)),
            max_streams: DEFAULT_MAX_STREAMS,
            agreed: AtomicU8::new(UNKNOWN),
            opened: AtomicU64::new(0),
            handshakes: AtomicU64::new(0),
            resumed: AtomicU64::new(0),
            http2: AtomicU64::new(0),
        }
    }

    /// New connections with this one's settings (none of its open connections).
    pub fn fresh(&self) -> Connections {
        Connections::new(self.endpoint.clone())
            .with_tls(self.tls.clone())
            .with_version(self.version)
            .with_max_streams(self.max_streams)
    }

    /// TLS through `tls` (`None`: the system's roots).
    pub fn with_tls(mut self, tls: Option<ClientTls>) -> Connections {
        self.tls = tls;
        self
    }

    /// Speaks `version`.
    pub fn with_version(mut self, version: HttpVersion) -> Connections {
        self.version = version;
        self
    }

    /// At most `streams` requests at once on an HTTP/2 connection (at least 1).
    pub fn with_max_streams(mut self, streams: usize) -> Connections {
        self.max_streams = streams.max(1);
        self.streams = Arc::new(Semaphore::new(self.max_streams));
        self
    }

    /// The server this talks to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// What the connections have cost so far.
    pub fn stats(&self) -> ConnectionStats {
        ConnectionStats {
            connections: self.opened.load(Ordering::Relaxed),
            tls_handshakes: self.handshakes.load(Ordering::Relaxed),
            tls_resumed: self.resumed.load(Ordering::Relaxed),
            http2: self.http2.load(Ordering::Relaxed),
        }
    }

    /// Sends `request` (its method, headers and body; the target and `Host` are set here) on
    /// the HTTP/2 connection, an idle HTTP/1.1 one, or a new one when none is ready — also
    /// when an open one turns out closed before the request was written (the server closed
    /// it meanwhile).
    pub async fn send(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<(Response<Incoming>, Lease<'_>), SendFailure> {
        if let Some(sender) = self.multiplexed_sender() {
            match self.send_http2(sender, request).await {
                Sent::Answered(response, lease) => return Ok((response, lease)),
                Sent::Failed(failure) => return Err(failure),
                Sent::Unsent(unsent) => request = unsent,
            }
        }
        while let Some((mut sender, ready)) = self.idle_sender() {
            // One whose last exchange has only just ended: its connection is about to take
            // the next request (or turns out closed).
            if !ready && sender.ready().await.is_err() {
                continue;
            }
            match self.send_http1(sender, request).await {
                Ok(answered) => return Ok(answered),
                Err(Ok(unsent)) => request = unsent,
                Err(Err(failure)) => return Err(failure),
            }
        }
        let link = if self.expects_http2() {
            let _opening = self.opening.lock().await;
            // Opened by another request while this one waited.
            if let Some(sender) = self.multiplexed_sender() {
                match self.send_http2(sender, request).await {
                    Sent::Answered(response, lease) => return Ok((response, lease)),
                    Sent::Failed(failure) => return Err(failure),
                    Sent::Unsent(unsent) => request = unsent,
                }
            }
            self.connect().await?
        } else {
            self.connect().await?
        };
        match link {
            Link::Http1(sender) => match self.send_http1(sender, request).await {
                Ok(answered) => Ok(answered),
                Err(Ok(_unsent)) => Err(SendFailure {
                    reason: "HTTP request failed: the connection closed before the request was sent"
                        .to_owned(),
                    reached: false,
                }),
                Err(Err(failure)) => Err(failure),
            },
            Link::Http2(sender) => {
                *lock_unpoisoned(&self.multiplexed) = Some(sender.clone());
                match self.send_http2(sender, request).await {
                    Sent::Answered(response, lease) => Ok((response, lease)),
                    Sent::Failed(failure) => Err(failure),
                    Sent::Unsent(_) => Err(SendFailure {
                        reason:
                            "HTTP request failed: the HTTP/2 connection closed before the request was sent"
                                .to_owned(),
                        reached: false,
                    }),
                }
            }
        }
    }

    /// Sends on an HTTP/1.1 connection: the answer, or the request back when it was not
    /// written (the connection had closed), or why it failed.
    async fn send_http1(
        &self,
        mut sender: Sender1,
        mut request: Request<Full<Bytes>>,
    ) -> Result<(Response<Incoming>, Lease<'_>), Result<Request<Full<Bytes>>, SendFailure>> {
        *request.uri_mut() = self.endpoint.target.clone();
        request
            .headers_mut()
            .insert(HOST, self.endpoint.authority.clone());
        match sender.try_send_request(request).await {
            Ok(response) => Ok((
                response,
                Lease {
                    connections: self,
                    held: Held::Http1(sender),
                },
            )),
            Err(mut failure) => match failure.take_message() {
                Some(unsent) => Err(Ok(unsent)),
                None => Err(Err(failed(&failure.into_error(), true))),
            },
        }
    }

    /// Sends on the HTTP/2 connection, within the bound on streams; a connection found
    /// ended is forgotten.
    async fn send_http2(&self, mut sender: Sender2, mut request: Request<Full<Bytes>>) -> Sent<'_> {
        let Ok(permit) = self.streams.clone().acquire_owned().await else {
            unreachable!("the semaphore is never closed")
        };
        *request.uri_mut() = self.absolute.clone();
        request.headers_mut().remove(HOST);
        if sender.ready().await.is_err() {
            self.forget_multiplexed();
            return Sent::Unsent(request);
        }
        match sender.try_send_request(request).await {
            Ok(response) => Sent::Answered(
                response,
                Lease {
                    connections: self,
                    held: Held::Http2(permit),
                },
            ),
            Err(mut failure) => match failure.take_message() {
                Some(unsent) => {
                    self.forget_multiplexed();
                    Sent::Unsent(unsent)
                }
                None => Sent::Failed(failed(&failure.into_error(), true)),
            },
        }
    }

    /// The open HTTP/2 connection, if any (a closed one is forgotten). Without a lock when
    /// no connection has agreed on HTTP/2 (every HTTP/1.1 request).
    fn multiplexed_sender(&self) -> Option<Sender2> {
        if self.agreed.load(Ordering::Relaxed) != AGREED_HTTP2 {
            return None;
        }
        let mut multiplexed = lock_unpoisoned(&self.multiplexed);
        if multiplexed.as_ref().is_some_and(Sender2::is_closed) {
            *multiplexed = None;
        }
        multiplexed.clone()
    }

    fn forget_multiplexed(&self) {
        let mut multiplexed = lock_unpoisoned(&self.multiplexed);
        if multiplexed.as_ref().is_some_and(Sender2::is_closed) {
            *multiplexed = None;
        }
    }

    /// Whether a new connection will likely be HTTP/2 (so that one is opened at a time).
    fn expects_http2(&self) -> bool {
        match self.version {
            HttpVersion::Http1 => false,
            HttpVersion::Http2 => true,
            HttpVersion::Auto => self.endpoint.secure && self.agreed.load(Ordering::Relaxed) != AGREED_HTTP1,
        }
    }

    /// The most recently used idle connection that is ready for a request (`true`), else
    /// the most recent one not ready yet (`false`); closed ones on top are dropped (the rest
    /// when the stack is full).
    fn idle_sender(&self) -> Option<(Sender1, bool)> {
        let mut idle = lock_unpoisoned(&self.idle);
        while idle.last().is_some_and(Sender1::is_closed) {
            idle.pop();
        }
        // From the top: the usual pick is the first one looked at.
        match idle.iter().rposition(Sender1::is_ready) {
            Some(at) => Some((idle.remove(at), true)),
            None => idle.pop().map(|sender| (sender, false)),
        }
    }

    /// A new connection — TCP, TLS for `https://`, then HTTP/1.1 or HTTP/2 as agreed — its
    /// driving task spawned on the current runtime.
    ///
    /// Boxed: opening (TCP, TLS, the HTTP/2 handshake) is a future of ~7.5 KB, which inline
    /// would make every request's future — the gateway's whole forwarding chain, boxed and
    /// moved per request — that much larger, for a step taken once per connection.
    fn connect(&self) -> Pin<Box<dyn Future<Output = Result<Link, SendFailure>> + Send + '_>> {
        Box::pin(self.open())
    }

    /// See [`connect`](Connections::connect).
    async fn open(&self) -> Result<Link, SendFailure> {
        let not_reached = |reason: String| SendFailure {
            reason: format!("HTTP request failed: {reason}"),
            reached: false,
        };
        let (host, port) = (self.endpoint.host.as_str(), self.endpoint.port);
        let stream = tokio::net::TcpStream::connect((host, port))
            .await
            .map_err(|error| not_reached(format!("cannot connect to {host}:{port}: {error}")))?;
        let _ = stream.set_nodelay(true);
        self.opened.fetch_add(1, Ordering::Relaxed);
        if !self.endpoint.secure {
            return match self.version {
                HttpVersion::Http2 => self.http2_over(stream).await,
                _ => http1_over(stream).await,
            };
        }
        let offer = match self.version {
            HttpVersion::Auto => Offer::Any,
            HttpVersion::Http1 => Offer::Http1,
            HttpVersion::Http2 => Offer::Http2,
        };
        let tls = self.tls.clone().unwrap_or_default();
        let stream = tls
            .connect(host, stream, offer)
            .await
            .map_err(|error| not_reached(error.to_string()))?;
        let session = stream.get_ref().1;
        self.handshakes.fetch_add(1, Ordering::Relaxed);
        if session.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
            self.resumed.fetch_add(1, Ordering::Relaxed);
        }
        let http2 = session.alpn_protocol() == Some(b"h2");
        if self.version == HttpVersion::Http2 && !http2 {
            return Err(not_reached(format!(
                "{host}:{port} did not agree to HTTP/2 in its TLS handshake (ALPN)"
            )));
        }
        if http2 {
            self.http2_over(stream).await
        } else {
            self.agreed.store(AGREED_HTTP1, Ordering::Relaxed);
            http1_over(stream).await
        }
    }

    /// HTTP/2 over `io`.
    async fn http2_over<I>(&self, io: I) -> Result<Link, SendFailure>
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, connection) = http2::Builder::new(TokioExecutor::new())
            .adaptive_window(true)
            .handshake(TokioIo::new(io))
            .await
            .map_err(|error| failed(&error, false))?;
        tokio::spawn(async move {
            // Ends when the server closes the connection or every sender is dropped.
            let _ = connection.await;
        });
        self.agreed.store(AGREED_HTTP2, Ordering::Relaxed);
        self.http2.fetch_add(1, Ordering::Relaxed);
        Ok(Link::Http2(sender))
    }
}

/// HTTP/1.1 over `io`.
async fn http1_over<I>(io: I) -> Result<Link, SendFailure>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(|error| failed(&error, false))?;
    tokio::spawn(async move {
        // Ends when the server closes the connection or every sender is dropped.
        let _ = connection.await;
    });
    Ok(Link::Http1(sender))
}

/// Why `error` ended a request; `reached`: whether the request may have been written. A
/// TLS refusal that came after the handshake (a server that refuses the client's
/// certificate says so when the first request is read) is said as a handshake's is.
fn failed(error: &hyper::Error, reached: bool) -> SendFailure {
    let mut reason = format!("HTTP request failed: {error}");
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        // Over HTTP/2 the I/O error is inside h2's.
        let io = cause
            .downcast_ref::<std::io::Error>()
            .or_else(|| cause.downcast_ref::<h2::Error>().and_then(h2::Error::get_io));
        if let Some(io) = io.filter(|io| crate::tls::is_tls_refusal(io)) {
            reason = format!(
                "HTTP request failed: {}",
                crate::tls::describe_client_failure(io, "the server", 1)
            );
            break;
        }
        reason = format!("{reason}: {cause}");
        source = cause.source();
    }
    SendFailure { reason, reached }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connections_to(url: &Uri) -> Connections {
        Connections::new(Endpoint::http(url).unwrap())
    }

    #[test]
    fn http2_requests_go_in_absolute_form() {
        let connections = connections_to(&"https://[::1]:8545/rpc?key=1".parse().unwrap());
        assert_eq!(connections.absolute, "https://[::1]:8545/rpc?key=1");
        assert!(
            connections.expects_http2(),
            "TLS offers HTTP/2 until a server refuses it"
        );
        let connections = connections_to(&"http://node.example".parse().unwrap());
        assert_eq!(connections.absolute, "http://node.example/");
        assert!(
            !connections.expects_http2(),
            "plain TCP speaks HTTP/1.1 unless told"
        );
        assert!(connections.with_version(HttpVersion::Http2).expects_http2());
        let fresh = connections_to(&"http://node.example".parse().unwrap())
            .with_max_streams(0)
            .fresh();
        assert_eq!(fresh.max_streams, 1);
        assert!(format!("{fresh:?}").contains("idle: 0"));
    }

    /// A server answering every POST with its body, counting the connections it accepts;
    /// with `close`, each answer closes its connection.
    async fn echo_server(close: bool) -> (Uri, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use http_body_util::BodyExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/rpc", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let service = hyper::service::service_fn(move |request: Request<Incoming>| async move {
                    assert_eq!(request.uri(), "/rpc");
                    assert!(request.headers().contains_key(HOST));
                    let body = request.into_body().collect().await?.to_bytes();
                    let mut response = Response::new(Full::new(body));
                    if close {
                        response.headers_mut().insert(
                            http::header::CONNECTION,
                            http::header::HeaderValue::from_static("close"),
                        );
                    }
                    Ok::<_, hyper::Error>(response)
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        (url, accepted)
    }

    async fn exchange(connections: &Connections, text: &'static [u8]) -> Bytes {
        use http_body_util::BodyExt;
        let (response, lease) = connections
            .send(Request::new(Full::new(Bytes::from_static(text))))
            .await
            .unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        lease.give_back();
        body
    }

    #[tokio::test]
    async fn one_connection_serves_requests_one_after_another() {
        let (url, accepted) = echo_server(false).await;
        let connections = connections_to(&url);
        for text in [&b"[1]"[..], b"[2]", b"[3]", b"[4]"] {
            assert_eq!(&exchange(&connections, text).await[..], text);
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(format!("{connections:?}").contains("idle: 1"));
        // Two at once take two connections, both kept.
        let (a, b) = tokio::join!(exchange(&connections, b"[5]"), exchange(&connections, b"[6]"));
        assert_eq!((&a[..], &b[..]), (&b"[5]"[..], &b"[6]"[..]));
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert!(format!("{connections:?}").contains("idle: 2"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_connection_serves_requests_one_after_another_across_threads() {
        // The connection's task may run on the other thread, behind the caller.
        let (url, accepted) = echo_server(false).await;
        let connections = connections_to(&url);
        for _ in 0..200 {
            assert_eq!(&exchange(&connections, b"[1]").await[..], b"[1]");
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_not_used_again() {
        let (url, accepted) = echo_server(true).await;
        let connections = connections_to(&url);
        for text in [&b"[1]"[..], b"[2]", b"[3]"] {
            assert_eq!(&exchange(&connections, text).await[..], text);
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_refused_connection_is_not_reached() {
        // A port nobody listens on: bound, then closed.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let connections = connections_to(&format!("http://{address}/").parse().unwrap());
        let failure = connections
            .send(Request::new(Full::new(Bytes::from_static(b"{}"))))
            .await
            .err()
            .unwrap();
        assert!(!failure.reached, "{}", failure.reason);
        assert!(failure.reason.contains("cannot connect"), "{}", failure.reason);
    }
}
