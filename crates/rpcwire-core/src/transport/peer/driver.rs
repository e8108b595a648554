//! The tasks that run a peer's connection: connect, read and serve, write.
//!
//! The driver task establishes the transport, spawns the writer task, then reads frames:
//!
//! * responses complete the pending calls they answer (the result is a slice of the frame);
//! * requests for synchronous handlers are answered right there, on the reader task;
//! * frames that need an async handler run on a task of their own, at most
//!   `max_concurrent` at once. When all are busy, such frames wait in a backlog (at most
//!   `max_queued`) while the reader goes on reading, so that responses still reach calls
//!   made from inside handlers; only when the backlog is full as well does reading pause.
//!
//! Calls, notifications and the answers of handler tasks go through one bounded queue to the
//! writer task, which frames them, writes as much as is queued in one go and flushes. The
//! reader writes its own answers itself when nothing is queued and no write is under way (the
//! transport's sender is behind a lock the writer holds while it writes): one task hop less
//! per request. Should that write not finish at once (the connection is full), it goes on in
//! a task of its own, holding the lock, so that the reader keeps reading and the order of
//! writes is kept. On close (asked for, end of input, fatal error) the reader stops, pending
//! calls fail, the frames already received are still answered, and the writer writes
//! everything out before closing the transport.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::sync::{mpsc, Mutex, OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

use super::outgoing::Outgoing;
use super::shared::{CallAnswer, ErrorAnswer, Shared};
use super::{CloseReason, ConnectionState, PeerLink};
use crate::dispatch::{Answer, Cancellations, PendingAnswer, Responder, Router, Supervision};
use crate::frame::FrameError;
use crate::message::{ErrorObject, JsonBytes, Message, Notification, Response, ResponsePayload};
use crate::sync::bump;
use crate::trace::event;
#[cfg(feature = "tracing")]
use crate::trace::IdText;
use crate::transport::{FrameReceiver, FrameSender, Transport, TransportError};

/// How many async handlers may run at once, how many frames may wait for one, and what a
/// request gets when both are full (`None`: reading pauses instead).
#[derive(Clone, Debug)]
pub(super) struct HandlerLimits {
    pub(super) max_concurrent: usize,
    pub(super) max_queued: usize,
    pub(super) overload: Option<Arc<ErrorObject<'static>>>,
    pub(super) handler_timeout: Option<Duration>,
    /// The most bytes of frames waiting for a handler.
    pub(super) max_queued_bytes: usize,
    /// Reading stops (and the connection closes) after this long without a frame.
    pub(super) idle_timeout: Option<Duration>,
}

/// Runs the connection from connecting to closed.
pub(super) async fn run<T, F>(
    connect: F,
    shared: Arc<Shared>,
    router: Arc<Router>,
    queue: mpsc::Receiver<Outgoing>,
    limits: HandlerLimits,
) where
    T: Transport,
    F: Future<Output = io::Result<T>> + Send,
{
    // An established transport wins over a close asked for meanwhile: then the frames
    // queued so far are written before closing, as on any close.
    let transport = tokio::select! {
        biased;
        connected = connect => match connected {
            Ok(transport) => Some(transport),
            Err(error) => {
                shared.record_reason(CloseReason::ConnectFailed(Arc::new(error)));
                None
            }
        },
        () = shared.shutdown.notified() => None,
    };
    let Some(transport) = transport else {
        shared.begin_close();
        shared.state.send_replace(ConnectionState::Closed);
        return;
    };
    let (receiver, sender) = transport.split();
    let sender = Arc::new(Mutex::new(sender));
    let writer = tokio::spawn(write(sender.clone(), queue, shared.clone()));
    shared.state.send_if_modified(|state| {
        let connecting = *state == ConnectionState::Connecting;
        if connecting {
            *state = ConnectionState::Connected;
        }
        connecting
    });

    let protocol = shared.cancel_protocol;
    let serving = Arc::new(Supervision {
        remote: Some(Arc::new(PeerLink {
            shared: shared.clone(),
        })),
        cancellations: protocol.method().map(|_| Arc::new(Cancellations::default())),
        on_cancel: protocol.on_cancel(),
        abort: None,
        handler_timeout: limits.handler_timeout,
        timeouts: Some(shared.counters.handler_timeouts.clone()),
    });
    let mut reader = Reader {
        receiver,
        serving,
        expected: Vec::new(),
        limit: Arc::new(Semaphore::new(limits.max_concurrent)),
        limits,
        backlog: VecDeque::new(),
        backlog_bytes: 0,
        out: BytesMut::new(),
        sender,
        responder: Responder::new(),
        shared: shared.clone(),
        router,
    };
    reader.read().await;
    shared.begin_close();
    reader.finish().await;
    shared.queue_close().await;
    let _ = writer.await;
    shared.state.send_replace(ConnectionState::Closed);
}

/// The writer task: frames and writes what is queued, flushing whenever the queue is empty.
async fn write<S: FrameSender>(
    sender: Arc<Mutex<S>>,
    mut queue: mpsc::Receiver<Outgoing>,
    shared: Arc<Shared>,
) {
    let written = async {
        while let Some(item) = queue.recv().await {
            let mut sender = sender.lock().await;
            let mut next = Some(item);
            while let Some(item) = next {
                match item {
                    Outgoing::Frame(frame, room) => {
                        let sent = sender.send(frame).await;
                        shared.written();
                        drop(room);
                        sent?;
                    }
                    Outgoing::Close => return sender.close().await,
                }
                next = queue.try_recv().ok();
            }
            sender.flush().await?;
        }
        Ok(())
    };
    let written = tokio::select! {
        biased;
        written = written => written,
        // A close whose deadline passed: what is not written yet is dropped.
        () = shared.abort_writer.cancelled() => Ok(()),
    };
    if let Err(error) = written {
        // Dropping the queue makes every later send fail at once.
        shared.request_close(CloseReason::Transport(Arc::new(error)));
    }
}

/// Writes one answer with the sender the reader locked, and flushes it.
async fn write_answer<S: FrameSender>(mut sender: OwnedMutexGuard<S>, answer: Bytes, shared: Arc<Shared>) {
    if let Err(error) = sender.send_flushed(answer).await {
        shared.request_close(CloseReason::Transport(Arc::new(error)));
    }
}

struct Reader<R, S> {
    receiver: R,
    /// What async handlers get: their context, cancellation by id, the handler timeout.
    serving: Arc<Supervision>,
    /// The ids of the requests for async handlers in the frame being read.
    expected: Vec<String>,
    /// The transport's write half, shared with the writer task.
    sender: Arc<Mutex<S>>,
    /// Permits for handler tasks.
    limit: Arc<Semaphore>,
    limits: HandlerLimits,
    /// Frames waiting for a handler permit.
    backlog: VecDeque<PendingAnswer>,
    /// The bytes of the frames in the backlog.
    backlog_bytes: usize,
    /// Answers written on the reader task.
    out: BytesMut,
    responder: Responder,
    shared: Arc<Shared>,
    router: Arc<Router>,
}

impl<R: FrameReceiver, S: FrameSender> Reader<R, S> {
    /// Reads until the connection is to close; the reason is recorded in `shared`.
    async fn read(&mut self) {
        // One waiter for the whole loop: a new one per frame costs a registration in the
        // notifier's list and its removal each time.
        let shared = self.shared.clone();
        let shutdown = shared.shutdown.notified();
        tokio::pin!(shutdown);
        let idle_after = self.limits.idle_timeout;
        // Without an idle timeout the timer is never polled (its branch is off).
        let idle = tokio::time::sleep(idle_after.unwrap_or(Duration::from_secs(3600)));
        tokio::pin!(idle);
        // `shutdown` is polled once, which leaves this task's waker with the notifier (the
        // task is this loop's alone), then again only once a close was asked for (the flag is
        // set before the notifier wakes us): each poll of a waiting `Notified` takes the
        // notifier's lock, and the loop wakes for every frame.
        let mut listening = false;
        let mut closing = std::future::poll_fn(|cx| {
            if listening && !shared.close_requested() {
                return Poll::Pending;
            }
            listening = true;
            shutdown.as_mut().poll(cx)
        });
        loop {
            let limit = &self.limit;
            let may_read = self.backlog_has_room(0) || self.limits.overload.is_some();
            tokio::select! {
                biased;
                () = &mut closing => return,
                // Made only when polled, that is when frames wait for a permit.
                permit = async { limit.clone().acquire_owned().await }, if !self.backlog.is_empty() => {
                    let frame = self.backlog.pop_front().expect("the backlog is not empty");
                    self.backlog_bytes -= frame.bytes().len();
                    self.spawn_handler(frame, permit.expect("the semaphore is never closed"));
                }
                () = &mut idle, if idle_after.is_some() => {
                    self.shared.record_reason(CloseReason::IdleTimeout(idle_after.unwrap_or_default()));
                    return;
                }
                received = self.receiver.receive(), if may_read => {
                    if let Some(after) = idle_after {
                        idle.as_mut().reset(tokio::time::Instant::now() + after);
                    }
                    match received {
                        Ok(Some(frame)) => self.on_frame(frame).await,
                        Ok(None) => {
                            self.shared.record_reason(CloseReason::EndOfInput);
                            return;
                        }
                        Err(error) => {
                            if let TransportError::Frame(frame_error) = &error {
                                self.answer_frame_error(frame_error).await;
                            }
                            if !error.is_recoverable() {
                                self.shared.record_reason(CloseReason::Transport(Arc::new(error)));
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    /// After reading stopped: runs the frames left in the backlog, then waits for every
    /// handler to finish (their answers are queued before the writer is told to close).
    async fn finish(&mut self) {
        while let Some(frame) = self.backlog.pop_front() {
            self.backlog_bytes -= frame.bytes().len();
            let permit = self.limit.clone().acquire_owned().await;
            self.spawn_handler(frame, permit.expect("the semaphore is never closed"));
        }
        let all = u32::try_from(self.limits.max_concurrent).unwrap_or(u32::MAX);
        let _ = self.limit.acquire_many(all).await;
    }

    async fn on_frame(&mut self, frame: Bytes) {
        bump(&self.shared.counters.frames_received);
        let shared = &self.shared;
        let serving = &self.serving;
        let router = &self.router;
        let expected = &mut self.expected;
        // Parsed once here: what needs an await goes to a handler task as it was parsed.
        let served = self.responder.respond_from(
            router,
            &frame,
            Some(&frame),
            true,
            &mut self.out,
            |response| complete(shared, response, &frame),
            |message| match message {
                Message::Notification(notification) => cancel(shared, serving, notification),
                Message::Request(request) => {
                    if serving.cancellations.is_some() && router.is_async(request.method()) {
                        expected.push(request.id().json_parts().concat());
                    }
                }
                Message::Response(_) => {}
            },
        );
        drop(frame);
        let expected = std::mem::take(&mut self.expected);
        let pending = match served {
            Answer::Pending(pending) => pending,
            Answer::Written | Answer::Silent => {
                self.expected = expected;
                self.expected.clear();
                return self.send_answer().await;
            }
        };
        let len = pending.bytes().len();
        if self.backlog_has_room(len) || self.limits.overload.is_none() {
            // On its way to a handler: a cancellation arriving before it starts finds it.
            if let Some(cancellations) = &self.serving.cancellations {
                for id in &expected {
                    cancellations.expect(id, self.serving.new_token());
                }
            }
        }
        self.expected = expected;
        self.expected.clear();
        if !self.backlog_has_room(len) {
            // Every slot busy and the backlog full: answered at once, nothing run.
            if let Some(overload) = self.limits.overload.clone() {
                bump(&self.shared.counters.rejected_overloaded);
                event!(
                    debug,
                    "a request turned away: every handler slot and the backlog are full"
                );
                pending.refuse(&overload, &mut self.out);
                self.send_answer().await;
            }
        } else if !self.backlog.is_empty() {
            self.queue(pending);
        } else {
            match self.limit.clone().try_acquire_owned() {
                Ok(permit) => self.spawn_handler(pending, permit),
                Err(_) => self.queue(pending),
            }
        }
    }

    /// Whether a frame of `len` bytes can join the backlog (its count and its bytes both
    /// within their limits; a frame alone in the backlog may be larger than the bytes limit).
    fn backlog_has_room(&self, len: usize) -> bool {
        self.backlog.len() < self.limits.max_queued
            && (self.backlog.is_empty() || self.backlog_bytes + len <= self.limits.max_queued_bytes)
    }

    fn queue(&mut self, pending: PendingAnswer) {
        self.backlog_bytes += pending.bytes().len();
        self.backlog.push_back(pending);
    }

    fn spawn_handler(&self, pending: PendingAnswer, permit: OwnedSemaphorePermit) {
        let router = self.router.clone();
        let shared = self.shared.clone();
        let serving = self.serving.clone();
        // Boxed: the task then moves a pointer, not the whole handler's state (measured:
        // fewer copies per request than the unboxed future moved through `spawn`).
        tokio::spawn(Box::pin(async move {
            let mut out = BytesMut::new();
            let answered = {
                // A whole answer from the fallback (a gateway's upstream answer) goes on as
                // it came.
                let answer = pending.answer_bytes_supervised(&router, &serving, &mut out);
                tokio::select! {
                    biased;
                    answered = answer => Some(answered),
                    () = shared.abort_handlers.cancelled() => None,
                }
            };
            let answer = answered.unwrap_or_else(|| {
                // Aborted by a close whose deadline passed: every request in the frame
                // still gets an answer, saying so.
                out.clear();
                pending.refuse(&aborted(), &mut out).then(|| out.freeze())
            });
            if let Some(answer) = answer {
                bump(&shared.counters.answers_sent);
                let _ = shared.queue_frame(answer).await;
            }
            drop(permit);
        }));
    }

    /// Writes what the reader wrote into `out`, if anything: itself when nothing is queued
    /// and the sender is free, through the writer's queue otherwise.
    async fn send_answer(&mut self) {
        if self.out.is_empty() {
            return;
        }
        bump(&self.shared.counters.answers_sent);
        let answer = self.out.split().freeze();
        if self.shared.all_written() {
            if let Ok(sender) = self.sender.clone().try_lock_owned() {
                // Checked again under the lock: the writer hands frames over while holding it.
                if self.shared.all_written() {
                    let mut write = Box::pin(write_answer(sender, answer, self.shared.clone()));
                    let done =
                        std::future::poll_fn(|cx| Poll::Ready(write.as_mut().poll(cx).is_ready())).await;
                    if !done {
                        tokio::spawn(write);
                    }
                    return;
                }
            }
        }
        // If the writer is gone the connection is closing already; the reader hears of it.
        let _ = self.shared.queue_frame(answer).await;
    }

    async fn answer_frame_error(&mut self, error: &FrameError) {
        bump(&self.shared.counters.frame_errors);
        event!(warn, error = %error, "frame error");
        self.responder.answer_frame_error(error, &mut self.out);
        self.send_answer().await;
    }
}

/// What a request gets when its handler is aborted by a close whose deadline passed.
fn aborted() -> ErrorObject<'static> {
    ErrorObject::internal_error("request aborted: the connection closed before its handler finished")
}

/// Fires the token of the request a cancel notification names (with a cancel protocol).
fn cancel(shared: &Shared, serving: &Supervision, notification: &Notification<'_>) {
    let protocol = shared.cancel_protocol;
    let (Some(method), Some(cancellations)) = (protocol.method(), &serving.cancellations) else {
        return;
    };
    if notification.method() != method {
        return;
    }
    if let Some(id) = protocol.cancelled_id(notification.params()) {
        if cancellations.cancel(&id) {
            bump(&shared.counters.cancelled_by_remote);
            event!(debug, id = %id, "the other side cancelled a request under way");
        }
    }
}

/// The `"error"` member's JSON text in `frame`, a response alone in it; `None` for a batch.
fn error_text(frame: &Bytes) -> Option<JsonBytes> {
    let range = crate::json::iter::member_value_range(frame, "error")?;
    Some(JsonBytes::from_validated(frame.slice(range)))
}

/// Hands a response to the call waiting for it.
fn complete(shared: &Arc<Shared>, response: &Response<'_>, frame: &Bytes) {
    let answer: CallAnswer = match response.payload() {
        ResponsePayload::Result(result) => Ok(JsonBytes::slice_of(frame, result)),
        ResponsePayload::Error(error) => Err(ErrorAnswer {
            error: error.clone().into_owned(),
            text: error_text(frame),
        }),
    };
    if shared.table.complete(response.id(), answer).is_err() {
        bump(&shared.counters.unmatched_responses);
        event!(
            debug,
            id = %IdText(Some(response.id())),
            "a response matches no pending call (late after a timeout, duplicated, or forged)"
        );
    }
}
