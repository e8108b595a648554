//! Any bytes, cut into any reads: the NDJSON decoder never panics, and gives the same frames
//! and errors as when the whole input arrives in one read.
//!
//! The first bytes choose the limit and the read sizes; the rest is the stream.
#![no_main]

#[path = "common/chunked.rs"]
mod chunked;

use libfuzzer_sys::fuzz_target;
use rpcwire::frame::{FrameDecoder, Framing};

fuzz_target!(|data: &[u8]| {
    let Some((limit, sizes, stream)) = chunked::split_input(data) else {
        return;
    };
    let decoder = FrameDecoder::new(Framing::Ndjson).with_max_frame(usize::from(limit));
    chunked::check_splits(decoder, stream, &sizes);
});
