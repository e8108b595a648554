//! What a transport can fail with, classified as recoverable or fatal.

use std::io;

use crate::frame::FrameError;

/// A transport failure.
///
/// [`is_recoverable`](TransportError::is_recoverable) tells whether the connection can go on:
/// a frame over the size limit is skipped and the next one read; a garbage header, input
/// that ends inside a frame, an I/O error or a closed transport end the connection.
///
/// ```
/// use rpcwire_core::frame::FrameError;
/// use rpcwire_core::transport::TransportError;
///
/// let too_large = TransportError::from(FrameError::TooLarge { len: 9, limit: 8, offset: 0 });
/// assert!(too_large.is_recoverable());
/// let broken = TransportError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
/// assert!(!broken.is_recoverable());
/// assert_eq!(TransportError::Closed.to_string(), "transport closed");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The byte stream could not be cut into frames (see [`FrameError`]).
    #[error(transparent)]
    Frame(FrameError),
    /// Reading or writing the underlying stream failed.
    #[error("transport i/o error: {0}")]
    Io(io::Error),
    /// The transport was already closed.
    #[error("transport closed")]
    Closed,
}

impl TransportError {
    /// Whether the connection can go on after this error: only for a frame over the size
    /// limit (which the receiver skips) and for I/O errors that mean "try again"
    /// (`Interrupted`, `WouldBlock`, `TimedOut`).
    ///
    /// ```
    /// use rpcwire_core::transport::TransportError;
    /// assert!(!TransportError::Closed.is_recoverable());
    /// let interrupted = std::io::Error::from(std::io::ErrorKind::Interrupted);
    /// assert!(TransportError::from(interrupted).is_recoverable());
    /// ```
    pub fn is_recoverable(&self) -> bool {
        match self {
            TransportError::Frame(error) => error.is_recoverable(),
            TransportError::Io(error) => matches!(
                error.kind(),
                io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            TransportError::Closed => false,
        }
    }
}

impl From<FrameError> for TransportError {
    fn from(error: FrameError) -> TransportError {
        match error {
            FrameError::Io(error) => TransportError::Io(error),
            other => TransportError::Frame(other),
        }
    }
}

impl From<io::Error> for TransportError {
    fn from(error: io::Error) -> TransportError {
        TransportError::Io(error)
    }
}
