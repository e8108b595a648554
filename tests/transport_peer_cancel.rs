//! Request contexts, cancellation both ways (LSP and MCP), handler timeouts and blocking
//! handlers on a `Peer`, over an in-memory duplex; the other side is a second `Peer` or
//! raw NDJSON lines written and read by the test.
#![cfg(feature = "tokio")]

use std::sync::Arc;
use std::time::Duration;

use rpcwire::dispatch::{NoParams, RequestContext, Router};
use rpcwire::frame::Framing;
use rpcwire::transport::{CancelProtocol, Peer, PeerBuilder, PeerErrorKind, StreamTransport};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// A router with `sleep` ([ms], cancellable through its context), `ping`, and a blocking
/// `spin` ([ms]: blocks a thread that long).
fn router() -> Router {
    let mut router = Router::new();
    router.method_async_with_context("sleep", |(ms,): (u64,), cx: RequestContext| async move {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(ms),
            () = cx.cancelled() => Err(rpcwire::ErrorObject::new(-1, "saw the cancellation")),
        }
    });
    router.method("ping", |_: NoParams| Ok("pong"));
    router.method_blocking("spin", |(ms,): (u64,), _cx: RequestContext| {
        std::thread::sleep(Duration::from_millis(ms));
        Ok(ms)
    });
    router
}

/// A server peer built by `builder`, and the raw other end, as lines.
fn raw_client(builder: PeerBuilder) -> (Peer, BufReader<DuplexStream>) {
    let (a, b) = tokio::io::duplex(1 << 16);
    let server = builder.start(StreamTransport::from_io(a, Framing::Ndjson), router());
    (server, BufReader::new(b))
}

async fn send(client: &mut BufReader<DuplexStream>, line: &str) {
    client
        .get_mut()
        .write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
}

/// The next line, as JSON; `None` when none comes within `wait`.
async fn next(client: &mut BufReader<DuplexStream>, wait: Duration) -> Option<Value> {
    let mut line = String::new();
    match tokio::time::timeout(wait, client.read_line(&mut line)).await {
        Ok(Ok(n)) if n > 0 => Some(serde_json::from_str(&line).unwrap()),
        _ => None,
    }
}

const LONG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn lsp_cancel_request_is_answered_request_cancelled() {
    let (server, mut client) = raw_client(Peer::builder().cancel_protocol(CancelProtocol::Lsp));
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","id":"s-1","method":"sleep","params":[60000]}"#,
    )
    .await;
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"s-1"}}"#,
    )
    .await;
    let answer = next(&mut client, LONG).await.expect("an answer");
    assert_eq!(answer["id"], "s-1");
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    assert_eq!(server.stats().cancelled_by_remote, 1);
    // A cancel for a request that is not under way changes nothing.
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}"#,
    )
    .await;
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","id":2,"method":"sleep","params":[1]}"#,
    )
    .await;
    assert_eq!(next(&mut client, LONG).await.unwrap()["result"], 1);
    assert_eq!(server.stats().cancelled_by_remote, 1);
}

#[tokio::test]
async fn mcp_cancelled_requests_get_no_answer() {
    let (server, mut client) = raw_client(Peer::builder().cancel_protocol(CancelProtocol::Mcp));
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","id":7,"method":"sleep","params":[300]}"#,
    )
    .await;
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#,
    )
    .await;
    send(&mut client, r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#).await;
    assert_eq!(next(&mut client, LONG).await.unwrap()["id"], 8);
    // Well past the 300 ms the cancelled sleep would have taken: nothing for id 7.
    assert_eq!(next(&mut client, Duration::from_millis(800)).await, None);
    assert_eq!(server.stats().cancelled_by_remote, 1);
}

#[tokio::test]
async fn without_a_protocol_cancel_notifications_are_ordinary() {
    let (server, mut client) = raw_client(Peer::builder());
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","id":1,"method":"sleep","params":[100]}"#,
    )
    .await;
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#,
    )
    .await;
    assert_eq!(next(&mut client, LONG).await.unwrap()["result"], 100);
    assert_eq!(server.stats().cancelled_by_remote, 0);
}

/// Two peers speaking `protocol`: the server with `router()`, the client with nothing.
fn peers(protocol: CancelProtocol, client: PeerBuilder) -> (Peer, Peer) {
    let (a, b) = tokio::io::duplex(1 << 16);
    let server = Peer::builder()
        .cancel_protocol(protocol)
        .start(StreamTransport::from_io(a, Framing::Ndjson), router());
    let client = client
        .cancel_protocol(protocol)
        .start(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    (server, client)
}

/// Waits (bounded) until `done` holds.
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done()
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_other_side() {
    for protocol in [CancelProtocol::Lsp, CancelProtocol::Mcp] {
        let (server, client) = peers(protocol, Peer::builder());
        let call = client.call::<_, u64>("sleep", [60_000]);
        assert!(tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err());
        assert_eq!(client.stats().cancels_sent, 1, "{protocol:?}");
        assert!(
            eventually(|| server.stats().cancelled_by_remote == 1).await,
            "{protocol:?}: {:?}",
            server.stats()
        );
        // The connection serves on.
        assert_eq!(client.call::<_, u64>("sleep", [1]).await.unwrap(), 1);
    }
}

#[tokio::test]
async fn a_call_that_times_out_is_cancelled_too() {
    let builder = Peer::builder().call_timeout(Duration::from_millis(100));
    let (server, client) = peers(CancelProtocol::Lsp, builder);
    let error = client.call::<_, u64>("sleep", [60_000]).await.unwrap_err();
    assert!(matches!(error.kind(), PeerErrorKind::TimedOut { .. }), "{error}");
    let stats = client.stats();
    assert_eq!((stats.calls_timed_out, stats.cancels_sent), (1, 1));
    assert!(eventually(|| server.stats().cancelled_by_remote == 1).await);
}

#[tokio::test]
async fn without_a_protocol_a_dropped_call_sends_nothing() {
    let (server, client) = peers(CancelProtocol::None, Peer::builder());
    let call = client.call::<_, u64>("sleep", [200]);
    assert!(tokio::time::timeout(Duration::from_millis(50), call)
        .await
        .is_err());
    assert_eq!(client.stats().cancels_sent, 0);
    // The late answer arrives and matches nothing.
    assert!(eventually(|| client.stats().unmatched_responses == 1).await);
    assert_eq!(server.stats().cancelled_by_remote, 0);
}

#[tokio::test]
async fn a_handler_past_its_timeout_is_answered_with_the_reason() {
    let (server, mut client) = raw_client(Peer::builder().handler_timeout(Duration::from_millis(50)));
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","id":1,"method":"sleep","params":[60000]}"#,
    )
    .await;
    let answer = next(&mut client, LONG).await.expect("an answer");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert_eq!(
        answer["error"]["data"], "handler timed out after 50ms",
        "{answer}"
    );
    assert_eq!(server.stats().handler_timeouts, 1);
    // Quick ones still answer.
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","id":2,"method":"sleep","params":[1]}"#,
    )
    .await;
    assert_eq!(next(&mut client, LONG).await.unwrap()["result"], 1);
}

#[tokio::test]
async fn a_blocking_handler_does_not_hold_up_the_reader() {
    let (_server, mut client) = raw_client(Peer::builder());
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","id":"slow","method":"spin","params":[400]}"#,
    )
    .await;
    send(&mut client, r#"{"jsonrpc":"2.0","id":"quick","method":"ping"}"#).await;
    // The quick answer comes first: the blocking handler runs off the reader task.
    assert_eq!(next(&mut client, LONG).await.unwrap()["id"], "quick");
    assert_eq!(next(&mut client, LONG).await.unwrap()["result"], 400);
}

#[tokio::test]
async fn a_handler_knows_its_request_and_calls_back_through_its_link() {
    let (a, b) = tokio::io::duplex(1 << 16);
    let mut server_router = Router::new();
    server_router.method_async_with_context("greet", |_: NoParams, cx: RequestContext| async move {
        let link = cx.remote().expect("served by a peer").clone();
        let name: String = link
            .call("whoareyou", ())
            .await
            .map_err(|error| error.to_error_object())?;
        Ok(format!("{} {} {name}", cx.method(), cx.id().expect("a request")))
    });
    let mut client_router = Router::new();
    client_router.method("whoareyou", |_: NoParams| Ok("ada"));
    let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), server_router);
    let client = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), client_router);
    let greeting: String = client.call("greet", ()).await.unwrap();
    // "greet <the id the client's table gave the call> ada"
    let words: Vec<&str> = greeting.split(' ').collect();
    assert_eq!((words[0], words[2]), ("greet", "ada"), "{greeting}");
    assert!(words[1].parse::<u64>().is_ok(), "{greeting}");
}

#[tokio::test]
async fn a_link_does_not_keep_the_connection_open() {
    let (a, b) = tokio::io::duplex(1 << 16);
    let kept = Arc::new(std::sync::Mutex::new(None));
    let mut router = Router::new();
    let slot = kept.clone();
    router.method_async_with_context("keep", move |_: NoParams, cx: RequestContext| {
        *slot.lock().unwrap() = cx.remote().cloned();
        async { Ok(true) }
    });
    let server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    let client = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    assert!(client.call::<_, bool>("keep", ()).await.unwrap());
    let link = kept.lock().unwrap().clone().expect("the handler kept its link");
    assert!(link.is_open());
    drop(server);
    let closed = tokio::time::timeout(LONG, link.closed()).await;
    assert!(closed.is_ok(), "the server closed although a link is kept");
    assert!(link.notify("late", ()).await.unwrap_err().is_closed());
}
