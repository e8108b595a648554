//! `FrameDecoder`: a decoder for the framing chosen at run time.

use bytes::{Bytes, BytesMut};

use super::content_length::ContentLengthDecoder;
use super::error::FrameError;
use super::framing::Framing;
use super::ndjson::NdjsonDecoder;

/// A decoder for the framing chosen at run time: an [`NdjsonDecoder`] or a
/// [`ContentLengthDecoder`] behind one type.
///
/// ```
/// use bytes::BytesMut;
/// use rpcwire_wire::frame::{FrameDecoder, Framing};
///
/// let mut decoder = FrameDecoder::new(Framing::Ndjson).with_max_frame(64 << 10);
/// let mut buf = BytesMut::from(&b"{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}\n"[..]);
/// assert!(decoder.decode(&mut buf)?.is_some());
/// # Ok::<(), rpcwire_wire::frame::FrameError>(())
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

// Here rather than beside `Framing`, so that the framing knows nothing of the decoder.
impl Framing {
    /// A decoder for this framing with the default limits.
    ///
    /// ```
    /// use rpcwire_wire::frame::Framing;
    /// assert_eq!(Framing::Ndjson.decoder().framing(), Framing::Ndjson);
    /// ```
    pub fn decoder(self) -> FrameDecoder {
        FrameDecoder::new(self)
    }
}

impl FrameDecoder {
    /// A decoder for `framing` with the default limits.
    ///
    /// ```
    /// use rpcwire_wire::frame::{FrameDecoder, Framing};
    /// assert_eq!(FrameDecoder::new(Framing::ContentLength).max_frame(), rpcwire_wire::frame::DEFAULT_MAX_FRAME);
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
    /// use rpcwire_wire::frame::{FrameDecoder, Framing};
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
    /// use rpcwire_wire::frame::{FrameDecoder, Framing};
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
    /// use rpcwire_wire::frame::{FrameDecoder, Framing};
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
    /// use rpcwire_wire::frame::{FrameDecoder, Framing};
    /// let mut decoder = FrameDecoder::new(Framing::Ndjson);
    /// decoder.decode(&mut bytes::BytesMut::from(&b"\n\n[1]\n"[..]))?;
    /// assert_eq!(decoder.consumed(), 6);
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
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
    /// use rpcwire_wire::frame::{FrameDecoder, Framing};
    /// let mut decoder = FrameDecoder::new(Framing::ContentLength);
    /// let mut buf = bytes::BytesMut::from(&b"Content-Length: 1\r\n\r\n"[..]);
    /// assert_eq!(decoder.decode(&mut buf)?, None);
    /// buf.extend_from_slice(b"7");
    /// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"7");
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
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
    /// use rpcwire_wire::frame::{FrameDecoder, Framing};
    /// let mut decoder = FrameDecoder::new(Framing::Ndjson);
    /// let mut buf = bytes::BytesMut::from(&b"[1]"[..]);
    /// assert_eq!(&decoder.decode_eof(&mut buf)?.unwrap()[..], b"[1]");
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
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
