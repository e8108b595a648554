//! Writing frames: a finished body, or a body produced in place.

use bytes::{Buf, BufMut, BytesMut};

use super::decoder::Framing;

const PREFIX: &[u8] = b"Content-Length: ";
const END: &[u8] = b"\r\n\r\n";
/// `usize::MAX` has 20 decimal digits.
const MAX_DIGITS: usize = 20;
/// The longest header [`encode_content_length`] writes.
const MAX_HEADER: usize = PREFIX.len() + MAX_DIGITS + END.len();

/// `Content-Length: {len}\r\n\r\n` on the stack, without `fmt`: the bytes and their count.
fn header(len: usize) -> ([u8; MAX_HEADER], usize) {
    let mut digits = [0u8; MAX_DIGITS];
    let mut at = MAX_DIGITS;
    let mut n = len;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    let mut out = [0u8; MAX_HEADER];
    let total = PREFIX.len() + digits.len() + END.len();
    out[..PREFIX.len()].copy_from_slice(PREFIX);
    out[PREFIX.len()..PREFIX.len() + digits.len()].copy_from_slice(digits);
    out[PREFIX.len() + digits.len()..total].copy_from_slice(END);
    (out, total)
}

/// Appends `body` and a `\n` to `dst`.
///
/// `body` must not contain a `\n` (compact JSON never does: a newline inside a string is
/// written `\n` escaped). Reserves room for the whole frame at once; allocates nothing when
/// `dst` already has it.
///
/// ```
/// let mut dst = bytes::BytesMut::new();
/// rpcwire::frame::encode_ndjson(br#"{"jsonrpc":"2.0","id":1,"result":0}"#, &mut dst);
/// assert_eq!(&dst[..], b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":0}\n");
/// ```
pub fn encode_ndjson(body: &[u8], dst: &mut BytesMut) {
    dst.reserve(body.len() + 1);
    dst.put_slice(body);
    dst.put_u8(b'\n');
}

/// Appends `Content-Length: {body.len()}\r\n\r\n` and `body` to `dst`: the header
/// vscode-jsonrpc writes, which every LSP peer reads. The length counts bytes.
///
/// Reserves room for the whole frame at once; allocates nothing when `dst` already has it.
///
/// ```
/// let mut dst = bytes::BytesMut::new();
/// rpcwire::frame::encode_content_length("{\"é\":1}".as_bytes(), &mut dst);
/// assert_eq!(&dst[..], "Content-Length: 8\r\n\r\n{\"é\":1}".as_bytes());
/// ```
pub fn encode_content_length(body: &[u8], dst: &mut BytesMut) {
    let (header, len) = header(body.len());
    dst.reserve(len + body.len());
    dst.put_slice(&header[..len]);
    dst.put_slice(body);
}

/// Where a frame being written in place began: returned by [`Framing::begin`], consumed by
/// [`Framing::finish`].
///
/// ```
/// use rpcwire::frame::Framing;
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

impl Framing {
    /// Appends one frame with `body` to `dst`: [`encode_ndjson`] or
    /// [`encode_content_length`].
    ///
    /// ```
    /// use rpcwire::frame::Framing;
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
    /// use rpcwire::frame::Framing;
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
    /// use rpcwire::frame::Framing;
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
            Framing::Ndjson => dst.put_u8(b'\n'),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        for (len, text) in [
            (0, "Content-Length: 0\r\n\r\n"),
            (9, "Content-Length: 9\r\n\r\n"),
            (10, "Content-Length: 10\r\n\r\n"),
            (1234567, "Content-Length: 1234567\r\n\r\n"),
            (usize::MAX, "Content-Length: 18446744073709551615\r\n\r\n"),
        ] {
            let (bytes, n) = header(len);
            assert_eq!(&bytes[..n], text.as_bytes());
        }
        assert_eq!(header(usize::MAX).1, MAX_HEADER);
    }

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
}
