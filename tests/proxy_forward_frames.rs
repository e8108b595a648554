//! `proxy::Gateway` behind `HttpServer`: a single request goes upstream as the client's frame
//! with only its id replaced by the gateway's, and the upstream's answer comes back as it was
//! written with the client's id put back byte for byte; upstream errors, foreign ids and
//! upstreams behind a `Peer` are answered with the client's id; refused methods, local
//! methods, notifications and batches keep the router's way.
#![cfg(feature = "http")]

#[path = "support/memory_upstream.rs"]
mod memory_upstream;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::proxy::{Gateway, Upstream, UpstreamGroup};
use rpcwire::transport::http::HttpServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the scripted upstream received, and answers each body with.
type Script = Arc<dyn Fn(&[u8]) -> String + Send + Sync>;

/// An HTTP upstream that records every body it gets and answers with `script(body)`.
async fn scripted_upstream(script: Script) -> (String, Arc<Mutex<Vec<Bytes>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = seen.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (script, seen) = (script.clone(), recorded.clone());
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                        let (script, seen) = (script.clone(), seen.clone());
                        async move {
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            let answer = script(&body);
                            seen.lock().unwrap().push(body);
                            Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(answer))))
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    (format!("http://{address}/"), seen)
}

/// Serves `router` with `HttpServer` on a port of its own.
async fn front(router: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(HttpServer::new(router).serve(listener));
    address
}

/// POSTs `body` and returns the status and the answer's exact bytes.
async fn post(address: SocketAddr, body: &str) -> (u16, String) {
    let exchange = async {
        let mut socket = TcpStream::connect(address).await.unwrap();
        let head = format!(
            "POST / HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(body.as_bytes()).await.unwrap();
        let mut raw = String::new();
        socket.read_to_string(&mut raw).await.unwrap();
        raw
    };
    let raw = tokio::time::timeout(std::time::Duration::from_secs(10), exchange)
        .await
        .expect("an answer in time");
    let status = raw[9..12].parse().unwrap();
    let (_, answer) = raw.split_once("\r\n\r\n").unwrap();
    (status, answer.to_owned())
}

/// The answer to `body`, a request or a batch of them: `answer` of each request, a batch's
/// as an array (its notifications get nothing).
fn each(body: &[u8], answer: impl Fn(&serde_json::Value) -> String) -> String {
    match serde_json::from_slice::<serde_json::Value>(body).unwrap() {
        serde_json::Value::Array(batch) => {
            let answers: Vec<String> = batch
                .iter()
                .filter(|r| r.get("id").is_some())
                .map(&answer)
                .collect();
            format!("[{}]", answers.join(","))
        }
        request => answer(&request),
    }
}

/// An upstream that answers every call with `{"result":…}` written its own way: members in
/// another order, spaces, and the id it was sent.
fn result_upstream() -> Script {
    Arc::new(|body: &[u8]| {
        each(body, |request| {
            format!(
                "{{ \"result\" : {{\"seen\": {}}} , \"id\" : {}, \"jsonrpc\":\"2.0\" }}",
                request["method"], request["id"]
            )
        })
    })
}

#[tokio::test]
async fn the_frame_goes_up_with_the_gateways_id_and_comes_back_as_written_with_the_clients() {
    let (url, seen) = scripted_upstream(result_upstream()).await;
    let router = Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()])).into_router();
    let address = front(router).await;
    for id in [
        r#""\u00e9x""#,
        "1.50",
        "-0",
        "18446744073709551616",
        r#""1""#,
        "null",
        "1",
    ] {
        let request = format!(
            r#"{{"jsonrpc":"2.0", "params" : [{{"to":"0x1"}}, "latest"],"id":{id},"method":"eth_call"}}"#
        );
        let (status, answer) = post(address, &request).await;
        assert_eq!(status, 200, "{answer}");
        // The upstream's answer as it wrote it, the client's id in its place.
        assert_eq!(
            answer,
            format!(r#"{{ "result" : {{"seen": "eth_call"}} , "id" : {id}, "jsonrpc":"2.0" }}"#)
        );
        // Upstream, the client's frame with only the id replaced.
        let sent = seen.lock().unwrap().pop().unwrap();
        assert_eq!(
            std::str::from_utf8(&sent).unwrap(),
            request.replace(&format!(r#""id":{id}"#), r#""id":1"#)
        );
    }
}

#[tokio::test]
async fn errors_foreign_ids_and_garbage_from_upstream_are_answered_with_the_clients_id() {
    let script: Script = Arc::new(|body: &[u8]| {
        let request: serde_json::Value = serde_json::from_slice(body).unwrap();
        match request["method"].as_str().unwrap() {
            "fails" => r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found","data":[1, 2]}}"#
                .to_owned(),
            "foreign" => r#"{"jsonrpc":"2.0","id":2,"result":true}"#.to_owned(),
            "string_id" => r#"{"jsonrpc":"2.0","id":"1","result":true}"#.to_owned(),
            _ => "not json".to_owned(),
        }
    });
    let (url, _) = scripted_upstream(script).await;
    let router = Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()])).into_router();
    let address = front(router).await;
    let (_, answer) = post(address, r#"{"jsonrpc":"2.0","id":"a","method":"fails"}"#).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32000,"message":"header not found","data":[1, 2]}}"#
    );
    for method in ["foreign", "string_id", "garbage"] {
        let (status, answer) = post(
            address,
            &format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}"}}"#),
        )
        .await;
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(status, 200);
        assert_eq!(answer["id"], 7, "{method}: {answer}");
        // A gateway error (no usable answer, it may have run), the reason in `data`.
        assert_eq!(answer["error"]["code"], -32011, "{method}: {answer}");
        let reason = answer["error"]["data"].as_str().unwrap();
        assert!(
            reason.ends_with("the upstream's answer is not a response to the call"),
            "{reason}"
        );
    }
}

#[tokio::test]
async fn refused_local_and_batched_messages_keep_the_routers_way() {
    let (url, seen) = scripted_upstream(result_upstream()).await;
    let mut router = Router::new();
    router.method("gateway_version", |_: NoParams| Ok("2"));
    Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()]))
        .deny(["admin_peers"])
        .install(&mut router);
    let address = front(router).await;
    let (_, answer) = post(address, r#"{"jsonrpc":"2.0","id":1,"method":"gateway_version"}"#).await;
    assert_eq!(answer, r#"{"jsonrpc":"2.0","id":1,"result":"2"}"#);
    let (_, answer) = post(address, r#"{"jsonrpc":"2.0","id":2,"method":"admin_peers"}"#).await;
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601"#),
        "{answer}"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "a local or refused method went upstream"
    );
    // A batch whose every element is forwarded, with plain ids, goes upstream whole as it
    // came (one POST); the upstream's answer comes back as it wrote it.
    let (_, answer) = post(
        address,
        r#"[{"jsonrpc":"2.0","id":3,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"note"}]"#,
    )
    .await;
    assert_eq!(
        answer,
        r#"[{ "result" : {"seen": "eth_chainId"} , "id" : 3, "jsonrpc":"2.0" }]"#
    );
    let (status, answer) = post(address, r#"{"jsonrpc":"2.0","method":"note"}"#).await;
    assert_eq!((status, answer.as_str()), (204, ""));
    let bodies: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|body| String::from_utf8(body.to_vec()).unwrap())
        .collect();
    assert_eq!(
        bodies,
        [
            r#"[{"jsonrpc":"2.0","id":3,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"note"}]"#,
            r#"{"jsonrpc":"2.0","method":"note"}"#
        ]
    );
}

#[tokio::test]
async fn an_upstream_behind_a_peer_answers_with_the_clients_id() {
    let router = Gateway::new(UpstreamGroup::new(vec![memory_upstream::healthy("main")])).into_router();
    let address = front(router).await;
    let (_, answer) = post(
        address,
        r#"{"jsonrpc":"2.0","id":1.50,"method":"subtract","params":[5,3]}"#,
    )
    .await;
    assert_eq!(answer, r#"{"jsonrpc":"2.0","id":1.50,"result":2}"#);
    let (_, answer) = post(address, r#"{"jsonrpc":"2.0","id":"b","method":"busy"}"#).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":"b","error":{"code":-32000,"message":"server busy"}}"#
    );
}

#[tokio::test]
async fn an_answer_past_the_request_size_limit_comes_back_whole() {
    // Real Ethereum answers (blocks with transactions, traces) reach several MB: the upstream's
    // answer is bounded by the response limit, not by the parser's 1 MiB default for requests.
    let big = "ab".repeat(3 << 19); // 3 MiB of text
    let result = format!(r#"{{"blob":"{big}"}}"#);
    let answered = result.clone();
    let script: Script = Arc::new(move |body: &[u8]| {
        each(body, |request| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{answered}}}"#,
                request["id"]
            )
        })
    });
    let (url, _) = scripted_upstream(script).await;
    let pool = UpstreamGroup::new(vec![Upstream::address_limited(&url, 8 << 20).unwrap()]);
    let address = front(Gateway::new(pool).into_router()).await;
    let (_, single) = post(
        address,
        r#"{"jsonrpc":"2.0","id":"x","method":"eth_getBlockByNumber"}"#,
    )
    .await;
    assert_eq!(
        single,
        format!(r#"{{"jsonrpc":"2.0","id":"x","result":{result}}}"#)
    );
    // The same through the fallback (a batch's element).
    let (_, batch) = post(
        address,
        r#"[{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber"}]"#,
    )
    .await;
    assert_eq!(
        batch,
        format!(r#"[{{"jsonrpc":"2.0","id":2,"result":{result}}}]"#)
    );
    // Past the response limit: a gateway error, not a cut answer.
    let pool = UpstreamGroup::new(vec![Upstream::address_limited(&url, 1 << 20).unwrap()]);
    let address = front(Gateway::new(pool).into_router()).await;
    let (_, refused) = post(
        address,
        r#"{"jsonrpc":"2.0","id":3,"method":"eth_getBlockByNumber"}"#,
    )
    .await;
    let refused: serde_json::Value = serde_json::from_str(&refused).unwrap();
    assert_eq!(refused["id"], 3);
    assert!(
        refused["error"]["data"]
            .to_string()
            .contains("HTTP response over"),
        "{refused}"
    );
}

/// An NDJSON upstream on TCP (`tcp://…`, reached through a `Peer`) answering each request on
/// its first connection with `answer(its id's JSON text)`.
async fn tcp_upstream(answer: impl Fn(&serde_json::Value) -> String + Send + 'static) -> String {
    use tokio::io::AsyncBufReadExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("tcp://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (reader, mut writer) = socket.into_split();
        let mut lines = tokio::io::BufReader::new(reader).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let text = each(line.as_bytes(), |request| answer(&request["id"])) + "\n";
            writer.write_all(text.as_bytes()).await.unwrap();
        }
    });
    url
}

#[tokio::test]
async fn a_large_answer_from_an_upstream_behind_a_peer_comes_back_whole() {
    let big = "cd".repeat(3 << 19); // 3 MiB of text
    let result = format!(r#""{big}""#);
    let answered = result.clone();
    let url = tcp_upstream(move |id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{answered}}}"#)).await;
    let pool = UpstreamGroup::new(vec![Upstream::address_limited(&url, 8 << 20).unwrap()]);
    let address = front(Gateway::new(pool).into_router()).await;
    let (_, single) = post(
        address,
        r#"{"jsonrpc":"2.0","id":"y","method":"debug_traceTransaction"}"#,
    )
    .await;
    assert_eq!(
        single,
        format!(r#"{{"jsonrpc":"2.0","id":"y","result":{result}}}"#)
    );
}

/// An upstream that answers every call with `answer`, its `"id":1` being the gateway's.
fn constant_upstream(answer: &'static str) -> Script {
    Arc::new(move |_: &[u8]| answer.to_owned())
}

#[tokio::test]
async fn error_answers_come_back_as_the_upstream_wrote_them() {
    // Members in the upstream's order, its escapes, a member the specification does not name.
    let written = r#"{"error":{"message":"caf\u00e9 \/ reverted","code":-32000,"data":{"b":1,"a":[1.50]},"x":true},"id":1,"jsonrpc":"2.0"}"#;
    let (url, _) = scripted_upstream(constant_upstream(written)).await;
    let router = Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()])).into_router();
    let address = front(router).await;
    let (status, answer) = post(address, r#"{"jsonrpc":"2.0","id":"k\u00e9","method":"eth_call"}"#).await;
    assert_eq!(status, 200);
    assert_eq!(answer, written.replace(r#""id":1"#, r#""id":"k\u00e9""#));
    // Inside a batch too.
    let (_, answer) = post(
        address,
        r#"[{"jsonrpc":"2.0","id":4,"method":"eth_call"},{"jsonrpc":"2.0","id":5,"method":"eth_call"}]"#,
    )
    .await;
    assert_eq!(
        answer,
        format!(
            "[{},{}]",
            written.replace(r#""id":1"#, r#""id":4"#),
            written.replace(r#""id":1"#, r#""id":5"#)
        )
    );
}

#[tokio::test]
async fn answers_that_break_the_specification_are_refused_with_what_came_or_delivered() {
    use rpcwire::proxy::NonConformingPolicy;
    let script: Script = Arc::new(|body: &[u8]| {
        let request: serde_json::Value = serde_json::from_slice(body).unwrap();
        match request["method"].as_str().unwrap() {
            "beside" => r#"{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32000,"message":"header not found"}}"#,
            _ => r#"{"jsonrpc":"2.0","id":1,"result":null,"error":null}"#,
        }
        .to_owned()
    });
    let (url, _) = scripted_upstream(script).await;
    let mut router = Router::new();
    let gateway =
        Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()])).install(&mut router);
    let address = front(router).await;
    let (_, answer) = post(address, r#"{"jsonrpc":"2.0","id":9,"method":"beside"}"#).await;
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["error"]["code"], -32012, "{answer}");
    // The node's own error is kept, and the reason says what was wrong; never "no answer".
    assert_eq!(
        answer["error"]["data"]["error"],
        serde_json::json!({"code":-32000,"message":"header not found"})
    );
    assert!(
        answer["error"]["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("result"),
        "{answer}"
    );
    let (_, answer) = post(address, r#"{"jsonrpc":"2.0","id":10,"method":"both_null"}"#).await;
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["error"]["code"], -32012, "{answer}");
    assert_eq!(answer["error"]["data"]["error"], serde_json::Value::Null);
    assert_eq!(gateway.stats().non_conforming, 2);

    // Delivered as the upstream wrote it, with the client's id.
    let router = Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()]))
        .non_conforming(NonConformingPolicy::Deliver)
        .into_router();
    let address = front(router).await;
    let (_, answer) = post(address, r#"{"jsonrpc":"2.0","id":"c","method":"beside"}"#).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":"c","result":null,"error":{"code":-32000,"message":"header not found"}}"#
    );
}

/// The same forwarding for a client behind a `Peer` (TCP, stdio, WebSocket): its frame goes
/// up with the gateway's id and the answer frame comes back as the upstream wrote it.
#[tokio::test]
async fn a_client_behind_a_peer_gets_the_same_frame_forwarding() {
    use rpcwire::frame::Framing;
    use rpcwire::transport::{Peer, StreamTransport};
    use tokio::io::AsyncBufReadExt;
    let written = r#"{"error":{"message":"caf\u00e9","code":3},"id":1,"jsonrpc":"2.0"}"#;
    let (url, seen) = scripted_upstream(constant_upstream(written)).await;
    let router = Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()])).into_router();
    let (ours, theirs) = tokio::io::duplex(64 << 10);
    let server = Peer::new(StreamTransport::from_io(theirs, Framing::Ndjson), router);
    let (reader, mut writer) = tokio::io::split(ours);
    let request = r#"{"jsonrpc":"2.0","id":1.50,"method":"eth_call","params":[{"to":"0x1"}]}"#;
    writer.write_all(format!("{request}\n").as_bytes()).await.unwrap();
    let mut lines = tokio::io::BufReader::new(reader).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer in time")
        .unwrap()
        .unwrap();
    assert_eq!(line, written.replace(r#""id":1"#, r#""id":1.50"#));
    let sent = seen.lock().unwrap().pop().unwrap();
    assert_eq!(
        std::str::from_utf8(&sent).unwrap(),
        request.replace(r#""id":1.50"#, r#""id":1"#)
    );
    server.close().await;
}

#[tokio::test]
async fn error_answers_from_an_upstream_behind_a_peer_keep_the_error_as_written() {
    // Members in the upstream's order, its escapes, a member the specification does not name.
    let error = r#"{"message":"caf\u00e9 \/ reverted","code":3,"data":{"b":1,"a":[1.50]},"x":true}"#;
    let url = tcp_upstream(move |id| format!(r#"{{"error":{error},"id":{id},"jsonrpc":"2.0"}}"#)).await;
    let address =
        front(Gateway::new(UpstreamGroup::new(vec![Upstream::address(&url).unwrap()])).into_router()).await;
    let (status, single) = post(address, r#"{"jsonrpc":"2.0","id":"k\u00e9","method":"eth_call"}"#).await;
    assert_eq!(status, 200);
    assert_eq!(
        single,
        format!(r#"{{"jsonrpc":"2.0","id":"k\u00e9","error":{error}}}"#)
    );
    // Inside a batch (sent upstream as one batch on the connection) each gets its own id and
    // the error's code, message and data as they came — written again: a connection's
    // batch answer is read element by element, its members' order and the member the
    // specification does not name are not kept.
    let (_, batch) = post(
        address,
        r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":[],"method":"b"}]"#,
    )
    .await;
    let one = r#"{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"café / reverted","data":{"b":1,"a":[1.50]}}}"#;
    assert!(batch.starts_with(&format!("[{one},")), "{batch}");
}

#[tokio::test]
async fn a_busy_answer_that_is_the_last_word_comes_back_as_the_upstream_wrote_it() {
    use rpcwire::proxy::RetryPolicy;
    use std::time::Duration;
    // (A limit, -32005, is not this: it pauses the upstream; see tests/proxy_limits.rs.)
    let written = r#"{"id":1,"error":{"message":"header not found","code":-32000,"data":{"block":"0x1"}},"jsonrpc":"2.0"}"#;
    let (url, seen) = scripted_upstream(constant_upstream(written)).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&url).unwrap()]).with_retry(
        RetryPolicy::new()
            .with_backoff(Duration::ZERO, Duration::ZERO)
            .safe_method("eth_chainId")
            .retry_code(-32000),
    );
    let address = front(Gateway::new(group).into_router()).await;
    let (status, answer) = post(address, r#"{"jsonrpc":"2.0","id":"q","method":"eth_chainId"}"#).await;
    assert_eq!(status, 200);
    assert_eq!(answer, written.replace(r#""id":1"#, r#""id":"q""#));
    assert_eq!(seen.lock().unwrap().len(), 3, "every attempt the policy allows");
}
