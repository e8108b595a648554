//! JSON-RPC middleware: a service over the calls of a frame parsed once, and layers that wrap
//! one from outside, as tower's do.
//!
//! An [`RpcService`] takes an [`RpcCall`] — a method, its params as the JSON text they came
//! in, and, when there is one, its [`CallContext`] (the request's whole frame, the caller's
//! id, and what the transport knows of the caller: an HTTP request's extensions, an API key
//! found, the claims of a token) — and ends with its `Answer` or its `Error`; a notification
//! ends with nothing; a [`batch`](RpcService::batch) of them ends with one outcome per entry.
//! Nothing in between encodes or parses the call again: a layer reads the method and the
//! params where they lie. [`readiness`] says, before a
//! call, whether the service would take it now ([`Readiness::Busy`]: it would wait;
//! [`Readiness::Down`]: it would fail), which a balancer reads to choose between services.
//!
//! Layers are [`tower_layer::Layer`]s, so they stack with `tower_layer::Stack` or one inside
//! the other, and one written for rpcwire's services wraps any other's:
//!
//! - [`TimeoutLayer`]: every call ends within a time, with the service's error made from
//!   [`TimedOut`] past it (waiting inside the layers it wraps included).
//! - [`ConcurrencyLimitLayer`]: at most so many calls under way; more wait for one to end
//!   (and the service says [`Readiness::Busy`] meanwhile).
//!
//! The proxy crate adds its own (a breaker, retries on another upstream within a budget) and
//! runs its upstreams as such services.
//!
//! [`readiness`]: RpcService::readiness
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::time::Duration;
//! use rpcwire_core::middleware::{ConcurrencyLimitLayer, RpcCall, RpcService, TimedOut, TimeoutLayer};
//! use tower_layer::Layer;
//!
//! /// Answers every call with its method's name; `slow` after 5 s.
//! struct Slow;
//!
//! #[derive(Debug, PartialEq)]
//! enum Failed {
//!     TimedOut,
//! }
//! impl From<TimedOut> for Failed {
//!     fn from(_: TimedOut) -> Failed {
//!         Failed::TimedOut
//!     }
//! }
//!
//! impl RpcService for Slow {
//!     type Answer = String;
//!     type Error = Failed;
//!     async fn call(&self, call: RpcCall<'_>) -> Result<String, Failed> {
//!         if call.method() == "slow" {
//!             tokio::time::sleep(Duration::from_secs(5)).await;
//!         }
//!         Ok(call.method().to_owned())
//!     }
//!     async fn notify(&self, _: RpcCall<'_>) -> Result<(), Failed> {
//!         Ok(())
//!     }
//! }
//!
//! let service = TimeoutLayer::new(Duration::from_millis(50)).layer(ConcurrencyLimitLayer::new(4).layer(Slow));
//! assert_eq!(service.call(RpcCall::new("quick", None)).await, Ok("quick".to_owned()));
//! assert_eq!(service.call(RpcCall::new("slow", None)).await, Err(Failed::TimedOut));
//! # });
//! ```

use std::future::Future;

use bytes::Bytes;

use crate::message::{Id, RawJson};

mod link_error;
mod remote_answer;
pub use link_error::{LinkError, LinkErrorKind};
pub use remote_answer::RemoteAnswer;

cfg_tokio! {
    mod limit;
    mod timeout;
    pub use limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
    pub use timeout::{TimedOut, Timeout, TimeoutLayer};
}

/// One call (or notification) as a middleware sees it: its method, its params as the JSON
/// text they came in, and, when the caller gives one, its [`CallContext`] (the request's
/// whole frame, the caller's id, what the transport knows of the caller). Four words, so
/// that the layers' nested futures move it cheaply.
///
/// ```
/// let params = rpcwire_core::RawJson::new("[1,2]").unwrap();
/// let call = rpcwire_core::middleware::RpcCall::new("add", Some(&params));
/// assert_eq!(call.method(), "add");
/// assert_eq!(call.params().unwrap().get(), "[1,2]");
/// assert!(call.frame().is_none());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RpcCall<'a> {
    method: &'a str,
    params: Option<&'a RawJson<'a>>,
    context: Option<&'a CallContext<'a>>,
}

/// What comes with a call beside its method and params, each part when there is one: the
/// request's whole frame (a service that sends frames as they are forwards it without writing
/// another), the id its caller gave it (a layer that answers it here, or finds its answer
/// among others, reads it; a service that sends calls of its own gives them its own ids), and
/// what the transport knows of the caller (its [`Extensions`](http::Extensions): an HTTP
/// request's, an API key found, the claims of a token).
///
/// ```
/// #[derive(Clone, Debug, PartialEq)]
/// struct Caller(&'static str);
/// let mut extensions = http::Extensions::new();
/// extensions.insert(Caller("alice"));
/// let id = rpcwire_core::Id::from(7);
/// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
/// let context = rpcwire_core::middleware::CallContext::new()
///     .with_frame(&frame)
///     .with_id(&id)
///     .with_extensions(&extensions);
/// let call = rpcwire_core::middleware::RpcCall::new("ping", None).with_context(&context);
/// assert_eq!(call.frame(), Some(&frame));
/// assert_eq!(call.id(), Some(&id));
/// assert_eq!(call.extension::<Caller>(), Some(&Caller("alice")));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CallContext<'a> {
    frame: Option<&'a Bytes>,
    id: Option<&'a Id<'a>>,
    extensions: Option<&'a http::Extensions>,
    /// One more extension, borrowed (no `Extensions` map built for it).
    extension: Option<&'a (dyn std::any::Any + Send + Sync)>,
}

impl<'a> CallContext<'a> {
    /// Nothing yet.
    ///
    /// ```
    /// let call_context = rpcwire_core::middleware::CallContext::new();
    /// # let _ = call_context;
    /// ```
    pub fn new() -> CallContext<'a> {
        CallContext::default()
    }

    /// With `frame`: the request whole, as it goes on.
    ///
    /// ```
    /// let frame = bytes::Bytes::from_static(b"{}");
    /// let _ = rpcwire_core::middleware::CallContext::new().with_frame(&frame);
    /// ```
    pub fn with_frame(self, frame: &'a Bytes) -> CallContext<'a> {
        CallContext {
            frame: Some(frame),
            ..self
        }
    }

    /// With the id the caller gave the call.
    ///
    /// ```
    /// let id = rpcwire_core::Id::from(1);
    /// let _ = rpcwire_core::middleware::CallContext::new().with_id(&id);
    /// ```
    pub fn with_id(self, id: &'a Id<'a>) -> CallContext<'a> {
        CallContext { id: Some(id), ..self }
    }

    /// With what the transport knows of the caller: an HTTP request's extensions, or any
    /// other (a layer reads them; the call is never written with them).
    ///
    /// ```
    /// let extensions = http::Extensions::new();
    /// let _ = rpcwire_core::middleware::CallContext::new().with_extensions(&extensions);
    /// ```
    pub fn with_extensions(self, extensions: &'a http::Extensions) -> CallContext<'a> {
        CallContext {
            extensions: Some(extensions),
            ..self
        }
    }

    /// With one more extension of the caller, borrowed: [`RpcCall::extension`] finds it
    /// before looking in the extensions (if any). A layer that knows one value of the caller
    /// (the API key it found) gives it so, without building an `http::Extensions` per request.
    ///
    /// ```
    /// #[derive(Debug, PartialEq)]
    /// struct Key(&'static str);
    /// let key = Key("k3y");
    /// let context = rpcwire_core::middleware::CallContext::new().with_extension(&key);
    /// let call = rpcwire_core::middleware::RpcCall::new("ping", None).with_context(&context);
    /// assert_eq!(call.extension::<Key>(), Some(&Key("k3y")));
    /// assert!(call.extension::<u8>().is_none());
    /// ```
    pub fn with_extension<T: Send + Sync + 'static>(self, extension: &'a T) -> CallContext<'a> {
        CallContext {
            extension: Some(extension),
            ..self
        }
    }
}

impl<'a> RpcCall<'a> {
    /// A call of `method` with `params`, without a context.
    ///
    /// ```
    /// let call = rpcwire_core::middleware::RpcCall::new("ping", None);
    /// assert!(call.params().is_none());
    /// ```
    pub fn new(method: &'a str, params: Option<&'a RawJson<'a>>) -> RpcCall<'a> {
        RpcCall {
            method,
            params,
            context: None,
        }
    }

    /// The same call, with `context` (see [`CallContext`]).
    ///
    /// ```
    /// let context = rpcwire_core::middleware::CallContext::new();
    /// let call = rpcwire_core::middleware::RpcCall::new("ping", None).with_context(&context);
    /// assert!(call.context().is_some());
    /// ```
    pub fn with_context(self, context: &'a CallContext<'a>) -> RpcCall<'a> {
        RpcCall {
            context: Some(context),
            ..self
        }
    }

    /// Its context, when it was given one.
    ///
    /// ```
    /// assert!(rpcwire_core::middleware::RpcCall::new("ping", None).context().is_none());
    /// ```
    pub fn context(&self) -> Option<&'a CallContext<'a>> {
        self.context
    }

    /// The method.
    ///
    /// ```
    /// assert_eq!(rpcwire_core::middleware::RpcCall::new("ping", None).method(), "ping");
    /// ```
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The params' JSON text, as it came.
    ///
    /// ```
    /// assert!(rpcwire_core::middleware::RpcCall::new("ping", None).params().is_none());
    /// ```
    pub fn params(&self) -> Option<&'a RawJson<'a>> {
        self.params
    }

    /// The request's whole frame, when the caller gave it.
    ///
    /// ```
    /// assert!(rpcwire_core::middleware::RpcCall::new("ping", None).frame().is_none());
    /// ```
    pub fn frame(&self) -> Option<&'a Bytes> {
        self.context?.frame
    }

    /// The caller's id, when it was given.
    ///
    /// ```
    /// assert!(rpcwire_core::middleware::RpcCall::new("ping", None).id().is_none());
    /// ```
    pub fn id(&self) -> Option<&'a Id<'a>> {
        self.context?.id
    }

    /// The caller's extensions, when the transport gave them.
    ///
    /// ```
    /// assert!(rpcwire_core::middleware::RpcCall::new("ping", None).extensions().is_none());
    /// ```
    pub fn extensions(&self) -> Option<&'a http::Extensions> {
        self.context?.extensions
    }

    /// The caller's extension of type `T`, when there is one: the one given with
    /// [`CallContext::with_extension`], else from its extensions.
    ///
    /// ```
    /// assert!(rpcwire_core::middleware::RpcCall::new("ping", None).extension::<u8>().is_none());
    /// ```
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&'a T> {
        let context = self.context?;
        match context
            .extension
            .and_then(|extension| extension.downcast_ref::<T>())
        {
            Some(found) => Some(found),
            None => context.extensions?.get::<T>(),
        }
    }
}

/// One entry of a batch: a call, answered, or a notification, not.
///
/// ```
/// use rpcwire_core::middleware::{BatchEntry, RpcCall};
/// let entry = BatchEntry::Notify(RpcCall::new("log", None));
/// assert_eq!(entry.call().method(), "log");
/// assert!(!entry.is_call());
/// ```
#[derive(Clone, Copy, Debug)]
pub enum BatchEntry<'a> {
    /// A request: its answer (or error) takes the entry's place in the outcomes.
    Call(RpcCall<'a>),
    /// A notification: its place in the outcomes is `None` once sent.
    Notify(RpcCall<'a>),
}

impl<'a> BatchEntry<'a> {
    /// The call, request or notification.
    ///
    /// ```
    /// use rpcwire_core::middleware::{BatchEntry, RpcCall};
    /// assert_eq!(BatchEntry::Call(RpcCall::new("ping", None)).call().method(), "ping");
    /// ```
    pub fn call(&self) -> RpcCall<'a> {
        match self {
            BatchEntry::Call(call) | BatchEntry::Notify(call) => *call,
        }
    }

    /// Whether it is a request (answered).
    ///
    /// ```
    /// use rpcwire_core::middleware::{BatchEntry, RpcCall};
    /// assert!(BatchEntry::Call(RpcCall::new("ping", None)).is_call());
    /// ```
    pub fn is_call(&self) -> bool {
        matches!(self, BatchEntry::Call(_))
    }
}

/// The outcome of one entry of a batch: a call's answer or error; for a notification `None`
/// once sent, its error otherwise.
pub type BatchOutcome<A, E> = Option<Result<A, E>>;

/// Whether a service would take a call now.
///
/// ```
/// use rpcwire_core::middleware::Readiness;
/// assert!(Readiness::Ready.is_ready());
/// assert!(!Readiness::Busy.is_ready());
/// assert!(Readiness::Busy.may_call());
/// assert!(!Readiness::Down.may_call());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// It takes a call now.
    Ready,
    /// A call would wait (for a slot) before it is sent.
    Busy,
    /// A call would fail at once (a breaker open, no connection).
    Down,
}

impl Readiness {
    /// Whether a call is taken without waiting.
    ///
    /// ```
    /// assert!(rpcwire_core::middleware::Readiness::Ready.is_ready());
    /// ```
    pub fn is_ready(self) -> bool {
        self == Readiness::Ready
    }

    /// Whether a call may be made at all (now or after a wait).
    ///
    /// ```
    /// assert!(!rpcwire_core::middleware::Readiness::Down.may_call());
    /// ```
    pub fn may_call(self) -> bool {
        self != Readiness::Down
    }
}

/// A JSON-RPC service over calls parsed once: what the middleware of this module wraps and
/// is. See the [module](self) for an example.
pub trait RpcService: Send + Sync {
    /// What a call ends with when it is answered.
    type Answer: Send;
    /// Why a call or a notification brought no answer.
    type Error: Send;

    /// Makes `call` and gives its answer.
    fn call<'a>(
        &'a self,
        call: RpcCall<'a>,
    ) -> impl Future<Output = Result<Self::Answer, Self::Error>> + Send + 'a;

    /// Sends `call` as a notification (no answer comes).
    fn notify<'a>(&'a self, call: RpcCall<'a>) -> impl Future<Output = Result<(), Self::Error>> + Send + 'a;

    /// Makes the calls and sends the notifications of a batch, and gives one outcome per
    /// entry, in the entries' order. By default each entry in turn through
    /// [`call`](RpcService::call) or [`notify`](RpcService::notify); a service that sends a
    /// batch whole (one upstream round trip), or a layer that decides on a batch at once (one
    /// rate-limit check), says so here.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::middleware::{BatchEntry, RpcCall, RpcService};
    /// struct Echo;
    /// impl RpcService for Echo {
    ///     type Answer = String;
    ///     type Error = ();
    ///     async fn call(&self, call: RpcCall<'_>) -> Result<String, ()> {
    ///         Ok(call.method().to_owned())
    ///     }
    ///     async fn notify(&self, _: RpcCall<'_>) -> Result<(), ()> {
    ///         Ok(())
    ///     }
    /// }
    /// let entries = [BatchEntry::Call(RpcCall::new("a", None)), BatchEntry::Notify(RpcCall::new("b", None))];
    /// assert_eq!(Echo.batch(&entries).await, vec![Some(Ok("a".to_owned())), None]);
    /// # });
    /// ```
    fn batch<'a>(
        &'a self,
        entries: &'a [BatchEntry<'a>],
    ) -> impl Future<Output = Vec<BatchOutcome<Self::Answer, Self::Error>>> + Send + 'a {
        async move {
            let mut outcomes = Vec::with_capacity(entries.len());
            for entry in entries {
                outcomes.push(match entry {
                    BatchEntry::Call(call) => Some(self.call(*call).await),
                    BatchEntry::Notify(call) => self.notify(*call).await.err().map(Err),
                });
            }
            outcomes
        }
    }

    /// Whether a call would be taken now. A balancer asks before it calls; asking may admit
    /// the caller (a breaker's probe after its cool-down), so ask only to call. Ready unless
    /// a layer says otherwise.
    fn readiness(&self) -> Readiness {
        Readiness::Ready
    }
}

/// A service borrowed is a service: a layer can wrap one for a single call, without owning
/// it (`TimeoutLayer::new(limit).layer(&service)`).
impl<S: RpcService + ?Sized> RpcService for &S {
    type Answer = S::Answer;
    type Error = S::Error;

    fn call<'a>(
        &'a self,
        call: RpcCall<'a>,
    ) -> impl Future<Output = Result<S::Answer, S::Error>> + Send + 'a {
        (**self).call(call)
    }

    fn notify<'a>(&'a self, call: RpcCall<'a>) -> impl Future<Output = Result<(), S::Error>> + Send + 'a {
        (**self).notify(call)
    }

    fn batch<'a>(
        &'a self,
        entries: &'a [BatchEntry<'a>],
    ) -> impl Future<Output = Vec<BatchOutcome<S::Answer, S::Error>>> + Send + 'a {
        (**self).batch(entries)
    }

    fn readiness(&self) -> Readiness {
        (**self).readiness()
    }
}
