//! The async handlers a `Router` holds (`tokio` feature), type-erased: params decoded before
//! the future starts, results serialized when it ends, panics turned into internal errors;
//! and the glue for raw async handlers and the [`Fallback`].

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{decode_params, panicked};
use crate::dispatch::context::RequestContext;
use crate::dispatch::fallback::{Fallback, FallbackAnswer, FallbackCall};
use crate::dispatch::raw_call::RawCall;
use crate::message::{ErrorObject, Id, JsonBytes, Params, RawJson};

/// The outcome of an async handler: a result, an error, or a whole response object (the
/// same as a fallback's answer, so that a fallback's future is the handler's future).
pub(crate) type Outcome = FallbackAnswer;

/// What an async handler is started with: the message's method and params, whether it is a
/// notification, and the frame they were parsed from when it is at hand as `Bytes` (so that
/// a raw handler's params are a slice of it).
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

impl AsyncInput<'_> {
    /// The serving side's context, or one of its own (nothing cancels it).
    fn take_context(&mut self) -> RequestContext {
        self.context
            .take()
            .unwrap_or_else(|| RequestContext::new(self.id.map(|id| id.clone().into_owned()), self.method))
    }
}

/// A boxed, sendable future of an async handler's outcome.
pub(crate) type BoxOutcome = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// An async handler: decodes its params synchronously (they borrow from the input), then
/// returns the future that computes the result.
pub(crate) type AsyncFn =
    dyn for<'p> Fn(AsyncInput<'p>) -> Result<BoxOutcome, ErrorObject<'static>> + Send + Sync;

/// An async handler and whether it takes a [`RequestContext`] (one is made for it then).
pub(crate) struct AsyncHandler {
    pub(crate) f: Box<AsyncFn>,
    pub(crate) wants_context: bool,
}

/// Wraps a typed async request handler: params are decoded before the future starts, the
/// result is serialized when it completes.
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
fn serialized<R: Serialize>(result: Result<R, ErrorObject<'static>>) -> Outcome {
    match result.map(|result| RawJson::from_value(&result)) {
        Ok(Ok(raw)) => FallbackAnswer::Result(JsonBytes::from(raw)),
        Ok(Err(error)) => FallbackAnswer::Error(ErrorObject::internal_error(format_args!(
            "result did not serialize: {error}"
        ))),
        Err(error) => FallbackAnswer::Error(error),
    }
}

/// Wraps an async request handler that reads the params as they came (borrowed) with the
/// request's context, and decides itself how to decode them: MCP sessions, which also serve
/// the stateless revision's requests, look before they decode.
pub(crate) fn params_async_with_context<R, F, Fut>(f: F) -> AsyncHandler
where
    R: Serialize,
    F: for<'p> Fn(Option<Params<'p>>, RequestContext) -> Result<Fut, ErrorObject<'static>> + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject<'static>>> + Send + 'static,
{
    let f = move |mut input: AsyncInput<'_>| -> Result<BoxOutcome, ErrorObject<'static>> {
        let context = input.take_context();
        let future = f(input.params, context)?;
        Ok(Box::pin(async move { serialized(future.await) }))
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: true,
    }
}

/// Wraps a typed async request handler that takes the request's context.
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
                Err(error) => FallbackAnswer::Error(ErrorObject::internal_error(format_args!(
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
        Ok(Box::pin(async move {
            match future.await {
                Ok(result) => FallbackAnswer::Result(result),
                Err(error) => FallbackAnswer::Error(error),
            }
        }))
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: false,
    }
}

/// Wraps a [`Fallback`]: it gets the whole [`FallbackCall`], the frame included.
pub(crate) fn fallback<F: Fallback>(fallback: F) -> AsyncHandler {
    let f = move |input: AsyncInput<'_>| -> Result<BoxOutcome, ErrorObject<'static>> {
        let future = fallback.call(FallbackCall {
            method: input.method,
            id: input.id,
            params: input.params,
            frame: input.frame,
            alone: input.alone,
            whole: false,
            context: input.context,
        });
        // The fallback's future is the handler's: no wrapper.
        Ok(future)
    };
    AsyncHandler {
        f: Box::new(f),
        wants_context: false,
    }
}

/// Runs the synchronous part of an async handler (params decoding), containing panics.
pub(crate) fn start_async(f: &AsyncFn, input: AsyncInput<'_>) -> Result<BoxOutcome, ErrorObject<'static>> {
    catch_unwind(AssertUnwindSafe(|| f(input))).unwrap_or_else(|payload| Err(panicked(&*payload)))
}
