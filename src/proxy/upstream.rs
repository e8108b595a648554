//! `Upstream`: one server a pool forwards to — how to connect to it, its connection (made
//! again when it drops), its in-flight limit, its breaker and its counters.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::breaker::Breaker;
use crate::dispatch::Router;
use crate::frame::Framing;
use crate::message::{JsonBytes, RawJson};
use crate::sync::{bump, lock_unpoisoned};
use crate::transport::{AnyTransport, ConnectionState, Peer, PeerError};

/// The largest answer an upstream made by [`Upstream::address`] may send (16 MiB: real
/// Ethereum answers reach several MB; a client's requests are usually held to far less).
pub const DEFAULT_MAX_RESPONSE: usize = 16 << 20;

/// How many requests may be under way on one upstream by default.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// One upstream server of an [`UpstreamPool`](super::UpstreamPool): a name, a way to
/// connect (called again whenever the connection has closed: dropped WebSocket, TCP and
/// stdio upstreams reconnect), a limit on requests under way, and a breaker that benches it
/// after failures in a row and lets one probe through after a cool-down.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use rpcwire::proxy::Upstream;
///
/// let upstream = Upstream::address("tcp://127.0.0.1:8545")
///     .with_max_in_flight(64)
///     .with_breaker(5, Duration::from_secs(10));
/// assert_eq!(upstream.name(), "tcp://127.0.0.1:8545");
/// assert_eq!(upstream.stats().requests, 0);
/// # });
/// ```
pub struct Upstream {
    name: Box<str>,
    link: Link,
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    pub(crate) breaker: Breaker,
    pub(crate) counters: UpstreamCounters,
}

/// How calls reach the upstream.
enum Link {
    /// A connection served by a [`Peer`] (ids matched on it), made again when it has closed.
    Peer {
        connect: Box<dyn Fn() -> Peer + Send + Sync>,
        peer: Mutex<Option<Peer>>,
    },
    /// HTTP: each call is its own POST on hyper's pooled client, its answer the response to
    /// it — no id to match, no connection task to hand frames to.
    #[cfg(feature = "http")]
    Http(Box<crate::transport::http::HttpClientTransport>),
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream")
            .field("name", &self.name)
            .field("max_in_flight", &self.max_in_flight)
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
        Upstream::with_link(
            name,
            Link::Peer {
                connect: Box::new(connect),
                peer: Mutex::new(None),
            },
        )
    }

    fn with_link(name: &str, link: Link) -> Upstream {
        Upstream {
            name: name.into(),
            link,
            in_flight: Arc::new(Semaphore::new(DEFAULT_MAX_IN_FLIGHT)),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            breaker: Breaker::new(5, Duration::from_secs(5)),
            counters: UpstreamCounters::default(),
        }
    }

    /// An upstream at `address`, opened with [`AnyTransport::open`] (`tcp://` in NDJSON
    /// framing; with the `http` feature `http://` and `ws://`).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("tcp://127.0.0.1:9");
    /// assert_eq!(upstream.name(), "tcp://127.0.0.1:9");
    /// # });
    /// ```
    pub fn address(address: &str) -> Upstream {
        Upstream::address_limited(address, DEFAULT_MAX_RESPONSE)
    }

    /// An upstream at `address` whose answers may be up to `max_response` bytes each (a
    /// larger one fails its calls without being kept). [`address`](Upstream::address) allows
    /// [`DEFAULT_MAX_RESPONSE`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address_limited("tcp://127.0.0.1:9", 64 << 20);
    /// assert_eq!(upstream.name(), "tcp://127.0.0.1:9");
    /// # });
    /// ```
    pub fn address_limited(address: &str, max_response: usize) -> Upstream {
        #[cfg(feature = "http")]
        if address.starts_with("http://") {
            if let Ok(url) = address.parse() {
                let client =
                    crate::transport::http::HttpClientTransport::new(url).with_max_response(max_response);
                return Upstream::with_link(address, Link::Http(Box::new(client)));
            }
        }
        let owned: Arc<str> = address.into();
        Upstream::new(address, move || {
            let address = owned.clone();
            Peer::builder().connect(
                async move {
                    let transport = AnyTransport::open(&address, Framing::Ndjson).await?;
                    Ok(transport.with_max_frame(max_response))
                },
                // Answers are parsed up to the response limit, past the 1 MiB default.
                Router::with_limits(crate::parse::Limits::default().with_max_size(max_response)),
            )
        })
    }

    /// At most `limit` requests under way on this upstream at once (at least 1); more wait
    /// for one to end, or go to another upstream when one is free.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("tcp://127.0.0.1:9").with_max_in_flight(0);
    /// assert_eq!(upstream.max_in_flight(), 1);
    /// # });
    /// ```
    pub fn with_max_in_flight(mut self, limit: usize) -> Upstream {
        let limit = limit.clamp(1, Semaphore::MAX_PERMITS);
        self.in_flight = Arc::new(Semaphore::new(limit));
        self.max_in_flight = limit;
        self
    }

    /// Benches the upstream after `failures` in a row (at least 1) for `cool_down`; then one
    /// probe goes through, and its outcome brings it back or benches it again.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let upstream = rpcwire::proxy::Upstream::address("tcp://127.0.0.1:9")
    ///     .with_breaker(3, std::time::Duration::from_secs(30));
    /// assert!(!upstream.stats().benched);
    /// # });
    /// ```
    pub fn with_breaker(mut self, failures: u32, cool_down: Duration) -> Upstream {
        self.breaker = Breaker::new(failures, cool_down);
        self
    }

    /// The upstream's name (its address, for [`address`](Upstream::address)).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(rpcwire::proxy::Upstream::address("ws://node:8546").name(), "ws://node:8546");
    /// # });
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The most requests under way at once.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(rpcwire::proxy::Upstream::address("tcp://h:1").max_in_flight(), rpcwire::proxy::DEFAULT_MAX_IN_FLIGHT);
    /// # });
    /// ```
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// The upstream's counters now.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stats = rpcwire::proxy::Upstream::address("tcp://h:1").stats();
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
            connects: get(&c.connects),
            in_flight: self.max_in_flight - self.in_flight.available_permits(),
            benched: self.breaker.is_open(Instant::now()),
        }
    }

    /// The connection to use now: the current one unless it has closed, else a new one.
    fn peer(&self, connect: &(dyn Fn() -> Peer + Send + Sync), current: &Mutex<Option<Peer>>) -> Peer {
        let mut current = lock_unpoisoned(current);
        if let Some(peer) = current.as_ref() {
            if peer.state() != ConnectionState::Closed {
                return peer.clone();
            }
        }
        bump(&self.counters.connects);
        let peer = connect();
        *current = Some(peer.clone());
        peer
    }

    /// Calls `method` on the upstream; the result's JSON as it came.
    pub(crate) async fn call_raw(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<JsonBytes, PeerError> {
        match &self.link {
            Link::Peer { connect, peer } => self.peer(connect.as_ref(), peer).call_raw(method, params).await,
            #[cfg(feature = "http")]
            Link::Http(client) => http_call(client, method, params).await,
        }
    }

    /// Forwards `frame` (a request whose id is [`GATEWAY_ID`]) to the upstream as it is when
    /// the upstream takes frames (HTTP), and gives its whole answer; through a [`Peer`], which
    /// sets ids of its own, the call of `method` with `params` is made and its result given.
    pub(crate) async fn call_frame(
        &self,
        frame: &bytes::Bytes,
        method: &str,
        params: Option<&JsonBytes>,
    ) -> Result<FrameAnswer, PeerError> {
        match &self.link {
            Link::Peer { .. } => {
                let params = params.map(JsonBytes::to_raw_json);
                self.call_raw(method, params.as_ref())
                    .await
                    .map(FrameAnswer::Result)
            }
            #[cfg(feature = "http")]
            Link::Http(client) => {
                let _ = (method, params);
                let answered = http_exchange(client, frame.clone()).await?;
                Ok(FrameAnswer::Frame(answered.slot))
            }
        }
    }

    /// Sends a notification of `method` to the upstream.
    pub(crate) async fn notify_raw(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<(), PeerError> {
        match &self.link {
            Link::Peer { connect, peer } => {
                self.peer(connect.as_ref(), peer).notify_raw(method, params).await
            }
            #[cfg(feature = "http")]
            Link::Http(client) => {
                let mut body = bytes::BytesMut::new();
                crate::encode::write_call_raw(&mut body, None, method, params)
                    .map_err(|error| PeerError::from(crate::transport::PeerErrorKind::Params(error)))?;
                match crate::transport::http::client::exchange(client, body.freeze()).await {
                    Ok(_) => Ok(()),
                    Err(failure) => Err(remote(failure.to_error_object())),
                }
            }
        }
    }

    /// The in-flight limit.
    pub(crate) fn slots(&self) -> &Arc<Semaphore> {
        &self.in_flight
    }
}

/// The counters behind [`UpstreamStats`].
#[derive(Debug, Default)]
pub(crate) struct UpstreamCounters {
    pub(crate) requests: AtomicU64,
    pub(crate) answered: AtomicU64,
    pub(crate) upstream_errors: AtomicU64,
    pub(crate) not_reached: AtomicU64,
    pub(crate) no_answer: AtomicU64,
    pub(crate) connects: AtomicU64,
}

/// What happened on one upstream so far.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let stats = rpcwire::proxy::Upstream::address("tcp://h:1").stats();
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
    /// Connections made to it (the first included: reconnects are `connects - 1`).
    pub connects: u64,
    /// Requests under way now.
    pub in_flight: usize,
    /// Whether its breaker has it benched now.
    pub benched: bool,
}

/// The id a gateway's forwarded requests carry upstream (each HTTP exchange is its own, so
/// one id serves them all): its exact JSON text.
pub(crate) const GATEWAY_ID: &str = "1";

/// What an upstream answered a forwarded frame with.
#[derive(Debug)]
pub(crate) enum FrameAnswer {
    /// The upstream's whole answer, a success response whose id is [`GATEWAY_ID`], with the
    /// id's place in it.
    Frame(super::IdSlot),
    /// The result alone (from an upstream behind a [`Peer`]).
    Result(JsonBytes),
}

/// One call as its own HTTP exchange: the frame with id [`GATEWAY_ID`], the answer's result
/// sliced out. See [`http_exchange`].
#[cfg(feature = "http")]
async fn http_call(
    client: &crate::transport::http::HttpClientTransport,
    method: &str,
    params: Option<&RawJson<'_>>,
) -> Result<JsonBytes, PeerError> {
    let id = crate::message::Id::from_number_text(GATEWAY_ID);
    let mut body = bytes::BytesMut::with_capacity(64 + method.len() + params.map_or(0, |p| p.get().len()));
    crate::encode::write_call_raw(&mut body, Some(&id), method, params)
        .map_err(|error| PeerError::from(crate::transport::PeerErrorKind::Params(error)))?;
    let answered = http_exchange(client, body.freeze()).await?;
    Ok(JsonBytes::from_validated(
        answered.slot.text().slice(answered.result),
    ))
}

/// A success answer to a request with id [`GATEWAY_ID`]: the answer with its id's place,
/// and where its result lies.
#[cfg(feature = "http")]
struct Answered {
    slot: super::IdSlot,
    result: std::ops::Range<usize>,
}

/// `frame` (a request with id [`GATEWAY_ID`]) as its own HTTP exchange, the answer parsed:
/// its result, or what went wrong as the error object `HttpClientTransport` gives a failed
/// exchange (-32000 with `{"reached", "status"}`), an answer that is not this call's
/// response included (reached, no status: it may have run); the upstream's error object as
/// the remote error.
#[cfg(feature = "http")]
async fn http_exchange(
    client: &crate::transport::http::HttpClientTransport,
    frame: bytes::Bytes,
) -> Result<Answered, PeerError> {
    use crate::message::{range_within, Message, ResponsePayload};
    let answer = match crate::transport::http::client::exchange(client, frame).await {
        Ok(Some(answer)) => answer,
        Ok(None) => return Err(remote(unusable("the upstream answered nothing"))),
        Err(failure) => return Err(remote(failure.to_error_object())),
    };
    let not_ours = || remote(unusable("the upstream's answer is not a response to the call"));
    // Answers may be as large as the response limit (blocks, traces: several MB), past the
    // parser's default size limit for requests.
    let limits = crate::parse::Limits::default().with_max_size(client.max_response());
    let parser = crate::parse::Parser::new(limits);
    let parsed = parser.parse(&answer).ok().and_then(|parsed| parsed.single());
    let Some(message @ Message::Response(response)) = &parsed else {
        return Err(not_ours());
    };
    if response.id().raw() != GATEWAY_ID || response.id().kind() != crate::message::IdKind::Number {
        return Err(not_ours());
    }
    match response.payload() {
        ResponsePayload::Result(result) => {
            let result = range_within(&answer, result.get().as_bytes());
            match (result, super::IdSlot::find(&answer, message)) {
                (Some(result), Some(slot)) => Ok(Answered { slot, result }),
                _ => Err(not_ours()),
            }
        }
        ResponsePayload::Error(error) => Err(remote(error.clone().into_owned())),
    }
}

/// An exchange that reached the upstream and brought back nothing usable, as the error
/// object a failed exchange gets.
#[cfg(feature = "http")]
fn unusable(reason: &str) -> crate::message::ErrorObject<'static> {
    crate::transport::http::client::ExchangeFailure {
        reason: reason.to_owned(),
        reached: true,
        status: None,
    }
    .to_error_object()
}

/// An error object that stands for the upstream's answer.
#[cfg(feature = "http")]
fn remote(error: crate::message::ErrorObject<'static>) -> PeerError {
    crate::transport::PeerErrorKind::Remote(error).into()
}
