//! `Framing`, the choice of framing, and `FrameDecoder`, a decoder for either.

use std::fmt;
use std::str::FromStr;

use bytes::{Bytes, BytesMut};

use super::content_length::ContentLengthDecoder;
use super::error::FrameError;
use super::ndjson::NdjsonDecoder;

/// How messages are delimited on the wire.
///
/// Parses from (and displays as) `"ndjson"` or `"content-length"`, so it can come from a
/// command line flag or a config file.
///
/// ```
/// use rpcwire::frame::Framing;
/// assert_eq!("ndjson".parse::<Framing>()?, Framing::Ndjson);
/// assert_eq!("Content-Length".parse::<Framing>()?, Framing::ContentLength);
/// assert_eq!(Framing::ContentLength.to_string(), "content-length");
/// assert!("lines".parse::<Framing>().is_err());
/// # Ok::<(), rpcwire::frame::ParseFramingError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Newline-delimited JSON: one message per line.
    Ndjson,
    /// `Content-Length: N` header, empty line, `N` bytes (LSP base protocol).
    ContentLength,
}

impl Framing {
    /// A decoder for this framing with the default limits.
    ///
    /// ```
    /// use rpcwire::frame::Framing;
    /// assert_eq!(Framing::Ndjson.decoder().framing(), Framing::Ndjson);
    /// ```
    pub fn decoder(self) -> FrameDecoder {
        FrameDecoder::new(self)
    }

    /// The name this framing parses from: `"ndjson"` or `"content-length"`.
    ///
    /// ```
    /// assert_eq!(rpcwire::frame::Framing::Ndjson.as_str(), "ndjson");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Framing::Ndjson => "ndjson",
            Framing::ContentLength => "content-length",
        }
    }
}

impl fmt::Display for Framing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Framing {
    type Err = ParseFramingError;

    /// `"ndjson"` or `"content-length"`, in any case.
    fn from_str(s: &str) -> Result<Framing, ParseFramingError> {
        if s.eq_ignore_ascii_case("ndjson") {
            Ok(Framing::Ndjson)
        } else if s.eq_ignore_ascii_case("content-length") {
            Ok(Framing::ContentLength)
        } else {
            Err(ParseFramingError)
        }
    }
}

/// The error from parsing a [`Framing`] out of something other than `"ndjson"` or
/// `"content-length"`.
///
/// ```
/// let error = "http".parse::<rpcwire::frame::Framing>().unwrap_err();
/// assert_eq!(error.to_string(), "unknown framing, expected `ndjson` or `content-length`");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown framing, expected `ndjson` or `content-length`")]
pub struct ParseFramingError;

/// A decoder for the framing chosen at run time: an [`NdjsonDecoder`] or a
/// [`ContentLengthDecoder`] behind one type.
///
/// ```
/// use bytes::BytesMut;
/// use rpcwire::frame::{FrameDecoder, Framing};
///
/// let mut decoder = FrameDecoder::new(Framing::Ndjson).with_max_frame(64 << 10);
/// let mut buf = BytesMut::from(&b"{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}\n"[..]);
/// assert!(decoder.decode(&mut buf)?.is_some());
/// # Ok::<(), rpcwire::frame::FrameError>(())
/// ```
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    inner: Inner,
}

#[derive(Clone, Debug)]
enum Inner {
    Ndjson(NdjsonDecoder),
    ContentLength(ContentLengthDecoder),
}

impl FrameDecoder {
    /// A decoder for `framing` with the default limits.
    ///
    /// ```
    /// use rpcwire::frame::{FrameDecoder, Framing};
    /// assert_eq!(FrameDecoder::new(Framing::ContentLength).max_frame(), rpcwire::frame::DEFAULT_MAX_FRAME);
    /// ```
    pub fn new(framing: Framing) -> FrameDecoder {
        let inner = match framing {
            Framing::Ndjson => Inner::Ndjson(NdjsonDecoder::new()),
            Framing::ContentLength => Inner::ContentLength(ContentLengthDecoder::new()),
        };
        FrameDecoder { inner }
    }

    /// Sets the largest frame accepted, in bytes.
    ///
    /// ```
    /// use rpcwire::frame::{FrameDecoder, Framing};
    /// assert_eq!(FrameDecoder::new(Framing::Ndjson).with_max_frame(100).max_frame(), 100);
    /// ```
    pub fn with_max_frame(self, max_frame: usize) -> FrameDecoder {
        let inner = match self.inner {
            Inner::Ndjson(d) => Inner::Ndjson(d.with_max_frame(max_frame)),
            Inner::ContentLength(d) => Inner::ContentLength(d.with_max_frame(max_frame)),
        };
        FrameDecoder { inner }
    }

    /// The framing this decoder reads.
    ///
    /// ```
    /// use rpcwire::frame::{FrameDecoder, Framing};
    /// assert_eq!(FrameDecoder::new(Framing::ContentLength).framing(), Framing::ContentLength);
    /// ```
    pub fn framing(&self) -> Framing {
        match self.inner {
            Inner::Ndjson(_) => Framing::Ndjson,
            Inner::ContentLength(_) => Framing::ContentLength,
        }
    }

    /// The largest frame accepted, in bytes.
    ///
    /// ```
    /// use rpcwire::frame::{FrameDecoder, Framing};
    /// assert_eq!(FrameDecoder::new(Framing::Ndjson).max_frame(), 1 << 20);
    /// ```
    pub fn max_frame(&self) -> usize {
        match &self.inner {
            Inner::Ndjson(d) => d.max_frame(),
            Inner::ContentLength(d) => d.max_frame(),
        }
    }

    /// The number of bytes consumed from the stream so far.
    ///
    /// ```
    /// use rpcwire::frame::{FrameDecoder, Framing};
    /// let mut decoder = FrameDecoder::new(Framing::Ndjson);
    /// decoder.decode(&mut bytes::BytesMut::from(&b"\n\n[1]\n"[..]))?;
    /// assert_eq!(decoder.consumed(), 6);
    /// # Ok::<(), rpcwire::frame::FrameError>(())
    /// ```
    pub fn consumed(&self) -> u64 {
        match &self.inner {
            Inner::Ndjson(d) => d.consumed(),
            Inner::ContentLength(d) => d.consumed(),
        }
    }

    /// The next frame from `buf`; see [`NdjsonDecoder::decode`] and
    /// [`ContentLengthDecoder::decode`].
    ///
    /// ```
    /// use rpcwire::frame::{FrameDecoder, Framing};
    /// let mut decoder = FrameDecoder::new(Framing::ContentLength);
    /// let mut buf = bytes::BytesMut::from(&b"Content-Length: 1\r\n\r\n"[..]);
    /// assert_eq!(decoder.decode(&mut buf)?, None);
    /// buf.extend_from_slice(b"7");
    /// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"7");
    /// # Ok::<(), rpcwire::frame::FrameError>(())
    /// ```
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        match &mut self.inner {
            Inner::Ndjson(d) => d.decode(buf),
            Inner::ContentLength(d) => d.decode(buf),
        }
    }

    /// The next frame at the end of the input; see [`NdjsonDecoder::decode_eof`] and
    /// [`ContentLengthDecoder::decode_eof`].
    ///
    /// ```
    /// use rpcwire::frame::{FrameDecoder, Framing};
    /// let mut decoder = FrameDecoder::new(Framing::Ndjson);
    /// let mut buf = bytes::BytesMut::from(&b"[1]"[..]);
    /// assert_eq!(&decoder.decode_eof(&mut buf)?.unwrap()[..], b"[1]");
    /// # Ok::<(), rpcwire::frame::FrameError>(())
    /// ```
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        match &mut self.inner {
            Inner::Ndjson(d) => d.decode_eof(buf),
            Inner::ContentLength(d) => d.decode_eof(buf),
        }
    }
}

impl From<NdjsonDecoder> for FrameDecoder {
    fn from(decoder: NdjsonDecoder) -> Self {
        FrameDecoder {
            inner: Inner::Ndjson(decoder),
        }
    }
}

impl From<ContentLengthDecoder> for FrameDecoder {
    fn from(decoder: ContentLengthDecoder) -> Self {
        FrameDecoder {
            inner: Inner::ContentLength(decoder),
        }
    }
}
