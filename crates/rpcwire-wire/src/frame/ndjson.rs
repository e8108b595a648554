//! Newline-delimited JSON: one message per line.

use bytes::{Buf, Bytes, BytesMut};

use super::error::FrameError;
use super::line_scan::LineScan;
use super::DEFAULT_MAX_FRAME;

/// Cuts newline-delimited JSON into frames, one per line, over partial reads.
///
/// - Lines end with `\n`; a `\r` just before it is stripped (`\r\n` endings).
/// - Blank lines (empty, or only spaces, tabs and `\r`) are skipped.
/// - A frame is a [`Bytes`] split off the read buffer: no copy.
/// - A line longer than the maximum frame is reported once, as
///   [`FrameError::TooLarge`] with its exact length, when its end arrives; its bytes are
///   dropped as they come, never buffered, and decoding goes on with the next line.
/// - The decoder remembers how far it has searched for the newline, so a long line arriving
///   in many small reads is scanned once, not once per read.
///
/// ```
/// use bytes::BytesMut;
/// use rpcwire_wire::frame::NdjsonDecoder;
///
/// let mut decoder = NdjsonDecoder::new();
/// let mut buf = BytesMut::from(&b"{\"a\":1}\r\n\n{\"b\""[..]);
/// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"{\"a\":1}");
/// assert_eq!(decoder.decode(&mut buf)?, None); // the second line is not complete yet
/// buf.extend_from_slice(b":2}\n");
/// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"{\"b\":2}");
/// assert!(buf.is_empty());
/// # Ok::<(), rpcwire_wire::frame::FrameError>(())
/// ```
#[derive(Clone, Debug)]
pub struct NdjsonDecoder {
    max_frame: usize,
    /// The search for the line's `\n`, resumed across reads.
    scan: LineScan,
    /// Set while the rest of an oversized line is being dropped.
    discard: Option<Discard>,
    /// Stream offset of the buffer's first byte: everything consumed so far.
    consumed: u64,
}

/// An oversized line being dropped as it arrives.
#[derive(Clone, Copy, Debug)]
struct Discard {
    /// Bytes of the line dropped so far (saturating).
    len: usize,
    /// The last byte dropped, to leave a final `\r` out of the reported length.
    last: u8,
    /// Stream offset of the line's first byte.
    offset: u64,
}

impl Discard {
    fn extend(&mut self, bytes: &[u8]) {
        self.len = self.len.saturating_add(bytes.len());
        if let Some(&last) = bytes.last() {
            self.last = last;
        }
    }

    fn error(self, limit: usize) -> FrameError {
        let len = self.len - usize::from(self.last == b'\r' && self.len > 0);
        FrameError::TooLarge {
            len,
            limit,
            offset: self.offset,
        }
    }
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        NdjsonDecoder::new()
    }
}

impl NdjsonDecoder {
    /// A decoder with the default maximum frame, [`DEFAULT_MAX_FRAME`] (1 MiB).
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::frame::NdjsonDecoder::new().max_frame(), 1 << 20);
    /// ```
    pub fn new() -> NdjsonDecoder {
        NdjsonDecoder {
            max_frame: DEFAULT_MAX_FRAME,
            scan: LineScan::default(),
            discard: None,
            consumed: 0,
        }
    }

    /// Sets the longest line accepted, in bytes, not counting its line ending.
    ///
    /// ```
    /// let decoder = rpcwire_wire::frame::NdjsonDecoder::new().with_max_frame(4096);
    /// assert_eq!(decoder.max_frame(), 4096);
    /// ```
    pub fn with_max_frame(mut self, max_frame: usize) -> NdjsonDecoder {
        self.max_frame = max_frame;
        self
    }

    /// The longest line accepted, in bytes.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::frame::NdjsonDecoder::new().with_max_frame(10).max_frame(), 10);
    /// ```
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// The number of bytes consumed from the stream so far.
    ///
    /// ```
    /// let mut decoder = rpcwire_wire::frame::NdjsonDecoder::new();
    /// let mut buf = bytes::BytesMut::from(&b"[1]\r\n"[..]);
    /// decoder.decode(&mut buf)?;
    /// assert_eq!(decoder.consumed(), 5);
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
    /// ```
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The next frame from `buf`, `Ok(None)` if `buf` holds no complete line yet.
    ///
    /// Consumes the frame and its line ending (and any blank lines before it) from `buf`,
    /// leaving a partial line in place for the next call, which must get the same buffer
    /// with more bytes appended (`tokio_util::codec::Decoder`'s contract).
    ///
    /// ```
    /// let mut decoder = rpcwire_wire::frame::NdjsonDecoder::new();
    /// let mut buf = bytes::BytesMut::from(&b"1\n2\n"[..]);
    /// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"1");
    /// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"2");
    /// assert_eq!(decoder.decode(&mut buf)?, None);
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
    /// ```
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        loop {
            if let Some(discard) = &mut self.discard {
                return match memchr::memchr(b'\n', buf) {
                    Some(end) => {
                        discard.extend(&buf[..end]);
                        let error = discard.error(self.max_frame);
                        self.discard = None;
                        self.consume(buf, end + 1);
                        Err(error)
                    }
                    None => {
                        discard.extend(buf);
                        self.consumed += buf.len() as u64;
                        buf.clear();
                        Ok(None)
                    }
                };
            }
            match self.scan.find(buf) {
                Some(end) => {
                    if let Some(frame) = self.take_line(buf, end, end + 1)? {
                        return Ok(Some(frame));
                    }
                    // A blank line: look for the next one.
                }
                None if buf.len() > self.max_frame.saturating_add(1) => {
                    // Too long even if a `\r\n` follows: drop it as it comes.
                    self.discard = Some(Discard {
                        len: 0,
                        last: 0,
                        offset: self.consumed,
                    });
                    self.scan.reset();
                }
                None => return Ok(None),
            }
        }
    }

    /// Like [`decode`](NdjsonDecoder::decode), at the end of the input: a last line without a
    /// final `\n` is a frame too. Returns `Ok(None)`, with `buf` empty, once nothing is left.
    ///
    /// ```
    /// let mut decoder = rpcwire_wire::frame::NdjsonDecoder::new();
    /// let mut buf = bytes::BytesMut::from(&b"[1]\n[2]"[..]);
    /// assert_eq!(&decoder.decode_eof(&mut buf)?.unwrap()[..], b"[1]");
    /// assert_eq!(&decoder.decode_eof(&mut buf)?.unwrap()[..], b"[2]");
    /// assert_eq!(decoder.decode_eof(&mut buf)?, None);
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
    /// ```
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if let Some(discard) = self.discard.take() {
            // `decode` dropped everything while discarding: `buf` is empty.
            return Err(discard.error(self.max_frame));
        }
        let end = buf.len();
        if end == 0 {
            return Ok(None);
        }
        self.take_line(buf, end, end)
    }

    /// Takes the line `buf[..end]` (its terminator runs to `next`) out of `buf`: a frame,
    /// `None` for a blank line, or an error for a line that is too long.
    fn take_line(
        &mut self,
        buf: &mut BytesMut,
        end: usize,
        next: usize,
    ) -> Result<Option<Bytes>, FrameError> {
        self.scan.reset();
        let line = &buf[..end];
        let len = match line.last() {
            Some(b'\r') => end - 1,
            _ => end,
        };
        if len > self.max_frame {
            let error = FrameError::TooLarge {
                len,
                limit: self.max_frame,
                offset: self.consumed,
            };
            self.consume(buf, next);
            return Err(error);
        }
        if line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            self.consume(buf, next);
            return Ok(None);
        }
        let frame = buf.split_to(len).freeze();
        buf.advance(next - len);
        self.consumed += next as u64;
        Ok(Some(frame))
    }

    fn consume(&mut self, buf: &mut BytesMut, n: usize) {
        buf.advance(n);
        self.consumed += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_scanned_once() {
        let mut decoder = NdjsonDecoder::new();
        let mut buf = BytesMut::new();
        for _ in 0..100 {
            buf.extend_from_slice(b"xxxxxxxxxx");
            assert_eq!(decoder.decode(&mut buf).unwrap(), None);
            assert_eq!(decoder.scan.searched(), buf.len());
        }
        buf.extend_from_slice(b"\n");
        assert_eq!(decoder.decode(&mut buf).unwrap().unwrap().len(), 1000);
        assert_eq!(decoder.scan.searched(), 0);
    }

    #[test]
    fn a_shrunk_buffer_does_not_confuse_the_scan_mark() {
        let mut decoder = NdjsonDecoder::new();
        let mut buf = BytesMut::from(&b"partial"[..]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        buf.clear();
        buf.extend_from_slice(b"a\n");
        assert_eq!(&decoder.decode(&mut buf).unwrap().unwrap()[..], b"a");
    }

    #[test]
    fn discarding_keeps_nothing_buffered() {
        let mut decoder = NdjsonDecoder::new().with_max_frame(4);
        let mut buf = BytesMut::from(&b"0123456789"[..]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty());
        buf.extend_from_slice(b"abc\r");
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty());
        buf.extend_from_slice(b"\nok\n");
        let error = decoder.decode(&mut buf).unwrap_err();
        assert!(
            matches!(
                error,
                FrameError::TooLarge {
                    len: 13,
                    limit: 4,
                    offset: 0
                }
            ),
            "{error:?}"
        );
        assert_eq!(&decoder.decode(&mut buf).unwrap().unwrap()[..], b"ok");
        assert_eq!(decoder.consumed(), 18);
    }
}
