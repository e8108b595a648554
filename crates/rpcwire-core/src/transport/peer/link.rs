//! [`PeerLink`]: calls and notifications on a peer's connection, without keeping it open;
//! and the cancel notification a dropped call sends.

use std::fmt;
use std::sync::Arc;

use bytes::BytesMut;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::outgoing::{self, OutgoingParams};
use super::shared::{CallAnswer, ErrorAnswer, Shared};
use super::{CloseReason, ConnectionState, PeerError, PeerErrorKind, PeerStats};
use crate::correlate::PendingCall;
use crate::dispatch::{Remote, RemoteError, RemoteFuture};
use crate::message::{Id, JsonBytes, RawJson};
use crate::middleware::{LinkError, Readiness, RemoteAnswer, RpcCall, RpcService};
use crate::sync::bump;
use crate::trace::event;

/// Calls and notifications on a [`Peer`](super::Peer)'s connection, from a handle that does
/// not keep the connection open ([`Peer::link`](super::Peer::link), or
/// [`RequestContext::remote`](crate::dispatch::RequestContext::remote) inside a handler, for
/// progress reports and calls back). Once the connection closes, everything fails with
/// [`PeerErrorKind::Closed`].
///
/// ```
/// use rpcwire_core::dispatch::{RequestContext, Router};
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{Peer, StreamTransport};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut server = Router::new();
/// server.method_async_with_context("work", |_: rpcwire_core::dispatch::NoParams, cx: RequestContext| async move {
///     let link = cx.remote().expect("served by a peer");
///     link.notify("progress", serde_json::json!({"done": 50})).await.map_err(|e| e.to_error_object())?;
///     Ok("done")
/// });
/// let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
/// let mut client = Router::new();
/// let counter = seen.clone();
/// client.notification("progress", move |_: serde_json::Value| {
///     counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
/// });
/// let (a, b) = tokio::io::duplex(4096);
/// let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), server);
/// let client = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), client);
/// assert_eq!(client.call::<_, String>("work", ()).await.unwrap(), "done");
/// assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1); // read before the answer
/// # }
/// ```
#[derive(Clone)]
pub struct PeerLink {
    pub(super) shared: Arc<Shared>,
}

impl Remote for PeerLink {
    fn call_raw<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a RawJson<'a>>,
    ) -> RemoteFuture<'a, JsonBytes> {
        Box::pin(async move {
            PeerLink::call_raw(self, method, params)
                .await
                .map_err(remote_error)
        })
    }

    fn notify_raw<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, ()> {
        Box::pin(async move {
            PeerLink::notify_raw(self, method, params)
                .await
                .map_err(remote_error)
        })
    }

    fn is_open(&self) -> bool {
        PeerLink::is_open(self)
    }

    fn closed(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            PeerLink::closed(self).await;
        })
    }

    fn close(&self) -> bool {
        self.shared.request_close(super::CloseReason::Local);
        true
    }
}

/// A peer's failure as a handler sees it through its [`Remote`].
fn remote_error(error: PeerError) -> RemoteError {
    let object = error.to_error_object();
    let closed = error.is_closed();
    RemoteError::new(error, object, closed)
}

impl fmt::Debug for PeerLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerLink").field("state", &self.state()).finish()
    }
}

impl PeerLink {
    /// As [`Peer::call`](super::Peer::call).
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, b) = tokio::io::duplex(4096);
    /// # let mut router = Router::new();
    /// # router.method("add", |(a, b): (u32, u32)| Ok(a + b));
    /// # let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    /// let peer = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    /// assert_eq!(peer.link().call::<_, u32>("add", [1, 2]).await.unwrap(), 3);
    /// # }
    /// ```
    pub async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, PeerError> {
        let result = self.call_with(method, OutgoingParams::Serde(&params)).await?;
        serde_json::from_slice(&result)
            .map_err(|error| PeerError::from(PeerErrorKind::Result(error)).in_call(method, None))
    }

    /// As [`Peer::call_raw`](super::Peer::call_raw).
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, b) = tokio::io::duplex(4096);
    /// # let mut router = Router::new();
    /// # router.method("one", |_: rpcwire_core::dispatch::NoParams| Ok(1));
    /// # let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    /// let peer = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    /// assert_eq!(&peer.link().call_raw("one", None).await.unwrap()[..], b"1");
    /// # }
    /// ```
    pub async fn call_raw(&self, method: &str, params: Option<&RawJson<'_>>) -> Result<JsonBytes, PeerError> {
        self.call_with::<()>(method, OutgoingParams::Raw(params)).await
    }

    /// As [`Peer::notify`](super::Peer::notify).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// peer.link().notify("progress", [1]).await.unwrap();
    /// # }
    /// ```
    pub async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<(), PeerError> {
        let shared = &self.shared;
        if !self.is_open() {
            return Err(shared.closed_error().in_call(method, None));
        }
        let in_call = |error: PeerError| error.in_call(method, None);
        let mut body = BytesMut::with_capacity(64 + method.len());
        outgoing::write_call(&mut body, None, method, OutgoingParams::Serde(&params)).map_err(in_call)?;
        shared.send_notification(body.freeze()).await.map_err(in_call)?;
        bump(&shared.counters.notifications);
        Ok(())
    }

    /// As [`Peer::notify_raw`](super::Peer::notify_raw).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// peer.link().notify_raw("ping", None).await.unwrap();
    /// # }
    /// ```
    pub async fn notify_raw(&self, method: &str, params: Option<&RawJson<'_>>) -> Result<(), PeerError> {
        let shared = &self.shared;
        if !self.is_open() {
            return Err(shared.closed_error().in_call(method, None));
        }
        let in_call = |error: PeerError| error.in_call(method, None);
        let mut body = BytesMut::with_capacity(64 + method.len() + params.map_or(0, |p| p.get().len()));
        outgoing::write_call::<()>(&mut body, None, method, OutgoingParams::Raw(params)).map_err(in_call)?;
        shared.send_notification(body.freeze()).await.map_err(in_call)?;
        bump(&shared.counters.notifications);
        Ok(())
    }

    /// Whether calls can be made (the connection is connecting or connected).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// let link = peer.link();
    /// peer.close().await;
    /// assert!(!link.is_open());
    /// # }
    /// ```
    pub fn is_open(&self) -> bool {
        self.state().is_open()
    }

    /// The connection's state now.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// assert_eq!(peer.link().state(), rpcwire_core::transport::ConnectionState::Connected);
    /// # }
    /// ```
    pub fn state(&self) -> ConnectionState {
        *self.shared.state.borrow()
    }

    /// Waits until the connection is closed and says why (without keeping it open).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// let link = peer.link();
    /// drop(b);
    /// assert!(matches!(link.closed().await, rpcwire_core::transport::CloseReason::EndOfInput));
    /// # }
    /// ```
    pub async fn closed(&self) -> CloseReason {
        let mut states = self.shared.state.subscribe();
        let _ = states.wait_for(|state| *state == ConnectionState::Closed).await;
        self.shared.close_reason()
    }

    /// What the peer has done so far.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (a, _b) = tokio::io::duplex(1024);
    /// # let peer = rpcwire_core::transport::Peer::new(rpcwire_core::transport::StreamTransport::from_io(a, rpcwire_core::frame::Framing::Ndjson), rpcwire_core::dispatch::Router::new());
    /// assert_eq!(peer.link().stats(), peer.stats());
    /// # }
    /// ```
    pub fn stats(&self) -> PeerStats {
        self.shared.counters.snapshot()
    }

    async fn call_with<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: OutgoingParams<'_, P>,
    ) -> Result<JsonBytes, PeerError> {
        self.call_answer_with(method, params).await?.map_err(|remote| {
            let Answered { answer, id } = *remote;
            PeerError::from(PeerErrorKind::Remote(answer.error)).in_call(method, Some(&id))
        })
    }

    /// A call whose params are JSON text, answered with the result or the other side's error
    /// as it wrote it (what a gateway passes on); `Err` for everything else.
    pub(crate) async fn call_answer_raw(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<CallAnswer, PeerError> {
        Ok(self
            .call_answer_with::<()>(method, OutgoingParams::Raw(params))
            .await?
            .map_err(|remote| remote.answer))
    }

    async fn call_answer_with<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: OutgoingParams<'_, P>,
    ) -> Result<Result<JsonBytes, Box<Answered>>, PeerError> {
        let shared = &self.shared;
        let pending = shared
            .table
            .start()
            .map_err(|error| PeerError::from_call(error, || shared.close_reason()).in_call(method, None))?;
        let in_call = |error: PeerError| error.in_call(method, Some(pending.id()));
        let mut body = BytesMut::with_capacity(64 + method.len());
        outgoing::write_call(&mut body, Some(pending.id()), method, params).map_err(in_call)?;
        // The deadline covers the wait for room in the queue too.
        let after = shared.call_timeout;
        shared
            .send_until(body.freeze(), pending.deadline(), || {
                PeerErrorKind::TimedOut { after }.into()
            })
            .await
            .map_err(in_call)?;
        bump(&shared.counters.calls);
        // From here on the other side may be working on it: dropping this future, or a
        // timeout, tells it so (with a cancel protocol).
        let mut cancel = CancelOnDrop::new(shared, pending.id());
        let mut pending = pending;
        let outcome = self
            .finish_call_answer(&mut pending, method)
            .await
            .map(|answer| {
                answer.map_err(|answer| {
                    Box::new(Answered {
                        answer,
                        id: pending.id().clone().into_owned(),
                    })
                })
            });
        let timed_out = outcome
            .as_ref()
            .is_err_and(|error| matches!(error.kind(), PeerErrorKind::TimedOut { .. }));
        if !timed_out {
            cancel.disarm();
        } else {
            bump(&shared.counters.calls_timed_out);
            event!(
                warn,
                method,
                after_ms = after.as_millis() as u64,
                "call timed out"
            );
        }
        outcome
    }

    /// Waits for the answer of a call of `method`, until its deadline; an error names the
    /// call.
    pub(super) async fn finish_call(
        &self,
        mut pending: PendingCall<CallAnswer>,
        method: &str,
    ) -> Result<JsonBytes, PeerError> {
        self.finish_call_answer(&mut pending, method)
            .await?
            .map_err(|remote| PeerError::from(PeerErrorKind::Remote(remote.error)).in_call(method, Some(pending.id())))
    }

    /// Waits for the answer of a call of `method`, until its deadline: the result or the
    /// other side's error; `Err` (naming the call) when no answer came.
    async fn finish_call_answer(
        &self,
        pending: &mut PendingCall<CallAnswer>,
        method: &str,
    ) -> Result<CallAnswer, PeerError> {
        let shared = &self.shared;
        let outcome = match pending.deadline() {
            Some(deadline) => tokio::select! {
                biased;
                outcome = &mut *pending => outcome,
                // Past its deadline the call times itself out when polled (unless its
                // response won the race).
                () = tokio::time::sleep_until(deadline.into()) => (&mut *pending).await,
            },
            None => (&mut *pending).await,
        };
        outcome.map_err(|error| {
            PeerError::from_call(error, || shared.close_reason()).in_call(method, Some(pending.id()))
        })
    }
}

/// The other side's error answer to a call, with the call's id (for naming the call).
struct Answered {
    answer: ErrorAnswer,
    id: Id<'static>,
}

/// Sends the cancel notification of a call still under way when it is dropped (the
/// caller dropped the call's future, or it timed out); nothing without a cancel protocol.
struct CancelOnDrop<'s> {
    shared: &'s Shared,
    id: Option<Id<'static>>,
}

impl<'s> CancelOnDrop<'s> {
    fn new(shared: &'s Shared, id: &Id<'_>) -> CancelOnDrop<'s> {
        let id = (shared.cancel_protocol.method().is_some()).then(|| id.clone().into_owned());
        CancelOnDrop { shared, id }
    }

    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if !self.shared.state.borrow().is_open() {
            return;
        }
        if let Some(frame) = self
            .shared
            .cancel_protocol
            .notification(&id, "the caller gave up")
        {
            // A drop cannot wait: when the queue is full the cancel is lost (and counted).
            if self.shared.try_queue_frame(frame) {
                bump(&self.shared.counters.cancels_sent);
            } else {
                bump(&self.shared.counters.cancels_lost);
            }
        }
    }
}

/// A connection to the other side as a middleware service: each call answered with what the
/// other side wrote ([`RemoteAnswer`]: its result or its error, as it wrote them), `Err` when
/// there is no answer (not sent, closed, timed out); [`Readiness::Down`] once the connection
/// is closed. What a gateway's upstreams and the MCP gateway's servers are reached through.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire_core::dispatch::Router;
/// use rpcwire_core::middleware::{RemoteAnswer, RpcCall, RpcService};
/// use rpcwire_core::transport::{Peer, StreamTransport};
///
/// let (ours, theirs) = tokio::io::duplex(4096);
/// let mut router = Router::new();
/// router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
/// let server = Peer::new(StreamTransport::from_io(theirs, rpcwire_core::frame::Framing::Ndjson), router);
/// let client = Peer::new(StreamTransport::from_io(ours, rpcwire_core::frame::Framing::Ndjson), Router::new());
/// let params = rpcwire_core::RawJson::new("[42,23]").unwrap();
/// // `PeerLink::call` is the typed call: the service's is named through the trait.
/// let link = client.link();
/// let answer = RpcService::call(&link, RpcCall::new("subtract", Some(&params))).await.unwrap();
/// assert_eq!(answer.result().unwrap().as_str(), "19");
/// let answer = RpcService::call(&link, RpcCall::new("divide", Some(&params))).await.unwrap();
/// assert_eq!(answer.error().unwrap().code().code(), -32601);
/// # drop(server);
/// # });
/// ```
impl RpcService for PeerLink {
    type Answer = RemoteAnswer;
    type Error = LinkError;

    async fn call(&self, call: RpcCall<'_>) -> Result<RemoteAnswer, LinkError> {
        Ok(match self.call_answer_raw(call.method(), call.params()).await? {
            Ok(result) => RemoteAnswer::Result(result),
            Err(answer) => RemoteAnswer::Error {
                error: answer.error,
                text: answer.text,
            },
        })
    }

    async fn notify(&self, call: RpcCall<'_>) -> Result<(), LinkError> {
        Ok(self.notify_raw(call.method(), call.params()).await?)
    }

    fn readiness(&self) -> Readiness {
        match self.state() {
            ConnectionState::Closed => Readiness::Down,
            _ => Readiness::Ready,
        }
    }
}
