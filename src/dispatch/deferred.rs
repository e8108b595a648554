//! `Deferred` (`tokio` feature): a message bound to an async handler, started by the router
//! and awaited by whoever can (`Router::handle_async`, the peer's handler tasks).

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};

use super::handler::{self, AsyncFn, AsyncInput, BoxOutcome, Outcome};
use super::target::Target;
use crate::encode;
use crate::message::{ErrorObject, Id, Notification, Request};

/// A future that turns a panic inside `inner` into -32603, the way the sync path does.
struct CatchUnwind {
    inner: BoxOutcome,
}

impl Future for CatchUnwind {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let inner = &mut self.inner;
        catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx)))
            .unwrap_or_else(|payload| Poll::Ready(Err(handler::panicked(&*payload))))
    }
}

/// A message bound to an async handler: its id (`None` for a notification) and either the
/// future computing its result or the error that stopped it before it started.
pub(crate) struct Deferred<'m> {
    id: Option<&'m Id<'m>>,
    started: Result<BoxOutcome, ErrorObject<'static>>,
}

impl<'m> Deferred<'m> {
    /// Starts `request` on `f`; `frame` is the frame it was parsed from, when at hand.
    pub(crate) fn start(f: &AsyncFn, request: &'m Request<'_>, frame: Option<&Bytes>) -> Deferred<'m> {
        let input = AsyncInput {
            method: request.method(),
            params: request.params(),
            notification: false,
            frame,
        };
        Deferred {
            id: Some(shorten(request.id())),
            started: handler::start_async(f, input),
        }
    }

    /// Starts `notification` on `f`; `frame` is the frame it was parsed from, when at hand.
    pub(crate) fn start_notification(
        f: &AsyncFn,
        notification: &'m Notification<'_>,
        frame: Option<&Bytes>,
    ) -> Deferred<'m> {
        let input = AsyncInput {
            method: notification.method(),
            params: notification.params(),
            notification: true,
            frame,
        };
        Deferred {
            id: None,
            started: handler::start_async(f, input),
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
        let outcome = match self.started {
            Ok(future) => CatchUnwind { inner: future }.await,
            Err(error) => Err(error),
        };
        Finished { id: self.id, outcome }
    }
}

/// An async handler's outcome, waiting to be written.
pub(crate) struct Finished<'m> {
    id: Option<&'m Id<'m>>,
    outcome: Outcome,
}

impl Finished<'_> {
    /// Writes the answer (requests only; a notification's outcome is dropped).
    pub(crate) fn write(self, target: &mut Target<'_>) {
        if let Some(id) = self.id {
            let dst = target.answer();
            match self.outcome {
                Ok(result) => encode::write_success_bytes(dst, id, &result),
                Err(error) => encode::write_error(dst, id, &error),
            }
        }
    }
}

/// Runs `futures` at the same time; their outputs in the order of `futures`.
pub(crate) async fn join_in_order<T>(
    mut futures: Vec<Pin<Box<dyn Future<Output = T> + Send + '_>>>,
) -> Vec<T> {
    let mut outputs: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// `Id<'a>` is covariant: a borrowed id can be viewed with the shorter lifetime.
fn shorten<'m>(id: &'m Id<'_>) -> &'m Id<'m> {
    id
}
