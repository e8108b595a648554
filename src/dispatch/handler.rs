//! The handlers a `Router` holds, type-erased, and the glue that decodes params with serde,
//! serializes results, and turns panics into internal errors. A leaf: it knows nothing of the
//! router that holds the handlers.

use std::any::Any;
#[cfg(feature = "tokio")]
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
#[cfg(feature = "tokio")]
use std::pin::Pin;

use serde::de::DeserializeOwned;
use serde::Serialize;

#[cfg(feature = "tokio")]
use super::context::RequestContext;
#[cfg(feature = "tokio")]
use super::fallback::{Fallback, FallbackAnswer, FallbackCall};
#[cfg(feature = "tokio")]
use super::raw_call::RawCall;
use super::reply::{Reply, Written};
use crate::message::{ErrorObject, Params};
#[cfg(feature = "tokio")]
use crate::message::{Id, JsonBytes, RawJson};
use crate::trace::event;
#[cfg(feature = "tokio")]
use bytes::Bytes;

/// A request handler: params in, result written into the reply.
pub(crate) type MethodFn =
    dyn for<'p, 'r> Fn(Option<Params<'p>>, Reply<'r>) -> Result<Written, ErrorObject<'static>> + Send + Sync;

/// A notification handler: params in, nothing out.
pub(crate) type NotifyFn = dyn for<'p> Fn(Option<Params<'p>>) + Send + Sync;

/// What an async handler answered a request with.
#[cfg(feature = "tokio")]
pub(crate) enum Answered {
    /// The result's JSON text (the response is written around it).
    Result(JsonBytes),
    /// A whole response object with the request's id in it, written as it is.
    Whole(Bytes),
}

/// The outcome of an async handler.
#[cfg(feature = "tokio")]
pub(crate) type Outcome = Result<Answered, ErrorObject<'static>>;

/// What an async handler is started with: the message's method and params, whether it is a
/// notification, and the frame they were parsed from when it is at hand as `Bytes` (so that
/// a raw handler's params are a slice of it).
#[cfg(feature = "tokio")]
pub(crate) struct AsyncInput<'p> {
    pub(crate) method: &'p str,
    pub(crate) id: Option<&'p Id<'p>>,
    pub(crate) params: Option<Params<'p>>,
    pub(crate) frame: Option<&'p Bytes>,
    /// Whether the message came alone in `frame` (not inside a batch).
    pub(crate) alone: bool,
    /// The context the serving side made, when it supervises the handler.
    pub(crate) context: Option<RequestContext>,
}

#[cfg(feature = "tokio")]
impl AsyncInput<'_> {
    /// The serving side's context, or one of its own (nothing cancels it).
    fn take_context(&mut self) -> RequestContext {
        self.context
            .take()
            .unwrap_or_else(|| RequestContext::new(self.id.map(|id| id.clone().into_owned()), self.method))
    }
}

/// A boxed, sendable future of an async handler's outcome.
#[cfg(feature = "tokio")]
pub(crate) type BoxOutcome = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// An async handler: decodes its params synchronously (they borrow from the input), then
/// returns the future that computes the result.
#[cfg(feature = "tokio")]
pub(crate) type AsyncFn =
    dyn for<'p> Fn(AsyncInput<'p>) -> Result<BoxOutcome, ErrorObject<'static>> + Send + Sync;

/// An async handler and whether it takes a [`RequestContext`] (one is made for it then).
#[cfg(feature = "tokio")]
pub(crate) struct AsyncHandler {
    pub(crate) f: Box<AsyncFn>,
    pub(crate) wants_context: bool,
}

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

/// Wraps a typed async request handler: params are decoded before the future starts, the
/// result is serialized when it completes.
#[cfg(feature = "tokio")]
pub(crate) fn typed_async<P, R, F, Fut>(f: F) -> AsyncHandler
where
    P: DeserializeOwned,
    R: Serialize,
    F: Fn(P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject<'static>>> + Send + 'static,
{
    let f = move |input: AsyncInput<'_>| -> Result<BoxOutcome, ErrorObject<'static>> {
        let future = f(decode_params::<P>(input.params)?);
        Ok(Box::pin(async move { serialized(future.await) }))
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: false,
    }
}

/// Serializes an async handler's result.
#[cfg(feature = "tokio")]
fn serialized<R: Serialize>(result: Result<R, ErrorObject<'static>>) -> Outcome {
    RawJson::from_value(&result?)
        .map(|raw| Answered::Result(JsonBytes::from(raw)))
        .map_err(|error| ErrorObject::internal_error(format_args!("result did not serialize: {error}")))
}

/// Wraps a typed async request handler that takes the request's context.
#[cfg(feature = "tokio")]
pub(crate) fn typed_async_with_context<P, R, F, Fut>(f: F) -> AsyncHandler
where
    P: DeserializeOwned,
    R: Serialize,
    F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject<'static>>> + Send + 'static,
{
    let f = move |mut input: AsyncInput<'_>| -> Result<BoxOutcome, ErrorObject<'static>> {
        let context = input.take_context();
        let future = f(decode_params::<P>(input.params)?, context);
        Ok(Box::pin(async move { serialized(future.await) }))
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: true,
    }
}

/// Wraps a synchronous handler that may block: it runs on tokio's blocking threads, off
/// the task that reads the connection, with the request's context.
#[cfg(feature = "tokio")]
pub(crate) fn blocking<P, R, F>(f: F) -> AsyncHandler
where
    P: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(P, RequestContext) -> Result<R, ErrorObject<'static>> + Send + Sync + 'static,
{
    let f = std::sync::Arc::new(f);
    let f = move |mut input: AsyncInput<'_>| -> Result<BoxOutcome, ErrorObject<'static>> {
        let context = input.take_context();
        let params = decode_params::<P>(input.params)?;
        let f = f.clone();
        let task = tokio::task::spawn_blocking(move || {
            catch_unwind(AssertUnwindSafe(|| f(params, context)))
                .unwrap_or_else(|payload| Err(panicked(&*payload)))
        });
        Ok(Box::pin(async move {
            match task.await {
                Ok(result) => serialized(result),
                Err(error) => Err(ErrorObject::internal_error(format_args!(
                    "blocking handler failed: {error}"
                ))),
            }
        }))
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: true,
    }
}

/// Wraps a raw async handler: it gets the method and the params as [`JsonBytes`] (a slice
/// of the frame when the frame is at hand, a copy otherwise; never validated again) and
/// answers with the result's JSON.
#[cfg(feature = "tokio")]
pub(crate) fn raw_async<F, Fut>(f: F) -> AsyncHandler
where
    F: Fn(RawCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<JsonBytes, ErrorObject<'static>>> + Send + 'static,
{
    let f = move |input: AsyncInput<'_>| -> Result<BoxOutcome, ErrorObject<'static>> {
        let params = input.params.map(|params| match input.frame {
            Some(frame) => JsonBytes::slice_of(frame, &params.raw()),
            None => JsonBytes::from(params.raw()),
        });
        let call = RawCall::new(input.method, params, input.id.is_none());
        let future = f(call);
        Ok(Box::pin(async move { future.await.map(Answered::Result) }))
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: false,
    }
}

/// Wraps a [`Fallback`]: it gets the whole [`FallbackCall`], the frame included.
#[cfg(feature = "tokio")]
pub(crate) fn fallback<F: Fallback>(fallback: F) -> AsyncHandler {
    let f = move |input: AsyncInput<'_>| -> Result<BoxOutcome, ErrorObject<'static>> {
        let future = fallback.call(FallbackCall {
            method: input.method,
            id: input.id,
            params: input.params,
            frame: input.frame,
            alone: input.alone,
            context: input.context,
        });
        Ok(Box::pin(async move {
            match future.await {
                FallbackAnswer::Result(result) => Ok(Answered::Result(result)),
                FallbackAnswer::Error(error) => Err(error),
                FallbackAnswer::Response(whole) => Ok(Answered::Whole(whole)),
            }
        }))
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: false,
    }
}

/// Runs the synchronous part of an async handler (params decoding), containing panics.
#[cfg(feature = "tokio")]
pub(crate) fn start_async(f: &AsyncFn, input: AsyncInput<'_>) -> Result<BoxOutcome, ErrorObject<'static>> {
    catch_unwind(AssertUnwindSafe(|| f(input))).unwrap_or_else(|payload| Err(panicked(&*payload)))
}

/// Runs a notification handler; a panic is contained and ignored (there is nobody to tell).
pub(crate) fn call_notification(f: &NotifyFn, params: Option<Params<'_>>) {
    let _ = catch_unwind(AssertUnwindSafe(|| f(params)));
}
