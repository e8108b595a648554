//! `StreamableHttpService` from the client's side, called in-process as axum or hyper would
//! call it (and once over a socket through `serve`): sessions, the status codes the
//! specification asks for, JSON and SSE answers, requests to the client and their answers
//! in later POSTs, cancellation, stream resumption with `Last-Event-ID`, and the limits.
#![cfg(all(feature = "mcp", feature = "http"))]

#[path = "support/sse.rs"]
mod sse;

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use rpcwire::mcp::http::{McpBody, StreamableHttpService};
use rpcwire::mcp::{CallToolResult, McpContext, McpServer};
use serde_json::{json, Value};
use sse::{events_of, json_of, parse_events};
use tower_service::Service;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sleep {
    ms: u64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// How many `finish` calls ran to their end.
static FINISHED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn server() -> McpServer {
    McpServer::new("http-test", "1")
        .tool("finish", "Sleeps, then counts", |args: Sleep, _| async move {
            tokio::time::sleep(Duration::from_millis(args.ms)).await;
            FINISHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(CallToolResult::text("finished"))
        })
        .tool("sleep", "Sleeps", |args: Sleep, _| async move {
            tokio::time::sleep(Duration::from_millis(args.ms)).await;
            Ok(CallToolResult::text(format!("slept {}", args.ms)))
        })
        .tool(
            "ask",
            "Asks the client's model",
            |_: Nothing, cx: McpContext| async move {
                cx.log(rpcwire::mcp::LogLevel::Info, None, "asking")
                    .await
                    .map_err(|e| e.to_error_object())?;
                let answer = cx
                    .create_message(&json!({"messages": [], "maxTokens": 5}))
                    .await
                    .map_err(|e| e.to_error_object())?;
                Ok(CallToolResult::text(
                    answer["content"]["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .tool(
            "resume",
            "Closes its stream, then answers",
            |_: Nothing, cx: McpContext| async move {
                cx.progress(1.0, None, None)
                    .await
                    .map_err(|e| e.to_error_object())?;
                assert!(cx.close_stream());
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(CallToolResult::text("resumed"))
            },
        )
}

struct Client {
    service: StreamableHttpService,
    session: Option<String>,
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;

impl Client {
    fn new(service: StreamableHttpService) -> Client {
        Client {
            service,
            session: None,
        }
    }

    fn post(&self, body: &str) -> http::request::Builder {
        let mut request = Request::post("/mcp")
            .header("host", "127.0.0.1:1234")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let _ = body;
        request
    }

    async fn send(&mut self, request: Request<Full<Bytes>>) -> Response<McpBody> {
        tokio::time::timeout(Duration::from_secs(10), self.service.call(request))
            .await
            .expect("answered in time")
            .unwrap()
    }

    async fn post_body(&mut self, body: &str) -> Response<McpBody> {
        let request = self
            .post(body)
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap();
        self.send(request).await
    }

    async fn initialize(&mut self) -> Value {
        let response = self.post_body(INITIALIZE).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "application/json");
        self.session = Some(response.headers()["mcp-session-id"].to_str().unwrap().to_owned());
        let answer = json_of(response).await;
        let initialized = self
            .post_body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        assert_eq!(initialized.status(), StatusCode::ACCEPTED);
        answer
    }
}

#[tokio::test]
async fn a_session_starts_at_initialize_and_ends_at_delete() {
    let service = StreamableHttpService::new(server());
    let mut client = Client::new(service.clone());
    let answer = client.initialize().await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(service.session_count(), 1);
    let session = client.session.clone().unwrap();
    assert_eq!(session.len(), 32, "128 random bits as hex: {session}");
    let listed = client
        .post_body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    assert_eq!(listed.status(), StatusCode::OK);
    assert_eq!(
        json_of(listed).await["result"]["tools"].as_array().unwrap().len(),
        4
    );
    let delete = Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", &session);
    let deleted = client.send(delete.body(Full::default()).unwrap()).await;
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(service.session_count(), 0);
    let gone = client
        .post_body(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(
        gone.status(),
        StatusCode::NOT_FOUND,
        "an ended session is 404, so the client starts over"
    );
    let delete = Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", &session);
    assert_eq!(
        client.send(delete.body(Full::default()).unwrap()).await.status(),
        StatusCode::NOT_FOUND
    );
    let delete = Request::delete("/mcp").header("host", "localhost");
    assert_eq!(
        client.send(delete.body(Full::default()).unwrap()).await.status(),
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn requests_that_break_the_rules_get_the_status_the_specification_names() {
    let service = StreamableHttpService::new(server());
    let mut client = Client::new(service.clone());
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let no_session = client.post_body(ping).await;
    assert_eq!(no_session.status(), StatusCode::BAD_REQUEST);
    let body = json_of(no_session).await;
    assert_eq!(body["error"]["code"], -32000);
    assert_eq!(body["id"], Value::Null);
    client.session = Some("00".repeat(16));
    assert_eq!(client.post_body(ping).await.status(), StatusCode::NOT_FOUND);
    client.session = None;
    client.initialize().await;
    let cases: Vec<(Request<Full<Bytes>>, StatusCode)> = vec![
        (
            client
                .post(ping)
                .header("accept", "application/json")
                .body(Full::new(Bytes::from(ping)))
                .unwrap(),
            StatusCode::OK,
        ),
        (
            Request::post("/mcp")
                .header("host", "127.0.0.1")
                .header("accept", "application/json")
                .header("content-type", "application/json")
                .header("mcp-session-id", client.session.clone().unwrap())
                .body(Full::new(Bytes::from(ping)))
                .unwrap(),
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            Request::post("/mcp")
                .header("host", "127.0.0.1")
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "text/plain")
                .header("mcp-session-id", client.session.clone().unwrap())
                .body(Full::new(Bytes::from(ping)))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            client
                .post(ping)
                .header("mcp-protocol-version", "1999-01-01")
                .body(Full::new(Bytes::from(ping)))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            client
                .post(ping)
                .header("mcp-protocol-version", "2025-03-26")
                .body(Full::new(Bytes::from(ping)))
                .unwrap(),
            StatusCode::OK,
        ),
        (
            Request::post("/mcp")
                .header("host", "evil.example.com")
                .header("origin", "http://evil.example.com")
                .body(Full::new(Bytes::from(INITIALIZE)))
                .unwrap(),
            StatusCode::FORBIDDEN,
        ),
        (
            client
                .post(ping)
                .header("origin", "http://evil.example.com")
                .body(Full::new(Bytes::from(ping)))
                .unwrap(),
            StatusCode::FORBIDDEN,
        ),
        (
            Request::put("/mcp")
                .header("host", "localhost")
                .body(Full::default())
                .unwrap(),
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            client.post("").body(Full::new(Bytes::from("{oops"))).unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            client
                .post("")
                .body(Full::new(Bytes::from("x".repeat(2 << 20))))
                .unwrap(),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            client
                .post("")
                .body(Full::new(Bytes::from(
                    r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                )))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
        (
            Request::post("/mcp")
                .header("host", "127.0.0.1")
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-session-id", "")
                .body(Full::new(Bytes::from(ping)))
                .unwrap(),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (n, (request, status)) in cases.into_iter().enumerate() {
        let method = request.method().clone();
        let answer = client.send(request).await;
        assert_eq!(answer.status(), status, "case {n} ({method})");
    }
    // The PUT says what is allowed.
    let put = client
        .send(
            Request::put("/mcp")
                .header("host", "localhost")
                .body(Full::default())
                .unwrap(),
        )
        .await;
    assert_eq!(put.headers()["allow"], "GET, POST, DELETE");
    // Notifications and responses alone: 202 with no body.
    let note = client
        .post_body(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#)
        .await;
    assert_eq!(note.status(), StatusCode::ACCEPTED);
    let stray = client.post_body(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#).await;
    assert_eq!(stray.status(), StatusCode::ACCEPTED);
    // Without a host check, a foreign host is served.
    let open = StreamableHttpService::new(server()).without_host_check();
    let mut anyone = Client::new(open);
    let request = Request::post("/mcp")
        .header("host", "mcp.example.com")
        .header("accept", "*/*")
        .header("content-type", "application/json; charset=utf-8")
        .body(Full::new(Bytes::from(INITIALIZE)))
        .unwrap();
    assert_eq!(anyone.send(request).await.status(), StatusCode::OK);
    let named = StreamableHttpService::new(server()).with_allowed_hosts(["mcp.example.com"]);
    let mut named = Client::new(named);
    let request = Request::post("/mcp")
        .header("host", "mcp.example.com:443")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(INITIALIZE)))
        .unwrap();
    assert_eq!(named.send(request).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn discover_and_ping_are_answered_without_a_session() {
    let service = StreamableHttpService::new(server());
    let mut client = Client::new(service.clone());
    let discover = client
        .post_body(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#)
        .await;
    assert_eq!(discover.status(), StatusCode::OK);
    assert!(discover.headers().get("mcp-session-id").is_none());
    assert_eq!(
        json_of(discover).await["result"]["supportedVersions"][0],
        "2024-11-05"
    );
    let ping = client
        .post_body(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(json_of(ping).await["result"], json!({}));
    assert_eq!(service.session_count(), 0, "no session was kept");
    let bad_init = client
        .post_body(r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#)
        .await;
    assert_eq!(bad_init.status(), StatusCode::OK);
    assert!(
        bad_init.headers().get("mcp-session-id").is_none(),
        "a failed initialize starts nothing"
    );
    assert_eq!(json_of(bad_init).await["error"]["code"], -32602);
    assert_eq!(service.session_count(), 0);
}

#[tokio::test]
async fn a_ping_under_a_handshake_revision_needs_the_session_id() {
    let service = StreamableHttpService::new(server());
    let mut client = Client::new(service.clone());
    client.initialize().await;
    let session = client.session.take().unwrap();
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let versioned = |client: &Client| {
        client
            .post(ping)
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(Bytes::from(ping)))
            .unwrap()
    };
    let refused = client.send(versioned(&client)).await;
    assert_eq!(
        refused.status(),
        StatusCode::BAD_REQUEST,
        "a server that issues session ids answers 400 to a request without one"
    );
    assert_eq!(json_of(refused).await["error"]["code"], rpcwire::codes::REFUSED);
    client.session = Some(session);
    let answered = client.send(versioned(&client)).await;
    assert_eq!(answered.status(), StatusCode::OK);
    assert_eq!(json_of(answered).await["result"], json!({}));
}

#[tokio::test]
async fn a_server_with_a_token_asks_every_request_for_it() {
    let service = StreamableHttpService::new(server()).with_token("s3cret");
    let mut client = Client::new(service);
    let refused = client.post_body(INITIALIZE).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(refused.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        json_of(refused).await["error"]["code"],
        rpcwire::codes::UNAUTHORIZED
    );
    let wrong = client
        .post(INITIALIZE)
        .header("authorization", "Bearer s3cre")
        .body(Full::new(Bytes::from(INITIALIZE)))
        .unwrap();
    assert_eq!(client.send(wrong).await.status(), StatusCode::UNAUTHORIZED);
    let right = client
        .post(INITIALIZE)
        .header("authorization", "Bearer s3cret")
        .body(Full::new(Bytes::from(INITIALIZE)))
        .unwrap();
    let answered = client.send(right).await;
    assert_eq!(answered.status(), StatusCode::OK);
    assert!(answered.headers().contains_key("mcp-session-id"));
}

#[tokio::test]
async fn a_tool_call_streams_its_messages_then_its_result_and_the_client_answers_in_a_later_post() {
    let service = StreamableHttpService::new(server());
    let mut client = Client::new(service);
    client.initialize().await;
    let call = client
        .post_body(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    assert_eq!(call.status(), StatusCode::OK);
    let mut body = call.into_body();
    let mut text = String::new();
    // Read until the sampling request arrives, then answer it in a second POST.
    let request = loop {
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        text.push_str(std::str::from_utf8(frame.data_ref().unwrap()).unwrap());
        let events = parse_events(&text);
        if let Some((_, data)) = events
            .iter()
            .find(|(_, data)| data.contains("sampling/createMessage"))
        {
            break serde_json::from_str::<Value>(data).unwrap();
        }
    };
    let events = parse_events(&text);
    assert!(
        events[0].1.is_empty() && !events[0].0.is_empty(),
        "a priming event first: {text}"
    );
    assert!(
        text.starts_with(&format!("id: {}\nretry: 1000\n", events[0].0)),
        "{text}"
    );
    assert!(
        events[1].1.contains("notifications/message"),
        "the log message: {text}"
    );
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}});
    let posted = client.post_body(&answer.to_string()).await;
    assert_eq!(posted.status(), StatusCode::ACCEPTED);
    let rest = tokio::time::timeout(Duration::from_secs(5), body.collect())
        .await
        .unwrap()
        .unwrap()
        .to_bytes();
    text.push_str(std::str::from_utf8(&rest).unwrap());
    let result = parse_events(&text).pop().unwrap().1;
    let result: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(result["id"], 7);
    assert_eq!(result["result"]["content"][0]["text"], "sampled");
}

#[tokio::test]
async fn a_cancelled_call_ends_its_stream_without_a_result() {
    let service = StreamableHttpService::new(server());
    let mut client = Client::new(service);
    client.initialize().await;
    // The call runs in the POST's own task: sent on a task of its own, as a server runs each
    // connection.
    let body = r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}"#;
    let request = client.post(body).body(Full::new(Bytes::from(body))).unwrap();
    let mut service = client.service.clone();
    let call = tokio::spawn(async move { service.call(request).await.unwrap() });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let cancel = client
        .post_body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}"#)
        .await;
    assert_eq!(cancel.status(), StatusCode::ACCEPTED);
    let events = events_of(
        tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .unwrap()
            .unwrap(),
    )
    .await;
    assert!(
        events.iter().all(|(_, data)| !data.contains("result")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_stream_closed_by_the_server_is_resumed_with_last_event_id() {
    let service = StreamableHttpService::new(server()).with_retry_interval(Duration::from_millis(500));
    let mut client = Client::new(service);
    client.initialize().await;
    let call = client.post_body(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"resume","_meta":{"progressToken":1}}}"#).await;
    let events = events_of(call).await;
    assert_eq!(
        events.len(),
        2,
        "the priming event and the progress, then the stream closes: {events:?}"
    );
    let last = events[1].0.clone();
    let resume = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", client.session.clone().unwrap())
        .header("last-event-id", &last)
        .body(Full::default())
        .unwrap();
    let resumed = events_of(client.send(resume).await).await;
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    let result: Value = serde_json::from_str(&resumed[0].1).unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "resumed");
    // The session's own stream: one reader at a time.
    let session = client.session.clone().unwrap();
    let get = || {
        Request::get("/mcp")
            .header("host", "localhost")
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session.clone())
            .body(Full::default())
            .unwrap()
    };
    let first = client.send(get()).await;
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(client.send(get()).await.status(), StatusCode::CONFLICT);
    drop(first);
    assert_eq!(
        client.send(get()).await.status(),
        StatusCode::OK,
        "the first reader left"
    );
    let no_sse = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json");
    assert_eq!(
        client.send(no_sse.body(Full::default()).unwrap()).await.status(),
        StatusCode::NOT_ACCEPTABLE
    );
    let no_session = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream");
    assert_eq!(
        client
            .send(no_session.body(Full::default()).unwrap())
            .await
            .status(),
        StatusCode::BAD_REQUEST
    );
    let unknown = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", "nope");
    assert_eq!(
        client.send(unknown.body(Full::default()).unwrap()).await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn sessions_are_bounded_and_idle_ones_make_room() {
    let service = StreamableHttpService::with_sessions(server(), 2, Duration::from_millis(100));
    for _ in 0..2 {
        Client::new(service.clone()).initialize().await;
    }
    let mut third = Client::new(service.clone());
    let refused = third.post_body(INITIALIZE).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    tokio::time::sleep(Duration::from_millis(150)).await;
    third.initialize().await;
    assert_eq!(
        service.session_count(),
        1,
        "the two idle sessions were ended to make room"
    );
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(service.sweep(), 1);
    assert_eq!(service.session_count(), 0);
}

#[tokio::test]
async fn calls_past_the_in_flight_limit_are_refused_with_an_error() {
    let service = StreamableHttpService::new(server().with_max_in_flight(1));
    let mut client = Client::new(service);
    client.initialize().await;
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}}"#;
    let request = client.post(body).body(Full::new(Bytes::from(body))).unwrap();
    let mut service = client.service.clone();
    let first = tokio::spawn(async move { service.call(request).await.unwrap() });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = client.post_body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1}}}"#).await;
    assert_eq!(second.headers()["content-type"], "application/json");
    let refused = json_of(second).await;
    assert_eq!(
        refused["error"]["code"],
        rpcwire::mcp::http::TOO_MANY_REQUESTS,
        "{refused}"
    );
    assert_eq!(refused["id"], 2);
    let first = first.await.unwrap();
    assert_eq!(
        first.headers()["content-type"],
        "application/json",
        "nothing sent before the result: JSON"
    );
    assert_eq!(json_of(first).await["result"]["content"][0]["text"], "slept 200");
}

#[tokio::test]
async fn a_client_that_does_not_answer_fails_the_tool_within_the_call_timeout() {
    let service = StreamableHttpService::new(server()).with_client_call_timeout(Duration::from_millis(100));
    let mut client = Client::new(service);
    client.initialize().await;
    let call = client
        .post_body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let events = events_of(call).await;
    let result: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(result["error"]["code"], -32603, "{result}");
}

#[tokio::test]
async fn served_over_a_socket_by_serve() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let served = tokio::spawn(StreamableHttpService::new(server()).serve(listener));
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let request = Request::post("/mcp")
        .header("host", address.to_string())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(INITIALIZE)))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().contains_key("mcp-session-id"));
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let answer: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(answer["result"]["serverInfo"]["name"], "http-test");
    served.abort();
}

#[tokio::test]
async fn a_request_head_that_never_ends_is_closed_by_the_accept_loop() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let served = tokio::spawn(StreamableHttpService::new(server()).serve(listener));
    // A slow-header client: part of a head, then nothing. The server's accept loop is the
    // plain HTTP server's, whose head deadline (10 s by default) closes the connection.
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the connection is still open after 20 s");
    let text = String::from_utf8_lossy(&rest);
    assert!(rest.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");
    served.abort();
}

#[tokio::test]
async fn a_client_that_goes_away_does_not_cancel_its_call() {
    let service = StreamableHttpService::new(server());
    let mut client = Client::new(service);
    client.initialize().await;
    let before = FINISHED.load(std::sync::atomic::Ordering::SeqCst);
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"finish","arguments":{"ms":100}}}"#;
    let request = client.post(body).body(Full::new(Bytes::from(body))).unwrap();
    let mut service = client.service.clone();
    let call = tokio::spawn(async move { service.call(request).await.unwrap() });
    tokio::time::sleep(Duration::from_millis(20)).await;
    call.abort(); // the connection is gone: the POST's task is dropped mid-call
    let _ = call.await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        FINISHED.load(std::sync::atomic::Ordering::SeqCst),
        before + 1,
        "the handler ran to its end"
    );
}
