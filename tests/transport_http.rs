//! JSON-RPC over HTTP (`http` feature): `HttpServer` on 127.0.0.1, called by hyper's own
//! client and, for what a client library will not send (oversized and endless bodies, slow
//! heads, pipelining), by a plain socket. Every test is bounded in time.

#![cfg(feature = "http")]

#[path = "support/http_server.rs"]
mod http_server;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rpcwire::dispatch::Router;
use rpcwire::transport::http::{HttpServer, HttpService};

use http_server::{spec_router, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// POSTs `body` with hyper's client; the status, the content type and the body.
async fn post(address: SocketAddr, content_type: &str, body: &'static str) -> (u16, Option<String>, String) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let request = http::Request::post(format!("http://{address}/"))
        .header("content-type", content_type)
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .expect("an answer in time")
        .unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, kind, String::from_utf8(body.to_vec()).unwrap())
}

/// Writes `request` on a fresh socket and reads until the server closes it or `limit` passes.
async fn raw(address: SocketAddr, request: &[u8], limit: Duration) -> String {
    let mut socket = TcpStream::connect(address).await.unwrap();
    socket.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(limit, socket.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn requests_batches_and_notifications() {
    let server = start(HttpServer::new(spec_router())).await;
    let (status, kind, body) = post(
        server.address,
        "application/json",
        r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
    )
    .await;
    assert_eq!((status, kind.as_deref()), (200, Some("application/json")));
    assert_eq!(body, r#"{"jsonrpc":"2.0","id":1,"result":19}"#);

    let (status, _, body) = post(
        server.address,
        "application/json; charset=utf-8",
        r#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"#,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body, r#"[{"jsonrpc":"2.0","id":"1","result":7}]"#);

    // Only notifications: nothing to answer.
    let (status, _, body) = post(
        server.address,
        "application/json",
        r#"[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"#,
    )
    .await;
    assert_eq!((status, body.as_str()), (204, ""));
}

#[tokio::test]
async fn malformed_json_is_a_200_with_the_parse_error() {
    let server = start(HttpServer::new(spec_router())).await;
    let (status, _, body) = post(
        server.address,
        "application/json",
        r#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#,
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        body.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#),
        "{body}"
    );
}

#[tokio::test]
async fn other_methods_and_content_types_are_refused() {
    let server = start(HttpServer::new(spec_router())).await;
    let (status, _, _) = post(server.address, "text/plain", "{}").await;
    assert_eq!(status, 415);
    let answer = raw(
        server.address,
        b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("\r\nallow: post\r\n"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_refused_before_it_is_read() {
    let server = start(HttpServer::new(spec_router()).with_max_body(64)).await;
    // The head promises a gigabyte; none of it is sent, and none is waited for.
    let answer = raw(
        server.address,
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000000000\r\n\r\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

/// A client that sends its whole body before it reads (as most do) and sends six times the
/// default limit (more than loopback's socket buffers take in without the server reading):
/// the server reads and drops the rest (a lingering close), so the client's writes all go
/// through and it reads its 413 instead of a broken pipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_sending_a_whole_body_over_the_limit_reads_its_413() {
    let server = start(HttpServer::new(spec_router())).await;
    let address = server.address;
    let outcome = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let body = vec![b' '; 6 << 20];
        let mut socket = std::net::TcpStream::connect(address).unwrap();
        socket.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
        socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let head = format!(
            "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes())?;
        socket.write_all(&body)?;
        let mut answer = vec![0u8; 256];
        let n = socket.read(&mut answer)?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&answer[..n]).into_owned())
    })
    .await
    .unwrap();
    let answer = outcome.expect("the whole body is sent and the answer read, no reset");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

#[tokio::test]
async fn an_endless_chunked_body_is_cut_at_the_limit() {
    let server = start(HttpServer::new(spec_router()).with_max_body(64)).await;
    let socket = TcpStream::connect(server.address).await.unwrap();
    let (mut reader, mut writer) = socket.into_split();
    writer
        .write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    // Chunks keep coming (far more than the server reads and drops past the limit) until
    // the server stops taking them.
    let sending = tokio::spawn(async move {
        let chunk = format!("3ff\r\n[{}1]\r\n", "1,".repeat(510)); // 0x3ff = 1023 bytes
        for _ in 0..10_000 {
            if writer.write_all(chunk.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let mut answer = vec![0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(10), reader.read(&mut answer)).await;
    let n = read.expect("an answer in time").unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    sending.abort();
}

#[tokio::test]
async fn a_chunked_body_in_pieces_is_answered_whole() {
    let server = start(HttpServer::new(spec_router()).with_max_body(64)).await;
    let mut socket = TcpStream::connect(server.address).await.unwrap();
    socket
        .write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    // 60 bytes in three chunks, each written apart so that the server reads them apart.
    let body = r#"{"jsonrpc":"2.0","method":"subtract","params":[50,8],"id":"c"}"#;
    for piece in [&body[..20], &body[20..41], &body[41..]] {
        let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
        socket.write_all(chunk.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    socket.write_all(b"0\r\n\r\n").await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.ends_with(r#"{"jsonrpc":"2.0","id":"c","result":42}"#),
        "{answer}"
    );
}

#[tokio::test]
async fn http2_with_prior_knowledge_is_served_too() {
    let server = start(HttpServer::new(spec_router())).await;
    let client = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http::<Full<Bytes>>();
    // Several requests at once on the one HTTP/2 connection.
    let calls = (0..8).map(|i| {
        let request = http::Request::post(format!("http://{}/", server.address))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(format!(
                r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},1],"id":{i}}}"#
            ))))
            .unwrap();
        let client = client.clone();
        async move {
            let response = client.request(request).await.unwrap();
            assert_eq!(response.version(), http::Version::HTTP_2);
            assert_eq!(response.status(), 200);
            response.into_body().collect().await.unwrap().to_bytes()
        }
    });
    let answers = tokio::time::timeout(Duration::from_secs(10), futures::future::join_all(calls))
        .await
        .expect("answers in time");
    for (i, answer) in answers.iter().enumerate() {
        let expected = format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{}}}"#, i as i64 - 1);
        assert_eq!(answer, expected.as_bytes());
    }
}

#[tokio::test]
async fn pipelined_requests_on_one_connection_are_answered_in_order() {
    let server = start(HttpServer::new(spec_router())).await;
    let one = r#"{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":1}"#;
    let two = r#"{"jsonrpc":"2.0","method":"subtract","params":[9,3],"id":2}"#;
    let request = format!(
        "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{one}\
         POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{two}",
        one.len(),
        two.len()
    );
    let answer = raw(server.address, request.as_bytes(), Duration::from_secs(10)).await;
    let first = answer.find(r#""id":1,"result":2"#).expect("the first answer");
    let second = answer.find(r#""id":2,"result":6"#).expect("the second answer");
    assert!(first < second, "{answer}");
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 2, "{answer}");
}

#[tokio::test]
async fn a_slow_head_is_cut_off_and_the_server_keeps_serving() {
    let server = start(HttpServer::new(spec_router()).with_header_timeout(Duration::from_millis(300))).await;
    let mut socket = TcpStream::connect(server.address).await.unwrap();
    socket.write_all(b"POST / HTTP/1.1\r\nho").await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer)).await;
    assert!(
        read.is_ok(),
        "the server closes the connection after its header timeout"
    );
    // Before the protocol is known (nothing sent, or only the start of the HTTP/2 preface)
    // the same timeout holds.
    for sent in [&b""[..], b"P", b"PRI * HTTP/2.0"] {
        let mut socket = TcpStream::connect(server.address).await.unwrap();
        socket.write_all(sent).await.unwrap();
        let read = tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer)).await;
        assert!(read.is_ok(), "closed after {sent:?} and the header timeout");
    }
    let (status, _, _) = post(
        server.address,
        "application/json",
        r#"{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":1}"#,
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_body_that_stops_arriving_times_out() {
    let service = HttpService::new(spec_router()).with_body_timeout(Duration::from_millis(300));
    let server = start(HttpServer::from_service(service)).await;
    let answer = raw(
        server.address,
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\"",
        Duration::from_secs(10),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn a_keep_alive_connection_idle_past_its_deadlines_serves_its_next_request() {
    // Head and body deadlines of each request are kept on the connection's one timer: an
    // earlier request's passing must not cut a later one short, nor a slow body go unnoticed.
    let service = HttpService::new(spec_router()).with_body_timeout(Duration::from_millis(300));
    let server =
        start(HttpServer::from_service(service).with_header_timeout(Duration::from_millis(600))).await;
    let mut socket = TcpStream::connect(server.address).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","method":"subtract","params":[3,1],"id":1}"#;
    let head = format!(
        "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let mut answers = Vec::new();
    for _ in 0..3 {
        // The body in two pieces 150 ms apart (within the body deadline), then 400 ms idle
        // (past the previous request's body deadline, within the head deadline).
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(&body.as_bytes()[..10]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
        socket.write_all(&body.as_bytes()[10..]).await.unwrap();
        let mut answer = vec![0; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut answer))
            .await
            .expect("an answer in time")
            .unwrap();
        answers.push(String::from_utf8_lossy(&answer[..n]).into_owned());
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    for answer in &answers {
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            answer.ends_with(r#"{"jsonrpc":"2.0","id":1,"result":2}"#),
            "{answer}"
        );
    }
    // A body that stops arriving on the same connection still times out.
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body.as_bytes()[..10]).await.unwrap();
    let mut answer = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), socket.read_to_string(&mut answer)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn many_connections_opened_and_dropped_leave_it_serving() {
    let server = start(HttpServer::new(spec_router())).await;
    // 10,000 connections opened and dropped, some after half a request head.
    for i in 0..10_000 {
        let mut socket = TcpStream::connect(server.address).await.unwrap();
        if i % 10 == 0 {
            let _ = socket.write_all(b"POST / HTTP/1.1\r\nhost").await;
        }
        drop(socket);
    }
    let (status, _, body) = post(
        server.address,
        "application/json",
        r#"{"jsonrpc":"2.0","method":"subtract","params":[2,1],"id":9}"#,
    )
    .await;
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"jsonrpc":"2.0","id":9,"result":1}"#)
    );
}

#[tokio::test]
async fn the_service_mounts_in_axum_beside_other_routes() {
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/rpc", HttpService::new(spec_router()));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    let body = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
    let request = format!(
        "POST /rpc HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = raw(address, request.as_bytes(), Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.ends_with(r#"{"jsonrpc":"2.0","id":1,"result":19}"#),
        "{answer}"
    );
    let health = raw(
        address,
        b"GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        Duration::from_secs(10),
    )
    .await;
    assert!(health.ends_with("ok"), "{health}");
    let _ = stop.send(());
}

/// `Peer` over `HttpClientTransport`: calls, raw calls and notifications reach rpcwire's
/// server as POSTs and their answers come back; remote errors keep their code.
#[tokio::test]
async fn a_peer_calls_the_server_over_http() {
    use rpcwire::transport::http::HttpClientTransport;
    use rpcwire::transport::{Peer, PeerError, PeerErrorKind};

    let server = start(HttpServer::new(spec_router())).await;
    let url = format!("http://{}/", server.address).parse().unwrap();
    let client = Peer::new(HttpClientTransport::new(url).unwrap(), Router::new());
    let difference: i64 = client.call("subtract", (42, 23)).await.unwrap();
    assert_eq!(difference, 19);
    let raw = rpcwire::RawJson::new(r#"{"minuend":1,"subtrahend":3}"#).unwrap();
    let bytes = client.call_raw("subtract", Some(&raw)).await.unwrap();
    assert_eq!(&bytes[..], b"-2");
    client.notify("update", [1, 2, 3]).await.unwrap();
    match client
        .call::<_, i64>("nope", ())
        .await
        .map_err(PeerError::into_kind)
    {
        Err(PeerErrorKind::Remote(error)) => assert_eq!(error.code().code(), -32601),
        other => panic!("{other:?}"),
    }
    // A batch is one POST; its answers come back as one array and reach each call.
    let one = rpcwire::RawJson::new("[10,4]").unwrap();
    let answers = client
        .call_batch_raw(&[("subtract", Some(&one)), ("nope", None), ("get_data", None)])
        .await
        .unwrap();
    assert_eq!(&answers[0].as_ref().unwrap()[..], b"6");
    assert!(
        matches!(answers[1].as_ref().map_err(PeerError::kind), Err(PeerErrorKind::Remote(e)) if e.code().code() == -32601)
    );
    assert_eq!(&answers[2].as_ref().unwrap()[..], br#"["hello",5]"#);
    // Notifications ride in a batch beside calls (the server answers only the calls), or
    // alone (the server answers 204 and nothing is waited for).
    use rpcwire::transport::BatchEntry;
    let mixed = client
        .batch_raw(&[
            BatchEntry::notification("update", Some(&one)),
            BatchEntry::call("subtract", Some(&one)),
        ])
        .await
        .unwrap();
    assert_eq!(mixed.len(), 1);
    assert_eq!(&mixed[0].as_ref().unwrap()[..], b"6");
    let alone = client
        .batch_raw(&[
            BatchEntry::notification("update", None),
            BatchEntry::notification("foobar", None),
        ])
        .await
        .unwrap();
    assert!(alone.is_empty());
    assert_eq!(client.pending_calls(), 0);
    assert_eq!(
        client.stats().frame_errors,
        0,
        "an empty 204 answer is not a bad frame"
    );
    // Many calls in flight at once, each its own exchange on the pooled connections.
    let calls = (0..50).map(|i| client.call::<_, i64>("subtract", (i, 1)));
    let results = futures::future::join_all(calls).await;
    for (i, result) in results.into_iter().enumerate() {
        assert_eq!(result.unwrap(), i as i64 - 1);
    }
    client.close().await;
}

/// A failed exchange (a status the server refuses with, a server that is not there) ends the
/// calls it carried with an error instead of leaving them waiting.
#[tokio::test]
async fn failed_exchanges_end_their_calls() {
    use rpcwire::transport::http::{HttpClientTransport, HTTP_FAILURE_CODE};
    use rpcwire::transport::{Peer, PeerError, PeerErrorKind};

    let server = start(HttpServer::new(spec_router()).with_max_body(64)).await;
    let url = format!("http://{}/", server.address).parse().unwrap();
    let client = Peer::new(HttpClientTransport::new(url).unwrap(), Router::new());
    let long = "x".repeat(200);
    match client
        .call::<_, serde_json::Value>("echo", [long])
        .await
        .map_err(PeerError::into_kind)
    {
        Err(PeerErrorKind::Remote(error)) => {
            assert_eq!(error.code().code(), HTTP_FAILURE_CODE);
            assert!(error.message().contains("413"), "{}", error.message());
            let data: serde_json::Value = error.data().unwrap().decode().unwrap();
            assert_eq!(data, serde_json::json!({"reached": true, "status": 413}));
        }
        other => panic!("{other:?}"),
    }

    // An answer over the client's response limit fails its call without being kept.
    let big = start(HttpServer::new(spec_router())).await;
    let url = format!("http://{}/", big.address).parse().unwrap();
    let small = Peer::new(
        HttpClientTransport::new(url).unwrap().with_max_response(64),
        Router::new(),
    );
    match small
        .call::<_, serde_json::Value>("echo", ["y".repeat(200)])
        .await
        .map_err(PeerError::into_kind)
    {
        Err(PeerErrorKind::Remote(error)) => {
            assert_eq!(error.code().code(), HTTP_FAILURE_CODE);
            assert_eq!(error.message(), "HTTP response over 64 bytes");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        small.call::<_, i64>("subtract", (3, 1)).await.unwrap(),
        2,
        "small answers still pass"
    );

    // Nothing listens on a port just released.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://{port}/").parse().unwrap();
    let nobody = Peer::new(
        HttpClientTransport::new(url)
            .unwrap()
            .with_timeout(Duration::from_secs(5)),
        Router::new(),
    );
    match nobody
        .call::<_, i64>("subtract", (1, 1))
        .await
        .map_err(PeerError::into_kind)
    {
        Err(PeerErrorKind::Remote(error)) => {
            assert_eq!(error.code().code(), HTTP_FAILURE_CODE);
            // Refused: nothing was sent, so it is safe to send again elsewhere.
            let data: serde_json::Value = error.data().unwrap().decode().unwrap();
            assert_eq!(data, serde_json::json!({"reached": false, "status": null}));
        }
        other => panic!("{other:?}"),
    }
}

/// A program that reads its upstream's address from its configuration: `http://…` and
/// `ws://…` open the matching transport, and a `Peer` calls through either the same way.
#[tokio::test]
async fn any_transport_is_chosen_from_the_address() {
    use rpcwire::frame::Framing;
    use rpcwire::transport::{AnyTransport, Peer};

    let server = start(HttpServer::new(spec_router())).await;
    for scheme in ["http", "ws"] {
        let address = format!("{scheme}://{}/", server.address);
        let transport = AnyTransport::open(&address, Framing::Ndjson).await.unwrap();
        let client = Peer::new(transport, Router::new());
        let sum: i64 = tokio::time::timeout(Duration::from_secs(10), client.call("sum", [1, 2, 3]))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(sum, 6, "{address}");
        client.close().await;

        // A received-frame limit, whatever the transport: an answer over it fails its call.
        let small = AnyTransport::open(&address, Framing::Ndjson)
            .await
            .unwrap()
            .with_max_frame(48);
        let client = Peer::builder()
            .call_timeout(Duration::from_secs(2))
            .start(small, Router::new());
        let long = tokio::time::timeout(
            Duration::from_secs(10),
            client.call::<_, Vec<String>>("echo", ["z".repeat(100)]),
        )
        .await
        .expect("ends in time");
        assert!(long.is_err(), "{address}: {long:?}");
        client.close().await;
    }
}

/// `tcp://` opens a byte stream in the framing given, and an address of no known kind is a
/// clear error.
#[tokio::test]
async fn any_transport_opens_tcp_and_refuses_unknown_addresses() {
    use rpcwire::frame::Framing;
    use rpcwire::transport::{AnyTransport, Peer, StreamTransport};

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("tcp://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        Peer::new(
            StreamTransport::from_io(socket, Framing::ContentLength),
            spec_router(),
        )
        .closed()
        .await;
    });
    let transport = AnyTransport::open(&address, Framing::ContentLength)
        .await
        .unwrap();
    assert_eq!(format!("{transport:?}"), r#"AnyTransport("Stream")"#);
    let client = Peer::new(transport, Router::new());
    let difference: i64 = tokio::time::timeout(Duration::from_secs(10), client.call("subtract", (5, 8)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(difference, -3);
    client.notify("update", [1]).await.unwrap();
    client.close().await;

    let error = AnyTransport::open("gopher://x", Framing::Ndjson)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("tcp://HOST:PORT"), "{error}");
    assert!(AnyTransport::open("tcp://127.0.0.1:1", Framing::Ndjson)
        .await
        .is_err());
}

/// An answer body that sends `chunks` pieces `every` apart.
struct Trickle {
    chunks: usize,
    every: Duration,
    next: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl http_body::Body for Trickle {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        if self.chunks == 0 {
            return std::task::Poll::Ready(None);
        }
        std::task::ready!(std::future::Future::poll(self.next.as_mut(), cx));
        self.chunks -= 1;
        let every = self.every;
        self.next.as_mut().reset(tokio::time::Instant::now() + every);
        std::task::Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from_static(b"piece\n")))))
    }
}

/// A service whose answer comes after `delay` and whose body trickles in 6 pieces.
#[derive(Clone)]
struct SlowService {
    delay: Duration,
    every: Duration,
}

impl tower_service::Service<http::Request<hyper::body::Incoming>> for SlowService {
    type Response = http::Response<Trickle>;
    type Error = std::convert::Infallible;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: http::Request<hyper::body::Incoming>) -> Self::Future {
        let (delay, every) = (self.delay, self.every);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            Ok(http::Response::new(Trickle {
                chunks: 6,
                every,
                next: Box::pin(tokio::time::sleep(every)),
            }))
        })
    }
}

#[tokio::test]
async fn the_head_deadline_spares_a_slow_answer_and_a_long_body_but_not_an_idle_connection() {
    // Header timeout 300 ms; the answer comes after 700 ms, and its body over 6 × 200 ms:
    // both far past the deadline, and the connection is busy all along.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let service = SlowService {
        delay: Duration::from_millis(700),
        every: Duration::from_millis(200),
    };
    let acceptor = rpcwire::transport::http::Acceptor::new().with_header_timeout(Duration::from_millis(300));
    let served = tokio::spawn(async move { acceptor.serve(listener, service, std::future::pending()).await });
    let mut socket = TcpStream::connect(address).await.unwrap();
    socket
        .write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !answer.ends_with(b"0\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buffer))
            .await
            .expect("the answer goes on in time")
            .unwrap();
        assert!(
            n > 0,
            "closed during the answer: {}",
            String::from_utf8_lossy(&answer)
        );
        answer.extend_from_slice(&buffer[..n]);
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(answer.matches("piece").count(), 6, "{answer}");
    assert!(
        started.elapsed() >= Duration::from_millis(1_900),
        "{:?}",
        started.elapsed()
    );
    // Idle after it, the connection is closed within two deadlines (with some slack).
    let idle = std::time::Instant::now();
    let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buffer))
        .await
        .expect("closed in time")
        .unwrap();
    assert_eq!(n, 0, "nothing more is sent");
    assert!(
        idle.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        idle.elapsed()
    );
    served.abort();
}
