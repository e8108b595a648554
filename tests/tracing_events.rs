//! The `tracing` feature: a span per request with its method, id, outcome and duration, and
//! events for handler panics, dropped notifications, unmatched responses, timed-out calls,
//! cancellations and frame errors — captured with tracing-subscriber's fmt layer.
#![cfg(all(feature = "tracing", feature = "tokio"))]

use std::time::Duration;

use rpcwire::dispatch::{NoParams, Router};
use rpcwire::frame::Framing;
use rpcwire::transport::{CancelProtocol, Peer, StreamTransport};
use tokio::io::AsyncWriteExt;
use tracing_subscriber::fmt::format::FmtSpan;

#[path = "support/log_capture.rs"]
mod log_capture;

/// Runs `body`, returning everything a subscriber wrote meanwhile (spans closed included).
fn capture(body: impl std::future::Future<Output = ()>) -> String {
    log_capture::capture_logs(FmtSpan::CLOSE, body).1
}

#[test]
fn requests_get_spans_with_their_outcome() {
    let text = capture(async {
        let mut router = Router::new();
        router.method("add", |(a, b): (i64, i64)| Ok(a + b));
        router.method_async("later", |_: NoParams| async { Ok(1) });
        let mut out = bytes::BytesMut::new();
        router.handle(
            br#"{"jsonrpc":"2.0","id":"x1","method":"add","params":[1,2]}"#,
            &mut out,
        );
        router.handle(
            br#"{"jsonrpc":"2.0","id":2,"method":"add","params":["a"]}"#,
            &mut out,
        );
        router
            .handle_async(br#"{"jsonrpc":"2.0","id":3,"method":"later"}"#, &mut out)
            .await;
    });
    let closed: Vec<&str> = text.lines().filter(|line| line.contains("rpc.request")).collect();
    assert_eq!(closed.len(), 3, "{text}");
    // rpc.request{method="add" id="x1" outcome="ok" duration_us=31}: rpcwire: close …
    assert!(
        closed[0].contains(r#"rpc.request{method="add" id="x1" outcome="ok" duration_us="#),
        "{text}"
    );
    assert!(
        closed[1].contains(r#"{method="add" id=2 outcome="error" code=-32602 duration_us="#),
        "{text}"
    );
    assert!(
        closed[2].contains(r#"{method="later" id=3 outcome="ok" duration_us="#),
        "{text}"
    );
}

#[test]
fn what_goes_wrong_is_logged() {
    let text = capture(async {
        let mut router = Router::new();
        router.method(
            "boom",
            |_: NoParams| -> Result<(), rpcwire::ErrorObject<'static>> { panic!("the handler's own words") },
        );
        router.notification("typed", |_: (u64,)| {});
        router.method_async("sleep", |(ms,): (u64,)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(ms)
        });
        let mut out = bytes::BytesMut::new();
        router.handle(br#"{"jsonrpc":"2.0","id":1,"method":"boom"}"#, &mut out);
        router.handle(
            br#"{"jsonrpc":"2.0","method":"typed","params":["not a number"]}"#,
            &mut out,
        );

        let (a, b) = tokio::io::duplex(1 << 16);
        let server = Peer::builder()
            .cancel_protocol(CancelProtocol::Lsp)
            .start(StreamTransport::from_io(a, Framing::Ndjson), router);
        let client = Peer::builder()
            .cancel_protocol(CancelProtocol::Lsp)
            .call_timeout(Duration::from_millis(50))
            .start(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
        assert!(client.call::<_, u64>("sleep", [5_000]).await.is_err());
        // The server answers the cancelled call -32800: a response nobody waits for now.
        for _ in 0..200 {
            if client.stats().unmatched_responses == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop((client, server));

        let (c, mut d) = tokio::io::duplex(1 << 16);
        let lines = Peer::new(
            StreamTransport::from_io(c, Framing::Ndjson).with_max_frame(16),
            Router::new(),
        );
        d.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"far too long for sixteen bytes\"}\n")
            .await
            .unwrap();
        for _ in 0..200 {
            if lines.stats().frame_errors == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    for expected in [
        "handler panicked",
        "the handler's own words",
        "notification dropped: its params did not decode",
        "call timed out",
        "the other side cancelled a request under way",
        "a response matches no pending call",
        "frame error",
    ] {
        assert!(text.contains(expected), "no {expected:?} in:\n{text}");
    }
}
