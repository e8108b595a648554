//! `FallbackBatch`: the requests and notifications of one batch that go to the router's
//! [`Fallback`], started together through [`Fallback::batch`] and answered under the serving
//! side's supervision as one — what lets a gateway send a client's batch upstream whole.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;

use super::context::Supervision;
use super::deferred::Finished;
use super::fallback::{Fallback, FallbackAnswer, FallbackBatchAnswer, FallbackBatchFuture, FallbackCall};
use super::handler;
use crate::message::{ErrorObject, Id, Message};
use crate::trace::{event, RequestSpan};

/// The elements of a batch bound to the fallback, started together.
pub(crate) struct FallbackBatch<'m> {
    /// Each call's id (`None`: a notification), in the batch's order.
    ids: Vec<Option<&'m Id<'m>>>,
    spans: Vec<RequestSpan>,
    future: FallbackBatchFuture,
    /// Whether the fallback got the batch whole (and may answer it whole).
    whole: bool,
}

/// How the fallback's elements of a batch were answered.
pub(crate) enum BatchFinished<'m> {
    /// Each element's answer, in order, to be written with the rest of the batch.
    Each(Vec<Finished<'m>>),
    /// The batch's whole answer, as it is.
    Whole(Bytes),
}

impl<'m> FallbackBatch<'m> {
    /// Starts `messages` (the batch's elements the fallback serves, requests and
    /// notifications, in order; `whole`: all of the batch's) on `fallback` together; `None`
    /// when it answers each on its own.
    pub(crate) fn start(
        fallback: &dyn Fallback,
        messages: &[&'m Message<'m>],
        frame: Option<&Bytes>,
        whole: bool,
    ) -> Option<FallbackBatch<'m>> {
        let mut ids = Vec::with_capacity(messages.len());
        let mut calls = Vec::with_capacity(messages.len());
        for message in messages {
            let (method, id, params) = match message {
                Message::Request(request) => (request.method(), Some(request.id()), request.params()),
                Message::Notification(notification) => (notification.method(), None, notification.params()),
                // Never given: a response goes to no handler.
                Message::Response(_) => continue,
            };
            ids.push(id);
            calls.push(FallbackCall {
                method,
                id,
                params,
                frame,
                alone: false,
                whole,
                context: None,
            });
        }
        let future = catch_unwind(AssertUnwindSafe(|| fallback.batch(&calls))).unwrap_or_else(|payload| {
            let answers = every(calls.len(), &handler::panicked(&*payload));
            Some(Box::pin(async move { FallbackBatchAnswer::Each(answers) }))
        })?;
        let spans = calls
            .iter()
            .map(|call| RequestSpan::start(call.method, call.id))
            .collect();
        Some(FallbackBatch {
            ids,
            spans,
            future,
            whole,
        })
    }

    /// Awaits the answers, within the handler timeout and until an abort: one per element,
    /// in order, to be written with the rest of the batch, or the batch's whole answer.
    pub(crate) async fn run(self, serving: &Supervision) -> BatchFinished<'m> {
        let count = self.ids.len();
        let answers = supervised(
            CatchUnwind {
                inner: self.future,
                count,
            },
            serving,
            count,
        )
        .await;
        let answers = match answers {
            FallbackBatchAnswer::Whole(whole) if self.whole => {
                for span in self.spans {
                    span.finish(None, false);
                }
                return BatchFinished::Whole(whole);
            }
            FallbackBatchAnswer::Whole(_) => every(
                count,
                &ErrorObject::internal_error("the fallback answered whole a batch it did not get whole"),
            ),
            FallbackBatchAnswer::Each(answers) => answers,
        };
        let mut answers = answers.into_iter();
        let mut finished = Vec::with_capacity(count);
        for (id, span) in self.ids.into_iter().zip(self.spans) {
            let answer = answers.next().unwrap_or_else(|| {
                FallbackAnswer::Error(ErrorObject::internal_error(format_args!(
                    "the fallback answered fewer than the {count} calls of the batch"
                )))
            });
            let code = match &answer {
                FallbackAnswer::Error(error)
                | FallbackAnswer::ErrorText { error, .. }
                | FallbackAnswer::Limited { error, .. } => Some(error.code().code()),
                _ => None,
            };
            span.finish(code, false);
            finished.push(Finished::new(id, answer));
        }
        BatchFinished::Each(finished)
    }
}

/// The batch's answers, or every call answered with one error when the connection is closing
/// or the handler timeout passed.
async fn supervised(future: CatchUnwind, serving: &Supervision, count: usize) -> FallbackBatchAnswer {
    let abort = serving.abort.clone().unwrap_or_default();
    let timeout = async {
        match serving.handler_timeout {
            Some(after) => tokio::time::sleep(after).await,
            None => std::future::pending().await,
        }
    };
    let error = tokio::select! {
        biased;
        () = abort.cancelled() => {
            event!(warn, "batch aborted: the connection is closing");
            ErrorObject::internal_error("request aborted: the connection is closing")
        }
        answers = future => return answers,
        () = timeout => {
            if let Some(timeouts) = &serving.timeouts {
                crate::sync::bump(timeouts);
            }
            let after = serving.handler_timeout.unwrap_or_default();
            event!(warn, after_ms = after.as_millis() as u64, "batch handler timed out");
            ErrorObject::internal_error(format_args!("handler timed out after {after:?}"))
        }
    };
    FallbackBatchAnswer::Each(every(count, &error))
}

/// `error` for each of `count` calls.
fn every(count: usize, error: &ErrorObject<'static>) -> Vec<FallbackAnswer> {
    (0..count).map(|_| FallbackAnswer::Error(error.clone())).collect()
}

/// The batch's future with a panic in it answered -32603 for every call.
struct CatchUnwind {
    inner: FallbackBatchFuture,
    count: usize,
}

impl Future for CatchUnwind {
    type Output = FallbackBatchAnswer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<FallbackBatchAnswer> {
        let count = self.count;
        let inner = &mut self.inner;
        catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))).unwrap_or_else(|payload| {
            Poll::Ready(FallbackBatchAnswer::Each(every(count, &handler::panicked(&*payload))))
        })
    }
}
