//! Any bytes as a run of requests to `StreamableHttpService` (MCP over Streamable HTTP, every
//! revision enabled: sessions and the stateless 2026-07-28), in one session opened first with
//! a valid `initialize` (or none): never a panic, every request answered in time, every
//! answer body ends (but a GET stream's and a `subscriptions/listen` stream's, which stay
//! open by design once acknowledged), and
//! what comes back is what the specification allows — a `200` JSON body is JSON-RPC
//! responses, each SSE `data:` a JSON-RPC message, a refusal (4xx/5xx) a JSON-RPC error.
//!
//! The input is cut at each 0xff byte into up to eight requests; each piece's first byte
//! chooses the method and the headers (its bits, below), the rest is the body.
#![no_main]

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use rpcwire::mcp::http::StreamableHttpService;
use rpcwire::mcp::{CallToolResult, InputRequired, LogLevel, McpServer, ProtocolVersion, Tool};
use tower_service::Service;

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;

fn service() -> StreamableHttpService {
    let echo = Tool::new("echo", "Says its arguments back", r#"{"type":"object"}"#).expect("JSON");
    let noisy = Tool::new("noisy", "Logs and reports progress first", r#"{"type":"object"}"#).expect("JSON");
    let mirrored = Tool::new(
        "mirrored",
        "Arguments mirrored in headers",
        r#"{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"V"},"n":{"type":"number","x-mcp-header":"N"}}}"#,
    )
    .expect("JSON");
    let asks = Tool::new("asks", "Asks the client, with a state", r#"{"type":"object"}"#).expect("JSON");
    let server = McpServer::new("fuzz", "1")
        .with_versions(&ProtocolVersion::ALL)
        .with_max_message(4096)
        .raw_tool(mirrored, |arguments, _| async move {
            Ok(CallToolResult::text(
                arguments.map_or_else(String::new, |a| a.get().to_owned()),
            ))
        })
        .raw_tool(asks, |_, cx| async move {
            match (cx.request_state(), cx.input_response("a")) {
                (Some(state), Some(_)) => Ok(CallToolResult::text(state.to_owned())),
                _ => Err(cx.input_required(InputRequired::new().list_roots("a").with_state("s"))),
            }
        })
        .raw_tool(echo, |arguments, _| async move {
            Ok(CallToolResult::text(
                arguments.map_or_else(String::new, |a| a.get().to_owned()),
            ))
        })
        .raw_tool(noisy, |_, cx| async move {
            let _ = cx.log(LogLevel::Info, None, "noise").await;
            let _ = cx.progress(1.0, None, None).await;
            Ok(CallToolResult::text("done"))
        });
    StreamableHttpService::with_sessions(server, 4, Duration::from_secs(60))
}

/// The request a piece stands for. Bits of the first byte: 0–1 the method (POST, GET,
/// DELETE, PUT), 2–3 the session id (the real one, none, a bogus one, empty), 4–5 Accept
/// (both, JSON only, SSE only, none), 6 a foreign Origin, 7 a protocol version header: the
/// stateless revision's, with `Mcp-Method` and `Mcp-Name` as the body says (when it is JSON)
/// and `Mcp-Param-V: =?base64?eA==?=`, when the body's length is even; an unknown one when
/// odd.
fn request(piece: &[u8], session: &str) -> http::Request<Full<Bytes>> {
    let (flags, body) = piece.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    let method = ["POST", "GET", "DELETE", "PUT"][usize::from(flags & 3)];
    let mut builder = http::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "127.0.0.1:8000")
        .header("content-type", "application/json");
    match (flags >> 2) & 3 {
        0 => builder = builder.header("mcp-session-id", session),
        2 => builder = builder.header("mcp-session-id", "bogus"),
        3 => builder = builder.header("mcp-session-id", ""),
        _ => {}
    }
    match (flags >> 4) & 3 {
        0 => builder = builder.header("accept", "application/json, text/event-stream"),
        1 => builder = builder.header("accept", "application/json"),
        2 => builder = builder.header("accept", "text/event-stream"),
        _ => {}
    }
    if flags & 0x40 != 0 {
        builder = builder.header("origin", "http://evil.example.com");
    }
    if flags & 0x80 != 0 && body.len() % 2 == 0 {
        // The headers the body calls for, as a well-behaved client of the revision sends them.
        let message: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let method = message["method"].as_str().unwrap_or("tools/call");
        let target = message["params"]["name"]
            .as_str()
            .or(message["params"]["uri"].as_str());
        builder = builder
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-param-v", "=?base64?eA==?=");
        if let Ok(method) = http::HeaderValue::from_str(method) {
            builder = builder.header("mcp-method", method);
        }
        if let Some(Ok(target)) = target.map(http::HeaderValue::from_str) {
            builder = builder.header("mcp-name", target);
        }
    } else if flags & 0x80 != 0 {
        builder = builder.header("mcp-protocol-version", "1999-01-01");
    }
    builder
        .body(Full::new(Bytes::copy_from_slice(body)))
        .expect("a request")
}

/// A JSON-RPC message or batch.
fn assert_json_rpc(body: &[u8]) {
    rpcwire::parse(body).unwrap_or_else(|e| panic!("not JSON-RPC {:?}: {e}", String::from_utf8_lossy(body)));
}

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut service = service();
        let init = http::Request::post("/mcp")
            .header("host", "127.0.0.1:8000")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(Full::new(Bytes::from_static(INITIALIZE)))
            .expect("a request");
        let answer = service.call(init).await.expect("infallible");
        let session = answer.headers()["mcp-session-id"]
            .to_str()
            .expect("ASCII")
            .to_owned();
        for piece in data.split(|&b| b == 0xff).take(8) {
            let request = request(piece, &session);
            let is_get = request.method() == http::Method::GET;
            let answer = tokio::time::timeout(Duration::from_secs(30), service.call(request))
                .await
                .expect("answered in time")
                .expect("infallible");
            let status = answer.status();
            let content_type = answer
                .headers()
                .get("content-type")
                .map(|v| v.to_str().expect("ASCII").to_owned())
                .unwrap_or_default();
            if is_get && status == 200 {
                assert_eq!(content_type, "text/event-stream");
                continue; // the session's own stream stays open
            }
            let mut body = Vec::new();
            let mut frames = answer.into_body();
            loop {
                match tokio::time::timeout(Duration::from_secs(30), frames.frame()).await {
                    Ok(Some(frame)) => {
                        if let Some(data) = frame.expect("infallible").data_ref() {
                            body.extend_from_slice(data);
                        }
                    }
                    Ok(None) => break,
                    Err(_) => {
                        // Open on purpose only when it is a listen stream, acknowledged first.
                        let text = String::from_utf8_lossy(&body);
                        assert!(
                            content_type == "text/event-stream"
                                && text.contains("notifications/subscriptions/acknowledged"),
                            "the body ends: {status} {content_type} {text:?}"
                        );
                        break;
                    }
                }
            }
            match (status.as_u16(), content_type.as_str()) {
                (200, "text/event-stream") => {
                    for line in body.split(|&b| b == b'\n') {
                        if let Some(data) = line.strip_prefix(b"data: ") {
                            if !data.is_empty() {
                                assert_json_rpc(data);
                            }
                        }
                    }
                }
                (200 | 400..=599, "application/json") => assert_json_rpc(&body),
                (200 | 202, "") => assert!(body.is_empty() || status == 200),
                (status, kind) => panic!("unexpected answer {status} {kind:?}: {body:?}"),
            }
        }
    });
});
