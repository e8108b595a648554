//! Any bytes, cut into any reads: the NDJSON decoder never panics, and gives the same frames
//! and errors as when the whole input arrives in one read.
//!
//! The first bytes choose the limits and the read sizes; the rest is the stream.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rpcwire::frame::FrameDecoder;

/// A frame's bytes, or an error's text (which carries its kind, sizes and offset).
type Out = Result<Vec<u8>, String>;

/// Decodes `input` in reads of `sizes` (cycled), then to the end of the input; stops at
/// a fatal error.
fn decode(mut decoder: FrameDecoder, input: &[u8], sizes: &[usize]) -> Vec<Out> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let n = if sizes.is_empty() {
            rest.len()
        } else {
            sizes[i % sizes.len()].clamp(1, rest.len())
        };
        i += 1;
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => out.push(Ok(frame.to_vec())),
                Ok(None) => break,
                Err(e) => {
                    let fatal = !e.is_recoverable();
                    out.push(Err(e.to_string()));
                    if fatal {
                        return out;
                    }
                }
            }
        }
    }
    loop {
        match decoder.decode_eof(&mut buf) {
            Ok(Some(frame)) => out.push(Ok(frame.to_vec())),
            Ok(None) => break,
            Err(e) => {
                let fatal = !e.is_recoverable();
                out.push(Err(e.to_string()));
                if fatal {
                    return out;
                }
            }
        }
    }
    assert!(buf.is_empty(), "decode_eof left {} bytes", buf.len());
    out
}

fuzz_target!(|data: &[u8]| {
    let [limit, split, rest @ ..] = data else { return };
    // Up to 8 read sizes of 1..=16 bytes, from the next bytes.
    let count = usize::from(split % 8) + 1;
    let (sizes, stream) = rest.split_at(count.min(rest.len()));
    let sizes: Vec<usize> = sizes.iter().map(|&s| usize::from(s % 16) + 1).collect();
    let decoder = FrameDecoder::new(rpcwire::frame::Framing::Ndjson).with_max_frame(usize::from(*limit));
    let whole = decode(decoder.clone(), stream, &[]);
    assert_eq!(decode(decoder.clone(), stream, &[1]), whole, "byte at a time");
    assert_eq!(decode(decoder, stream, &sizes), whole, "reads of {sizes:?}");
});
