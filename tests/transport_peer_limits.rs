//! A `Peer`'s limits in bytes and in time: the backlog and the outgoing queue bounded in
//! bytes, the read idle timeout, and `close_within` aborting handlers past its deadline.
#![cfg(feature = "tokio")]

use std::time::Duration;

use rpcwire::dispatch::{NoParams, Router};
use rpcwire::frame::Framing;
use rpcwire::transport::{CloseReason, Peer, PeerError, PeerErrorKind, StreamTransport, OVERLOADED_CODE};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

const LONG: Duration = Duration::from_secs(10);

fn router() -> Router {
    let mut router = Router::new();
    router.method_async("hold", |(ms, _pad): (u64, String)| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(ms)
    });
    router.method_async("forever", |_: NoParams| async {
        std::future::pending::<Result<(), rpcwire::ErrorObject<'static>>>().await
    });
    router
}

async fn next(client: &mut BufReader<DuplexStream>) -> Value {
    let mut line = String::new();
    tokio::time::timeout(LONG, client.read_line(&mut line))
        .await
        .expect("an answer in time")
        .unwrap();
    serde_json::from_str(&line).unwrap()
}

#[tokio::test]
async fn the_backlog_is_bounded_in_bytes_as_well_as_in_frames() {
    let (a, b) = tokio::io::duplex(1 << 20);
    let _server = Peer::builder()
        .max_concurrent_requests(1)
        .max_queued_requests(100)
        .max_queued_bytes(10_000)
        .start(StreamTransport::from_io(a, Framing::Ndjson), router());
    let mut client = BufReader::new(b);
    // One runs; then 4 KB requests queue until 10,000 bytes would be passed: two fit.
    let pad = "x".repeat(4000);
    for id in 0..5 {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"hold","params":[300,"{pad}"]}}"#);
        client
            .get_mut()
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut overloaded = Vec::new();
    let mut results = Vec::new();
    for _ in 0..5 {
        let answer = next(&mut client).await;
        match answer["error"]["code"].as_i64() {
            Some(code) => {
                assert_eq!(code, OVERLOADED_CODE, "{answer}");
                overloaded.push(answer["id"].as_u64().unwrap());
            }
            None => results.push(answer["id"].as_u64().unwrap()),
        }
    }
    overloaded.sort_unstable();
    results.sort_unstable();
    assert_eq!(
        overloaded,
        [3, 4],
        "the frames past the byte limit are turned away at once"
    );
    assert_eq!(results, [0, 1, 2]);
}

#[tokio::test]
async fn the_outgoing_queue_is_bounded_in_bytes() {
    // The other side never reads: a small pipe fills, then the queue's 4,000 bytes.
    let (a, _b) = tokio::io::duplex(64);
    let peer = Peer::builder()
        .outgoing_queue(1000)
        .outgoing_queue_bytes(4000)
        .call_timeout(Duration::from_millis(300))
        .start(StreamTransport::from_io(a, Framing::Ndjson), Router::new());
    let pad = "y".repeat(1000);
    let mut outcomes = Vec::new();
    for _ in 0..8 {
        outcomes.push(peer.notify("log", [&pad]).await);
    }
    // Far fewer than the 1,000 frames the frame limit would take: the bytes ran out (three
    // 1 KB frames fill the queue; the writer and the transport's buffer hold a few more).
    let queued = outcomes.iter().filter(|o| o.is_ok()).count();
    assert!((3..8).contains(&queued), "{queued} queued: {outcomes:?}");
    assert!(
        matches!(
            outcomes.last().map(|o| o.as_ref().map_err(PeerError::kind)),
            Some(Err(PeerErrorKind::QueueFull { .. }))
        ),
        "{outcomes:?}"
    );
}

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_idle_timeout() {
    let (a, mut b) = tokio::io::duplex(4096);
    let peer = Peer::builder()
        .idle_timeout(Duration::from_millis(150))
        .start(StreamTransport::from_io(a, Framing::Ndjson), Router::new());
    // Frames keep it open…
    for _ in 0..4 {
        b.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"tick\"}\n")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
    }
    assert!(peer.state().is_open(), "closed although frames kept arriving");
    // …silence closes it.
    let reason = tokio::time::timeout(LONG, peer.closed())
        .await
        .expect("closed in time");
    assert!(matches!(reason, CloseReason::IdleTimeout(after) if after == Duration::from_millis(150)));
    assert!(!reason.is_error());
}

#[tokio::test]
async fn close_within_aborts_handlers_past_the_deadline_and_answers_their_requests() {
    let (a, b) = tokio::io::duplex(4096);
    let server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router());
    let mut client = BufReader::new(b);
    client
        .get_mut()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"f\",\"method\":\"forever\"}\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let reason = tokio::time::timeout(LONG, server.close_within(Duration::from_millis(100)))
        .await
        .expect("close_within returns after its deadline");
    assert!(matches!(reason, CloseReason::Local), "{reason}");
    let answer = next(&mut client).await;
    assert_eq!(answer["id"], "f");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
}

#[tokio::test]
async fn close_within_gives_up_on_a_side_that_does_not_read() {
    // The client never reads: answers cannot be written, and the close still ends.
    let (a, _b) = tokio::io::duplex(64);
    let server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), Router::new());
    let pad = "z".repeat(500);
    for _ in 0..4 {
        let _ = tokio::time::timeout(Duration::from_millis(50), server.notify("log", [&pad])).await;
    }
    let closed = tokio::time::timeout(LONG, server.close_within(Duration::from_millis(100))).await;
    assert!(closed.is_ok(), "close_within hung on a side that does not read");
}
