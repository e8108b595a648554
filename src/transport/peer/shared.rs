//! The state a peer's handles and its tasks share.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use tokio::sync::{mpsc, watch, Notify};

use super::outgoing::Outgoing;
use super::state::Counters;
use super::{CloseReason, ConnectionState, PeerError};
use crate::correlate::CorrelationTable;
use crate::message::{ErrorObject, JsonBytes};
use crate::sync::lock_unpoisoned;

/// What a pending call receives: the raw result (a slice of the response's frame) or the
/// error object.
pub(super) type Answer = Result<JsonBytes, ErrorObject<'static>>;

pub(super) struct Shared {
    /// The calls this side made, waiting for their responses.
    pub(super) table: CorrelationTable<Answer>,
    /// Frames for the writer task.
    outgoing: mpsc::Sender<Outgoing>,
    /// Frames queued for the writer and not yet handed to the transport's sender.
    unwritten: AtomicUsize,
    pub(super) state: watch::Sender<ConnectionState>,
    /// Wakes the reader to close the connection.
    pub(super) shutdown: Notify,
    pub(super) counters: Counters,
    /// The first reason recorded wins.
    reason: Mutex<Option<CloseReason>>,
}

impl Shared {
    pub(super) fn new(
        table: CorrelationTable<Answer>,
        outgoing: mpsc::Sender<Outgoing>,
        state: ConnectionState,
    ) -> Shared {
        Shared {
            table,
            outgoing,
            unwritten: AtomicUsize::new(0),
            state: watch::Sender::new(state),
            shutdown: Notify::new(),
            counters: Counters::default(),
            reason: Mutex::new(None),
        }
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
        self.shutdown.notify_one();
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
        PeerError::Closed(self.close_reason())
    }

    /// Queues a frame for the writer.
    pub(super) async fn send(&self, frame: Bytes) -> Result<(), PeerError> {
        self.queue_frame(frame).await.map_err(|()| self.closed_error())
    }

    /// Queues a frame for the writer; `Err` once the writer is gone.
    pub(super) async fn queue_frame(&self, frame: Bytes) -> Result<(), ()> {
        self.unwritten.fetch_add(1, Ordering::AcqRel);
        let queued = self.outgoing.send(Outgoing::Frame(frame)).await;
        if queued.is_err() {
            self.unwritten.fetch_sub(1, Ordering::AcqRel);
        }
        queued.map_err(|_| ())
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
