//! Any bytes as a run of requests to `McpGateway` (a stdio server served over Streamable
//! HTTP), in a session opened first with a valid `initialize`: never a panic, every request
//! answered in time, every answer body ends (but a GET stream's, which stays open by design),
//! and what comes back is what the specification allows — a `200` JSON body is JSON-RPC
//! responses, each SSE `data:` a JSON-RPC message, a refusal (4xx/5xx) a JSON-RPC error.
//!
//! The child is `sed`, shared by every session (one process for the fuzzer's whole run): it
//! answers each request the gateway forwards with an empty result and drops the rest. The
//! input is cut at each 0xff byte into up to eight requests; each piece's first byte chooses
//! the method and the headers (its bits, below), the rest is the body.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use rpcwire::mcp::gateway::{McpGateway, StdioCommand};
use tower_service::Service;

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;

/// Answers every forwarded request (`"id":N` as the gateway's Peer writes it) with `{}`.
const CHILD: &str = r#"s/^{"jsonrpc":"2.0","id":\([0-9]*\),.*/{"jsonrpc":"2.0","id":\1,"result":{}}/;t;d"#;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn gateway() -> McpGateway {
    static GATEWAY: OnceLock<McpGateway> = OnceLock::new();
    GATEWAY
        .get_or_init(|| {
            McpGateway::new(StdioCommand::new("sed").args(["-u", CHILD]))
                .with_shared_child()
                .with_sessions(8, Duration::from_millis(1))
                .with_max_message(4096)
                .with_timeouts(Duration::from_secs(5), Duration::from_secs(5))
                .with_resume_grace(Duration::from_millis(10))
        })
        .clone()
}

/// The request a piece stands for. Bits of the first byte: 0–1 the method (POST, GET,
/// DELETE, PUT), 2–3 the session id (the real one, none, a bogus one, empty), 4–5 Accept
/// (both, JSON only, SSE only, none), 6 a foreign Origin, 7 `MCP-Protocol-Version`
/// (2025-06-18 when the body's length is even, an unknown one when odd).
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
    if flags & 0x80 != 0 {
        let version = if body.len() % 2 == 0 {
            "2025-06-18"
        } else {
            "1999-01-01"
        };
        builder = builder.header("mcp-protocol-version", version);
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
    runtime().block_on(async {
        let mut gateway = gateway();
        let init = http::Request::post("/mcp")
            .header("host", "127.0.0.1:8000")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(Full::new(Bytes::from_static(INITIALIZE)))
            .expect("a request");
        let answer = gateway.call(init).await.expect("infallible");
        let session = match answer.headers().get("mcp-session-id") {
            Some(session) => session.to_str().expect("ASCII").to_owned(),
            // The shared child ended (an input made it exit): the next input starts another.
            None => return,
        };
        for piece in data.split(|&b| b == 0xff).take(8) {
            let request = request(piece, &session);
            let is_get = request.method() == http::Method::GET;
            let answer = tokio::time::timeout(Duration::from_secs(30), gateway.call(request))
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
            let body = tokio::time::timeout(Duration::from_secs(30), answer.into_body().collect())
                .await
                .expect("the body ends")
                .expect("infallible")
                .to_bytes();
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
