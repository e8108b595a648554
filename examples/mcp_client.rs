//! An MCP host (`mcp` feature; `http` too for URLs, `auth` to authorize): connects to a
//! server — a command it starts over stdio, or a Streamable HTTP URL — lists its tools and
//! calls one, or exercises everything the server offers.
//!
//! ```sh
//! cargo run --release --features mcp,http --example mcp_client -- http://127.0.0.1:8000/mcp
//! cargo run --release --features mcp,http --example mcp_client -- --ca ca.pem https://mcp.internal/mcp
//! cargo run --release --features mcp,http --example mcp_client -- --call add '{"a":5,"b":3}' \
//!     -- target/release/examples/mcp_server
//! # A server that asks for OAuth: the URL to open is printed, the tokens kept in a file.
//! cargo run --release --features auth --example mcp_client -- --oauth-tokens ~/.mcp-tokens.json https://mcp.example/mcp
//! ```
//!
//! An `https://` server is trusted through the system's roots, and through each `--ca` PEM
//! file given. With the `auth` feature, a server that answers `401` is authorized by itself
//! (MCP's OAuth 2.1): a client id given with `--client-id` / `--client-secret` (or
//! `--assertion-key` for `private_key_jwt`, `--client-credentials` for a machine), else a client
//! metadata document (`--client-metadata-url`) or dynamic registration; a person opens the
//! printed URL, or `--oauth-headless` follows the redirects itself.
//!
//! `--exercise` lists every tool, resource and prompt and uses each: tools called with
//! arguments made from their schemas, elicitations accepted with their defaults; a call the
//! server refuses is printed, a connection or authorization that fails ends it with an error.
//! Skills are listed; with `--load-skills` each is loaded and its files read, verified
//! against the listing (a file that fails ends it with an error).
//!
//! With `MCP_CONFORMANCE_SCENARIO` set (the official conformance suite starts it that way,
//! the server URL as its last argument) it plays that client scenario: `--exercise` at the
//! revision `MCP_CONFORMANCE_PROTOCOL_VERSION` names, with what `MCP_CONFORMANCE_CONTEXT`
//! gives (credentials, tool calls), and the suite's headless authorization.

use std::process::ExitCode;

use rpcwire::mcp::{ConnectError, McpClient, McpClientBuilder, ProtocolVersion};
use serde_json::{json, Value};

#[path = "common/authorize.rs"]
mod authorize;

use authorize::{AuthOptions, AUTH_USAGE};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str =
    "usage: mcp_client [--call TOOL JSON] [--exercise] [--ca PEM …] [AUTH…] (URL | -- COMMAND ARGS...)";

enum Target {
    /// A URL, and the authorities (PEM files) trusted for it besides the system's roots.
    Url(String, Vec<String>),
    Command(Vec<String>),
}

/// What to do once connected.
#[derive(Default)]
struct Plan {
    /// A tool to call, with its arguments.
    call: Option<(String, Value)>,
    /// Use everything the server offers.
    exercise: bool,
    /// Tool calls to make, in order (`--exercise` calls these instead of every tool).
    calls: Vec<(String, Value)>,
    /// Call `to` with its arguments `{"schema": …}` the input schema of tool `of`, as listed.
    echo_schema: Option<(String, String)>,
    /// Load each skill the server lists, and read its files (verified), in `--exercise`.
    load_skills: bool,
    /// Speak this revision.
    version: Option<ProtocolVersion>,
    auth: AuthOptions,
}

async fn connect(builder: McpClientBuilder, target: &Target, plan: &Plan) -> Result<McpClient, ConnectError> {
    match target {
        Target::Command(command) => {
            let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
            builder.connect_stdio(command[0].as_str(), &args).await
        }
        Target::Url(url, authorities) => connect_url(builder, url, authorities, &plan.auth).await,
    }
}

#[cfg(feature = "http")]
async fn connect_url(
    mut builder: McpClientBuilder,
    url: &str,
    authorities: &[String],
    auth: &AuthOptions,
) -> Result<McpClient, ConnectError> {
    let parsed = url
        .parse()
        .map_err(|e| rpcwire::transport::AddressError::new(url, format!("not a URL: {e}")))?;
    if !authorities.is_empty() {
        let mut tls = rpcwire::transport::tls::ClientTls::builder();
        for path in authorities {
            tls = tls.add_ca_file(path).map_err(|e| invalid(format!("--ca: {e}")))?;
        }
        let tls = tls.build().map_err(|e| invalid(format!("--ca: {e}")))?;
        builder = builder.with_tls(tls);
    }
    #[cfg(feature = "auth")]
    {
        let mut authorizer = auth.authorizer("rpcwire-mcp-client").map_err(invalid)?;
        if !authorities.is_empty() {
            let mut tls = rpcwire::transport::tls::ClientTls::builder();
            for path in authorities {
                tls = tls.add_ca_file(path).map_err(|e| invalid(format!("--ca: {e}")))?;
            }
            authorizer = authorizer.with_tls(tls.build().map_err(|e| invalid(format!("--ca: {e}")))?);
        }
        builder = builder.with_authorizer(authorizer);
    }
    #[cfg(not(feature = "auth"))]
    let _ = auth;
    builder.connect_http(parsed).await
}

/// A configuration that cannot be used, as the error a connection reports.
fn invalid(reason: String) -> ConnectError {
    ConnectError::Spawn(std::io::Error::new(std::io::ErrorKind::InvalidInput, reason))
}

#[cfg(not(feature = "http"))]
async fn connect_url(
    _: McpClientBuilder,
    url: &str,
    _: &[String],
    _: &AuthOptions,
) -> Result<McpClient, ConnectError> {
    Err(ConnectError::Spawn(std::io::Error::other(format!(
        "{url}: URLs need the http feature"
    ))))
}

/// Arguments for a tool with input schema `schema`: each required property, from its
/// `default`, else its first `enum` value, else a value of its type.
fn sample_arguments(schema: &Value) -> Value {
    let mut arguments = serde_json::Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        arguments.insert(name.to_owned(), sample_value(&schema["properties"][name]));
    }
    Value::Object(arguments)
}

fn sample_value(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property["enum"].as_array().and_then(|all| all.first()) {
        return first.clone();
    }
    match property["type"].as_str() {
        Some("string") => json!("test"),
        Some("integer") => json!(1),
        Some("number") => json!(1.0),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => sample_arguments(property),
        _ => Value::Null,
    }
}

/// The client this plan needs: elicitations accepted (the schema's defaults, and values
/// of their types for required fields without one), at the plan's revision.
fn builder(plan: &Plan) -> McpClientBuilder {
    let mut builder = McpClient::builder("rpcwire-mcp-client", env!("CARGO_PKG_VERSION")).on_elicitation(
        |params: Value| async move {
            let schema = &params["requestedSchema"];
            let mut content = rpcwire::mcp::elicitation_defaults(schema);
            if let (Value::Object(content), Value::Object(sampled)) = (&mut content, sample_arguments(schema))
            {
                for (name, value) in sampled {
                    content.entry(name).or_insert(value);
                }
            }
            Ok(json!({"action": "accept", "content": content}))
        },
    );
    if let Some(version) = plan.version {
        builder = builder.with_protocol_version(version);
    }
    builder
}

/// Uses everything the server offers (see the module's documentation).
async fn exercise(client: &McpClient, plan: &Plan) -> Result<(), String> {
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    let mut calls = plan.calls.clone();
    if let Some((of, to)) = &plan.echo_schema {
        let tool = tools
            .iter()
            .find(|t| &t.name == of)
            .ok_or_else(|| format!("no tool {of}"))?;
        let schema: Value = serde_json::from_str(tool.input_schema.get()).map_err(|e| e.to_string())?;
        calls.push((to.clone(), json!({ "schema": schema })));
    } else if calls.is_empty() {
        for tool in &tools {
            let schema: Value = serde_json::from_str(tool.input_schema.get()).unwrap_or_default();
            calls.push((tool.name.clone(), sample_arguments(&schema)));
        }
    }
    for (name, arguments) in calls {
        match client.call_tool(&name, arguments).await {
            Ok(result) => println!("{name}: {}", serde_json::to_string(&result).unwrap_or_default()),
            Err(error) => println!("{name}: refused: {error}"),
        }
    }
    if plan.echo_schema.is_some() || !plan.calls.is_empty() {
        return Ok(());
    }
    if client.offers_skills() {
        // Listed only; loaded (and verified) when asked for.
        for skill in client
            .list_skills()
            .await
            .map_err(|e| format!("skills/list: {e}"))?
        {
            println!("skill {}: {}", skill.uri, skill.name().unwrap_or_default());
            if plan.load_skills {
                client
                    .load_skill(&skill)
                    .await
                    .map_err(|e| format!("skill refused: {e}"))?;
                for file in skill.supporting_files() {
                    client
                        .read_skill_file(&skill, &file.uri)
                        .await
                        .map_err(|e| format!("skill file refused: {e}"))?;
                }
            }
        }
    }
    let capabilities = &client.initialize_result()["capabilities"];
    if capabilities.get("resources").is_some() {
        for resource in client
            .list_resources()
            .await
            .map_err(|e| format!("resources/list: {e}"))?
        {
            if let Err(error) = client.read_resource(&resource.uri).await {
                println!("{}: refused: {error}", resource.uri);
            }
        }
    }
    if capabilities.get("prompts").is_some() {
        for prompt in client
            .list_prompts()
            .await
            .map_err(|e| format!("prompts/list: {e}"))?
        {
            if let Err(error) = client.get_prompt(&prompt.name, &Default::default()).await {
                println!("{}: refused: {error}", prompt.name);
            }
        }
    }
    Ok(())
}

/// The plan for a conformance scenario: `--exercise` at the suite's revision, with what its
/// context gives; headless authorization, with the suite's client metadata document.
fn conformance_plan(scenario: &str, mut plan: Plan) -> Plan {
    plan.exercise = true;
    plan.auth.headless = true;
    plan.version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v == ProtocolVersion::V2026_07_28);
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let text = |name: &str| context[name].as_str().map(str::to_owned);
    if let Some(id) = text("client_id") {
        plan.auth.client_id = Some(id);
        plan.auth.client_secret = text("client_secret");
        plan.auth.client_credentials = scenario.starts_with("auth/client-credentials");
    }
    plan.auth.private_key_pem = text("private_key_pem");
    plan.auth.signing_algorithm = text("signing_algorithm");
    plan.auth.jwt_bearer = text("valid_jwt");
    plan.auth.idp_token_endpoint = text("idp_token_endpoint");
    plan.auth.idp_id_token = text("idp_id_token");
    plan.auth.idp_client_id = text("idp_client_id");
    for call in context["toolCalls"].as_array().into_iter().flatten() {
        if let Some(name) = call["name"].as_str() {
            plan.calls.push((name.to_owned(), call["arguments"].clone()));
        }
    }
    // The verification scenarios load the listed skill; the others only list.
    plan.load_skills = scenario.starts_with("sep-2640-client-verify");
    if scenario == "json-schema-2020-12-preservation" {
        plan.echo_schema = Some((
            "json_schema_2020_12_tool".to_owned(),
            "json_schema_echo".to_owned(),
        ));
    }
    plan
}

async fn run(plan: Plan, target: Target) -> Result<(), String> {
    let client = connect(builder(&plan), &target, &plan)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "connected to {} ({})",
        client.server_info(),
        client.protocol_version()
    );
    if plan.exercise {
        let exercised = exercise(&client, &plan).await;
        client.close().await;
        return exercised;
    }
    for tool in client.list_tools().await.map_err(|e| e.to_string())? {
        println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    }
    if let Some((name, arguments)) = &plan.call {
        let result = client
            .call_tool(name, arguments)
            .await
            .map_err(|e| e.to_string())?;
        println!("{}", serde_json::to_string(&result).map_err(|e| e.to_string())?);
    }
    client.close().await;
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut plan = Plan::default();
    let mut target = None;
    let mut authorities = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match plan.auth.take(&arg, &mut value) {
            Ok(true) => continue,
            Ok(false) => {}
            Err(error) => {
                eprintln!("{error}\n{USAGE}\n  AUTH: {AUTH_USAGE}");
                return ExitCode::from(2);
            }
        }
        match arg.as_str() {
            "--call" => {
                let (Some(name), Some(json)) = (args.next(), args.next()) else {
                    eprintln!("--call needs a tool and JSON arguments\n{USAGE}");
                    return ExitCode::from(2);
                };
                match serde_json::from_str(&json) {
                    Ok(arguments) => plan.call = Some((name, arguments)),
                    Err(error) => {
                        eprintln!("--call {name}: {error}");
                        return ExitCode::from(2);
                    }
                }
            }
            "--exercise" => plan.exercise = true,
            "--load-skills" => plan.load_skills = true,
            "--ca" => {
                let Some(path) = args.next() else {
                    eprintln!("--ca needs a PEM file\n{USAGE}");
                    return ExitCode::from(2);
                };
                authorities.push(path);
            }
            "--" => {
                let command: Vec<String> = args.by_ref().collect();
                if command.is_empty() {
                    eprintln!("-- needs a command\n{USAGE}");
                    return ExitCode::from(2);
                }
                target = Some(Target::Command(command));
            }
            "-h" | "--help" => {
                println!("{USAGE}\n  AUTH: {AUTH_USAGE}");
                return ExitCode::SUCCESS;
            }
            url => target = Some(Target::Url(url.to_owned(), Vec::new())),
        }
    }
    if let Ok(scenario) = std::env::var("MCP_CONFORMANCE_SCENARIO") {
        plan = conformance_plan(&scenario, plan);
    }
    let target = match target {
        Some(Target::Url(url, _)) => Target::Url(url, authorities),
        Some(command) => command,
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp_client: no runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(plan, target)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp_client: {error}");
            ExitCode::FAILURE
        }
    }
}
