//! Shared by the framing fuzz targets: decode a stream in given read sizes and check that
//! any split gives the frames and errors of one read of the whole input.

use bytes::BytesMut;
use rpcwire::frame::FrameDecoder;

/// A frame's bytes, or an error's text (which carries its kind, sizes and offset).
pub type Out = Result<Vec<u8>, String>;

/// Takes every frame out of `buf` (with `decode_eof` at the end of input); `false` after a
/// fatal error.
fn drain(decoder: &mut FrameDecoder, buf: &mut BytesMut, eof: bool, out: &mut Vec<Out>) -> bool {
    loop {
        let next = if eof {
            decoder.decode_eof(buf)
        } else {
            decoder.decode(buf)
        };
        match next {
            Ok(Some(frame)) => out.push(Ok(frame.to_vec())),
            Ok(None) => return true,
            Err(e) => {
                out.push(Err(e.to_string()));
                if !e.is_recoverable() {
                    return false;
                }
            }
        }
    }
}

/// `input` cut into reads of `sizes` (cycled, each at least 1 byte; empty = one read).
pub fn reads<'a>(input: &'a [u8], sizes: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = input;
    let mut i = 0;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = if sizes.is_empty() {
            rest.len()
        } else {
            sizes[i % sizes.len()].clamp(1, rest.len())
        };
        i += 1;
        let (piece, after) = rest.split_at(n);
        rest = after;
        Some(piece)
    })
}

/// Decodes `input` in reads of `sizes` (cycled; empty = one read), then to the end of the
/// input; stops at a fatal error.
pub fn decode(mut decoder: FrameDecoder, input: &[u8], sizes: &[usize]) -> Vec<Out> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in reads(input, sizes) {
        buf.extend_from_slice(piece);
        if !drain(&mut decoder, &mut buf, false, &mut out) {
            return out;
        }
    }
    if drain(&mut decoder, &mut buf, true, &mut out) {
        assert!(buf.is_empty(), "decode_eof left {} bytes", buf.len());
    }
    out
}

/// Splits fuzz input into (limit byte, read sizes, stream), or `None` when it is too short:
/// up to 8 read sizes of 1..=16 bytes, from the bytes after the first two.
pub fn split_input(data: &[u8]) -> Option<(u8, Vec<usize>, &[u8])> {
    let [limit, split, rest @ ..] = data else {
        return None;
    };
    let count = usize::from(split % 8) + 1;
    let (sizes, stream) = rest.split_at(count.min(rest.len()));
    Some((
        *limit,
        sizes.iter().map(|&s| usize::from(s % 16) + 1).collect(),
        stream,
    ))
}

/// Any split of `stream` gives the frames and errors of one read of the whole.
pub fn check_splits(decoder: FrameDecoder, stream: &[u8], sizes: &[usize]) {
    let whole = decode(decoder.clone(), stream, &[]);
    assert_eq!(decode(decoder.clone(), stream, &[1]), whole, "byte at a time");
    assert_eq!(decode(decoder, stream, sizes), whole, "reads of {sizes:?}");
}
