//! Writing frames around a finished body, and the Content-Length header.

use bytes::{BufMut, BytesMut};

use crate::json::decimal::{self, MAX_DIGITS};

const PREFIX: &[u8] = b"Content-Length: ";
const END: &[u8] = b"\r\n\r\n";
/// The longest header [`encode_content_length`] writes.
pub(super) const MAX_HEADER: usize = PREFIX.len() + MAX_DIGITS + END.len();

/// `Content-Length: {len}\r\n\r\n` on the stack, without `fmt`: the bytes and their count.
pub(super) fn header(len: usize) -> ([u8; MAX_HEADER], usize) {
    let mut buf = [0; MAX_DIGITS];
    let digits = decimal::digits(len as u64, &mut buf);
    let mut out = [0u8; MAX_HEADER];
    let total = PREFIX.len() + digits.len() + END.len();
    out[..PREFIX.len()].copy_from_slice(PREFIX);
    out[PREFIX.len()..PREFIX.len() + digits.len()].copy_from_slice(digits);
    out[PREFIX.len() + digits.len()..total].copy_from_slice(END);
    (out, total)
}

/// Appends `body` and a `\n` to `dst`.
///
/// `body` is one JSON message or batch. A raw `\n` byte in valid JSON can only be
/// whitespace (inside a string a newline is written `\n`, escaped), so any in `body` — say, from
/// pretty-printed raw params or results — is written as a space: the frame stays one line.
/// Reserves room for the whole frame at once; allocates nothing when `dst` already has it.
///
/// ```
/// let mut dst = bytes::BytesMut::new();
/// rpcwire_wire::frame::encode_ndjson(br#"{"jsonrpc":"2.0","id":1,"result":0}"#, &mut dst);
/// assert_eq!(&dst[..], b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":0}\n");
///
/// dst.clear();
/// rpcwire_wire::frame::encode_ndjson(b"{\"result\": [\n  1\n]}", &mut dst);
/// assert_eq!(&dst[..], b"{\"result\": [   1 ]}\n");
/// ```
pub fn encode_ndjson(body: &[u8], dst: &mut BytesMut) {
    dst.reserve(body.len() + 1);
    let start = dst.len();
    dst.put_slice(body);
    newlines_to_spaces(&mut dst[start..]);
    dst.put_u8(b'\n');
}

/// Turns every `\n` in `body` (JSON, where a raw newline is whitespace) into a space, so that
/// an NDJSON frame stays one line.
#[inline]
pub(super) fn newlines_to_spaces(body: &mut [u8]) {
    let mut from = 0;
    while let Some(at) = memchr::memchr(b'\n', &body[from..]) {
        body[from + at] = b' ';
        from += at + 1;
    }
}

/// Appends `Content-Length: {body.len()}\r\n\r\n` and `body` to `dst`: the header
/// vscode-jsonrpc writes, which every LSP peer reads. The length counts bytes.
///
/// Reserves room for the whole frame at once; allocates nothing when `dst` already has it.
///
/// ```
/// let mut dst = bytes::BytesMut::new();
/// rpcwire_wire::frame::encode_content_length("{\"é\":1}".as_bytes(), &mut dst);
/// assert_eq!(&dst[..], "Content-Length: 8\r\n\r\n{\"é\":1}".as_bytes());
/// ```
pub fn encode_content_length(body: &[u8], dst: &mut BytesMut) {
    let (header, len) = header(body.len());
    dst.reserve(len + body.len());
    dst.put_slice(&header[..len]);
    dst.put_slice(body);
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
}
