//! `FleetLayer`: API keys, the shared rate limit and the shared cache in front of a JSON-RPC
//! HTTP service, as a tower layer. The key is checked here, before the body is read (`401`
//! without a known one); the body is parsed once, its calls go through the fleet's JSON-RPC
//! layers — [`RateLimitLayer`] then [`CacheLayer`] — around the service behind (which gets
//! the body as it came, with its parse, or the calls that reached it as one batch), and the
//! outcomes are written back as one HTTP answer: `429` with `Retry-After` and a -32005 error
//! per request when all were refused over the rate, each element of a batch decided on its
//! own.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::Full;
use tower_layer::Layer;

use super::behind::{Answered, Behind, FleetAnswer};
use super::cached::CacheLayer;
use super::config::Config;
use super::keys::{key_in, ApiKey, ApiKeys};
use super::limit::SharedLimiter;
use super::metrics;
use super::rate::{RateLimitLayer, Refused};
use crate::encode;
use crate::message::{ErrorObject, Id, Message};
use crate::middleware::{BatchEntry, BatchOutcome, CallContext, RpcCall, RpcService};
use crate::parse::{Parsed, ParsedFrame};
use crate::sync::{read_unpoisoned, write_unpoisoned};
use crate::transport::http::body::{read_limited, ReadError};
use crate::{batch_elements, join_batch};

/// The error code of a request without a known API key (`401`):
/// [`codes::UNAUTHORIZED`](crate::codes::UNAUTHORIZED) (-32001).
pub const UNAUTHORIZED: i64 = crate::codes::UNAUTHORIZED;
/// The error code of a request over its key's rate (`429`; EIP-1474's "limit exceeded"):
/// [`codes::LIMIT_EXCEEDED`](crate::codes::LIMIT_EXCEEDED) (-32005).
pub const LIMIT_EXCEEDED: i64 = crate::codes::LIMIT_EXCEEDED;
/// The error code of a request refused because the shared limiter cannot reach Redis and is
/// closed then (`503`): [`codes::UNAVAILABLE`](crate::codes::UNAVAILABLE) (-32034).
pub const LIMITER_UNAVAILABLE: i64 = crate::codes::UNAVAILABLE;

/// API keys, and optionally the shared rate limit and cache, in front of a JSON-RPC HTTP
/// service (rpcwire's [`HttpService`](crate::transport::http::HttpService), or any tower
/// service of `Request<Full<Bytes>>`): composes with axum and with tower-http's layers.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer};
/// use rpcwire::transport::http::HttpService;
/// use tower_layer::Layer;
/// use tower_service::Service;
///
/// let mut router = rpcwire::dispatch::Router::new();
/// router.method("ping", |_: rpcwire::dispatch::NoParams| Ok("pong"));
/// let mut service = FleetLayer::new(ApiKeys::parse("k3y 100").unwrap()).layer(HttpService::new(router));
/// let post = |key: &str| {
///     http::Request::post("/")
///         .header("content-type", "application/json")
///         .header("x-api-key", key)
///         .body(http_body_util::Full::new(bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)))
///         .unwrap()
/// };
/// assert_eq!(service.call(post("k3y")).await.unwrap().status(), 200);
/// assert_eq!(service.call(post("wrong")).await.unwrap().status(), 401);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct FleetLayer {
    config: Arc<Config>,
}

impl FleetLayer {
    /// Asks every request for one of `keys`; no rate limit (see
    /// [`with_limiter`](FleetLayer::with_limiter)).
    ///
    /// ```
    /// let layer = rpcwire::proxy::fleet::FleetLayer::new(rpcwire::proxy::fleet::ApiKeys::parse("k 1").unwrap());
    /// # let _ = layer;
    /// ```
    pub fn new(keys: ApiKeys) -> FleetLayer {
        FleetLayer {
            config: Arc::new(Config {
                keys: RwLock::new(Arc::new(keys)),
                refresh: None,
                refreshing: AtomicBool::new(false),
                limiter: None,
                weights: Default::default(),
                max_body: crate::transport::http::DEFAULT_MAX_BODY,
                parser: crate::parse::Parser::default(),
                cached: Default::default(),
                max_cached: 256 << 10,
            }),
        }
    }

    /// Limits each key to its rate through `limiter` (shared by the fleet).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer, LimitConfig, SharedLimiter};
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// let layer = FleetLayer::new(ApiKeys::parse("k 1").unwrap()).with_limiter(limiter);
    /// # let _ = layer;
    /// ```
    pub fn with_limiter(mut self, limiter: SharedLimiter) -> FleetLayer {
        self.config_mut().limiter = Some(limiter);
        self
    }

    /// A request of `method` counts `cost` requests against its key's rate (1 otherwise).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer};
    /// let layer = FleetLayer::new(ApiKeys::parse("k 100").unwrap()).with_weight("eth_getLogs", 10);
    /// # let _ = layer;
    /// ```
    pub fn with_weight(mut self, method: impl Into<String>, cost: u64) -> FleetLayer {
        self.config_mut().weights.insert(method.into(), cost.max(1));
        self
    }

    /// The largest body read to decide on its requests (1 MiB by default; past it, `413`).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer};
    /// let layer = FleetLayer::new(ApiKeys::parse("k 100").unwrap()).with_max_body(64 << 10);
    /// # let _ = layer;
    /// ```
    pub fn with_max_body(mut self, bytes: usize) -> FleetLayer {
        self.config_mut().max_body = bytes;
        self
    }

    /// Parses bodies with `limits`: give the limits of the router behind (its
    /// [`Router::with_limits`](crate::dispatch::Router::with_limits); the default ones
    /// otherwise), and the body is parsed once — here, where its methods are weighed against
    /// the rate limit and looked up in the cache — and answered behind without another parse
    /// ([`ParsedBody`](crate::transport::http::ParsedBody)).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer};
    /// let limits = rpcwire::Limits::default().with_max_size(4 << 20);
    /// let layer = FleetLayer::new(ApiKeys::parse("k 100").unwrap()).with_limits(limits);
    /// # let _ = layer;
    /// ```
    pub fn with_limits(mut self, limits: crate::parse::Limits) -> FleetLayer {
        self.config_mut().parser = crate::parse::Parser::new(limits);
        self
    }

    /// Caches the answers of `method` in Redis for `ttl` (`None`: for good), shared by the
    /// fleet: keyed by the method and the params' bytes exactly as the client sent them; a
    /// result (never an error) kept when it is at most [`with_max_cached`](FleetLayer::with_max_cached)
    /// bytes, and served to any instance's client with that client's own id, byte for byte.
    /// Identical requests under way on one instance coalesce before the cache is asked: the
    /// first asks it (and the upstream), the others — each still checked against its key's
    /// rate — wait for its result. Needs the limiter (its Redis). A batch's requests are
    /// served from the cache too (read in one round trip), without coalescing. This is the
    /// [`CacheLayer`](super::CacheLayer) inside the [`RateLimitLayer`](super::RateLimitLayer).
    ///
    /// ```
    /// use std::time::Duration;
    /// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer};
    /// let layer = FleetLayer::new(ApiKeys::parse("k 100").unwrap())
    ///     .with_cache("eth_chainId", None)
    ///     .with_cache("eth_blockNumber", Some(Duration::from_secs(1)));
    /// # let _ = layer;
    /// ```
    pub fn with_cache(mut self, method: impl Into<String>, ttl: Option<Duration>) -> FleetLayer {
        self.config_mut().cached.insert(method.into(), ttl);
        self
    }

    /// Reads the keys again from the Redis hash `hash` on `redis` every `every` (see
    /// [`ApiKeys::load`]): keys added, changed or removed there take effect without a restart
    /// (the keys it has are kept when Redis cannot be read).
    ///
    /// ```
    /// use std::time::Duration;
    /// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer};
    /// let layer = FleetLayer::new(ApiKeys::default())
    ///     .with_keys_refreshed_from("redis://127.0.0.1:6379/", "rpcwire:keys", Duration::from_secs(10));
    /// # let _ = layer;
    /// ```
    pub fn with_keys_refreshed_from(
        mut self,
        redis: impl Into<super::RedisTarget>,
        hash: impl Into<String>,
        every: Duration,
    ) -> FleetLayer {
        self.config_mut().refresh = Some((redis.into(), hash.into(), every));
        self
    }

    /// The largest result cached (256 KiB by default).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{ApiKeys, FleetLayer};
    /// let layer = FleetLayer::new(ApiKeys::parse("k 100").unwrap()).with_max_cached(4096);
    /// # let _ = layer;
    /// ```
    pub fn with_max_cached(mut self, bytes: usize) -> FleetLayer {
        self.config_mut().max_cached = bytes;
        self
    }

    /// The settings, to change: this layer's own (copied first when it was cloned).
    fn config_mut(&mut self) -> &mut Config {
        Arc::make_mut(&mut self.config)
    }
}

impl<S> tower_layer::Layer<S> for FleetLayer {
    type Service = FleetService<S>;

    fn layer(&self, inner: S) -> FleetService<S> {
        let config = &self.config;
        let layers = config.limiter.as_ref().map(|limiter| {
            let mut rate = RateLimitLayer::new(limiter.clone());
            for (method, cost) in &config.weights {
                rate = rate.with_weight(method.clone(), *cost);
            }
            let mut cache = CacheLayer::new(limiter.clone()).with_max_cached(config.max_cached);
            for (method, ttl) in &config.cached {
                cache = cache.with_method(method.clone(), *ttl);
            }
            Arc::new((rate.reading_for(cache.clone()), cache))
        });
        FleetService {
            inner,
            config: config.clone(),
            layers,
        }
    }
}

/// The service a [`FleetLayer`] makes of another.
#[derive(Clone, Debug)]
pub struct FleetService<S> {
    inner: S,
    config: Arc<Config>,
    /// The rate limit and the cache, with the limiter.
    layers: Option<Arc<(RateLimitLayer, CacheLayer)>>,
}

impl<S, B> tower_service::Service<Request<B>> for FleetService<S>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The inner service that was made ready answers this request; a clone takes its place.
        let ready = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, ready);
        let (config, layers) = (self.config.clone(), self.layers.clone());
        Box::pin(async move { Ok(answer(config, layers, inner, request).await) })
    }
}

/// The answer to `request`: refused here, or the inner service's (for a batch partly
/// refused or answered from the cache, its answers and the others in one array).
async fn answer<S, B>(
    config: Arc<Config>,
    layers: Option<Arc<(RateLimitLayer, CacheLayer)>>,
    inner: S,
    request: Request<B>,
) -> Response<Full<Bytes>>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>
        + Send,
    S::Future: Send,
    B: Body,
    B::Error: std::fmt::Display,
{
    let (parts, body) = request.into_parts();
    if config.refresh.is_some() && !config.refreshing.swap(true, Ordering::AcqRel) {
        tokio::spawn(refresh_keys(Arc::downgrade(&config)));
    }
    let keys = read_unpoisoned(&config.keys).clone();
    let Some(key) = key_in(&parts.headers, parts.uri.path()).and_then(|given| keys.find(given)) else {
        metrics::request("-", Refused::Unauthorized.outcome());
        let mut refused = refusal_response(&Refused::Unauthorized, Some(&Id::null()));
        refused
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    };
    #[cfg(feature = "tracing")]
    {
        use tracing::Instrument;
        let span = tracing::debug_span!("rpc.fleet", key = key.label());
        answer_keyed(&config, layers.as_deref(), inner, parts, body, key)
            .instrument(span)
            .await
    }
    #[cfg(not(feature = "tracing"))]
    answer_keyed(&config, layers.as_deref(), inner, parts, body, key).await
}

/// Reads the keys again every while, until the layer is gone.
async fn refresh_keys(config: std::sync::Weak<Config>) {
    loop {
        let Some((redis, hash, every)) = config.upgrade().and_then(|config| config.refresh.clone()) else {
            return;
        };
        tokio::time::sleep(every).await;
        if let Ok(keys) = ApiKeys::load(redis, &hash, every.min(Duration::from_secs(5))).await {
            let Some(config) = config.upgrade() else { return };
            *write_unpoisoned(&config.keys) = Arc::new(keys);
        }
    }
}

/// The answer to a request of `key`.
async fn answer_keyed<S, B>(
    config: &Config,
    layers: Option<&(RateLimitLayer, CacheLayer)>,
    mut inner: S,
    parts: http::request::Parts,
    body: B,
    key: &ApiKey,
) -> Response<Full<Bytes>>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>
        + Send,
    S::Future: Send,
    B: Body,
    B::Error: std::fmt::Display,
{
    let body = std::pin::pin!(body);
    let body = match read_limited(body, config.max_body).await {
        Ok(body) => body,
        Err(ReadError::TooLarge) => {
            return error_response(StatusCode::PAYLOAD_TOO_LARGE, -32600, "Payload Too Large")
        }
        Err(ReadError::Broken(reason)) => {
            return error_response(StatusCode::BAD_REQUEST, -32600, &format!("Bad Request: {reason}"))
        }
    };
    let elements = batch_elements(&body);
    let Some((rate, cache)) = layers.filter(|_| elements.as_ref().map_or(true, |e| !e.is_empty())) else {
        metrics::request(key.label(), "allowed");
        let response = inner.call(Request::from_parts(parts, Full::new(body))).await;
        return response.unwrap_or_else(|never| match never {});
    };
    // The one parse of the body: its calls read here, answered behind from the same parse.
    let parsed = config.parser.parse_frame(body.clone()).ok();
    let limits = *config.parser.limits();
    let Some(elements) = elements else {
        // The service behind gets a copy of the parse (its bytes shared); the entry borrows
        // this one.
        let behind = Behind::new(
            inner,
            parts,
            body.clone(),
            parsed.clone().map(|frame| (frame, limits)),
            1,
        );
        let message = parsed.as_ref().and_then(|parsed| match parsed.view() {
            Parsed::Single(message) => Some(message),
            Parsed::Batch(_) => None,
        });
        let entry = Entry::of(&body, body.clone(), message);
        let service = rate.layer(cache.layer(&behind));
        let context = entry.context(key);
        let outcome = match entry.call(&context) {
            BatchEntry::Call(call) => Some(service.call(call).await),
            BatchEntry::Notify(call) => service.notify(call).await.err().map(Err),
        };
        drop(service);
        return match outcome {
            Some(Ok(FleetAnswer::Result(result))) => {
                json_response(StatusCode::OK, success(entry.id_text(), &result))
            }
            Some(Ok(FleetAnswer::Behind(answered))) => {
                drop(behind);
                response_of(answered)
            }
            Some(Err(refused)) => refusal_response(&refused, entry.id()),
            None => behind.into_answered().map_or_else(nothing_answered, response_of),
        };
    };
    let behind = Behind::new(
        inner,
        parts,
        body.clone(),
        parsed.clone().map(|frame| (frame, limits)),
        elements.len(),
    );
    let entries = entries_of(&body, parsed.as_ref(), &elements);
    let contexts: Vec<_> = entries.iter().map(|entry| entry.context(key)).collect();
    let calls: Vec<BatchEntry<'_>> = entries
        .iter()
        .zip(&contexts)
        .map(|(entry, context)| entry.call(context))
        .collect();
    let outcomes = rate.layer(cache.layer(&behind)).batch(&calls).await;
    merged(&entries, outcomes, behind.into_answered())
}

/// A batch's outcomes in one answer: the response behind as it is when every entry went
/// there; else its answers, the results made here and the refusals together (`200`), or,
/// when nothing went behind and nothing came from the cache, the refusals with the status
/// of the last and the longest `Retry-After`.
fn merged(
    entries: &[Entry],
    outcomes: Vec<BatchOutcome<FleetAnswer, Refused>>,
    behind: Option<Arc<Answered>>,
) -> Response<Full<Bytes>> {
    let made_here = outcomes
        .iter()
        .any(|outcome| matches!(outcome, Some(Err(_)) | Some(Ok(FleetAnswer::Result(_)))));
    if !made_here {
        // The outcomes share the response: gone first, it is passed on without a copy.
        drop(outcomes);
        return behind.map_or_else(nothing_answered, response_of);
    }
    let mut made = Vec::with_capacity(entries.len());
    let mut refused: Option<(StatusCode, Option<u64>)> = None;
    let mut from_cache = 0;
    for (entry, outcome) in entries.iter().zip(outcomes) {
        match outcome {
            Some(Ok(FleetAnswer::Result(result))) => {
                made.push(success(entry.id_text(), &result));
                from_cache += 1;
            }
            Some(Err(refusal)) => {
                if let Some(id) = entry.id() {
                    made.push(frame(id, &refusal.to_error_object()));
                }
                let longest = refused
                    .and_then(|(_, wait)| wait)
                    .max(refusal.retry_after_seconds());
                refused = Some((refusal.status(), longest));
            }
            Some(Ok(FleetAnswer::Behind(_))) | None => {}
        }
    }
    if let Some(answered) = behind {
        let mut answers = batch_elements(&answered.body).unwrap_or_default();
        answers.extend(made);
        let mut response = Response::from_parts(head_of(&answered.head), Full::new(join_batch(&answers)));
        *response.status_mut() = StatusCode::OK;
        response.headers_mut().remove(http::header::CONTENT_LENGTH);
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return response;
    }
    let body = if made.is_empty() {
        Bytes::new()
    } else {
        join_batch(&made)
    };
    match refused {
        Some((status, wait)) if from_cache == 0 => {
            let mut answer = json_response(status, body);
            retry_after(&mut answer, wait);
            answer
        }
        _ => json_response(StatusCode::OK, body),
    }
}

/// An entry of the request as the layers see it: its parse (borrowed from the body's, no
/// copy), its id's JSON text, its own bytes.
struct Entry<'a> {
    /// A request or a notification; `None` for a message that is not one (answered behind,
    /// with the id `null`).
    message: Option<Message<'a>>,
    /// A request's id as the client wrote it (`null` for a message that is not one; empty for
    /// a notification, which is not answered).
    id_text: Bytes,
    /// The message's own bytes (an element of a batch, or the whole body).
    frame: Bytes,
}

/// The id of an answer to a message that is not a request or a notification.
static NULL_ID: Id<'static> = Id::null();

impl<'a> Entry<'a> {
    /// What `frame` holds (`message` its parse, borrowed from `within`).
    fn of(within: &Bytes, frame: Bytes, message: Option<Message<'a>>) -> Entry<'a> {
        let (message, id_text) = match message {
            Some(Message::Request(request)) => {
                let id_text = match crate::message::id_range_within(within, request.id()) {
                    Some(range) => within.slice(range),
                    None => Bytes::from(request.id().json_parts().concat()),
                };
                (Some(Message::Request(request)), id_text)
            }
            Some(notification @ Message::Notification(_)) => (Some(notification), Bytes::new()),
            _ => (None, Bytes::from_static(b"null")),
        };
        Entry {
            message,
            id_text,
            frame,
        }
    }

    /// The id it is answered (or refused) with; `None` for a notification (no answer).
    fn id(&self) -> Option<&Id<'a>> {
        match &self.message {
            Some(Message::Request(request)) => Some(request.id()),
            Some(_) => None,
            None => Some(&NULL_ID),
        }
    }

    /// What comes with it: its frame, its id, the caller.
    fn context<'b>(&'b self, key: &'b ApiKey) -> CallContext<'b> {
        let context = CallContext::new().with_frame(&self.frame).with_extension(key);
        match self.id() {
            Some(id) => context.with_id(id),
            None => context,
        }
    }

    /// The call (or notification) the layers get.
    fn call<'b>(&'b self, context: &'b CallContext<'b>) -> BatchEntry<'b> {
        let (method, params) = match &self.message {
            Some(Message::Request(request)) => (request.method(), request.raw_params()),
            Some(Message::Notification(notification)) => (notification.method(), notification.raw_params()),
            _ => ("", None),
        };
        let call = RpcCall::new(method, params).with_context(context);
        match self.id() {
            Some(_) => BatchEntry::Call(call),
            None => BatchEntry::Notify(call),
        }
    }

    /// Its id's JSON text (a request's).
    fn id_text(&self) -> &[u8] {
        &self.id_text
    }
}

/// A batch's entries: its elements, from the body's parse when it has them all, else each
/// element parsed alone.
fn entries_of<'a>(body: &Bytes, parsed: Option<&'a ParsedFrame>, elements: &'a [Bytes]) -> Vec<Entry<'a>> {
    if let Some(Parsed::Batch(batch)) = parsed.map(ParsedFrame::view) {
        if batch.len() == elements.len() {
            return batch
                .iter()
                .zip(elements)
                .map(|(message, element)| Entry::of(body, element.clone(), message.ok()))
                .collect();
        }
    }
    elements
        .iter()
        .map(|element| match crate::parse(element) {
            Ok(Parsed::Single(message)) => Entry::of(element, element.clone(), Some(message)),
            _ => Entry::of(element, element.clone(), None),
        })
        .collect()
}

/// The response behind, as it came.
fn response_of(answered: Arc<Answered>) -> Response<Full<Bytes>> {
    match Arc::try_unwrap(answered) {
        Ok(Answered { head, body }) => Response::from_parts(head, Full::new(body)),
        Err(shared) => Response::from_parts(head_of(&shared.head), Full::new(shared.body.clone())),
    }
}

/// A copy of a response's head (its extensions left behind).
fn head_of(head: &http::response::Parts) -> http::response::Parts {
    let mut response = Response::new(());
    *response.status_mut() = head.status;
    *response.version_mut() = head.version;
    *response.headers_mut() = head.headers.clone();
    response.into_parts().0
}

/// What answers a request none of whose entries reached the service behind or was answered
/// here (never: every entry ends one way or the other).
fn nothing_answered() -> Response<Full<Bytes>> {
    json_response(StatusCode::ACCEPTED, Bytes::new())
}

/// The answer to a single request refused: its error with `id` (none for a notification),
/// the refusal's status and `Retry-After`.
fn refusal_response(refused: &Refused, id: Option<&Id<'_>>) -> Response<Full<Bytes>> {
    let body = id.map_or_else(Bytes::new, |id| frame(id, &refused.to_error_object()));
    let mut response = json_response(refused.status(), body);
    retry_after(&mut response, refused.retry_after_seconds());
    response
}

/// An answer with the id `id_text` (as the client wrote it) and the result `result`.
fn success(id_text: &[u8], result: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(id_text.len() + result.len() + 36);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id_text);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.extend_from_slice(b"}");
    out.freeze()
}

/// `Retry-After: seconds`, when there is a wait.
fn retry_after(response: &mut Response<Full<Bytes>>, seconds: Option<u64>) {
    if let Some(seconds) = seconds {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
}

fn frame(id: &Id<'_>, object: &ErrorObject<'_>) -> Bytes {
    let mut out = BytesMut::new();
    encode::write_error(&mut out, id, object);
    out.freeze()
}

fn json_response(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn error_response(status: StatusCode, code: i64, message: &str) -> Response<Full<Bytes>> {
    json_response(
        status,
        frame(&Id::null(), &ErrorObject::new(code, message.to_owned())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_cloned_then_set_up_keeps_the_first_as_it_was() {
        let first = FleetLayer::new(ApiKeys::parse("k 1").unwrap());
        let second = first.clone().with_weight("m", 3).with_max_cached(1);
        assert_ne!(format!("{first:?}"), format!("{second:?}"));
        assert!(first.config.weights.is_empty() && second.config.weights["m"] == 3);
        let _ = second.layer(());
    }
}
