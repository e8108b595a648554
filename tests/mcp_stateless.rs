//! The stateless revision (2026-07-28) from the client's side: over Streamable HTTP through
//! `StreamableHttpService` called in-process (the checks in the revision's order and their
//! statuses, removed methods, results marked complete with cache hints, input-required
//! rounds with a sealed state, per-request progress and logging, `subscriptions/listen`,
//! header-mirrored arguments), over stdio through `McpServer::serve`, and the changes a
//! program announces reaching session clients as notifications.
#![cfg(all(feature = "mcp", feature = "http"))]

#[path = "support/sse.rs"]
mod sse;

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use rpcwire::frame::Framing;
use rpcwire::mcp::http::{McpBody, StreamableHttpService};
use rpcwire::mcp::{
    CacheScope, CallToolResult, InputRequired, ListChanged, LogLevel, McpContext, McpServer, ProtocolVersion,
    ReadResourceResult, Resource, ResourceContents, Tool,
};
use rpcwire::transport::StreamTransport;
use serde_json::{json, Value};
use sse::{json_of, messages_of, parse_events};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tower_service::Service;

const REVISION: &str = "2026-07-28";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn server() -> McpServer {
    McpServer::new("stateless-test", "7")
        .with_versions(&ProtocolVersion::ALL)
        .with_cache_hints(Duration::from_secs(60), CacheScope::Public)
        .tool("echo", "Says hello", |_: Nothing, _| async { Ok(CallToolResult::text("hello")) })
        .tool("steps", "Reports progress, logs, then answers", |_: Nothing, cx: McpContext| async move {
            cx.progress(1.0, Some(2.0), None).await.map_err(|e| e.to_error_object())?;
            cx.log(LogLevel::Warning, Some("steps"), "half way").await.map_err(|e| e.to_error_object())?;
            cx.progress(2.0, Some(2.0), None).await.map_err(|e| e.to_error_object())?;
            Ok(CallToolResult::text("stepped"))
        })
        .tool("ask", "Asks the client mid-call", |_: Nothing, cx: McpContext| async move {
            match cx.list_roots().await {
                Ok(_) => Ok(CallToolResult::text("asked")),
                Err(error) => Ok(CallToolResult::error(error.to_string())),
            }
        })
        .tool("needs_sampling", "Needs sampling", |_: Nothing, cx: McpContext| async move {
            cx.require_capability("sampling")?;
            Ok(CallToolResult::text("can sample"))
        })
        .tool("name", "Asks the user's name, in two rounds", |_: Nothing, cx: McpContext| async move {
            let name = cx.input_response("who").and_then(|answer| answer["content"]["name"].as_str());
            match (cx.request_state(), name) {
                (Some("asked"), Some(name)) => Ok(CallToolResult::text(format!("Hello, {name}!"))),
                _ => Err(cx.input_required(
                    InputRequired::new()
                        .elicit("who", "Who are you?", &json!({"type": "object", "properties": {"name": {"type": "string"}}}))
                        .with_state("asked"),
                )),
            }
        })
        .tool("other", "Asks too, with a state of its own", |_: Nothing, cx: McpContext| async move {
            match cx.request_state() {
                Some(state) => Ok(CallToolResult::text(state.to_owned())),
                None => Err(cx.input_required(InputRequired::new().list_roots("roots").with_state("asked"))),
            }
        })
        .tool("change", "Announces that the tools changed", |_: Nothing, cx: McpContext| async move {
            Ok(CallToolResult::text(cx.list_changed(ListChanged::Tools).to_string()))
        })
        .raw_tool(
            Tool::new(
                "mirrored",
                "Arguments mirrored in headers",
                r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"count":{"type":"integer","x-mcp-header":"Count"},"fast":{"type":"boolean","x-mcp-header":"Fast"}}}"#,
            )
            .unwrap(),
            |arguments, _| async move { Ok(CallToolResult::text(arguments.map_or(String::new(), |a| a.get().to_owned()))) },
        )
        .resource(Resource::new("mem://a", "a").with_mime_type("text/plain"), |_| async {
            Ok(ReadResourceResult::one(ResourceContents::text("mem://a", "text/plain", "A")))
        })
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A POST of `method` with `params` (`_meta` added unless it has one), with the headers the
/// revision wants, then `headers` (a `None` value removes one).
fn post(id: u64, method: &str, mut params: Value, headers: &[(&str, Option<&str>)]) -> Request<Full<Bytes>> {
    if params.get("_meta").is_none() {
        params["_meta"] = meta();
    }
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut request = Request::post("/mcp")
        .header("host", "127.0.0.1:1234")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", REVISION)
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let mut request = request.body(Full::new(Bytes::from(body.to_string()))).unwrap();
    for (name, value) in headers {
        let name = http::HeaderName::from_bytes(name.as_bytes()).unwrap();
        match value {
            Some(value) => request.headers_mut().insert(name, value.parse().unwrap()),
            None => request.headers_mut().remove(name),
        };
    }
    request
}

async fn send(service: &mut StreamableHttpService, request: Request<Full<Bytes>>) -> Response<McpBody> {
    let response = tokio::time::timeout(Duration::from_secs(10), service.call(request))
        .await
        .expect("answered in time")
        .unwrap();
    assert!(
        !response.headers().contains_key("mcp-session-id"),
        "no sessions in this revision"
    );
    response
}

/// The next message of an SSE body that goes on.
async fn next_message(body: &mut McpBody) -> Value {
    let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("a frame in time")
        .unwrap()
        .unwrap();
    let (_, data) = parse_events(std::str::from_utf8(frame.data_ref().unwrap()).unwrap()).remove(0);
    serde_json::from_str(&data).unwrap()
}

/// The next line a stdio server wrote, as JSON.
async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(lines: &mut tokio::io::Lines<R>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .expect("a line in time")
        .unwrap()
        .expect("a line");
    serde_json::from_str(&line).unwrap()
}

/// Waits, at most 5 s, until `done` holds; fails saying `what` otherwise.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Sets its flag when dropped: whether a handler's future was dropped (ended or cancelled).
struct DropFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The status and the JSON-RPC error code (with the id) of a refused request.
async fn refused(
    service: &mut StreamableHttpService,
    request: Request<Full<Bytes>>,
) -> (StatusCode, i64, Value) {
    let response = send(service, request).await;
    let status = response.status();
    let body = json_of(response).await;
    (
        status,
        body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error: {body}")),
        body["id"].clone(),
    )
}

#[tokio::test]
async fn requests_are_checked_in_the_revisions_order_with_its_statuses() {
    let mut service = StreamableHttpService::new(server());
    let list = || post(1, "tools/list", json!({}), &[]);
    let ok = send(&mut service, list()).await;
    assert_eq!(ok.status(), StatusCode::OK);

    let no_header = post(2, "tools/list", json!({}), &[("mcp-protocol-version", None)]);
    assert_eq!(
        refused(&mut service, no_header).await,
        (StatusCode::BAD_REQUEST, -32020, json!(2))
    );
    for meta in [
        json!(null),
        json!({}),
        json!({"io.modelcontextprotocol/protocolVersion": REVISION}),
    ] {
        let missing = post(3, "tools/list", json!({"_meta": meta}), &[]);
        assert_eq!(
            refused(&mut service, missing).await,
            (StatusCode::BAD_REQUEST, -32602, json!(3)),
            "{meta}"
        );
    }
    let other_meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25", "io.modelcontextprotocol/clientCapabilities": {}}});
    let mismatch = post(4, "tools/list", other_meta, &[]);
    assert_eq!(
        refused(&mut service, mismatch).await,
        (StatusCode::BAD_REQUEST, -32020, json!(4))
    );

    let future = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v999", "io.modelcontextprotocol/clientCapabilities": {}}});
    let unsupported = post(
        5,
        "server/discover",
        future,
        &[("mcp-protocol-version", Some("v999"))],
    );
    let answer = json_of(send(&mut service, unsupported).await).await;
    assert_eq!(answer["error"]["code"], -32022);
    assert_eq!(
        answer["error"]["data"],
        json!({"supported": [REVISION], "requested": "v999"})
    );

    let no_method = post(6, "tools/list", json!({}), &[("mcp-method", None)]);
    assert_eq!(
        refused(&mut service, no_method).await,
        (StatusCode::BAD_REQUEST, -32020, json!(6))
    );
    let other_method = post(7, "tools/list", json!({}), &[("mcp-method", Some("TOOLS/LIST"))]);
    assert_eq!(
        refused(&mut service, other_method).await.1,
        -32020,
        "values are case-sensitive"
    );
    let spaced = post(
        8,
        "tools/list",
        json!({}),
        &[("MCP-METHOD", Some("  tools/list\t"))],
    );
    assert_eq!(
        send(&mut service, spaced).await.status(),
        StatusCode::OK,
        "names are not, spaces are trimmed"
    );
    let no_name = post(9, "tools/call", json!({"name": "echo"}), &[("mcp-name", None)]);
    assert_eq!(refused(&mut service, no_name).await.1, -32020);
    let other_name = post(
        10,
        "tools/call",
        json!({"name": "echo"}),
        &[("mcp-name", Some("steps"))],
    );
    assert_eq!(refused(&mut service, other_name).await.1, -32020);

    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "nope/nope",
    ] {
        let removed = post(11, method, json!({}), &[]);
        assert_eq!(
            refused(&mut service, removed).await,
            (StatusCode::NOT_FOUND, -32601, json!(11)),
            "{method}"
        );
    }

    let batch = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", REVISION)
        .body(Full::new(Bytes::from_static(
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
        )))
        .unwrap();
    assert_eq!(
        refused(&mut service, batch).await,
        (StatusCode::BAD_REQUEST, -32600, Value::Null)
    );
    let mut malformed = post(12, "tools/list", json!({}), &[]);
    *malformed.body_mut() = Full::new(Bytes::from_static(b"{\"jsonrpc\":"));
    assert_eq!(
        refused(&mut service, malformed).await,
        (StatusCode::BAD_REQUEST, -32700, Value::Null)
    );
    let mut notification = post(0, "notifications/cancelled", json!({}), &[]);
    *notification.body_mut() = Full::new(Bytes::from_static(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    ));
    assert_eq!(
        send(&mut service, notification).await.status(),
        StatusCode::ACCEPTED
    );

    for method in [http::Method::GET, http::Method::DELETE] {
        let request = Request::builder()
            .method(method.clone())
            .uri("/mcp")
            .header("host", "localhost")
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", REVISION)
            .body(Full::default())
            .unwrap();
        let answer = send(&mut service, request).await;
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(answer.headers()["allow"], "POST");
    }

    let foreign = post(
        13,
        "server/discover",
        json!({}),
        &[("host", Some("evil.example.com"))],
    );
    assert_eq!(send(&mut service, foreign).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(service.session_count(), 0);
}

#[tokio::test]
async fn results_are_marked_complete_with_their_cache_hints() {
    let mut service = StreamableHttpService::new(server());
    let listed = json_of(send(&mut service, post(1, "tools/list", json!({}), &[])).await).await;
    let result = &listed["result"];
    assert_eq!(
        (
            result["resultType"].as_str(),
            result["ttlMs"].as_u64(),
            result["cacheScope"].as_str()
        ),
        (Some("complete"), Some(60_000), Some("public"))
    );
    assert_eq!(result["tools"][0]["name"], "echo");
    let resources = json_of(send(&mut service, post(2, "resources/list", json!({}), &[])).await).await;
    assert_eq!(resources["result"]["ttlMs"], 60_000);
    let read = json_of(
        send(
            &mut service,
            post(3, "resources/read", json!({"uri": "mem://a"}), &[]),
        )
        .await,
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "A");
    assert_eq!(read["result"]["cacheScope"], "public");
    let missing = send(
        &mut service,
        post(4, "resources/read", json!({"uri": "mem://none"}), &[]),
    )
    .await;
    assert_eq!(missing.status(), StatusCode::BAD_REQUEST);
    let missing = json_of(missing).await;
    assert_eq!(
        (missing["error"]["code"].as_i64(), &missing["error"]["data"]),
        (Some(-32602), &json!({"uri": "mem://none"}))
    );
    let called = json_of(send(&mut service, post(5, "tools/call", json!({"name": "echo"}), &[])).await).await;
    assert_eq!(
        called["result"],
        json!({"resultType": "complete", "content": [{"type": "text", "text": "hello"}]})
    );
    let unknown =
        json_of(send(&mut service, post(6, "tools/call", json!({"name": "none"}), &[])).await).await;
    assert_eq!(unknown["error"]["code"], -32602);
    let completion = json_of(
        send(
            &mut service,
            post(
                7,
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
                &[],
            ),
        )
        .await,
    )
    .await;
    assert_eq!(
        completion["result"],
        json!({"resultType": "complete", "completion": {"values": []}})
    );
    let discovered = json_of(send(&mut service, post(8, "server/discover", json!({}), &[])).await).await;
    let result = &discovered["result"];
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "stateless-test", "version": "7"})
    );
    assert!(result["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!(REVISION)));
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert!(
        result["capabilities"]["resources"].get("subscribe").is_none(),
        "listen instead"
    );
    let past = json_of(send(&mut service, post(9, "tools/list", json!({"cursor": "999"}), &[])).await).await;
    assert_eq!(past["error"]["code"], -32602, "a cursor never given");
}

#[tokio::test]
async fn input_required_results_carry_a_state_only_this_server_can_seal() {
    let mut service = StreamableHttpService::new(server());
    let first = json_of(send(&mut service, post(1, "tools/call", json!({"name": "name"}), &[])).await).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(result["inputRequests"]["who"]["method"], "elicitation/create");
    assert_eq!(
        result["inputRequests"]["who"]["params"]["message"],
        "Who are you?"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();
    assert!(!state.contains("asked"), "sealed, not in clear: {state}");

    let answer = json!({"who": {"action": "accept", "content": {"name": "Ada"}}, "extra": {"action": "accept", "content": {}}});
    let retry = post(
        2,
        "tools/call",
        json!({"name": "name", "inputResponses": answer, "requestState": state}),
        &[],
    );
    let done = json_of(send(&mut service, retry).await).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
    assert_eq!(done["result"]["resultType"], "complete");

    let tampered = post(
        3,
        "tools/call",
        json!({"name": "name", "inputResponses": answer, "requestState": format!("{state}-TAMPERED")}),
        &[],
    );
    assert_eq!(
        refused(&mut service, tampered).await,
        (StatusCode::BAD_REQUEST, -32602, json!(3))
    );
    let elsewhere = post(
        4,
        "tools/call",
        json!({"name": "other", "requestState": state}),
        &[],
    );
    assert_eq!(
        refused(&mut service, elsewhere).await.1,
        -32602,
        "a state sealed for another tool"
    );
    let other_server = StreamableHttpService::new(server());
    let mut other_server = other_server;
    let replayed = post(
        5,
        "tools/call",
        json!({"name": "name", "inputResponses": answer, "requestState": state}),
        &[],
    );
    assert_eq!(
        refused(&mut other_server, replayed).await.1,
        -32602,
        "another server's key"
    );

    for answers in [
        json!({"who": 12345}),
        json!(null),
        json!({"wrong": {"action": "accept", "content": {"name": "x"}}}),
    ] {
        let retry = post(
            6,
            "tools/call",
            json!({"name": "name", "inputResponses": answers, "requestState": state}),
            &[],
        );
        let again = json_of(send(&mut service, retry).await).await;
        assert_eq!(again["result"]["resultType"], "input_required", "{answers}");
    }

    let stateful = StreamableHttpService::new(server());
    let mut stateful = stateful;
    let init = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)))
        .unwrap();
    let response = stateful.call(init).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let call = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", &session)
        .body(Full::new(Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"name"}}"#,
        )))
        .unwrap();
    let answer = json_of(stateful.call(call).await.unwrap()).await;
    assert_eq!(
        answer["error"]["code"], -32603,
        "a session's revision has no input-required results: {answer}"
    );
}

#[tokio::test]
async fn progress_and_logs_make_the_answer_a_stream_and_requests_to_the_client_are_refused() {
    let mut service = StreamableHttpService::new(server());
    let mut with_token = meta();
    with_token["progressToken"] = json!("p1");
    let quiet = send(
        &mut service,
        post(
            1,
            "tools/call",
            json!({"name": "steps", "_meta": with_token}),
            &[],
        ),
    )
    .await;
    assert_eq!(quiet.headers()["x-accel-buffering"], "no");
    let frames = messages_of(quiet).await;
    let methods: Vec<&str> = frames
        .iter()
        .map(|f| f["method"].as_str().unwrap_or("result"))
        .collect();
    assert_eq!(
        methods,
        ["notifications/progress", "notifications/progress", "result"],
        "no log without a logLevel: {frames:?}"
    );
    assert_eq!(frames[0]["params"]["progressToken"], "p1");
    assert_eq!(frames[2]["id"], 1);

    let mut logging = meta();
    logging["io.modelcontextprotocol/logLevel"] = json!("warning");
    let frames = messages_of(
        send(
            &mut service,
            post(2, "tools/call", json!({"name": "steps", "_meta": logging}), &[]),
        )
        .await,
    )
    .await;
    let methods: Vec<&str> = frames
        .iter()
        .map(|f| f["method"].as_str().unwrap_or("result"))
        .collect();
    assert_eq!(
        methods,
        ["notifications/message", "result"],
        "no progress without a token: {frames:?}"
    );
    assert_eq!(frames[0]["params"]["logger"], "steps");
    let mut error_only = meta();
    error_only["io.modelcontextprotocol/logLevel"] = json!("error");
    let plain = send(
        &mut service,
        post(
            3,
            "tools/call",
            json!({"name": "steps", "_meta": error_only}),
            &[],
        ),
    )
    .await;
    assert_eq!(
        json_of(plain).await["result"]["content"][0]["text"],
        "stepped",
        "below the level: no log, plain JSON"
    );

    let asked = json_of(send(&mut service, post(4, "tools/call", json!({"name": "ask"}), &[])).await).await;
    assert_eq!(asked["result"]["isError"], true);
    assert!(
        asked["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("input-required"),
        "{asked}"
    );

    let refused_call = json_of(
        send(
            &mut service,
            post(5, "tools/call", json!({"name": "needs_sampling"}), &[]),
        )
        .await,
    )
    .await;
    assert_eq!(refused_call["error"]["code"], -32021);
    assert_eq!(
        refused_call["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    let mut sampling = meta();
    sampling["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    let allowed = json_of(
        send(
            &mut service,
            post(
                6,
                "tools/call",
                json!({"name": "needs_sampling", "_meta": sampling}),
                &[],
            ),
        )
        .await,
    )
    .await;
    assert_eq!(allowed["result"]["content"][0]["text"], "can sample");
}

#[tokio::test]
async fn arguments_mirrored_in_headers_must_match() {
    let mut service = StreamableHttpService::new(server());
    let call = |arguments: Value, headers: &[(&str, Option<&str>)]| {
        post(
            1,
            "tools/call",
            json!({"name": "mirrored", "arguments": arguments}),
            headers,
        )
    };
    let region = |value: &'static str| [("mcp-param-region", Some(value))];
    let accepted = [
        call(json!({"region": "Hello"}), &region("=?base64?SGVsbG8=?=")),
        call(json!({"region": "Hello"}), &region("  Hello ")),
        call(json!({"region": "SGVsbG8="}), &region("SGVsbG8=")),
        call(
            json!({"region": "=?base64?SGVsbG8="}),
            &region("=?base64?SGVsbG8="),
        ),
        call(
            json!({"count": 3, "fast": true}),
            &[("mcp-param-count", Some("3")), ("mcp-param-fast", Some("true"))],
        ),
        call(json!({"region": null}), &[]),
        call(json!({}), &[]),
    ];
    for request in accepted {
        let answer = json_of(send(&mut service, request).await).await;
        assert!(answer.get("result").is_some(), "{answer}");
    }
    let rejected = [
        call(json!({"region": "Hello"}), &region("=?base64?SGVsbG8?=")),
        call(json!({"region": "Hello"}), &region("=?base64?SGVs!!!bG8=?=")),
        call(json!({"region": "Hello"}), &region("Bye")),
        call(json!({"region": "Hello"}), &[]),
        call(json!({"count": 3}), &[("mcp-param-count", Some("4"))]),
        call(json!({"fast": false}), &[("mcp-param-fast", Some("true"))]),
    ];
    for request in rejected {
        assert_eq!(
            refused(&mut service, request).await,
            (StatusCode::BAD_REQUEST, -32020, json!(1))
        );
    }
}

#[tokio::test]
async fn listen_streams_carry_the_changes_asked_for_tagged_with_their_id() {
    let server = server();
    let notifier = server.notifier();
    let mut service = StreamableHttpService::new(server);
    let listen = post(
        77,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["mem://a"]}}),
        &[],
    );
    let response = send(&mut service, listen).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let ack = next_message(&mut body).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["mem://a"]}),
        "no prompts here"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        77
    );

    assert_eq!(
        notifier.list_changed(ListChanged::Prompts),
        1,
        "one listener, not told: it did not get prompts"
    );
    notifier.resource_updated("mem://other");
    let called = json_of(
        send(
            &mut service,
            post(1, "tools/call", json!({"name": "change"}), &[]),
        )
        .await,
    )
    .await;
    assert_eq!(called["result"]["content"][0]["text"], "1");
    let changed = next_message(&mut body).await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        77
    );
    notifier.resource_updated("mem://a");
    let updated = next_message(&mut body).await;
    assert_eq!(
        (updated["method"].as_str(), updated["params"]["uri"].as_str()),
        (Some("notifications/resources/updated"), Some("mem://a"))
    );

    let bad = post(78, "subscriptions/listen", json!({"notifications": 5}), &[]);
    assert_eq!(
        refused(&mut service, bad).await,
        (StatusCode::BAD_REQUEST, -32602, json!(78))
    );
}

#[tokio::test]
async fn listeners_that_go_away_are_let_go() {
    let server = server();
    let notifier = server.notifier();
    let mut service = StreamableHttpService::new(server);
    let listen = post(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        &[],
    );
    let response = send(&mut service, listen).await;
    drop(response);
    eventually("the listener's task ended", || {
        notifier.list_changed(ListChanged::Tools) == 0
    })
    .await;
}

#[tokio::test]
async fn over_stdio_a_request_that_names_the_revision_is_served_statelessly() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let server = server();
    let notifier = server.notifier();
    let served = tokio::spawn(server.serve(StreamTransport::from_io(ours, Framing::Ndjson)));
    let (read, mut write) = tokio::io::split(theirs);
    let mut lines = BufReader::new(read).lines();
    let call = |id: u64, method: &str, mut params: Value| {
        if params.get("_meta").is_none() {
            params["_meta"] = meta();
        }
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
    };
    let mut exchange = Vec::new();
    for (id, method, params) in [
        (1, "tools/list", json!({})),
        (2, "tools/call", json!({"name": "echo"})),
        (3, "tools/call", json!({"name": "name"})),
        (4, "ping", json!({})),
        (5, "logging/setLevel", json!({"level": "info"})),
        (6, "initialize", json!({})),
        (
            7,
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v9", "io.modelcontextprotocol/clientCapabilities": {}}}),
        ),
        (8, "resources/read", json!({"uri": "mem://a"})),
        (9, "prompts/get", json!({"name": "none"})),
        (
            10,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
        ),
        (11, "tools/call", json!({"name": "ask"})),
    ] {
        write
            .write_all(call(id, method, params).as_bytes())
            .await
            .unwrap();
        exchange.push(next_line(&mut lines).await);
    }
    assert_eq!(exchange[0]["result"]["resultType"], "complete");
    assert_eq!(exchange[0]["result"]["ttlMs"], 60_000);
    assert_eq!(exchange[1]["result"]["resultType"], "complete");
    assert_eq!(exchange[2]["result"]["resultType"], "input_required");
    for removed in &exchange[3..6] {
        assert_eq!(removed["error"]["code"], -32601, "{removed}");
    }
    assert_eq!(exchange[6]["error"]["code"], -32022);
    assert_eq!(exchange[7]["result"]["cacheScope"], "public");
    assert_eq!(exchange[8]["error"]["code"], -32602);
    assert_eq!(exchange[9]["result"]["resultType"], "complete");
    assert_eq!(
        exchange[10]["result"]["isError"], true,
        "no request reached the client: {}",
        exchange[10]
    );

    // A session client on the same connection hears the program's changes.
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n")
        .await
        .unwrap();
    let initialized = next_line(&mut lines).await;
    assert_eq!(
        initialized["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
    assert_eq!(notifier.list_changed(ListChanged::Tools), 1);
    assert_eq!(
        next_line(&mut lines).await["method"],
        "notifications/tools/list_changed"
    );
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"mem://a\"}}\n")
        .await
        .unwrap();
    assert_eq!(next_line(&mut lines).await["id"], 21);
    notifier.resource_updated("mem://b");
    notifier.resource_updated("mem://a");
    let updated = next_line(&mut lines).await;
    assert_eq!(
        (updated["method"].as_str(), updated["params"]["uri"].as_str()),
        (Some("notifications/resources/updated"), Some("mem://a"))
    );
    drop(write);
    drop(lines);
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_sessions_get_stream_carries_the_programs_changes() {
    let server = server();
    let notifier = server.notifier();
    let mut service = StreamableHttpService::new(server);
    let init = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)))
        .unwrap();
    let response = service.call(init).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let get = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .body(Full::<Bytes>::default())
        .unwrap();
    let stream = service.call(get).await.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let mut body = stream.into_body();
    eventually("the session listens", || {
        notifier.list_changed(ListChanged::Resources) > 0
    })
    .await;
    let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let text = String::from_utf8(frame.data_ref().unwrap().to_vec()).unwrap();
    assert!(text.contains("notifications/resources/list_changed"), "{text}");
    let delete = Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", &session)
        .body(Full::<Bytes>::default())
        .unwrap();
    assert_eq!(service.call(delete).await.unwrap().status(), StatusCode::OK);
    eventually("an ended session stops listening", || {
        notifier.list_changed(ListChanged::Resources) == 0
    })
    .await;
}

/// A server for the stateless client: it asks through input-required results.
fn asking_server() -> McpServer {
    server()
        .tool(
            "ask_all",
            "Asks for everything, then answers with it",
            |_: Nothing, cx: McpContext| async move {
                let (Some(sampled), Some(elicited), Some(roots)) = (
                    cx.input_response("s"),
                    cx.input_response("e"),
                    cx.input_response("r"),
                ) else {
                    let needed = InputRequired::new()
                        .sample("s", &json!({"messages": [], "maxTokens": 5}))
                        .elicit(
                            "e",
                            "Name?",
                            &json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                        )
                        .list_roots("r")
                        .with_state("round-1");
                    return Err(cx.input_required(needed));
                };
                Ok(CallToolResult::text(format!(
                    "{} {} {} {}",
                    sampled["content"]["text"].as_str().unwrap_or_default(),
                    elicited["content"]["name"].as_str().unwrap_or_default(),
                    roots["roots"][0]["uri"].as_str().unwrap_or_default(),
                    cx.request_state().unwrap_or_default(),
                )))
            },
        )
        .tool(
            "forever",
            "Asks again and again",
            |_: Nothing, cx: McpContext| async move {
                Err::<CallToolResult, _>(cx.input_required(InputRequired::new().list_roots("r")))
            },
        )
        .tool(
            "logs",
            "Logs at warning",
            |_: Nothing, cx: McpContext| async move {
                cx.log(LogLevel::Warning, Some("t"), "careful")
                    .await
                    .map_err(|e| e.to_error_object())?;
                Ok(CallToolResult::text("logged"))
            },
        )
}

fn stateless_client() -> rpcwire::mcp::McpClientBuilder {
    rpcwire::mcp::McpClient::builder("stateless-client", "2")
        .with_protocol_version(ProtocolVersion::V2026_07_28)
        .on_sampling(|_| async {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}))
        })
        .on_elicitation(|_| async { Ok(json!({"action": "accept", "content": {"name": "Ada"}})) })
        .with_roots(vec![json!({"uri": "file:///root", "name": "root"})])
}

async fn exercise(client: &rpcwire::mcp::McpClient, logs: &std::sync::Mutex<Vec<Value>>) {
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info()["name"], "stateless-test");
    assert!(client.initialize_result()["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!(REVISION)));
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    assert!(names.contains(&"ask_all".to_owned()), "{names:?}");
    let answer = client.call_tool("ask_all", json!({})).await.unwrap();
    assert_eq!(
        answer.content[0].as_text(),
        Some("sampled Ada file:///root round-1")
    );
    let endless = client.call_tool("forever", json!({})).await.unwrap_err();
    assert!(endless.to_string().contains("more than 8 times"), "{endless}");
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = progress.clone();
    let stepped = client
        .call_tool_with_progress("steps", json!({}), move |p| seen.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(stepped.content[0].as_text(), Some("stepped"));
    assert_eq!(*progress.lock().unwrap(), [1.0, 2.0]);
    client.call_tool("logs", json!({})).await.unwrap();
    assert!(logs.lock().unwrap().is_empty(), "no log level asked for: no log");
    client.set_logging_level(LogLevel::Warning).await.unwrap();
    client.call_tool("logs", json!({})).await.unwrap();
    assert_eq!(logs.lock().unwrap().len(), 1, "asked for in _meta");
    client.ping().await.unwrap();
    let read = client.read_resource("mem://a").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    let raw = client.request_raw("tools/list", None).await.unwrap();
    let raw: Value = raw.decode().unwrap();
    assert_eq!(raw["resultType"], "complete", "{raw}");
    let refused = client.request::<Value, _>("ping", &json!({})).await.unwrap_err();
    assert!(
        refused.to_string().contains("-32601") || refused.to_string().contains("not found"),
        "{refused}"
    );
}

#[tokio::test]
async fn the_client_speaks_the_stateless_revision_over_http_and_stdio() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url: http::Uri = format!("http://{}/mcp", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    let served = tokio::spawn(StreamableHttpService::new(asking_server()).serve(listener));
    let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let heard = logs.clone();
    let client = stateless_client()
        .on_log(move |message| heard.lock().unwrap().push(message))
        .connect_http(url.clone())
        .await
        .unwrap();
    exercise(&client, &logs).await;
    client.close().await;

    let handshake_only = StreamableHttpService::new(McpServer::new("old", "1"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let old_url: http::Uri = format!("http://{}/mcp", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    let old = tokio::spawn(handshake_only.serve(listener));
    let refused = stateless_client().connect_http(old_url).await.unwrap_err();
    assert!(
        matches!(refused, rpcwire::mcp::ConnectError::Initialize(_)),
        "the revision's header refused: {refused}"
    );
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let old_stdio =
        tokio::spawn(McpServer::new("old", "1").serve(StreamTransport::from_io(theirs, Framing::Ndjson)));
    let refused = stateless_client()
        .connect(StreamTransport::from_io(ours, Framing::Ndjson))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, rpcwire::mcp::ConnectError::Version(listed) if listed.contains("2025-11-25")),
        "{refused}"
    );
    tokio::time::timeout(Duration::from_secs(5), old_stdio)
        .await
        .unwrap()
        .unwrap();

    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let over_stdio = tokio::spawn(asking_server().serve(StreamTransport::from_io(theirs, Framing::Ndjson)));
    let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let heard = logs.clone();
    let client = stateless_client()
        .on_log(move |message| heard.lock().unwrap().push(message))
        .connect(StreamTransport::from_io(ours, Framing::Ndjson))
        .await
        .unwrap();
    exercise(&client, &logs).await;
    client.close().await;
    tokio::time::timeout(Duration::from_secs(5), over_stdio)
        .await
        .unwrap()
        .unwrap();
    served.abort();
    old.abort();
}

#[tokio::test]
async fn prompts_resources_completion_and_timeouts_are_served_statelessly() {
    use rpcwire::mcp::{Completion, GetPromptResult, Prompt, PromptMessage};
    let gone = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dropped = gone.clone();
    let server = McpServer::new("more", "1")
        .with_versions(&ProtocolVersion::ALL)
        .with_handler_timeout(Duration::from_millis(200))
        .tool("slow", "Sleeps past the timeout", |_: Nothing, _| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(CallToolResult::text("late"))
        })
        .tool(
            "streams",
            "Reports progress, then waits",
            move |_: Nothing, cx: McpContext| {
                let dropped = dropped.clone();
                async move {
                    let _flag = DropFlag(dropped);
                    cx.progress(1.0, None, None)
                        .await
                        .map_err(|e| e.to_error_object())?;
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    Ok(CallToolResult::text("streamed"))
                }
            },
        )
        .tool(
            "objects",
            "An object argument mirrored in a header",
            |_: Nothing, _| async { Ok(CallToolResult::text("no")) },
        )
        .raw_tool(
            Tool::new(
                "object_header",
                "An object mirrored",
                r#"{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}"#,
            )
            .unwrap(),
            |_, _| async { Ok(CallToolResult::text("no")) },
        )
        .prompt(
            Prompt::new("greet", "Greets").with_argument("name", "Who", true),
            |args, cx: McpContext| async move {
                match cx.input_response("mood") {
                    Some(_) => Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                        "Hello, {}!",
                        args["name"]
                    ))])),
                    None => Err(cx.input_required(InputRequired::new().elicit(
                        "mood",
                        "Mood?",
                        &json!({"type": "object", "properties": {}}),
                    ))),
                }
            },
        )
        .resource(Resource::new("mem://broken", "broken"), |_| async {
            Err(rpcwire::ErrorObject::new(-32099, "the disk is gone"))
        })
        .completion(
            |request, _| async move { Ok(Completion::of(vec![format!("{}!", request.argument.value)])) },
        );
    let mut service = StreamableHttpService::new(server);

    let late = json_of(send(&mut service, post(1, "tools/call", json!({"name": "slow"}), &[])).await).await;
    assert_eq!(late["error"]["code"], -32603);
    assert!(
        late["error"]["message"].as_str().unwrap().contains("timeout")
            || late["error"]["data"].to_string().contains("timeout"),
        "{late}"
    );

    let missing = post(2, "prompts/get", json!({"name": "greet"}), &[]);
    assert_eq!(refused(&mut service, missing).await.1, -32602);
    let unknown = post(3, "prompts/get", json!({"name": "nope"}), &[]);
    assert_eq!(refused(&mut service, unknown).await.1, -32602);
    let asks = json_of(
        send(
            &mut service,
            post(
                4,
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": "Ada"}}),
                &[],
            ),
        )
        .await,
    )
    .await;
    assert_eq!(asks["result"]["resultType"], "input_required");
    let answered = post(
        5,
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}, "inputResponses": {"mood": {"action": "accept", "content": {}}}}),
        &[],
    );
    let answered = json_of(send(&mut service, answered).await).await;
    assert_eq!(
        answered["result"]["messages"][0]["content"]["text"],
        "Hello, Ada!"
    );
    assert_eq!(answered["result"]["resultType"], "complete");

    let broken = json_of(
        send(
            &mut service,
            post(6, "resources/read", json!({"uri": "mem://broken"}), &[]),
        )
        .await,
    )
    .await;
    assert_eq!(
        broken["error"]["code"], -32099,
        "a handler's own error passes as it is: {broken}"
    );
    let completed = post(
        7,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "Ad"}}),
        &[],
    );
    let completed = json_of(send(&mut service, completed).await).await;
    assert_eq!(completed["result"]["completion"]["values"], json!(["Ad!"]));

    let object = post(
        8,
        "tools/call",
        json!({"name": "object_header", "arguments": {"o": {"a": 1}}}),
        &[("mcp-param-o", Some("{}"))],
    );
    assert_eq!(
        refused(&mut service, object).await.1,
        -32020,
        "an object cannot be mirrored"
    );

    let mut with_token = meta();
    with_token["progressToken"] = json!(9);
    let streaming = send(
        &mut service,
        post(
            9,
            "tools/call",
            json!({"name": "streams", "_meta": with_token}),
            &[],
        ),
    )
    .await;
    let mut body = streaming.into_body();
    assert_eq!(next_message(&mut body).await["method"], "notifications/progress");
    drop(body);
    eventually("the handler of a client that went away is dropped", || {
        gone.load(std::sync::atomic::Ordering::SeqCst)
    })
    .await;

    let listen = post(
        10,
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true, "promptsListChanged": true}}),
        &[],
    );
    let mut listening = send(&mut service, listen).await.into_body();
    let ack = next_message(&mut listening).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true, "resourcesListChanged": true})
    );
}

#[tokio::test]
async fn a_stateless_call_given_up_by_the_client_ends_on_the_server() {
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = ended.clone();
    let server = McpServer::new("cancel", "1")
        .with_versions(&ProtocolVersion::ALL)
        .tool("long", "Sleeps ten seconds", move |_: Nothing, _| {
            let flag = flag.clone();
            async move {
                let _ended = DropFlag(flag);
                tokio::time::sleep(Duration::from_secs(10)).await;
                Ok(CallToolResult::text("slept"))
            }
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url: http::Uri = format!("http://{}/mcp", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    let served = tokio::spawn(StreamableHttpService::new(server).serve(listener));
    let client = rpcwire::mcp::McpClient::builder("t", "1")
        .with_protocol_version(ProtocolVersion::V2026_07_28)
        .with_call_timeout(Duration::from_millis(300))
        .connect_http(url)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let timed_out = client.call_tool("long", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "{timed_out}");
    eventually("the server's handler ended when the client gave up", || {
        ended.load(std::sync::atomic::Ordering::SeqCst)
    })
    .await;
    client.close().await;
    served.abort();
}

#[tokio::test]
async fn past_the_stateless_limits_requests_are_answered_at_once() {
    let server = McpServer::new("limits", "1")
        .with_versions(&ProtocolVersion::ALL)
        .tool("hold", "Sleeps a little", |_: Nothing, _| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(CallToolResult::text("held"))
        });
    let mut service = StreamableHttpService::new(server).with_stateless_limits(1, 1);
    let mut first = service.clone();
    let holding = tokio::spawn(async move {
        json_of(send(&mut first, post(1, "tools/call", json!({"name": "hold"}), &[])).await).await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let busy = json_of(send(&mut service, post(2, "tools/call", json!({"name": "hold"}), &[])).await).await;
    assert_eq!(
        (busy["error"]["code"].as_i64(), &busy["id"]),
        (Some(-32000), &json!(2)),
        "{busy}"
    );
    assert_eq!(holding.await.unwrap()["result"]["content"][0]["text"], "held");
    let again = json_of(send(&mut service, post(3, "tools/call", json!({"name": "hold"}), &[])).await).await;
    assert_eq!(
        again["result"]["content"][0]["text"], "held",
        "room again once the first ended"
    );

    let listening = send(
        &mut service,
        post(
            4,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
            &[],
        ),
    )
    .await;
    assert_eq!(listening.headers()["content-type"], "text/event-stream");
    let second = json_of(
        send(
            &mut service,
            post(5, "subscriptions/listen", json!({"notifications": {}}), &[]),
        )
        .await,
    )
    .await;
    assert_eq!(second["error"]["code"], -32000, "{second}");
    drop(listening);
}
