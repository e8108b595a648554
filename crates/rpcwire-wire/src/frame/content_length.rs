//! Content-Length framing, as spoken over stdio by LSP and MCP peers.

use bytes::{Buf, Bytes, BytesMut};

use super::error::{FrameError, HeaderError};
use super::line_scan::LineScan;
use super::{DEFAULT_MAX_FRAME, DEFAULT_MAX_HEADER};

/// Cuts a `Content-Length` framed stream (LSP base protocol) into frames over partial reads.
///
/// A frame is a header — lines `Name: value\r\n`, ended by an empty line `\r\n` — then exactly
/// `Content-Length` bytes of body. What is accepted:
///
/// - header names in any case; `Content-Length` is required, once; its value is plain
///   decimal digits, with spaces or tabs around it allowed;
/// - any `Content-Type` (`application/vscode-jsonrpc; charset=utf-8`, python-lsp-jsonrpc's
///   `charset=utf8`, …) and any other header, ignored;
/// - lines ending in `\r\n` or a bare `\n`.
///
/// vscode-jsonrpc writes `Content-Length: N\r\n\r\n`; python-lsp-jsonrpc adds a
/// `Content-Type` line: both decode. A declared length above the maximum frame is a
/// recoverable [`FrameError::TooLarge`] reported before anything is reserved for it; the
/// body is then skipped as it arrives, never buffered. A header that cannot be trusted is a
/// fatal [`FrameError::BadHeader`], and so is a header longer than the header limit
/// ([`DEFAULT_MAX_HEADER`], 8 KiB), so that endless header bytes cannot make the buffer grow.
///
/// ```
/// use bytes::BytesMut;
/// use rpcwire_wire::frame::ContentLengthDecoder;
///
/// let mut decoder = ContentLengthDecoder::new();
/// let mut buf = BytesMut::from(&b"Content-Length: 2\r\n\r\n[]content-length:3\r\n\r\n[1"[..]);
/// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"[]");
/// assert_eq!(decoder.decode(&mut buf)?, None); // one body byte still to come
/// buf.extend_from_slice(b"]");
/// assert_eq!(&decoder.decode(&mut buf)?.unwrap()[..], b"[1]");
/// # Ok::<(), rpcwire_wire::frame::FrameError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ContentLengthDecoder {
    max_frame: usize,
    max_header: usize,
    state: State,
    /// Stream offset of the buffer's first byte: everything consumed so far.
    consumed: u64,
}

#[derive(Clone, Copy, Debug)]
enum State {
    /// Reading header lines; complete lines are consumed as they are parsed.
    Header(Header),
    /// Waiting for a body of `len` bytes; the frame started at `offset`.
    Body { len: usize, offset: u64 },
    /// Dropping the rest of an oversized body.
    Skip { remaining: usize },
    /// A fatal header error: every call returns it again.
    Failed { reason: HeaderError, offset: u64 },
}

#[derive(Clone, Copy, Debug, Default)]
struct Header {
    /// Header bytes consumed so far (complete lines).
    len: usize,
    /// The search for the line's `\n`, resumed across reads.
    scan: LineScan,
    content_length: Option<usize>,
}

impl Default for ContentLengthDecoder {
    fn default() -> Self {
        ContentLengthDecoder::new()
    }
}

impl ContentLengthDecoder {
    /// A decoder with the default limits: frames up to [`DEFAULT_MAX_FRAME`] (1 MiB),
    /// headers up to [`DEFAULT_MAX_HEADER`] (8 KiB).
    ///
    /// ```
    /// let decoder = rpcwire_wire::frame::ContentLengthDecoder::new();
    /// assert_eq!((decoder.max_frame(), decoder.max_header()), (1 << 20, 8 << 10));
    /// ```
    pub fn new() -> ContentLengthDecoder {
        ContentLengthDecoder {
            max_frame: DEFAULT_MAX_FRAME,
            max_header: DEFAULT_MAX_HEADER,
            state: State::Header(Header::default()),
            consumed: 0,
        }
    }

    /// Sets the largest `Content-Length` accepted, in bytes.
    ///
    /// ```
    /// let decoder = rpcwire_wire::frame::ContentLengthDecoder::new().with_max_frame(64 << 10);
    /// assert_eq!(decoder.max_frame(), 64 << 10);
    /// ```
    pub fn with_max_frame(mut self, max_frame: usize) -> ContentLengthDecoder {
        self.max_frame = max_frame;
        self
    }

    /// Sets the longest header accepted, in bytes, counting every header line and the
    /// empty line that ends the header.
    ///
    /// ```
    /// let decoder = rpcwire_wire::frame::ContentLengthDecoder::new().with_max_header(1024);
    /// assert_eq!(decoder.max_header(), 1024);
    /// ```
    pub fn with_max_header(mut self, max_header: usize) -> ContentLengthDecoder {
        self.max_header = max_header;
        self
    }

    /// The largest `Content-Length` accepted, in bytes.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::frame::ContentLengthDecoder::new().max_frame(), rpcwire_wire::frame::DEFAULT_MAX_FRAME);
    /// ```
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// The longest header accepted, in bytes.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::frame::ContentLengthDecoder::new().max_header(), rpcwire_wire::frame::DEFAULT_MAX_HEADER);
    /// ```
    pub fn max_header(&self) -> usize {
        self.max_header
    }

    /// The number of bytes consumed from the stream so far.
    ///
    /// ```
    /// let mut decoder = rpcwire_wire::frame::ContentLengthDecoder::new();
    /// let mut buf = bytes::BytesMut::from(&b"Content-Length: 2\r\n\r\n{}"[..]);
    /// decoder.decode(&mut buf)?;
    /// assert_eq!(decoder.consumed(), 23);
    /// # Ok::<(), rpcwire_wire::frame::FrameError>(())
    /// ```
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The next frame's body from `buf`, `Ok(None)` if `buf` holds no complete frame yet.
    ///
    /// Consumes what it returns (header lines are consumed as they are parsed), leaving a
    /// partial frame's bytes for the next call, which must get the same buffer with more
    /// bytes appended (`tokio_util::codec::Decoder`'s contract). It never reserves room in
    /// `buf`: growing the buffer is the read loop's call (a reservation made while earlier
    /// frames still share the buffer would have to allocate a new one).
    ///
    /// ```
    /// use rpcwire_wire::frame::{ContentLengthDecoder, FrameError, HeaderError};
    /// let mut decoder = ContentLengthDecoder::new();
    /// let mut buf = bytes::BytesMut::from(&b"Content-Type: x\r\n\r\n{}"[..]);
    /// let error = decoder.decode(&mut buf).unwrap_err();
    /// assert!(matches!(error, FrameError::BadHeader { reason: HeaderError::MissingContentLength, offset: 0 }));
    /// ```
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        loop {
            match &mut self.state {
                State::Failed { reason, offset } => {
                    return Err(FrameError::BadHeader {
                        reason: *reason,
                        offset: *offset,
                    })
                }
                State::Skip { remaining } => {
                    let n = (*remaining).min(buf.len());
                    *remaining -= n;
                    let done = *remaining == 0;
                    self.consume(buf, n);
                    if !done {
                        return Ok(None);
                    }
                    self.state = State::Header(Header::default());
                }
                &mut State::Body { len, .. } => {
                    if buf.len() < len {
                        return Ok(None);
                    }
                    let frame = buf.split_to(len).freeze();
                    self.consumed += len as u64;
                    self.state = State::Header(Header::default());
                    return Ok(Some(frame));
                }
                State::Header(header) => {
                    let mut header = *header;
                    let outcome = self.header_line(buf, &mut header);
                    match outcome {
                        Err(reason) => {
                            let offset = self.consumed - header.len as u64;
                            self.state = State::Failed { reason, offset };
                        }
                        Ok(Line::Partial) => {
                            self.state = State::Header(header);
                            return Ok(None);
                        }
                        Ok(Line::Field) => self.state = State::Header(header),
                        Ok(Line::End) => {
                            let offset = self.consumed - header.len as u64;
                            match header.content_length {
                                None => {
                                    self.state = State::Failed {
                                        reason: HeaderError::MissingContentLength,
                                        offset,
                                    }
                                }
                                Some(len) if len > self.max_frame => {
                                    self.state = State::Skip { remaining: len };
                                    return Err(FrameError::TooLarge {
                                        len,
                                        limit: self.max_frame,
                                        offset,
                                    });
                                }
                                Some(len) => self.state = State::Body { len, offset },
                            }
                        }
                    }
                }
            }
        }
    }

    /// Like [`decode`](ContentLengthDecoder::decode), at the end of the input: a partial
    /// header or body left in `buf` is a [`FrameError::Truncated`] (the partial bytes are
    /// dropped); `Ok(None)`, with `buf` empty, once nothing is left.
    ///
    /// ```
    /// use rpcwire_wire::frame::{ContentLengthDecoder, FrameError};
    /// let mut decoder = ContentLengthDecoder::new();
    /// let mut buf = bytes::BytesMut::from(&b"Content-Length: 10\r\n\r\n{\"a\""[..]);
    /// let error = decoder.decode_eof(&mut buf).unwrap_err();
    /// assert!(matches!(error, FrameError::Truncated { expected: Some(10), got: 4, offset: 0 }));
    /// assert_eq!(decoder.decode_eof(&mut buf)?, None);
    /// # Ok::<(), FrameError>(())
    /// ```
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        let error = match self.state {
            State::Header(header) if header.len == 0 && buf.is_empty() => return Ok(None),
            State::Header(header) => FrameError::Truncated {
                expected: None,
                got: header.len.saturating_add(buf.len()),
                offset: self.consumed - header.len as u64,
            },
            State::Body { len, offset } => FrameError::Truncated {
                expected: Some(len),
                got: buf.len(),
                offset,
            },
            // Skipping an oversized body (already reported as `TooLarge`): `decode` dropped
            // all there was; nothing more to say. `Failed` returned from `decode` above.
            State::Skip { .. } | State::Failed { .. } => return Ok(None),
        };
        self.consumed += buf.len() as u64;
        buf.clear();
        self.state = State::Header(Header::default());
        Err(error)
    }

    /// Parses the next header line of `buf` into `header`, consuming it.
    fn header_line(&mut self, buf: &mut BytesMut, header: &mut Header) -> Result<Line, HeaderError> {
        let too_long = HeaderError::TooLong {
            limit: self.max_header,
        };
        let Some(end) = header.scan.find(buf) else {
            if header.len.saturating_add(buf.len()) > self.max_header {
                return Err(too_long);
            }
            return Ok(Line::Partial);
        };
        if header.len.saturating_add(end + 1) > self.max_header {
            return Err(too_long);
        }
        let line = &buf[..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let outcome = parse_line(line, header)?;
        header.len += end + 1;
        header.scan.reset();
        self.consume(buf, end + 1);
        Ok(outcome)
    }

    fn consume(&mut self, buf: &mut BytesMut, n: usize) {
        buf.advance(n);
        self.consumed += n as u64;
    }
}

/// What a header line was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    /// No complete line in the buffer yet.
    Partial,
    /// A `Name: value` line.
    Field,
    /// The empty line ending the header.
    End,
}

/// Parses one header line (without its line ending).
fn parse_line(line: &[u8], header: &mut Header) -> Result<Line, HeaderError> {
    if line.is_empty() {
        return Ok(Line::End);
    }
    let colon = memchr::memchr(b':', line).ok_or(HeaderError::Malformed)?;
    let (name, value) = line.split_at(colon);
    if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
        return Err(HeaderError::Malformed);
    }
    if name.eq_ignore_ascii_case(b"content-length") {
        if header.content_length.is_some() {
            return Err(HeaderError::DuplicateContentLength);
        }
        let value = value.get(1..).unwrap_or_default();
        header.content_length = Some(parse_length(trim(value))?);
    }
    Ok(Line::Field)
}

/// An RFC 9110 `tchar`: the bytes a header name is made of.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn trim(value: &[u8]) -> &[u8] {
    let is_space = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !is_space(b)).unwrap_or(value.len());
    let end = value.iter().rposition(|b| !is_space(b)).map_or(start, |i| i + 1);
    value.get(start..end).unwrap_or_default()
}

/// Plain decimal digits, checked for overflow.
fn parse_length(digits: &[u8]) -> Result<usize, HeaderError> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(HeaderError::InvalidContentLength);
    }
    digits.iter().try_fold(0usize, |n, &d| {
        n.checked_mul(10)
            .and_then(|n| n.checked_add(usize::from(d - b'0')))
            .ok_or(HeaderError::ContentLengthOverflow)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        assert_eq!(parse_length(b"0"), Ok(0));
        assert_eq!(parse_length(b"007"), Ok(7));
        assert_eq!(parse_length(b"18446744073709551615"), Ok(usize::MAX));
        for bad in [&b""[..], b"-1", b"+1", b"1.0", b"0x10", b"1 2", b"\xff"] {
            assert_eq!(parse_length(bad), Err(HeaderError::InvalidContentLength));
        }
        assert_eq!(
            parse_length(b"18446744073709551616"),
            Err(HeaderError::ContentLengthOverflow)
        );
    }

    #[test]
    fn trimming() {
        assert_eq!(trim(b" \t12 \t"), b"12");
        assert_eq!(trim(b"   "), b"");
        assert_eq!(trim(b""), b"");
        assert_eq!(trim(b"1"), b"1");
    }

    #[test]
    fn names_are_tokens() {
        let mut header = Header::default();
        for bad in [
            &b": 1"[..],
            b"Content Length: 1",
            b"Content-Length : 1",
            b"{\"a\":1}",
            b"no colon",
        ] {
            assert_eq!(
                parse_line(bad, &mut header),
                Err(HeaderError::Malformed),
                "{bad:?}"
            );
        }
        assert_eq!(
            parse_line(b"X-Custom_1: anything: here", &mut header),
            Ok(Line::Field)
        );
        assert_eq!(header.content_length, None);
        assert_eq!(parse_line(b"CONTENT-LENGTH:5", &mut header), Ok(Line::Field));
        assert_eq!(header.content_length, Some(5));
    }
}
