//! `HttpClientTransport`: a [`Transport`] whose frames go out as HTTP POSTs (on hyper's
//! HTTP/1.1 connections, kept alive, or one HTTP/2 connection; over TCP or TLS) and whose incoming frames are the response bodies, so that a
//! [`Peer`](crate::transport::Peer) calls an HTTP JSON-RPC server as it calls over a stream.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::Full;
use std::sync::Arc;
use tokio::sync::mpsc;

use super::body::{read_limited, ReadError};
use super::connections::{ConnectionStats, Connections, HttpVersion};
use crate::encode;
use crate::endpoint::Endpoint;
use crate::message::{ErrorObject, Id, Message};
use crate::parse::Parsed;
use crate::tls::ClientTls;
use crate::transport::{AddressError, FrameReceiver, FrameSender, Transport, TransportError};

/// The largest answer body an [`HttpClientTransport`] reads by default (16 MiB: real
/// Ethereum answers — blocks with their transactions, traces — reach several MB).
pub const DEFAULT_MAX_RESPONSE: usize = 16 << 20;

/// How long one HTTP exchange may take by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The JSON-RPC server error code a call gets when its HTTP exchange fails (a status other
/// than 200/204, a refused connection, a timeout):
/// [`codes::HTTP_FAILURE`](crate::codes::HTTP_FAILURE) (-32033).
pub const HTTP_FAILURE_CODE: i64 = crate::codes::HTTP_FAILURE;

/// A [`Transport`] over HTTP: each frame sent is POSTed to one URL (`http://` or
/// `https://`) as `application/json` — on keep-alive HTTP/1.1 connections, exchanges in
/// parallel, up to 128 idle connections kept, or on one HTTP/2 connection when a TLS server
/// offers it, up to 100 exchanges at once; clones share them — and each
/// answer body is a frame received. A `204` (notifications only) yields nothing. When an
/// exchange fails, the requests it carried are answered locally with error responses
/// ([`HTTP_FAILURE_CODE`], the reason as the message, and as `data`
/// `{"reached": bool, "status": u16 | null}`: whether the request may have reached the
/// server, and the HTTP status it answered with), so that every call ends. Closing
/// waits for the exchanges under way, then the receiver reports the end of input.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire_http::http::{HttpClientTransport, HttpServer};
/// use rpcwire_core::transport::Peer;
///
/// let mut router = rpcwire_core::dispatch::Router::new();
/// router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let url = format!("http://{}/", listener.local_addr().unwrap());
/// tokio::spawn(HttpServer::new(router).serve(listener));
///
/// let transport = HttpClientTransport::new(url.parse().unwrap()).unwrap();
/// let client = Peer::new(transport, rpcwire_core::dispatch::Router::new());
/// let difference: i64 = client.call("subtract", (42, 23)).await.unwrap();
/// assert_eq!(difference, 19);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct HttpClientTransport {
    timeout: Duration,
    max_response: usize,
    connections: Arc<Connections>,
}

impl HttpClientTransport {
    /// A transport POSTing to `url` (`http://host:port/path` or `https://…`, the latter
    /// trusting the system's roots); refused when the URL is neither.
    ///
    /// ```
    /// use rpcwire_http::http::HttpClientTransport;
    /// let transport = HttpClientTransport::new("https://node.example/v3/key".parse().unwrap()).unwrap();
    /// let refused = HttpClientTransport::new("ftp://node.example/".parse().unwrap()).unwrap_err();
    /// assert!(refused.to_string().contains("expected http:// or https://"), "{refused}");
    /// # let _ = transport;
    /// ```
    pub fn new(url: Uri) -> Result<HttpClientTransport, AddressError> {
        Ok(HttpClientTransport {
            connections: Arc::new(Connections::new(Endpoint::http(&url)?)),
            timeout: DEFAULT_REQUEST_TIMEOUT,
            max_response: DEFAULT_MAX_RESPONSE,
        })
    }

    /// Speaks TLS through `tls` (what it trusts, the certificate it shows) to an
    /// `https://` server; without it, the system's roots are trusted.
    ///
    /// ```
    /// use rpcwire_http::{http::HttpClientTransport, tls::ClientTls};
    /// let tls = ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let transport = HttpClientTransport::new("https://node.example/".parse().unwrap()).unwrap().with_tls(tls);
    /// # let _ = transport;
    /// ```
    pub fn with_tls(self, tls: ClientTls) -> HttpClientTransport {
        self.reconnected(|connections| connections.with_tls(Some(tls)))
    }

    /// Speaks `version` of HTTP (default [`HttpVersion::Auto`]: HTTP/2 when a TLS server
    /// offers it, HTTP/1.1 otherwise; [`HttpVersion::Http2`] over `http://` is h2c).
    ///
    /// ```
    /// use rpcwire_http::http::{HttpClientTransport, HttpVersion};
    /// let transport = HttpClientTransport::new("http://127.0.0.1:8545/".parse().unwrap())
    ///     .unwrap()
    ///     .with_http_version(HttpVersion::Http2);
    /// # let _ = transport;
    /// ```
    pub fn with_http_version(self, version: HttpVersion) -> HttpClientTransport {
        self.reconnected(|connections| connections.with_version(version))
    }

    /// At most `streams` exchanges at once on an HTTP/2 connection (default 100, at least
    /// 1; fewer when the server says so): more wait for one to end.
    ///
    /// ```
    /// let transport = rpcwire_http::http::HttpClientTransport::new("https://node.example/".parse().unwrap())
    ///     .unwrap()
    ///     .with_max_streams(32);
    /// # let _ = transport;
    /// ```
    pub fn with_max_streams(self, streams: usize) -> HttpClientTransport {
        self.reconnected(|connections| connections.with_max_streams(streams))
    }

    /// What this transport's connections have cost so far: connections opened, TLS
    /// handshakes (and resumed ones), HTTP/2 connections.
    ///
    /// ```
    /// let transport = rpcwire_http::http::HttpClientTransport::new("http://127.0.0.1:9/".parse().unwrap()).unwrap();
    /// assert_eq!(transport.stats().connections, 0);
    /// ```
    pub fn stats(&self) -> ConnectionStats {
        self.connections.stats()
    }

    /// This transport with its connections made anew by `configure` (none open).
    fn reconnected(mut self, configure: impl FnOnce(Connections) -> Connections) -> HttpClientTransport {
        self.connections = Arc::new(configure(self.connections.fresh()));
        self
    }

    /// Sets how long one exchange may take (then its calls fail with a timeout error).
    ///
    /// ```
    /// use std::time::Duration;
    /// let transport = rpcwire_http::http::HttpClientTransport::new("http://127.0.0.1:8545/".parse().unwrap())
    ///     .unwrap()
    ///     .with_timeout(Duration::from_secs(5));
    /// # let _ = transport;
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> HttpClientTransport {
        self.timeout = timeout;
        self
    }

    /// Sets the largest answer body read (default [`DEFAULT_MAX_RESPONSE`]): a larger one —
    /// by its `Content-Length`, or while it is read — fails the exchange (its calls get
    /// [`HTTP_FAILURE_CODE`]) without more of it being kept.
    ///
    /// ```
    /// let transport = rpcwire_http::http::HttpClientTransport::new("http://127.0.0.1:8545/".parse().unwrap())
    ///     .unwrap()
    ///     .with_max_response(64 << 20);
    /// assert_eq!(transport.max_response(), 64 << 20);
    /// ```
    pub fn with_max_response(mut self, bytes: usize) -> HttpClientTransport {
        self.max_response = bytes;
        self
    }

    /// The largest answer body read.
    ///
    /// ```
    /// let transport = rpcwire_http::http::HttpClientTransport::new("http://h/".parse().unwrap()).unwrap();
    /// assert_eq!(transport.max_response(), rpcwire_http::http::DEFAULT_MAX_RESPONSE);
    /// ```
    pub fn max_response(&self) -> usize {
        self.max_response
    }
}

impl Transport for HttpClientTransport {
    type Receiver = HttpReceiver;
    type Sender = HttpSender;

    fn split(self) -> (HttpReceiver, HttpSender) {
        let (frames, receiver) = mpsc::unbounded_channel();
        (
            HttpReceiver { frames: receiver },
            HttpSender {
                transport: self,
                frames: Some(frames),
            },
        )
    }
}

/// The read half of an [`HttpClientTransport`]: the answer bodies, in the order they arrive.
#[derive(Debug)]
pub struct HttpReceiver {
    frames: mpsc::UnboundedReceiver<Bytes>,
}

impl FrameReceiver for HttpReceiver {
    async fn receive(&mut self) -> Result<Option<Bytes>, TransportError> {
        Ok(self.frames.recv().await)
    }
}

/// The write half of an [`HttpClientTransport`]: each frame is one POST.
#[derive(Debug)]
pub struct HttpSender {
    transport: HttpClientTransport,
    /// Where answers go; each exchange holds a clone until it ends, so that the receiver
    /// sees the end of input only once the sender is closed and every exchange is over.
    frames: Option<mpsc::UnboundedSender<Bytes>>,
}

impl FrameSender for HttpSender {
    async fn send(&mut self, body: Bytes) -> Result<(), TransportError> {
        let Some(frames) = self.frames.clone() else {
            return Err(TransportError::Closed);
        };
        let transport = self.transport.clone();
        tokio::spawn(async move {
            let answer =
                match tokio::time::timeout(transport.timeout, exchange(&transport, body.clone())).await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(failure)) => failure_answer(&body, &failure),
                    Err(_elapsed) => {
                        failure_answer(&body, &ExchangeFailure::new("HTTP request timed out", true, None))
                    }
                };
            if let Some(answer) = answer {
                let _ = frames.send(answer);
            }
        });
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.frames = None;
        Ok(())
    }
}

/// Why an exchange gave no answer, and whether the request may have reached the server.
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub struct ExchangeFailure {
    pub reason: String,
    /// `false` only when the connection was never made (nothing was sent).
    pub reached: bool,
    /// The HTTP status the server answered with, if it answered.
    pub status: Option<u16>,
    /// How long the server asked to wait (its `Retry-After`), when it answered with an error
    /// status and said.
    pub retry_after: Option<Duration>,
    /// The body of an answer with an error status (empty otherwise): a 429's may be a
    /// JSON-RPC error saying which limit.
    pub body: Bytes,
}

impl ExchangeFailure {
    /// A failure saying why, whether the request may have reached the server, and its HTTP
    /// status if it answered (no `Retry-After`, no body).
    pub fn new(reason: impl Into<String>, reached: bool, status: Option<u16>) -> ExchangeFailure {
        ExchangeFailure {
            reason: reason.into(),
            reached,
            status,
            retry_after: None,
            body: Bytes::new(),
        }
    }

    /// The error object a call of a failed exchange gets: [`HTTP_FAILURE_CODE`], the reason
    /// as the message, `{"reached", "status"}` as data.
    pub fn to_error_object(&self) -> ErrorObject<'static> {
        let data = serde_json::json!({ "reached": self.reached, "status": self.status });
        let error = ErrorObject::new(HTTP_FAILURE_CODE, self.reason.clone());
        error.clone().with_data(&data).unwrap_or(error)
    }
}

/// One POST: the answer body (`None` for 204), or why there is none.
pub async fn exchange(
    transport: &HttpClientTransport,
    body: Bytes,
) -> Result<Option<Bytes>, ExchangeFailure> {
    let failure = |reason: String, reached: bool| ExchangeFailure::new(reason, reached, None);
    let mut request = Request::new(Full::new(body));
    *request.method_mut() = Method::POST;
    request
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let (response, connection) = transport
        .connections
        .send(request)
        .await
        .map_err(|failed| failure(failed.reason, failed.reached))?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|value| retry_after(value, std::time::SystemTime::now()));
    let too_large = || {
        failure(
            format!("HTTP response over {} bytes", transport.max_response),
            true,
        )
    };
    let declared = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > transport.max_response as u64) {
        return Err(too_large());
    }
    let mut body = response.into_body();
    let bytes = match read_limited(std::pin::Pin::new(&mut body), transport.max_response).await {
        Ok(bytes) => {
            // Read whole: the connection can take the next request.
            connection.give_back();
            bytes
        }
        Err(ReadError::TooLarge) => return Err(too_large()),
        Err(ReadError::Broken(error)) => {
            return Err(failure(format!("HTTP response body failed: {error}"), true))
        }
    };
    match status {
        StatusCode::OK => Ok(Some(bytes)),
        StatusCode::NO_CONTENT => Ok(None),
        status => Err(ExchangeFailure {
            reason: format!("HTTP status {status}"),
            reached: true,
            status: Some(status.as_u16()),
            retry_after,
            body: bytes,
        }),
    }
}

/// A `Retry-After` header's wait from `now`: seconds (`120`), or an HTTP date (`Wed, 21 Oct
/// 2026 07:28:00 GMT`; one past gives no wait). `None` when it is neither.
fn retry_after(value: &HeaderValue, now: std::time::SystemTime) -> Option<Duration> {
    let text = value.to_str().ok()?.trim();
    if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) {
        // More digits than a u64 holds: as long as can be said.
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    let date = httpdate::parse_http_date(text).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Error responses, answered locally, for the requests in `sent` (one, or a batch array of
/// them); `None` when it held only notifications. The error's `data` says whether the
/// request may have reached the server (`"reached"`) and the HTTP status, if any
/// (`"status"`), so that a caller can tell what is safe to retry.
pub fn failure_answer(sent: &[u8], failure: &ExchangeFailure) -> Option<Bytes> {
    error_answer(sent, &failure.to_error_object())
}

/// Error responses with `error`, answered locally, for the requests in `sent` (one, or a
/// batch array of them); `None` when it held only notifications.
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub fn error_answer(sent: &[u8], error: &ErrorObject<'_>) -> Option<Bytes> {
    let mut out = BytesMut::new();
    let answer = |id: &Id<'_>, out: &mut BytesMut| encode::write_error(out, id, error);
    match crate::parse(sent) {
        Ok(Parsed::Single(Message::Request(request))) => answer(request.id(), &mut out),
        Ok(Parsed::Batch(batch)) => {
            let mut writer = encode::BatchWriter::new(&mut out);
            for element in &batch {
                if let Ok(Message::Request(request)) = element {
                    answer(request.id(), writer.element());
                }
            }
            writer.finish();
        }
        _ => {}
    }
    (!out.is_empty()).then(|| out.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_answer_every_request_they_carried() {
        let bad_gateway = ExchangeFailure::new("HTTP status 502 Bad Gateway", true, Some(502));
        let single = failure_answer(br#"{"jsonrpc":"2.0","id":7,"method":"m"}"#, &bad_gateway).unwrap();
        assert_eq!(
            &single[..],
            &br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32033,"message":"HTTP status 502 Bad Gateway","data":{"reached":true,"status":502}}}"#[..]
        );
        let down = ExchangeFailure::new("down", false, None);
        let batch = failure_answer(
            br#"[{"jsonrpc":"2.0","id":"a","method":"m"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"m"}]"#,
            &down,
        )
        .unwrap();
        let text = std::str::from_utf8(&batch).unwrap();
        assert!(
            text.starts_with(r#"[{"jsonrpc":"2.0","id":"a","error""#),
            "{text}"
        );
        assert!(text.contains(r#"{"jsonrpc":"2.0","id":2,"error""#), "{text}");
        assert!(
            text.contains(r#""data":{"reached":false,"status":null}"#),
            "{text}"
        );
        assert!(failure_answer(br#"{"jsonrpc":"2.0","method":"n"}"#, &down).is_none());
    }

    #[test]
    fn retry_after_is_seconds_or_a_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").unwrap();
        let read = |text: &'static str| retry_after(&HeaderValue::from_static(text), now);
        assert_eq!(read("120"), Some(Duration::from_secs(120)));
        assert_eq!(read(" 0 "), Some(Duration::ZERO));
        assert_eq!(
            read("99999999999999999999999"),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            read("Wed, 21 Oct 2026 07:28:30 GMT"),
            Some(Duration::from_secs(30))
        );
        assert_eq!(read("Wed, 21 Oct 2026 07:00:00 GMT"), Some(Duration::ZERO));
        for nonsense in ["", "-1", "1.5", "soon", "Wed, 32 Oct 2026 07:28:30 GMT"] {
            assert_eq!(read(nonsense), None, "{nonsense}");
        }
    }
}
