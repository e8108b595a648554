//! The handlers a `Router` holds, type-erased, and the glue that decodes params with serde,
//! serializes results, and turns panics into internal errors. A leaf: it knows nothing of the
//! router that holds the handlers.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::reply::{Reply, Written};
use crate::message::{ErrorObject, Params};
use crate::trace::event;

cfg_tokio! {
    #[path = "handler_async.rs"]
    mod asynchronous;
    pub(crate) use asynchronous::*;
}

/// A request handler: params in, result written into the reply.
pub(crate) type MethodFn =
    dyn for<'p, 'r> Fn(Option<Params<'p>>, Reply<'r>) -> Result<Written, ErrorObject<'static>> + Send + Sync;

/// A notification handler: params in, nothing out.
pub(crate) type NotifyFn = dyn for<'p> Fn(Option<Params<'p>>) + Send + Sync;

/// What a method name is bound to.
pub(crate) enum Handler {
    /// Answers requests; also runs (its result discarded) for notifications.
    Method(Box<MethodFn>),
    /// Runs for notifications only; a request for it is answered -32601.
    Notification(Box<NotifyFn>),
    /// An async request handler (`tokio` feature).
    #[cfg(feature = "tokio")]
    Async(AsyncHandler),
}

impl Handler {
    /// Whether answering through this handler needs an await.
    pub(crate) fn is_async(&self) -> bool {
        #[cfg(feature = "tokio")]
        if let Handler::Async(_) = self {
            return true;
        }
        false
    }
}

/// Decodes params into `P` with serde; absent params decode as `null`. Failure is -32602
/// with the decoder's reason in `data`.
pub(crate) fn decode_params<P: DeserializeOwned>(
    params: Option<Params<'_>>,
) -> Result<P, ErrorObject<'static>> {
    match params {
        Some(params) => params.decode::<P>(),
        None => serde_json::from_str("null"),
    }
    .map_err(ErrorObject::invalid_params)
}

/// Wraps a typed request handler.
pub(crate) fn typed<P, R, F>(f: F) -> Box<MethodFn>
where
    P: DeserializeOwned,
    R: Serialize,
    F: Fn(P) -> Result<R, ErrorObject<'static>> + Send + Sync + 'static,
{
    Box::new(move |params, reply| {
        let params = decode_params::<P>(params)?;
        reply.json(&f(params)?)
    })
}

/// Wraps a typed notification handler; params that do not decode are dropped silently (a
/// notification never gets an answer, not even an error).
pub(crate) fn typed_notification<P, F>(f: F) -> Box<NotifyFn>
where
    P: DeserializeOwned,
    F: Fn(P) + Send + Sync + 'static,
{
    Box::new(move |params| match decode_params::<P>(params) {
        Ok(params) => f(params),
        Err(_error) => event!(warn, error = %_error, "notification dropped: its params did not decode"),
    })
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&'static str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "a non-string panic payload"
    }
}

/// The internal error a panicking handler is answered with.
pub(crate) fn panicked(payload: &(dyn Any + Send)) -> ErrorObject<'static> {
    // Logged here, not only sent to the other side.
    event!(error, panic = panic_message(payload), "handler panicked");
    ErrorObject::internal_error(format_args!("handler panicked: {}", panic_message(payload)))
}

/// Runs a request handler; a panic becomes -32603.
#[inline]
pub(crate) fn call_method(
    f: &MethodFn,
    params: Option<Params<'_>>,
    reply: Reply<'_>,
) -> Result<Written, ErrorObject<'static>> {
    catch_unwind(AssertUnwindSafe(|| f(params, reply))).unwrap_or_else(|payload| Err(panicked(&*payload)))
}

/// Runs a notification handler; a panic is contained and ignored (there is nobody to tell).
pub(crate) fn call_notification(f: &NotifyFn, params: Option<Params<'_>>) {
    let _ = catch_unwind(AssertUnwindSafe(|| f(params)));
}
