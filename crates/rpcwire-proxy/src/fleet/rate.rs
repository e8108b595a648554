//! `RateLimitLayer`: a JSON-RPC layer that counts each call against its caller's API key's
//! rate, shared by the fleet through a [`SharedLimiter`] — a batch decided in one round trip —
//! and refuses what is over it ([`Refused`]).

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;

use super::cached::{CacheLayer, Prefetched};
use super::keys::ApiKey;
use super::limit::{Decision, SharedLimiter};
use super::metrics;
use crate::message::ErrorObject;
use crate::middleware::{BatchEntry, BatchOutcome, Readiness, RpcCall, RpcService};

/// Why the fleet refused a call: what its client is answered with, and the HTTP status and
/// `Retry-After` of an HTTP answer that holds nothing else.
///
/// ```
/// use std::time::Duration;
/// use rpcwire::proxy::fleet::Refused;
/// let refused = Refused::Limited { retry_after: Duration::from_millis(1500) };
/// assert_eq!(refused.status(), 429);
/// assert_eq!(refused.retry_after_seconds(), Some(2));
/// assert_eq!(refused.to_error_object().code().code(), rpcwire::codes::LIMIT_EXCEEDED);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// No known API key came with it (`401`, [`UNAUTHORIZED`](crate::codes::UNAUTHORIZED)).
    Unauthorized,
    /// Over its key's rate: it may be sent again after `retry_after` (`429`,
    /// [`LIMIT_EXCEEDED`](crate::codes::LIMIT_EXCEEDED)).
    Limited {
        /// How long until it would be let through.
        retry_after: Duration,
    },
    /// The rate could not be checked (Redis not answering, the limiter closed then: `503`,
    /// [`UNAVAILABLE`](crate::codes::UNAVAILABLE)).
    Unavailable,
}

impl Refused {
    /// The refusal a limiter's decision is; `None` to let the call through.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{Decision, Refused};
    /// assert_eq!(Refused::of(Decision::Allowed { shared: true }), None);
    /// assert_eq!(Refused::of(Decision::Unavailable), Some(Refused::Unavailable));
    /// ```
    pub fn of(decision: Decision) -> Option<Refused> {
        match decision {
            Decision::Allowed { .. } => None,
            Decision::Limited { retry_after } => Some(Refused::Limited { retry_after }),
            Decision::Unavailable => Some(Refused::Unavailable),
        }
    }

    /// The HTTP status of an answer that holds only refusals of this kind.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::fleet::Refused::Unauthorized.status(), 401);
    /// ```
    pub fn status(&self) -> StatusCode {
        match self {
            Refused::Unauthorized => StatusCode::UNAUTHORIZED,
            Refused::Limited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Refused::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// How long to wait before sending it again, when the refusal says.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::fleet::Refused::Unavailable.retry_after(), None);
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Refused::Limited { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// [`retry_after`](Refused::retry_after) in whole seconds, rounded up (at least 1): an
    /// HTTP `Retry-After`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let refused = rpcwire::proxy::fleet::Refused::Limited { retry_after: Duration::from_millis(1) };
    /// assert_eq!(refused.retry_after_seconds(), Some(1));
    /// ```
    pub fn retry_after_seconds(&self) -> Option<u64> {
        self.retry_after()
            .map(|wait| (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1))
    }

    /// The error object its client is answered with.
    ///
    /// ```
    /// let object = rpcwire::proxy::fleet::Refused::Unauthorized.to_error_object();
    /// assert_eq!(object.code().code(), rpcwire::codes::UNAUTHORIZED);
    /// ```
    pub fn to_error_object(&self) -> ErrorObject<'static> {
        match self {
            Refused::Unauthorized => ErrorObject::new(
                crate::codes::UNAUTHORIZED,
                "Unauthorized: a known API key is required",
            ),
            Refused::Limited { .. } => ErrorObject::new(
                crate::codes::LIMIT_EXCEEDED,
                "limit exceeded: over this key's rate",
            ),
            Refused::Unavailable => ErrorObject::new(
                crate::codes::UNAVAILABLE,
                "Service Unavailable: the rate limit cannot be checked",
            ),
        }
    }

    /// The outcome it counts as in the fleet's metrics.
    pub(super) fn outcome(&self) -> &'static str {
        match self {
            Refused::Unauthorized => "unauthorized",
            Refused::Limited { .. } => "limited",
            Refused::Unavailable => "unavailable",
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.to_error_object().message())
    }
}

impl std::error::Error for Refused {}

/// Makes [`RateLimited`] services: each call (and notification) of the service it wraps is
/// counted against the rate of the [`ApiKey`] among its [extensions](RpcCall::extension) —
/// `weight` requests for a heavy method, 1 for the others — and refused past it; a call
/// without a key is refused as [`Refused::Unauthorized`]. A batch is decided in one round
/// trip, each entry on its own, and what is let through goes on as one batch.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use rpcwire::middleware::{CallContext, RpcCall, RpcService};
/// use rpcwire::proxy::fleet::{ApiKeys, LimitConfig, RateLimitLayer, Refused, SharedLimiter};
/// use tower_layer::Layer;
///
/// struct Pong;
/// impl RpcService for Pong {
///     type Answer = &'static str;
///     type Error = Refused;
///     async fn call(&self, _: RpcCall<'_>) -> Result<&'static str, Refused> {
///         Ok("pong")
///     }
///     async fn notify(&self, _: RpcCall<'_>) -> Result<(), Refused> {
///         Ok(())
///     }
/// }
///
/// // No Redis listens on port 9: the local stand-in decides, at the key's whole rate.
/// let config = LimitConfig { timeout: Duration::from_millis(20), ..LimitConfig::default() };
/// let limiter = SharedLimiter::new("redis://127.0.0.1:9/", config).unwrap();
/// let service = RateLimitLayer::new(limiter).layer(Pong);
/// let keys = ApiKeys::parse("k3y 1").unwrap();
/// let mut caller = http::Extensions::new();
/// caller.insert(keys.find("k3y").unwrap().clone());
/// let context = CallContext::new().with_extensions(&caller);
/// let ping = RpcCall::new("ping", None).with_context(&context);
/// assert_eq!(service.call(ping).await, Ok("pong"));
/// assert!(matches!(service.call(ping).await, Err(Refused::Limited { .. })));
/// assert_eq!(service.call(RpcCall::new("ping", None)).await, Err(Refused::Unauthorized));
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct RateLimitLayer {
    limiter: SharedLimiter,
    weights: Arc<super::ConfigMap<String, u64>>,
    /// The cache inside, whose answers are read in the rate check's round trip.
    reads_for: Option<CacheLayer>,
}

impl RateLimitLayer {
    /// Counts calls through `limiter` (shared by the fleet), each 1 request.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, RateLimitLayer, SharedLimiter};
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// let _ = RateLimitLayer::new(limiter);
    /// ```
    pub fn new(limiter: SharedLimiter) -> RateLimitLayer {
        RateLimitLayer {
            limiter,
            weights: Arc::default(),
            reads_for: None,
        }
    }

    /// A call of `method` counts `cost` requests (at least 1).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, RateLimitLayer, SharedLimiter};
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// let layer = RateLimitLayer::new(limiter).with_weight("eth_getLogs", 10);
    /// assert_eq!(layer.cost("eth_getLogs"), 10);
    /// assert_eq!(layer.cost("eth_chainId"), 1);
    /// ```
    pub fn with_weight(mut self, method: impl Into<String>, cost: u64) -> RateLimitLayer {
        Arc::make_mut(&mut self.weights).insert(method.into(), cost.max(1));
        self
    }

    /// Reads the answers `cache` (the layer inside, on the same Redis) keeps in the rate
    /// check's own round trip, and hands them to it with the call: a cacheable call takes one
    /// round trip, not two. (A batch takes two: its check, then its reads.)
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{CacheLayer, LimitConfig, RateLimitLayer, SharedLimiter};
    /// use tower_layer::Layer;
    /// let redis = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// let cache = CacheLayer::new(redis.clone()).with_method("eth_chainId", None);
    /// let rate = RateLimitLayer::new(redis).reading_for(cache.clone());
    /// # struct Upstream;
    /// # let _ = rate.layer(cache.layer(Upstream));
    /// ```
    pub fn reading_for(mut self, cache: CacheLayer) -> RateLimitLayer {
        self.reads_for = Some(cache);
        self
    }

    /// What a call of `method` costs.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, RateLimitLayer, SharedLimiter};
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert_eq!(RateLimitLayer::new(limiter).cost("anything"), 1);
    /// ```
    pub fn cost(&self, method: &str) -> u64 {
        self.weights.get(method).copied().unwrap_or(1)
    }
}

impl<S> tower_layer::Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;

    fn layer(&self, inner: S) -> RateLimited<S> {
        RateLimited {
            inner,
            layer: self.clone(),
        }
    }
}

/// A service whose calls are counted against their keys' rates. See [`RateLimitLayer`].
#[derive(Clone, Debug)]
pub struct RateLimited<S> {
    inner: S,
    layer: RateLimitLayer,
}

impl<S> RateLimited<S> {
    /// The service it wraps.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, RateLimitLayer, SharedLimiter};
    /// use tower_layer::Layer;
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert_eq!(*RateLimitLayer::new(limiter).layer(7).get_ref(), 7);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// `call` checked against its key's rate: `Err` when refused (counted).
    async fn admit(&self, call: &RpcCall<'_>) -> Result<(), Refused> {
        let Some(key) = call.extension::<ApiKey>() else {
            metrics::request("-", Refused::Unauthorized.outcome());
            return Err(Refused::Unauthorized);
        };
        let decision = self
            .layer
            .limiter
            .check(key, self.layer.cost(call.method()))
            .await;
        refused(key, decision)
    }
}

/// `Err` for a decision that refuses (counted against `key`).
fn refused(key: &ApiKey, decision: Decision) -> Result<(), Refused> {
    match Refused::of(decision) {
        Some(refusal) => {
            metrics::request(key.label(), refusal.outcome());
            Err(refusal)
        }
        None => Ok(()),
    }
}

impl<S> RpcService for RateLimited<S>
where
    S: RpcService,
    S::Error: From<Refused>,
{
    type Answer = S::Answer;
    type Error = S::Error;

    async fn call(&self, call: RpcCall<'_>) -> Result<S::Answer, S::Error> {
        let read = self
            .layer
            .reads_for
            .as_ref()
            .and_then(|cache| cache.name_of(&call));
        let (Some((name, ttl)), Some(key)) = (read, call.extension::<ApiKey>()) else {
            self.admit(&call).await?;
            return self.inner.call(call).await;
        };
        // A cacheable call: its cached answer read in the check's round trip, and handed on.
        let cost = self.layer.cost(call.method());
        let (decision, value) = self.layer.limiter.check_and_read(key, cost, Some(&name)).await;
        refused(key, decision)?;
        let mut extensions = call.extensions().cloned().unwrap_or_default();
        extensions.insert(Prefetched { name, ttl, value });
        let context = call
            .context()
            .copied()
            .unwrap_or_default()
            .with_extensions(&extensions);
        self.inner
            .call(RpcCall::new(call.method(), call.params()).with_context(&context))
            .await
    }

    async fn notify(&self, call: RpcCall<'_>) -> Result<(), S::Error> {
        self.admit(&call).await?;
        self.inner.notify(call).await
    }

    /// Every entry decided in one round trip (all refused without a key); those let through
    /// go on as one batch.
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<S::Answer, S::Error>> {
        // One caller per batch: the key of its first entry.
        let key = entries
            .first()
            .and_then(|entry| entry.call().extension::<ApiKey>());
        let Some(key) = key else {
            metrics::request("-", Refused::Unauthorized.outcome());
            return entries
                .iter()
                .map(|_| Some(Err(Refused::Unauthorized.into())))
                .collect();
        };
        let costs: Vec<u64> = entries
            .iter()
            .map(|entry| self.layer.cost(entry.call().method()))
            .collect();
        let decisions = self.layer.limiter.check_many(key, &costs).await;
        let mut outcomes: Vec<BatchOutcome<S::Answer, S::Error>> = Vec::with_capacity(entries.len());
        let mut admitted = Vec::with_capacity(entries.len());
        let mut places = Vec::with_capacity(entries.len());
        for (place, (entry, decision)) in entries.iter().zip(decisions).enumerate() {
            match refused(key, decision) {
                Ok(()) => {
                    admitted.push(*entry);
                    places.push(place);
                    outcomes.push(None);
                }
                Err(refusal) => outcomes.push(Some(Err(refusal.into()))),
            }
        }
        if admitted.len() == entries.len() {
            return self.inner.batch(entries).await;
        }
        if !admitted.is_empty() {
            for (place, outcome) in places.into_iter().zip(self.inner.batch(&admitted).await) {
                outcomes[place] = outcome;
            }
        }
        outcomes
    }

    fn readiness(&self) -> Readiness {
        self.inner.readiness()
    }
}
