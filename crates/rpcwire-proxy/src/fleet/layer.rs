//! `FleetLayer`: API keys and the shared rate limit in front of a JSON-RPC HTTP service, as
//! a tower layer — a request without a known key is answered `401`; one over its key's rate
//! `429` with `Retry-After` and a JSON-RPC error per request (-32005, with its id), each
//! element of a batch decided on its own; the rest goes on to the service, with the body's
//! one parse (`ParsedBody`) for rpcwire's `HttpService` to answer from.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full};

use super::cached::{follow, join, remember, remember_batch, success, Joined};
use super::config::Config;
use super::keys::{key_in, ApiKey, ApiKeys};
use super::limit::{Decision, SharedLimiter};
use super::metrics;
use crate::encode;
use crate::message::{ErrorObject, Id, Message};
use crate::parse::{Parsed, ParsedFrame};
use crate::sync::{read_unpoisoned, write_unpoisoned};
use crate::transport::http::body::{read_limited, ReadError};
use crate::transport::http::ParsedBody;
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

/// API keys, and optionally the shared rate limit, in front of a JSON-RPC HTTP service
/// (rpcwire's [`HttpService`](crate::transport::http::HttpService), or any tower service of
/// `Request<Full<Bytes>>`): composes with axum and with tower-http's layers.
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

/// Before a cached answer's name (the SHA-256 of the method and the params' bytes).
const CACHE_PREFIX: &str = "rpcwire:cache:";

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
                weights: HashMap::new(),
                max_body: crate::transport::http::DEFAULT_MAX_BODY,
                parser: crate::parse::Parser::default(),
                cached: HashMap::new(),
                max_cached: 256 << 10,
                fetching: Mutex::default(),
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
    /// bytes, and served to any instance's client with that client's own id, byte for byte,
    /// read in the same Redis round trip as the rate limit. Identical requests under way on
    /// one instance coalesce before the cache is asked: the first asks it (and the upstream),
    /// the others — each still checked against its key's rate — wait for its result. Needs
    /// the limiter (its Redis). A batch's requests are served from the cache too (read in the
    /// batch's one round trip), without coalescing.
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

    /// Reads the keys again from the Redis hash `hash` at `url` every `every` (see
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
        url: impl Into<String>,
        hash: impl Into<String>,
        every: Duration,
    ) -> FleetLayer {
        self.config_mut().refresh = Some((url.into(), hash.into(), every));
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
        FleetService {
            inner,
            config: self.config.clone(),
        }
    }
}

/// The service a [`FleetLayer`] makes of another.
#[derive(Clone, Debug)]
pub struct FleetService<S> {
    inner: S,
    config: Arc<Config>,
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
        let config = self.config.clone();
        Box::pin(async move { Ok(answer(config, inner, request).await) })
    }
}

/// The answer to `request`: refused here, or the inner service's (for a batch partly
/// refused, its answers and the refusals in one array).
async fn answer<S, B>(config: Arc<Config>, inner: S, request: Request<B>) -> Response<Full<Bytes>>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>,
    B: Body,
    B::Error: std::fmt::Display,
{
    let (parts, body) = request.into_parts();
    if config.refresh.is_some() && !config.refreshing.swap(true, Ordering::AcqRel) {
        tokio::spawn(refresh_keys(Arc::downgrade(&config)));
    }
    let keys = read_unpoisoned(&config.keys).clone();
    let Some(key) = key_in(&parts.headers, parts.uri.path()).and_then(|given| keys.find(given)) else {
        metrics::request("-", "unauthorized");
        let mut refused = error_response(
            StatusCode::UNAUTHORIZED,
            &Id::null(),
            UNAUTHORIZED,
            "Unauthorized: a known API key is required",
        );
        refused
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    };
    #[cfg(feature = "tracing")]
    {
        use tracing::Instrument;
        let span = tracing::debug_span!("rpc.fleet", key = key.label());
        answer_keyed(&config, inner, parts, body, key)
            .instrument(span)
            .await
    }
    #[cfg(not(feature = "tracing"))]
    answer_keyed(&config, inner, parts, body, key).await
}

/// Reads the keys again every while, until the layer is gone.
async fn refresh_keys(config: std::sync::Weak<Config>) {
    loop {
        let Some((url, hash, every)) = config.upgrade().and_then(|config| config.refresh.clone()) else {
            return;
        };
        tokio::time::sleep(every).await;
        if let Ok(keys) = ApiKeys::load(&url, &hash, every.min(Duration::from_secs(5))).await {
            let Some(config) = config.upgrade() else { return };
            *write_unpoisoned(&config.keys) = Arc::new(keys);
        }
    }
}

/// The answer to a request of `key`.
async fn answer_keyed<S, B>(
    config: &Config,
    mut inner: S,
    parts: http::request::Parts,
    body: B,
    key: &ApiKey,
) -> Response<Full<Bytes>>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>,
    B: Body,
    B::Error: std::fmt::Display,
{
    let body = std::pin::pin!(body);
    let body = match read_limited(body, config.max_body).await {
        Ok(body) => body,
        Err(ReadError::TooLarge) => {
            return error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &Id::null(),
                -32600,
                "Payload Too Large",
            )
        }
        Err(ReadError::Broken(reason)) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                &Id::null(),
                -32600,
                &format!("Bad Request: {reason}"),
            )
        }
    };
    let Some(limiter) = &config.limiter else {
        metrics::request(key.label(), "allowed");
        return call(&mut inner, parts, body).await;
    };
    // The one parse of the body: weighed here, answered behind from the same parse.
    let parsed = config.parser.parse_frame(body.clone()).ok();
    let Some(elements) = batch_elements(&body) else {
        let weighed = match parsed.as_ref().map(ParsedFrame::view) {
            Some(Parsed::Single(message)) => weigh(config, &body, Some(&message)),
            _ => weigh(config, &body, None),
        };
        // A cacheable request (with an id) joins the identical ones under way; the first asks
        // the cache.
        let joined = match (&weighed.cache, &weighed.id_text) {
            (Some((name, _)), Some(_)) => Some((name.as_str(), join(config, name))),
            _ => None,
        };
        let cache = match &joined {
            Some((name, Joined::First(_))) => Some(*name),
            _ => None,
        };
        let (decision, cached) = limiter.check_and_read(key, weighed.cost, cache).await;
        if let Some((status, object, wait)) = refusal(decision) {
            metrics::request(key.label(), outcome_of(status));
            let mut refused = match weighed.is_request {
                true => json_response(status, frame(&weighed.id, &object)),
                false => json_response(status, Bytes::new()),
            };
            retry_after(&mut refused, wait);
            return refused;
        }
        let id_text = weighed.id_text.as_deref().unwrap_or_default();
        let first = match joined {
            Some((name, joined)) => match follow(config, name, joined).await {
                Ok(result) => {
                    metrics::request(key.label(), "coalesced");
                    return json_response(StatusCode::OK, success(id_text, &result));
                }
                Err(first) => first,
            },
            None => None,
        };
        if let Some(result) = cached {
            metrics::request(key.label(), "cached");
            if let Some(first) = first {
                first.share(Some(result.clone()));
            }
            return json_response(StatusCode::OK, success(id_text, &result));
        }
        metrics::request(key.label(), "allowed");
        let response = call(&mut inner, handed_on(parts, parsed, config), body).await;
        return match weighed.cache {
            Some((name, ttl)) => remember(config, limiter, name, ttl, response, first).await,
            None => response,
        };
    };
    let weighed = weigh_batch(config, &body, parsed.as_ref(), &elements);
    let parts = match answer_batch(config, &mut inner, parts, key, limiter, &elements, &weighed).await {
        Ok(answered) => return answered,
        Err(parts) => parts,
    };
    // Every element admitted, none from the cache: the body goes on as it came, parsed.
    let misses = misses(&weighed);
    let answered = call(&mut inner, handed_on(parts, parsed, config), body).await;
    remember_batch(config, limiter, misses, answered).await
}

/// The request's parts with the body's parse among their extensions, for the service behind.
fn handed_on(
    mut parts: http::request::Parts,
    parsed: Option<ParsedFrame>,
    config: &Config,
) -> http::request::Parts {
    if let Some(frame) = parsed {
        parts
            .extensions
            .insert(ParsedBody::new(frame, *config.parser.limits()));
    }
    parts
}

/// The elements of a batch weighed, from the body's parse when it has them all (else each
/// element parsed alone).
fn weigh_batch(
    config: &Config,
    body: &Bytes,
    parsed: Option<&ParsedFrame>,
    elements: &[Bytes],
) -> Vec<Weighed> {
    if let Some(Parsed::Batch(batch)) = parsed.map(ParsedFrame::view) {
        if batch.len() == elements.len() {
            return batch
                .iter()
                .map(|element| weigh(config, body, element.ok().as_ref()))
                .collect();
        }
    }
    elements
        .iter()
        .map(|element| match crate::parse(element) {
            Ok(Parsed::Single(message)) => weigh(config, element, Some(&message)),
            _ => weigh(config, element, None),
        })
        .collect()
}

/// The admitted cacheable requests of a batch whose answers are to be cached: their ids and
/// cached names.
fn misses(weighed: &[Weighed]) -> Vec<(Bytes, String, Option<Duration>)> {
    weighed
        .iter()
        .filter_map(|weighed| match (&weighed.cache, &weighed.id_text) {
            (Some((name, ttl)), Some(id_text)) => Some((id_text.clone(), name.clone(), *ttl)),
            _ => None,
        })
        .collect()
}

/// A batch: each element decided on its own (and its cached answer read, for a cacheable
/// request, in the same round trip); the admitted ones not answered from the cache go on
/// together, and the results among their answers are cached. `Err(parts)`: every element
/// admitted and none answered from the cache, for the caller to send the body on as it came.
#[allow(clippy::result_large_err)] // the parts are handed back, not an error
async fn answer_batch<S>(
    config: &Config,
    inner: &mut S,
    parts: http::request::Parts,
    key: &ApiKey,
    limiter: &SharedLimiter,
    elements: &[Bytes],
    weighed: &[Weighed],
) -> Result<Response<Full<Bytes>>, http::request::Parts>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>,
{
    let mut admitted = Vec::with_capacity(elements.len());
    // Answers made here: refusals, and answers from the cache.
    let mut made = Vec::new();
    let mut worst: Option<(StatusCode, Option<Duration>)> = None;
    let mut from_cache = 0;
    // The admitted requests whose answers are to be cached: their ids and cached names.
    let mut misses = Vec::new();
    let costs: Vec<u64> = weighed.iter().map(|weighed| weighed.cost).collect();
    let names: Vec<Option<&str>> = weighed
        .iter()
        .map(|weighed| match (&weighed.cache, &weighed.id_text) {
            (Some((name, _)), Some(_)) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let decided = limiter.check_many_and_read(key, &costs, &names).await;
    for ((element, weighed), (decision, cached)) in elements.iter().zip(weighed).zip(decided) {
        match (refusal(decision), cached, &weighed.id_text) {
            (None, Some(result), Some(id_text)) => {
                metrics::request(key.label(), "cached");
                made.push(success(id_text, &result));
                from_cache += 1;
            }
            (None, _, _) => {
                metrics::request(key.label(), "allowed");
                admitted.push(element.clone());
                if let (Some((name, ttl)), Some(id_text)) = (&weighed.cache, &weighed.id_text) {
                    misses.push((id_text.clone(), name.clone(), *ttl));
                }
            }
            (Some((status, object, wait)), _, _) => {
                metrics::request(key.label(), outcome_of(status));
                if weighed.is_request {
                    made.push(frame(&weighed.id, &object));
                }
                let longest = worst.and_then(|(_, w)| w).max(wait);
                worst = Some((status, longest));
            }
        }
    }
    if worst.is_none() && from_cache == 0 {
        return Err(parts);
    }
    if admitted.is_empty() {
        let body = if made.is_empty() {
            Bytes::new()
        } else {
            join_batch(&made)
        };
        let status = match worst {
            Some((status, _)) if from_cache == 0 => status,
            _ => StatusCode::OK,
        };
        let mut answer = json_response(status, body);
        if status != StatusCode::OK {
            retry_after(&mut answer, worst.and_then(|(_, wait)| wait));
        }
        return Ok(answer);
    }
    let answered = call(inner, parts, join_batch(&admitted)).await;
    let answered = remember_batch(config, limiter, misses, answered).await;
    let (head, body) = answered.into_parts();
    let body = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let mut answers = batch_elements(&body).unwrap_or_default();
    answers.extend(made);
    let mut merged = Response::from_parts(head, Full::new(join_batch(&answers)));
    *merged.status_mut() = StatusCode::OK;
    merged.headers_mut().remove(http::header::CONTENT_LENGTH);
    merged
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(merged)
}

/// What the layer needs to know of a message.
struct Weighed {
    id: Id<'static>,
    /// Its id's JSON text as the client wrote it (requests).
    id_text: Option<Bytes>,
    cost: u64,
    /// Whether it is a request (a notification gets no answer).
    is_request: bool,
    /// The name of its cached answer and how long that is kept, when its method's answers
    /// are cached.
    cache: Option<(String, Option<Duration>)>,
}

/// What a message costs, its id (its JSON text a slice of `bytes`, which it was parsed
/// from), whether it is a request, its cached answer's name; a message that did not parse
/// (`None`) costs 1 and is answered by the service.
fn weigh(config: &Config, bytes: &Bytes, message: Option<&Message<'_>>) -> Weighed {
    match message {
        Some(Message::Request(request)) => {
            let method = request.method();
            let id_text = match crate::message::id_range_within(bytes, request.id()) {
                Some(range) => bytes.slice(range),
                None => Bytes::from(request.id().json_parts().concat()),
            };
            let cache = config.cached.get(method).map(|ttl| {
                use sha2::Digest;
                let mut digest = sha2::Sha256::new();
                digest.update(method.as_bytes());
                digest.update(b"\n");
                if let Some(params) = request.raw_params() {
                    digest.update(params.get().as_bytes());
                }
                let mut name = String::with_capacity(CACHE_PREFIX.len() + 64);
                name.push_str(CACHE_PREFIX);
                super::keys::push_hex(&mut name, &digest.finalize());
                (name, *ttl)
            });
            Weighed {
                id: request.id().clone().into_owned(),
                id_text: Some(id_text),
                cost: config.weights.get(method).copied().unwrap_or(1),
                is_request: true,
                cache,
            }
        }
        Some(Message::Notification(notification)) => Weighed {
            id: Id::null(),
            id_text: None,
            cost: config.weights.get(notification.method()).copied().unwrap_or(1),
            is_request: false,
            cache: None,
        },
        _ => Weighed {
            id: Id::null(),
            id_text: None,
            cost: 1,
            is_request: true,
            cache: None,
        },
    }
}

/// The refusal a decision is: its status, error and wait; `None` to let it through.
fn refusal(decision: Decision) -> Option<(StatusCode, ErrorObject<'static>, Option<Duration>)> {
    match decision {
        Decision::Allowed { .. } => None,
        Decision::Limited { retry_after } => Some((
            StatusCode::TOO_MANY_REQUESTS,
            ErrorObject::new(LIMIT_EXCEEDED, "limit exceeded: over this key's rate"),
            Some(retry_after),
        )),
        Decision::Unavailable => Some((
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorObject::new(
                LIMITER_UNAVAILABLE,
                "Service Unavailable: the rate limit cannot be checked",
            ),
            None,
        )),
    }
}

async fn call<S>(inner: &mut S, parts: http::request::Parts, body: Bytes) -> Response<Full<Bytes>>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>,
{
    match inner.call(Request::from_parts(parts, Full::new(body))).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// The outcome a refusal's status counts as.
fn outcome_of(status: StatusCode) -> &'static str {
    if status == StatusCode::TOO_MANY_REQUESTS {
        "limited"
    } else {
        "unavailable"
    }
}

/// `Retry-After` in whole seconds, rounded up (at least 1).
fn retry_after(response: &mut Response<Full<Bytes>>, wait: Option<Duration>) {
    if let Some(wait) = wait {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
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

fn error_response(status: StatusCode, id: &Id<'_>, code: i64, message: &str) -> Response<Full<Bytes>> {
    json_response(status, frame(id, &ErrorObject::new(code, message.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::lock_unpoisoned;

    #[test]
    fn a_layer_cloned_then_set_up_keeps_the_first_as_it_was() {
        use tower_layer::Layer;
        let first = FleetLayer::new(ApiKeys::parse("k 1").unwrap());
        let second = first.clone().with_weight("m", 3).with_max_cached(1);
        assert_ne!(format!("{first:?}"), format!("{second:?}"));
        assert!(first.config.weights.is_empty() && second.config.weights["m"] == 3);
        let _ = second.layer(());
    }

    /// Two requests waiting for a first that ends without reaching the upstream: one of them
    /// becomes the first, the other gets its result; a first that got an error lets both go
    /// on by themselves.
    #[tokio::test]
    async fn waiting_requests_join_again_when_the_first_never_reached_the_upstream() {
        let layer = FleetLayer::new(ApiKeys::parse("k 1").unwrap());
        let config = &layer.config;
        let lead_or_wait = |joined| async move {
            match follow(config, "x", joined).await {
                Ok(result) => result,
                Err(Some(first)) => {
                    tokio::task::yield_now().await;
                    first.share(Some(Bytes::from_static(b"led")));
                    Bytes::from_static(b"first")
                }
                Err(None) => Bytes::from_static(b"alone"),
            }
        };
        let Joined::First(refused) = join(config, "x") else {
            panic!("the first")
        };
        let (second, third) = (join(config, "x"), join(config, "x"));
        let dropped = async move {
            tokio::task::yield_now().await;
            drop(refused);
        };
        let ((), second, third) = tokio::join!(dropped, lead_or_wait(second), lead_or_wait(third));
        let mut got = [second, third];
        got.sort();
        assert_eq!(got, [Bytes::from_static(b"first"), Bytes::from_static(b"led")]);
        assert!(lock_unpoisoned(&config.fetching).is_empty());

        let Joined::First(failed) = join(config, "x") else {
            panic!("the first")
        };
        let (second, third) = (join(config, "x"), join(config, "x"));
        let shared = async move {
            tokio::task::yield_now().await;
            failed.share(None);
        };
        let ((), second, third) = tokio::join!(shared, lead_or_wait(second), lead_or_wait(third));
        assert_eq!(
            [second, third],
            [Bytes::from_static(b"alone"), Bytes::from_static(b"alone")]
        );
    }
}
