//! The state a peer's handles and its tasks share.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::{mpsc, watch, Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::outgoing::Outgoing;
use super::state::Counters;
use super::{CancelProtocol, CloseReason, ConnectionState, PeerError, PeerErrorKind};
use crate::correlate::CorrelationTable;
use crate::message::{ErrorObject, JsonBytes};
use crate::sync::lock_unpoisoned;

/// What a pending call receives: the raw result (a slice of the response's frame) or the
/// error.
pub(crate) type CallAnswer = Result<JsonBytes, ErrorAnswer>;

/// An error response's error: decoded, and as the other side wrote it (its members, order
/// and escapes), for whoever passes it on.
#[derive(Clone, Debug)]
pub(crate) struct ErrorAnswer {
    pub(crate) error: ErrorObject<'static>,
    /// The `"error"` member's JSON text, a slice of the frame; `None` when the response came
    /// inside a batch frame.
    pub(crate) text: Option<JsonBytes>,
}

pub(super) struct Shared {
    /// The calls this side made, waiting for their responses.
    pub(super) table: CorrelationTable<CallAnswer>,
    /// Frames for the writer task.
    outgoing: mpsc::Sender<Outgoing>,
    /// Frames queued for the writer and not yet handed to the transport's sender.
    unwritten: AtomicUsize,
    pub(super) state: watch::Sender<ConnectionState>,
    /// Wakes the reader to close the connection.
    pub(super) shutdown: Notify,
    /// Set before `shutdown` is notified: the reader polls `shutdown` again only then (each
    /// poll of a waiting `Notified` takes the notifier's lock).
    close_requested: AtomicBool,
    pub(super) counters: Counters,
    /// The first reason recorded wins.
    reason: Mutex<Option<CloseReason>>,
    /// How long a call may take in all, queueing its frame included; also how long a
    /// notification may wait for room in the queue.
    pub(super) call_timeout: std::time::Duration,
    /// How calls are cancelled on the other side.
    pub(super) cancel_protocol: CancelProtocol,
    /// Room in the outgoing queue, in bytes: a frame waits for its size (at most all of it).
    queued_bytes: Arc<Semaphore>,
    max_queued_bytes: usize,
    /// Fires when a close's deadline passed: handlers are aborted, the writer gives up.
    pub(super) abort_handlers: CancellationToken,
    pub(super) abort_writer: CancellationToken,
}

impl Shared {
    pub(super) fn new(
        table: CorrelationTable<CallAnswer>,
        outgoing: mpsc::Sender<Outgoing>,
        state: ConnectionState,
        call_timeout: std::time::Duration,
        cancel_protocol: CancelProtocol,
        max_queued_bytes: usize,
    ) -> Shared {
        let max_queued_bytes = max_queued_bytes.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Shared {
            table,
            outgoing,
            unwritten: AtomicUsize::new(0),
            state: watch::Sender::new(state),
            shutdown: Notify::new(),
            close_requested: AtomicBool::new(false),
            counters: Counters::default(),
            reason: Mutex::new(None),
            call_timeout,
            cancel_protocol,
            queued_bytes: Arc::new(Semaphore::new(max_queued_bytes)),
            max_queued_bytes,
            abort_handlers: CancellationToken::new(),
            abort_writer: CancellationToken::new(),
        }
    }

    /// The queue room a frame of `len` bytes takes (a frame larger than the whole queue
    /// takes all of it, so that it can still be sent, alone).
    fn room(&self, len: usize) -> u32 {
        u32::try_from(len.clamp(1, self.max_queued_bytes)).unwrap_or(u32::MAX)
    }

    /// Why the connection closed (`Local` if it has not, which callers only ask once it has).
    pub(super) fn close_reason(&self) -> CloseReason {
        self.lock_reason().clone().unwrap_or(CloseReason::Local)
    }

    /// Records why the connection closes, unless a reason is already recorded.
    pub(super) fn record_reason(&self, reason: CloseReason) {
        self.lock_reason().get_or_insert(reason);
    }

    /// Records `reason` and asks the reader to close the connection.
    pub(super) fn request_close(&self, reason: CloseReason) {
        self.record_reason(reason);
        self.close_requested.store(true, Ordering::Release);
        self.shutdown.notify_one();
    }

    /// Whether [`request_close`](Shared::request_close) was called.
    pub(super) fn close_requested(&self) -> bool {
        self.close_requested.load(Ordering::Acquire)
    }

    /// Stops calls: the state becomes `Closing` and every pending call fails.
    pub(super) fn begin_close(&self) {
        self.state.send_if_modified(|state| {
            let open = state.is_open();
            if open {
                *state = ConnectionState::Closing;
            }
            open
        });
        self.table.cancel_all();
    }

    pub(super) fn closed_error(&self) -> PeerError {
        PeerErrorKind::Closed(self.close_reason()).into()
    }

    /// Queues a frame for the writer.
    pub(super) async fn send(&self, frame: Bytes) -> Result<(), PeerError> {
        self.queue_frame(frame).await.map_err(|()| self.closed_error())
    }

    /// [`send`](Shared::send), giving up at `deadline` (when there is one) with `on_time_out`:
    /// when the other side stops reading, the queue fills and stays full.
    pub(super) async fn send_until(
        &self,
        frame: Bytes,
        deadline: Option<std::time::Instant>,
        on_time_out: impl FnOnce() -> PeerError,
    ) -> Result<(), PeerError> {
        match deadline {
            Some(deadline) => match tokio::time::timeout_at(deadline.into(), self.send(frame)).await {
                Ok(sent) => sent,
                Err(_elapsed) => Err(on_time_out()),
            },
            None => self.send(frame).await,
        }
    }

    /// Queues a notification, waiting at most the call timeout for room (a notification has
    /// no answer to wait for, so nothing else would bound the wait).
    pub(super) async fn send_notification(&self, frame: Bytes) -> Result<(), PeerError> {
        let after = self.call_timeout;
        let deadline = std::time::Instant::now().checked_add(after);
        self.send_until(frame, deadline, || PeerErrorKind::QueueFull { after }.into())
            .await
    }

    /// Queues a frame for the writer; `Err` once the writer is gone.
    pub(super) async fn queue_frame(&self, frame: Bytes) -> Result<(), ()> {
        /// Takes a frame off the count again unless it was queued (an error, or the send
        /// dropped while it waited for room).
        struct Counted<'a>(&'a AtomicUsize);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        self.unwritten.fetch_add(1, Ordering::AcqRel);
        let counted = Counted(&self.unwritten);
        let room = self
            .queued_bytes
            .clone()
            .acquire_many_owned(self.room(frame.len()))
            .await
            .ok();
        let queued = self.outgoing.send(Outgoing::Frame(frame, room)).await;
        if queued.is_ok() {
            // Counted until the writer has written it.
            std::mem::forget(counted);
        }
        queued.map_err(|_| ())
    }

    /// Queues a frame for the writer if there is room now, without waiting; `false` when
    /// the queue is full or the writer is gone.
    pub(super) fn try_queue_frame(&self, frame: Bytes) -> bool {
        let Ok(room) = self
            .queued_bytes
            .clone()
            .try_acquire_many_owned(self.room(frame.len()))
        else {
            return false;
        };
        self.unwritten.fetch_add(1, Ordering::AcqRel);
        let queued = self.outgoing.try_send(Outgoing::Frame(frame, Some(room))).is_ok();
        if !queued {
            self.unwritten.fetch_sub(1, Ordering::AcqRel);
        }
        queued
    }

    /// Asks the writer to write out everything queued, then close the transport.
    pub(super) async fn queue_close(&self) {
        let _ = self.outgoing.send(Outgoing::Close).await;
    }

    /// The writer handed a queued frame to the transport's sender.
    pub(super) fn written(&self) {
        self.unwritten.fetch_sub(1, Ordering::AcqRel);
    }

    /// `true` when every queued frame has been handed to the transport's sender.
    pub(super) fn all_written(&self) -> bool {
        self.unwritten.load(Ordering::Acquire) == 0
    }

    fn lock_reason(&self) -> std::sync::MutexGuard<'_, Option<CloseReason>> {
        // Nothing panics while holding it; recover the value if something ever did.
        lock_unpoisoned(&self.reason)
    }
}
