//! `McpGateway` opening and closing a thousand sessions in front of a stdio server — ended by
//! DELETE, by idle expiry and by shutdown — leaves no child running and no descriptor open.
//! Alone in its test binary, so that what it counts is its own. The server is `sed` answering
//! `initialize` (a thousand instrumented Rust children would each write a coverage profile,
//! and reused process ids make their files collide).
#![cfg(all(unix, feature = "mcp", feature = "http"))]

#[path = "support/sse.rs"]
mod sse;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use rpcwire::mcp::gateway::{McpGateway, StdioCommand};
use tower_service::Service;

/// Answers `initialize` (as the gateway's Peer writes it, a numeric id) and drops the rest.
const SERVER: &str = r#"s/^{"jsonrpc":"2.0","id":\([0-9]*\),"method":"initialize".*/{"jsonrpc":"2.0","id":\1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sed","version":"1"}}}/;t;d"#;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn post(session: Option<&str>, method: &str, body: &str) -> Request<Full<Bytes>> {
    let mut request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "127.0.0.1:1234")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
}

/// Opens a session; its id.
async fn open(gateway: &mut McpGateway) -> String {
    let response = gateway.call(post(None, "POST", INITIALIZE)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let answer = sse::json_of(response).await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    session
}

async fn delete(gateway: &mut McpGateway, session: &str) {
    let response = gateway.call(post(Some(session), "DELETE", "")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

/// Waits up to 10 s for `done`.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// This process's children that are running (a zombie does not).
fn running_children() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| {
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.len() > 1 && fields[1] == me && fields[0] != "Z"
        })
        .count()
}

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// A thousand sessions opened and closed leave no child running and no descriptor open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_sessions_leave_no_process_or_descriptor_behind() {
    let mut gateway = McpGateway::new(StdioCommand::new("sed").args(["-u", SERVER]))
        .with_sessions(2048, Duration::from_millis(200))
        .with_terminate_grace(Duration::from_millis(500));
    // One session first: what the runtime opens once (the signal pipe) is counted.
    let warm = open(&mut gateway).await;
    delete(&mut gateway, &warm).await;
    eventually("the first child is reaped", || gateway.child_count() == 0).await;
    let descriptors = open_descriptors();
    assert_eq!(running_children(), 0);
    let mut tasks = Vec::new();
    for worker in 0..8u32 {
        let mut gateway = gateway.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..125u32 {
                let session = open(&mut gateway).await;
                // A quarter left to the idle sweep, a quarter to shutdown, half deleted.
                if (worker + round) % 4 >= 2 {
                    delete(&mut gateway, &session).await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert!(gateway.session_count() >= 250, "{}", gateway.session_count());
    tokio::time::sleep(Duration::from_millis(250)).await;
    let swept = gateway.sweep();
    assert!(swept > 0, "idle sessions expire");
    gateway.shutdown(Duration::from_secs(1)).await;
    assert_eq!((gateway.session_count(), gateway.child_count()), (0, 0));
    eventually("no child left running", || running_children() == 0).await;
    eventually("every descriptor closed", || open_descriptors() == descriptors).await;
}
