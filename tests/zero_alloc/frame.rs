//! Zero heap allocations per frame in steady state (DESIGN.md, principle 6), for both
//! framings: decoding from a reused `BytesMut` (frames dropped before the next read) and
//! encoding into a reused `BytesMut`. Counted by a global allocator, as in
//! `tests/zero_alloc/parse.rs`.

use bytes::{Bytes, BytesMut};
use rpcwire::frame::{encode_content_length, encode_ndjson, FrameDecoder, Framing};
use rpcwire::pool::BufferPool;

use crate::counting_alloc::allocations;

const MESSAGES: [&[u8]; 5] = [
    br#"{"jsonrpc":"2.0","id":42,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#,
    br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"uri":"file:///a.rs","version":3}}"#,
    br#"{"jsonrpc":"2.0","id":42,"result":"0x0234c8a3397aab58"}"#,
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    br#"[]"#,
];

/// A wire image of many frames, so reads cut frames at ever different places.
fn wire(framing: Framing, frames: usize) -> Vec<u8> {
    let mut wire = BytesMut::new();
    for i in 0..frames {
        framing.encode(MESSAGES[i % MESSAGES.len()], &mut wire);
        if i % 7 == 0 && framing == Framing::Ndjson {
            wire.extend_from_slice(b"\r\n"); // a blank line now and then
        }
    }
    wire.to_vec()
}

/// Reads `wire` into `buf` in chunks of `read` bytes, decoding after each read; frames are
/// kept (in a pre-sized Vec) until the next read, then dropped. Returns the frame count and
/// the body bytes seen.
fn decode_all(
    decoder: &mut FrameDecoder,
    buf: &mut BytesMut,
    wire: &[u8],
    read: usize,
    held: &mut Vec<Bytes>,
) -> (usize, usize) {
    let (mut frames, mut bytes) = (0, 0);
    for chunk in wire.chunks(read) {
        held.clear();
        buf.extend_from_slice(chunk);
        while let Some(frame) = decoder.decode(buf).expect("valid frames") {
            frames += 1;
            bytes += frame.len();
            held.push(frame);
        }
    }
    held.clear();
    (frames, bytes)
}

#[test]
fn counter_sees_allocations() {
    assert!(allocations(|| Vec::<u8>::with_capacity(8)) >= 1);
    // Decoding into a buffer too small for the frames does allocate.
    let wire = wire(Framing::ContentLength, 10);
    let mut decoder = FrameDecoder::new(Framing::ContentLength);
    let mut held = Vec::with_capacity(64);
    assert!(allocations(|| decode_all(&mut decoder, &mut BytesMut::new(), &wire, 1000, &mut held)) >= 1);
}

#[test]
fn decoding_in_steady_state_allocates_nothing() {
    const FRAMES: usize = 12_000;
    for framing in [Framing::Ndjson, Framing::ContentLength] {
        let wire = wire(framing, FRAMES);
        for read in [4096, 1000, 97] {
            let mut decoder = FrameDecoder::new(framing);
            let mut buf = BytesMut::with_capacity(16 * 1024);
            let mut held = Vec::with_capacity(256);
            // Warm up: the first `split_to` turns the buffer into a shared one (one
            // allocation); from then on `reserve` reclaims it once the frames are dropped.
            let warm = decode_all(&mut decoder, &mut buf, &wire[..wire.len() / 10], read, &mut held);
            let rest = &wire[wire.len() / 10..];
            let mut seen = (0, 0);
            let count = allocations(|| seen = decode_all(&mut decoder, &mut buf, rest, read, &mut held));
            assert_eq!(count, 0, "{framing}, reads of {read} bytes");
            assert!(seen.0 >= 10_000, "{} frames", seen.0);
            // Every frame came out, whole.
            let mut tail = held;
            while let Some(frame) = decoder.decode_eof(&mut buf).unwrap() {
                tail.push(frame);
            }
            let total: usize = (0..FRAMES).map(|i| MESSAGES[i % MESSAGES.len()].len()).sum();
            assert_eq!(warm.0 + seen.0 + tail.len(), FRAMES);
            assert_eq!(
                warm.1 + seen.1 + tail.iter().map(Bytes::len).sum::<usize>(),
                total
            );
        }
    }
}

#[test]
fn decoding_from_a_pooled_buffer_allocates_nothing() {
    let pool = BufferPool::new(4, 8 * 1024, 64 * 1024);
    let wire = wire(Framing::ContentLength, 11_000);
    let mut decoder = FrameDecoder::new(Framing::ContentLength);
    let mut held = Vec::with_capacity(256);
    let mut buf = pool.get();
    decode_all(&mut decoder, &mut buf, &wire[..wire.len() / 10], 2048, &mut held);
    let count = allocations(|| decode_all(&mut decoder, &mut buf, &wire[wire.len() / 10..], 2048, &mut held));
    assert_eq!(count, 0);
    drop(buf);
    assert_eq!(pool.stats().returns, 1);
}

#[test]
fn encoding_into_a_reused_buffer_allocates_nothing() {
    let mut dst = BytesMut::with_capacity(64 * 1024);
    let encode_batch = |dst: &mut BytesMut| {
        dst.clear();
        for i in 0..100 {
            let body = MESSAGES[i % MESSAGES.len()];
            encode_ndjson(body, dst);
            encode_content_length(body, dst);
            for framing in [Framing::Ndjson, Framing::ContentLength] {
                framing.encode(body, dst);
                let mark = framing.begin(dst);
                dst.extend_from_slice(body);
                framing.finish(dst, mark);
            }
        }
        dst.len()
    };
    encode_batch(&mut dst);
    let count = allocations(|| (0..100).map(|_| encode_batch(&mut dst)).sum::<usize>());
    assert_eq!(count, 0, "100 × 600 frames");

    // Handing the encoded bytes off as `Bytes` (to a writer task, say) and dropping them
    // before the next batch also reuses the buffer.
    let send = |dst: &mut BytesMut| {
        encode_batch(dst);
        dst.split().freeze()
    };
    drop(send(&mut dst));
    let count = allocations(|| {
        for _ in 0..100 {
            drop(send(&mut dst));
        }
    });
    assert_eq!(count, 0);
}
