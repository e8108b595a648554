//! `HttpService`: JSON-RPC over HTTP as a `tower::Service`, answering through the
//! [`Responder`] like every other transport.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http::header::{
    HeaderMap, HeaderValue, ALLOW, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, SEC_WEBSOCKET_VERSION, UPGRADE,
};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full};

use fastwebsockets::WebSocketError;

use super::body::{read_limited, within, ReadError};
use super::parsed_body::ParsedBody;
use crate::dispatch::{Answer, PendingAnswer, Responder, Router};
use crate::linger::{LINGER_DECLARED, LINGER_TIME};
use crate::pool::{BufferPool, PooledBuf};
use crate::transport::Peer;
use crate::websocket::WebSocketTransport;

/// The largest request body accepted by default: 1 MiB, the parser's default message size.
pub const DEFAULT_MAX_BODY: usize = crate::frame::DEFAULT_MAX_FRAME;

/// How long a request body may take to arrive by default.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// JSON-RPC 2.0 over HTTP, as a [`tower_service::Service`] for `http::Request`s: mount it
/// in axum (`Router::route_service`), wrap it in tower layers, or hand it to hyper (see
/// [`HttpServer`](super::HttpServer), which does).
///
/// - `POST` with `Content-Type: application/json` (parameters such as a charset allowed):
///   `200` with the answer (a response, or the array of a batch), `204 No Content` with an
///   empty body when there is nothing to answer (notifications only). Malformed JSON is a
///   `200` with the -32700 answer, as the specification asks.
/// - A body over the limit: `413`, decided from `Content-Length` before reading anything,
///   and while reading a body without one (chunked): never more than the limit is buffered.
///   Past the limit the rest is read and dropped (of a declared body up to 8 MiB, of a
///   chunked one 256 KiB, for at most 5 s), so that a client still sending — most send their
///   whole body before they read — gets the answer instead of a reset connection; a body
///   declared larger than the limit plus 8 MiB is refused without reading any of it.
/// - `GET` with a WebSocket upgrade (RFC 6455): the connection switches to WebSocket and is
///   served by a [`Peer`] on its own task — each text message one JSON-RPC message or batch,
///   answered like over HTTP, and the server can push notifications and call the client (see
///   [`on_websocket`](HttpService::on_websocket)). A binary message closes it with 1003, a
///   message over the body limit with 1009 before it is buffered.
/// - Another method: `405` with `Allow: POST`; another content type: `415`; a body that does
///   not arrive in time: `408`.
///
/// It runs on a tokio runtime with its time driver enabled (for the body timeout), as every
/// hyper and axum server does.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire_http::http::HttpService;
/// use tower_service::Service;
///
/// let mut router = rpcwire_core::dispatch::Router::new();
/// router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
/// let mut service = HttpService::new(router);
/// let request = http::Request::post("/")
///     .header("content-type", "application/json")
///     .body(http_body_util::Full::new(bytes::Bytes::from_static(
///         br#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#,
///     )))
///     .unwrap();
/// let response = service.call(request).await.unwrap();
/// assert_eq!(response.status(), 200);
/// # });
/// ```
#[derive(Clone)]
pub struct HttpService {
    /// Everything a request needs, behind one pointer: each request's task holds a clone.
    inner: Arc<ServiceInner>,
}

/// What an [`HttpService`] and its clones share.
#[derive(Clone)]
struct ServiceInner {
    router: Arc<Router>,
    max_body: usize,
    body_timeout: Duration,
    on_websocket: Option<Arc<WebSocketHook>>,
    /// Where response bodies are written: each answer is split off a pooled buffer and
    /// handed to hyper as `Bytes`; once hyper has written and dropped it, the buffer's
    /// allocation is whole again and the next answers reuse it.
    buffers: BufferPool,
}

/// The future of one request's answer (what both service traits return).
type AnswerFuture = Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send>>;

/// Idle response buffers kept for reuse.
const RESPONSE_BUFFERS: usize = 64;
/// Each response buffer's first capacity.
const RESPONSE_BUFFER_CAPACITY: usize = 4 << 10;
/// A response buffer grown past this (by a large answer) is dropped, not kept.
const RESPONSE_BUFFER_MAX_RETAINED: usize = 64 << 10;

/// The call table's size of a WebSocket connection's `Peer` when no hook can call the client.
const WEBSOCKET_CALLS_WITHOUT_HOOK: usize = 16;

/// What is called with the [`Peer`] of each WebSocket connection.
type WebSocketHook = dyn Fn(Peer) + Send + Sync;

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = &self.inner;
        f.debug_struct("HttpService")
            .field("router", &inner.router)
            .field("max_body", &inner.max_body)
            .field("body_timeout", &inner.body_timeout)
            .field("on_websocket", &inner.on_websocket.is_some())
            .finish()
    }
}

impl HttpService {
    /// A service answering through `router` (a `Router` or an `Arc<Router>` shared with
    /// other transports), with the default limits.
    ///
    /// ```
    /// let service = rpcwire_http::http::HttpService::new(rpcwire_core::dispatch::Router::new());
    /// assert_eq!(service.max_body(), 1 << 20);
    /// ```
    pub fn new(router: impl Into<Arc<Router>>) -> HttpService {
        HttpService {
            inner: Arc::new(ServiceInner {
                router: router.into(),
                max_body: DEFAULT_MAX_BODY,
                body_timeout: DEFAULT_BODY_TIMEOUT,
                on_websocket: None,
                buffers: BufferPool::new(
                    RESPONSE_BUFFERS,
                    RESPONSE_BUFFER_CAPACITY,
                    RESPONSE_BUFFER_MAX_RETAINED,
                ),
            }),
        }
    }

    /// Calls `hook` with the [`Peer`] of each WebSocket connection once it is upgraded: keep
    /// a clone to push notifications (subscriptions) or to call the client. The connection
    /// lives until either side closes it, whether a clone is kept or not.
    ///
    /// ```
    /// use rpcwire_http::http::HttpService;
    /// let service = HttpService::new(rpcwire_core::dispatch::Router::new()).on_websocket(|peer| {
    ///     tokio::spawn(async move { let _ = peer.notify("welcome", ()).await; });
    /// });
    /// # let _ = service;
    /// ```
    pub fn on_websocket(mut self, hook: impl Fn(Peer) + Send + Sync + 'static) -> HttpService {
        Arc::make_mut(&mut self.inner).on_websocket = Some(Arc::new(hook));
        self
    }

    /// Sets the largest request body accepted, in bytes (a larger one is answered `413`).
    ///
    /// ```
    /// let service = rpcwire_http::http::HttpService::new(rpcwire_core::dispatch::Router::new())
    ///     .with_max_body(4096);
    /// assert_eq!(service.max_body(), 4096);
    /// ```
    pub fn with_max_body(mut self, bytes: usize) -> HttpService {
        Arc::make_mut(&mut self.inner).max_body = bytes;
        self
    }

    /// Sets how long a request body may take to arrive (then `408`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let service = rpcwire_http::http::HttpService::new(rpcwire_core::dispatch::Router::new())
    ///     .with_body_timeout(Duration::from_secs(5));
    /// assert_eq!(service.body_timeout(), Duration::from_secs(5));
    /// ```
    pub fn with_body_timeout(mut self, timeout: Duration) -> HttpService {
        Arc::make_mut(&mut self.inner).body_timeout = timeout;
        self
    }

    /// The largest request body accepted, in bytes.
    ///
    /// ```
    /// # let service = rpcwire_http::http::HttpService::new(rpcwire_core::dispatch::Router::new());
    /// assert_eq!(service.max_body(), rpcwire_http::http::DEFAULT_MAX_BODY);
    /// ```
    pub fn max_body(&self) -> usize {
        self.inner.max_body
    }

    /// How long a request body may take to arrive.
    ///
    /// ```
    /// # let service = rpcwire_http::http::HttpService::new(rpcwire_core::dispatch::Router::new());
    /// assert_eq!(service.body_timeout(), rpcwire_http::http::DEFAULT_BODY_TIMEOUT);
    /// ```
    pub fn body_timeout(&self) -> Duration {
        self.inner.body_timeout
    }
}

impl ServiceInner {
    /// Switches to the WebSocket protocol (RFC 6455) and serves the connection with a
    /// [`Peer`] on its own task, each text message one JSON-RPC message or batch.
    fn upgrade<B>(&self, mut request: Request<B>) -> Response<Full<Bytes>> {
        let (switching, upgrading) = match fastwebsockets::upgrade::upgrade(&mut request) {
            Ok(upgrade) => upgrade,
            Err(WebSocketError::InvalidSecWebsocketVersion) => {
                let mut response = status(StatusCode::UPGRADE_REQUIRED);
                response
                    .headers_mut()
                    .insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
                return response;
            }
            Err(_) => return status(StatusCode::BAD_REQUEST),
        };
        let router = self.router.clone();
        let max_message = self.max_body;
        let hook = self.on_websocket.clone();
        tokio::spawn(async move {
            let Ok(socket) = upgrading.await else {
                return;
            };
            let transport = WebSocketTransport::server(socket.into_inner()).with_max_message(max_message);
            // Without a hook nothing calls the client: a small call table (the default one,
            // 1,024 slots of 128 bytes, was made and dropped with every connection).
            let builder = match &hook {
                Some(_) => Peer::builder(),
                None => Peer::builder().call_capacity(WEBSOCKET_CALLS_WITHOUT_HOOK),
            };
            let peer = builder.start(transport, router);
            if let Some(hook) = hook {
                hook(peer.clone());
            }
            peer.closed().await;
        });
        let (parts, _) = switching.into_parts();
        Response::from_parts(parts, Full::default())
    }

    /// Answers one request; a frame whose handlers are to be awaited is handed back with
    /// its buffer (`Err`), for [`answer_pending`](ServiceInner::answer_pending).
    async fn answer<B>(
        &self,
        request: Request<B>,
    ) -> Result<Response<Full<Bytes>>, (PendingAnswer, PooledBuf)>
    where
        B: Body + Send + Unpin + 'static,
        B::Data: Send,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        if request.method() == Method::GET && is_websocket_upgrade(request.headers()) {
            return Ok(self.upgrade(request));
        }
        if request.method() != Method::POST {
            let mut response = status(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("POST"));
            return Ok(response);
        }
        if !is_json(request.headers().get(CONTENT_TYPE)) {
            return Ok(status(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        }
        // A layer in front may have parsed the body already.
        let parsed = request.extensions().get::<ParsedBody>().cloned();
        // hyper's body knows its declared length; another body may only have the header.
        let declared = request
            .body()
            .size_hint()
            .exact()
            .or_else(|| declared_length(request.headers().get(CONTENT_LENGTH)));
        if declared.is_some_and(|len| len > (self.max_body + LINGER_DECLARED) as u64) {
            // Far over the limit: refuse at once, reading none of it (the connection closes).
            return Ok(status(StatusCode::PAYLOAD_TOO_LARGE));
        }
        // Past the limit, up to the rest of a declared body is read and dropped.
        let linger = declared.map_or(LINGER, |len| {
            (len as usize).saturating_sub(self.max_body).max(LINGER)
        });
        let read = read_body(request.into_body(), self.max_body, linger);
        let bytes = match within(self.body_timeout, read).await {
            Some(Ok(bytes)) => bytes,
            Some(Err(BodyProblem::TooLarge)) => return Ok(status(StatusCode::PAYLOAD_TOO_LARGE)),
            Some(Err(BodyProblem::Broken)) => return Ok(status(StatusCode::BAD_REQUEST)),
            None => return Ok(status(StatusCode::REQUEST_TIMEOUT)),
        };
        let mut out = self.buffers.get();
        let answer = match parsed.and_then(|parsed| parsed.take_for(&bytes, self.router.parser().limits())) {
            Some(frame) => Responder::new().respond_parsed(&self.router, frame, &mut out),
            None => Responder::respond_here(&self.router, &bytes, Some(&bytes), true, &mut out),
        };
        let answered = match answer {
            Answer::Written => true,
            Answer::Silent => false,
            Answer::Pending(pending) => return Err((pending, out)),
        };
        Ok(if answered {
            // A large answer takes its buffer along: split off, it would leave the pool
            // holding a share of an allocation its capacity check cannot see.
            if out.len() > RESPONSE_BUFFER_MAX_RETAINED / 2 {
                json(out.into_inner().freeze())
            } else {
                json(out.split().freeze())
            }
        } else {
            status(StatusCode::NO_CONTENT)
        })
    }

    /// The answer of a frame whose handlers are awaited: a gateway's upstream answer goes
    /// out as it came, not copied into `out`.
    async fn answer_pending(&self, pending: PendingAnswer, mut out: PooledBuf) -> Response<Full<Bytes>> {
        let Some(answer) = pending.answer_whole(&self.router, &mut out).await else {
            return status(StatusCode::NO_CONTENT);
        };
        if answer.bytes().len() > RESPONSE_BUFFER_MAX_RETAINED / 2 {
            // It may share `out`'s allocation: that does not go back to the pool.
            drop(out.into_inner());
        }
        let retry_after = answer.retry_after();
        let mut response = json(answer.into_bytes());
        if let Some(wait) = retry_after {
            // A request alone in its body, answered that a limit was reached.
            *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            response.headers_mut().insert(
                http::header::RETRY_AFTER,
                HeaderValue::from(retry_after_seconds(wait)),
            );
        }
        response
    }
}

impl<B> tower_service::Service<Request<B>> for HttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = AnswerFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // Pinned once here, the body can be read in place and moved on (hyper's is `Unpin`).
        self.answer_boxed(request.map(Box::pin))
    }
}

impl HttpService {
    /// The answer to `request` as the boxed future both service traits return.
    pub(super) fn answer_boxed<B>(&self, request: Request<B>) -> AnswerFuture
    where
        B: Body + Send + Unpin + 'static,
        B::Data: Send,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let service = self.inner.clone();
        // The future is boxed and moved whole for every request: a router that never awaits
        // gets one without room for awaiting handlers (a fifth of the size); one that may
        // await (async handlers, a gateway's fallback) awaits them inline, in the one box.
        if service.router.awaits() {
            Box::pin(async move {
                Ok(match service.answer(request).await {
                    Ok(answered) => answered,
                    Err((pending, out)) => service.answer_pending(pending, out).await,
                })
            })
        } else {
            Box::pin(async move {
                Ok(match service.answer(request).await {
                    Ok(answered) => answered,
                    Err((pending, out)) => Box::pin(service.answer_pending(pending, out)).await,
                })
            })
        }
    }
}

/// The service as hyper calls it: straight, without tower's readiness protocol (an
/// `HttpService` is always ready) and the clone per request that adapting it takes.
#[derive(Clone, Debug)]
pub(super) struct HyperService(pub(super) HttpService);

impl hyper::service::Service<Request<hyper::body::Incoming>> for HyperService {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = AnswerFuture;

    fn call(&self, request: Request<hyper::body::Incoming>) -> Self::Future {
        self.0.answer_boxed(request)
    }
}

/// How many bytes past the limit are read and dropped for a body of no declared length
/// (chunked): such a client is reading while it sends, and an endless one is cut sooner.
const LINGER: usize = 256 << 10;

/// Why a body was not read.
enum BodyProblem {
    /// More than the limit.
    TooLarge,
    /// The body failed (the connection broke, or its framing was invalid).
    Broken,
}

/// Reads `body` whole, never holding more than `max` bytes (see [`read_limited`]). Past the
/// limit, the rest of the body is read and dropped on a task of its own (up to `linger`
/// bytes, for at most [`LINGER_TIME`]) while the `413` goes out.
async fn read_body<B>(mut body: B, max: usize, linger: usize) -> Result<Bytes, BodyProblem>
where
    B: Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    match read_limited(std::pin::Pin::new(&mut body), max).await {
        Ok(bytes) => Ok(bytes),
        Err(ReadError::TooLarge) => {
            tokio::spawn(async move {
                let drain = async {
                    let mut dropped = 0;
                    while dropped <= linger {
                        match body.frame().await {
                            Some(Ok(frame)) => dropped += frame.data_ref().map_or(0, Buf::remaining),
                            _ => break,
                        }
                    }
                };
                let _ = tokio::time::timeout(LINGER_TIME, drain).await;
            });
            Err(BodyProblem::TooLarge)
        }
        Err(ReadError::Broken(_)) => Err(BodyProblem::Broken),
    }
}

/// A `200` with `body`, a JSON-RPC answer.
fn json(body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A response with `code` and an empty body.
/// `Retry-After`'s whole seconds for `wait`: rounded up, at least 1 (a client told 0 would
/// ask again at once).
fn retry_after_seconds(wait: Duration) -> u64 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    seconds.max(1)
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

/// `true` for a WebSocket opening handshake: `Connection: upgrade` (among other tokens) and
/// `Upgrade: websocket`.
fn is_websocket_upgrade(headers: &HeaderMap) -> bool {
    let has_token = |name, token: &str| {
        headers.get_all(name).iter().any(|value| {
            value.to_str().is_ok_and(|text| {
                text.split(',')
                    .any(|part| part.trim().eq_ignore_ascii_case(token))
            })
        })
    };
    has_token(CONNECTION, "upgrade") && has_token(UPGRADE, "websocket")
}

/// `true` for `application/json`, with or without parameters (`; charset=utf-8`).
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type else {
        return false;
    };
    let essence = match value.as_bytes().iter().position(|&b| b == b';') {
        Some(end) => &value.as_bytes()[..end],
        None => value.as_bytes(),
    };
    essence.trim_ascii().eq_ignore_ascii_case(b"application/json")
}

/// The declared body length, when the header holds one number.
fn declared_length(value: Option<&HeaderValue>) -> Option<u64> {
    let digits = value?.as_bytes().trim_ascii();
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let digit = d.is_ascii_digit().then(|| u64::from(d - b'0'))?;
        n.checked_mul(10)?.checked_add(digit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        for good in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            " application/json ;charset=utf-8",
        ] {
            assert!(is_json(Some(&HeaderValue::from_static(good))), "{good}");
        }
        for bad in [
            "text/plain",
            "application/jsonx",
            "application/json-rpc",
            "",
            "; application/json",
        ] {
            assert!(!is_json(Some(&HeaderValue::from_static(bad))), "{bad}");
        }
        assert!(!is_json(None));
    }

    #[test]
    fn declared_lengths() {
        assert_eq!(declared_length(Some(&HeaderValue::from_static("12"))), Some(12));
        assert_eq!(declared_length(Some(&HeaderValue::from_static(" 7 "))), Some(7));
        assert_eq!(
            declared_length(Some(&HeaderValue::from_static("18446744073709551615"))),
            Some(u64::MAX)
        );
        assert_eq!(
            declared_length(Some(&HeaderValue::from_static("18446744073709551616"))),
            None
        );
        assert_eq!(
            declared_length(Some(&HeaderValue::from_static("9999999999999999999"))),
            Some(9_999_999_999_999_999_999)
        );
        for bad in ["x", "", "1 2", "+5", "-5", "0x10"] {
            assert_eq!(
                declared_length(Some(&HeaderValue::from_static(bad))),
                None,
                "{bad}"
            );
        }
        assert_eq!(declared_length(None), None);
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        assert_eq!(retry_after_seconds(Duration::ZERO), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_seconds(Duration::from_secs(2)), 2);
        assert_eq!(retry_after_seconds(Duration::from_millis(2001)), 3);
    }
}
