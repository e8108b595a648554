//! An MCP server (`mcp` feature; `http` too for Streamable HTTP): over stdio by default, or
//! over Streamable HTTP at `/mcp` with `--http ADDRESS`.
//!
//! ```sh
//! cargo run --release --features mcp,http --example mcp_server               # stdio
//! cargo run --release --features mcp,http --example mcp_server -- --http 127.0.0.1:8000
//! cargo run --release --features mcp,http --example mcp_server -- --http 127.0.0.1:8443 \
//!     --tls-cert cert.pem --tls-key key.pem                                    # HTTPS
//! ```
//!
//! It serves two sets:
//! - what the official conformance suite's server scenarios call: the `test_*` tools,
//!   the `test://` resources and template, the `test_*` prompts, completion;
//! - a small demo set: tools `add`, `sleep`, `progress`, `log`, `sample`, `stats`; the
//!   resource `mem://hello`; the prompt `greet`.
//!
//! With `--http` it prints `listening on http://ADDRESS/mcp` once it accepts connections
//! (with port 0 the one the system chose; `https://` with `--tls-cert` and `--tls-key`, whose
//! files are read again when they change). Over stdio nothing but JSON-RPC is written to
//! stdout, and it exits when stdin closes.
//!
//! With `--auth-issuer URL` (`auth` feature) it serves as an OAuth protected resource: the
//! issuer's JWKS found through its metadata, tokens for `--auth-audience` (default its own
//! `/mcp` URL), `--auth-scope TOOL=SCOPE` the scope a tool needs (`*=SCOPE`: every request).
//! The demo tool `whoami` answers with the token's subject and scopes.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rpcwire::mcp::{
    CallToolResult, Completion, Content, GetPromptResult, InputRequired, ListChanged, LogLevel, McpContext,
    McpServer, Prompt, PromptMessage, ProtocolVersion, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, Role, Tool,
};
use rpcwire::ErrorObject;
use serde::Deserialize;
use serde_json::{json, Value};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/protect.rs"]
mod protect;

use protect::{ProtectOptions, PROTECT_USAGE};

const USAGE: &str = "usage: mcp_server [--http ADDRESS [--tls-cert PEM --tls-key PEM] [AUTH…]]";

/// A 1×1 PNG and a tiny WAV (the conformance suite's test media).
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// A tool without arguments.
#[derive(Deserialize, schemars::JsonSchema)]
struct Nothing {}

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Sleep {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Log {
    level: LogLevelName,
    message: String,
}

/// `LogLevel` with a schema.
#[derive(Deserialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum LogLevelName {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl From<LogLevelName> for LogLevel {
    fn from(level: LogLevelName) -> LogLevel {
        LogLevel::ALL[level as usize]
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct PromptText {
    prompt: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Message {
    message: String,
}

/// What the `sleep` tool has done.
#[derive(Default)]
struct SleepStats {
    started: AtomicU64,
    completed: AtomicU64,
    cancelled: AtomicU64,
}

/// Counts a sleep as cancelled unless it completed.
struct SleepGuard(Arc<SleepStats>, bool);

impl Drop for SleepGuard {
    fn drop(&mut self) {
        let counter = if self.1 {
            &self.0.completed
        } else {
            &self.0.cancelled
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

fn failed(error: rpcwire::dispatch::RemoteError) -> ErrorObject<'static> {
    error.to_error_object()
}

fn conformance_tools(server: McpServer) -> McpServer {
    server
        .tool("test_simple_text", "Returns simple text content", |_: Nothing, _| async {
            Ok(CallToolResult::text("This is a simple text response for testing."))
        })
        .tool("test_image_content", "Returns image content", |_: Nothing, _| async {
            Ok(CallToolResult::content(vec![Content::image(PNG, "image/png")]))
        })
        .tool("test_audio_content", "Returns audio content", |_: Nothing, _| async {
            Ok(CallToolResult::content(vec![Content::audio(WAV, "audio/wav")]))
        })
        .tool("test_embedded_resource", "Returns an embedded resource", |_: Nothing, _| async {
            Ok(CallToolResult::content(vec![Content::resource(ResourceContents::text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            ))]))
        })
        .tool("test_multiple_content_types", "Returns text, an image and a resource", |_: Nothing, _| async {
            Ok(CallToolResult::content(vec![
                Content::text("Multiple content types test:"),
                Content::image(PNG, "image/png"),
                Content::resource(ResourceContents::text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                )),
            ]))
        })
        .tool("test_tool_with_logging", "Logs while it runs", |_: Nothing, cx: McpContext| async move {
            for (n, message) in ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate() {
                if n > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                cx.log(LogLevel::Info, Some("conformance"), message).await.map_err(failed)?;
            }
            Ok(CallToolResult::text("Tool with logging executed successfully"))
        })
        .tool("test_tool_with_progress", "Reports progress while it runs", |_: Nothing, cx: McpContext| async move {
            for (n, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if n > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                cx.progress(progress, Some(100.0), None).await.map_err(failed)?;
            }
            Ok(CallToolResult::text("Tool with progress executed successfully"))
        })
        .tool("test_error_handling", "Always fails", |_: Nothing, _| async {
            Ok(CallToolResult::error("This tool intentionally returns an error for testing"))
        })
        .tool("test_sampling", "Asks the client's model", |args: PromptText, cx: McpContext| async move {
            let params = serde_json::json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": args.prompt}}],
                "maxTokens": 100,
            });
            let result = cx.create_message(&params).await.map_err(failed)?;
            let text = result["content"]["text"].as_str().unwrap_or_default().to_owned();
            Ok(CallToolResult::text(format!("LLM response: {text}")))
        })
        .tool("test_elicitation", "Asks the user", |args: Message, cx: McpContext| async move {
            let schema = serde_json::json!({
                "type": "object",
                "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
                "required": ["username", "email"],
            });
            let result = cx.elicit(&args.message, &schema).await.map_err(failed)?;
            Ok(CallToolResult::text(format!(
                "User response: action={}, content={}",
                result["action"].as_str().unwrap_or_default(),
                result["content"]
            )))
        })
        .tool("test_elicitation_sep1034_defaults", "Asks with defaults (SEP-1034)", |_: Nothing, cx: McpContext| async move {
            let schema = serde_json::json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "default": true},
                },
                "required": [],
            });
            let result = cx.elicit("Please review and update the form fields with defaults", &schema).await.map_err(failed)?;
            Ok(CallToolResult::text(format!("Elicitation completed: action={}, content={}", result["action"].as_str().unwrap_or_default(), result["content"])))
        })
        .tool("test_elicitation_sep1330_enums", "Asks with enums (SEP-1330)", |_: Nothing, cx: McpContext| async move {
            let schema = serde_json::json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ]},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]}},
                },
                "required": [],
            });
            let result = cx.elicit("Please select options from the enum fields", &schema).await.map_err(failed)?;
            Ok(CallToolResult::text(format!("Elicitation completed: action={}, content={}", result["action"].as_str().unwrap_or_default(), result["content"])))
        })
        .tool("test_reconnection", "Closes its SSE stream mid-call; the result comes on the resumed stream (SEP-1699)", |_: Nothing, cx: McpContext| async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cx.close_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(CallToolResult::text("Reconnection test completed successfully"))
        })
        .raw_tool(
            Tool::new(
                "json_schema_2020_12_tool",
                "A tool whose input schema uses JSON Schema 2020-12 features",
                r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}"##,
            )
            .expect("a JSON schema"),
            |arguments, _| async move {
                Ok(CallToolResult::text(format!("received {}", arguments.as_deref().map_or("{}", |a| a.get()))))
            },
        )
}

/// The content of an accepted elicitation answer under `key`, if the client sent one.
fn accepted<'a>(cx: &'a McpContext, key: &str) -> Option<&'a Value> {
    let answer = cx.input_response(key)?;
    (answer["action"] == "accept").then(|| &answer["content"])
}

fn ask_name(needed: InputRequired) -> InputRequired {
    needed.elicit(
        "user_name",
        "What is your name?",
        &json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    )
}

fn ask_greeting(needed: InputRequired) -> InputRequired {
    needed.sample(
        "greeting",
        &json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}], "maxTokens": 50}),
    )
}

fn ask_confirmation(needed: InputRequired) -> InputRequired {
    needed.elicit(
        "confirm",
        "Please confirm",
        &json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    )
}

/// The conformance suite's fixtures of the stateless revision (2026-07-28): input-required
/// results, capability checks, per-request logging, change notifications, header-mirrored
/// arguments.
fn conformance_2026_tools(server: McpServer) -> McpServer {
    server
        .raw_tool(
            Tool::new(
                "test_custom_header",
                "Returns its value, which clients also send in the Mcp-Param-Value header",
                r#"{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Value"}},"required":["value"]}"#,
            )
            .expect("a JSON schema"),
            |arguments, _| async move {
                #[derive(Deserialize)]
                struct Value {
                    value: String,
                }
                let text = arguments
                    .and_then(|arguments| serde_json::from_str::<Value>(arguments.get()).ok())
                    .map_or_else(String::new, |arguments| arguments.value);
                Ok(CallToolResult::text(text))
            },
        )
        .tool("test_missing_capability", "Needs the client's sampling capability", |_: Nothing, cx: McpContext| async move {
            cx.require_capability("sampling")?;
            Ok(CallToolResult::text("the client can sample"))
        })
        .tool("test_streaming_elicitation", "Asks the user for a value", |_: Nothing, cx: McpContext| async move {
            match accepted(&cx, "streaming_elicitation") {
                Some(content) => Ok(CallToolResult::text(format!("received {}", content["value"]))),
                None => Err(cx.input_required(InputRequired::new().elicit(
                    "streaming_elicitation",
                    "Provide a value",
                    &json!({"type": "object", "properties": {"value": {"type": "string"}}}),
                ))),
            }
        })
        .tool("test_logging_tool", "Logs when the request asks for a log level", |_: Nothing, cx: McpContext| async move {
            cx.log(LogLevel::Info, Some("conformance"), "logLevel was requested").await.map_err(failed)?;
            Ok(CallToolResult::text("logging tool done"))
        })
        .tool("test_trigger_tool_change", "Tells listeners that the tool list changed", |_: Nothing, cx: McpContext| async move {
            let listeners = cx.list_changed(ListChanged::Tools);
            Ok(CallToolResult::text(format!("told {listeners} listeners")))
        })
        .tool("test_trigger_prompt_change", "Tells listeners that the prompt list changed", |_: Nothing, cx: McpContext| async move {
            let listeners = cx.list_changed(ListChanged::Prompts);
            Ok(CallToolResult::text(format!("told {listeners} listeners")))
        })
        .tool("test_input_required_result_elicitation", "Asks the user's name", |_: Nothing, cx: McpContext| async move {
            match accepted(&cx, "user_name").and_then(|content| content["name"].as_str()) {
                Some(name) => Ok(CallToolResult::text(format!("Hello, {name}!"))),
                None => Err(cx.input_required(ask_name(InputRequired::new()))),
            }
        })
        .tool("test_input_required_result_sampling", "Asks the client's model", |_: Nothing, cx: McpContext| async move {
            match cx.input_response("capital_question") {
                Some(answer) => Ok(CallToolResult::text(format!("The model said: {}", answer["content"]["text"]))),
                None => Err(cx.input_required(InputRequired::new().sample(
                    "capital_question",
                    &json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}], "maxTokens": 100}),
                ))),
            }
        })
        .tool("test_input_required_result_list_roots", "Asks the client's roots", |_: Nothing, cx: McpContext| async move {
            match cx.input_response("client_roots") {
                Some(answer) => Ok(CallToolResult::text(format!("roots: {}", answer["roots"]))),
                None => Err(cx.input_required(InputRequired::new().list_roots("client_roots"))),
            }
        })
        .tool("test_input_required_result_request_state", "Keeps a state across its rounds", |_: Nothing, cx: McpContext| async move {
            match (cx.request_state(), accepted(&cx, "confirm")) {
                (Some("awaiting-confirmation"), Some(content)) => Ok(CallToolResult::text(format!("state-ok, confirmed: {}", content["ok"]))),
                _ => Err(cx.input_required(ask_confirmation(InputRequired::new()).with_state("awaiting-confirmation"))),
            }
        })
        .tool("test_input_required_result_multiple_inputs", "Asks for three inputs at once", |_: Nothing, cx: McpContext| async move {
            let name = accepted(&cx, "user_name").and_then(|content| content["name"].as_str());
            match (cx.request_state(), name, cx.input_response("greeting"), cx.input_response("client_roots")) {
                (Some("three-inputs"), Some(name), Some(greeting), Some(_)) => {
                    Ok(CallToolResult::text(format!("{name}: {}", greeting["content"]["text"])))
                }
                _ => Err(cx.input_required(
                    ask_greeting(ask_name(InputRequired::new())).list_roots("client_roots").with_state("three-inputs"),
                )),
            }
        })
        .tool("test_input_required_result_multi_round", "Asks in two rounds", |_: Nothing, cx: McpContext| async move {
            let state = cx.request_state().unwrap_or_default();
            if let (Some(name), Some(color)) = (state.strip_prefix("round-2:"), accepted(&cx, "step2").and_then(|c| c["color"].as_str())) {
                return Ok(CallToolResult::text(format!("{name} likes {color}")));
            }
            if let (true, Some(name)) = (state == "round-1", accepted(&cx, "step1").and_then(|c| c["name"].as_str())) {
                let needed = InputRequired::new()
                    .elicit("step2", "What is your favourite colour?", &json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}))
                    .with_state(format!("round-2:{name}"));
                return Err(cx.input_required(needed));
            }
            let needed = InputRequired::new()
                .elicit("step1", "What is your name?", &json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
                .with_state("round-1");
            Err(cx.input_required(needed))
        })
        .tool("test_input_required_result_tampered_state", "Rejects a state that was altered", |_: Nothing, cx: McpContext| async move {
            match (cx.request_state(), accepted(&cx, "confirm")) {
                (Some("sealed"), Some(_)) => Ok(CallToolResult::text("the state came back unaltered")),
                _ => Err(cx.input_required(ask_confirmation(InputRequired::new()).with_state("sealed"))),
            }
        })
        .tool("test_input_required_result_capabilities", "Asks only what the client declared it can answer", |_: Nothing, cx: McpContext| async move {
            let capabilities = cx.client_capabilities();
            let mut needed = InputRequired::new();
            let mut answered = true;
            if capabilities.get("sampling").is_some() {
                needed = ask_greeting(needed);
                answered &= cx.input_response("greeting").is_some();
            }
            if capabilities.get("elicitation").is_some() {
                needed = ask_name(needed);
                answered &= cx.input_response("user_name").is_some();
            }
            if capabilities.get("roots").is_some() {
                needed = needed.list_roots("client_roots");
                answered &= cx.input_response("client_roots").is_some();
            }
            if needed.is_empty() {
                return Ok(CallToolResult::text("the client declared nothing to ask"));
            }
            if answered {
                return Ok(CallToolResult::text(format!("{} inputs received", needed.len())));
            }
            Err(cx.input_required(needed))
        })
}

fn conformance_resources(server: McpServer) -> McpServer {
    server
        .resource(
            Resource::new("test://static-text", "Static Text Resource").with_mime_type("text/plain"),
            |_| async {
                Ok(ReadResourceResult::one(ResourceContents::text(
                    "test://static-text",
                    "text/plain",
                    "This is the content of the static text resource.",
                )))
            },
        )
        .resource(
            Resource::new("test://static-binary", "Static Binary Resource").with_mime_type("image/png"),
            |_| async {
                Ok(ReadResourceResult::one(ResourceContents::blob(
                    "test://static-binary",
                    "image/png",
                    PNG,
                )))
            },
        )
        .resource(
            Resource::new("test://watched-resource", "Watched Resource").with_mime_type("text/plain"),
            |_| async {
                Ok(ReadResourceResult::one(ResourceContents::text(
                    "test://watched-resource",
                    "text/plain",
                    "Watched resource content",
                )))
            },
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "Resource Template")
                .with_mime_type("application/json"),
            |uri, vars, _| async move {
                let id = vars
                    .iter()
                    .find(|(name, _)| name == "id")
                    .map_or("", |(_, value)| value.as_str());
                let text =
                    serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string();
                Ok(ReadResourceResult::one(ResourceContents::text(
                    uri,
                    "application/json",
                    text,
                )))
            },
        )
}

fn conformance_prompts(server: McpServer) -> McpServer {
    server
        .prompt(
            Prompt::new("test_simple_prompt", "A simple prompt"),
            |_, _| async {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                    "This is a simple prompt for testing.",
                )]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_arguments", "A prompt with arguments")
                .with_argument("arg1", "First test argument", true)
                .with_argument("arg2", "Second test argument", true),
            |args, _| async move {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args["arg1"], args["arg2"]
                ))]))
            },
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                "A prompt with an embedded resource",
            )
            .with_argument("resourceUri", "The URI of the resource to embed", true),
            |args, _| async move {
                let resource = ResourceContents::text(
                    args["resourceUri"].clone(),
                    "text/plain",
                    "Embedded resource content for testing.",
                );
                Ok(GetPromptResult::new(vec![
                    PromptMessage {
                        role: Role::User,
                        content: Content::resource(resource),
                    },
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_image", "A prompt with an image"),
            |_, _| async {
                Ok(GetPromptResult::new(vec![
                    PromptMessage {
                        role: Role::User,
                        content: Content::image(PNG, "image/png"),
                    },
                    PromptMessage::user_text("Please analyze the image above."),
                ]))
            },
        )
        .prompt(
            Prompt::new("test_input_required_result_prompt", "A prompt that asks the user for its context first"),
            |_, cx: McpContext| async move {
                match accepted(&cx, "user_context").and_then(|content| content["context"].as_str()) {
                    Some(context) => Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("Use this context: {context}"))])),
                    None => Err(cx.input_required(InputRequired::new().elicit(
                        "user_context",
                        "What context should the prompt use?",
                        &json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
                    ))),
                }
            },
        )
        .completion(|request, _| async move {
            let candidates: &[&str] = match request.argument.name.as_str() {
                "arg1" | "arg2" => &["test", "testValue1", "testValue2"],
                _ => &[],
            };
            let values = candidates
                .iter()
                .filter(|value| value.starts_with(&request.argument.value))
                .map(|value| value.to_string())
                .collect();
            Ok(Completion::of(values))
        })
}

fn demo(server: McpServer) -> McpServer {
    let stats = Arc::new(SleepStats::default());
    let sleeps = stats.clone();
    server
        .tool("add", "Adds two integers", |args: Add, _| async move {
            Ok(CallToolResult::text((args.a.wrapping_add(args.b)).to_string()))
        })
        .tool(
            "sleep",
            "Waits ms milliseconds (stopped by cancellation)",
            move |args: Sleep, _| {
                let stats = sleeps.clone();
                async move {
                    stats.started.fetch_add(1, Ordering::Relaxed);
                    let mut guard = SleepGuard(stats, false);
                    tokio::time::sleep(Duration::from_millis(args.ms)).await;
                    guard.1 = true;
                    Ok(CallToolResult::text(format!("slept {}", args.ms)))
                }
            },
        )
        .tool(
            "progress",
            "Reports steps progress notifications, then says done",
            |args: Steps, cx: McpContext| async move {
                for step in 1..=args.steps {
                    cx.progress(f64::from(step), Some(f64::from(args.steps)), None)
                        .await
                        .map_err(failed)?;
                }
                Ok(CallToolResult::text(format!("done {}", args.steps)))
            },
        )
        .tool(
            "log",
            "Sends a log message at level (logger demo)",
            |args: Log, cx: McpContext| async move {
                cx.log(args.level.into(), Some("demo"), &args.message)
                    .await
                    .map_err(failed)?;
                Ok(CallToolResult::text("logged"))
            },
        )
        .tool(
            "sample",
            "Asks the client's model and returns its text",
            |args: PromptText, cx: McpContext| async move {
                let params = serde_json::json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": args.prompt}}],
                    "maxTokens": 100,
                });
                // The stateless revision asks through an input-required result; the others
                // ask the client mid-call.
                let result = if cx.protocol_version().is_some_and(ProtocolVersion::is_stateless) {
                    match cx.input_response("sample") {
                        Some(answer) => answer.clone(),
                        None => return Err(cx.input_required(InputRequired::new().sample("sample", &params))),
                    }
                } else {
                    cx.create_message(&params).await.map_err(failed)?
                };
                Ok(CallToolResult::text(
                    result["content"]["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .tool(
            "whoami",
            "Who the request's token is for, its scopes, and the client's User-Agent",
            |_: Nothing, cx: McpContext| async move { Ok(CallToolResult::text(whoami(&cx).to_string())) },
        )
        .tool("stats", "What the sleep tool has done", move |_: Nothing, _| {
            let stats = stats.clone();
            async move {
                let text = serde_json::json!({
                    "sleep_started": stats.started.load(Ordering::Relaxed),
                    "sleep_completed": stats.completed.load(Ordering::Relaxed),
                    "sleep_cancelled": stats.cancelled.load(Ordering::Relaxed),
                });
                Ok(CallToolResult::text(text.to_string()))
            }
        })
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
        .prompt(
            Prompt::new("greet", "Greets someone").with_argument("name", "Who to greet", true),
            |args, _| async move {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                    "Hello, {}!",
                    args["name"]
                ))]))
            },
        )
}

fn server() -> McpServer {
    let server = McpServer::new("rpcwire-mcp-server", env!("CARGO_PKG_VERSION"))
        .with_instructions("Conformance and demo tools of rpcwire's MCP server.")
        .with_versions(&ProtocolVersion::ALL);
    demo(conformance_prompts(conformance_resources(
        conformance_2026_tools(conformance_tools(server)),
    )))
}

/// What `whoami` answers: the verified token's subject and scopes (`auth`), and the HTTP
/// request's `User-Agent` (`http`).
fn whoami(cx: &McpContext) -> Value {
    let mut answer = json!({"subject": null, "scopes": [], "user_agent": null});
    #[cfg(feature = "auth")]
    if let Some(claims) = cx.claims() {
        answer["subject"] = json!(claims.subject);
        answer["scopes"] = json!(claims.scopes);
    }
    #[cfg(feature = "http")]
    if let Some(agent) = cx.http_headers().and_then(|h| h.get(http::header::USER_AGENT)) {
        answer["user_agent"] = json!(agent.to_str().unwrap_or_default());
    }
    let _ = cx;
    answer
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut http = None;
    let mut tls = (None, None);
    let mut protect = ProtectOptions::default();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match protect.take(&arg, &mut value) {
            Ok(true) => continue,
            Ok(false) => {}
            Err(error) => {
                eprintln!("{error}\n{USAGE}\n  AUTH: {PROTECT_USAGE}");
                return ExitCode::from(2);
            }
        }
        match arg.as_str() {
            flag @ ("--tls-cert" | "--tls-key") => match args.next() {
                Some(path) if flag == "--tls-cert" => tls.0 = Some(path),
                Some(path) => tls.1 = Some(path),
                None => {
                    eprintln!("{flag} needs a file\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--http" => match args.next() {
                Some(address) => http = Some(address),
                None => {
                    eprintln!("--http needs an address\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}\n  AUTH: {PROTECT_USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("unknown argument {other}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp_server: no runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        match http {
            None => {
                server().serve_stdio().await;
                ExitCode::SUCCESS
            }
            Some(address) => serve_http(&address, tls, &protect).await,
        }
    })
}

/// Serves Streamable HTTP on `address`, HTTPS with `(cert, key)` PEM files.
#[cfg(feature = "http")]
async fn serve_http(
    address: &str,
    tls: (Option<String>, Option<String>),
    protect: &ProtectOptions,
) -> ExitCode {
    let tls = match tls {
        (Some(cert), Some(key)) => match rpcwire::transport::tls::ServerTls::from_pem_files(&cert, &key) {
            Ok(tls) => Some(tls),
            Err(error) => {
                eprintln!("mcp_server: --tls-cert/--tls-key: {error}");
                return ExitCode::from(2);
            }
        },
        (None, None) => None,
        _ => {
            eprintln!("mcp_server: --tls-cert and --tls-key go together");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("mcp_server: cannot listen on {address}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let bound = listener
        .local_addr()
        .map_or_else(|_| address.to_owned(), |a| a.to_string());
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut service = rpcwire::mcp::http::StreamableHttpService::new(server());
    #[cfg(feature = "auth")]
    match protect.protection(&format!("{scheme}://{bound}/mcp")).await {
        Ok(Some(protected)) => service = service.with_protection(protected),
        Ok(None) => {}
        Err(error) => {
            eprintln!("mcp_server: {error}");
            return ExitCode::from(2);
        }
    }
    #[cfg(not(feature = "auth"))]
    if protect.issuer.is_some() {
        eprintln!("mcp_server: --auth-issuer needs the auth feature");
        return ExitCode::from(2);
    }
    println!("listening on {scheme}://{bound}/mcp");
    let _ = std::io::Write::flush(&mut std::io::stdout());
    if let Some(tls) = tls {
        service = service.with_tls(tls);
    }
    match service.serve(listener).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp_server: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "http"))]
async fn serve_http(_: &str, _: (Option<String>, Option<String>), _: &ProtectOptions) -> ExitCode {
    eprintln!("mcp_server: --http needs the http feature");
    ExitCode::from(2)
}
