//! `Gateway`: the forwarding side of a JSON-RPC gateway as a [`Router`] fallback — method
//! policy (allow and deny lists), per-method upstream groups, and coalescing of identical
//! requests under way.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use tokio::sync::watch;

use super::forward_error::ForwardError;
use super::group::{into_result, UpstreamGroup};
use super::id_slot::IdSlot;
use super::link::{LinkAnswer, GATEWAY_ID};
use super::metrics;
use crate::dispatch::{
    Fallback, FallbackAnswer, FallbackBatchAnswer, FallbackBatchFuture, FallbackCall, FallbackFuture, Router,
};
use crate::message::{range_within, ErrorObject, Id, JsonBytes};
use crate::sync::{bump, lock_unpoisoned};
use crate::trace::event;

/// What a coalesced call's followers wait for.
mod batch;
mod chain;

pub use chain::DEFAULT_MAX_LOG_CHUNKS;

type Shared = watch::Receiver<Option<Result<JsonBytes, ForwardError>>>;

/// A call's identity for coalescing: the method and the params' bytes.
type Key = (Box<str>, Bytes);

/// Forwards what a [`Router`] does not serve itself to upstream groups, params and results as
/// they came: the default group, or the group a method is routed to; methods outside the allow
/// list or on the deny list are answered -32601 without being forwarded; identical calls
/// (same method, same params bytes) under way at the same time can share one upstream call,
/// each client still answered with its own id. Upstream failures are answered with the
/// [`ForwardError`]'s error object.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::dispatch::Router;
/// use rpcwire::proxy::{Gateway, Upstream, UpstreamGroup};
///
/// let group = UpstreamGroup::new(vec![Upstream::address("tcp://127.0.0.1:9").unwrap()]);
/// let mut router = Router::new();
/// router.method("gateway_version", |_: rpcwire::dispatch::NoParams| Ok("1"));
/// Gateway::new(group).deny(["admin_peers"]).coalesce(true).install(&mut router);
///
/// let mut out = bytes::BytesMut::new();
/// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"admin_peers"}"#, &mut out).await;
/// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601"#));
/// # });
/// ```
pub struct Gateway {
    default: Arc<UpstreamGroup>,
    routes: HashMap<Box<str>, Arc<UpstreamGroup>>,
    allow: Option<HashSet<Box<str>>>,
    deny: HashSet<Box<str>>,
    coalesce: bool,
    subscriptions: Option<crate::Subscriptions>,
    cache: Option<crate::FinalityCache>,
    log_chunks: Option<u64>,
    non_conforming: NonConformingPolicy,
    under_way: Mutex<HashMap<Key, Shared>>,
    counters: GatewayCounters,
}

#[derive(Debug, Default)]
struct GatewayCounters {
    forwarded: AtomicU64,
    notifications: AtomicU64,
    denied: AtomicU64,
    coalesced: AtomicU64,
    failed: AtomicU64,
    non_conforming: AtomicU64,
}

/// What a [`Gateway`] did so far.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![]));
/// assert_eq!(gateway.stats().forwarded, 0);
/// # });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatewayStats {
    /// Calls forwarded upstream (coalesced followers not included).
    pub forwarded: u64,
    /// Notifications forwarded upstream.
    pub notifications: u64,
    /// Requests and notifications refused by the method policy.
    pub denied: u64,
    /// Calls answered with another identical call's upstream answer.
    pub coalesced: u64,
    /// Calls answered with a gateway error (no upstream answer, or one refused).
    pub failed: u64,
    /// Upstream answers that broke JSON-RPC 2.0 (refused or delivered, as the
    /// [`NonConformingPolicy`] says).
    pub non_conforming: u64,
}

/// What a [`Gateway`] does with an upstream answer that breaks JSON-RPC 2.0 — some nodes
/// send `"result":null` beside an `"error"`, or both `null` — which the strict parser
/// refuses. Either way it is counted ([`GatewayStats::non_conforming`]) and traced.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::proxy::{Gateway, NonConformingPolicy, UpstreamGroup};
/// let gateway = Gateway::new(UpstreamGroup::new(vec![])).non_conforming(NonConformingPolicy::Deliver);
/// # let _ = gateway;
/// # });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NonConformingPolicy {
    /// The client gets an error saying what the upstream sent and why it was refused
    /// ([`ForwardError::NonConforming`]: -32012, the upstream's error member kept in
    /// `data`), never "no answer". The default: the gateway stays strict toward clients.
    #[default]
    Refuse,
    /// The client gets the answer as the upstream wrote it, with the client's id put back.
    Deliver,
}

impl Gateway {
    /// A gateway forwarding every method to `pool`, no method denied, no coalescing.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let router = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).into_router();
    /// assert!(router.is_empty()); // everything goes to the fallback
    /// # });
    /// ```
    pub fn new(pool: UpstreamGroup) -> Gateway {
        Gateway::from_shared(Arc::new(pool))
    }

    /// A gateway forwarding every method to a group shared with others (one that the program
    /// also reads statistics from, say).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let group = std::sync::Arc::new(rpcwire::proxy::UpstreamGroup::new(vec![]));
    /// let gateway = rpcwire::proxy::Gateway::from_shared(group.clone());
    /// # let _ = gateway;
    /// assert_eq!(group.upstreams().len(), 0);
    /// # });
    /// ```
    pub fn from_shared(pool: Arc<UpstreamGroup>) -> Gateway {
        Gateway {
            default: pool,
            routes: HashMap::new(),
            allow: None,
            deny: HashSet::new(),
            coalesce: false,
            subscriptions: None,
            cache: None,
            log_chunks: None,
            non_conforming: NonConformingPolicy::default(),
            under_way: Mutex::default(),
            counters: GatewayCounters::default(),
        }
    }

    /// Forwards `methods` to `pool` instead of the default group (say, writes to a primary
    /// node, reads to replicas).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Gateway, Upstream, UpstreamGroup};
    /// let primary = UpstreamGroup::new(vec![Upstream::address("tcp://primary:8545").unwrap()]);
    /// let gateway = Gateway::new(UpstreamGroup::new(vec![])).route(["eth_sendRawTransaction"], primary);
    /// # let _ = gateway;
    /// # });
    /// ```
    pub fn route<'m>(self, methods: impl IntoIterator<Item = &'m str>, pool: UpstreamGroup) -> Gateway {
        self.route_shared(methods, Arc::new(pool))
    }

    /// Forwards `methods` to a group shared with others (one whose heads a
    /// [`HeadTracker`](crate::HeadTracker) polls, say) instead of the default group.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use rpcwire::proxy::{Gateway, Upstream, UpstreamGroup};
    /// let archive = Arc::new(UpstreamGroup::new(vec![Upstream::address("tcp://archive:8545").unwrap()]));
    /// let gateway = Gateway::new(UpstreamGroup::new(vec![])).route_shared(["debug_traceTransaction"], archive.clone());
    /// # let _ = gateway;
    /// # });
    /// ```
    pub fn route_shared<'m>(
        mut self,
        methods: impl IntoIterator<Item = &'m str>,
        pool: Arc<UpstreamGroup>,
    ) -> Gateway {
        for method in methods {
            self.routes.insert(method.into(), pool.clone());
        }
        self
    }

    /// Forwards only `methods` (added to those allowed already); any other is answered -32601.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).allow(["eth_chainId"]);
    /// assert!(gateway.forwards("eth_chainId") && !gateway.forwards("debug_traceTransaction"));
    /// # });
    /// ```
    pub fn allow<'m>(mut self, methods: impl IntoIterator<Item = &'m str>) -> Gateway {
        self.allow
            .get_or_insert_with(HashSet::new)
            .extend(methods.into_iter().map(Box::from));
        self
    }

    /// Never forwards `methods`: they are answered -32601.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).deny(["admin_addPeer"]);
    /// assert!(!gateway.forwards("admin_addPeer") && gateway.forwards("eth_call"));
    /// # });
    /// ```
    pub fn deny<'m>(mut self, methods: impl IntoIterator<Item = &'m str>) -> Gateway {
        self.deny.extend(methods.into_iter().map(Box::from));
        self
    }

    /// Whether identical calls (same method and params bytes) under way at the same time
    /// share one upstream call.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).coalesce(true);
    /// # let _ = gateway;
    /// # });
    /// ```
    pub fn coalesce(mut self, on: bool) -> Gateway {
        self.coalesce = on;
        self
    }

    /// What to do with upstream answers that break JSON-RPC 2.0 (see
    /// [`NonConformingPolicy`]; [`Refuse`](NonConformingPolicy::Refuse) by default).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Gateway, NonConformingPolicy, UpstreamGroup};
    /// let gateway = Gateway::new(UpstreamGroup::new(vec![])).non_conforming(NonConformingPolicy::Refuse);
    /// # let _ = gateway;
    /// # });
    /// ```
    pub fn non_conforming(mut self, policy: NonConformingPolicy) -> Gateway {
        self.non_conforming = policy;
        self
    }

    /// Whether the method policy lets `method` through.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert!(rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).forwards("anything"));
    /// # });
    /// ```
    pub fn forwards(&self, method: &str) -> bool {
        let denied = !self.deny.is_empty() && self.deny.contains(method);
        !denied && self.allow.as_ref().map_or(true, |allow| allow.contains(method))
    }

    /// What the gateway did so far.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stats = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).stats();
    /// assert_eq!(stats.denied + stats.coalesced, 0);
    /// # });
    /// ```
    pub fn stats(&self) -> GatewayStats {
        let c = &self.counters;
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        GatewayStats {
            forwarded: get(&c.forwarded),
            notifications: get(&c.notifications),
            denied: get(&c.denied),
            coalesced: get(&c.coalesced),
            failed: get(&c.failed),
            non_conforming: get(&c.non_conforming),
        }
    }

    /// A router that forwards everything (its fallback); see [`install`](Gateway::install).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let router = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).into_router();
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":"x","method":"eth_chainId"}"#, &mut out).await;
    /// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":"x","error":{"code":-32010"#)); // no upstream
    /// # });
    /// ```
    pub fn into_router(self) -> Router {
        let mut router = Router::new();
        self.install(&mut router);
        router
    }

    /// Makes the gateway `router`'s [`Fallback`]: methods `router` serves itself are
    /// answered there, the rest forwarded — from every transport, alone or inside a batch.
    /// Returns a handle to the gateway (for its stats).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut router = rpcwire::dispatch::Router::new();
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).install(&mut router);
    /// assert_eq!(gateway.stats().forwarded, 0);
    /// # });
    /// ```
    pub fn install(self, router: &mut Router) -> Arc<Gateway> {
        if let Some(subscriptions) = &self.subscriptions {
            subscriptions.install(router);
        }
        let gateway = Arc::new(self);
        router.fallback(Forwarding(gateway.clone()));
        gateway
    }

    /// Serves `eth_subscribe` and `eth_unsubscribe` to clients on WebSocket through
    /// `subscriptions`' upstreams (see [`Subscriptions`](crate::Subscriptions)); over HTTP they
    /// are answered -32601 "notifications not supported", as geth does. Without it they are
    /// forwarded like any method (and their notifications lost).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Dial, Gateway, Subscriptions, UpstreamGroup};
    /// let subscriptions = Subscriptions::new(["ws://127.0.0.1:8546/"], &Dial::new()).unwrap();
    /// let router = Gateway::new(UpstreamGroup::new(vec![])).with_subscriptions(subscriptions).into_router();
    /// assert!(router.len() >= 2);
    /// # });
    /// ```
    pub fn with_subscriptions(mut self, subscriptions: crate::Subscriptions) -> Gateway {
        self.subscriptions = Some(subscriptions);
        self
    }

    /// The group `method` is forwarded to.
    fn pool(&self, method: &str) -> &UpstreamGroup {
        // No route, the usual case: no lookup (a batch asks once per element).
        if self.routes.is_empty() {
            return &self.default;
        }
        self.routes.get(method).unwrap_or(&self.default)
    }

    /// Forwards one request (`upstream_frame`: the client's with the gateway's id) and gives
    /// its answer: the upstream's whole answer with the client's id (`client_id`, its exact
    /// text) put back when the upstream takes frames, else its result, or the error.
    async fn forward_frame(
        &self,
        method: &str,
        params: Option<JsonBytes>,
        upstream_frame: Bytes,
        client_id: Bytes,
    ) -> FallbackAnswer {
        let outcome = self
            .ask(self.pool(method), method, params.as_ref(), Some(&upstream_frame))
            .await;
        self.answered(method, outcome, &client_id)
    }

    /// What the client that called `method` with the id `client_id` (its exact text) is
    /// answered: the upstream's whole answer with the client's id put back when the upstream
    /// takes frames, else its result, or the error.
    fn answered(
        &self,
        method: &str,
        outcome: Result<LinkAnswer, ForwardError>,
        client_id: &Bytes,
    ) -> FallbackAnswer {
        // Named in the event below (with the `tracing` feature).
        let _ = method;
        match outcome {
            // The upstream's answer as it came, with the client's id in place of ours.
            // Error answers too: their members, escapes and order kept.
            Ok(LinkAnswer::Frame { answer, .. }) if answer.id_text() == &client_id[..] => {
                FallbackAnswer::Response(answer.text().clone())
            }
            Ok(LinkAnswer::Frame { answer, .. }) => FallbackAnswer::Response(answer.replace(client_id)),
            // A link that makes calls of its own: the error object as the upstream wrote it.
            Ok(LinkAnswer::Remote(answer)) => answer.into(),
            // A batch answers a batch, never a call.
            Ok(LinkAnswer::Batch { .. }) => self.failure(&ForwardError::NoAnswer(
                "the upstream answered a call with a batch".to_owned(),
            )),
            Ok(LinkAnswer::NonConforming {
                answer,
                reason,
                error,
            }) => {
                bump(&self.counters.non_conforming);
                event!(
                    warn,
                    method = method,
                    reason = %reason,
                    "an upstream answer breaks JSON-RPC 2.0"
                );
                match self.non_conforming {
                    NonConformingPolicy::Deliver => FallbackAnswer::Response(answer.replace(client_id)),
                    NonConformingPolicy::Refuse => {
                        FallbackAnswer::Error(self.failed(&ForwardError::NonConforming { reason, error }))
                    }
                }
            }
            Err(error) => self.failure(&error),
        }
    }

    /// What a client is answered when its request got no result: the error object, and for
    /// a limit the time to wait before asking again (over HTTP, 429 with `Retry-After`).
    fn failure(&self, error: &ForwardError) -> FallbackAnswer {
        let object = self.failed(error);
        match error {
            ForwardError::Limited { retry_after, .. } => FallbackAnswer::Limited {
                error: object,
                retry_after: *retry_after,
            },
            _ => FallbackAnswer::Error(object),
        }
    }

    /// The error object a call that got no result is answered with (counted as failed
    /// unless the upstream said so itself).
    fn failed(&self, error: &ForwardError) -> ErrorObject<'static> {
        if !matches!(error, ForwardError::Remote(_)) {
            bump(&self.counters.failed);
        }
        error.to_error_object()
    }

    /// The call's answer, shared with identical calls under way.
    async fn coalesced(&self, method: &str, params: Option<JsonBytes>) -> Result<JsonBytes, ForwardError> {
        let pool = self.pool(method);
        let key: Key = (
            method.into(),
            params.clone().map(JsonBytes::into_bytes).unwrap_or_default(),
        );
        let follow = {
            let mut under_way = lock_unpoisoned(&self.under_way);
            match under_way.get(&key) {
                Some(shared) => Ok(shared.clone()),
                None => {
                    let (sender, receiver) = watch::channel(None);
                    under_way.insert(key.clone(), receiver);
                    Err(sender)
                }
            }
        };
        let mut shared = match follow {
            Ok(shared) => shared,
            Err(sender) => return self.lead(pool, method, params, key, sender).await,
        };
        if let Ok(answer) = shared.wait_for(Option::is_some).await {
            if let Some(answer) = answer.clone() {
                bump(&self.counters.coalesced);
                metrics::coalesced(method);
                return answer;
            }
        }
        // The leader went away without an answer: call on our own.
        self.ask(pool, method, params.as_ref(), None)
            .await
            .and_then(into_result)
    }

    /// Makes the upstream call for every identical call that comes while it is under way.
    async fn lead(
        &self,
        pool: &UpstreamGroup,
        method: &str,
        params: Option<JsonBytes>,
        key: Key,
        sender: watch::Sender<Option<Result<JsonBytes, ForwardError>>>,
    ) -> Result<JsonBytes, ForwardError> {
        /// Takes the call off the list when it ends, answered or dropped.
        struct Leaving<'g> {
            under_way: &'g Mutex<HashMap<Key, Shared>>,
            key: Option<Key>,
        }
        impl Drop for Leaving<'_> {
            fn drop(&mut self) {
                if let Some(key) = self.key.take() {
                    lock_unpoisoned(self.under_way).remove(&key);
                }
            }
        }
        let leaving = Leaving {
            under_way: &self.under_way,
            key: Some(key),
        };
        let answer = self
            .ask(pool, method, params.as_ref(), None)
            .await
            .and_then(into_result);
        drop(leaving);
        let _ = sender.send(Some(answer.clone()));
        answer
    }
}

/// `bytes` as text: a method name the parser validated as UTF-8.
fn text(bytes: &Bytes) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// A gateway as a router's fallback: what the router does not serve goes upstream.
struct Forwarding(Arc<Gateway>);

/// What a notification's answer is (dropped).
fn null_result() -> FallbackAnswer {
    FallbackAnswer::Result(JsonBytes::from_validated(Bytes::from_static(b"null")))
}

/// An element of a client's batch, owned to be forwarded later: its method's text, its
/// params, and its id's exact text (`None`: a notification).
struct Element {
    method: Bytes,
    params: Option<JsonBytes>,
    id: Option<Bytes>,
}

impl Element {
    fn of(call: &FallbackCall<'_>) -> Element {
        Element {
            method: method_bytes(call),
            params: call.params_bytes(),
            id: call.id_text(),
        }
    }
}

/// The method's text in the frame (no copy), or a copy when it had escapes.
fn method_bytes(call: &FallbackCall<'_>) -> Bytes {
    let method = call.method();
    call.bytes()
        .and_then(|frame| Some(frame.slice(range_within(frame, method.as_bytes())?)))
        .unwrap_or_else(|| Bytes::copy_from_slice(method.as_bytes()))
}

impl Fallback for Forwarding {
    fn call(&self, call: FallbackCall<'_>) -> FallbackFuture {
        let gateway = self.0.clone();
        let method = call.method();
        if !gateway.forwards(method) {
            bump(&gateway.counters.denied);
            metrics::denied(method);
            let error = ErrorObject::method_not_found(method);
            return Box::pin(async move { FallbackAnswer::Error(error) });
        }
        let params = call.params_bytes();
        let method = method_bytes(&call);
        // A request alone in its frame: the place of its id there (found once, for both ids).
        let whole = call
            .frame()
            .zip(call.id())
            .and_then(|(frame, id)| IdSlot::of_id(frame, id));
        let client_id = match &whole {
            Some(slot) => Some(slot.text().slice(slot.id_range())),
            None => call.id_text(),
        };
        let Some(client_id) = client_id else {
            bump(&gateway.counters.notifications);
            return Box::pin(async move {
                let method = text(&method);
                let params = params.as_ref().map(JsonBytes::to_raw_json);
                // Nobody hears of a failure: a notification has no answer.
                let _ = gateway.pool(method).notify(method, params.as_ref()).await;
                FallbackAnswer::Result(JsonBytes::from_validated(Bytes::from_static(b"null")))
            });
        };
        if gateway.coalesce {
            return Box::pin(async move {
                let method = text(&method);
                match gateway.coalesced(method, params).await {
                    Ok(result) => FallbackAnswer::Result(result),
                    Err(error) => gateway.failure(&error),
                }
            });
        }
        // Upstream goes the client's frame with the gateway's id in place of the client's
        // (a request alone in its frame), or one written from the method and the params (an
        // element of a batch, a request whose id is `null`).
        let upstream_frame = match whole {
            Some(slot) => slot.replace(GATEWAY_ID.as_bytes()),
            None => {
                let id = Id::from_number_text(GATEWAY_ID);
                let raw = params.as_ref().map(JsonBytes::to_raw_json);
                let mut body =
                    BytesMut::with_capacity(64 + method.len() + params.as_ref().map_or(0, |p| p.len()));
                let method = std::str::from_utf8(&method).unwrap_or_default();
                if let Err(error) = crate::encode::write_call_raw(&mut body, Some(&id), method, raw.as_ref())
                {
                    let error = gateway.failed(&ForwardError::Params(error.to_string()));
                    return Box::pin(async move { FallbackAnswer::Error(error) });
                }
                body.freeze()
            }
        };
        Box::pin(async move {
            let method = text(&method);
            gateway
                .forward_frame(method, params, upstream_frame, client_id)
                .await
        })
    }

    /// A client's batch, forwarded together (see [`Gateway::forward_batch`]); with coalescing
    /// on, each call on its own (`None`), as coalescing is per call.
    fn batch(&self, calls: &[FallbackCall<'_>]) -> Option<FallbackBatchFuture> {
        if self.0.coalesce {
            return None;
        }
        let gateway = self.0.clone();
        // With a cache, each element on its own: some may be answered from it.
        if let Some(whole) = gateway.cache.is_none().then(|| gateway.whole(calls)).flatten() {
            return Some(Box::pin(async move { gateway.forward_whole(whole).await }));
        }
        let elements: Vec<Element> = calls.iter().map(Element::of).collect();
        Some(Box::pin(async move {
            FallbackBatchAnswer::Each(gateway.forward_batch(elements).await)
        }))
    }
}
