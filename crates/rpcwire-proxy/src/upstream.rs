//! `Upstream`: one server a group forwards to — how to connect to it, its connection (made
//! again when it drops), its in-flight limit, its breaker and its counters.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::breaker::Breaker;
use super::chain::Head;
use super::hedge::Latencies;
use super::limit::Pause;
#[cfg(feature = "http")]
use super::link::HttpLink;
use super::link::{LinkAnswer, LinkBatch, LinkError, ReconnectingPeer, UpstreamLink};
use crate::dispatch::Router;
use crate::frame::Framing;
use crate::middleware::{BatchEntry, ConcurrencyLimit, ConcurrencyLimitLayer, RpcCall, RpcService};
use crate::transport::{AddressError, AnyTransport, Peer};
use crate::Dial;
use tower_layer::Layer;

/// The largest answer an upstream made by [`Upstream::address`] may send (16 MiB: real
/// Ethereum answers reach several MB; a client's requests are usually held to far less).
pub const DEFAULT_MAX_RESPONSE: usize = 16 << 20;

/// How many requests one batch sent to an upstream holds at most by default: a client's larger
/// batch is sent as several (providers refuse batches over their limit, often 100 to 1,000).
pub const DEFAULT_MAX_BATCH: usize = 100;

/// How many requests may be under way on one upstream by default.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// One upstream server of an [`UpstreamGroup`](super::UpstreamGroup): a name (for one made
/// from an address, its [label](crate::upstream_label): never the whole address, where
/// providers put their API keys), a way to
/// connect (called again whenever the connection has closed: dropped WebSocket, TCP and
/// stdio upstreams reconnect), a limit on requests under way, a breaker that benches it
/// after failures in a row and lets one probe through after a cool-down, and a pause while
/// it is over its rate limit (see [`UpstreamGroup::with_limit_pause`](super::UpstreamGroup::with_limit_pause)).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use rpcwire::proxy::Upstream;
///
/// let upstream = Upstream::address("tcp://127.0.0.1:8545").unwrap()
///     .with_max_in_flight(64)
///     .with_breaker(5, Duration::from_secs(10));
/// assert_eq!(upstream.name(), "127.0.0.1:8545");
/// assert_eq!(upstream.stats().requests, 0);
/// # });
/// ```
pub struct Upstream {
    name: Box<str>,
    /// The link behind its in-flight limit.
    service: ConcurrencyLimit<Link>,
    pub(crate) breaker: Breaker,
    pub(crate) pause: Pause,
    max_batch: usize,
    /// Its recent latencies (kept for a hedge that reads them).
    pub(crate) latencies: Latencies,
    /// Its latest and finalized blocks, as a [`HeadTracker`](crate::HeadTracker) last found.
    pub(crate) head: Head,
    pub(crate) counters: UpstreamCounters,
}

/// How an upstream is reached: the crate's own links called directly (no box per call), or
/// one given to [`Upstream::with_link`].
pub(crate) enum Link {
    Peer(ReconnectingPeer),
    #[cfg(feature = "http")]
    Http(Box<HttpLink>),
    Other(Box<dyn UpstreamLink>),
}

impl RpcService for Link {
    type Answer = LinkAnswer;
    type Error = LinkError;

    /// See [`UpstreamLink::call`].
    async fn call(&self, call: RpcCall<'_>) -> Result<LinkAnswer, LinkError> {
        match self {
            Link::Peer(link) => link.send_call(call.method(), call.params()).await,
            #[cfg(feature = "http")]
            Link::Http(link) => link.send_call(call.frame(), call.method(), call.params()).await,
            Link::Other(link) => link.call(call.frame(), call.method(), call.params()).await,
        }
    }

    /// See [`UpstreamLink::notify`].
    async fn notify(&self, call: RpcCall<'_>) -> Result<(), LinkError> {
        match self {
            Link::Peer(link) => link.send_notification(call.method(), call.params()).await,
            #[cfg(feature = "http")]
            Link::Http(link) => link.send_notification(call.method(), call.params()).await,
            Link::Other(link) => link.notify(call.method(), call.params()).await,
        }
    }

    /// See [`UpstreamLink::batch`].
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> LinkBatch {
        match self {
            Link::Peer(link) => link.send_batch(entries).await,
            #[cfg(feature = "http")]
            Link::Http(link) => link.send_batch(entries).await,
            Link::Other(link) => link.batch(entries).await,
        }
    }
}

impl Link {
    /// See [`UpstreamLink::connects`].
    fn connects(&self) -> u64 {
        match self {
            Link::Peer(link) => link.connects(),
            #[cfg(feature = "http")]
            Link::Http(link) => link.connects(),
            Link::Other(link) => link.connects(),
        }
    }
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream")
            .field("name", &self.name)
            .field("max_in_flight", &self.max_in_flight())
            .field("stats", &self.stats())
            .finish()
    }
}

impl Upstream {
    /// An upstream reached by calling `connect`, which starts a [`Peer`] (connecting in the
    /// background: `PeerBuilder::connect`); called again whenever the last one has closed.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::transport::{Peer, StreamTransport};
    /// let upstream = rpcwire::proxy::Upstream::new("in-memory", || {
    ///     let (ours, _theirs) = tokio::io::duplex(1024);
    ///     Peer::new(StreamTransport::from_io(ours, rpcwire::frame::Framing::Ndjson), rpcwire::dispatch::Router::new())
    /// });
    /// assert_eq!(upstream.name(), "in-memory");
    /// # });
    /// ```
    pub fn new(name: &str, connect: impl Fn() -> Peer + Send + Sync + 'static) -> Upstream {
        Upstream::linked(name, Link::Peer(ReconnectingPeer::new(connect)))
    }

    /// An upstream reached through `link` (see [`UpstreamLink`]).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{LinkAnswer, LinkError, LinkErrorKind, LinkFuture, Upstream, UpstreamLink};
    /// struct Constant;
    /// impl UpstreamLink for Constant {
    ///     fn call<'a>(&'a self, _: Option<&'a bytes::Bytes>, _: &'a str, _: Option<&'a rpcwire::RawJson<'a>>) -> LinkFuture<'a, LinkAnswer> {
    ///         Box::pin(async { Ok(LinkAnswer::Remote(rpcwire::middleware::RemoteAnswer::Result(rpcwire::RawJson::new("42").unwrap().into()))) })
    ///     }
    ///     fn notify<'a>(&'a self, _: &'a str, _: Option<&'a rpcwire::RawJson<'a>>) -> LinkFuture<'a, ()> {
    ///         Box::pin(async { Err(LinkError::new(LinkErrorKind::NotReached, "no notifications")) })
    ///     }
    /// }
    /// let group = rpcwire::proxy::UpstreamGroup::new(vec![Upstream::with_link("constant", Constant)]);
    /// assert_eq!(group.call("anything", None).await.unwrap().as_str(), "42");
    /// # });
    /// ```
    pub fn with_link(name: &str, link: impl UpstreamLink) -> Upstream {
        Upstream::linked(name, Link::Other(Box::new(link)))
    }

    fn linked(name: &str, link: Link) -> Upstream {
        Upstream {
            name: name.into(),
            service: ConcurrencyLimitLayer::new(DEFAULT_MAX_IN_FLIGHT).layer(link),
            breaker: Breaker::new(5, Duration::from_secs(5)),
            pause: Pause::default(),
            max_batch: DEFAULT_MAX_BATCH,
            latencies: Latencies::default(),
            head: Head::default(),
            counters: UpstreamCounters::default(),
        }
    }

    /// An upstream at `address`, opened with [`AnyTransport::open`] (`tcp://` in NDJSON
    /// framing; with the `http` feature `http(s)://` and `ws(s)://`, TLS trusting the
    /// system's roots); an address this build cannot open is refused here, not at every
    /// call.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("tcp://127.0.0.1:9").unwrap();
    /// assert_eq!(upstream.name(), "127.0.0.1:9");
    /// let refused = rpcwire::proxy::Upstream::address("tcp://127.0.0.1").unwrap_err();
    /// assert!(refused.to_string().contains("HOST:PORT"), "{refused}");
    /// # });
    /// ```
    pub fn address(address: &str) -> Result<Upstream, AddressError> {
        Upstream::dial(address, &Dial::new())
    }

    /// An upstream at `address` whose answers may be up to `max_response` bytes each (a
    /// larger one fails its calls without being kept). [`address`](Upstream::address) allows
    /// [`DEFAULT_MAX_RESPONSE`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address_limited("tcp://127.0.0.1:9", 64 << 20).unwrap();
    /// assert_eq!(upstream.name(), "127.0.0.1:9");
    /// # });
    /// ```
    pub fn address_limited(address: &str, max_response: usize) -> Result<Upstream, AddressError> {
        Upstream::dial(address, &Dial::new().with_max_response(max_response))
    }

    /// An upstream at `address`, reached as `dial` says: its largest answer, and its own
    /// TLS (the authority it is trusted by, the client certificate it is shown) for
    /// `https://` and `wss://`. Its name is the address's [label](crate::upstream_label)
    /// (the host and port): the address itself, path and query included, appears in no
    /// answer, metric or log ([`with_name`](Upstream::with_name) gives it another).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Dial, Upstream};
    /// let tls = rpcwire::transport::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let upstream = Upstream::dial("https://node.example/v3/KEY", &Dial::new().with_tls(tls)).unwrap();
    /// assert_eq!(upstream.name(), "node.example");
    /// # });
    /// ```
    pub fn dial(address: &str, dial: &Dial) -> Result<Upstream, AddressError> {
        crate::check_address(address)?;
        let label = crate::upstream_label(address);
        #[cfg(feature = "http")]
        if address.split_once("://").is_some_and(|(scheme, _)| {
            scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
        }) {
            let client = dial.http_client(address)?;
            return Ok(Upstream::linked(&label, Link::Http(Box::new(HttpLink(client)))));
        }
        let owned: Arc<str> = address.into();
        let dial = dial.clone();
        let max_response = dial.max_response();
        Ok(Upstream::new(&label, move || {
            let (address, dial) = (owned.clone(), dial.clone());
            Peer::builder().connect(
                async move { AnyTransport::dial(&address, Framing::Ndjson, &dial).await },
                // Answers are parsed up to the response limit, past the 1 MiB default.
                Router::with_limits(crate::parse::Limits::default().with_max_size(max_response)),
            )
        }))
    }

    /// At most `limit` requests under way on this upstream at once (at least 1); more wait
    /// for one to end, or go to another upstream when one is free.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("tcp://127.0.0.1:9").unwrap().with_max_in_flight(0);
    /// assert_eq!(upstream.max_in_flight(), 1);
    /// # });
    /// ```
    pub fn with_max_in_flight(self, limit: usize) -> Upstream {
        let Upstream {
            name,
            service,
            breaker,
            pause,
            max_batch,
            latencies,
            head,
            counters,
        } = self;
        Upstream {
            name,
            service: ConcurrencyLimitLayer::new(limit).layer(service.into_inner()),
            breaker,
            pause,
            max_batch,
            latencies,
            head,
            counters,
        }
    }

    /// At most `requests` in one batch sent to it (at least 1): a client's larger batch goes
    /// as several. [`DEFAULT_MAX_BATCH`] by default.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("http://127.0.0.1:9/").unwrap().with_max_batch(1000);
    /// assert_eq!(upstream.max_batch(), 1000);
    /// # });
    /// ```
    pub fn with_max_batch(mut self, requests: usize) -> Upstream {
        self.max_batch = requests.max(1);
        self
    }

    /// The most requests in one batch sent to it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(rpcwire::proxy::Upstream::address("tcp://h:1").unwrap().max_batch(), rpcwire::proxy::DEFAULT_MAX_BATCH);
    /// # });
    /// ```
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Benches the upstream after `failures` in a row (at least 1) for `cool_down`; then one
    /// probe goes through, and its outcome brings it back or benches it again.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("tcp://127.0.0.1:9").unwrap()
    ///     .with_breaker(3, std::time::Duration::from_secs(30));
    /// assert!(!upstream.stats().benched);
    /// # });
    /// ```
    pub fn with_breaker(mut self, failures: u32, cool_down: Duration) -> Upstream {
        self.breaker = Breaker::new(failures, cool_down);
        self
    }

    /// The upstream's name, in error answers, metrics, logs and the fleet's keys (the
    /// address's [label](crate::upstream_label), for [`address`](Upstream::address)).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(rpcwire::proxy::Upstream::address("ws://node:8546/KEY").unwrap().name(), "node:8546");
    /// # });
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Goes by `name` (an [`UpstreamGroup`](super::UpstreamGroup) numbers a name given
    /// twice: `NAME#2`).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("https://eth.example/v3/KEY").unwrap().with_name("primary");
    /// assert_eq!(upstream.name(), "primary");
    /// # });
    /// ```
    pub fn with_name(mut self, name: &str) -> Upstream {
        self.name = name.into();
        self
    }

    /// The most requests under way at once.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(rpcwire::proxy::Upstream::address("tcp://h:1").unwrap().max_in_flight(), rpcwire::proxy::DEFAULT_MAX_IN_FLIGHT);
    /// # });
    /// ```
    pub fn max_in_flight(&self) -> usize {
        self.service.max()
    }

    /// The upstream's counters now.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stats = rpcwire::proxy::Upstream::address("tcp://h:1").unwrap().stats();
    /// assert_eq!((stats.requests, stats.in_flight, stats.connects), (0, 0, 0));
    /// # });
    /// ```
    pub fn stats(&self) -> UpstreamStats {
        let c = &self.counters;
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        UpstreamStats {
            requests: get(&c.requests),
            answered: get(&c.answered),
            upstream_errors: get(&c.upstream_errors),
            not_reached: get(&c.not_reached),
            no_answer: get(&c.no_answer),
            limited: get(&c.limited),
            connects: self.service.get_ref().connects(),
            in_flight: self.service.in_flight(),
            benched: self.breaker.is_open(Instant::now()),
            paused_for: self.pause.remaining(Instant::now()),
            latest_block: self.head.latest(),
            finalized_block: self.head.finalized(),
        }
    }

    /// Whether it takes frames as they are (HTTP), a client's whole batch among them.
    pub(crate) fn takes_frames(&self) -> bool {
        #[cfg(feature = "http")]
        if matches!(self.service.get_ref(), Link::Http(_)) {
            return true;
        }
        false
    }

    /// How requests reach it: its link behind its in-flight limit.
    pub(crate) fn service(&self) -> &ConcurrencyLimit<Link> {
        &self.service
    }
}

/// The counters behind [`UpstreamStats`].
#[derive(Debug, Default)]
pub(crate) struct UpstreamCounters {
    pub(crate) requests: AtomicU64,
    pub(crate) limited: AtomicU64,
    pub(crate) answered: AtomicU64,
    pub(crate) upstream_errors: AtomicU64,
    pub(crate) not_reached: AtomicU64,
    pub(crate) no_answer: AtomicU64,
}

/// What happened on one upstream so far.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let stats = rpcwire::proxy::Upstream::address("tcp://h:1").unwrap().stats();
/// assert_eq!(stats.answered + stats.upstream_errors + stats.not_reached + stats.no_answer, 0);
/// # });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpstreamStats {
    /// Attempts sent to it (retries included).
    pub requests: u64,
    /// Attempts it answered with a result.
    pub answered: u64,
    /// Attempts it answered with an error object.
    pub upstream_errors: u64,
    /// Attempts that never reached it (not connected, refused, too many pending).
    pub not_reached: u64,
    /// Attempts that may have reached it and got no answer (reset, timeout, HTTP error).
    pub no_answer: u64,
    /// Attempts it refused for a limit it reached (HTTP 429, a -32005 answer).
    pub limited: u64,
    /// Connections made to it (the first included: reconnects are `connects - 1`).
    pub connects: u64,
    /// Requests under way now.
    pub in_flight: usize,
    /// Whether its breaker has it benched now.
    pub benched: bool,
    /// How long it is yet left alone for a limit it reached, if it is.
    pub paused_for: Option<Duration>,
    /// The latest block it has, as a [`HeadTracker`](crate::HeadTracker) last found (`None`:
    /// not tracked, or not answered).
    pub latest_block: Option<u64>,
    /// The last block it holds final, as a [`HeadTracker`](crate::HeadTracker) last found.
    pub finalized_block: Option<u64>,
}
