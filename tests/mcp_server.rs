//! `McpServer` over a byte stream (what `serve_stdio` serves on stdin and stdout): the
//! lifecycle and its revisions, tools, resources, prompts, completion, logging, progress,
//! cancellation, requests to the client, limits, and bad input — each written as a client
//! writes it, one NDJSON line at a time.
#![cfg(feature = "mcp")]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rpcwire::frame::Framing;
use rpcwire::mcp::{
    CallToolResult, Completion, GetPromptResult, LogLevel, McpContext, McpServer, Prompt, PromptMessage,
    ProtocolVersion, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool,
};
use rpcwire::transport::StreamTransport;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

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

const RAW_SCHEMA: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}},"additionalProperties":false}"##;

fn server(cancelled: Arc<AtomicU64>) -> McpServer {
    McpServer::new("test-server", "9.9.9")
        .with_instructions("be nice")
        .tool("add", "Adds", |args: Add, _| async move {
            Ok(CallToolResult::text((args.a + args.b).to_string()))
        })
        .tool("sleep", "Sleeps", move |args: Sleep, cx: McpContext| {
            let cancelled = cancelled.clone();
            async move {
                struct Count(Arc<AtomicU64>, bool);
                impl Drop for Count {
                    fn drop(&mut self) {
                        if !self.1 {
                            self.0.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
                let mut count = Count(cancelled, false);
                tokio::time::sleep(Duration::from_millis(args.ms)).await;
                count.1 = true;
                assert!(!cx.is_cancelled());
                Ok(CallToolResult::text(format!("slept {}", args.ms)))
            }
        })
        .tool(
            "steps",
            "Reports progress",
            |_: Nothing, cx: McpContext| async move {
                for step in 1..=3 {
                    cx.progress(f64::from(step), Some(3.0), Some("step"))
                        .await
                        .map_err(|e| e.to_error_object())?;
                }
                Ok(CallToolResult::text(format!(
                    "token {}",
                    cx.progress_token().unwrap_or("none")
                )))
            },
        )
        .tool(
            "shout",
            "Logs at every level",
            |_: Nothing, cx: McpContext| async move {
                for level in LogLevel::ALL {
                    cx.log(level, Some("test"), json!({"level": level}))
                        .await
                        .map_err(|e| e.to_error_object())?;
                }
                Ok(CallToolResult::text("shouted"))
            },
        )
        .tool(
            "ask",
            "Asks the client's model",
            |_: Nothing, cx: McpContext| async move {
                let answer = cx
                    .create_message(&json!({"messages": [], "maxTokens": 5}))
                    .await
                    .map_err(|e| e.to_error_object())?;
                let roots = cx.list_roots().await.map_err(|e| e.to_error_object())?;
                let form = cx
                    .elicit("name?", &json!({"type": "object"}))
                    .await
                    .map_err(|e| e.to_error_object())?;
                Ok(CallToolResult::text(format!(
                    "{} {} {}",
                    answer["content"]["text"], roots["roots"][0]["uri"], form["action"]
                )))
            },
        )
        .tool(
            "touch",
            "Tells subscribers",
            |_: Nothing, cx: McpContext| async move {
                let sent = cx
                    .resource_updated("mem://hello")
                    .await
                    .map_err(|e| e.to_error_object())?;
                Ok(CallToolResult::text(format!(
                    "sent {sent}, stream closed {}",
                    cx.close_stream()
                )))
            },
        )
        .raw_tool(
            Tool::new("raw", "Raw schema", RAW_SCHEMA).unwrap(),
            |args, _| async move {
                Ok(CallToolResult::text(
                    args.map_or_else(|| "none".to_owned(), |a| a.get().to_owned()),
                ))
            },
        )
        .resource(
            Resource::new("mem://hello", "hello").with_mime_type("text/plain"),
            |_| async {
                Ok(ReadResourceResult::one(ResourceContents::text(
                    "mem://hello",
                    "text/plain",
                    "hello",
                )))
            },
        )
        .resource_template(
            ResourceTemplate::new("user://{id}/name", "users"),
            |uri, vars, _| async move {
                Ok(ReadResourceResult::one(ResourceContents::text(
                    uri,
                    "text/plain",
                    format!("user {}", vars[0].1),
                )))
            },
        )
        .prompt(
            Prompt::new("greet", "Greets").with_argument("name", "Who", true),
            |args, _| async move {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                    "Hello, {}!",
                    args["name"]
                ))]))
            },
        )
        .completion(|request, _| async move {
            Ok(Completion::of(vec![format!("{}-done", request.argument.value)]))
        })
}

/// A client on one end of a pipe, the server on the other.
struct Client {
    lines: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    served: tokio::task::JoinHandle<rpcwire::transport::CloseReason>,
}

impl Client {
    fn start(server: McpServer) -> Client {
        Client::start_with(server, 1 << 20)
    }

    fn start_with(server: McpServer, max_frame: usize) -> Client {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let transport = StreamTransport::from_io(ours, Framing::Ndjson).with_max_frame(max_frame);
        let served = tokio::spawn(server.serve(transport));
        let (read, write) = tokio::io::split(theirs);
        Client {
            lines: BufReader::new(read).lines(),
            write,
            served,
        }
    }

    async fn send(&mut self, message: &str) {
        self.write.write_all(message.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    async fn next_text(&mut self) -> String {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        line
    }

    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&request.to_string()).await;
        self.next().await
    }

    async fn initialize(&mut self, version: &str) -> Value {
        let params = json!({"protocolVersion": version, "capabilities": {"sampling": {}}, "clientInfo": {"name": "t", "version": "1"}});
        let answer = self.call(0, "initialize", params).await;
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        answer
    }
}

fn counter() -> Arc<AtomicU64> {
    Arc::new(AtomicU64::new(0))
}

#[tokio::test]
async fn initialize_agrees_on_the_revision_asked_for_or_the_newest() {
    let mut client = Client::start(server(counter()));
    let answer = client.initialize("2025-06-18").await;
    let result = &answer["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(
        result["serverInfo"],
        json!({"name": "test-server", "version": "9.9.9"})
    );
    assert_eq!(result["instructions"], "be nice");
    let capabilities = &result["capabilities"];
    for capability in ["tools", "resources", "prompts", "logging", "completions"] {
        assert!(capabilities.get(capability).is_some(), "{capability}: {answer}");
    }
    let again = client.initialize("2099-01-01").await;
    assert_eq!(again["result"]["protocolVersion"], "2025-11-25", "{again}");
}

#[tokio::test]
async fn discover_is_answered_before_any_initialize_with_every_enabled_revision() {
    let server =
        server(counter()).with_versions(&[ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25]);
    let mut client = Client::start(server);
    let answer = client.call(1, "server/discover", json!({})).await;
    assert_eq!(
        answer["result"]["supportedVersions"],
        json!(["2025-06-18", "2025-11-25"]),
        "{answer}"
    );
    assert_eq!(answer["result"]["serverInfo"]["name"], "test-server");
    let old = client.initialize("2024-11-05").await;
    assert_eq!(
        old["result"]["protocolVersion"], "2025-11-25",
        "not enabled: the newest enabled one"
    );
    let only_stateless = McpServer::new("s", "1").with_versions(&[ProtocolVersion::V2026_07_28]);
    let mut client = Client::start(only_stateless);
    let refused = client.initialize("2025-11-25").await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[tokio::test]
async fn ping_and_set_level_answer_exactly_an_empty_object() {
    let mut client = Client::start(server(counter()));
    client.initialize("2025-11-25").await;
    client.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#).await;
    assert_eq!(
        client.next_text().await,
        r#"{"jsonrpc":"2.0","id":"p","result":{}}"#
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}"#)
        .await;
    assert_eq!(
        client.next_text().await,
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#
    );
    let bad = client.call(3, "logging/setLevel", json!({"level": "loud"})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[tokio::test]
async fn tools_are_listed_with_their_schemas_and_pages() {
    let mut client = Client::start(server(counter()).with_page_size(4));
    client.initialize("2025-11-25").await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let first = client.next_text().await;
    let page: Value = serde_json::from_str(&first).unwrap();
    let tools = page["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4);
    assert_eq!(tools[0]["name"], "add");
    assert_eq!(tools[0]["inputSchema"]["type"], "object");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(
        tools[2]["inputSchema"]["type"], "object",
        "no arguments: still an object schema"
    );
    let cursor = page["result"]["nextCursor"]
        .as_str()
        .expect("more pages")
        .to_owned();
    let second = client.call(2, "tools/list", json!({"cursor": cursor})).await;
    let rest = second["result"]["tools"].as_array().unwrap();
    assert_eq!(rest.len(), 3);
    assert!(second["result"].get("nextCursor").is_none(), "the last page");
    // The raw schema comes back byte for byte in the answer's text.
    client
        .send(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": cursor}})
                .to_string(),
        )
        .await;
    let text = client.next_text().await;
    assert!(text.contains(&format!(r#""inputSchema":{RAW_SCHEMA}"#)), "{text}");
    for bad in ["x", "0", "99", "04", ""] {
        let refused = client.call(4, "tools/list", json!({"cursor": bad})).await;
        assert_eq!(refused["error"]["code"], -32602, "cursor {bad:?}: {refused}");
    }
}

#[tokio::test]
async fn tool_calls_answer_results_failed_calls_and_unknown_tools() {
    let mut client = Client::start(server(counter()));
    client.initialize("2025-11-25").await;
    let sum = client
        .call(
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 5, "b": 3}}),
        )
        .await;
    assert_eq!(
        sum["result"],
        json!({"content": [{"type": "text", "text": "8"}]}),
        "{sum}"
    );
    let bad = client
        .call(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": "five"}}),
        )
        .await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        bad["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("invalid arguments"),
        "{bad}"
    );
    let missing = client.call(3, "tools/call", json!({"name": "add"})).await;
    assert_eq!(
        missing["result"]["isError"], true,
        "no arguments at all: {missing}"
    );
    let unknown = client.call(4, "tools/call", json!({"name": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let raw = client
        .call(5, "tools/call", json!({"name": "raw", "arguments": {"x": "y"}}))
        .await;
    assert_eq!(raw["result"]["content"][0]["text"], r#"{"x":"y"}"#);
    let no_name = client.call(6, "tools/call", json!({})).await;
    assert_eq!(no_name["error"]["code"], -32602, "{no_name}");
    let unknown_method = client.call(7, "tools/nope", json!({})).await;
    assert_eq!(unknown_method["error"]["code"], -32601, "{unknown_method}");
}

#[tokio::test]
async fn progress_notifications_come_before_the_result_with_the_token_as_sent() {
    let mut client = Client::start(server(counter()));
    client.initialize("2025-11-25").await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"tok-1"}}}"#)
        .await;
    for step in 1..=3 {
        let note = client.next().await;
        assert_eq!(note["method"], "notifications/progress", "{note}");
        assert_eq!(
            note["params"],
            json!({"progressToken": "tok-1", "progress": f64::from(step), "total": 3.0, "message": "step"})
        );
    }
    let done = client.next().await;
    assert_eq!(done["result"]["content"][0]["text"], r#"token "tok-1""#);
    // Without a token: no notifications, just the result.
    let plain = client.call(2, "tools/call", json!({"name": "steps"})).await;
    assert_eq!(plain["result"]["content"][0]["text"], "token none");
}

#[tokio::test]
async fn log_messages_pass_the_level_the_client_set() {
    let mut client = Client::start(server(counter()));
    client.initialize("2025-11-25").await;
    client
        .call(1, "logging/setLevel", json!({"level": "error"}))
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout"}}"#)
        .await;
    let mut levels = Vec::new();
    loop {
        let message = client.next().await;
        if message.get("id").is_some() {
            assert_eq!(message["result"]["content"][0]["text"], "shouted");
            break;
        }
        assert_eq!(message["method"], "notifications/message");
        assert_eq!(message["params"]["logger"], "test");
        levels.push(message["params"]["level"].as_str().unwrap().to_owned());
    }
    assert_eq!(levels, ["error", "critical", "alert", "emergency"]);
}

#[tokio::test]
async fn a_cancelled_call_gets_no_answer_and_its_handler_is_dropped() {
    let cancelled = counter();
    let mut client = Client::start(server(cancelled.clone()));
    client.initialize("2025-11-25").await;
    client.send(r#"{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}"#).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"user"}}"#)
        .await;
    // The next answer is the ping's: nothing for the cancelled call.
    let pong = client.call(9, "ping", json!({})).await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(cancelled.load(Ordering::SeqCst), 1, "the handler was dropped");
    let short = client
        .call(10, "tools/call", json!({"name": "sleep", "arguments": {"ms": 1}}))
        .await;
    assert_eq!(short["result"]["content"][0]["text"], "slept 1");
}

#[tokio::test]
async fn a_handler_past_its_timeout_is_answered_with_an_error() {
    let cancelled = counter();
    let server = server(cancelled.clone()).with_handler_timeout(Duration::from_millis(50));
    let mut client = Client::start(server);
    client.initialize("2025-11-25").await;
    let late = client
        .call(
            1,
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 60000}}),
        )
        .await;
    assert_eq!(late["error"]["code"], -32603, "{late}");
    assert_eq!(cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn requests_to_the_client_go_out_and_their_answers_come_back_to_the_tool() {
    let mut client = Client::start(server(counter()));
    client.initialize("2025-11-25").await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    for (method, result) in [
        (
            "sampling/createMessage",
            json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}),
        ),
        ("roots/list", json!({"roots": [{"uri": "file:///src"}]})),
        ("elicitation/create", json!({"action": "accept", "content": {}})),
    ] {
        let request = client.next().await;
        assert_eq!(request["method"], method, "{request}");
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        client.send(&answer.to_string()).await;
    }
    let done = client.next().await;
    assert_eq!(
        done["result"]["content"][0]["text"], r#""hi" "file:///src" "accept""#,
        "{done}"
    );
    // An error answer from the client becomes the tool's error.
    client
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let request = client.next().await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "user rejected"}}).to_string())
        .await;
    let failed = client.next().await;
    assert_eq!(failed["error"]["code"], -1, "{failed}");
}

#[tokio::test]
async fn resources_templates_and_subscriptions() {
    let mut client = Client::start(server(counter()));
    client.initialize("2025-11-25").await;
    let list = client.call(1, "resources/list", json!({})).await;
    assert_eq!(
        list["result"]["resources"],
        json!([{"uri": "mem://hello", "name": "hello", "mimeType": "text/plain"}])
    );
    let templates = client.call(2, "resources/templates/list", json!({})).await;
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "user://{id}/name"
    );
    let read = client
        .call(3, "resources/read", json!({"uri": "mem://hello"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "hello");
    let user = client
        .call(4, "resources/read", json!({"uri": "user://42/name"}))
        .await;
    assert_eq!(
        user["result"]["contents"][0],
        json!({"uri": "user://42/name", "mimeType": "text/plain", "text": "user 42"})
    );
    let missing = client
        .call(5, "resources/read", json!({"uri": "mem://nothing"}))
        .await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    assert_eq!(missing["error"]["data"]["uri"], "mem://nothing");
    // Not subscribed: nothing sent.
    let quiet = client.call(6, "tools/call", json!({"name": "touch"})).await;
    assert_eq!(
        quiet["result"]["content"][0]["text"],
        "sent false, stream closed false"
    );
    assert_eq!(
        client
            .call(7, "resources/subscribe", json!({"uri": "mem://hello"}))
            .await["result"],
        json!({})
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"touch"}}"#)
        .await;
    let updated = client.next().await;
    assert_eq!(
        updated,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "mem://hello"}})
    );
    assert_eq!(
        client.next().await["result"]["content"][0]["text"],
        "sent true, stream closed false"
    );
    assert_eq!(
        client
            .call(9, "resources/unsubscribe", json!({"uri": "mem://hello"}))
            .await["result"],
        json!({})
    );
    let again = client.call(10, "tools/call", json!({"name": "touch"})).await;
    assert_eq!(
        again["result"]["content"][0]["text"],
        "sent false, stream closed false"
    );
}

#[tokio::test]
async fn prompts_check_their_required_arguments_and_completion_answers() {
    let mut client = Client::start(server(counter()));
    client.initialize("2025-11-25").await;
    let list = client.call(1, "prompts/list", json!({})).await;
    assert_eq!(list["result"]["prompts"][0]["arguments"][0]["required"], true);
    let got = client
        .call(
            2,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        got["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}])
    );
    let missing = client.call(3, "prompts/get", json!({"name": "greet"})).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let unknown = client.call(4, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let completion = client
        .call(5, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}}))
        .await;
    assert_eq!(
        completion["result"],
        json!({"completion": {"values": ["A-done"]}})
    );
    // A server without a completion handler offers nothing, and says so in its capabilities.
    let mut bare = Client::start(McpServer::new("bare", "1"));
    let init = bare.initialize("2025-11-25").await;
    assert!(
        init["result"]["capabilities"].get("completions").is_none(),
        "{init}"
    );
    assert!(init["result"]["capabilities"].get("tools").is_none(), "{init}");
    let none = bare
        .call(
            1,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
        )
        .await;
    assert_eq!(none["result"], json!({"completion": {"values": []}}));
}

#[tokio::test]
async fn batches_are_served_only_in_the_revision_that_has_them() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let mut client = Client::start(server(counter()));
    client.send(batch).await;
    let before = client.next().await;
    assert_eq!(before["error"]["code"], -32600, "before initialize: {before}");
    client.initialize("2025-06-18").await;
    client.send(batch).await;
    let refused = client.next().await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], Value::Null);
    client.initialize("2025-03-26").await;
    client.send(batch).await;
    let served = client.next().await;
    assert_eq!(served.as_array().map(Vec::len), Some(2), "{served}");
}

#[tokio::test]
async fn bad_input_is_answered_and_the_session_goes_on() {
    let mut client = Client::start_with(server(counter()), 256);
    client.initialize("2025-11-25").await;
    client.send("{not json").await;
    let parse = client.next().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"text"}"#)
        .await;
    let params = client.next().await;
    assert_eq!(
        params["error"]["code"], -32600,
        "params that are not structured: {params}"
    );
    assert_eq!(params["id"], 1);
    client
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}"#)
        .await;
    let invalid = client.next().await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(1000)
    );
    client.send(&long).await;
    let too_long = client.next().await;
    assert_eq!(
        too_long["error"]["code"], -32600,
        "a line over the limit: {too_long}"
    );
    let pong = client.call(3, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    client.write.shutdown().await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(5), client.served)
        .await
        .unwrap()
        .unwrap();
    assert!(
        !reason.is_error(),
        "the end of input ends the session: {reason:?}"
    );
}

#[tokio::test]
async fn calls_past_the_in_flight_limit_are_refused_at_once() {
    let mut client = Client::start(server(counter()).with_max_in_flight(1));
    client.initialize("2025-11-25").await;
    for id in 1..=6 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 300}}});
        client.send(&call.to_string()).await;
    }
    let mut refused = 0;
    let mut slept = 0;
    for _ in 1..=6 {
        let answer = client.next().await;
        if answer.get("error").is_some() {
            refused += 1;
        } else {
            assert_eq!(answer["result"]["content"][0]["text"], "slept 300");
            slept += 1;
        }
    }
    assert!(refused >= 1 && slept >= 1, "refused {refused}, slept {slept}");
}
