//! How a `Peer` writes its answers: the reader writes them itself when the connection is
//! free, yet a connection whose other side does not read never stops it from reading, and
//! the answers still go out whole and in order.
#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::transport::{FrameReceiver, FrameSender, Peer, StreamTransport, Transport};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_full_connection_does_not_stop_the_reader_and_answers_keep_their_order() {
    let ticks = Arc::new(AtomicUsize::new(0));
    let mut router = Router::new();
    router.method("echo", |text: (String,)| Ok(text.0));
    let seen = ticks.clone();
    router.notification("tick", move |_: rpcwire::dispatch::NoParams| {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    // 256 bytes of room towards the client, which reads nothing until the end: the first
    // answers fill it and the next write cannot finish.
    let (a, b) = tokio::io::duplex(256);
    let server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    let (mut receiver, mut sender) = StreamTransport::from_io(b, Framing::Ndjson).split();

    let calls = 20;
    let padding = "x".repeat(40);
    for id in 0..calls {
        let call = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"echo","params":["{padding}"]}}"#);
        sender.send(Bytes::from(call)).await.unwrap();
    }
    for _ in 0..calls {
        sender
            .send(Bytes::from_static(br#"{"jsonrpc":"2.0","method":"tick"}"#))
            .await
            .unwrap();
    }
    sender.flush().await.unwrap();

    // Every notification after the calls is read and handled while no answer is read.
    tokio::time::timeout(LIMIT, async {
        while ticks.load(Ordering::SeqCst) < calls {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the server keeps reading while its answers cannot be written");

    // Then every answer arrives, whole and in the order of the calls.
    for id in 0..calls {
        let frame = tokio::time::timeout(LIMIT, receiver.receive())
            .await
            .expect("the answers arrive")
            .unwrap()
            .expect("an answer, not the end");
        let answer: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"], padding.as_str());
    }
    assert_eq!(server.stats().answers_sent, calls as u64);
    server.close().await;
}
