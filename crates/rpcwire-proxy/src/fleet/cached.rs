//! `CacheLayer`: a JSON-RPC layer that answers the calls of chosen methods from a cache shared
//! by the fleet (in its Redis), keyed by the method and the params' bytes; identical calls
//! under way on one instance coalesce (the first asks the cache and the service, and shares
//! what it gets; the others wait for it); results kept — a single call's, or those among a
//! batch's answers — each under its cached answer's name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::limit::SharedLimiter;
use super::metrics;
use crate::middleware::{BatchEntry, BatchOutcome, Readiness, RemoteAnswer, RpcCall, RpcService};
use crate::sync::lock_unpoisoned;

/// Before a cached answer's name (the SHA-256 of the method and the params' bytes).
const CACHE_PREFIX: &str = "rpcwire:cache:";

/// The name a call's answer is cached under in the fleet's Redis: the SHA-256 of its method
/// and its params' bytes (shared by the [`CacheLayer`] and the gateway's
/// [`FinalityCache`](crate::FinalityCache)).
pub(crate) fn cache_name(method: &str, params: Option<&str>) -> String {
    use sha2::Digest;
    let mut digest = sha2::Sha256::new();
    digest.update(method.as_bytes());
    digest.update(b"\n");
    if let Some(params) = params {
        digest.update(params.as_bytes());
    }
    let mut name = String::with_capacity(CACHE_PREFIX.len() + 64);
    name.push_str(CACHE_PREFIX);
    super::keys::push_hex(&mut name, &digest.finalize());
    name
}

/// An answer a [`CacheLayer`] can keep and make: the result it carries for a call, and an
/// answer made of a result kept.
///
/// ```
/// use rpcwire::middleware::{RemoteAnswer, RpcCall};
/// use rpcwire::proxy::fleet::CachedAnswer;
/// let answer = RemoteAnswer::from_result(bytes::Bytes::from_static(b"\"0x1\""));
/// assert_eq!(answer.result_for(&RpcCall::new("eth_chainId", None)).unwrap(), "\"0x1\"");
/// ```
pub trait CachedAnswer: Sized {
    /// An answer with `result` (its JSON text, as it was kept).
    fn from_result(result: Bytes) -> Self;

    /// The result this answer carries for `call` (never an error), as JSON text.
    fn result_for(&self, call: &RpcCall<'_>) -> Option<Bytes>;
}

impl CachedAnswer for RemoteAnswer {
    fn from_result(result: Bytes) -> RemoteAnswer {
        RemoteAnswer::Result(crate::message::JsonBytes::from_validated(result))
    }

    fn result_for(&self, _: &RpcCall<'_>) -> Option<Bytes> {
        match self {
            RemoteAnswer::Result(result) => Some(result.clone().into_bytes()),
            RemoteAnswer::Error { .. } => None,
        }
    }
}

/// Makes [`Cached`] services: the calls of the chosen methods are answered from the cache in
/// `store`'s Redis, shared by the fleet. A result (never an error) is kept when it is at most
/// [`with_max_cached`](CacheLayer::with_max_cached) bytes, and served to any instance's
/// caller. Identical calls under way on one instance coalesce before the cache is asked. A
/// batch's cacheable calls are read in one round trip (without coalescing) and the rest go
/// on as one batch.
///
/// ```
/// use std::time::Duration;
/// use rpcwire::proxy::fleet::{CacheLayer, LimitConfig, SharedLimiter};
/// let store = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
/// let layer = CacheLayer::new(store)
///     .with_method("eth_chainId", None)
///     .with_method("eth_blockNumber", Some(Duration::from_secs(1)));
/// assert!(layer.caches("eth_chainId") && !layer.caches("eth_call"));
/// ```
#[derive(Clone, Debug)]
pub struct CacheLayer {
    store: SharedLimiter,
    methods: Arc<super::ConfigMap<String, Option<Duration>>>,
    max_cached: usize,
    /// The cacheable calls under way on this instance, by their cached answer's name: what
    /// identical ones wait for instead of asking the cache and the service again.
    fetching: Arc<Mutex<HashMap<String, tokio::sync::watch::Receiver<Fetched>>>>,
}

/// What a call under way fetched for the identical ones waiting: nothing yet (`None`), no
/// result to share (`Some(None)`: an error, a refusal), or the result.
type Fetched = Option<Option<Bytes>>;

/// A call's cached answer, read by a layer outside in a round trip it made anyway (the rate
/// limit's check): what the cache layer takes instead of asking Redis again.
#[derive(Clone, Debug)]
pub(super) struct Prefetched {
    /// The cached answer's name, and how long an answer is kept under it.
    pub(super) name: String,
    pub(super) ttl: Option<Duration>,
    /// What was under it (`None`: nothing, or Redis did not decide).
    pub(super) value: Option<Bytes>,
}

impl CacheLayer {
    /// Caches nothing yet, in `store`'s Redis (see [`with_method`](CacheLayer::with_method)).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{CacheLayer, LimitConfig, SharedLimiter};
    /// let store = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert!(!CacheLayer::new(store).caches("eth_chainId"));
    /// ```
    pub fn new(store: SharedLimiter) -> CacheLayer {
        CacheLayer {
            store,
            methods: Arc::default(),
            max_cached: 256 << 10,
            fetching: Arc::default(),
        }
    }

    /// Caches the answers of `method` for `ttl` (`None`: until Redis drops them).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{CacheLayer, LimitConfig, SharedLimiter};
    /// let store = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert!(CacheLayer::new(store).with_method("eth_chainId", None).caches("eth_chainId"));
    /// ```
    pub fn with_method(mut self, method: impl Into<String>, ttl: Option<Duration>) -> CacheLayer {
        Arc::make_mut(&mut self.methods).insert(method.into(), ttl);
        self
    }

    /// The largest result kept (256 KiB by default).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{CacheLayer, LimitConfig, SharedLimiter};
    /// let store = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// let _ = CacheLayer::new(store).with_max_cached(4096);
    /// ```
    pub fn with_max_cached(mut self, bytes: usize) -> CacheLayer {
        self.max_cached = bytes;
        self
    }

    /// Whether the answers of `method` are cached.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{CacheLayer, LimitConfig, SharedLimiter};
    /// let store = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert!(!CacheLayer::new(store).caches("eth_call"));
    /// ```
    pub fn caches(&self, method: &str) -> bool {
        self.methods.contains_key(method)
    }

    /// The name `call`'s answer is cached under and for how long, when its method's answers
    /// are cached and it is a request (it has an id).
    pub(super) fn name_of(&self, call: &RpcCall<'_>) -> Option<(String, Option<Duration>)> {
        call.id()?;
        let ttl = self.methods.get(call.method())?;
        Some((
            cache_name(call.method(), call.params().map(|params| params.get())),
            *ttl,
        ))
    }

    /// Writes `result` under `name` for `ttl` in a task of its own, unless it is over the
    /// size limit.
    fn keep(&self, name: String, ttl: Option<Duration>, result: Bytes) {
        if result.len() <= self.max_cached {
            let store = self.store.clone();
            tokio::spawn(async move { store.write(&name, result, ttl).await });
        }
    }

    /// Joins the calls under way whose cached answer is `name`.
    fn join(&self, name: &str) -> Joined<'_> {
        let mut fetching = lock_unpoisoned(&self.fetching);
        if let Some(fetched) = fetching.get(name) {
            return Joined::Waiting(fetched.clone());
        }
        let (sender, fetched) = tokio::sync::watch::channel(None);
        fetching.insert(name.to_owned(), fetched);
        Joined::First(First {
            layer: self,
            name: name.to_owned(),
            sender,
        })
    }

    /// Waits, when `joined` is waiting, for the result the first of the identical calls under
    /// way fetched (`Ok`). When that one ends without reaching the service (refused, its
    /// caller gone), this one joins again: the first to do so goes on as the new first, the
    /// others wait for it; when the first got an error, this one goes on by itself
    /// (`Err(None)`). `Err(Some)`: this one is (or became) the first.
    async fn follow<'a>(&'a self, name: &str, mut joined: Joined<'a>) -> Result<Bytes, Option<First<'a>>> {
        loop {
            let mut fetched = match joined {
                Joined::First(first) => return Err(Some(first)),
                Joined::Waiting(fetched) => fetched,
            };
            match fetched
                .wait_for(Option::is_some)
                .await
                .map(|fetched| fetched.clone().flatten())
            {
                Ok(Some(result)) => return Ok(result),
                Ok(None) => return Err(None),
                Err(_) => joined = self.join(name),
            }
        }
    }
}

impl<S> tower_layer::Layer<S> for CacheLayer {
    type Service = Cached<S>;

    fn layer(&self, inner: S) -> Cached<S> {
        Cached {
            inner,
            layer: self.clone(),
        }
    }
}

/// How a cacheable call joined the identical ones under way on this instance.
enum Joined<'a> {
    /// None was: this one asks the cache and the service, and shares what it gets.
    First(First<'a>),
    /// One was: this one waits for what it gets.
    Waiting(tokio::sync::watch::Receiver<Fetched>),
}

/// The first of identical calls under way: what it fetched goes to the others when it
/// shares it, or when it ends without (an error, a refusal, its caller gone) they go on
/// themselves.
struct First<'a> {
    layer: &'a CacheLayer,
    name: String,
    sender: tokio::sync::watch::Sender<Fetched>,
}

impl First<'_> {
    fn share(self, result: Option<Bytes>) {
        self.sender.send_replace(Some(result));
    }
}

impl Drop for First<'_> {
    fn drop(&mut self) {
        lock_unpoisoned(&self.layer.fetching).remove(&self.name);
    }
}

/// A service whose chosen methods are answered from the fleet's cache. See [`CacheLayer`].
#[derive(Clone, Debug)]
pub struct Cached<S> {
    inner: S,
    layer: CacheLayer,
}

impl<S> Cached<S> {
    /// The service it wraps.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{CacheLayer, LimitConfig, SharedLimiter};
    /// use tower_layer::Layer;
    /// let store = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert_eq!(*CacheLayer::new(store).layer(7).get_ref(), 7);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S> RpcService for Cached<S>
where
    S: RpcService,
    S::Answer: CachedAnswer,
{
    type Answer = S::Answer;
    type Error = S::Error;

    async fn call(&self, call: RpcCall<'_>) -> Result<S::Answer, S::Error> {
        let layer = &self.layer;
        // Named and read already when a layer outside read it in a round trip of its own.
        let prefetched = call.extension::<Prefetched>();
        let named = match prefetched {
            Some(read) => Some((read.name.clone(), read.ttl)),
            None => layer.name_of(&call),
        };
        let Some((name, ttl)) = named else {
            return self.inner.call(call).await;
        };
        let label = caller(&call);
        if let Some(result) = prefetched.and_then(|read| read.value.clone()) {
            metrics::request(label, "cached");
            return Ok(S::Answer::from_result(result));
        }
        let first = match layer.follow(&name, layer.join(&name)).await {
            Ok(result) => {
                metrics::request(label, "coalesced");
                return Ok(S::Answer::from_result(result));
            }
            Err(first) => first,
        };
        if first.is_some() && prefetched.is_none() {
            if let Some(result) = layer.store.read(&[&name]).await.pop().flatten() {
                metrics::request(label, "cached");
                if let Some(first) = first {
                    first.share(Some(result.clone()));
                }
                return Ok(S::Answer::from_result(result));
            }
        }
        let answer = self.inner.call(call).await;
        let result = answer.as_ref().ok().and_then(|answer| answer.result_for(&call));
        if let Some(first) = first {
            first.share(result.clone());
        }
        if let Some(result) = result {
            layer.keep(name, ttl, result);
        }
        answer
    }

    async fn notify(&self, call: RpcCall<'_>) -> Result<(), S::Error> {
        self.inner.notify(call).await
    }

    /// The cacheable calls read in one round trip; the rest go on as one batch, and the
    /// results among their answers are kept.
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<S::Answer, S::Error>> {
        let layer = &self.layer;
        let names: Vec<Option<(String, Option<Duration>)>> = entries
            .iter()
            .map(|entry| match entry {
                BatchEntry::Call(call) => layer.name_of(call),
                BatchEntry::Notify(_) => None,
            })
            .collect();
        let asked: Vec<&str> = names.iter().flatten().map(|(name, _)| name.as_str()).collect();
        if asked.is_empty() {
            return self.inner.batch(entries).await;
        }
        let mut found = layer.store.read(&asked).await.into_iter();
        let mut outcomes: Vec<BatchOutcome<S::Answer, S::Error>> = Vec::with_capacity(entries.len());
        let mut rest = Vec::with_capacity(entries.len());
        let mut places = Vec::with_capacity(entries.len());
        for (place, (entry, name)) in entries.iter().zip(&names).enumerate() {
            match name.as_ref().and_then(|_| found.next().flatten()) {
                Some(result) => {
                    metrics::request(caller(&entry.call()), "cached");
                    outcomes.push(Some(Ok(S::Answer::from_result(result))));
                }
                None => {
                    rest.push(*entry);
                    places.push(place);
                    outcomes.push(None);
                }
            }
        }
        if rest.is_empty() {
            return outcomes;
        }
        let answered = self.inner.batch(&rest).await;
        for ((entry, place), outcome) in rest.iter().zip(places).zip(answered) {
            if let (Some((name, ttl)), Some(Ok(answer))) = (&names[place], &outcome) {
                if let Some(result) = answer.result_for(&entry.call()) {
                    layer.keep(name.clone(), *ttl, result);
                }
            }
            outcomes[place] = outcome;
        }
        outcomes
    }

    fn readiness(&self) -> Readiness {
        self.inner.readiness()
    }
}

/// The label of the caller's key, for the metrics (`-` without one).
fn caller<'a>(call: &RpcCall<'a>) -> &'a str {
    call.extension::<super::ApiKey>()
        .map_or("-", super::ApiKey::label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::middleware::RemoteAnswer;

    /// Two calls waiting for a first that ends without reaching the service: one of them
    /// becomes the first, the other gets its result; a first that got an error lets both go
    /// on by themselves.
    #[tokio::test]
    async fn waiting_calls_join_again_when_the_first_never_reached_the_service() {
        let store = SharedLimiter::new("redis://127.0.0.1:9/", Default::default()).unwrap();
        let layer = CacheLayer::new(store);
        let lead_or_wait = |joined| {
            let layer = &layer;
            async move {
                match layer.follow("x", joined).await {
                    Ok(result) => result,
                    Err(Some(first)) => {
                        tokio::task::yield_now().await;
                        first.share(Some(Bytes::from_static(b"led")));
                        Bytes::from_static(b"first")
                    }
                    Err(None) => Bytes::from_static(b"alone"),
                }
            }
        };
        let Joined::First(refused) = layer.join("x") else {
            panic!("the first")
        };
        let (second, third) = (layer.join("x"), layer.join("x"));
        let dropped = async move {
            tokio::task::yield_now().await;
            drop(refused);
        };
        let ((), second, third) = tokio::join!(dropped, lead_or_wait(second), lead_or_wait(third));
        let mut got = [second, third];
        got.sort();
        assert_eq!(got, [Bytes::from_static(b"first"), Bytes::from_static(b"led")]);
        assert!(lock_unpoisoned(&layer.fetching).is_empty());

        let Joined::First(failed) = layer.join("x") else {
            panic!("the first")
        };
        let (second, third) = (layer.join("x"), layer.join("x"));
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

    #[test]
    fn only_requests_of_cached_methods_have_names_and_they_follow_the_params_bytes() {
        let store = SharedLimiter::new("redis://127.0.0.1:9/", Default::default()).unwrap();
        let layer = CacheLayer::new(store).with_method("m", None);
        let id = crate::message::Id::from(1);
        let (a, b) = (
            crate::message::RawJson::new("[1]").unwrap(),
            crate::message::RawJson::new("[ 1]").unwrap(),
        );
        let context = crate::middleware::CallContext::new().with_id(&id);
        let name = |method, params| layer.name_of(&RpcCall::new(method, params).with_context(&context));
        assert!(name("other", None).is_none());
        assert!(
            layer.name_of(&RpcCall::new("m", None)).is_none(),
            "a notification"
        );
        let (first, second) = (name("m", Some(&a)).unwrap(), name("m", Some(&b)).unwrap());
        assert!(first.0.starts_with(CACHE_PREFIX) && first.0.len() == CACHE_PREFIX.len() + 64);
        assert_ne!(first.0, second.0);
        assert_eq!(name("m", Some(&a)).unwrap(), first);
        let error = RemoteAnswer::Error {
            error: crate::message::ErrorObject::new(1, "no"),
            text: None,
        };
        assert!(error.result_for(&RpcCall::new("m", None)).is_none());
    }
}
