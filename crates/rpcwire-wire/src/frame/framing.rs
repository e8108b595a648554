//! `Framing`: how messages are delimited on the wire, chosen at run time; its decoder, and
//! writing frames with it (around a finished body, or around a body produced in place).

use std::fmt;
use std::str::FromStr;

use bytes::{Buf, BufMut, BytesMut};

use super::write::{encode_content_length, encode_ndjson, header, newlines_to_spaces, MAX_HEADER};

/// How messages are delimited on the wire.
///
/// Parses from (and displays as) `"ndjson"` or `"content-length"`, so it can come from a
/// command line flag or a config file.
///
/// ```
/// use rpcwire_wire::frame::Framing;
/// assert_eq!("ndjson".parse::<Framing>()?, Framing::Ndjson);
/// assert_eq!("Content-Length".parse::<Framing>()?, Framing::ContentLength);
/// assert_eq!(Framing::ContentLength.to_string(), "content-length");
/// assert!("lines".parse::<Framing>().is_err());
/// # Ok::<(), rpcwire_wire::frame::ParseFramingError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Newline-delimited JSON: one message per line.
    Ndjson,
    /// `Content-Length: N` header, empty line, `N` bytes (LSP base protocol).
    ContentLength,
}

impl Framing {
    /// The name this framing parses from: `"ndjson"` or `"content-length"`.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::frame::Framing::Ndjson.as_str(), "ndjson");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Framing::Ndjson => "ndjson",
            Framing::ContentLength => "content-length",
        }
    }

    /// Appends one frame with `body` to `dst`: [`encode_ndjson`] or
    /// [`encode_content_length`].
    ///
    /// ```
    /// use rpcwire_wire::frame::Framing;
    /// let mut dst = bytes::BytesMut::new();
    /// Framing::ContentLength.encode(b"{}", &mut dst);
    /// Framing::Ndjson.encode(b"{}", &mut dst);
    /// assert_eq!(&dst[..], b"Content-Length: 2\r\n\r\n{}{}\n");
    /// ```
    pub fn encode(&self, body: &[u8], dst: &mut BytesMut) {
        match self {
            Framing::Ndjson => encode_ndjson(body, dst),
            Framing::ContentLength => encode_content_length(body, dst),
        }
    }

    /// Starts a frame whose body the caller then appends to `dst` directly (a serializer
    /// writing into the buffer, say); [`finish`](Framing::finish) completes it.
    ///
    /// For Content-Length the header depends on the body's length, which is not known yet,
    /// so `begin` reserves a gap as wide as the longest header (40 bytes) and the body goes
    /// after it. `finish` writes the real header at the end of the gap, right before the
    /// body, and closes the unused rest of the gap by moving whichever is shorter: the
    /// bytes that were in `dst` before the frame (then dropped from `dst`'s front with
    /// `advance`, which is free) or the body. A frame written into an empty buffer — the
    /// usual case — is therefore never moved; at worst one `copy_within` of
    /// `min(body, earlier bytes)`. The length is written as plain digits, the only form LSP
    /// readers accept (no zero or space padding). No allocation when `dst` has room.
    ///
    /// ```
    /// use bytes::BufMut;
    /// use rpcwire_wire::frame::Framing;
    ///
    /// let mut dst = bytes::BytesMut::with_capacity(256);
    /// let mark = Framing::ContentLength.begin(&mut dst);
    /// dst.put_slice(br#"{"jsonrpc":"2.0","id":1,"result":"#);
    /// dst.put_slice(b"42}");
    /// Framing::ContentLength.finish(&mut dst, mark);
    /// assert_eq!(&dst[..], &b"Content-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":42}"[..]);
    /// ```
    pub fn begin(&self, dst: &mut BytesMut) -> FrameMark {
        let start = dst.len();
        if let Framing::ContentLength = self {
            dst.reserve(MAX_HEADER);
            dst.put_bytes(b' ', MAX_HEADER);
        }
        FrameMark {
            framing: *self,
            start,
            body: dst.len(),
        }
    }

    /// Completes the frame started by [`begin`](Framing::begin): everything appended to
    /// `dst` since is its body. See `begin` for how Content-Length places the header.
    ///
    /// # Panics
    ///
    /// If `mark` came from the other framing's `begin`, or if `dst` was shortened below
    /// where the body began (caller bugs, not input-dependent).
    ///
    /// ```
    /// use rpcwire_wire::frame::Framing;
    /// let mut dst = bytes::BytesMut::from(&b"Content-Length: 2\r\n\r\n[]"[..]);
    /// let mark = Framing::ContentLength.begin(&mut dst);
    /// dst.extend_from_slice(b"[1]");
    /// Framing::ContentLength.finish(&mut dst, mark);
    /// assert_eq!(&dst[..], b"Content-Length: 2\r\n\r\n[]Content-Length: 3\r\n\r\n[1]");
    /// ```
    pub fn finish(&self, dst: &mut BytesMut, mark: FrameMark) {
        assert!(
            mark.framing == *self,
            "FrameMark from {} framing finished as {}",
            mark.framing,
            self
        );
        let end = dst.len();
        assert!(
            end >= mark.body,
            "the buffer was shortened below the frame's body"
        );
        match self {
            Framing::Ndjson => {
                newlines_to_spaces(&mut dst[mark.body..end]);
                dst.put_u8(b'\n');
            }
            Framing::ContentLength => {
                let body_len = end - mark.body;
                let (header, len) = header(body_len);
                let slack = (mark.body - mark.start) - len;
                if mark.start <= body_len {
                    // Move the earlier bytes up against the header, drop the slack in front.
                    dst.copy_within(..mark.start, slack);
                    dst[mark.body - len..mark.body].copy_from_slice(&header[..len]);
                    dst.advance(slack);
                } else {
                    // Move the body down against the header, drop the slack at the end.
                    dst[mark.start..mark.start + len].copy_from_slice(&header[..len]);
                    dst.copy_within(mark.body..end, mark.start + len);
                    dst.truncate(end - slack);
                }
            }
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
/// let error = "http".parse::<rpcwire_wire::frame::Framing>().unwrap_err();
/// assert_eq!(error.to_string(), "unknown framing, expected `ndjson` or `content-length`");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown framing, expected `ndjson` or `content-length`")]
pub struct ParseFramingError;

/// Where a frame being written in place began: returned by [`Framing::begin`], consumed by
/// [`Framing::finish`].
///
/// ```
/// use rpcwire_wire::frame::Framing;
/// let mut dst = bytes::BytesMut::new();
/// let mark = Framing::Ndjson.begin(&mut dst);
/// dst.extend_from_slice(b"[]");
/// Framing::Ndjson.finish(&mut dst, mark);
/// assert_eq!(&dst[..], b"[]\n");
/// ```
#[derive(Debug)]
#[must_use = "a frame begun must be finished with `Framing::finish`"]
pub struct FrameMark {
    framing: Framing,
    /// Where the frame starts in `dst`.
    start: usize,
    /// Where the body starts in `dst` (after the reserved header gap).
    body: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_of_closing_the_gap() {
        // A short prefix before a long body: the prefix moves.
        let mut dst = BytesMut::from(&b"ab"[..]);
        let mark = Framing::ContentLength.begin(&mut dst);
        dst.extend_from_slice(&[b'x'; 100]);
        Framing::ContentLength.finish(&mut dst, mark);
        let mut expected = b"abContent-Length: 100\r\n\r\n".to_vec();
        expected.extend_from_slice(&[b'x'; 100]);
        assert_eq!(&dst[..], &expected[..]);

        // A long prefix before a short body: the body moves.
        let mut dst = BytesMut::from(&[b'p'; 100][..]);
        let mark = Framing::ContentLength.begin(&mut dst);
        dst.extend_from_slice(b"{}");
        Framing::ContentLength.finish(&mut dst, mark);
        let mut expected = vec![b'p'; 100];
        expected.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        assert_eq!(&dst[..], &expected[..]);

        // An empty body.
        let mut dst = BytesMut::new();
        let mark = Framing::ContentLength.begin(&mut dst);
        Framing::ContentLength.finish(&mut dst, mark);
        assert_eq!(&dst[..], b"Content-Length: 0\r\n\r\n");
    }

    #[test]
    #[should_panic(expected = "FrameMark from ndjson framing finished as content-length")]
    fn a_mark_from_the_other_framing_panics() {
        let mut dst = BytesMut::new();
        let mark = Framing::Ndjson.begin(&mut dst);
        Framing::ContentLength.finish(&mut dst, mark);
    }

    #[test]
    #[should_panic(expected = "shortened")]
    fn a_shortened_buffer_panics() {
        let mut dst = BytesMut::new();
        let mark = Framing::ContentLength.begin(&mut dst);
        dst.clear();
        Framing::ContentLength.finish(&mut dst, mark);
    }

    #[test]
    fn an_ndjson_frame_written_in_place_stays_one_line() {
        let mut dst = BytesMut::from(&b"[1]\n"[..]);
        let mark = Framing::Ndjson.begin(&mut dst);
        dst.extend_from_slice(b"{\"result\": [\n  1,\n  \"a\\nb\"\n]}");
        Framing::Ndjson.finish(&mut dst, mark);
        assert_eq!(&dst[..], &b"[1]\n{\"result\": [   1,   \"a\\nb\" ]}\n"[..]);
        let mut encoded = BytesMut::new();
        Framing::Ndjson.encode(b"[\n]", &mut encoded);
        assert_eq!(&encoded[..], b"[ ]\n");
    }
}
