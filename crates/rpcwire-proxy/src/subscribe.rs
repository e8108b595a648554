//! `Subscriptions`: `eth_subscribe` / `eth_unsubscribe` through a gateway, over WebSocket.
//!
//! Each client subscription is made on one of the subscription upstreams (WebSocket, one
//! connection each, shared by every client) and gets an id of the gateway's own; the
//! upstream's `eth_subscription` notifications go to the connection that subscribed, with
//! `params.subscription` rewritten to that id. A client's subscriptions end upstream when it
//! unsubscribes or disconnects. When an upstream's connection drops, each subscription it held
//! is made again on another upstream (or the same, connected again), and the client keeps its
//! id; notifications sent meanwhile are lost. Bounded: subscriptions per client, and
//! notifications waiting for a slow client — past that the client's subscriptions end and its
//! connection is closed.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;

use crate::dispatch::{Remote, RequestContext, Router};
use crate::frame::Framing;
use crate::message::{ErrorObject, RawJson};
use crate::sync::{bump, lock_unpoisoned};
use crate::transport::{AnyTransport, Peer};
use crate::Dial;

/// How many subscriptions one client may hold by default.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 64;

/// How many notifications may wait for one client by default before it is dropped.
pub const DEFAULT_MAX_QUEUED: usize = 1024;

/// How long a subscription whose upstream dropped is tried again on the others before it
/// ends (every second).
const RESUBSCRIBE_FOR: Duration = Duration::from_secs(30);

/// `eth_subscribe` and `eth_unsubscribe` through a gateway, for clients on WebSocket: each
/// subscription is made on one of the WebSocket upstreams given (one connection each, shared
/// by every client) and gets an id of the gateway's own; the upstream's notifications go to
/// the connection that subscribed, under that id; a subscription ends upstream when its client
/// unsubscribes or disconnects, and one whose upstream connection drops is made again on
/// another (or the same, connected again) with the client keeping its id — notifications sent
/// meanwhile are lost, and after 30 s of trying it ends. Bounded: subscriptions per client,
/// and notifications waiting for a slow client (past that the client is dropped). Give it to
/// [`Gateway::with_subscriptions`](crate::Gateway::with_subscriptions).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::proxy::{Dial, Subscriptions};
/// let subscriptions = Subscriptions::new(["ws://127.0.0.1:8546/"], &Dial::new()).unwrap().with_limits(16, 256);
/// assert_eq!(subscriptions.stats().active, 0);
/// # });
/// ```
#[derive(Clone)]
pub struct Subscriptions {
    hub: Arc<Hub>,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions")
            .field("stats", &self.stats())
            .finish()
    }
}

/// What subscriptions through the gateway did so far.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let subscriptions = rpcwire::proxy::Subscriptions::new(["ws://h:1"], &rpcwire::proxy::Dial::new()).unwrap();
/// let stats = subscriptions.stats();
/// assert_eq!((stats.active, stats.notifications, stats.dropped_clients), (0, 0, 0));
/// # });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionStats {
    /// Subscriptions held now.
    pub active: usize,
    /// Notifications passed on to clients.
    pub notifications: u64,
    /// Subscriptions made again on another upstream after theirs dropped.
    pub resubscribed: u64,
    /// Clients dropped for not reading their notifications.
    pub dropped_clients: u64,
}

struct Hub {
    upstreams: Vec<SubscriptionUpstream>,
    next: AtomicUsize,
    state: Mutex<State>,
    max_per_client: AtomicUsize,
    max_queued: AtomicUsize,
    notifications: AtomicU64,
    resubscribed: AtomicU64,
    dropped_clients: AtomicU64,
    ids: AtomicU64,
}

/// One upstream that pushes: its address and its connection now (with the number of the
/// connection, so that notifications and closes of an old one are told apart).
struct SubscriptionUpstream {
    /// Its label (never its address: that may hold a key).
    label: Box<str>,
    reach: Reach,
    connection: tokio::sync::Mutex<Option<(u64, Peer)>>,
    connects: AtomicU64,
}

/// How an upstream's connection is made.
enum Reach {
    /// Dialled at its address.
    Dial { address: Box<str>, dial: Dial },
    /// Made by a function of the caller's ([`Subscriptions::connecting`]).
    Connect(Connector),
}

/// Makes a connection to an upstream that pushes, as [`Subscriptions::connecting`] takes it:
/// a transport over any reader and writer ([`AnyTransport::stream`]), NDJSON framed.
pub type Connector = Box<
    dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<AnyTransport>> + Send>>
        + Send
        + Sync,
>;

/// Where a subscription lives upstream: the upstream, its connection's number, and the
/// upstream's id for it (its JSON text).
type Upstreamed = (usize, u64, Box<str>);

#[derive(Default)]
struct State {
    /// Each subscription, by the client's id for it (its JSON text).
    subscriptions: HashMap<Box<str>, Subscription>,
    /// The client's id for each subscription upstream.
    by_upstream: HashMap<Upstreamed, Box<str>>,
    /// Each client, by the address of its link.
    clients: HashMap<usize, Client>,
}

struct Subscription {
    client: usize,
    /// Where it is now (`None` while it is being made again elsewhere).
    upstream: Option<Upstreamed>,
    /// Its `eth_subscribe` params, to make it again.
    params: Box<str>,
}

struct Client {
    queue: mpsc::Sender<Bytes>,
    subscriptions: HashSet<Box<str>>,
    remote: Arc<dyn Remote>,
}

impl Subscriptions {
    /// Subscriptions made on the WebSocket upstreams at `addresses` (`ws://` or `wss://`,
    /// reached as `dial` says), each connected when first needed; an address that is not a
    /// WebSocket one is refused.
    ///
    /// ```
    /// let refused = rpcwire::proxy::Subscriptions::new(["http://node:8545/"], &rpcwire::proxy::Dial::new()).unwrap_err();
    /// assert!(refused.contains("ws://"), "{refused}");
    /// ```
    pub fn new<'a>(
        addresses: impl IntoIterator<Item = &'a str>,
        dial: &Dial,
    ) -> Result<Subscriptions, String> {
        let mut upstreams = Vec::new();
        for address in addresses {
            let scheme = address
                .split_once("://")
                .map(|(scheme, _)| scheme.to_ascii_lowercase());
            if !matches!(scheme.as_deref(), Some("ws" | "wss")) {
                return Err(format!(
                    "{}: subscriptions need a ws:// or wss:// upstream",
                    crate::upstream_label(address)
                ));
            }
            crate::check_address(address).map_err(|error| error.to_string())?;
            upstreams.push(SubscriptionUpstream {
                label: crate::upstream_label(address).into(),
                reach: Reach::Dial {
                    address: address.into(),
                    dial: dial.clone(),
                },
                connection: tokio::sync::Mutex::new(None),
                connects: AtomicU64::new(0),
            });
        }
        Ok(Subscriptions::over(upstreams))
    }

    /// Subscriptions made on upstreams whose connections `connectors` make, each named by its
    /// label: in-memory upstreams, or transports of one's own.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Connector, Subscriptions};
    /// use rpcwire::transport::AnyTransport;
    /// let connect: Connector = Box::new(|| {
    ///     Box::pin(async {
    ///         let (ours, _theirs) = tokio::io::duplex(1024);
    ///         let (read, write) = tokio::io::split(ours);
    ///         Ok(AnyTransport::stream(read, write, rpcwire::frame::Framing::Ndjson))
    ///     })
    /// });
    /// let subscriptions = Subscriptions::connecting(vec![("memory".to_owned(), connect)]);
    /// assert_eq!(subscriptions.stats().active, 0);
    /// # });
    /// ```
    pub fn connecting(connectors: Vec<(String, Connector)>) -> Subscriptions {
        let upstreams = connectors
            .into_iter()
            .map(|(label, connect)| SubscriptionUpstream {
                label: label.into(),
                reach: Reach::Connect(connect),
                connection: tokio::sync::Mutex::new(None),
                connects: AtomicU64::new(0),
            })
            .collect();
        Subscriptions::over(upstreams)
    }

    fn over(upstreams: Vec<SubscriptionUpstream>) -> Subscriptions {
        Subscriptions {
            hub: Arc::new(Hub {
                upstreams,
                next: AtomicUsize::new(0),
                state: Mutex::default(),
                max_per_client: AtomicUsize::new(DEFAULT_MAX_SUBSCRIPTIONS),
                max_queued: AtomicUsize::new(DEFAULT_MAX_QUEUED),
                notifications: AtomicU64::new(0),
                resubscribed: AtomicU64::new(0),
                dropped_clients: AtomicU64::new(0),
                ids: AtomicU64::new(seed()),
            }),
        }
    }

    /// At most `subscriptions` per client ([`DEFAULT_MAX_SUBSCRIPTIONS`]; more are refused
    /// with -32005), and at most `queued` notifications waiting for one client
    /// ([`DEFAULT_MAX_QUEUED`]; past it the client is dropped). Each at least 1.
    ///
    /// See [`Subscriptions`] for an example.
    pub fn with_limits(self, subscriptions: usize, queued: usize) -> Subscriptions {
        self.hub
            .max_per_client
            .store(subscriptions.max(1), Ordering::Relaxed);
        self.hub.max_queued.store(queued.max(1), Ordering::Relaxed);
        self
    }

    /// What it did so far.
    ///
    /// See [`SubscriptionStats`] for an example.
    pub fn stats(&self) -> SubscriptionStats {
        let hub = &self.hub;
        SubscriptionStats {
            active: lock_unpoisoned(&hub.state).subscriptions.len(),
            notifications: hub.notifications.load(Ordering::Relaxed),
            resubscribed: hub.resubscribed.load(Ordering::Relaxed),
            dropped_clients: hub.dropped_clients.load(Ordering::Relaxed),
        }
    }

    /// Registers `eth_subscribe` and `eth_unsubscribe` on `router`.
    pub(crate) fn install(&self, router: &mut Router) {
        let hub = self.hub.clone();
        router.method_async_with_context(
            "eth_subscribe",
            move |params: Box<serde_json::value::RawValue>, context: RequestContext| {
                let hub = hub.clone();
                async move { hub.subscribe(params.get(), context).await }
            },
        );
        let hub = self.hub.clone();
        router.method_async_with_context(
            "eth_unsubscribe",
            move |(id,): (Box<serde_json::value::RawValue>,), context: RequestContext| {
                let hub = hub.clone();
                async move { Ok::<bool, ErrorObject<'static>>(hub.unsubscribe(id.get(), &context)) }
            },
        );
    }
}

/// A start for the gateway's subscription ids that differs from run to run.
fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    hasher.finish()
}

impl Hub {
    /// `eth_subscribe` from the client behind `context`.
    async fn subscribe(
        self: Arc<Hub>,
        params: &str,
        context: RequestContext,
    ) -> Result<String, ErrorObject<'static>> {
        let Some(remote) = context.remote().cloned() else {
            // What geth answers over HTTP.
            return Err(ErrorObject::new(-32601, "notifications not supported"));
        };
        let client = Arc::as_ptr(&remote).cast::<()>() as usize;
        let most = self.max_per_client.load(Ordering::Relaxed);
        let held = lock_unpoisoned(&self.state)
            .clients
            .get(&client)
            .map_or(0, |known| known.subscriptions.len());
        if held >= most {
            return Err(ErrorObject::new(
                crate::codes::LIMIT_EXCEEDED,
                format!("at most {most} subscriptions per connection"),
            ));
        }
        let upstreamed = self.make(params).await?;
        let number = format!("0x{:016x}", self.ids.fetch_add(1, Ordering::Relaxed));
        let id: Box<str> = format!("\"{number}\"").into();
        let mut state = lock_unpoisoned(&self.state);
        let State {
            subscriptions,
            by_upstream,
            clients,
        } = &mut *state;
        let known = clients
            .entry(client)
            .or_insert_with(|| self.welcome(client, remote));
        known.subscriptions.insert(id.clone());
        by_upstream.insert(upstreamed.clone(), id.clone());
        subscriptions.insert(
            id.clone(),
            Subscription {
                client,
                upstream: Some(upstreamed),
                params: params.into(),
            },
        );
        Ok(number)
    }

    /// A client's first subscription: its notification queue and the task that delivers it,
    /// and the task that ends its subscriptions when it disconnects.
    fn welcome(self: &Arc<Hub>, client: usize, remote: Arc<dyn Remote>) -> Client {
        let (queue, mut queued) = mpsc::channel::<Bytes>(self.max_queued.load(Ordering::Relaxed));
        let delivering = remote.clone();
        tokio::spawn(async move {
            while let Some(params) = queued.recv().await {
                let params = RawJson::new(std::str::from_utf8(&params).unwrap_or("null")).ok();
                if delivering
                    .notify_raw("eth_subscription", params.as_ref())
                    .await
                    .is_err_and(|error| error.is_closed())
                {
                    break;
                }
            }
        });
        let hub = Arc::downgrade(self);
        let watched = remote.clone();
        tokio::spawn(async move {
            watched.closed().await;
            if let Some(hub) = hub.upgrade() {
                hub.forget(client);
            }
        });
        Client {
            queue,
            subscriptions: HashSet::new(),
            remote,
        }
    }

    /// Makes a subscription with `params` on the next upstream that takes it.
    async fn make(self: &Arc<Hub>, params: &str) -> Result<Upstreamed, ErrorObject<'static>> {
        let params = RawJson::new(params).map_err(ErrorObject::invalid_params)?;
        let count = self.upstreams.len();
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        let mut last = ErrorObject::new(crate::codes::UPSTREAM_UNAVAILABLE, "no subscription upstream");
        for step in 0..count {
            let index = (first + step) % count;
            let (generation, peer) = match self.connection(index).await {
                Ok(connection) => connection,
                Err(label) => {
                    last = ErrorObject::new(crate::codes::UPSTREAM_UNAVAILABLE, "upstream unavailable")
                        .with_data(&format!("{label}: not connected"))
                        .unwrap_or(last);
                    continue;
                }
            };
            match peer.call_raw("eth_subscribe", Some(&params)).await {
                Ok(id) => return Ok((index, generation, id.as_str().into())),
                Err(error) => match error.kind() {
                    // The upstream's own refusal (a bad filter, say): the client's.
                    crate::transport::PeerErrorKind::Remote(refused) => return Err(refused.clone()),
                    // Its label only: the address may hold a key.
                    _ => {
                        let label = &self.upstreams[index].label;
                        last = ErrorObject::new(crate::codes::UPSTREAM_NO_ANSWER, "no answer from upstream")
                            .with_data(&format!("{label}: the subscription was not made"))
                            .unwrap_or(last);
                    }
                },
            }
        }
        Err(last)
    }

    /// The connection to upstream `index` now (its number and its peer), made when there is
    /// none or it has closed; the upstream's label when it cannot be made.
    async fn connection(self: &Arc<Hub>, index: usize) -> Result<(u64, Peer), String> {
        let upstream = &self.upstreams[index];
        let mut connection = upstream.connection.lock().await;
        if let Some((generation, peer)) = connection.as_ref() {
            if peer.state() != crate::transport::ConnectionState::Closed {
                return Ok((*generation, peer.clone()));
            }
        }
        let generation = upstream.connects.fetch_add(1, Ordering::Relaxed) + 1;
        let (transport, max_response) = match &upstream.reach {
            Reach::Dial { address, dial } => (
                AnyTransport::dial(address, Framing::Ndjson, dial).await,
                dial.max_response(),
            ),
            Reach::Connect(connect) => (connect().await, crate::DEFAULT_MAX_RESPONSE),
        };
        let transport = transport.map_err(|_| upstream.label.to_string())?;
        let mut router = Router::with_limits(crate::parse::Limits::default().with_max_size(max_response));
        let hub = Arc::downgrade(self);
        router.raw_notification("eth_subscription", move |params| {
            if let (Some(hub), Some(params)) = (hub.upgrade(), params) {
                hub.notified(index, generation, params.raw().get());
            }
        });
        let peer = Peer::new(transport, router);
        let hub = Arc::downgrade(self);
        // A link, which does not keep the connection open once the hub lets it go.
        let watched = peer.link();
        tokio::spawn(async move {
            watched.closed().await;
            if let Some(hub) = hub.upgrade() {
                hub.upstream_closed(index, generation);
            }
        });
        *connection = Some((generation, peer.clone()));
        Ok((generation, peer))
    }

    /// An `eth_subscription` notification from upstream `index`'s connection `generation`:
    /// to the client that subscribed, under its id.
    fn notified(self: &Arc<Hub>, index: usize, generation: u64, params: &str) {
        let (mut subscription, mut result) = (None, None);
        for ((key, escaped), value) in crate::json::iter::MemberIter::new(params) {
            match (key, escaped) {
                ("subscription", false) => subscription = Some(value),
                ("result", false) => result = Some(value),
                _ => {}
            }
        }
        let (Some(subscription), Some(result)) = (subscription, result) else {
            return;
        };
        let state = lock_unpoisoned(&self.state);
        let key: Upstreamed = (index, generation, subscription.into());
        let Some(id) = state.by_upstream.get(&key) else {
            return;
        };
        let Some(client) = state
            .subscriptions
            .get(id)
            .and_then(|subscription| state.clients.get(&subscription.client))
        else {
            return;
        };
        let mut out = BytesMut::with_capacity(32 + id.len() + result.len());
        out.extend_from_slice(b"{\"subscription\":");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b",\"result\":");
        out.extend_from_slice(result.as_bytes());
        out.extend_from_slice(b"}");
        match client.queue.try_send(out.freeze()) {
            Ok(()) => bump(&self.notifications),
            Err(mpsc::error::TrySendError::Full(_)) => {
                // Too slow to read: dropped, its subscriptions ended, its connection closed.
                let client = state.subscriptions[id].client;
                drop(state);
                bump(&self.dropped_clients);
                if let Some(remote) = self.forget(client) {
                    remote.close();
                }
            }
            // Its delivery ended (the connection closed): `forget` follows.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// `eth_unsubscribe` of `id` (its JSON text) from the client behind `context`: `true`
    /// when it was the client's subscription.
    fn unsubscribe(self: &Arc<Hub>, id: &str, context: &RequestContext) -> bool {
        let Some(remote) = context.remote() else {
            return false;
        };
        let client = Arc::as_ptr(remote).cast::<()>() as usize;
        let mut state = lock_unpoisoned(&self.state);
        if state
            .subscriptions
            .get(id)
            .map(|subscription| subscription.client)
            != Some(client)
        {
            return false;
        }
        let ended = end(&mut state, id);
        drop(state);
        self.unsubscribe_upstream(ended);
        true
    }

    /// A client disconnected (or was dropped): every subscription of its ends upstream. Its
    /// link, when it was known.
    fn forget(self: &Arc<Hub>, client: usize) -> Option<Arc<dyn Remote>> {
        let mut state = lock_unpoisoned(&self.state);
        let known = state.clients.remove(&client)?;
        let ended: Vec<_> = known
            .subscriptions
            .iter()
            .filter_map(|id| end(&mut state, id))
            .collect();
        drop(state);
        for upstreamed in ended {
            self.unsubscribe_upstream(Some(upstreamed));
        }
        Some(known.remote)
    }

    /// Sends `eth_unsubscribe` for a subscription that ended, upstream (in the background: the
    /// client does not wait for it, and its answer changes nothing).
    fn unsubscribe_upstream(self: &Arc<Hub>, upstreamed: Option<Upstreamed>) {
        let Some((index, generation, id)) = upstreamed else {
            return;
        };
        let hub = self.clone();
        tokio::spawn(async move {
            let peer = match &*hub.upstreams[index].connection.lock().await {
                Some((now, peer)) if *now == generation => peer.clone(),
                _ => return,
            };
            if let Ok(params) = RawJson::new(format!("[{id}]")) {
                let _ = peer.call_raw("eth_unsubscribe", Some(&params)).await;
            }
        });
    }

    /// Upstream `index`'s connection `generation` closed: every subscription it held is made
    /// again elsewhere, the clients keeping their ids.
    fn upstream_closed(self: &Arc<Hub>, index: usize, generation: u64) {
        let mut state = lock_unpoisoned(&self.state);
        let lost: Vec<Box<str>> = state
            .subscriptions
            .iter()
            .filter(|(_, subscription)| {
                subscription
                    .upstream
                    .as_ref()
                    .is_some_and(|(at, number, _)| *at == index && *number == generation)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &lost {
            if let Some(subscription) = state.subscriptions.get_mut(id) {
                if let Some(upstreamed) = subscription.upstream.take() {
                    state.by_upstream.remove(&upstreamed);
                }
            }
        }
        drop(state);
        for id in lost {
            let hub = Arc::downgrade(self);
            tokio::spawn(resubscribe(hub, id));
        }
    }
}

/// Makes subscription `id` again on an upstream that takes it, every second for
/// [`RESUBSCRIBE_FOR`]; ends it when none does (or its client left meanwhile).
async fn resubscribe(hub: Weak<Hub>, id: Box<str>) {
    let tries = RESUBSCRIBE_FOR.as_secs().max(1);
    for _ in 0..tries {
        let Some(hub) = hub.upgrade() else { return };
        let params = match lock_unpoisoned(&hub.state).subscriptions.get(&id) {
            Some(subscription) => subscription.params.clone(),
            None => return,
        };
        if let Ok(upstreamed) = hub.make(&params).await {
            let mut state = lock_unpoisoned(&hub.state);
            let State {
                subscriptions,
                by_upstream,
                ..
            } = &mut *state;
            match subscriptions.get_mut(&id) {
                Some(subscription) => {
                    subscription.upstream = Some(upstreamed.clone());
                    by_upstream.insert(upstreamed, id);
                    bump(&hub.resubscribed);
                }
                // The client left while it was made: it ends again.
                None => {
                    drop(state);
                    hub.unsubscribe_upstream(Some(upstreamed));
                }
            }
            return;
        }
        drop(hub);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    if let Some(hub) = hub.upgrade() {
        let mut state = lock_unpoisoned(&hub.state);
        end(&mut state, &id);
    }
}

/// Removes subscription `id` from `state` (and from its client's); where it was upstream.
fn end(state: &mut State, id: &str) -> Option<Upstreamed> {
    let subscription = state.subscriptions.remove(id)?;
    if let Some(client) = state.clients.get_mut(&subscription.client) {
        client.subscriptions.remove(id);
    }
    let upstreamed = subscription.upstream?;
    state.by_upstream.remove(&upstreamed);
    Some(upstreamed)
}
