//! `Deferred` (`tokio` feature): a message bound to an async handler, started by the router
//! and awaited by whoever can (`Router::handle_async`, the peer's handler tasks).

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};

use super::context::{OnCancel, Supervision, Watch};
use crate::codes::REQUEST_CANCELLED;
use super::fallback::FallbackAnswer;
use super::handler::{self, AsyncHandler, AsyncInput, BoxOutcome, Outcome};
use super::target::Target;
use crate::encode;
use crate::message::{ErrorObject, Id, Notification, Request};
use crate::trace::{event, RequestSpan};

/// A future that turns a panic inside `inner` into -32603, the way the sync path does.
struct CatchUnwind {
    inner: BoxOutcome,
}

impl Future for CatchUnwind {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let inner = &mut self.inner;
        catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx)))
            .unwrap_or_else(|payload| Poll::Ready(FallbackAnswer::Error(handler::panicked(&*payload))))
    }
}

/// A message bound to an async handler: its id (`None` for a notification), either the
/// future computing its result or the error that stopped it before it started, and the
/// serving side's supervision of it, if any.
pub(crate) struct Deferred<'m> {
    id: Option<&'m Id<'m>>,
    started: Result<BoxOutcome, ErrorObject<'static>>,
    watch: Option<Watch>,
    span: RequestSpan,
}

impl<'m> Deferred<'m> {
    /// Starts `request` on `handler`; `frame` is the frame it was parsed from, when at hand.
    pub(crate) fn start(
        handler: &AsyncHandler,
        request: &'m Request<'_>,
        frame: Option<&Bytes>,
        alone: bool,
        serving: &Supervision,
    ) -> Deferred<'m> {
        Deferred::begin(
            handler,
            Some(shorten(request.id())),
            request.method(),
            request.params(),
            (frame, alone),
            serving,
        )
    }

    /// Starts `notification` on `handler`; `frame` is the frame it was parsed from, when at hand.
    pub(crate) fn start_notification(
        handler: &AsyncHandler,
        notification: &'m Notification<'_>,
        frame: Option<&Bytes>,
        alone: bool,
        serving: &Supervision,
    ) -> Deferred<'m> {
        Deferred::begin(
            handler,
            None,
            notification.method(),
            notification.params(),
            (frame, alone),
            serving,
        )
    }

    fn begin(
        handler: &AsyncHandler,
        id: Option<&'m Id<'m>>,
        method: &str,
        params: Option<crate::message::Params<'_>>,
        (frame, alone): (Option<&Bytes>, bool),
        serving: &Supervision,
    ) -> Deferred<'m> {
        let watch = serving.watch(id, method, handler.wants_context);
        let input = AsyncInput {
            method,
            id,
            params,
            frame,
            alone,
            context: watch.as_ref().map(|watch| watch.context.clone()),
        };
        let span = RequestSpan::start(method, id);
        let started = span.in_scope(|| handler::start_async(&handler.f, input));
        Deferred {
            id,
            started,
            watch,
            span,
        }
    }

    /// The sync path cannot await: a request gets -32603; a notification runs on the
    /// current tokio runtime when there is one (nobody waits for it), else it is dropped.
    pub(crate) fn refuse(self, dst: &mut BytesMut) {
        match self.id {
            Some(id) => {
                let error = ErrorObject::internal_error("an async method needs Router::handle_async");
                encode::write_error(dst, id, &error);
            }
            None => {
                if let (Ok(future), Ok(runtime)) = (self.started, tokio::runtime::Handle::try_current()) {
                    runtime.spawn(CatchUnwind { inner: future });
                }
            }
        }
    }

    /// Awaits the handler and writes its answer (requests only).
    pub(crate) async fn finish(self, target: &mut Target<'_>) {
        self.run().await.write(target);
    }

    /// Awaits the handler; the answer is written later with [`Finished::write`].
    pub(crate) async fn run(self) -> Finished<'m> {
        let span = self.span;
        let outcome = match self.started {
            Ok(future) => {
                let future = CatchUnwind { inner: future };
                match self.watch {
                    None => Some(span.instrument(future).await),
                    Some(watch) => span.instrument(supervised(future, watch)).await,
                }
            }
            Err(error) => Some(FallbackAnswer::Error(error)),
        };
        let code = match &outcome {
            Some(
                FallbackAnswer::Error(error)
                | FallbackAnswer::ErrorText { error, .. }
                | FallbackAnswer::Limited { error, .. },
            ) => Some(error.code().code()),
            _ => None,
        };
        span.finish(code, outcome.is_none());
        Finished { id: self.id, outcome }
    }
}

/// Runs a handler until it is done, cancelled by the other side, past its timeout, or
/// aborted; the outcome to answer with (`None`: no answer, a silent cancellation).
async fn supervised(future: CatchUnwind, watch: Watch) -> Option<Outcome> {
    let token = watch.context.cancellation().clone();
    let abort = watch.abort.clone().unwrap_or_default();
    let timeout = async {
        match watch.timeout {
            Some(after) => tokio::time::sleep(after).await,
            None => std::future::pending().await,
        }
    };
    // A cancellation wins over an outcome ready at the same time (the handler may have
    // seen its token fire and returned early): the request is answered as cancelled.
    tokio::select! {
        biased;
        () = abort.cancelled() => {
            event!(warn, "handler aborted: the connection is closing");
            Some(FallbackAnswer::Error(ErrorObject::internal_error("request aborted: the connection is closing")))
        }
        () = token.cancelled() => {
            event!(debug, "request cancelled");
            match watch.on_cancel {
            OnCancel::Answer => Some(FallbackAnswer::Error(ErrorObject::new(REQUEST_CANCELLED, "request cancelled"))),
            OnCancel::Silent => None,
            }
        },
        outcome = future => Some(outcome),
        () = timeout => {
            // A blocking handler sees it through its context.
            token.cancel();
            if let Some(timeouts) = &watch.timeouts {
                crate::sync::bump(timeouts);
            }
            let after = watch.timeout.unwrap_or_default();
            event!(warn, after_ms = after.as_millis() as u64, "handler timed out");
            let error = ErrorObject::internal_error(format_args!(
                "handler timed out after {after:?}"
            ));
            Some(FallbackAnswer::Error(error))
        }
    }
}

/// An async handler's outcome, waiting to be written.
pub(crate) struct Finished<'m> {
    id: Option<&'m Id<'m>>,
    /// `None`: cancelled the silent way, no answer.
    outcome: Option<Outcome>,
}

impl<'m> Finished<'m> {
    /// `outcome` answering the request of `id` (`None`: a notification, nothing written).
    pub(crate) fn new(id: Option<&'m Id<'m>>, outcome: Outcome) -> Finished<'m> {
        Finished {
            id,
            outcome: Some(outcome),
        }
    }

    /// How long the client should wait before asking again, when the handler answered a
    /// request with [`FallbackAnswer::Limited`].
    pub(crate) fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Finished {
                id: Some(_),
                outcome: Some(FallbackAnswer::Limited { retry_after, .. }),
            } => Some(*retry_after),
            _ => None,
        }
    }

    /// The whole response object the handler answered a request with, as it came (a
    /// fallback's upstream answer); otherwise `self` back, to be written.
    pub(crate) fn into_whole(self) -> Result<Bytes, Self> {
        match self {
            Finished {
                id: Some(_),
                outcome: Some(FallbackAnswer::Response(whole)),
            } => Ok(whole),
            other => Err(other),
        }
    }

    /// Writes the answer (requests only; a notification's outcome is dropped).
    pub(crate) fn write(self, target: &mut Target<'_>) {
        if let (Some(id), Some(outcome)) = (self.id, self.outcome) {
            let dst = target.answer();
            match outcome {
                FallbackAnswer::Result(result) => encode::write_success_bytes(dst, id, &result),
                FallbackAnswer::Response(whole) => dst.extend_from_slice(&whole),
                FallbackAnswer::Error(error) | FallbackAnswer::Limited { error, .. } => {
                    encode::write_error(dst, id, &error)
                }
                FallbackAnswer::ErrorText { text, .. } => encode::write_error_bytes(dst, id, &text),
            }
        }
    }
}

/// `Id<'a>` is covariant: a borrowed id can be viewed with the shorter lifetime.
fn shorten<'m>(id: &'m Id<'_>) -> &'m Id<'m> {
    id
}
