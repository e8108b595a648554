//! `Router`: method name → handler, and the JSON-RPC 2.0 rules for what to answer.

use std::fmt;

use bytes::BytesMut;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::handler::{self, Handler};
use super::methods::MethodTable;
use super::reply::{Reply, Written};
use super::target::Target;
use crate::encode::{self, BatchWriter};
use crate::message::{ErrorObject, Message, Params};
use crate::parse::{Limits, Parsed, Parser};
use crate::trace::RequestSpan;
use rpcwire_wire::error_answer::write_parse_error;

cfg_tokio! {
    // The async side: async handlers' registration, and answering what needs an await.
    #[path = "router_async.rs"]
    mod async_side;
}

/// Maps method names to handlers and turns one input message or batch into the exact answer
/// bytes, written at the end of a caller-provided `BytesMut` — or into nothing, when the
/// JSON-RPC 2.0 specification says there is no answer.
///
/// - A request gets a response with the same id (byte for byte) and `"jsonrpc":"2.0"`.
/// - A notification never gets a response, even when it fails.
/// - Unknown method: -32601 naming the method. Params that do not decode: -32602 with the
///   decoder's reason in `data`. A handler's own error goes out as it is. A panicking
///   handler: -32603 (the panic is contained).
/// - Malformed JSON: -32700 with id `null`. An invalid request: -32600 with its id when it
///   could be read, else `null`.
/// - Batch: responses in request order, notifications skipped, no output at all when every
///   element is a notification; `[]`, a batch over the limit, or a syntax error anywhere in
///   the batch: a single error object.
/// - Responses that arrive at a router (a peer answering) get no answer: answering them
///   with errors could make two peers bounce errors at each other forever.
///
/// Method lookup is a hash of the name into an open-addressing table: no allocation, constant
/// time with hundreds of methods. A `Router` is `Send + Sync`; share it behind an `Arc`.
///
/// ```
/// use rpcwire_core::dispatch::Router;
/// use rpcwire_core::ErrorObject;
///
/// #[derive(serde::Deserialize)]
/// #[serde(untagged)]
/// enum Subtract {
///     Positional(i64, i64),
///     Named { minuend: i64, subtrahend: i64 },
/// }
///
/// let mut router = Router::new();
/// router.method("subtract", |p: Subtract| -> Result<i64, ErrorObject> {
///     Ok(match p {
///         Subtract::Positional(a, b) | Subtract::Named { minuend: a, subtrahend: b } => a - b,
///     })
/// });
///
/// let mut out = bytes::BytesMut::new();
/// assert!(router.handle(br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#, &mut out));
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":19}"#);
///
/// out.clear();
/// assert!(!router.handle(br#"{"jsonrpc":"2.0","method":"subtract","params":[1,2]}"#, &mut out));
/// assert!(out.is_empty());
/// ```
pub struct Router {
    methods: MethodTable<Handler>,
    parser: Parser,
    /// How many handlers are async, the fallback included (when any is, answering a frame
    /// may need an await).
    async_handlers: usize,
    /// What serves methods nobody registered (`fallback`, `fallback_async`); `None`: -32601.
    fallback: Option<Handler>,
    /// The same fallback, for the elements of a batch it takes together (`Router::fallback`'s).
    #[cfg(feature = "tokio")]
    pub(crate) batch_fallback: Option<std::sync::Arc<dyn super::Fallback>>,
    /// When set, batches are answered only while it is on (a protocol whose revisions
    /// differ on batches: MCP's); otherwise refused with -32600.
    batch_switch: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for Router {
    fn default() -> Self {
        Router::new()
    }
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("methods", &self.methods.names().collect::<Vec<_>>())
            .field("limits", self.parser.limits())
            .finish()
    }
}

impl Router {
    /// An empty router with the default [`Limits`].
    ///
    /// ```
    /// let router = rpcwire_core::dispatch::Router::new();
    /// assert_eq!(router.len(), 0);
    /// ```
    pub fn new() -> Router {
        Router::with_limits(Limits::default())
    }

    /// An empty router whose parser enforces `limits` (size, depth, batch length).
    ///
    /// ```
    /// let router = rpcwire_core::dispatch::Router::with_limits(rpcwire_core::Limits::default().with_max_batch_len(2));
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"a"}]"#, &mut out);
    /// assert!(std::str::from_utf8(&out).unwrap().starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#));
    /// ```
    pub fn with_limits(limits: Limits) -> Router {
        Router {
            methods: MethodTable::default(),
            parser: Parser::new(limits),
            async_handlers: 0,
            fallback: None,
            #[cfg(feature = "tokio")]
            batch_fallback: None,
            batch_switch: None,
        }
    }

    /// The parser (and its limits) this router uses.
    ///
    /// ```
    /// assert_eq!(rpcwire_core::dispatch::Router::new().parser().limits().max_batch_len(), 1000);
    /// ```
    pub fn parser(&self) -> &Parser {
        &self.parser
    }

    /// The number of registered methods and notifications.
    ///
    /// ```
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.notification("ping", |_: rpcwire_core::dispatch::NoParams| {});
    /// assert_eq!(router.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.methods.len()
    }

    /// `true` when nothing is registered.
    ///
    /// ```
    /// assert!(rpcwire_core::dispatch::Router::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.methods.len() == 0
    }

    /// Whether `method` has a handler of its own (not the fallback).
    #[cfg(feature = "tokio")]
    pub(crate) fn registered(&self, method: &str) -> bool {
        self.methods.get(method).is_some()
    }

    /// The handler for `method`: the one registered, else the fallback.
    #[inline]
    fn handler(&self, method: &str) -> Option<&Handler> {
        match self.methods.get(method) {
            Some(handler) => Some(handler),
            None => self.fallback.as_ref(),
        }
    }

    fn register(&mut self, name: &str, handler: Handler) -> &mut Router {
        let added = usize::from(handler.is_async());
        let replaced = self.methods.insert(name, handler);
        let removed = usize::from(replaced.as_ref().is_some_and(Handler::is_async));
        self.async_handlers = self.async_handlers + added - removed;
        self
    }

    /// Registers a typed request handler: params are decoded into `P` with serde (absent
    /// params decode as `null`; use [`NoParams`](super::NoParams) for methods without
    /// params), the result `R` is serialized straight into the output. Positional and named
    /// params are both possible through serde (a tuple, a struct, or an untagged enum of
    /// both). A later registration of the same name replaces this one.
    ///
    /// ```
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.method("sum", |p: Vec<i64>| Ok(p.iter().sum::<i64>()));
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(br#"{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"a"}"#, &mut out);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":"a","result":7}"#);
    /// ```
    pub fn method<P, R, F>(&mut self, name: &str, f: F) -> &mut Router
    where
        P: DeserializeOwned,
        R: Serialize,
        F: Fn(P) -> Result<R, ErrorObject<'static>> + Send + Sync + 'static,
    {
        self.register(name, Handler::Method(handler::typed(f)))
    }

    /// Registers a raw request handler: it gets the lazy [`Params`] view (borrowing from the
    /// input, nothing decoded) and writes its result through a [`Reply`].
    ///
    /// ```
    /// use rpcwire_core::dispatch::{Reply, Router};
    /// let mut router = Router::new();
    /// router.raw_method("first", |p: Option<rpcwire_core::Params<'_>>, reply: Reply<'_>| {
    ///     match p.and_then(|p| p.at(0)) {
    ///         Some(first) => Ok(reply.raw(&first)),
    ///         None => Err(rpcwire_core::ErrorObject::invalid_params("need one element")),
    ///     }
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(br#"{"jsonrpc":"2.0","method":"first","params":[{"x":1},2],"id":1}"#, &mut out);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":{"x":1}}"#);
    /// ```
    pub fn raw_method<F>(&mut self, name: &str, f: F) -> &mut Router
    where
        F: for<'p, 'r> Fn(Option<Params<'p>>, Reply<'r>) -> Result<Written, ErrorObject<'static>>
            + Send
            + Sync
            + 'static,
    {
        self.register(name, Handler::Method(Box::new(f)))
    }

    /// Registers a typed notification handler. It runs for notifications of this method;
    /// params that do not decode are dropped silently, and a request (with an id) for this
    /// method is answered -32601, as the specification's examples do for `foobar`.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicI64, Ordering};
    /// use std::sync::Arc;
    ///
    /// let total = Arc::new(AtomicI64::new(0));
    /// let seen = total.clone();
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.notification("add", move |p: Vec<i64>| {
    ///     seen.fetch_add(p.iter().sum(), Ordering::Relaxed);
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(br#"{"jsonrpc":"2.0","method":"add","params":[1,2]}"#, &mut out);
    /// assert!(out.is_empty());
    /// assert_eq!(total.load(Ordering::Relaxed), 3);
    /// ```
    pub fn notification<P, F>(&mut self, name: &str, f: F) -> &mut Router
    where
        P: DeserializeOwned,
        F: Fn(P) + Send + Sync + 'static,
    {
        self.register(name, Handler::Notification(handler::typed_notification(f)))
    }

    /// Registers a raw notification handler, which gets the lazy [`Params`] view.
    ///
    /// ```
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.raw_notification("log", |p: Option<rpcwire_core::Params<'_>>| {
    ///     assert!(p.is_some());
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// assert!(!router.handle(br#"{"jsonrpc":"2.0","method":"log","params":["x"]}"#, &mut out));
    /// ```
    pub fn raw_notification<F>(&mut self, name: &str, f: F) -> &mut Router
    where
        F: for<'p> Fn(Option<Params<'p>>) + Send + Sync + 'static,
    {
        self.register(name, Handler::Notification(Box::new(f)))
    }

    /// The answer rules for a parsed input (one message or a batch), synchronous handlers
    /// only (async ones are refused with -32603): what the [`Responder`](super::Responder) runs.
    pub(crate) fn answer_parsed(&self, parsed: Parsed<'_>, out: &mut BytesMut) {
        match parsed {
            Parsed::Single(message) => self.answer(&message, &mut Target::Single(out)),
            Parsed::Batch(batch) => {
                let mut target = Target::Batch(BatchWriter::new(out));
                for element in &batch {
                    match element {
                        Ok(message) => self.answer(&message, &mut target),
                        Err(error) => write_parse_error(target.answer(), error),
                    }
                }
                target.finish();
            }
        }
    }

    /// Serves batches only while `switch` is on; a batch that comes while it is off is
    /// refused whole with -32600 (one error, id `null`). For protocols whose revisions differ
    /// on batches (MCP allowed them in 2025-03-26 only): the session turns the switch when it
    /// agrees on a revision. Without a switch, batches are always served.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::sync::Arc;
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.method("one", |_: rpcwire_core::dispatch::NoParams| Ok(1));
    /// let batches = Arc::new(AtomicBool::new(false));
    /// router.set_batch_switch(batches.clone());
    /// let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"one"}]"#;
    /// let mut out = bytes::BytesMut::new();
    /// router.handle(batch, &mut out);
    /// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#));
    /// batches.store(true, Ordering::Release);
    /// out.clear();
    /// router.handle(batch, &mut out);
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":1}]"#);
    /// ```
    pub fn set_batch_switch(&mut self, switch: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.batch_switch = Some(switch);
    }

    /// Whether batches are served now.
    pub(crate) fn accepts_batches(&self) -> bool {
        self.batch_switch
            .as_ref()
            .map_or(true, |switch| switch.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Whether answering `parsed` runs an async handler (so it has to be awaited);
    /// responses and unknown methods never do.
    /// Whether answering a frame may need an await: an async handler (or an async fallback)
    /// is registered. A transport can then keep room for awaiting, or not.
    ///
    /// ```
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// assert!(!router.awaits());
    /// router.method_async("later", |_: rpcwire_core::dispatch::NoParams| async { Ok(1) });
    /// assert!(router.awaits());
    /// ```
    pub fn awaits(&self) -> bool {
        self.async_handlers > 0
    }

    pub(crate) fn needs_async(&self, parsed: &Parsed<'_>) -> bool {
        if self.async_handlers == 0 {
            return false;
        }
        let is_async = |message: &Message<'_>| match message.method() {
            Some(method) => self.is_async(method),
            None => false,
        };
        match parsed {
            Parsed::Single(message) => is_async(message),
            Parsed::Batch(batch) => batch.iter().any(|element| element.is_ok_and(|m| is_async(&m))),
        }
    }

    /// Whether `method` is served by an async handler.
    pub(crate) fn is_async(&self, method: &str) -> bool {
        self.handler(method).is_some_and(Handler::is_async)
    }

    /// The answer rules for one message. An async handler cannot be awaited here: a request
    /// for one is answered -32603, a notification for one runs on the current tokio runtime
    /// if there is one (`Deferred::refuse`).
    fn answer(&self, message: &Message<'_>, target: &mut Target<'_>) {
        match message {
            Message::Request(request) => {
                let id = request.id();
                match self.handler(request.method()) {
                    Some(Handler::Method(f)) => {
                        let dst = target.answer();
                        let mark = dst.len();
                        encode::begin_success(dst, id);
                        let span = RequestSpan::start(request.method(), Some(id));
                        let called =
                            span.in_scope(|| handler::call_method(f, request.params(), Reply::new(dst)));
                        span.finish(called.as_ref().err().map(|error| error.code().code()), false);
                        match called {
                            Ok(_written) => encode::finish_response(dst),
                            Err(error) => {
                                dst.truncate(mark);
                                encode::write_error(dst, id, &error);
                            }
                        }
                    }
                    #[cfg(feature = "tokio")]
                    Some(Handler::Async(f)) => async_side::refuse_request(f, request, target.answer()),
                    Some(Handler::Notification(_)) | None => {
                        let error = ErrorObject::method_not_found(request.method());
                        encode::write_error(target.answer(), id, &error);
                    }
                }
            }
            Message::Notification(notification) => match self.handler(notification.method()) {
                Some(Handler::Method(f)) => {
                    // Run it for its effects; the answer is thrown away.
                    let dst = target.scratch();
                    let mark = dst.len();
                    let _ = handler::call_method(f, notification.params(), Reply::new(dst));
                    dst.truncate(mark);
                }
                Some(Handler::Notification(f)) => handler::call_notification(f, notification.params()),
                #[cfg(feature = "tokio")]
                Some(Handler::Async(f)) => async_side::refuse_notification(f, notification, target.scratch()),
                None => {}
            },
            Message::Response(_) => {}
        }
    }
}
