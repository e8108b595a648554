//! What a call or notification through a [`Peer`](super::Peer) can fail with.

use std::time::Duration;

use super::CloseReason;
use crate::correlate::CallError;
use crate::message::ErrorObject;

/// Why a call or notification failed.
///
/// ```
/// use rpcwire::transport::{CloseReason, PeerError};
/// let error = PeerError::Closed(CloseReason::EndOfInput);
/// assert_eq!(error.to_string(), "connection closed: the other side ended the connection");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The connection is closed (or closing): the call was not sent, or its answer can no
    /// longer arrive.
    #[error("connection closed: {0}")]
    Closed(CloseReason),
    /// As many calls as the peer allows are pending; the call was not sent.
    #[error("too many pending requests (capacity {capacity})")]
    TooManyPending {
        /// The most calls that may be pending at once.
        capacity: usize,
    },
    /// No answer arrived in time; an answer arriving later is dropped.
    #[error("request timed out after {after:?}")]
    TimedOut {
        /// The call's timeout.
        after: Duration,
    },
    /// The other side answered with an error object.
    #[error("the other side answered with an error: {0}")]
    Remote(ErrorObject<'static>),
    /// The params could not be serialized, or are not an array or an object.
    #[error("params cannot be sent: {0}")]
    Params(serde_json::Error),
    /// The result could not be decoded into the type asked for.
    #[error("result cannot be decoded: {0}")]
    Result(serde_json::Error),
}

impl PeerError {
    /// Whether the connection is closed (so that no later call can succeed either).
    ///
    /// ```
    /// use rpcwire::transport::{CloseReason, PeerError};
    /// assert!(PeerError::Closed(CloseReason::Local).is_closed());
    /// assert!(!PeerError::TooManyPending { capacity: 1 }.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self, PeerError::Closed(_))
    }

    /// Maps a correlation table error, naming the close reason for a closed connection.
    pub(super) fn from_call(error: CallError, reason: impl FnOnce() -> CloseReason) -> PeerError {
        match error {
            CallError::TooManyPending { capacity } => PeerError::TooManyPending { capacity },
            CallError::TimedOut { after } => PeerError::TimedOut { after },
            CallError::ConnectionClosed => PeerError::Closed(reason()),
        }
    }
}
