//! The bidirectional `Peer` over in-memory streams: calls both ways with separate id
//! spaces, concurrency limits, callbacks from handlers, timeouts, capacity, connection
//! state, closing on end of input, on fatal and recoverable transport errors, and what a
//! raw JSON-RPC speaker on the other side sees.
#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use rpcwire::correlate::IdFormat;
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::frame::Framing;
use rpcwire::transport::{
    BatchEntry, CloseReason, ConnectionState, FrameReceiver, FrameSender, Peer, PeerError, PeerErrorKind,
    StreamReceiver, StreamSender, StreamTransport, Transport, TransportError,
};
use rpcwire::ErrorCode;
use serde_json::{json, Value};
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

type Raw = (
    StreamReceiver<ReadHalf<DuplexStream>>,
    StreamSender<WriteHalf<DuplexStream>>,
);

/// A peer on one end of an in-memory stream and the other end's raw frame halves.
fn peer_and_raw(builder: rpcwire::transport::PeerBuilder, router: Router, framing: Framing) -> (Peer, Raw) {
    let (a, b) = tokio::io::duplex(1 << 16);
    let peer = builder.start(StreamTransport::from_io(a, framing), router);
    (peer, StreamTransport::from_io(b, framing).split())
}

fn pair(left: Router, right: Router) -> (Peer, Peer) {
    let (a, b) = tokio::io::duplex(1 << 16);
    (
        Peer::new(StreamTransport::from_io(a, Framing::ContentLength), left),
        Peer::new(StreamTransport::from_io(b, Framing::ContentLength), right),
    )
}

async fn next_json(receiver: &mut StreamReceiver<ReadHalf<DuplexStream>>) -> Value {
    let frame = tokio::time::timeout(Duration::from_secs(10), receiver.receive())
        .await
        .expect("a frame within 10 s")
        .expect("no transport error")
        .expect("not the end of input");
    serde_json::from_slice(&frame).expect("frames are JSON")
}

async fn send_json(sender: &mut StreamSender<WriteHalf<DuplexStream>>, value: &Value) {
    sender.send(Bytes::from(value.to_string())).await.unwrap();
    sender.flush().await.unwrap();
}

fn subtract_router() -> Router {
    let mut router = Router::new();
    router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
    router
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_sides_call_each_other_with_separate_id_spaces() {
    let mut left = subtract_router();
    left.method("side", |_: NoParams| Ok("left"));
    let mut right = subtract_router();
    right.method("side", |_: NoParams| Ok("right"));
    let (left, right) = pair(left, right);

    // Both tables issue the same numeric ids; answers must still go to the right caller.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..2_000i64 {
        let (caller, expected) = if i % 2 == 0 {
            (left.clone(), "right")
        } else {
            (right.clone(), "left")
        };
        tasks.spawn(async move {
            let side: String = caller.call("side", ()).await.unwrap();
            assert_eq!(side, expected);
            let difference: i64 = caller.call("subtract", (i, 7)).await.unwrap();
            assert_eq!(difference, i - 7);
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    assert_eq!(left.pending_calls(), 0);
    assert_eq!(right.pending_calls(), 0);
    assert_eq!(left.stats().calls, 2_000);
    assert_eq!(left.stats().answers_sent, 2_000);
    assert_eq!(left.stats().unmatched_responses, 0);
}

#[tokio::test]
async fn async_handlers_run_concurrently_up_to_the_limit() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let mut router = Router::new();
    let (r, m) = (running.clone(), most.clone());
    router.method_async("slow", move |n: (u64,)| {
        let (running, most) = (r.clone(), m.clone());
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(n.0 * 2)
        }
    });
    let (a, b) = tokio::io::duplex(1 << 16);
    let _server = Peer::builder()
        .max_concurrent_requests(4)
        .start(StreamTransport::from_io(a, Framing::Ndjson), router);
    let client = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());

    let calls: Vec<_> = (0..24u64)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move { client.call::<_, u64>("slow", (n,)).await })
        })
        .collect();
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap(), n as u64 * 2);
    }
    assert_eq!(most.load(Ordering::SeqCst), 4, "4 handlers at once, never more");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_can_call_back_while_every_handler_slot_is_busy() {
    // The server allows one async handler at a time; each handler calls the client back
    // and waits. The second request waits in the backlog while the reader still delivers
    // the callback's response, so nothing deadlocks.
    let server_peer: Arc<OnceLock<Peer>> = Arc::new(OnceLock::new());
    let mut router = Router::new();
    let slot = server_peer.clone();
    router.method_async("double_via_client", move |(n,): (i64,)| {
        let slot = slot.clone();
        async move {
            let peer = slot.get().expect("set before any call").clone();
            let doubled: i64 = peer
                .call("double", (n,))
                .await
                .map_err(rpcwire::ErrorObject::internal_error)?;
            Ok(doubled)
        }
    });
    let mut client_router = Router::new();
    client_router.method("double", |(n,): (i64,)| Ok(n * 2));
    let (a, b) = tokio::io::duplex(1 << 16);
    let server = Peer::builder()
        .max_concurrent_requests(1)
        .start(StreamTransport::from_io(a, Framing::ContentLength), router);
    server_peer.set(server.clone()).unwrap();
    let client = Peer::new(StreamTransport::from_io(b, Framing::ContentLength), client_router);

    let calls: Vec<_> = (1..=3i64)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move { client.call::<_, i64>("double_via_client", (n,)).await })
        })
        .collect();
    for (n, call) in (1..=3i64).zip(calls) {
        let answer = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .expect("no deadlock");
        assert_eq!(answer.unwrap().unwrap(), n * 2);
    }
    server.close().await; // the OnceLock keeps a handle, so close explicitly
}

#[tokio::test]
async fn remote_errors_params_and_results_are_reported() {
    let (client, _server) = pair(Router::new(), subtract_router());
    let missing = client.call::<_, i64>("nope", ()).await.unwrap_err();
    // The error names its call.
    assert_eq!(missing.method(), Some("nope"));
    assert!(missing.id().is_some());
    assert!(missing.to_string().starts_with("nope (id "), "{missing}");
    match missing.kind() {
        PeerErrorKind::Remote(error) => assert_eq!(error.code(), ErrorCode::MethodNotFound),
        other => panic!("expected a remote error, got {other:?}"),
    }
    let bad_params = client.call::<_, i64>("subtract", ["a", "b"]).await.unwrap_err();
    assert!(matches!(bad_params.kind(), PeerErrorKind::Remote(e) if e.code() == ErrorCode::InvalidParams));
    let wrong_type = client.call::<_, String>("subtract", (3, 1)).await.unwrap_err();
    assert!(
        matches!(wrong_type.kind(), PeerErrorKind::Result(_)),
        "{wrong_type:?}"
    );
    let scalar = client.call::<_, i64>("subtract", 3).await.unwrap_err();
    assert!(matches!(scalar.kind(), PeerErrorKind::Params(_)), "{scalar:?}");
    // Nothing was left pending by any of them.
    assert_eq!(client.pending_calls(), 0);
}

#[tokio::test]
async fn what_goes_over_the_wire() {
    let (peer, (mut receiver, mut sender)) = peer_and_raw(
        Peer::builder().id_format(IdFormat::String),
        Router::new(),
        Framing::Ndjson,
    );
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.call::<_, Vec<u32>>("list", json!({"n": 2})).await })
    };
    let request = next_json(&mut receiver).await;
    assert_eq!(request["jsonrpc"], "2.0");
    assert_eq!(request["method"], "list");
    assert_eq!(request["params"], json!({"n": 2}));
    assert!(request["id"].is_string(), "string ids were asked for: {request}");
    send_json(
        &mut sender,
        &json!({"jsonrpc": "2.0", "id": request["id"], "result": [1, 2]}),
    )
    .await;
    assert_eq!(call.await.unwrap().unwrap(), vec![1, 2]);

    peer.notify("note", ()).await.unwrap();
    assert_eq!(
        next_json(&mut receiver).await,
        json!({"jsonrpc": "2.0", "method": "note"})
    );
}

#[tokio::test]
async fn a_batch_of_responses_completes_each_call_and_strays_are_counted() {
    let (peer, (mut receiver, mut sender)) =
        peer_and_raw(Peer::builder(), Router::new(), Framing::ContentLength);
    let calls: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|method| {
            let peer = peer.clone();
            tokio::spawn(async move { peer.call::<_, String>(method, ()).await })
        })
        .collect();
    let first = next_json(&mut receiver).await;
    let second = next_json(&mut receiver).await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": second["id"], "result": second["method"]},
        {"jsonrpc": "2.0", "id": 999_999, "result": "stray"},
        {"jsonrpc": "2.0", "id": first["id"], "error": {"code": -32000, "message": "no"}},
    ]);
    send_json(&mut sender, &batch).await;
    let mut outcomes = Vec::new();
    for call in calls {
        outcomes.push(call.await.unwrap());
    }
    // `outcomes` is in call order ("a", "b"); the frames arrived in either order. The first
    // frame's call got the error, the second's its method name back.
    let (errored, answered) = if first["method"] == "a" { (0, 1) } else { (1, 0) };
    assert!(
        matches!(outcomes[errored].as_ref().map_err(PeerError::kind), Err(PeerErrorKind::Remote(e)) if e.code() == ErrorCode::ServerError(-32000))
    );
    assert_eq!(
        outcomes[answered].as_ref().unwrap(),
        second["method"].as_str().unwrap()
    );
    assert_eq!(peer.stats().unmatched_responses, 1);
    // A batch made only of responses gets no answer; the next request is still served.
    send_json(
        &mut sender,
        &json!({"jsonrpc": "2.0", "id": 5, "method": "missing"}),
    )
    .await;
    let answer = next_json(&mut receiver).await;
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], -32601);
}

#[tokio::test]
async fn a_late_response_after_a_timeout_is_dropped_and_counted() {
    let (peer, (mut receiver, mut sender)) = peer_and_raw(
        Peer::builder().call_timeout(Duration::from_millis(50)),
        Router::new(),
        Framing::Ndjson,
    );
    let error = peer.call::<_, ()>("slow", ()).await.unwrap_err();
    assert!(matches!(error.kind(), PeerErrorKind::TimedOut { after } if *after == Duration::from_millis(50)));
    assert_eq!(peer.pending_calls(), 0, "the slot is free again");
    let request = next_json(&mut receiver).await;
    send_json(
        &mut sender,
        &json!({"jsonrpc": "2.0", "id": request["id"], "result": null}),
    )
    .await;
    // The late response is read and counted; a fresh call still works.
    let next = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.call::<_, u8>("again", ()).await })
    };
    let again = next_json(&mut receiver).await;
    assert_ne!(again["id"], request["id"], "the reused slot has a new generation");
    send_json(
        &mut sender,
        &json!({"jsonrpc": "2.0", "id": again["id"], "result": 7}),
    )
    .await;
    assert_eq!(next.await.unwrap().unwrap(), 7);
    assert_eq!(peer.stats().unmatched_responses, 1);
}

#[tokio::test]
async fn calls_beyond_the_capacity_fail_at_once() {
    let (peer, (_receiver, _sender)) =
        peer_and_raw(Peer::builder().call_capacity(2), Router::new(), Framing::Ndjson);
    let pending: Vec<_> = (0..2)
        .map(|_| {
            let peer = peer.clone();
            tokio::spawn(async move { peer.call::<_, ()>("wait", ()).await })
        })
        .collect();
    while peer.pending_calls() < 2 {
        tokio::task::yield_now().await;
    }
    let third = peer.call::<_, ()>("wait", ()).await.unwrap_err();
    assert!(
        matches!(third.kind(), PeerErrorKind::TooManyPending { capacity: 2 }),
        "{third:?}"
    );
    peer.close().await;
    for call in pending {
        assert!(matches!(
            call.await.unwrap().as_ref().map_err(PeerError::kind),
            Err(PeerErrorKind::Closed(CloseReason::Local))
        ));
    }
}

#[tokio::test]
async fn end_of_input_fails_pending_calls_and_closes() {
    let (peer, (mut receiver, mut sender)) =
        peer_and_raw(Peer::builder(), Router::new(), Framing::ContentLength);
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.call::<_, ()>("never", ()).await })
    };
    next_json(&mut receiver).await;
    let mut states = peer.state_changes();
    assert_eq!(*states.borrow_and_update(), ConnectionState::Connected);
    sender.close().await.unwrap(); // the other side's output ends
    let error = call.await.unwrap().unwrap_err();
    assert!(
        matches!(error.kind(), PeerErrorKind::Closed(CloseReason::EndOfInput)),
        "{error:?}"
    );
    assert!(matches!(peer.closed().await, CloseReason::EndOfInput));
    assert_eq!(peer.state(), ConnectionState::Closed);
    // Every later operation fails clearly.
    let later = peer.call::<_, ()>("x", ()).await.unwrap_err();
    // Refused before it got an id: the error names the method only.
    assert_eq!(
        later.to_string(),
        "x: connection closed: the other side ended the connection"
    );
    assert!(peer.notify("x", ()).await.unwrap_err().is_closed());
    // And our output was closed too: the other side reads its end.
    assert!(receiver.receive().await.unwrap().is_none());
}

#[tokio::test]
async fn a_fatal_frame_error_is_answered_then_closes_the_connection() {
    use tokio::io::AsyncWriteExt;
    let (a, b) = tokio::io::duplex(1 << 16);
    let peer = Peer::new(StreamTransport::from_io(a, Framing::ContentLength), Router::new());
    let (raw_read, mut raw_write) = tokio::io::split(b);
    let mut raw_in = StreamReceiver::new(raw_read, Framing::ContentLength);
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.call::<_, ()>("never", ()).await })
    };
    next_json(&mut raw_in).await;
    // Not a frame header at all: the stream cannot be resynchronized.
    raw_write
        .write_all(b"Content-Type: nonsense\r\n\r\n{}")
        .await
        .unwrap();
    let answer = next_json(&mut raw_in).await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    let error = call.await.unwrap().unwrap_err();
    match error.kind() {
        PeerErrorKind::Closed(CloseReason::Transport(cause)) => {
            assert!(matches!(**cause, TransportError::Frame(_)));
            assert!(!cause.is_recoverable());
        }
        other => panic!("expected a transport close, got {other:?}"),
    }
    assert!(peer.closed().await.is_error());
    assert_eq!(peer.stats().frame_errors, 1);
}

#[tokio::test]
async fn a_frame_over_the_limit_is_answered_and_the_connection_goes_on() {
    let (a, b) = tokio::io::duplex(1 << 16);
    let transport = StreamTransport::from_io(a, Framing::Ndjson).with_max_frame(64);
    let peer = Peer::new(transport, subtract_router());
    let (mut raw_in, mut raw_out) = StreamTransport::from_io(b, Framing::Ndjson).split();
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "subtract", "params": [1, "x".repeat(100)]});
    send_json(&mut raw_out, &big).await;
    let answer = next_json(&mut raw_in).await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32600);
    send_json(
        &mut raw_out,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "subtract", "params": [5, 3]}),
    )
    .await;
    assert_eq!(
        next_json(&mut raw_in).await,
        json!({"jsonrpc": "2.0", "id": 2, "result": 2})
    );
    assert_eq!(peer.stats().frame_errors, 1);
    assert_eq!(peer.state(), ConnectionState::Connected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_already_received_are_answered_before_closing() {
    let mut router = Router::new();
    router.method_async("slow", |(n,): (u64,)| async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        Ok(n)
    });
    let (peer, (mut receiver, mut sender)) = peer_and_raw(Peer::builder(), router, Framing::Ndjson);
    for id in 0..3 {
        send_json(
            &mut sender,
            &json!({"jsonrpc": "2.0", "id": id, "method": "slow", "params": [id]}),
        )
        .await;
    }
    sender.close().await.unwrap(); // end of input right after the requests
    let mut ids = Vec::new();
    while let Some(frame) = receiver.receive().await.unwrap() {
        let answer: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(answer["result"], answer["id"]);
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(
        ids,
        [0, 1, 2],
        "every request got its answer before the stream ended"
    );
    assert!(matches!(peer.closed().await, CloseReason::EndOfInput));
}

#[tokio::test]
async fn dropping_every_handle_closes_the_connection() {
    let (peer, (mut receiver, mut sender)) = peer_and_raw(Peer::builder(), Router::new(), Framing::Ndjson);
    let other = peer.clone();
    drop(peer);
    other.notify("still", ()).await.unwrap();
    drop(other);
    assert_eq!(next_json(&mut receiver).await["method"], "still");
    let end = tokio::time::timeout(Duration::from_secs(10), receiver.receive())
        .await
        .unwrap();
    assert!(end.unwrap().is_none(), "the peer closed its output");
    // Its tasks ended and dropped the stream: writing to it now fails.
    let mut refused = false;
    for _ in 0..1000 {
        if sender.send(Bytes::from_static(b"[]")).await.is_err() || sender.flush().await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(refused, "the peer's end of the stream was released");
}

#[tokio::test]
async fn calls_made_while_connecting_are_sent_once_connected() {
    let (ready, connected) = tokio::sync::oneshot::channel::<DuplexStream>();
    let client = Peer::builder().connect(
        async move {
            let stream = connected.await.map_err(std::io::Error::other)?;
            Ok(StreamTransport::from_io(stream, Framing::ContentLength))
        },
        Router::new(),
    );
    assert_eq!(client.state(), ConnectionState::Connecting);
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call::<_, i64>("subtract", (10, 4)).await })
    };
    let (a, b) = tokio::io::duplex(1 << 16);
    let _server = Peer::new(
        StreamTransport::from_io(b, Framing::ContentLength),
        subtract_router(),
    );
    ready.send(a).unwrap();
    assert_eq!(call.await.unwrap().unwrap(), 6);
    assert_eq!(client.state(), ConnectionState::Connected);
}

#[tokio::test]
async fn a_failed_connect_fails_the_queued_calls() {
    let (fail, failed) = tokio::sync::oneshot::channel::<()>();
    let client = Peer::builder().connect(
        async move {
            let _ = failed.await;
            Err::<StreamTransport<DuplexStream, DuplexStream>, _>(std::io::Error::from(
                std::io::ErrorKind::ConnectionRefused,
            ))
        },
        Router::new(),
    );
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call::<_, ()>("x", ()).await })
    };
    fail.send(()).unwrap();
    let error = call.await.unwrap().unwrap_err();
    assert!(
        matches!(error.kind(), PeerErrorKind::Closed(CloseReason::ConnectFailed(_))),
        "{error:?}"
    );
    // It names its call (with its id when it got one before the connect failed).
    assert_eq!(error.method(), Some("x"));
    assert!(error.to_string().starts_with("x"), "{error}");
    assert!(
        error
            .to_string()
            .contains(": connection closed: could not connect"),
        "{error}"
    );
    assert_eq!(client.state(), ConnectionState::Closed);
}

#[tokio::test]
async fn call_raw_returns_the_result_bytes_exactly() {
    let mut router = Router::new();
    router.raw_method("echo", |params, reply| match params {
        Some(params) => Ok(reply.raw(&params.raw())),
        None => Ok(reply.null()),
    });
    let (client, _server) = pair(Router::new(), router);
    let params = rpcwire::RawJson::new(r#"{"x":1.50,"y":"\u00e9"}"#).unwrap();
    let result: rpcwire::JsonBytes = client.call_raw("echo", Some(&params)).await.unwrap();
    assert_eq!(&result[..], br#"{"x":1.50,"y":"\u00e9"}"#);
    assert_eq!(&client.call_raw("echo", None).await.unwrap()[..], b"null");
}

#[tokio::test]
async fn malformed_and_invalid_messages_get_the_right_errors() {
    let (peer, (mut receiver, mut sender)) =
        peer_and_raw(Peer::builder(), subtract_router(), Framing::Ndjson);
    sender
        .send(Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"method":"#))
        .await
        .unwrap();
    sender
        .send(Bytes::from_static(
            br#"{"jsonrpc":"1.0","id":4,"method":"subtract"}"#,
        ))
        .await
        .unwrap();
    sender.flush().await.unwrap();
    let parse_error = next_json(&mut receiver).await;
    assert_eq!(
        (parse_error["id"].clone(), parse_error["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    let invalid = next_json(&mut receiver).await;
    assert_eq!(
        (invalid["id"].clone(), invalid["error"]["code"].clone()),
        (json!(4), json!(-32600))
    );
    assert_eq!(peer.stats().answers_sent, 2);
    assert_eq!(peer.state(), ConnectionState::Connected);
}

#[tokio::test]
async fn a_batch_mixes_calls_and_notifications_in_the_order_given() {
    let (peer, (mut receiver, mut sender)) = peer_and_raw(Peer::builder(), Router::new(), Framing::Ndjson);
    let one = rpcwire::RawJson::new("[1]").unwrap();
    let two = rpcwire::RawJson::new(r#"{"k":2}"#).unwrap();
    let batch = {
        let peer = peer.clone();
        tokio::spawn(async move {
            let one = rpcwire::RawJson::new("[1]").unwrap();
            let two = rpcwire::RawJson::new(r#"{"k":2}"#).unwrap();
            peer.batch_raw(&[
                BatchEntry::notification("first", Some(&one)),
                BatchEntry::call("a", None),
                BatchEntry::notification("middle", None),
                BatchEntry::call("b", Some(&two)),
            ])
            .await
        })
    };
    let frame = next_json(&mut receiver).await;
    let elements = frame.as_array().expect("one batch frame");
    let methods: Vec<_> = elements.iter().map(|e| e["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["first", "a", "middle", "b"]);
    assert!(elements[0].get("id").is_none() && elements[2].get("id").is_none());
    assert_eq!(
        elements[0]["params"],
        serde_json::from_str::<Value>(one.get()).unwrap()
    );
    assert_eq!(
        elements[3]["params"],
        serde_json::from_str::<Value>(two.get()).unwrap()
    );
    assert_ne!(elements[1]["id"], elements[3]["id"]);
    // Answered in the other order, one of them with an error.
    let answer = json!([
        {"jsonrpc": "2.0", "id": elements[3]["id"], "result": {"b": true}},
        {"jsonrpc": "2.0", "id": elements[1]["id"], "error": {"code": -32601, "message": "Method not found"}},
    ]);
    send_json(&mut sender, &answer).await;
    let answers = batch.await.unwrap().unwrap();
    assert_eq!(answers.len(), 2, "one answer per call, none for notifications");
    assert!(
        matches!(answers[0].as_ref().map_err(PeerError::kind), Err(PeerErrorKind::Remote(e)) if e.code() == ErrorCode::MethodNotFound)
    );
    assert_eq!(&answers[1].as_ref().unwrap()[..], br#"{"b":true}"#);
    let stats = peer.stats();
    assert_eq!((stats.calls, stats.notifications), (2, 2));
    assert_eq!(peer.pending_calls(), 0);
}

#[tokio::test]
async fn a_batch_of_notifications_only_returns_once_sent_and_an_empty_one_sends_nothing() {
    let (peer, (mut receiver, _sender)) = peer_and_raw(Peer::builder(), Router::new(), Framing::Ndjson);
    assert!(peer.batch_raw(&[]).await.unwrap().is_empty());
    // Nothing waits for an answer that never comes.
    let answers = tokio::time::timeout(
        Duration::from_secs(10),
        peer.batch_raw(&[
            BatchEntry::notification("x", None),
            BatchEntry::notification("y", None),
        ]),
    )
    .await
    .expect("returns without an answer")
    .unwrap();
    assert!(answers.is_empty());
    assert_eq!(peer.pending_calls(), 0);
    // The first frame on the wire is the notifications' batch: the empty one sent nothing.
    let frame = next_json(&mut receiver).await;
    assert_eq!(
        frame,
        json!([{"jsonrpc": "2.0", "method": "x"}, {"jsonrpc": "2.0", "method": "y"}])
    );
    peer.close().await;
    let closed = peer
        .batch_raw(&[BatchEntry::notification("x", None)])
        .await
        .unwrap_err();
    assert!(closed.is_closed(), "{closed}");
}

#[tokio::test]
async fn a_batch_with_notifications_against_a_real_router() {
    let seen = Arc::new(AtomicUsize::new(0));
    let mut router = subtract_router();
    let counter = seen.clone();
    router.notification("tick", move |_: NoParams| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let (client, _server) = pair(Router::new(), router);
    let params = rpcwire::RawJson::new("[10,4]").unwrap();
    let answers = client
        .batch_raw(&[
            BatchEntry::notification("tick", None),
            BatchEntry::call("subtract", Some(&params)),
            BatchEntry::notification("tick", None),
        ])
        .await
        .unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(&answers[0].as_ref().unwrap()[..], b"6");
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn notify_raw_writes_the_params_as_given() {
    let (peer, (mut receiver, _sender)) = peer_and_raw(Peer::builder(), Router::new(), Framing::Ndjson);
    let params = rpcwire::RawJson::new(r#"{"n": 1.50, "id": -0}"#).unwrap();
    peer.notify_raw("progress", Some(&params)).await.unwrap();
    peer.notify_raw("ping", None).await.unwrap();
    let frame = tokio::time::timeout(Duration::from_secs(10), receiver.receive())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        &frame[..],
        br#"{"jsonrpc":"2.0","method":"progress","params":{"n": 1.50, "id": -0}}"#
    );
    assert_eq!(
        next_json(&mut receiver).await,
        json!({"jsonrpc": "2.0", "method": "ping"})
    );
    assert_eq!(peer.stats().notifications, 2);
    let scalar = rpcwire::RawJson::new("7").unwrap();
    assert!(matches!(
        peer.notify_raw("x", Some(&scalar))
            .await
            .as_ref()
            .map_err(PeerError::kind),
        Err(PeerErrorKind::Params(_))
    ));
    peer.close().await;
    assert!(peer.notify_raw("late", None).await.unwrap_err().is_closed());
}

/// The forwarding program of the gateway issue, on the crate's own pieces: a router whose
/// fallback passes every call and notification it does not serve to an upstream peer, params
/// and results as they came, upstream errors answered as the upstream gave them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_forwards_calls_and_notifications_upstream() {
    let seen = Arc::new(AtomicUsize::new(0));
    let mut upstream_router = subtract_router();
    upstream_router.raw_method("echo", |params, reply| match params {
        Some(params) => Ok(reply.raw(&params.raw())),
        None => Ok(reply.null()),
    });
    let counter = seen.clone();
    upstream_router.notification("tick", move |_: NoParams| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let (upstream, _upstream_server) = pair(Router::new(), upstream_router);

    let mut gateway = Router::new();
    gateway.method("local", |_: NoParams| Ok("gateway"));
    gateway.fallback_async(move |call: rpcwire::dispatch::RawCall| {
        let upstream = upstream.clone();
        async move {
            let params = call.params().map(|p| p.to_raw_json());
            if call.is_notification() {
                upstream
                    .notify_raw(call.method(), params.as_ref())
                    .await
                    .map_err(|e| e.to_error_object())?;
                return Ok(rpcwire::JsonBytes::new(Bytes::from_static(b"null")).unwrap());
            }
            upstream
                .call_raw(call.method(), params.as_ref())
                .await
                .map_err(|e| e.to_error_object())
        }
    });
    let (client, _gateway_peer) = pair(Router::new(), gateway);

    let echoed = rpcwire::RawJson::new(r#"{"big":18446744073709551616,"x":1.50}"#).unwrap();
    let answer = client.call_raw("echo", Some(&echoed)).await.unwrap();
    assert_eq!(answer.as_str(), echoed.get());
    assert_eq!(client.call::<_, i64>("subtract", (10, 4)).await.unwrap(), 6);
    assert_eq!(client.call::<_, String>("local", ()).await.unwrap(), "gateway");
    match client.call::<_, i64>("missing", ()).await {
        Err(error) => match error.into_kind() {
            PeerErrorKind::Remote(error) => assert_eq!(error.code(), ErrorCode::MethodNotFound),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    client.notify("tick", ()).await.unwrap();
    // The notification went upstream: a later call through the same path finds it counted.
    tokio::time::timeout(Duration::from_secs(10), async {
        while seen.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the notification reaches the upstream");
}

/// Pretty-printed raw JSON (params given as text, a raw handler's result) keeps an NDJSON
/// frame on one line: its newlines are whitespace and go out as spaces.
#[tokio::test]
async fn pretty_printed_raw_json_stays_one_ndjson_frame() {
    let (peer, (mut receiver, mut sender)) = peer_and_raw(Peer::builder(), Router::new(), Framing::Ndjson);
    let pretty = rpcwire::RawJson::new("{\n  \"a\": [\n    1,\n    \"x\\ny\"\n  ]\n}").unwrap();
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move {
            let pretty = rpcwire::RawJson::new("{\n  \"a\": [\n    1,\n    \"x\\ny\"\n  ]\n}").unwrap();
            peer.call_raw("m", Some(&pretty)).await
        })
    };
    peer.notify("other", ()).await.unwrap();
    // Two frames, whichever comes first: each one line, each whole.
    let (first, second) = (next_json(&mut receiver).await, next_json(&mut receiver).await);
    let (request, other) = if first["method"] == "m" {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(
        request["params"],
        serde_json::from_str::<Value>(pretty.get()).unwrap()
    );
    assert_eq!(
        request["params"]["a"][1], "x\ny",
        "an escaped newline inside a string stays"
    );
    assert_eq!(other["method"], "other");
    // The answer's result is pretty-printed too, as a raw handler would write it.
    sender
        .send(Bytes::from(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"ok\": true}}}}",
            request["id"]
        )))
        .await
        .unwrap();
    sender.flush().await.unwrap();
    assert_eq!(call.await.unwrap().unwrap().as_str(), r#"{"ok": true}"#);

    let mut router = Router::new();
    router.raw_method("pretty", |_, reply| {
        Ok(reply.raw(&rpcwire::RawJson::new("[\n 1,\n 2\n]").unwrap()))
    });
    let (_server, (mut receiver, mut sender)) = peer_and_raw(Peer::builder(), router, Framing::Ndjson);
    send_json(
        &mut sender,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "pretty"}),
    )
    .await;
    send_json(
        &mut sender,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "pretty"}),
    )
    .await;
    for id in [1, 2] {
        assert_eq!(
            next_json(&mut receiver).await,
            json!({"jsonrpc": "2.0", "id": id, "result": [1, 2]})
        );
    }
}

/// When the other side stops reading, the outgoing queue fills: calls still end at their
/// deadline (the wait for room counts), and a notification gives up after the call timeout
/// saying why — instead of waiting forever.
#[tokio::test]
async fn calls_and_notifications_end_when_the_other_side_stops_reading() {
    let (ours, theirs) = tokio::io::duplex(64);
    let peer = Peer::builder()
        .outgoing_queue(1)
        .call_timeout(Duration::from_millis(200))
        .start(StreamTransport::from_io(ours, Framing::Ndjson), Router::new());
    let _not_reading = theirs;
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let peer = peer.clone();
            tokio::spawn(async move {
                peer.call_raw("m", Some(&rpcwire::RawJson::new(format!("[{i}]")).unwrap()))
                    .await
            })
        })
        .collect();
    for call in calls {
        let outcome = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .expect("every call ends")
            .unwrap();
        assert!(
            matches!(
                outcome.as_ref().map_err(PeerError::kind),
                Err(PeerErrorKind::TimedOut { .. })
            ),
            "{outcome:?}"
        );
    }
    let notified = tokio::time::timeout(Duration::from_secs(10), async {
        let mut last = Ok(());
        for _ in 0..20 {
            last = peer.notify("tick", ()).await;
            if last.is_err() {
                break;
            }
        }
        last
    })
    .await
    .expect("a notification gives up in time");
    let error = notified.unwrap_err();
    assert!(matches!(error.kind(), PeerErrorKind::QueueFull { .. }), "{error}");
    assert!(error.to_string().contains("not reading"), "{error}");
}

/// Every handler slot busy and the backlog full: a new request is answered at once with the
/// overload error and its id, nothing waits; the ones taken are answered once they run.
#[tokio::test]
async fn an_overloaded_peer_answers_at_once_instead_of_queueing() {
    let release = Arc::new(tokio::sync::Notify::new());
    let mut router = Router::new();
    let gate = release.clone();
    router.method_async("hold", move |(n,): (u32,)| {
        let gate = gate.clone();
        async move {
            gate.notified().await;
            Ok(n)
        }
    });
    let (peer, (mut receiver, mut sender)) = peer_and_raw(
        Peer::builder().max_concurrent_requests(1).max_queued_requests(1),
        router,
        Framing::Ndjson,
    );
    for n in 0..5 {
        send_json(
            &mut sender,
            &json!({"jsonrpc": "2.0", "id": n, "method": "hold", "params": [n]}),
        )
        .await;
    }
    // Requests 2, 3 and 4 found the slot and the backlog taken.
    for n in 2..5 {
        let answer = next_json(&mut receiver).await;
        assert_eq!(answer["id"], n, "{answer}");
        assert_eq!(answer["error"]["code"], rpcwire::transport::OVERLOADED_CODE);
        assert_eq!(answer["error"]["message"], "server overloaded");
    }
    assert_eq!(peer.stats().rejected_overloaded, 3);
    for n in 0..2 {
        release.notify_one();
        let answer = next_json(&mut receiver).await;
        assert_eq!(answer, json!({"jsonrpc": "2.0", "id": n, "result": n}));
    }
}
