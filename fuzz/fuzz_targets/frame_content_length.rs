//! Any bytes, cut into any reads: the Content-Length decoder never panics, and gives the
//! same frames and errors as when the whole input arrives in one read.
//!
//! The first bytes choose the limits and the read sizes; the rest is the stream.
#![no_main]

#[path = "common/chunked.rs"]
mod chunked;

use libfuzzer_sys::fuzz_target;
use rpcwire::frame::{ContentLengthDecoder, FrameDecoder};

fuzz_target!(|data: &[u8]| {
    let Some((limit, sizes, stream)) = chunked::split_input(data) else {
        return;
    };
    let decoder = FrameDecoder::from(
        ContentLengthDecoder::new()
            .with_max_frame(usize::from(limit))
            .with_max_header(16 + usize::from(limit) * 2),
    );
    chunked::check_splits(decoder, stream, &sizes);
});
