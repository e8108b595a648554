//! [`Peer`]: one connection that both serves and calls.

mod batch;
mod cancel;
mod driver;
mod error;
mod link;
mod outgoing;
mod shared;
mod state;

pub use batch::BatchEntry;
pub use cancel::CancelProtocol;
pub use error::{PeerError, PeerErrorKind};
pub use link::PeerLink;
pub use state::{CloseReason, ConnectionState, PeerStats};

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::{mpsc, watch};

use super::Transport;
use crate::correlate::{CorrelationTable, IdFormat, TableConfig};
use crate::dispatch::Router;
use crate::message::{ErrorObject, JsonBytes, RawJson};
use driver::HandlerLimits;
use shared::Shared;

/// The error code a request gets when the peer is overloaded (every handler slot busy, the
/// backlog full): [`codes::OVERLOADED`](crate::codes::OVERLOADED) (-32003). See
/// [`PeerBuilder::overload_answer`].
pub const OVERLOADED_CODE: i64 = crate::codes::OVERLOADED;

/// The default byte limits of the backlog and of the outgoing queue.
const DEFAULT_QUEUE_BYTES: usize = 64 << 20;

/// One JSON-RPC connection over a [`Transport`] that serves and calls at the same time.
///
/// * **Supervision:** incoming requests and notifications go to the [`Router`]. Synchronous
///   handlers answer on the reader task; async handlers
///   ([`Router::method_async`](crate::dispatch::Router::method_async)) run on tasks of their
///   own, at most [`max_concurrent_requests`](PeerBuilder::max_concurrent_requests) at once.
/// * **Calling:** [`call`](Peer::call) sends a request with an id from the peer's own
///   [`CorrelationTable`] and waits for its response; [`notify`](Peer::notify) sends a
///   notification. The two directions have separate id spaces: the other side's request
///   ids are only ever echoed in answers, and incoming responses are only matched against
///   this side's pending calls.
/// * **Lifecycle:** [`state`](Peer::state) is `Connecting` → `Connected` → `Closing` →
///   `Closed`. The connection closes when [`close`](Peer::close) is called or every handle
///   is dropped, when the other side ends its output, or on a fatal transport error; then
///   every pending call fails with [`PeerErrorKind::Closed`], later calls fail the same way at
///   once, requests already received are still answered, and the transport is closed.
///   [`closed`](Peer::closed) says why.
///
/// `Peer` is a cheap handle (`Clone`); the connection runs on tasks spawned on the Tokio
/// runtime it was created on.
///
/// ```
/// use rpcwire_core::dispatch::Router;
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{ConnectionState, Peer, PeerErrorKind, StreamTransport};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (a, b) = tokio::io::duplex(4096);
/// let mut router = Router::new();
/// router.method("add", |(a, b): (u32, u32)| Ok(a + b));
/// let server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
/// let client = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
///
/// assert_eq!(client.call::<_, u32>("add", [2, 3]).await.unwrap(), 5);
/// let missing = client.call::<_, u32>("nope", ()).await.unwrap_err();
/// assert!(matches!(missing.kind(), PeerErrorKind::Remote(e) if e.code() == rpcwire_core::ErrorCode::MethodNotFound));
///
/// server.close().await;
/// assert_eq!(server.state(), ConnectionState::Closed);
/// let after = client.call::<_, u32>("add", [1, 1]).await.unwrap_err();
/// assert!(after.is_closed());
/// # }
/// ```
#[derive(Clone)]
pub struct Peer {
    handle: Arc<Handle>,
}

/// Closes the connection when the last [`Peer`] handle is dropped.
struct Handle {
    link: PeerLink,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.link.shared.request_close(CloseReason::Local);
    }
}

impl Peer {
    /// Runs a connection over `transport` with the default settings, serving with `router`
    /// (a `Router` or an `Arc<Router>` shared by many connections).
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime (it spawns the connection's tasks, like `tokio::spawn`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let transport = rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson);
    /// let peer = rpcwire_core::transport::Peer::new(transport, rpcwire_core::dispatch::Router::new());
    /// assert!(peer.state().is_open());
    /// # }
    /// ```
    pub fn new<T: Transport>(transport: T, router: impl Into<Arc<Router>>) -> Peer {
        PeerBuilder::new().start(transport, router)
    }

    /// Settings for a peer: call capacity and timeout, id format, concurrency, queue size.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().max_concurrent_requests(8);
    /// # let _ = builder;
    /// ```
    pub fn builder() -> PeerBuilder {
        PeerBuilder::new()
    }

    fn shared(&self) -> &Shared {
        &self.handle.link.shared
    }

    /// A link for calls and notifications on this connection that does not keep it open:
    /// the connection still closes when the last `Peer` is dropped, and the link's calls
    /// fail with [`PeerErrorKind::Closed`] from then on. Handlers get one through their
    /// [`RequestContext`](crate::dispatch::RequestContext).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// let link = peer.link();
    /// assert!(link.is_open());
    /// drop(peer);
    /// link.closed().await;
    /// assert!(link.notify("late", ()).await.unwrap_err().is_closed());
    /// # }
    /// ```
    pub fn link(&self) -> PeerLink {
        self.handle.link.clone()
    }

    /// Serves a connection until it closes and says why: for accept loops, where a `Peer`
    /// nobody keeps would close as soon as its last handle is dropped (after answering what
    /// it had received). `tokio::spawn(Peer::serve(transport, router.clone()))` per
    /// connection.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use rpcwire_core::frame::Framing;
    /// use rpcwire_core::transport::{CloseReason, Peer, StreamTransport};
    ///
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.method("add", |(a, b): (u32, u32)| Ok(a + b));
    /// let router = std::sync::Arc::new(router);
    /// let (a, b) = tokio::io::duplex(4096);
    /// let served = tokio::spawn(Peer::serve(StreamTransport::from_io(a, Framing::Ndjson), router.clone()));
    ///
    /// let client = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// assert_eq!(client.call::<_, u32>("add", [2, 3]).await.unwrap(), 5);
    /// assert_eq!(client.call::<_, u32>("add", [4, 5]).await.unwrap(), 9); // still served
    /// client.close().await;
    /// assert!(matches!(served.await.unwrap(), CloseReason::EndOfInput));
    /// # }
    /// ```
    pub async fn serve<T: Transport>(transport: T, router: impl Into<Arc<Router>>) -> CloseReason {
        Peer::new(transport, router).closed().await
    }

    /// Calls `method` with `params` (anything that serializes to a JSON array or object;
    /// `()` or `None` for no params) and decodes the result into `R`.
    ///
    /// Fails with [`PeerErrorKind::Remote`] when the other side answers with an error,
    /// [`TimedOut`](PeerErrorKind::TimedOut) after the call timeout,
    /// [`TooManyPending`](PeerErrorKind::TooManyPending) when the call capacity is used up, and
    /// [`Closed`](PeerErrorKind::Closed) when the connection is or gets closed. Dropping the
    /// future abandons the call (a late response is dropped and counted).
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), PeerError> {
    /// # let (a, b) = tokio::io::duplex(4096);
    /// # let mut router = Router::new();
    /// # router.method("greet", |(name,): (String,)| Ok(format!("hello {name}")));
    /// # let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    /// # let peer = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    /// let greeting: String = peer.call("greet", ("ada",)).await?;
    /// assert_eq!(greeting, "hello ada");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, PeerError> {
        self.handle.link.call(method, params).await
    }

    /// Calls `method` with params given as JSON text (`None` for none) and returns the
    /// result's JSON text, a slice of the response's frame (no copy, no decoding) — for
    /// proxies and gateways.
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let (a, b) = tokio::io::duplex(4096);
    /// # let mut router = Router::new();
    /// # router.method("echo", |v: serde_json::Value| Ok(v));
    /// # let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    /// # let peer = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    /// let params = rpcwire_core::RawJson::new(r#"{"a": [1, 2]}"#)?;
    /// let result = peer.call_raw("echo", Some(&params)).await?;
    /// assert_eq!(&result[..], br#"{"a":[1,2]}"#);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_raw(&self, method: &str, params: Option<&RawJson<'_>>) -> Result<JsonBytes, PeerError> {
        self.handle.link.call_raw(method, params).await
    }

    /// Sends a notification (no answer comes back). `Ok` means it is queued for writing.
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), PeerError> {
    /// # let (a, _b) = tokio::io::duplex(4096);
    /// # let peer = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), Router::new());
    /// peer.notify("progress", serde_json::json!({"done": 3, "of": 10})).await?;
    /// assert!(peer.notify("progress", 3).await.is_err()); // params must be an array or object
    /// # Ok(())
    /// # }
    /// ```
    pub async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), PeerError> {
        self.handle.link.notify(method, params).await
    }

    /// Sends a notification whose params are given as JSON text (`None` for none), written
    /// as they are — for proxies and gateways passing a client's notification on. `Ok`
    /// means it is queued for writing.
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let (a, _b) = tokio::io::duplex(4096);
    /// # let peer = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), Router::new());
    /// let params = rpcwire_core::RawJson::new(r#"{"uri": "file:///a.rs"}"#)?;
    /// peer.notify_raw("textDocument/didSave", Some(&params)).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn notify_raw(&self, method: &str, params: Option<&RawJson<'_>>) -> Result<(), PeerError> {
        self.handle.link.notify_raw(method, params).await
    }

    /// The connection's state now.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// peer.close().await;
    /// assert_eq!(peer.state(), rpcwire_core::transport::ConnectionState::Closed);
    /// # }
    /// ```
    pub fn state(&self) -> ConnectionState {
        *self.shared().state.borrow()
    }

    /// A receiver that sees every change of the connection's state.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// let mut states = peer.state_changes();
    /// drop(b); // the other side goes away
    /// let closed = states.wait_for(|s| *s == rpcwire_core::transport::ConnectionState::Closed).await;
    /// assert!(closed.is_ok());
    /// # }
    /// ```
    pub fn state_changes(&self) -> watch::Receiver<ConnectionState> {
        self.shared().state.subscribe()
    }

    /// Waits until the connection is closed (everything written out, the transport closed)
    /// and says why.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (a, b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// drop(b);
    /// assert!(matches!(peer.closed().await, rpcwire_core::transport::CloseReason::EndOfInput));
    /// # }
    /// ```
    pub async fn closed(&self) -> CloseReason {
        let mut states = self.shared().state.subscribe();
        // The sender lives in `Shared`, which this handle keeps alive.
        let _ = states.wait_for(|state| *state == ConnectionState::Closed).await;
        self.shared().close_reason()
    }

    /// Closes the connection: stops reading, fails pending calls, answers the requests
    /// already received, writes everything out, closes the transport; returns when done.
    /// It waits for async handlers that are running (wrap it in `tokio::time::timeout` to
    /// bound that), and for the other side to take the bytes still to be written.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// peer.close().await;
    /// assert!(peer.call::<_, ()>("anything", ()).await.unwrap_err().is_closed());
    /// # }
    /// ```
    pub async fn close(&self) {
        self.shared().request_close(CloseReason::Local);
        self.closed().await;
    }

    /// Closes the connection as [`close`](Peer::close) does, but waits at most `deadline`
    /// for running handlers: past it they are stopped and their requests answered -32603
    /// ("request aborted"); those answers get as long again to be written, and then what is
    /// still unwritten is dropped. Returns why the connection closed.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use rpcwire_core::transport::{Peer, StreamTransport};
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.method_async("forever", |_: rpcwire_core::dispatch::NoParams| async {
    ///     std::future::pending::<Result<(), rpcwire_core::ErrorObject<'static>>>().await
    /// });
    /// let (a, b) = tokio::io::duplex(4096);
    /// let server = Peer::new(StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), router);
    /// let client = Peer::new(StreamTransport::from_io(b, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// let call = tokio::spawn(async move { client.call::<_, ()>("forever", ()).await });
    /// tokio::time::sleep(Duration::from_millis(50)).await;
    /// server.close_within(Duration::from_millis(100)).await;
    /// let aborted = call.await.unwrap().unwrap_err();
    /// assert!(aborted.to_string().contains("-32603"), "{aborted}");
    /// # }
    /// ```
    pub async fn close_within(&self, deadline: Duration) -> CloseReason {
        let shared = self.shared();
        shared.request_close(CloseReason::Local);
        if tokio::time::timeout(deadline, self.closed()).await.is_err() {
            shared.abort_handlers.cancel();
            if tokio::time::timeout(deadline, self.closed()).await.is_err() {
                shared.abort_writer.cancel();
            }
        }
        self.closed().await
    }

    /// What the peer has done so far.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// peer.notify("hello", ()).await.unwrap();
    /// assert_eq!(peer.stats().notifications, 1);
    /// # }
    /// ```
    pub fn stats(&self) -> PeerStats {
        self.shared().counters.snapshot()
    }

    /// How many calls are waiting for their responses.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// assert_eq!(peer.pending_calls(), 0);
    /// # }
    /// ```
    pub fn pending_calls(&self) -> usize {
        self.shared().table.pending()
    }
}

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("state", &self.state())
            .field("pending_calls", &self.pending_calls())
            .finish()
    }
}

/// Settings for a [`Peer`], then [`start`](PeerBuilder::start) it over a transport or
/// [`connect`](PeerBuilder::connect) it.
///
/// ```
/// use std::time::Duration;
/// use rpcwire_core::correlate::IdFormat;
/// use rpcwire_core::transport::{Peer, StreamTransport};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (a, _b) = tokio::io::duplex(1024);
/// let peer = Peer::builder()
///     .call_capacity(256)
///     .call_timeout(Duration::from_secs(5))
///     .id_format(IdFormat::String)
///     .max_concurrent_requests(16)
///     .start(StreamTransport::from_io(a, rpcwire_core::frame::Framing::ContentLength), rpcwire_core::dispatch::Router::new());
/// # let _ = peer;
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct PeerBuilder {
    calls: TableConfig,
    limits: HandlerLimits,
    outgoing_queue: usize,
    outgoing_queue_bytes: usize,
    cancel: CancelProtocol,
}

impl Default for PeerBuilder {
    fn default() -> PeerBuilder {
        PeerBuilder::new()
    }
}

impl PeerBuilder {
    /// The defaults: 1,024 pending calls, a 30 s call timeout, number ids, 64 concurrent
    /// async handlers with 1,024 more requests (64 MiB at most) queued for them, room for
    /// 1,024 frames (64 MiB at most) in the outgoing queue, no handler or idle timeout, no
    /// cancel protocol.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::PeerBuilder::new();
    /// # let _ = builder;
    /// ```
    pub fn new() -> PeerBuilder {
        PeerBuilder {
            calls: TableConfig::default(),
            limits: HandlerLimits {
                max_concurrent: 64,
                max_queued: 1024,
                overload: Some(Arc::new(ErrorObject::new(OVERLOADED_CODE, "server overloaded"))),
                handler_timeout: None,
                max_queued_bytes: DEFAULT_QUEUE_BYTES,
                idle_timeout: None,
            },
            outgoing_queue: 1024,
            outgoing_queue_bytes: DEFAULT_QUEUE_BYTES,
            cancel: CancelProtocol::None,
        }
    }

    /// The most calls that may wait for their responses at once; one more fails at once
    /// with [`PeerErrorKind::TooManyPending`].
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().call_capacity(16);
    /// # let _ = builder;
    /// ```
    pub fn call_capacity(mut self, capacity: usize) -> PeerBuilder {
        self.calls.capacity = capacity;
        self
    }

    /// How long a call waits for its response before failing with
    /// [`PeerErrorKind::TimedOut`].
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().call_timeout(std::time::Duration::from_secs(1));
    /// # let _ = builder;
    /// ```
    pub fn call_timeout(mut self, timeout: Duration) -> PeerBuilder {
        self.calls.timeout = timeout;
        self
    }

    /// The form of the ids this side's calls carry.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().id_format(rpcwire_core::correlate::IdFormat::String);
    /// # let _ = builder;
    /// ```
    pub fn id_format(mut self, format: IdFormat) -> PeerBuilder {
        self.calls.id_format = format;
        self
    }

    /// The most async handlers running at once (at least 1). Synchronous handlers run on
    /// the reader task, one at a time, and are not counted.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().max_concurrent_requests(4);
    /// # let _ = builder;
    /// ```
    pub fn max_concurrent_requests(mut self, limit: usize) -> PeerBuilder {
        self.limits.max_concurrent = limit.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self
    }

    /// How many received requests for async handlers may wait for a free handler slot
    /// while the peer goes on reading (default 1,024). When this many wait, a new request is
    /// answered at once with the [`overload_answer`](PeerBuilder::overload_answer) (or, with
    /// none, reading pauses). Responses keep arriving meanwhile, so handlers that call the
    /// other side back cannot deadlock the connection.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().max_queued_requests(16);
    /// # let _ = builder;
    /// ```
    pub fn max_queued_requests(mut self, frames: usize) -> PeerBuilder {
        self.limits.max_queued = frames;
        self
    }

    /// What a request gets when every handler slot is busy and the backlog is full: this
    /// error, at once, with its id, instead of waiting (default: [`OVERLOADED_CODE`],
    /// "server overloaded"). `None` makes reading pause instead until a slot frees.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder()
    ///     .max_concurrent_requests(8)
    ///     .overload_answer(Some(rpcwire_core::ErrorObject::new(-32005, "try again later")));
    /// # let _ = builder;
    /// ```
    pub fn overload_answer(mut self, error: Option<ErrorObject<'static>>) -> PeerBuilder {
        self.limits.overload = error.map(Arc::new);
        self
    }

    /// How requests are cancelled, both ways (default [`CancelProtocol::None`]): with `Lsp`
    /// or `Mcp`, a call dropped or timed out sends that protocol's cancel notification, and
    /// the other side's cancel notifications stop the handlers of the requests they name
    /// (LSP: answered -32800; MCP: not answered).
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().cancel_protocol(rpcwire_core::transport::CancelProtocol::Lsp);
    /// # let _ = builder;
    /// ```
    pub fn cancel_protocol(mut self, protocol: CancelProtocol) -> PeerBuilder {
        self.cancel = protocol;
        self
    }

    /// How long an async handler may run (default: no limit); past it, the handler is
    /// dropped, its context's token fires, and the request is answered -32603 with the
    /// reason ("handler timed out after …").
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().handler_timeout(std::time::Duration::from_secs(30));
    /// # let _ = builder;
    /// ```
    pub fn handler_timeout(mut self, timeout: Duration) -> PeerBuilder {
        self.limits.handler_timeout = Some(timeout);
        self
    }

    /// How many bytes of received requests may wait for a handler slot (default 64 MiB);
    /// past it, as past [`max_queued_requests`](PeerBuilder::max_queued_requests), a new
    /// request gets the overload answer (a single frame larger than this still waits when
    /// it is alone).
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().max_queued_bytes(1 << 20);
    /// # let _ = builder;
    /// ```
    pub fn max_queued_bytes(mut self, bytes: usize) -> PeerBuilder {
        self.limits.max_queued_bytes = bytes;
        self
    }

    /// How many bytes of frames may wait to be written (default 64 MiB); when full, callers
    /// and handlers wait for the writer, as when [`outgoing_queue`](PeerBuilder::outgoing_queue)
    /// frames wait (a frame larger than this is sent alone).
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().outgoing_queue_bytes(8 << 20);
    /// # let _ = builder;
    /// ```
    pub fn outgoing_queue_bytes(mut self, bytes: usize) -> PeerBuilder {
        self.outgoing_queue_bytes = bytes;
        self
    }

    /// Closes the connection when nothing has been received for `timeout` (default: never),
    /// with [`CloseReason::IdleTimeout`]; the answers under way are still written.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().idle_timeout(std::time::Duration::from_secs(300));
    /// # let _ = builder;
    /// ```
    pub fn idle_timeout(mut self, timeout: Duration) -> PeerBuilder {
        self.limits.idle_timeout = Some(timeout);
        self
    }

    /// How many frames may wait to be written (at least 1); when full, callers and the
    /// reader wait for the writer.
    ///
    /// ```
    /// let builder = rpcwire_core::transport::Peer::builder().outgoing_queue(64);
    /// # let _ = builder;
    /// ```
    pub fn outgoing_queue(mut self, frames: usize) -> PeerBuilder {
        self.outgoing_queue = frames.max(1);
        self
    }

    /// Runs a connection over `transport`, already established.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let transport = rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson);
    /// let peer = rpcwire_core::transport::Peer::builder().start(transport, rpcwire_core::dispatch::Router::new());
    /// # let _ = peer;
    /// # }
    /// ```
    pub fn start<T: Transport>(self, transport: T, router: impl Into<Arc<Router>>) -> Peer {
        self.spawn(
            std::future::ready(Ok(transport)),
            router.into(),
            ConnectionState::Connected,
        )
    }

    /// Runs a connection over the transport `connect` establishes. Until it does, the state
    /// is `Connecting` and calls are queued; if it fails, the peer closes with
    /// [`CloseReason::ConnectFailed`].
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    ///
    /// ```
    /// use rpcwire_core::frame::Framing;
    /// use rpcwire_core::transport::{Peer, StreamTransport};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let peer = Peer::builder().connect(
    ///     async {
    ///         let stream = tokio::net::TcpStream::connect("127.0.0.1:1").await?;
    ///         Ok(StreamTransport::from_io(stream, Framing::Ndjson))
    ///     },
    ///     rpcwire_core::dispatch::Router::new(),
    /// );
    /// // Nothing listens on port 1.
    /// assert!(matches!(peer.closed().await, rpcwire_core::transport::CloseReason::ConnectFailed(_)));
    /// # }
    /// ```
    pub fn connect<T, F>(self, connect: F, router: impl Into<Arc<Router>>) -> Peer
    where
        T: Transport,
        F: Future<Output = io::Result<T>> + Send + 'static,
    {
        self.spawn(connect, router.into(), ConnectionState::Connecting)
    }

    fn spawn<T, F>(self, connect: F, router: Arc<Router>, state: ConnectionState) -> Peer
    where
        T: Transport,
        F: Future<Output = io::Result<T>> + Send + 'static,
    {
        let (outgoing, queue) = mpsc::channel(self.outgoing_queue);
        let shared = Arc::new(Shared::new(
            CorrelationTable::new(self.calls.clone()),
            outgoing,
            state,
            self.calls.timeout,
            self.cancel,
            self.outgoing_queue_bytes,
        ));
        tokio::spawn(driver::run(connect, shared.clone(), router, queue, self.limits));
        Peer {
            handle: Arc::new(Handle {
                link: PeerLink { shared },
            }),
        }
    }
}
