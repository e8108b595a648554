//! `Gateway`: the forwarding side of a JSON-RPC gateway as a [`Router`] fallback — method
//! policy (allow and deny lists), per-method upstream pools, and coalescing of identical
//! requests under way.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use tokio::sync::watch;

use super::forward_error::ForwardError;
use super::id_slot::IdSlot;
use super::metrics;
use super::pool::UpstreamPool;
use super::upstream::{FrameAnswer, GATEWAY_ID};
use crate::dispatch::frame_forward::{ForwardedAnswer, FrameForwarder};
use crate::dispatch::{RawCall, Router};
use crate::message::{range_within, ErrorObject, JsonBytes, Message};
use crate::sync::{bump, lock_unpoisoned};
use crate::trace::RequestSpan;

/// What a coalesced call's followers wait for.
type Shared = watch::Receiver<Option<Result<JsonBytes, ForwardError>>>;

/// A call's identity for coalescing: the method and the params' bytes.
type Key = (Box<str>, Bytes);

/// Forwards what a [`Router`] does not serve itself to upstream pools, params and results as
/// they came: the default pool, or the pool a method is routed to; methods outside the allow
/// list or on the deny list are answered -32601 without being forwarded; identical calls
/// (same method, same params bytes) under way at the same time can share one upstream call,
/// each client still answered with its own id. Upstream failures are answered with the
/// [`ForwardError`]'s error object.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::dispatch::Router;
/// use rpcwire::proxy::{Gateway, Upstream, UpstreamPool};
///
/// let pool = UpstreamPool::new(vec![Upstream::address("tcp://127.0.0.1:9")]);
/// let mut router = Router::new();
/// router.method("gateway_version", |_: rpcwire::dispatch::NoParams| Ok("1"));
/// Gateway::new(pool).deny(["admin_peers"]).coalesce(true).install(&mut router);
///
/// let mut out = bytes::BytesMut::new();
/// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"admin_peers"}"#, &mut out).await;
/// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601"#));
/// # });
/// ```
pub struct Gateway {
    default: Arc<UpstreamPool>,
    routes: HashMap<Box<str>, Arc<UpstreamPool>>,
    allow: Option<HashSet<Box<str>>>,
    deny: HashSet<Box<str>>,
    coalesce: bool,
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
}

/// What a [`Gateway`] did so far.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![]));
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
    /// Calls answered with a gateway error (no upstream answer).
    pub failed: u64,
}

impl Gateway {
    /// A gateway forwarding every method to `pool`, no method denied, no coalescing.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let router = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).into_router();
    /// assert!(router.is_empty()); // everything goes to the fallback
    /// # });
    /// ```
    pub fn new(pool: UpstreamPool) -> Gateway {
        Gateway::from_shared(Arc::new(pool))
    }

    /// A gateway forwarding every method to a pool shared with others (one that the program
    /// also reads statistics from, say).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pool = std::sync::Arc::new(rpcwire::proxy::UpstreamPool::new(vec![]));
    /// let gateway = rpcwire::proxy::Gateway::from_shared(pool.clone());
    /// # let _ = gateway;
    /// assert_eq!(pool.upstreams().len(), 0);
    /// # });
    /// ```
    pub fn from_shared(pool: Arc<UpstreamPool>) -> Gateway {
        Gateway {
            default: pool,
            routes: HashMap::new(),
            allow: None,
            deny: HashSet::new(),
            coalesce: false,
            under_way: Mutex::default(),
            counters: GatewayCounters::default(),
        }
    }

    /// Forwards `methods` to `pool` instead of the default pool (say, writes to a primary
    /// node, reads to replicas).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Gateway, Upstream, UpstreamPool};
    /// let primary = UpstreamPool::new(vec![Upstream::address("tcp://primary:8545")]);
    /// let gateway = Gateway::new(UpstreamPool::new(vec![])).route(["eth_sendRawTransaction"], primary);
    /// # let _ = gateway;
    /// # });
    /// ```
    pub fn route<'m>(mut self, methods: impl IntoIterator<Item = &'m str>, pool: UpstreamPool) -> Gateway {
        let pool = Arc::new(pool);
        for method in methods {
            self.routes.insert(method.into(), pool.clone());
        }
        self
    }

    /// Forwards only `methods` (added to those allowed already); any other is answered -32601.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).allow(["eth_chainId"]);
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
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).deny(["admin_addPeer"]);
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
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).coalesce(true);
    /// # let _ = gateway;
    /// # });
    /// ```
    pub fn coalesce(mut self, on: bool) -> Gateway {
        self.coalesce = on;
        self
    }

    /// Whether the method policy lets `method` through.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert!(rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).forwards("anything"));
    /// # });
    /// ```
    pub fn forwards(&self, method: &str) -> bool {
        !self.deny.contains(method) && self.allow.as_ref().map_or(true, |allow| allow.contains(method))
    }

    /// What the gateway did so far.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stats = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).stats();
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
        }
    }

    /// A router that forwards everything (its fallback); see [`install`](Gateway::install).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let router = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).into_router();
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

    /// Makes the gateway `router`'s fallback: methods `router` serves itself are answered
    /// there, the rest forwarded. Returns a handle to the gateway (for its stats).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut router = rpcwire::dispatch::Router::new();
    /// let gateway = rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamPool::new(vec![])).install(&mut router);
    /// assert_eq!(gateway.stats().forwarded, 0);
    /// # });
    /// ```
    pub fn install(self, router: &mut Router) -> Arc<Gateway> {
        let gateway = Arc::new(self);
        let handle = gateway.clone();
        let forwarding = FrameForwarding(gateway.clone());
        router.fallback_async(move |call: RawCall| {
            let gateway = gateway.clone();
            async move { gateway.forward(call).await }
        });
        // Single requests skip the fallback: their frames go on as they are.
        router.set_frame_forwarder(Arc::new(forwarding));
        handle
    }

    /// Forwards one request's frame (`upstream_frame`: the client's with the gateway's id) and
    /// gives the whole answer frame with the client's id (`client_id`, its exact text) back
    /// in place: the upstream's answer as it came when the upstream takes frames, else the
    /// result or the error in a response written here.
    async fn forward_frame(
        &self,
        method: &str,
        params: Option<JsonBytes>,
        upstream_frame: Bytes,
        client_id: Bytes,
        span: RequestSpan,
    ) -> Bytes {
        let pool = self.routes.get(method).unwrap_or(&self.default);
        bump(&self.counters.forwarded);
        let outcome = span
            .instrument(pool.call_frame(&upstream_frame, method, params.as_ref()))
            .await;
        let mut out = BytesMut::new();
        match outcome {
            Ok(FrameAnswer::Frame(answer)) => {
                span.finish(None, false);
                // The upstream's answer as it came, with the client's id in place of ours.
                return if answer.id_text() == &client_id[..] {
                    answer.text().clone()
                } else {
                    answer.replace(&client_id)
                };
            }
            Ok(FrameAnswer::Result(result)) => {
                span.finish(None, false);
                write_head(&mut out, &client_id);
                out.extend_from_slice(br#","result":"#);
                out.extend_from_slice(&result.into_bytes());
                out.extend_from_slice(b"}");
            }
            Err(error) => {
                if !matches!(error, ForwardError::Remote(_)) {
                    bump(&self.counters.failed);
                }
                let error = error.to_error_object();
                span.finish(Some(error.code().code()), false);
                write_head(&mut out, &client_id);
                out.extend_from_slice(br#","error":"#);
                crate::encode::write_error_object(&mut out, &error);
                out.extend_from_slice(b"}");
            }
        }
        out.freeze()
    }

    /// Forwards one call or notification and gives its answer.
    async fn forward(&self, call: RawCall) -> Result<JsonBytes, ErrorObject<'static>> {
        let method = call.method();
        if !self.forwards(method) {
            bump(&self.counters.denied);
            metrics::denied(method);
            return Err(ErrorObject::method_not_found(method));
        }
        let pool = self.routes.get(method).unwrap_or(&self.default);
        let params = call.params().map(JsonBytes::to_raw_json);
        if call.is_notification() {
            bump(&self.counters.notifications);
            // Nobody hears of a failure: a notification has no answer.
            let _ = pool.notify(method, params.as_ref()).await;
            return Ok(JsonBytes::from_validated(Bytes::from_static(b"null")));
        }
        let result = if self.coalesce {
            self.coalesced(pool, &call).await
        } else {
            bump(&self.counters.forwarded);
            pool.call(method, params.as_ref()).await
        };
        result.map_err(|error| {
            if !matches!(error, ForwardError::Remote(_)) {
                bump(&self.counters.failed);
            }
            error.to_error_object()
        })
    }

    /// The call's answer, shared with identical calls under way.
    async fn coalesced(&self, pool: &UpstreamPool, call: &RawCall) -> Result<JsonBytes, ForwardError> {
        let key: Key = (
            call.method().into(),
            call.params().map(|p| p.clone().into_bytes()).unwrap_or_default(),
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
            Err(sender) => return self.lead(pool, call, key, sender).await,
        };
        if let Ok(answer) = shared.wait_for(Option::is_some).await {
            if let Some(answer) = answer.clone() {
                bump(&self.counters.coalesced);
                metrics::coalesced(call.method());
                return answer;
            }
        }
        // The leader went away without an answer: call on our own.
        bump(&self.counters.forwarded);
        let params = call.params().map(JsonBytes::to_raw_json);
        pool.call(call.method(), params.as_ref()).await
    }

    /// Makes the upstream call for every identical call that comes while it is under way.
    async fn lead(
        &self,
        pool: &UpstreamPool,
        call: &RawCall,
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
        bump(&self.counters.forwarded);
        let params = call.params().map(JsonBytes::to_raw_json);
        let answer = pool.call(call.method(), params.as_ref()).await;
        drop(leaving);
        let _ = sender.send(Some(answer.clone()));
        answer
    }
}

/// The start of a response whose id's exact JSON text is `id`, up to the id (what
/// `encode::begin_success` and `write_error` write before their members, for an id known only
/// as its text).
fn write_head(out: &mut BytesMut, id: &[u8]) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id);
}

/// A gateway's forwarding of single requests' frames, ahead of its fallback handler.
struct FrameForwarding(Arc<Gateway>);

impl FrameForwarder for FrameForwarding {
    fn forward(&self, frame: &Bytes, message: &Message<'_>) -> Option<ForwardedAnswer> {
        let Message::Request(request) = message else {
            return None;
        };
        let gateway = &self.0;
        let method = request.method();
        // Refused methods and coalesced calls are the fallback's to answer.
        if gateway.coalesce || !gateway.forwards(method) {
            return None;
        }
        let slot = IdSlot::find(frame, message)?;
        let client_id = frame.slice(slot.id_range());
        let upstream_frame = slot.replace(GATEWAY_ID.as_bytes());
        let params = request
            .params()
            .map(|params| JsonBytes::slice_of(frame, &params.raw()));
        // The method's text in the frame (no copy), or a copy when it had escapes.
        let method = match range_within(frame, method.as_bytes()) {
            Some(range) => frame.slice(range),
            None => Bytes::copy_from_slice(method.as_bytes()),
        };
        let span = RequestSpan::start(request.method(), Some(request.id()));
        let gateway = gateway.clone();
        Some(Box::pin(async move {
            let method = std::str::from_utf8(&method).unwrap_or_default();
            gateway
                .forward_frame(method, params, upstream_frame, client_id, span)
                .await
        }))
    }
}
