//! `McpGateway` in front of stdio servers, called in-process as hyper or axum would call it:
//! a child per session started on `initialize` and ended with its process group; messages
//! both ways on the right streams; cancellation; and the faults — a child that exits,
//! crashes during `initialize`, never answers, cannot be started or writes a line over the
//! limit — each answered within a bound; the bounds and checks; a graceful shutdown; and a
//! thousand sessions that leave no process or descriptor behind. The misbehaving server is
//! tests/mcp/fake_server.py (Python, standard library only).
#![cfg(all(unix, feature = "mcp", feature = "http"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/sse.rs"]
mod sse;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use rpcwire::mcp::gateway::{McpGateway, StdioCommand, SERVER_GONE, SERVER_TIMEOUT, SHUTTING_DOWN};
use rpcwire::mcp::http::McpBody;
use serde_json::{json, Value};
use sse::{json_of, messages_of, parse_events};
use tower_service::Service;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;

fn fake(mode: &str) -> StdioCommand {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/fake_server.py");
    StdioCommand::new("python3").arg(script).arg(mode)
}

/// A client of one gateway session.
struct Client {
    gateway: McpGateway,
    session: Option<String>,
}

impl Client {
    fn new(gateway: &McpGateway) -> Client {
        Client {
            gateway: gateway.clone(),
            session: None,
        }
    }

    fn request(&self, method: &str, body: &str) -> Request<Full<Bytes>> {
        let mut request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", "127.0.0.1:1234")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
    }

    async fn send(&mut self, request: Request<Full<Bytes>>) -> Response<McpBody> {
        tokio::time::timeout(Duration::from_secs(15), self.gateway.call(request))
            .await
            .expect("answered in time")
            .unwrap()
    }

    async fn post(&mut self, body: &str) -> Response<McpBody> {
        let request = self.request("POST", body);
        self.send(request).await
    }

    /// Initializes; the answer.
    async fn initialize(&mut self) -> Value {
        let response = self.post(INITIALIZE).await;
        assert_eq!(response.status(), StatusCode::OK);
        self.session = Some(response.headers()["mcp-session-id"].to_str().unwrap().to_owned());
        let answer = json_of(response).await;
        let initialized = self
            .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        assert_eq!(initialized.status(), StatusCode::ACCEPTED);
        answer
    }

    /// Calls `tool` with `arguments` (request id `id`); the answer, from JSON or a stream.
    async fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        let response = self.post(&body.to_string()).await;
        assert_eq!(response.status(), StatusCode::OK);
        answer_of(response).await
    }

    async fn delete(&mut self) -> StatusCode {
        let request = self.request("DELETE", "");
        self.send(request).await.status()
    }
}

/// A host's side of `connect`: it writes lines and reads the answers.
struct HostLines {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl HostLines {
    fn new(host: tokio::io::DuplexStream) -> HostLines {
        use tokio::io::AsyncBufReadExt;
        let (read, write) = tokio::io::split(host);
        HostLines {
            write,
            lines: tokio::io::BufReader::new(read).lines(),
        }
    }

    /// Writes `line` (and a newline); the next line that comes back, as JSON.
    async fn exchange(&mut self, line: &str) -> Value {
        use tokio::io::AsyncWriteExt;
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&answer).unwrap()
    }
}

/// A gateway for two `mcp_server` children, `one` and `two`, under one endpoint.
fn two_demo_servers() -> McpGateway {
    let server = example_binary::example_binary("mcp_server");
    McpGateway::several([
        ("one", StdioCommand::new(&server)),
        ("two", StdioCommand::new(&server)),
    ])
}

/// The names of the tools a `tools/list` answer lists.
fn tool_names(listed: &Value) -> Vec<&str> {
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// The last message of a JSON or SSE answer.
async fn answer_of(response: Response<McpBody>) -> Value {
    if response.headers()["content-type"] == "application/json" {
        json_of(response).await
    } else {
        messages_of(response)
            .await
            .pop()
            .expect("an answer on the stream")
    }
}

/// Waits up to 10 s for `done`.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether process `pid` runs (a zombie does not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_owned())
        })
        .is_some_and(|rest| !rest.starts_with('Z'))
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

#[tokio::test]
async fn a_session_has_its_own_child_until_delete_ends_it_with_its_group() {
    let gateway = McpGateway::new(fake(""));
    let mut first = Client::new(&gateway);
    let initialized = first.initialize().await;
    assert_eq!(initialized["result"]["serverInfo"]["name"], "fake");
    let mut second = Client::new(&gateway);
    second.initialize().await;
    assert_ne!(first.session, second.session);
    let pid: u32 = text_of(&first.call(1, "pid", json!({})).await).parse().unwrap();
    let other: u32 = text_of(&second.call(1, "pid", json!({})).await).parse().unwrap();
    assert_ne!(pid, other, "a child per session");
    assert_eq!((gateway.session_count(), gateway.child_count()), (2, 2));
    assert_eq!(first.delete().await, StatusCode::OK);
    eventually("the first child is gone", || !running(pid)).await;
    assert!(running(other));
    assert_eq!(
        first
            .post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(first.delete().await, StatusCode::NOT_FOUND);
    eventually("one child left", || gateway.child_count() == 1).await;
    gateway.shutdown(Duration::from_secs(1)).await;
    assert_eq!(gateway.child_count(), 0);
    assert!(!running(other));
}

#[tokio::test]
async fn a_child_that_exits_mid_call_fails_every_call_at_once_and_ends_the_session() {
    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let mut waiting = Client {
        gateway: gateway.clone(),
        session: client.session.clone(),
    };
    let started = Instant::now();
    let slow = tokio::spawn(async move { waiting.call(1, "sleep", json!({"seconds": 30})).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let exited = client.call(2, "exit", json!({})).await;
    assert_eq!(exited["id"], 2);
    assert_eq!(exited["error"]["code"], SERVER_GONE);
    let message = exited["error"]["message"].as_str().unwrap();
    assert!(message.contains("exited") && message.contains('7'), "{message}");
    let slow = slow.await.unwrap();
    assert_eq!(
        (slow["id"].clone(), slow["error"]["code"].clone()),
        (json!(1), json!(SERVER_GONE))
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered at once, not at the call's timeout"
    );
    assert_eq!(
        client
            .post(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    eventually("the child is reaped", || gateway.child_count() == 0).await;
    assert_eq!(gateway.session_count(), 0);
}

#[tokio::test]
async fn a_child_that_fails_to_start_or_to_initialize_is_answered_and_reaped() {
    // Crashes on initialize.
    let gateway = McpGateway::new(fake("crash-init"));
    let mut client = Client::new(&gateway);
    let response = client.post(INITIALIZE).await;
    assert!(!response.headers().contains_key("mcp-session-id"));
    let answer = json_of(response).await;
    assert_eq!(answer["error"]["code"], SERVER_GONE);
    assert!(
        answer["error"]["message"].as_str().unwrap().contains('3'),
        "{answer}"
    );
    eventually("reaped", || gateway.child_count() == 0).await;
    assert_eq!(gateway.session_count(), 0);

    // Never answers.
    let gateway = McpGateway::new(fake("silent-init"))
        .with_timeouts(Duration::from_secs(5), Duration::from_millis(300));
    let started = Instant::now();
    let answer = json_of(Client::new(&gateway).post(INITIALIZE).await).await;
    assert_eq!(answer["error"]["code"], SERVER_TIMEOUT);
    assert!(started.elapsed() < Duration::from_secs(3));
    eventually("reaped", || gateway.child_count() == 0).await;

    // Cannot be started: answered, and the gateway goes on.
    let gateway = McpGateway::new(StdioCommand::new("/nonexistent/rpcwire-mcp-server"));
    let response = Client::new(&gateway).post(INITIALIZE).await;
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    let answer = json_of(response).await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(0), json!(SERVER_GONE))
    );
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("could not be started"));
    assert_eq!(gateway.child_count(), 0);
}

#[tokio::test]
async fn a_line_over_the_limit_ends_the_child_with_a_clear_error() {
    let gateway = McpGateway::new(fake("")).with_max_message(64 * 1024);
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let answer = client.call(1, "huge", json!({"bytes": 200_000})).await;
    assert_eq!(answer["error"]["code"], SERVER_GONE);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("over the limit of 65536"), "{message}");
    eventually("the child is ended", || gateway.child_count() == 0).await;
}

#[tokio::test]
async fn progress_logs_and_server_requests_go_on_the_calls_stream_and_the_answers_come_back() {
    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    // Progress, by the call's token, before the result.
    let body = r#"{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"tok-1"}}}"#;
    let messages = messages_of(client.post(body).await).await;
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        messages[0]["params"],
        json!({"progressToken": "tok-1", "progress": 1, "total": 2})
    );
    assert_eq!(messages[1]["params"]["progress"], 2);
    assert_eq!(messages[2]["id"], "p");
    // A log message and a request to the client on the call's stream; the client's answer,
    // posted apart, reaches the child, whose result carries it.
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;
    let response = client.post(body).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut stream = response.into_body();
    let mut seen = Vec::new();
    let request = loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), stream.frame())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        for (_, data) in parse_events(std::str::from_utf8(frame.data_ref().unwrap()).unwrap()) {
            if !data.is_empty() {
                seen.push(serde_json::from_str::<Value>(&data).unwrap());
            }
        }
        if let Some(request) = seen.iter().find(|m| m["method"] == "sampling/createMessage") {
            break request.clone();
        }
    };
    assert_eq!(seen[0]["method"], "notifications/message");
    assert_ne!(request["id"], "ask-1", "the gateway's own id goes to the client");
    let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "hi"}}});
    assert_eq!(
        client.post(&reply.to_string()).await.status(),
        StatusCode::ACCEPTED
    );
    let rest = stream.collect().await.unwrap().to_bytes();
    let (_, last) = parse_events(std::str::from_utf8(&rest).unwrap()).pop().unwrap();
    let answer: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(answer["id"], 5);
    let result: Value = serde_json::from_str(text_of(&answer)).unwrap();
    assert_eq!(result["content"]["text"], "hi");
    gateway.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn cancellation_reaches_the_child_from_the_client_and_from_a_client_gone() {
    let gateway = McpGateway::new(fake("")).with_resume_grace(Duration::from_millis(100));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    // Cancelled by the client: no answer, and the child is told.
    let mut waiting = Client {
        gateway: gateway.clone(),
        session: client.session.clone(),
    };
    let slow = tokio::spawn(async move {
        let body = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":30}}}"#;
        let response = waiting.post(body).await;
        messages_of(response).await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"no longer needed"}}"#;
    assert_eq!(client.post(cancel).await.status(), StatusCode::ACCEPTED);
    assert!(
        slow.await.unwrap().is_empty(),
        "a cancelled request gets no answer"
    );
    let seen: Vec<Value> =
        serde_json::from_str(text_of(&client.call(10, "cancels", json!({})).await)).unwrap();
    assert_eq!(seen.len(), 1, "the child got one cancellation: {seen:?}");
    // A client whose POST goes away before the answer: cancelled at the child.
    let request = client.request(
        "POST",
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":30}}}"#,
    );
    let mut service = gateway.clone();
    assert!(
        tokio::time::timeout(Duration::from_millis(200), service.call(request))
            .await
            .is_err()
    );
    let mut seen: Vec<Value> = Vec::new();
    for attempt in 0..100 {
        seen = serde_json::from_str(text_of(&client.call(20 + attempt, "cancels", json!({})).await)).unwrap();
        if seen.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        seen.len(),
        2,
        "the call of the client gone was cancelled: {seen:?}"
    );
    gateway.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn requests_past_the_bounds_are_refused_at_once_and_duplicates_too() {
    let gateway = McpGateway::new(fake("")).with_in_flight(1, 8);
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let mut waiting = Client {
        gateway: gateway.clone(),
        session: client.session.clone(),
    };
    let slow = tokio::spawn(async move { waiting.call(1, "sleep", json!({"seconds": 0.5})).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let started = Instant::now();
    let refused = client.call(2, "pid", json!({})).await;
    assert_eq!(refused["error"]["code"], -32000);
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("in this session"));
    assert!(started.elapsed() < Duration::from_millis(300));
    assert_eq!(text_of(&slow.await.unwrap()), "slept");
    gateway.shutdown(Duration::from_secs(1)).await;

    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let mut waiting = Client {
        gateway: gateway.clone(),
        session: client.session.clone(),
    };
    let slow = tokio::spawn(async move { waiting.call(1, "sleep", json!({"seconds": 0.5})).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let duplicate = client.call(1, "pid", json!({})).await;
    assert_eq!(duplicate["error"]["code"], -32600, "{duplicate}");
    assert_eq!(text_of(&slow.await.unwrap()), "slept");
    gateway.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_host_the_token_and_the_transports_rules_are_checked() {
    let gateway = McpGateway::new(fake("")).with_token("s3cret");
    let mut client = Client::new(&gateway);
    let response = client.post(INITIALIZE).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        json_of(response).await["error"]["code"],
        rpcwire::codes::UNAUTHORIZED,
        "one code for unauthorized, the fleet's"
    );
    let mut request = client.request("POST", INITIALIZE);
    request
        .headers_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    let response = client.send(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut request = client.request("POST", INITIALIZE);
    request
        .headers_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    request
        .headers_mut()
        .insert("host", "evil.example.com".parse().unwrap());
    assert_eq!(client.send(request).await.status(), StatusCode::FORBIDDEN);
    let health = Request::get("/healthz").body(Full::new(Bytes::new())).unwrap();
    let health = json_of(client.send(health).await).await;
    assert_eq!(health, json!({"status": "ok", "sessions": 1, "children": 1}));
    gateway.shutdown(Duration::from_secs(1)).await;

    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    for (body, status) in [
        ("{", StatusCode::BAD_REQUEST),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            StatusCode::BAD_REQUEST,
        ),
        // The stateless revision's discovery, without its header.
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#,
            StatusCode::BAD_REQUEST,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, StatusCode::OK),
    ] {
        assert_eq!(client.post(body).await.status(), status, "{body}");
    }
    let mut stateless = client.request("POST", INITIALIZE);
    stateless
        .headers_mut()
        .insert("mcp-protocol-version", "2026-07-28".parse().unwrap());
    // The stateless revision has no `initialize`.
    assert_eq!(client.send(stateless).await.status(), StatusCode::BAD_REQUEST);
    client.initialize().await;
    assert_eq!(
        client.post(INITIALIZE).await.status(),
        StatusCode::OK,
        "answered with an error"
    );
    let get = client.request("GET", "");
    let stream = client.send(get).await;
    assert_eq!(stream.status(), StatusCode::OK);
    let again = client.request("GET", "");
    assert_eq!(client.send(again).await.status(), StatusCode::CONFLICT);
    drop(stream);
    gateway.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_ping_under_a_handshake_revision_needs_the_session_id() {
    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let session = client.session.take();
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let mut refused = client.request("POST", ping);
    refused
        .headers_mut()
        .insert("mcp-protocol-version", "2025-11-25".parse().unwrap());
    let refused = client.send(refused).await;
    assert_eq!(
        refused.status(),
        StatusCode::BAD_REQUEST,
        "a server that issues session ids answers 400 to a request without one"
    );
    assert_eq!(json_of(refused).await["error"]["code"], rpcwire::codes::REFUSED);
    client.session = session;
    let mut answered = client.request("POST", ping);
    answered
        .headers_mut()
        .insert("mcp-protocol-version", "2025-11-25".parse().unwrap());
    let answered = client.send(answered).await;
    assert_eq!(answered.status(), StatusCode::OK);
    assert_eq!(answer_of(answered).await["result"], json!({}));
    gateway.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn shutdown_lets_calls_finish_then_ends_every_child() {
    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let mut waiting = Client {
        gateway: gateway.clone(),
        session: client.session.clone(),
    };
    let slow = tokio::spawn(async move { waiting.call(1, "sleep", json!({"seconds": 0.5})).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let closing = gateway.clone();
    let shutdown = tokio::spawn(async move { closing.shutdown(Duration::from_secs(5)).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = json_of(Client::new(&gateway).post(INITIALIZE).await).await;
    assert_eq!(refused["error"]["code"], SHUTTING_DOWN);
    assert_eq!(
        text_of(&slow.await.unwrap()),
        "slept",
        "the call under way finished"
    );
    shutdown.await.unwrap();
    assert_eq!((gateway.session_count(), gateway.child_count()), (0, 0));
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

/// `connect` brings a remote Streamable HTTP server to a host: frames both ways, and a
/// session the server forgot is started again without the host's session ending.
#[tokio::test]
async fn connect_brings_a_remote_server_to_a_host_and_starts_a_forgotten_session_again() {
    use rpcwire::frame::Framing;
    use rpcwire::mcp::http::StreamableHttpService;
    use rpcwire::mcp::{CallToolResult, McpServer};
    use rpcwire::transport::StreamTransport;

    let server = McpServer::new("remote", "1").tool("echo", "Echoes", |args: Echo, _| async move {
        Ok(CallToolResult::text(args.text))
    });
    let service = StreamableHttpService::with_sessions(server, 16, Duration::from_millis(50));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(service.clone().serve(listener));
    let (host, ours) = tokio::io::duplex(1 << 16);
    let bridge = tokio::spawn(rpcwire::mcp::gateway::connect(
        StreamTransport::from_io(ours, Framing::Ndjson),
        url.parse().unwrap(),
    ));
    let mut host = HostLines::new(host);
    let initialized = host.exchange(INITIALIZE).await;
    assert_eq!(initialized["result"]["serverInfo"]["name"], "remote");
    // A notification has no answer: the next line is the next request's.
    let notified = format!(
        "{}\n{}",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#
    );
    assert_eq!(host.exchange(&notified).await["result"], json!({}));
    let call = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}}"#;
    let answer = host.exchange(call).await;
    assert_eq!(
        (answer["id"].clone(), text_of(&answer).to_owned()),
        (json!("a"), "one".to_owned())
    );
    // The server forgets the session (idle): the next request is answered all the same.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(service.sweep(), 1);
    assert_eq!(service.session_count(), 0);
    let call = r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"two"}}}"#;
    let answer = host.exchange(call).await;
    assert_eq!(
        (answer["id"].clone(), text_of(&answer).to_owned()),
        (json!("b"), "two".to_owned())
    );
    assert_eq!(service.session_count(), 1, "a new session");
    // Not JSON: answered here.
    let answer = host.exchange("{oops").await;
    assert_eq!(answer["error"]["code"], -32700);
    drop(host);
    tokio::time::timeout(Duration::from_secs(10), bridge)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// Two servers under one endpoint: their tools and prompts listed under their names, calls
/// routed by them, resources read from the server that listed them, one `initialize`.
#[tokio::test]
async fn several_servers_are_served_under_their_names() {
    let gateway = two_demo_servers();
    let mut client = Client::new(&gateway);
    let initialized = client.initialize().await;
    assert_eq!(initialized["result"]["serverInfo"]["name"], "rpcwire-mcp-gateway");
    assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
    assert!(initialized["result"]["capabilities"]["tools"].is_object());
    assert_eq!(gateway.child_count(), 2);
    let listed = json_of(
        client
            .post(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .await,
    )
    .await;
    let names = tool_names(&listed);
    assert!(
        names.contains(&"one__add") && names.contains(&"two__add"),
        "{names:?}"
    );
    assert!(names
        .iter()
        .all(|name| name.starts_with("one__") || name.starts_with("two__")));
    let raw = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "one__json_schema_2020_12_tool")
        .unwrap();
    assert_eq!(
        raw["inputSchema"]["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "schemas pass through"
    );
    assert_eq!(
        text_of(&client.call(2, "two__add", json!({"a": 2, "b": 3})).await),
        "5"
    );
    let unknown = client.call(3, "three__add", json!({"a": 2, "b": 3})).await;
    assert_eq!(unknown["error"]["code"], -32602);
    let prompts = json_of(
        client
            .post(r#"{"jsonrpc":"2.0","id":4,"method":"prompts/list"}"#)
            .await,
    )
    .await;
    assert!(prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "one__greet"));
    let prompt = json_of(client.post(r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"two__greet","arguments":{"name":"Ada"}}}"#).await).await;
    assert_eq!(prompt["result"]["messages"][0]["content"]["text"], "Hello, Ada!");
    let resources = json_of(
        client
            .post(r#"{"jsonrpc":"2.0","id":6,"method":"resources/list"}"#)
            .await,
    )
    .await;
    assert!(resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["uri"] == "mem://hello"));
    let read = json_of(
        client
            .post(r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"mem://hello"}}"#)
            .await,
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "hello");
    let ping = json_of(client.post(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#).await).await;
    assert_eq!(ping["result"], json!({}));
    // Progress of a routed call comes back on its stream.
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"one__progress","arguments":{"steps":2},"_meta":{"progressToken":7}}}"#;
    let messages = messages_of(client.post(body).await).await;
    assert_eq!(
        messages
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .count(),
        2,
        "{messages:?}"
    );
    assert_eq!(messages.last().unwrap()["id"], 9);
    assert_eq!(client.delete().await, StatusCode::OK);
    eventually("both children are reaped", || gateway.child_count() == 0).await;
}

/// One child for every session: requests of two sessions with the same ids and progress
/// tokens answered each in its own session; a session's end leaves the child; the child's
/// end ends every session, and the next `initialize` starts another child.
#[tokio::test]
async fn a_shared_child_serves_every_session() {
    let gateway = McpGateway::new(fake("")).with_shared_child();
    let mut first = Client::new(&gateway);
    let mut second = Client::new(&gateway);
    first.initialize().await;
    second.initialize().await;
    assert_eq!(gateway.child_count(), 1);
    let pid = text_of(&first.call(1, "pid", json!({})).await).to_owned();
    assert_eq!(
        text_of(&second.call(1, "pid", json!({})).await),
        pid,
        "the same child"
    );
    // The same id and the same progress token in both sessions at once.
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"t"}}}"#;
    let (one, two) = tokio::join!(first.post(body), second.post(body));
    for messages in [messages_of(one).await, messages_of(two).await] {
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert_eq!(
            messages[0]["params"]["progressToken"], "t",
            "the client's own token back"
        );
        assert_eq!(messages[2]["id"], 7);
    }
    // Ending one session leaves the child.
    assert_eq!(first.delete().await, StatusCode::OK);
    assert_eq!(text_of(&second.call(2, "pid", json!({})).await), pid);
    assert_eq!(gateway.child_count(), 1);
    // The child's end ends every session; the next initialize starts another child.
    let exited = second.call(3, "exit", json!({})).await;
    assert_eq!(exited["error"]["code"], SERVER_GONE);
    eventually("the child is reaped", || gateway.child_count() == 0).await;
    assert_eq!(
        second
            .post(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    let mut third = Client::new(&gateway);
    third.initialize().await;
    assert_ne!(
        text_of(&third.call(1, "pid", json!({})).await),
        pid,
        "another child"
    );
    gateway.shutdown(Duration::from_secs(1)).await;
    assert_eq!(gateway.child_count(), 0);
}

/// A client that does not read its stream is cut off once a bounded queue of events waits
/// for it (it may resume from the bounded log); the gateway and the session go on.
#[tokio::test]
async fn a_client_that_does_not_read_its_stream_is_cut_off_and_the_rest_goes_on() {
    let gateway = McpGateway::new(fake("")).with_resume_grace(Duration::from_secs(30));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{"count":3000,"bytes":2000}}}"#;
    let flood = client.post(body).await;
    assert_eq!(flood.headers()["content-type"], "text/event-stream");
    // Not read while 6 MB are sent: other calls are answered meanwhile.
    let started = Instant::now();
    assert!(text_of(&client.call(2, "pid", json!({})).await)
        .parse::<u32>()
        .is_ok());
    assert!(started.elapsed() < Duration::from_secs(5));
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The stream was cut off: what is read ends before the 3,000 messages and the answer.
    let bytes = tokio::time::timeout(Duration::from_secs(10), flood.into_body().collect())
        .await
        .expect("the cut stream ends")
        .unwrap()
        .to_bytes();
    let events = parse_events(std::str::from_utf8(&bytes).unwrap());
    assert!(
        events.len() < 3000,
        "{} events kept for a reader that did not read",
        events.len()
    );
    assert!(
        bytes.len() < 1 << 20,
        "{} bytes waited for the reader",
        bytes.len()
    );
    assert!(text_of(&client.call(3, "pid", json!({})).await)
        .parse::<u32>()
        .is_ok());
    gateway.shutdown(Duration::from_secs(1)).await;
}

/// The HTTP rules of the endpoint, each refused with its status; `/healthz`; and the gateway
/// served over a socket until a signal, then shut down.
#[tokio::test]
async fn the_endpoints_rules_and_serving_over_a_socket_until_a_signal() {
    let command = fake("")
        .env("RPCWIRE_TEST", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    assert!(command.to_string().starts_with("python3 "), "{command}");
    let gateway = McpGateway::new(command)
        .with_path("/rpc")
        .with_allowed_hosts(["mcp.example.com"])
        .with_timeouts(Duration::from_secs(5), Duration::from_secs(5))
        .with_terminate_grace(Duration::from_millis(200));
    let mut client = Client::new(&gateway);
    let to = |method: &str, uri: &str, headers: &[(&str, &str)], body: &str| {
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "mcp.example.com:443");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
    };
    let both = ("accept", "application/json, text/event-stream");
    let json = ("content-type", "application/json");
    let cases = [
        (
            to("POST", "/mcp", &[both, json], INITIALIZE),
            StatusCode::NOT_FOUND,
        ),
        (to("POST", "/healthz", &[], ""), StatusCode::METHOD_NOT_ALLOWED),
        (
            to("PUT", "/rpc", &[both, json], ""),
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            to(
                "POST",
                "/rpc",
                &[("accept", "application/json"), json],
                INITIALIZE,
            ),
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            to(
                "POST",
                "/rpc",
                &[both, ("content-type", "text/plain")],
                INITIALIZE,
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            to(
                "POST",
                "/rpc",
                &[both, json, ("mcp-session-id", "nope")],
                INITIALIZE,
            ),
            StatusCode::NOT_FOUND,
        ),
        (
            to("POST", "/rpc", &[both, json, ("mcp-session-id", "")], INITIALIZE),
            StatusCode::BAD_REQUEST,
        ),
        (
            to("POST", "/rpc", &[both, json], &" ".repeat(5 << 20)),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            to("GET", "/rpc", &[("accept", "application/json")], ""),
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            to("GET", "/rpc", &[("accept", "text/event-stream")], ""),
            StatusCode::BAD_REQUEST,
        ),
        (
            to(
                "GET",
                "/rpc",
                &[("accept", "text/event-stream"), ("mcp-session-id", "nope")],
                "",
            ),
            StatusCode::NOT_FOUND,
        ),
        (
            to(
                "GET",
                "/rpc",
                &[("accept", "text/event-stream"), ("mcp-session-id", "")],
                "",
            ),
            StatusCode::BAD_REQUEST,
        ),
        (to("DELETE", "/rpc", &[], ""), StatusCode::BAD_REQUEST),
        (
            to("DELETE", "/rpc", &[("mcp-session-id", "")], ""),
            StatusCode::BAD_REQUEST,
        ),
        (
            to(
                "POST",
                "/rpc",
                &[both, json],
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (request, status) in cases {
        let what = format!("{} {} {:?}", request.method(), request.uri(), request.headers());
        assert_eq!(client.send(request).await.status(), status, "{what}");
    }
    let initialized = client.send(to("POST", "/rpc", &[both, json], INITIALIZE)).await;
    assert_eq!(initialized.status(), StatusCode::OK);
    assert_eq!(gateway.session_count(), 1);
    assert_eq!(gateway.sweep(), 0, "not idle yet");
    gateway.shutdown(Duration::from_secs(1)).await;
    assert_eq!(gateway.child_count(), 0);

    // Over a socket: served until the signal, then shut down (the child ended).
    let gateway = McpGateway::new(fake("")).without_host_check();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(gateway.clone().serve_until(
        listener,
        async move {
            let _ = stopped.await;
        },
        Duration::from_secs(1),
    ));
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let request = Request::post("/mcp")
        .header("host", "anything.example")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(INITIALIZE.as_bytes())))
        .unwrap();
    let answer = sender.send_request(request).await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(gateway.child_count(), 1);
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(15), serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(gateway.child_count(), 0);
    let health = Request::get("/healthz").body(Full::new(Bytes::new())).unwrap();
    let mut service = gateway.clone();
    let health = json_of(service.call(health).await.unwrap()).await;
    assert_eq!(health["status"], "closing");
}

/// What the child sends outside any request goes on the GET stream; a request the child
/// cancels is cancelled at the client too.
#[tokio::test]
async fn the_childs_announcements_reach_the_get_stream_and_its_cancellations_the_client() {
    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let get = client.request("GET", "");
    let stream = client.send(get).await;
    assert_eq!(stream.status(), StatusCode::OK);
    let mut stream = stream.into_body();
    assert_eq!(text_of(&client.call(1, "announce", json!({})).await), "announced");
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let frame = tokio::time::timeout(Duration::from_secs(10), stream.frame())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        for (_, data) in parse_events(std::str::from_utf8(frame.data_ref().unwrap()).unwrap()) {
            if !data.is_empty() {
                seen.push(serde_json::from_str::<Value>(&data).unwrap()["method"].clone());
            }
        }
    }
    assert!(
        seen.contains(&json!("notifications/tools/list_changed"))
            && seen.contains(&json!("notifications/custom")),
        "{seen:?}"
    );
    // The child asks the client, then cancels its request: the client is told.
    let messages = messages_of(client.post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask-then-cancel","arguments":{}}}"#).await).await;
    let asked = messages
        .iter()
        .find(|m| m["method"] == "sampling/createMessage")
        .expect("asked");
    let cancelled = messages
        .iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .expect("cancelled");
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
    assert_eq!(text_of(messages.last().unwrap()), "cancelled");
    gateway.shutdown(Duration::from_secs(1)).await;
}

/// Several servers: list pages fetched whole, completion and resources routed, the methods
/// sent to all, the unknown ones refused; one server failing `initialize` fails it.
#[tokio::test]
async fn several_servers_page_route_and_refuse_as_they_should() {
    let gateway = McpGateway::several([("a", fake("")), ("b", fake(""))]);
    let mut client = Client::new(&gateway);
    client.initialize().await;
    let mut ask = async |id: u64, method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        answer_of(client.post(&body.to_string()).await).await
    };
    let tools = ask(1, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["a__pid", "a__sleep", "b__pid", "b__sleep"],
        "every page of each"
    );
    assert!(tools["result"].get("nextCursor").is_none());
    let listed = ask(2, "resources/list", json!({})).await;
    assert_eq!(listed["result"]["resources"].as_array().unwrap().len(), 2);
    assert_eq!(
        ask(3, "resources/read", json!({"uri": "fake://one"})).await["result"]["contents"][0]["text"],
        "one"
    );
    let missing = ask(4, "resources/read", json!({"uri": "fake://none"})).await;
    assert_eq!(
        missing["error"]["code"], -32002,
        "each server asked, the last error given"
    );
    assert!(ask(5, "resources/templates/list", json!({})).await["result"]["resourceTemplates"].is_array());
    assert!(ask(6, "prompts/list", json!({})).await["result"]["prompts"].is_array());
    assert_eq!(
        ask(7, "logging/setLevel", json!({"level": "info"})).await["result"],
        json!({})
    );
    let completion =
        json!({"ref": {"type": "ref/prompt", "name": "b__greet"}, "argument": {"name": "x", "value": "y"}});
    assert_eq!(
        ask(8, "completion/complete", completion).await["result"],
        json!({})
    );
    let completion = json!({"ref": {"type": "ref/resource", "uri": "fake://one"}, "argument": {"name": "x", "value": "y"}});
    assert_eq!(
        ask(9, "completion/complete", completion).await["result"],
        json!({})
    );
    assert_eq!(
        ask(10, "completion/complete", json!({})).await["error"]["code"],
        -32602
    );
    assert_eq!(
        ask(11, "resources/subscribe", json!({"uri": "fake://one"})).await["result"],
        json!({})
    );
    assert_eq!(
        ask(12, "elsewhere/unknown", json!({})).await["error"]["code"],
        -32601
    );
    assert!(
        text_of(&ask(13, "tools/call", json!({"name": "a__pid", "arguments": {}})).await)
            .parse::<u32>()
            .is_ok()
    );
    gateway.shutdown(Duration::from_secs(1)).await;

    let gateway = McpGateway::several([("a", fake("")), ("b", fake("crash-init"))]);
    let answer = json_of(Client::new(&gateway).post(INITIALIZE).await).await;
    assert_eq!(answer["error"]["code"], SERVER_GONE);
    eventually("both children are reaped", || gateway.child_count() == 0).await;
}

/// A request of the stateless revision (2026-07-28): its headers as the revision asks.
fn stateless_request(id: u64, method: &str, name: Option<&str>, params: Value) -> Request<Full<Bytes>> {
    let mut params = params;
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut request = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "127.0.0.1:1234")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    request.body(Full::new(Bytes::from(body.to_string()))).unwrap()
}

#[tokio::test]
async fn the_stateless_revision_is_forwarded_to_children_no_client_shares_with_another() {
    let gateway = McpGateway::new(fake("stateless")).with_sessions(16, Duration::from_millis(300));
    let mut client = Client::new(&gateway);
    let discovered = client
        .send(stateless_request(1, "server/discover", None, json!({})))
        .await;
    assert_eq!(discovered.status(), StatusCode::OK);
    assert_eq!(
        json_of(discovered).await["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(gateway.session_count(), 0, "no session is kept");
    assert_eq!(gateway.child_count(), 1);

    // The same id from two clients at once: each gets its own answer.
    let call = |id, tool: &str, arguments: Value| {
        stateless_request(
            id,
            "tools/call",
            Some(tool),
            json!({"name": tool, "arguments": arguments}),
        )
    };
    let (mut a, mut b) = (Client::new(&gateway), Client::new(&gateway));
    let (first, second) = tokio::join!(
        a.send(call(7, "sleep", json!({"seconds": 0.3}))),
        b.send(call(7, "pid", json!({})))
    );
    assert_eq!(text_of(&answer_of(first).await), "slept");
    let pid: u32 = text_of(&answer_of(second).await).parse().unwrap();
    assert!(running(pid));

    // Progress reaches the request whose token it names, the token given back.
    let mut progress = call(8, "progress", json!({}));
    *progress.body_mut() = Full::new(Bytes::from(
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "progress", "_meta": {
            "progressToken": "mine", "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string(),
    ));
    let messages = messages_of(client.send(progress).await).await;
    let tokens: Vec<&Value> = messages
        .iter()
        .filter_map(|m| m["params"].get("progressToken"))
        .collect();
    assert_eq!(tokens, [&json!("mine"), &json!("mine")], "{messages:?}");
    assert_eq!(text_of(messages.last().unwrap()), "done");

    // A log message without a request named goes to the only request under way; with two
    // under way it could be either client's, and reaches neither.
    let alone = answer_and_messages(
        client
            .send(call(9, "flood", json!({"count": 2, "bytes": 3})))
            .await,
    )
    .await;
    assert_eq!(alone.len(), 3, "two log messages and the answer: {alone:?}");
    let (slow, flood) = tokio::join!(a.send(call(10, "sleep", json!({"seconds": 0.5}))), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        b.send(call(10, "flood", json!({"count": 2, "bytes": 3}))).await
    });
    let slow = answer_and_messages(slow).await;
    let flood = answer_and_messages(flood).await;
    assert_eq!((slow.len(), flood.len()), (1, 1), "{slow:?} {flood:?}");
    assert_eq!(text_of(&flood[0]), "flooded");

    // Requests to the client do not exist in this revision: the child is told so.
    let asked = answer_and_messages(client.send(call(11, "ask", json!({}))).await).await;
    let answer = text_of(asked.last().unwrap()).to_owned();
    assert!(answer.contains("input-required"), "{answer}");

    // A listen stream: acknowledged with what the server can send (its tools change, its
    // prompts do not), then the tools' changes tagged with the stream's id.
    let listen = stateless_request(
        15,
        "subscriptions/listen",
        None,
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
    );
    let listening = client.send(listen).await;
    assert_eq!(listening.headers()["content-type"], "text/event-stream");
    let mut stream = listening.into_body();
    let mut next_message = async || loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), stream.frame())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let events = parse_events(std::str::from_utf8(frame.data_ref().unwrap()).unwrap());
        if let Some((_, data)) = events.into_iter().find(|(_, data)| !data.is_empty()) {
            break serde_json::from_str::<Value>(&data).unwrap();
        }
    };
    let ack = next_message().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        15
    );
    let announced = answer_of(client.send(call(16, "announce", json!({}))).await).await;
    assert_eq!(text_of(&announced), "announced");
    let changed = next_message().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        15
    );
    drop(stream);

    // The headers are checked against the body; the handshake is not forwarded.
    let mut mismatched = call(12, "pid", json!({}));
    mismatched
        .headers_mut()
        .insert("mcp-name", "other".parse().unwrap());
    let refused = client.send(mismatched).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(refused).await["error"]["code"], -32020);
    let initialize = stateless_request(13, "initialize", None, json!({}));
    let refused = client.send(initialize).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_of(refused).await["error"]["code"], -32601);
    let get = Request::builder()
        .uri("/mcp")
        .header("host", "127.0.0.1:1234")
        .header("mcp-protocol-version", "2026-07-28")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(client.send(get).await.status(), StatusCode::METHOD_NOT_ALLOWED);

    // Idle, the children are ended (and started again by the next request).
    tokio::time::sleep(Duration::from_millis(400)).await;
    gateway.sweep();
    eventually("the idle child reaped", || gateway.child_count() == 0).await;
    assert!(!running(pid));
    let again = client.send(call(14, "pid", json!({}))).await;
    let new_pid: u32 = text_of(&answer_of(again).await).parse().unwrap();
    assert_ne!(new_pid, pid);
    gateway.shutdown(Duration::from_secs(1)).await;
    assert!(!running(new_pid));
}

#[tokio::test]
async fn a_server_without_the_stateless_revision_refuses_discovery_once() {
    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    let refused = client
        .send(stateless_request(1, "server/discover", None, json!({})))
        .await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_of(refused).await["error"]["code"], -32601);
    eventually("the child that refused reaped", || gateway.child_count() == 0).await;
    // Asked again, the gateway answers without starting a child; the handshake still works.
    let again = client
        .send(stateless_request(2, "server/discover", None, json!({})))
        .await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    assert_eq!(gateway.child_count(), 0);
    client.initialize().await;
    assert_eq!(gateway.child_count(), 1);
    gateway.shutdown(Duration::from_secs(1)).await;
}

/// Every message of a JSON or SSE answer.
async fn answer_and_messages(response: Response<McpBody>) -> Vec<Value> {
    if response.headers()["content-type"] == "application/json" {
        vec![json_of(response).await]
    } else {
        messages_of(response).await
    }
}

/// The stateless revision under one endpoint for several servers: one discovery for all,
/// every page of every server's list (each asked with the client's `_meta`), calls routed by
/// name.
#[tokio::test]
async fn several_servers_serve_the_stateless_revision_under_their_names() {
    let gateway = two_demo_servers();
    let mut client = Client::new(&gateway);
    let discovered = json_of(
        client
            .send(stateless_request(1, "server/discover", None, json!({})))
            .await,
    )
    .await;
    assert_eq!(discovered["result"]["serverInfo"]["name"], "rpcwire-mcp-gateway");
    let versions = discovered["result"]["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")), "{discovered}");
    let listed = json_of(
        client
            .send(stateless_request(2, "tools/list", None, json!({})))
            .await,
    )
    .await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    let names = tool_names(&listed);
    assert!(
        names.contains(&"one__add") && names.contains(&"two__add"),
        "{names:?}"
    );
    let call = stateless_request(
        3,
        "tools/call",
        Some("two__add"),
        json!({"name": "two__add", "arguments": {"a": 2, "b": 5}}),
    );
    let added = answer_of(client.send(call).await).await;
    assert_eq!(text_of(&added), "7");
    assert_eq!(gateway.child_count(), 2);
    gateway.shutdown(Duration::from_secs(1)).await;
    assert_eq!(gateway.child_count(), 0);
}

/// `connect_with` sends the headers its client was given with every request: a remote
/// gateway that asks for a bearer token answers the host that has it, and refuses (an
/// error answer to the host's request) the one that has not.
#[tokio::test]
async fn connect_with_a_header_reaches_a_server_that_asks_for_a_token() {
    use http::header::{HeaderValue, AUTHORIZATION};
    use rpcwire::frame::Framing;
    use rpcwire::mcp::http::StreamableHttpClient;
    use rpcwire::transport::StreamTransport;

    let remote = McpGateway::new(fake("")).with_token("s3cret");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url: http::Uri = format!("http://{}/mcp", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    tokio::spawn(remote.clone().serve(listener));
    for (token, served) in [(Some("Bearer s3cret"), true), (None, false)] {
        let mut client = StreamableHttpClient::new(url.clone()).unwrap();
        if let Some(token) = token {
            client = client.with_header(AUTHORIZATION, HeaderValue::from_static(token));
        }
        let (host, ours) = tokio::io::duplex(1 << 16);
        let bridge = tokio::spawn(rpcwire::mcp::gateway::connect_with(
            StreamTransport::from_io(ours, Framing::Ndjson),
            client,
        ));
        let mut host = HostLines::new(host);
        let initialized = host.exchange(INITIALIZE).await;
        assert_eq!(initialized["result"].is_object(), served, "{initialized}");
        if served {
            let call =
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"pid","arguments":{}}}"#;
            let answer = host.exchange(call).await;
            assert!(text_of(&answer).parse::<u32>().is_ok(), "{answer}");
        } else {
            assert!(
                initialized["error"]["message"].as_str().unwrap().contains("401"),
                "{initialized}"
            );
        }
        drop(host);
        tokio::time::timeout(Duration::from_secs(10), bridge)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
    remote.shutdown(Duration::from_secs(1)).await;
    assert_eq!(remote.child_count(), 0);
}

/// Batches, in the revision that has them (2025-03-26): requests forwarded together, their
/// answers one array on the batch's answer (after the progress of any of them), an element
/// that is no message answered with its error, notifications passed on; refused elsewhere.
#[tokio::test]
async fn batches_are_forwarded_in_the_revision_that_has_them() {
    let gateway = McpGateway::new(fake(""));
    let mut client = Client::new(&gateway);
    let response = client.post(&INITIALIZE.replace("2025-11-25", "2025-03-26")).await;
    client.session = Some(response.headers()["mcp-session-id"].to_str().unwrap().to_owned());
    assert_eq!(json_of(response).await["result"]["protocolVersion"], "2025-03-26");
    let only_notifications = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert_eq!(
        client.post(only_notifications).await.status(),
        StatusCode::ACCEPTED
    );
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pid", "arguments": {}}},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/call", "params": {"name": "progress", "_meta": {"progressToken": 9}}},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 3},
        7
    ]);
    let response = client.post(&batch.to_string()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let messages = answer_and_messages(response).await;
    let (answers, before) = messages.split_last().unwrap();
    let progress: Vec<&Value> = before.iter().map(|m| &m["params"]["progressToken"]).collect();
    assert_eq!(progress, [&json!(9), &json!(9)], "{messages:?}");
    let answers = answers.as_array().expect("one array of answers");
    assert_eq!(answers.len(), 4, "{answers:?}");
    let by_id = |id: Value| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("{id} in {answers:?}"))
    };
    assert!(text_of(by_id(json!(1))).parse::<u32>().is_ok());
    assert_eq!(text_of(by_id(json!("two"))), "done");
    assert_eq!(by_id(json!(3))["error"]["code"], -32600);
    assert_eq!(
        answers
            .iter()
            .filter(|a| a["id"].is_null() && a["error"]["code"] == -32600)
            .count(),
        1
    );

    // Another revision has no batches.
    let mut newer = Client::new(&gateway);
    newer.initialize().await;
    assert_eq!(
        newer.post(&batch.to_string()).await.status(),
        StatusCode::BAD_REQUEST
    );
    gateway.shutdown(Duration::from_secs(1)).await;
}
