//! `RequestContext` (`tokio` feature): what a handler may know of the request it serves —
//! its id and method, a cancellation token, a link back to the other side — and the
//! supervision the serving side puts around a handler (cancellation by id, handler timeout,
//! abort on close). A leaf below `deferred`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::remote::Remote;
use crate::message::Id;
use crate::sync::lock_unpoisoned;

/// The link back to the other side, as the serving side gave it.
/// The other side of a connection, as a handler reaches it.
pub type RemoteLink = Arc<dyn Remote>;

/// What a handler registered with a context
/// ([`Router::method_async_with_context`](super::Router::method_async_with_context),
/// [`Router::method_blocking`](super::Router::method_blocking)) gets besides its params: the
/// request's id and method, a cancellation token, and — when it is served by a
/// [`Peer`](crate::transport::Peer) — its [`Remote`] for calls and notifications back to the
/// other side (progress reports, say; [`remote`](RequestContext::remote)). The link does not
/// keep the connection open.
///
/// The token fires when the other side cancels the request (`$/cancelRequest` or
/// `notifications/cancelled`, per the peer's
/// [`CancelProtocol`](crate::transport::CancelProtocol)), when the handler runs past the
/// peer's handler timeout, or when the connection is closed with a deadline that passed. An
/// async handler is also simply dropped at its next `.await` then; a blocking one should
/// look at [`is_cancelled`](RequestContext::is_cancelled) now and then.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire_core::dispatch::{RequestContext, Router};
/// let mut router = Router::new();
/// router.method_async_with_context("whoami", |_: rpcwire_core::dispatch::NoParams, cx: RequestContext| async move {
///     Ok(format!("{} {}", cx.method(), cx.id().unwrap()))
/// });
/// let mut out = bytes::BytesMut::new();
/// router.handle_async(br#"{"jsonrpc":"2.0","id":"a7","method":"whoami"}"#, &mut out).await;
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":"a7","result":"whoami \"a7\""}"#);
/// # });
/// ```
#[derive(Clone)]
pub struct RequestContext {
    id: Option<Id<'static>>,
    method: Arc<str>,
    token: CancellationToken,
    pub(crate) remote: Option<RemoteLink>,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("cancelled", &self.token.is_cancelled())
            .field("has_peer", &self.remote.is_some())
            .finish()
    }
}

impl RequestContext {
    /// A context of its own, for calling a handler outside a server (tests): nothing
    /// cancels it but the caller, through [`cancellation`](RequestContext::cancellation).
    ///
    /// ```
    /// let cx = rpcwire_core::dispatch::RequestContext::new(Some(rpcwire_core::Id::from(1u64)), "sleep");
    /// assert_eq!(cx.method(), "sleep");
    /// cx.cancellation().cancel();
    /// assert!(cx.is_cancelled());
    /// ```
    pub fn new(id: Option<Id<'static>>, method: &str) -> RequestContext {
        RequestContext {
            id,
            method: method.into(),
            token: CancellationToken::new(),
            remote: None,
        }
    }

    /// A context for a request served outside a router — by a transport that dispatches
    /// requests itself (MCP's stateless revision over HTTP) — with its id, its method, its
    /// cancellation token and its way back to the other side, when there is one.
    ///
    /// ```
    /// use rpcwire_core::dispatch::RequestContext;
    /// let token = tokio_util::sync::CancellationToken::new();
    /// let cx = RequestContext::serving(rpcwire_core::Id::from(7u64), "tools/call", token.clone(), None);
    /// assert_eq!(cx.method(), "tools/call");
    /// token.cancel();
    /// assert!(cx.is_cancelled());
    /// ```
    pub fn serving(id: Id<'static>, method: &str, token: CancellationToken, remote: Option<RemoteLink>) -> RequestContext {
        RequestContext {
            id: Some(id),
            method: method.into(),
            token,
            remote,
        }
    }

    /// The other side of the connection, for calls and notifications back, when the
    /// transport serving the request gives one (a [`Peer`](crate::transport::Peer) does;
    /// `None` over HTTP and in [`Router::handle_async`](super::Router::handle_async)).
    ///
    /// ```
    /// assert!(rpcwire_core::dispatch::RequestContext::new(None, "m").remote().is_none());
    /// ```
    pub fn remote(&self) -> Option<&Arc<dyn Remote>> {
        self.remote.as_ref()
    }

    /// The request's id; `None` for a notification.
    ///
    /// ```
    /// let cx = rpcwire_core::dispatch::RequestContext::new(None, "log");
    /// assert!(cx.id().is_none());
    /// ```
    pub fn id(&self) -> Option<&Id<'static>> {
        self.id.as_ref()
    }

    /// The method called.
    ///
    /// ```
    /// assert_eq!(rpcwire_core::dispatch::RequestContext::new(None, "log").method(), "log");
    /// ```
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Whether the message is a notification (no answer goes back).
    ///
    /// ```
    /// assert!(rpcwire_core::dispatch::RequestContext::new(None, "log").is_notification());
    /// ```
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }

    /// The request's cancellation token (child tokens and `run_until_cancelled` work as
    /// tokio-util documents them).
    ///
    /// ```
    /// let cx = rpcwire_core::dispatch::RequestContext::new(None, "m");
    /// let child = cx.cancellation().child_token();
    /// cx.cancellation().cancel();
    /// assert!(child.is_cancelled());
    /// ```
    pub fn cancellation(&self) -> &CancellationToken {
        &self.token
    }

    /// Whether the request is cancelled (for handlers that cannot await
    /// [`cancelled`](RequestContext::cancelled): blocking ones).
    ///
    /// ```
    /// assert!(!rpcwire_core::dispatch::RequestContext::new(None, "m").is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Completes when the request is cancelled.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let cx = rpcwire_core::dispatch::RequestContext::new(None, "m");
    /// cx.cancellation().cancel();
    /// cx.cancelled().await;
    /// # });
    /// ```
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }
}

/// What a request cancelled by the other side gets.
///
/// ```
/// assert_eq!(rpcwire_core::dispatch::OnCancel::default(), rpcwire_core::dispatch::OnCancel::Answer);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnCancel {
    /// The LSP way: an error response, -32800 RequestCancelled.
    #[default]
    Answer,
    /// The MCP way: no response at all.
    Silent,
}

/// The serving side's supervision of async handlers: nothing by default (a router called
/// directly); a transport that serves a router fills it in (the `Peer` does, and the MCP
/// Streamable HTTP server) and hands it to
/// [`PendingAnswer::answer_supervised`](super::PendingAnswer::answer_supervised).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use rpcwire_core::dispatch::{Cancellations, OnCancel, Supervision};
/// let serving = Supervision {
///     cancellations: Some(Arc::new(Cancellations::default())),
///     on_cancel: OnCancel::Silent,
///     handler_timeout: Some(Duration::from_secs(30)),
///     ..Supervision::default()
/// };
/// # let _ = serving;
/// ```
#[derive(Clone, Debug, Default)]
pub struct Supervision {
    /// Handed to handlers that take a context (a `transport::PeerLink`).
    pub remote: Option<RemoteLink>,
    /// The tokens of the requests under way, by id, for cancellation by the other side.
    pub cancellations: Option<Arc<Cancellations>>,
    /// What a request cancelled by the other side gets.
    pub on_cancel: OnCancel,
    /// Fires when running handlers are to be aborted (a close whose deadline passed).
    pub abort: Option<CancellationToken>,
    /// How long a handler may run; past it, its token fires and the request is answered
    /// -32603.
    pub handler_timeout: Option<Duration>,
    /// Counts handlers stopped by the timeout.
    pub timeouts: Option<Arc<AtomicU64>>,
}

impl Supervision {
    /// Whether a handler has to be raced against cancellation or a timeout.
    fn supervises(&self) -> bool {
        self.cancellations.is_some() || self.abort.is_some() || self.handler_timeout.is_some()
    }

    /// A request's token: a child of the abort token, when there is one.
    pub(crate) fn new_token(&self) -> CancellationToken {
        match &self.abort {
            Some(abort) => abort.child_token(),
            None => CancellationToken::new(),
        }
    }

    /// The context and supervision for one message started on an async handler, when the
    /// handler takes a context or the serving side supervises it; `None` otherwise (the
    /// fast path: nothing allocated).
    pub(crate) fn watch(&self, id: Option<&Id<'_>>, method: &str, wants_context: bool) -> Option<Watch> {
        if !wants_context && !self.supervises() {
            return None;
        }
        let token = self.new_token();
        let (registration, token) = match (&self.cancellations, id) {
            (Some(cancellations), Some(id)) => {
                let (registration, token) = cancellations.register(id, token);
                (Some(registration), token)
            }
            _ => (None, token),
        };
        Some(Watch {
            context: RequestContext {
                id: id.map(|id| id.clone().into_owned()),
                method: method.into(),
                token,
                remote: self.remote.clone(),
            },
            abort: self.abort.clone(),
            timeout: self.handler_timeout,
            timeouts: self.timeouts.clone(),
            on_cancel: self.on_cancel,
            _registration: registration,
        })
    }
}

/// One supervised handler: its context, and what stops it.
pub(crate) struct Watch {
    pub(crate) context: RequestContext,
    pub(crate) abort: Option<CancellationToken>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) timeouts: Option<Arc<AtomicU64>>,
    pub(crate) on_cancel: OnCancel,
    _registration: Option<Registration>,
}

/// The cancellation tokens of the requests under way on one connection, by the JSON text
/// of their ids. A request is expected (its token made) when the reader queues it for a
/// handler, so that a cancellation arriving before its handler starts still finds it; the
/// handler claims that token when it starts, and the entry goes when it is done.
///
/// ```
/// let cancellations = rpcwire_core::dispatch::Cancellations::default();
/// assert!(!cancellations.cancel("1"), "no request 1 under way");
/// ```
#[derive(Debug, Default)]
pub struct Cancellations {
    tokens: Mutex<HashMap<Box<str>, Entry>>,
    next: AtomicU64,
}

#[derive(Debug)]
struct Entry {
    serial: u64,
    token: CancellationToken,
    claimed: bool,
}

impl Cancellations {
    /// A request with id `id_json` is on its way to a handler.
    pub(crate) fn expect(&self, id_json: &str, token: CancellationToken) {
        let serial = self.next.fetch_add(1, Ordering::Relaxed);
        lock_unpoisoned(&self.tokens)
            .entry(id_json.into())
            .or_insert(Entry {
                serial,
                token,
                claimed: false,
            });
    }

    /// The handler of `id` starts: its expected token, or `token` when it was not expected.
    fn register(
        self: &Arc<Self>,
        id: &Id<'_>,
        token: CancellationToken,
    ) -> (Registration, CancellationToken) {
        let key: Box<str> = id.json_parts().concat().into();
        let mut tokens = lock_unpoisoned(&self.tokens);
        let (serial, token) = match tokens.get_mut(&key) {
            Some(entry) if !entry.claimed => {
                entry.claimed = true;
                (entry.serial, entry.token.clone())
            }
            _ => {
                let serial = self.next.fetch_add(1, Ordering::Relaxed);
                let entry = Entry {
                    serial,
                    token: token.clone(),
                    claimed: true,
                };
                tokens.insert(key.clone(), entry);
                (serial, token)
            }
        };
        drop(tokens);
        let registration = Registration {
            cancellations: self.clone(),
            key,
            serial,
        };
        (registration, token)
    }

    /// Cancels the request under way whose id is written `id_json` (its JSON text: `1`,
    /// `"a"`); `false` when there is none (finished already, or never seen).
    ///
    /// ```
    /// assert!(!rpcwire_core::dispatch::Cancellations::default().cancel(r#""a""#));
    /// ```
    pub fn cancel(&self, id_json: &str) -> bool {
        match lock_unpoisoned(&self.tokens).get(id_json) {
            Some(entry) => {
                entry.token.cancel();
                true
            }
            None => false,
        }
    }

    /// How many requests are expected or under way (for tests of the bookkeeping).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock_unpoisoned(&self.tokens).len()
    }
}

/// Takes a request's token off the list when its handler is done.
struct Registration {
    cancellations: Arc<Cancellations>,
    key: Box<str>,
    serial: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut tokens = lock_unpoisoned(&self.cancellations.tokens);
        // A later request with the same id (a client reusing ids) keeps its own entry.
        if tokens
            .get(&self.key)
            .is_some_and(|entry| entry.serial == self.serial)
        {
            tokens.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_before_the_handler_starts_reaches_it_and_nothing_stays_behind() {
        let cancellations = Arc::new(Cancellations::default());
        cancellations.expect("7", CancellationToken::new());
        assert!(cancellations.cancel("7"), "an expected request can be cancelled");
        let (registration, token) = cancellations.register(&Id::from(7u64), CancellationToken::new());
        assert!(
            token.is_cancelled(),
            "the handler starts with the token already fired"
        );
        drop(registration);
        assert_eq!(cancellations.len(), 0);
        assert!(!cancellations.cancel("7"), "done: nothing to cancel");
    }

    #[test]
    fn a_reused_id_keeps_its_own_entry() {
        let cancellations = Arc::new(Cancellations::default());
        let (first, _) = cancellations.register(&Id::from("a"), CancellationToken::new());
        let (second, token) = cancellations.register(&Id::from("a"), CancellationToken::new());
        drop(first);
        assert!(cancellations.cancel(r#""a""#));
        assert!(token.is_cancelled());
        drop(second);
        assert_eq!(cancellations.len(), 0);
    }

    #[test]
    fn serving_without_supervision_makes_no_context_for_plain_handlers() {
        let serving = Supervision::default();
        assert!(serving.watch(Some(&Id::from(1u64)), "m", false).is_none());
        let watch = serving
            .watch(None, "m", true)
            .expect("a context for a handler that takes one");
        assert!(watch.context.is_notification() && watch.context.remote.is_none());
    }
}
