//! Any bytes from the other side of a connection, in any reads, in either framing, into a
//! `Peer` that has two calls of its own waiting: never a panic; every frame the peer writes
//! back is one JSON-RPC message or batch; when the input ends, the peer closes and both
//! calls end (answered if the input answered them, or with the connection's closing), none
//! by its timeout.
//!
//! The first byte chooses the framing and the frame limit, the next up to eight the read
//! sizes (as in the framing targets); the rest is the stream.
#![no_main]

// Only `split_input` is used here.
#[allow(dead_code)]
#[path = "common/chunked.rs"]
mod chunked;
#[path = "common/client_side.rs"]
mod client_side;

use std::time::Duration;

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::frame::{FrameDecoder, Framing};
use rpcwire::transport::{Peer, PeerErrorKind, StreamTransport};

fn router() -> Router {
    let mut router = Router::new();
    router.method("add", |(a, b): (i64, i64)| Ok(a.wrapping_add(b)));
    router.method("ping", |_: NoParams| Ok("pong"));
    router.method_async("later", |(ms,): (u64,)| async move {
        tokio::time::sleep(Duration::from_millis(ms.min(1000))).await;
        Ok(ms)
    });
    router.notification("tick", |_: serde_json::Value| {});
    router
}

async fn exchange(framing: Framing, max_frame: usize, stream: &[u8], sizes: &[usize]) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let peer = Peer::builder()
        .call_timeout(Duration::from_secs(600))
        .max_concurrent_requests(4)
        .max_queued_requests(8)
        .start(
            StreamTransport::from_io(ours, framing).with_max_frame(max_frame),
            router(),
        );
    let first = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.call::<_, serde_json::Value>("remote", [1]).await })
    };
    let second = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.call_raw("other", None).await })
    };
    let reader = client_side::send_in_reads(theirs, stream, sizes).await;
    for outcome in [first.await.unwrap().err(), second.await.unwrap().err()]
        .into_iter()
        .flatten()
    {
        assert!(
            !matches!(outcome.kind(), PeerErrorKind::TimedOut { .. }),
            "a call waited for its timeout after the input ended: {outcome}"
        );
    }
    let _ = peer.closed().await;
    drop(peer);
    let written = reader.await.unwrap();
    let mut buf = BytesMut::from(&written[..]);
    let mut decoder = FrameDecoder::new(framing);
    while let Some(frame) = decoder
        .decode_eof(&mut buf)
        .expect("the peer writes whole frames")
    {
        rpcwire::parse(&frame).unwrap_or_else(|e| panic!("the peer wrote {frame:?}: {e}"));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((choice, sizes, stream)) = chunked::split_input(data) else {
        return;
    };
    let framing = if choice & 1 == 0 {
        Framing::Ndjson
    } else {
        Framing::ContentLength
    };
    let max_frame = 64 + usize::from(choice >> 1) * 64;
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(exchange(framing, max_frame, stream, &sizes));
});
