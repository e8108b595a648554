//! `McpClient` against servers: rpcwire's own `McpServer` in-process (progress callbacks,
//! the server's requests answered by the client's handlers, call timeouts that cancel on
//! the server, a server that goes away), `examples/mcp_server` as a child over stdio (killed
//! and reaped with its process group) and over Streamable HTTP, and the official
//! `@modelcontextprotocol/server-everything` over stdio and Streamable HTTP.
#![cfg(all(unix, feature = "mcp", feature = "http"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/listening_child.rs"]
mod listening_child;
#[path = "support/mcp_peers.rs"]
mod mcp_peers;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rpcwire::frame::Framing;
use rpcwire::mcp::{
    CallToolResult, ConnectError, GetPromptResult, LogLevel, McpClient, McpContext, McpServer, Prompt,
    PromptMessage, ReadResourceResult, Resource, ResourceContents,
};
use rpcwire::transport::{PeerErrorKind, StreamTransport};
use serde_json::{json, Value};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sleep {
    ms: u64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn server(cancelled: Arc<AtomicU64>) -> McpServer {
    let mut server = McpServer::new("in-process", "2")
        .with_page_size(2)
        .tool("add", "Adds", |args: Add, _| async move { Ok(CallToolResult::text((args.a + args.b).to_string())) })
        .tool("sleep", "Sleeps", move |args: Sleep, _| {
            let cancelled = cancelled.clone();
            async move {
                struct Dropped(Arc<AtomicU64>, bool);
                impl Drop for Dropped {
                    fn drop(&mut self) {
                        if !self.1 {
                            self.0.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
                let mut guard = Dropped(cancelled, false);
                tokio::time::sleep(Duration::from_millis(args.ms)).await;
                guard.1 = true;
                Ok(CallToolResult::text("slept"))
            }
        })
        .tool("steps", "Progress", |_: Nothing, cx: McpContext| async move {
            for step in 1..=3 {
                cx.progress(f64::from(step), Some(3.0), None).await.map_err(|e| e.to_error_object())?;
            }
            cx.log(LogLevel::Warning, Some("steps"), "done").await.map_err(|e| e.to_error_object())?;
            Ok(CallToolResult::text("stepped"))
        })
        .tool("ask", "Asks the client everything", |_: Nothing, cx: McpContext| async move {
            let sampled = cx.create_message(&json!({"messages": [], "maxTokens": 1})).await.map_err(|e| e.to_error_object())?;
            let schema = json!({"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}, "n": {"type": "integer", "default": 3}, "free": {"type": "string"}}});
            let form = cx.elicit("?", &schema).await.map_err(|e| e.to_error_object())?;
            let roots = cx.list_roots().await.map_err(|e| e.to_error_object())?;
            Ok(CallToolResult::text(json!({"sampled": sampled, "form": form, "roots": roots}).to_string()))
        })
        .resource(Resource::new("mem://a", "a"), |_| async {
            Ok(ReadResourceResult::one(ResourceContents::text("mem://a", "text/plain", "A")))
        })
        .prompt(Prompt::new("greet", "Greets").with_argument("name", "Who", true), |args, _| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("Hello, {}!", args["name"]))]))
        });
    for n in 0..3 {
        server = server.tool(&format!("extra{n}"), "More tools", |_: Nothing, _| async {
            Ok(CallToolResult::text("x"))
        });
    }
    server
}

async fn connected(
    builder: rpcwire::mcp::McpClientBuilder,
    cancelled: Arc<AtomicU64>,
) -> (
    McpClient,
    tokio::task::JoinHandle<rpcwire::transport::CloseReason>,
) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(server(cancelled).serve(StreamTransport::from_io(theirs, Framing::Ndjson)));
    let client = builder
        .connect(StreamTransport::from_io(ours, Framing::Ndjson))
        .await
        .expect("connected");
    (client, served)
}

#[tokio::test]
async fn lists_calls_and_reads_with_every_page_followed() {
    let (client, _served) = connected(McpClient::builder("t", "1"), Arc::default()).await;
    assert_eq!(client.server_info()["name"], "in-process");
    assert_eq!(
        client.protocol_version(),
        rpcwire::mcp::ProtocolVersion::V2025_11_25
    );
    assert_eq!(
        client.initialize_result()["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(
        names,
        ["add", "sleep", "steps", "ask", "extra0", "extra1", "extra2"],
        "every page, in order"
    );
    assert_eq!(
        client
            .call_tool("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap()
            .content[0]
            .as_text(),
        Some("42")
    );
    let failed = client.call_tool("add", json!({"a": "x"})).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
    assert!(
        matches!(unknown.kind(), PeerErrorKind::Remote(e) if e.code().code() == -32602),
        "{unknown}"
    );
    assert_eq!(client.list_resources().await.unwrap()[0].uri, "mem://a");
    let read = client.read_resource("mem://a").await.unwrap();
    assert_eq!(
        read.contents[0],
        ResourceContents::text("mem://a", "text/plain", "A")
    );
    assert_eq!(client.list_prompts().await.unwrap()[0].name, "greet");
    let greeting = client
        .get_prompt("greet", &HashMap::from([("name".to_owned(), "Bo".to_owned())]))
        .await
        .unwrap();
    assert_eq!(greeting.messages[0].content.as_text(), Some("Hello, Bo!"));
    client.ping().await.unwrap();
    let raw = client
        .request_raw(
            "tools/call",
            Some(&rpcwire::RawJson::new(r#"{"name":"add","arguments":{"a":1,"b":1}}"#).unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(raw.as_str(), r#"{"content":[{"type":"text","text":"2"}]}"#);
    client.close().await;
}

#[tokio::test]
async fn progress_and_log_messages_reach_their_callbacks() {
    let logs = Arc::new(Mutex::new(Vec::new()));
    let seen = logs.clone();
    let builder = McpClient::builder("t", "1").on_log(move |message| seen.lock().unwrap().push(message));
    let (client, _served) = connected(builder, Arc::default()).await;
    client.set_logging_level(LogLevel::Warning).await.unwrap();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let record = progress.clone();
    let done = client
        .call_tool_with_progress("steps", json!({}), move |p| {
            record.lock().unwrap().push((p.progress, p.total))
        })
        .await
        .unwrap();
    assert_eq!(done.content[0].as_text(), Some("stepped"));
    assert_eq!(
        *progress.lock().unwrap(),
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    assert_eq!(
        *logs.lock().unwrap(),
        [json!({"level": "warning", "logger": "steps", "data": "done"})]
    );
}

#[tokio::test]
async fn the_servers_requests_are_answered_by_the_clients_handlers() {
    let builder = McpClient::builder("t", "1")
        .on_sampling(|params| async move {
            assert_eq!(params["maxTokens"], 1);
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}))
        })
        .accept_elicitation_defaults()
        .with_roots(vec![json!({"uri": "file:///w", "name": "w"})]);
    let (client, _served) = connected(builder, Arc::default()).await;
    let result = client.call_tool("ask", json!({})).await.unwrap();
    let answers: Value = serde_json::from_str(result.content[0].as_text().unwrap()).unwrap();
    assert_eq!(answers["sampled"]["content"]["text"], "sampled");
    assert_eq!(
        answers["form"],
        json!({"action": "accept", "content": {"name": "Ada", "n": 3}})
    );
    assert_eq!(
        answers["roots"],
        json!({"roots": [{"uri": "file:///w", "name": "w"}]})
    );
    // A client without handlers answers -32601, and the tool fails with it.
    let (bare, _served) = connected(McpClient::builder("t", "1"), Arc::default()).await;
    let refused = bare.call_tool("ask", json!({})).await.unwrap_err();
    assert!(
        matches!(refused.kind(), PeerErrorKind::Remote(e) if e.code().code() == -32601),
        "{refused}"
    );
}

#[tokio::test]
async fn a_call_past_its_timeout_ends_and_is_cancelled_on_the_server() {
    let cancelled = Arc::new(AtomicU64::new(0));
    let builder = McpClient::builder("t", "1").with_call_timeout(Duration::from_millis(200));
    let (client, _served) = connected(builder, cancelled.clone()).await;
    let started = Instant::now();
    let late = client.call_tool("sleep", json!({"ms": 60000})).await.unwrap_err();
    assert!(matches!(late.kind(), PeerErrorKind::TimedOut { .. }), "{late}");
    assert!(started.elapsed() < Duration::from_secs(5));
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        cancelled.load(Ordering::SeqCst),
        1,
        "the server dropped the handler"
    );
    // A dropped call future is cancelled too.
    let call = client.call_tool("sleep", json!({"ms": 60000}));
    assert!(tokio::time::timeout(Duration::from_millis(50), call)
        .await
        .is_err());
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(cancelled.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn calls_end_when_the_server_goes_away() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    // A server that initializes, then dies (its pipe closes) once a tool is called.
    tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(theirs);
        let mut lines = tokio::io::BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).unwrap();
            match message["method"].as_str() {
                Some("initialize") => {
                    let result = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "dies", "version": "0"}});
                    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                    write.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
                }
                Some("tools/call") => return,
                _ => {}
            }
        }
    });
    let client = McpClient::builder("t", "1")
        .connect(StreamTransport::from_io(ours, Framing::Ndjson))
        .await
        .unwrap();
    assert_eq!(
        client.protocol_version(),
        rpcwire::mcp::ProtocolVersion::V2025_06_18
    );
    let started = Instant::now();
    let error = client.call_tool("anything", json!({})).await.unwrap_err();
    assert!(error.is_closed(), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(client.ping().await.unwrap_err().is_closed());
}

#[tokio::test]
async fn a_server_that_answers_initialize_with_an_unknown_revision_is_refused() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let mut router = rpcwire::dispatch::Router::new();
    router.method("initialize", |_: Value| Ok(json!({"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "old", "version": "0"}})));
    tokio::spawn(rpcwire::transport::Peer::serve(
        StreamTransport::from_io(theirs, Framing::Ndjson),
        router,
    ));
    let refused = McpClient::builder("t", "1")
        .connect(StreamTransport::from_io(ours, Framing::Ndjson))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ConnectError::Version(ref v) if v == "1999-01-01"),
        "{refused}"
    );
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    tokio::spawn(rpcwire::transport::Peer::serve(
        StreamTransport::from_io(theirs, Framing::Ndjson),
        rpcwire::dispatch::Router::new(),
    ));
    let failed = McpClient::builder("t", "1")
        .connect(StreamTransport::from_io(ours, Framing::Ndjson))
        .await
        .unwrap_err();
    assert!(matches!(failed, ConnectError::Initialize(_)), "{failed}");
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| stat.contains(") Z "))
}

/// The pids of `examples/mcp_server` processes over stdio (no arguments) that are children
/// of this test process.
fn server_children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after = stat.rsplit_once(") ").map(|(_, rest)| rest).unwrap_or_default();
        let fields: Vec<&str> = after.split(' ').collect();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stdio = cmdline.split(|&b| b == 0).filter(|arg| !arg.is_empty()).count() == 1;
        if fields.get(1) == Some(&me.as_str()) && stat.contains("(mcp_server)") && fields[0] != "Z" && stdio {
            pids.push(pid);
        }
    }
    pids
}

#[tokio::test]
async fn a_stdio_server_child_is_killed_and_reaped() {
    let binary = example_binary::example_binary("mcp_server");
    let binary = binary.to_str().unwrap();
    let none: [&str; 0] = [];
    let client = McpClient::builder("t", "1")
        .connect_stdio(binary, &none)
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("add", json!({"a": 5, "b": 3}))
            .await
            .unwrap()
            .content[0]
            .as_text(),
        Some("8")
    );
    let children = server_children();
    assert_eq!(children.len(), 1, "{children:?}");
    client.close().await;
    assert!(!alive(children[0]), "closed: the child is gone and reaped");
    // Dropped without close: killed at once, reaped by tokio soon after.
    let client = McpClient::builder("t", "1")
        .connect_stdio(binary, &none)
        .await
        .unwrap();
    let pid = server_children()[0];
    drop(client);
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "dropped: the child is gone");
    let missing = McpClient::builder("t", "1")
        .connect_stdio("/nonexistent/mcp-server", &none)
        .await
        .unwrap_err();
    assert!(matches!(missing, ConnectError::Spawn(_)), "{missing}");
    // A child that exits at once: initialize fails, nothing is left behind.
    let quits = McpClient::builder("t", "1")
        .connect_stdio("true", &none)
        .await
        .unwrap_err();
    assert!(matches!(quits, ConnectError::Initialize(_)), "{quits}");
}

#[tokio::test]
async fn over_streamable_http_to_the_example_server() {
    let server = listening_child::start_listening(
        &example_binary::example_binary("mcp_server"),
        &["--http", "127.0.0.1:0"],
    );
    let builder = McpClient::builder("t", "1").on_sampling(|params| async move {
        let text = params["messages"][0]["content"]["text"].as_str().unwrap_or_default().to_owned();
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": format!("echo {text}")}, "model": "m"}))
    });
    let client = builder
        .connect_http(server.address.parse().unwrap())
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("add", json!({"a": 5, "b": 3}))
            .await
            .unwrap()
            .content[0]
            .as_text(),
        Some("8")
    );
    let steps = Arc::new(Mutex::new(Vec::new()));
    let record = steps.clone();
    let done = client
        .call_tool_with_progress("progress", json!({"steps": 3}), move |p| {
            record.lock().unwrap().push(p.progress)
        })
        .await
        .unwrap();
    assert_eq!(done.content[0].as_text(), Some("done 3"));
    assert_eq!(*steps.lock().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(
        client
            .call_tool("sample", json!({"prompt": "hi"}))
            .await
            .unwrap()
            .content[0]
            .as_text(),
        Some("echo hi")
    );
    let resumed = client.call_tool("test_reconnection", json!({})).await.unwrap();
    assert_eq!(
        resumed.content[0].as_text(),
        Some("Reconnection test completed successfully"),
        "resumed with Last-Event-ID"
    );
    client.close().await;
}

/// server-everything's entry point.
fn everything(modules: &std::path::Path) -> String {
    modules
        .join("@modelcontextprotocol/server-everything/dist/index.js")
        .to_string_lossy()
        .into_owned()
}

async fn exercise_everything(client: McpClient) {
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "get-sum"), "{tools:?}");
    let sum = client
        .call_tool("get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(sum.content[0].as_text().unwrap().contains('5'), "{sum:?}");
    let steps = Arc::new(Mutex::new(Vec::new()));
    let record = steps.clone();
    let long = client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 0.3, "steps": 3}),
            move |p| record.lock().unwrap().push(p.progress),
        )
        .await
        .unwrap();
    assert!(
        long.content[0].as_text().unwrap().contains("completed"),
        "{long:?}"
    );
    assert_eq!(*steps.lock().unwrap(), [1.0, 2.0, 3.0]);
    let sampled = client
        .call_tool("trigger-sampling-request", json!({"prompt": "hello"}))
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&sampled).unwrap().contains("from rpcwire"),
        "{sampled:?}"
    );
    assert!(!client.list_resources().await.unwrap().is_empty());
    assert!(!client.list_prompts().await.unwrap().is_empty());
    client.close().await;
}

fn sampling_client() -> rpcwire::mcp::McpClientBuilder {
    McpClient::builder("t", "1").on_sampling(|_| async {
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": "from rpcwire"}, "model": "m"}))
    })
}

#[tokio::test]
async fn the_official_everything_server_over_stdio() {
    let Some(modules) = mcp_peers::node_modules() else {
        return;
    };
    let node = mcp_peers::node(&modules);
    let entry = everything(&modules);
    let client = sampling_client()
        .connect_stdio(node.to_str().unwrap(), &[entry.as_str(), "stdio"])
        .await
        .unwrap();
    exercise_everything(client).await;
}

#[tokio::test]
async fn the_official_everything_server_over_streamable_http() {
    let Some(modules) = mcp_peers::node_modules() else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    /// server-everything, killed and reaped when the test ends (passed or not).
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _guard = Kill(
        std::process::Command::new(mcp_peers::node(&modules))
            .args([everything(&modules).as_str(), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = loop {
        match sampling_client().connect_http(url.parse().unwrap()).await {
            Ok(client) => break client,
            Err(error) if Instant::now() < deadline => {
                let _ = error;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => panic!("connect to server-everything: {error}"),
        }
    };
    exercise_everything(client).await;
}

#[tokio::test]
async fn an_expired_http_session_fails_the_next_call_and_a_bad_url_fails_to_connect() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let service = rpcwire::mcp::http::StreamableHttpService::with_sessions(
        server(Arc::default()),
        4,
        Duration::from_millis(1),
    );
    let sweeper = service.clone();
    tokio::spawn(service.serve(listener));
    let url: http::Uri = format!("http://{address}/mcp").parse().unwrap();
    let client = McpClient::builder("t", "1")
        .connect_http(url.clone())
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap()
            .content[0]
            .as_text(),
        Some("2")
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(sweeper.sweep(), 1, "the idle session ended");
    let gone = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap_err();
    assert!(gone.to_string().contains("404"), "{gone}");
    // Until an initialize starts another session, a call fails here: it is not sent without
    // a session (which a server refuses with 400).
    let ended = client.ping().await.unwrap_err();
    assert!(ended.to_string().contains("the session has ended"), "{ended}");
    // The client starts over with a new session.
    let again = McpClient::builder("t", "1").connect_http(url).await.unwrap();
    again.ping().await.unwrap();
    again.close().await;
    let refused = McpClient::builder("t", "1")
        .connect_http("https://127.0.0.1:1/mcp".parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(refused, ConnectError::Initialize(_)), "{refused}");
    let nobody = McpClient::builder("t", "1")
        .connect_http("http://127.0.0.1:1/mcp".parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(nobody, ConnectError::Initialize(_)), "{nobody}");
}
