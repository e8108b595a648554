//! A peer's connection state, why it closed, and its counters.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::transport::TransportError;

/// Where a [`Peer`](super::Peer)'s connection is in its life; observe it with
/// [`Peer::state`](super::Peer::state) and [`Peer::state_changes`](super::Peer::state_changes).
///
/// ```
/// use rpcwire_core::transport::ConnectionState;
/// assert!(ConnectionState::Connected.is_open());
/// assert!(!ConnectionState::Closing.is_open());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectionState {
    /// The transport is being established ([`PeerBuilder::connect`](super::PeerBuilder::connect)).
    /// Calls and notifications made now are queued and sent once connected.
    Connecting,
    /// Supervision and calling.
    Connected,
    /// No longer reading; pending calls have failed; answers to requests already received
    /// are being finished and written out.
    Closing,
    /// Everything is written out and the transport is closed.
    Closed,
}

impl ConnectionState {
    /// Whether calls can be made (connecting or connected).
    ///
    /// ```
    /// assert!(rpcwire_core::transport::ConnectionState::Connecting.is_open());
    /// ```
    pub fn is_open(self) -> bool {
        matches!(self, ConnectionState::Connecting | ConnectionState::Connected)
    }
}

/// Why a [`Peer`](super::Peer)'s connection closed.
///
/// ```
/// use rpcwire_core::transport::CloseReason;
/// assert_eq!(CloseReason::Local.to_string(), "closed by this side");
/// assert!(!CloseReason::Local.is_error());
/// ```
#[derive(Clone, Debug)]
pub enum CloseReason {
    /// [`Peer::close`](super::Peer::close) was called, or every `Peer` handle was dropped.
    Local,
    /// The other side ended its output (end of input).
    EndOfInput,
    /// Reading or writing failed fatally (a garbage frame header, input that ended inside a
    /// frame, an I/O error).
    Transport(Arc<TransportError>),
    /// The transport could not be established.
    ConnectFailed(Arc<io::Error>),
    /// Nothing was received for this long ([`PeerBuilder::idle_timeout`](super::PeerBuilder::idle_timeout)).
    IdleTimeout(std::time::Duration),
}

impl CloseReason {
    /// Whether the connection ended because something went wrong.
    ///
    /// ```
    /// use rpcwire_core::transport::{CloseReason, TransportError};
    /// assert!(CloseReason::Transport(TransportError::Closed.into()).is_error());
    /// assert!(!CloseReason::EndOfInput.is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        matches!(self, CloseReason::Transport(_) | CloseReason::ConnectFailed(_))
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Local => f.write_str("closed by this side"),
            CloseReason::EndOfInput => f.write_str("the other side ended the connection"),
            CloseReason::Transport(_) => f.write_str("the transport failed"),
            CloseReason::ConnectFailed(_) => f.write_str("could not connect"),
            CloseReason::IdleTimeout(after) => write!(f, "nothing received for {after:?}"),
        }
    }
}

/// The transport's error or the connect error is the [`source`](std::error::Error::source).
///
/// ```
/// use std::error::Error;
/// use rpcwire_core::transport::CloseReason;
/// let reason = CloseReason::ConnectFailed(std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into());
/// assert_eq!(reason.to_string(), "could not connect");
/// assert!(reason.source().unwrap().to_string().contains("refused"));
/// ```
impl std::error::Error for CloseReason {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CloseReason::Transport(error) => Some(&**error),
            CloseReason::ConnectFailed(error) => Some(&**error),
            CloseReason::Local | CloseReason::EndOfInput | CloseReason::IdleTimeout(_) => None,
        }
    }
}

/// What a [`Peer`](super::Peer) has done so far.
///
/// ```
/// let stats = rpcwire_core::transport::PeerStats::default();
/// assert_eq!(stats.calls, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// Frames received (each a message or a batch).
    pub frames_received: u64,
    /// Answers sent to the other side's requests (responses, batch arrays, error objects).
    pub answers_sent: u64,
    /// Calls sent.
    pub calls: u64,
    /// Notifications sent.
    pub notifications: u64,
    /// Responses that matched no pending call (late after a timeout, duplicated, forged, or
    /// with id `null`).
    pub unmatched_responses: u64,
    /// Frames the transport rejected (too large, bad header, cut off).
    pub frame_errors: u64,
    /// Requests answered at once with the overload error because every handler slot and
    /// the backlog were full ([`PeerBuilder::overload_answer`](super::PeerBuilder::overload_answer)).
    pub rejected_overloaded: u64,
    /// Calls that got no answer within the call timeout.
    pub calls_timed_out: u64,
    /// Cancel notifications sent for calls dropped or timed out (with a
    /// [`CancelProtocol`](super::CancelProtocol)).
    pub cancels_sent: u64,
    /// Cancel notifications not sent because the outgoing queue was full.
    pub cancels_lost: u64,
    /// Requests under way that the other side cancelled.
    pub cancelled_by_remote: u64,
    /// Requests whose handler ran past the handler timeout (answered with an error).
    pub handler_timeouts: u64,
}

/// The live counters behind [`PeerStats`].
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) frames_received: AtomicU64,
    pub(super) answers_sent: AtomicU64,
    pub(super) calls: AtomicU64,
    pub(super) notifications: AtomicU64,
    pub(super) unmatched_responses: AtomicU64,
    pub(super) frame_errors: AtomicU64,
    pub(super) rejected_overloaded: AtomicU64,
    pub(super) calls_timed_out: AtomicU64,
    pub(super) cancels_sent: AtomicU64,
    pub(super) cancels_lost: AtomicU64,
    pub(super) cancelled_by_remote: AtomicU64,
    /// Shared with the handlers' supervision (`dispatch::Supervision`).
    pub(super) handler_timeouts: Arc<AtomicU64>,
}

impl Counters {
    pub(super) fn snapshot(&self) -> PeerStats {
        PeerStats {
            frames_received: self.frames_received.load(Relaxed),
            answers_sent: self.answers_sent.load(Relaxed),
            calls: self.calls.load(Relaxed),
            notifications: self.notifications.load(Relaxed),
            unmatched_responses: self.unmatched_responses.load(Relaxed),
            frame_errors: self.frame_errors.load(Relaxed),
            rejected_overloaded: self.rejected_overloaded.load(Relaxed),
            calls_timed_out: self.calls_timed_out.load(Relaxed),
            cancels_sent: self.cancels_sent.load(Relaxed),
            cancels_lost: self.cancels_lost.load(Relaxed),
            cancelled_by_remote: self.cancelled_by_remote.load(Relaxed),
            handler_timeouts: self.handler_timeouts.load(Relaxed),
        }
    }
}
