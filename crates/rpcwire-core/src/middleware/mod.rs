//! JSON-RPC middleware: a service over the calls of a frame parsed once, and layers that wrap
//! one from outside, as tower's do.
//!
//! An [`RpcService`] takes an [`RpcCall`] — a method, its params as the JSON text they came
//! in, and, when there is one, the request's whole frame — and ends with its `Answer` or its
//! `Error`; a notification ends with nothing. Nothing in between encodes or parses the call
//! again: a layer reads the method and the params where they lie. [`readiness`] says, before a
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

use crate::message::RawJson;

mod remote_answer;
pub use remote_answer::RemoteAnswer;

cfg_tokio! {
    mod limit;
    mod timeout;
    pub use limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
    pub use timeout::{TimedOut, Timeout, TimeoutLayer};
}

/// One call (or notification) as a middleware sees it: its method, its params as the JSON
/// text they came in, and the request's whole frame when there is one (a service that sends
/// frames as they are forwards it without writing another).
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
    frame: Option<&'a Bytes>,
}

impl<'a> RpcCall<'a> {
    /// A call of `method` with `params`, without its frame.
    ///
    /// ```
    /// let call = rpcwire_core::middleware::RpcCall::new("ping", None);
    /// assert!(call.params().is_none());
    /// ```
    pub fn new(method: &'a str, params: Option<&'a RawJson<'a>>) -> RpcCall<'a> {
        RpcCall {
            method,
            params,
            frame: None,
        }
    }

    /// The same call, with `frame`: the request whole, as it goes on.
    ///
    /// ```
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    /// let call = rpcwire_core::middleware::RpcCall::new("ping", None).with_frame(&frame);
    /// assert_eq!(call.frame(), Some(&frame));
    /// ```
    pub fn with_frame(self, frame: &'a Bytes) -> RpcCall<'a> {
        RpcCall {
            frame: Some(frame),
            ..self
        }
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
        self.frame
    }
}

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

    fn readiness(&self) -> Readiness {
        (**self).readiness()
    }
}
