//! An MCP host (`mcp` feature; `http` too for URLs): connects to a server — a command it
//! starts over stdio, or a Streamable HTTP URL — lists its tools and calls one.
//!
//! ```sh
//! cargo run --release --features mcp,http --example mcp_client -- http://127.0.0.1:8000/mcp
//! cargo run --release --features mcp,http --example mcp_client -- --ca ca.pem https://mcp.internal/mcp
//! cargo run --release --features mcp,http --example mcp_client -- --call add '{"a":5,"b":3}' \
//!     -- target/release/examples/mcp_server
//! ```
//!
//! An `https://` server is trusted through the system's roots, and through each `--ca` PEM
//! file given. Prints each tool's name and description, then the call's result as JSON. With
//! `MCP_CONFORMANCE_SCENARIO` set (the official conformance suite starts it that way, the
//! server URL as its last argument) it plays that client scenario: `initialize`,
//! `tools_call`, `elicitation-sep1034-client-defaults`, `sse-retry`, `http-standard-headers`,
//! and as a stateless client (revision 2026-07-28) `request-metadata` and
//! `sep-2322-client-request-state`.

use std::process::ExitCode;

use rpcwire::mcp::{ConnectError, McpClient, McpClientBuilder, ProtocolVersion};
use serde_json::{json, Value};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: mcp_client [--call TOOL JSON] [--ca PEM …] (URL | -- COMMAND ARGS...)";

enum Target {
    /// A URL, and the authorities (PEM files) trusted for it besides the system's roots.
    Url(String, Vec<String>),
    Command(Vec<String>),
}

async fn connect(builder: McpClientBuilder, target: &Target) -> Result<McpClient, ConnectError> {
    match target {
        Target::Command(command) => {
            let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
            builder.connect_stdio(command[0].as_str(), &args).await
        }
        Target::Url(url, authorities) => connect_url(builder, url, authorities).await,
    }
}

#[cfg(feature = "http")]
async fn connect_url(
    mut builder: McpClientBuilder,
    url: &str,
    authorities: &[String],
) -> Result<McpClient, ConnectError> {
    let parsed = url
        .parse()
        .map_err(|e| rpcwire::transport::AddressError::new(url, format!("not a URL: {e}")))?;
    if !authorities.is_empty() {
        let mut tls = rpcwire::transport::tls::ClientTls::builder();
        for path in authorities {
            tls = tls.add_ca_file(path).map_err(tls_failed)?;
        }
        builder = builder.with_tls(tls.build().map_err(tls_failed)?);
    }
    builder.connect_http(parsed).await
}

/// A TLS configuration that cannot be built, as the error a connection reports.
#[cfg(feature = "http")]
fn tls_failed(error: rpcwire::transport::tls::TlsError) -> ConnectError {
    ConnectError::Spawn(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("--ca: {error}"),
    ))
}

#[cfg(not(feature = "http"))]
async fn connect_url(_: McpClientBuilder, url: &str, _: &[String]) -> Result<McpClient, ConnectError> {
    Err(ConnectError::Spawn(std::io::Error::other(format!(
        "{url}: URLs need the http feature"
    ))))
}

fn builder() -> McpClientBuilder {
    McpClient::builder("rpcwire-mcp-client", env!("CARGO_PKG_VERSION"))
}

/// One conformance client scenario against `target`.
async fn scenario(name: &str, target: &Target) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    match name {
        "initialize" => {
            let client = connect(builder(), target).await.map_err(|e| fail(&e))?;
            client.list_tools().await.map_err(|e| fail(&e))?;
            client.close().await;
        }
        "tools_call" => {
            let client = connect(builder(), target).await.map_err(|e| fail(&e))?;
            client.list_tools().await.map_err(|e| fail(&e))?;
            let sum = client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await
                .map_err(|e| fail(&e))?;
            println!("{}", serde_json::to_string(&sum).unwrap_or_default());
            client.close().await;
        }
        "elicitation-sep1034-client-defaults" => {
            let client = connect(builder().accept_elicitation_defaults(), target)
                .await
                .map_err(|e| fail(&e))?;
            client.list_tools().await.map_err(|e| fail(&e))?;
            let result = client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await
                .map_err(|e| fail(&e))?;
            println!("{}", serde_json::to_string(&result).unwrap_or_default());
            client.close().await;
        }
        "sse-retry" => {
            let client = connect(builder(), target).await.map_err(|e| fail(&e))?;
            client.list_tools().await.map_err(|e| fail(&e))?;
            let result = client
                .call_tool("test_reconnection", json!({}))
                .await
                .map_err(|e| fail(&e))?;
            println!("{}", serde_json::to_string(&result).unwrap_or_default());
            client.close().await;
        }
        "http-standard-headers" => {
            // Every kind of request, so that each carries its Mcp-Method (and Mcp-Name).
            let client = connect(builder(), target).await.map_err(|e| fail(&e))?;
            for tool in client.list_tools().await.map_err(|e| fail(&e))? {
                client
                    .call_tool(&tool.name, json!({}))
                    .await
                    .map_err(|e| fail(&e))?;
            }
            for resource in client.list_resources().await.map_err(|e| fail(&e))? {
                client.read_resource(&resource.uri).await.map_err(|e| fail(&e))?;
            }
            for prompt in client.list_prompts().await.map_err(|e| fail(&e))? {
                client
                    .get_prompt(&prompt.name, &Default::default())
                    .await
                    .map_err(|e| fail(&e))?;
            }
            client.close().await;
        }
        "request-metadata" | "sep-2322-client-request-state" => {
            // Stateless: every tool called once, the server's input requests answered (an
            // elicitation accepted with `confirmed`).
            let stateless = builder()
                .with_protocol_version(ProtocolVersion::V2026_07_28)
                .on_elicitation(|_| async {
                    Ok(json!({"action": "accept", "content": {"confirmed": true}}))
                });
            let client = connect(stateless, target).await.map_err(|e| fail(&e))?;
            for tool in client.list_tools().await.map_err(|e| fail(&e))? {
                let result = client
                    .call_tool(&tool.name, json!({}))
                    .await
                    .map_err(|e| fail(&e))?;
                println!("{}", serde_json::to_string(&result).unwrap_or_default());
            }
            client.close().await;
        }
        other => return Err(format!("scenario {other} is not played by this client")),
    }
    Ok(())
}

async fn run(call: Option<(String, Value)>, target: Target) -> Result<(), String> {
    if let Ok(name) = std::env::var("MCP_CONFORMANCE_SCENARIO") {
        return scenario(&name, &target).await;
    }
    let client = connect(builder().accept_elicitation_defaults(), &target)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "connected to {} ({})",
        client.server_info(),
        client.protocol_version()
    );
    for tool in client.list_tools().await.map_err(|e| e.to_string())? {
        println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    }
    if let Some((name, arguments)) = call {
        let result = client
            .call_tool(&name, arguments)
            .await
            .map_err(|e| e.to_string())?;
        println!("{}", serde_json::to_string(&result).map_err(|e| e.to_string())?);
    }
    client.close().await;
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut call = None;
    let mut target = None;
    let mut authorities = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--call" => {
                let (Some(name), Some(json)) = (args.next(), args.next()) else {
                    eprintln!("--call needs a tool and JSON arguments\n{USAGE}");
                    return ExitCode::from(2);
                };
                match serde_json::from_str(&json) {
                    Ok(arguments) => call = Some((name, arguments)),
                    Err(error) => {
                        eprintln!("--call {name}: {error}");
                        return ExitCode::from(2);
                    }
                }
            }
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
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            url => target = Some(Target::Url(url.to_owned(), Vec::new())),
        }
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
    match runtime.block_on(run(call, target)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp_client: {error}");
            ExitCode::FAILURE
        }
    }
}
