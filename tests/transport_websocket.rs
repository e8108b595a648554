//! JSON-RPC over WebSocket on the HTTP server's port (`http` feature): `Peer` on both ends
//! (calls, batches, server-pushed notifications, the server calling the client), and
//! tokio-tungstenite's own client for what `Peer` never sends (binary messages, a message
//! over the limit, pings). On 127.0.0.1, every wait bounded.

#![cfg(feature = "http")]

#[path = "support/http_server.rs"]
mod http_server;
#[path = "support/websocket_overflow.rs"]
mod websocket_overflow;

use http_server::{spec_router, start};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::transport::http::{HttpServer, HttpService};
use rpcwire::transport::websocket::WebSocketTransport;
use rpcwire::transport::Peer;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_peer_calls_over_websocket_and_the_server_pushes_and_calls_back() {
    // Each connection's server-side peer is handed out: it notifies the client at once, and
    // the test uses it to call the client.
    let server_peers: Arc<Mutex<Vec<Peer>>> = Arc::default();
    let seen = server_peers.clone();
    let service = HttpService::new(spec_router()).on_websocket(move |peer| {
        let greeter = peer.clone();
        tokio::spawn(async move {
            let _ = greeter.notify("subscription", ("newHeads", 1)).await;
        });
        seen.lock().unwrap().push(peer);
    });
    let server = start(HttpServer::from_service(service)).await;
    let address = server.address;

    let (pushed, pushed_rx) = oneshot::channel::<(String, i64)>();
    let pushed = Mutex::new(Some(pushed));
    let mut client_router = Router::new();
    client_router
        .notification("subscription", move |(topic, n): (String, i64)| {
            if let Some(pushed) = pushed.lock().unwrap().take() {
                let _ = pushed.send((topic, n));
            }
        })
        .method("client_version", |_: NoParams| Ok("rpcwire-test/1"));
    let transport = WebSocketTransport::connect(&format!("ws://{address}/"))
        .await
        .unwrap();
    let client = Peer::new(transport, client_router);

    let difference: i64 = tokio::time::timeout(LIMIT, client.call("subtract", (42, 23)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(difference, 19);
    let raw = rpcwire::RawJson::new("[1,2,4]").unwrap();
    assert_eq!(&client.call_raw("sum", Some(&raw)).await.unwrap()[..], b"7");
    client.notify("update", [1]).await.unwrap();

    let (topic, n) = tokio::time::timeout(LIMIT, pushed_rx).await.unwrap().unwrap();
    assert_eq!((topic.as_str(), n), ("newHeads", 1));

    let server_side = server_peers
        .lock()
        .unwrap()
        .first()
        .cloned()
        .expect("the server's peer");
    let version: String = tokio::time::timeout(LIMIT, server_side.call("client_version", ()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(version, "rpcwire-test/1");
    client.close().await;
    tokio::time::timeout(LIMIT, server_side.closed()).await.unwrap();
}

#[tokio::test]
async fn batches_and_parse_errors_over_a_raw_websocket() {
    let server = start(HttpServer::from_service(HttpService::new(spec_router()))).await;
    let address = server.address;
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{address}/"))
        .await
        .unwrap();
    socket
        .send(Message::text(
            r#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"#,
        ))
        .await
        .unwrap();
    let answer = tokio::time::timeout(LIMIT, socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        answer,
        Message::text(r#"[{"jsonrpc":"2.0","id":"1","result":7}]"#)
    );
    socket.send(Message::text("{nope")).await.unwrap();
    let answer = tokio::time::timeout(LIMIT, socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        answer.to_text().unwrap().contains(r#""code":-32700"#),
        "{answer:?}"
    );
    // A ping is answered with a pong carrying the same payload.
    socket
        .send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    let answer = tokio::time::timeout(LIMIT, socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer, Message::Pong(b"are you there".to_vec().into()));
}

/// The close frame a raw client gets after sending `message`.
async fn close_code_after(service: HttpService, message: Message) -> Option<CloseCode> {
    close_code_after_all(service, vec![message]).await
}

/// The close frame a raw client gets after sending `messages` (it may close before the last).
async fn close_code_after_all(service: HttpService, messages: Vec<Message>) -> Option<CloseCode> {
    let server = start(HttpServer::from_service(service)).await;
    let address = server.address;
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{address}/"))
        .await
        .unwrap();
    for message in messages {
        let _ = socket.send(message).await;
    }
    loop {
        match tokio::time::timeout(LIMIT, socket.next())
            .await
            .expect("the server answers in time")
        {
            Some(Ok(Message::Close(frame))) => return frame.map(|frame| frame.code),
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => return None,
        }
    }
}

#[tokio::test]
async fn a_binary_message_closes_with_1003() {
    let code = close_code_after(
        HttpService::new(spec_router()),
        Message::Binary(vec![1, 2, 3].into()),
    )
    .await;
    assert_eq!(code, Some(CloseCode::Unsupported));
}

#[tokio::test]
async fn a_message_over_the_limit_closes_with_1009() {
    let service = HttpService::new(spec_router()).with_max_body(1024);
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"echo","params":["{}"],"id":1}}"#,
        "x".repeat(4096)
    );
    let code = close_code_after(service, Message::text(big)).await;
    assert_eq!(code, Some(CloseCode::Size));
}

#[tokio::test]
async fn a_message_far_over_the_limit_written_whole_still_reads_its_1009() {
    let server = start(HttpServer::from_service(HttpService::new(spec_router()))).await;
    let socket = tokio::net::TcpStream::connect(server.address).await.unwrap();
    websocket_overflow::a_message_far_over_the_limit_reads_its_1009(socket, "x").await;
}

/// `parts` sent as one text message in fragments (a text frame, then continuations).
fn fragments(parts: &[&[u8]]) -> Vec<Message> {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let opcode = OpCode::Data(if i == 0 { Data::Text } else { Data::Continue });
            Message::Frame(Frame::message(part.to_vec(), opcode, i + 1 == parts.len()))
        })
        .collect()
}

#[tokio::test]
async fn a_fragmented_message_is_answered_whole() {
    let server = start(HttpServer::from_service(HttpService::new(spec_router()))).await;
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{}/", server.address))
        .await
        .unwrap();
    // The split falls inside a two-byte character: the text is checked as a whole.
    let request = r#"{"jsonrpc":"2.0","method":"echo","params":["é!"],"id":3}"#.as_bytes();
    let cut = request.iter().position(|&b| b >= 0x80).unwrap() + 1;
    let parts: [&[u8]; 3] = [&request[..10], &request[10..cut], &request[cut..]];
    for frame in fragments(&parts) {
        socket.send(frame).await.unwrap();
    }
    let answer = tokio::time::timeout(LIMIT, socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        answer,
        Message::text(r#"{"jsonrpc":"2.0","id":3,"result":["é!"]}"#)
    );
}

#[tokio::test]
async fn fragments_over_the_limit_together_close_with_1009() {
    let service = HttpService::new(spec_router()).with_max_body(1024);
    // Each fragment is under the limit; together they are over it.
    let part = vec![b' '; 600];
    let code = close_code_after_all(service, fragments(&[b"[", &part, &part, b"]"])).await;
    assert_eq!(code, Some(CloseCode::Size));
}

#[tokio::test]
async fn fragmented_text_that_is_not_utf8_closes_with_1007() {
    let service = HttpService::new(spec_router());
    let code = close_code_after_all(service, fragments(&[b"[\"", b"\xff\xfe", b"\"]"])).await;
    assert_eq!(code, Some(CloseCode::Invalid));
}

#[tokio::test]
async fn a_receive_dropped_midway_loses_nothing() {
    use rpcwire::transport::{FrameReceiver, Transport};
    use tokio::io::AsyncWriteExt;
    let (server_io, mut client_io) = tokio::io::duplex(4096);
    let (mut receiver, _sender) = WebSocketTransport::server(server_io).split();
    // A masked text frame with a 16-bit length (126 bytes), as a client sends it.
    let text = format!("[{}]", "1,".repeat(62) + "1");
    let mask = [1u8, 2, 3, 4];
    let mut frame = vec![0x81, 0x80 | 126, 0, text.len() as u8];
    frame.extend_from_slice(&mask);
    frame.extend(text.bytes().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    // The first bytes of the header arrive, and the waiting receive is dropped...
    client_io.write_all(&frame[..3]).await.unwrap();
    let early = tokio::time::timeout(Duration::from_millis(50), receiver.receive()).await;
    assert!(early.is_err(), "nothing whole arrived yet");
    // ...then the rest: the next receive gives the whole message.
    client_io.write_all(&frame[3..]).await.unwrap();
    let message = tokio::time::timeout(LIMIT, receiver.receive())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(message.as_deref(), Some(text.as_bytes()));
}

#[tokio::test]
async fn a_plain_get_is_still_405() {
    let server = start(HttpServer::from_service(HttpService::new(spec_router()))).await;
    let address = server.address;
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    socket
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(LIMIT, socket.read_to_string(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
}

/// A client that sends its first message in the same write as its handshake (RFC 6455 asks
/// it to wait for the answer; some do not) still gets the 101 answer first, then the
/// message's answer. (With hyper's `pipeline_flush` the 101 was lost.)
#[tokio::test]
async fn a_message_sent_with_the_handshake_gets_the_101_first() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = start(HttpServer::new(spec_router())).await;
    let mut socket = tokio::net::TcpStream::connect(server.address).await.unwrap();
    let message = br#"{"jsonrpc":"2.0","method":"subtract","params":[3,1],"id":1}"#;
    let mut bytes = b"GET / HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
        sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
        .to_vec();
    bytes.extend_from_slice(&[0x81, 0x80 | message.len() as u8, 0, 0, 0, 0]); // masked with zeros
    bytes.extend_from_slice(message);
    socket.write_all(&bytes).await.unwrap();
    let expected = br#"{"jsonrpc":"2.0","id":1,"result":2}"#;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 1024];
    while !answer.ends_with(expected) {
        let n = tokio::time::timeout(LIMIT, socket.read(&mut buffer))
            .await
            .expect("an answer in time")
            .unwrap();
        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 101 "), "{text}");
    let head_end = text.find("\r\n\r\n").unwrap() + 4;
    assert_eq!(&answer[head_end..head_end + 2], &[0x81, expected.len() as u8]);
}
