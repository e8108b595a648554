//! What can go wrong while cutting a byte stream into frames.

use std::fmt;

/// A framing error: the stream could not be cut into a frame here.
///
/// Each variant says where in the stream it happened (`offset`: the number of bytes the
/// decoder had consumed before the offending frame began), so a server can log it and
/// answer with a JSON-RPC error whose id is `null`. [`is_recoverable`](FrameError::is_recoverable)
/// tells whether decoding can go on: only [`TooLarge`](FrameError::TooLarge) is recoverable —
/// the decoder has already arranged to skip the rest of the oversized frame.
///
/// ```
/// use bytes::BytesMut;
/// use rpcwire_wire::frame::{FrameError, NdjsonDecoder};
///
/// let mut decoder = NdjsonDecoder::new().with_max_frame(8);
/// let mut buf = BytesMut::from(&b"[1,2,3,4,5,6]\n[7]\n"[..]);
/// let error = decoder.decode(&mut buf).unwrap_err();
/// assert!(matches!(error, FrameError::TooLarge { len: 13, limit: 8, offset: 0 }));
/// assert!(error.is_recoverable());
/// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"[7]");
/// # Ok::<(), FrameError>(())
/// ```
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A frame longer than the configured maximum. For NDJSON `len` is the length of the
    /// line (without its line ending); for Content-Length it is the declared length, which
    /// was rejected before anything was reserved for it. Recoverable: the decoder skips the
    /// frame's bytes (also those still to arrive) without buffering them.
    #[error("frame of {len} bytes at stream offset {offset} exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The frame's length in bytes.
        len: usize,
        /// The configured maximum frame length.
        limit: usize,
        /// Stream offset of the frame's first byte.
        offset: u64,
    },
    /// A Content-Length header that cannot be trusted: garbage, too long, or with a
    /// missing, invalid or duplicate `Content-Length`. Fatal: there is no way to find the
    /// next frame, so the connection should be closed (after answering the error). Further
    /// calls to the decoder return this error again without consuming anything.
    #[error("bad frame header at stream offset {offset}: {reason}")]
    BadHeader {
        /// What was wrong.
        reason: HeaderError,
        /// Stream offset of the header's first byte.
        offset: u64,
    },
    /// The input ended inside a frame (`decode_eof` with a partial frame left). The partial
    /// bytes are dropped; the decoder is ready for a new stream.
    #[error(
        "input ended inside a frame at stream offset {offset}: {}",
        Missing { expected: *expected, got: *got }
    )]
    Truncated {
        /// The frame's body length, when its header was complete; `None` when the input
        /// ended inside the header.
        expected: Option<usize>,
        /// How many bytes of the body (or, with `expected: None`, of the header) arrived.
        got: usize,
        /// Stream offset of the frame's first byte.
        offset: u64,
    },
    /// Reading from the underlying transport failed (used by the `tokio_util` codecs).
    #[error("i/o error while reading frames: {0}")]
    Io(#[from] std::io::Error),
}

impl FrameError {
    /// Whether the decoder can go on after this error: `true` only for
    /// [`TooLarge`](FrameError::TooLarge).
    ///
    /// ```
    /// use rpcwire_wire::frame::{FrameError, HeaderError};
    /// assert!(FrameError::TooLarge { len: 9, limit: 8, offset: 0 }.is_recoverable());
    /// assert!(!FrameError::BadHeader { reason: HeaderError::MissingContentLength, offset: 0 }.is_recoverable());
    /// ```
    pub fn is_recoverable(&self) -> bool {
        matches!(self, FrameError::TooLarge { .. })
    }

    /// Stream offset of the frame the error is about (`None` for [`Io`](FrameError::Io)).
    ///
    /// ```
    /// use rpcwire_wire::frame::FrameError;
    /// assert_eq!(FrameError::TooLarge { len: 9, limit: 8, offset: 40 }.offset(), Some(40));
    /// ```
    pub fn offset(&self) -> Option<u64> {
        match self {
            FrameError::TooLarge { offset, .. }
            | FrameError::BadHeader { offset, .. }
            | FrameError::Truncated { offset, .. } => Some(*offset),
            FrameError::Io(_) => None,
        }
    }
}

/// Formats the "expected/got" part of [`FrameError::Truncated`].
struct Missing {
    expected: Option<usize>,
    got: usize,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.expected {
            Some(expected) => write!(f, "expected {expected} body bytes, got {}", self.got),
            None => write!(f, "header incomplete after {} bytes", self.got),
        }
    }
}

/// Why a Content-Length header was rejected ([`FrameError::BadHeader`]).
///
/// ```
/// use rpcwire_wire::frame::HeaderError;
/// assert_eq!(HeaderError::DuplicateContentLength.to_string(), "more than one Content-Length header");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The header ended (blank line) without a `Content-Length`.
    #[error("no Content-Length header")]
    MissingContentLength,
    /// The `Content-Length` value is not a plain decimal number.
    #[error("Content-Length value is not a decimal number")]
    InvalidContentLength,
    /// The `Content-Length` value does not fit in a `usize`.
    #[error("Content-Length value overflows")]
    ContentLengthOverflow,
    /// Two `Content-Length` headers (even with the same value: peers that disagree on
    /// which one wins would cut the stream differently).
    #[error("more than one Content-Length header")]
    DuplicateContentLength,
    /// A header line that is not `Name: value` with a token name.
    #[error("header line is not `Name: value`")]
    Malformed,
    /// The header grew past the limit without ending.
    #[error("header longer than {limit} bytes")]
    TooLong {
        /// The configured maximum header length.
        limit: usize,
    },
}
