//! An MCP gateway (`mcp` and `http` features): a stdio MCP server served over Streamable
//! HTTP, a child process per client session; or (`--connect`) a remote Streamable HTTP
//! server brought to a local host over stdio.
//!
//! ```text
//! cargo run --release --features mcp,http --example mcp_gateway -- \
//!     --stdio "npx -y @modelcontextprotocol/server-everything" --listen 127.0.0.1:8000
//! cargo run --release --features mcp,http --example mcp_gateway -- --connect http://127.0.0.1:8000/mcp
//! ```
//!
//! With `--connect URL` it is a stdio MCP server for a host (its command line in the host's
//! configuration): every message is forwarded to the remote endpoint and back, streams are
//! resumed with `Last-Event-ID`, and a session the remote server forgot (`404`, a restart) is
//! started again without the host's session ending. It exits when the host closes stdin.
//! `--header "NAME: VALUE"` (repeatable) is sent with every request to the remote server (a
//! credential it asks for); `--header-file FILE` reads such lines from a file instead of the
//! command line (which other users of the machine can see). An `https://` server is trusted
//! through the system's roots, and `--ca PEM` (repeatable) or `--webpki-roots` besides;
//! `--client-cert PEM --client-key PEM` is shown to a server that asks for one.
//!
//! The command line runs with `sh -c`, in a process group of its own that is ended whole.
//! Several servers go under one endpoint with `--stdio NAME="CMD ARGS"` given once per
//! server: their tools and prompts are listed as `NAME__tool`, and calls routed by it.
//! Clients connect to `http://ADDRESS/mcp`; `GET /healthz` answers with the counts of
//! sessions and children. Options:
//!
//! - `--shared`: one child (of each server) for all sessions, started on the first
//!   `initialize`, requests multiplexed on it (instead of a child per session);
//! - `--token TOKEN` or `--token-file FILE`: ask for `Authorization: Bearer TOKEN`;
//! - `--allow-host HOST` (repeatable): host names allowed in `Host`/`Origin` besides none
//!   (the loopback names by default); `--no-host-check` to check none (behind a proxy);
//! - `--max-sessions N`, `--idle-timeout SECS`, `--session-in-flight N`, `--in-flight N`,
//!   `--call-timeout SECS`, `--max-message BYTES`, `--shutdown-deadline SECS`;
//! - `--metrics ADDRESS` (with the `metrics` feature): the gateway's metrics as Prometheus
//!   text at `GET /metrics` there (prints `metrics on ADDRESS`).
//!
//! - `--tls-cert PEM --tls-key PEM`: serve HTTPS (HTTP/2 or HTTP/1.1 by ALPN; the files are
//!   read again when they change).
//!
//! Prints `listening on http://ADDRESS/mcp` (`https://` with TLS) once it accepts connections. On `SIGINT` or
//! `SIGTERM` it stops accepting, lets requests under way finish up to the shutdown deadline
//! (10 s by default), ends every child and exits.

use std::process::ExitCode;
use std::time::Duration;

#[path = "common/authorize.rs"]
mod authorize;
#[cfg(feature = "metrics")]
#[path = "common/prometheus.rs"]
mod prometheus;
#[path = "common/protect.rs"]
mod protect;
#[path = "common/tls.rs"]
mod tls;

use rpcwire::mcp::gateway::{McpGateway, StdioCommand};

const USAGE: &str =
    "usage: mcp_gateway --stdio \"CMD ARGS\" [--listen ADDRESS] [--shared] [--token TOKEN | --token-file FILE]
                   [--allow-host HOST …] [--no-host-check] [--max-sessions N] [--idle-timeout SECS]
                   [--session-in-flight N] [--in-flight N] [--call-timeout SECS] [--max-message BYTES]
                   [--shutdown-deadline SECS] [--metrics ADDRESS] [--tls-cert PEM --tls-key PEM]
                   [AUTH]
       mcp_gateway --connect URL [--header \"NAME: VALUE\" …] [--header-file FILE]
                   [--ca PEM …] [--webpki-roots] [--client-cert PEM --client-key PEM]
                   [OAUTH]";

struct Arguments {
    stdio: Vec<String>,
    connect: Option<String>,
    headers: Vec<String>,
    listen: String,
    token: Option<String>,
    allowed_hosts: Vec<String>,
    host_check: bool,
    shared: bool,
    max_sessions: usize,
    idle_timeout: u64,
    session_in_flight: usize,
    in_flight: usize,
    call_timeout: u64,
    max_message: Option<usize>,
    shutdown_deadline: u64,
    metrics: Option<String>,
    tls: tls::TlsOptions,
    /// How `--connect` authorizes (OAuth).
    auth: authorize::AuthOptions,
    /// The front as a protected resource.
    protect: protect::ProtectOptions,
}

fn parse_arguments() -> Result<Arguments, String> {
    let mut parsed = Arguments {
        stdio: Vec::new(),
        connect: None,
        headers: Vec::new(),
        listen: "127.0.0.1:8000".to_owned(),
        token: None,
        allowed_hosts: Vec::new(),
        host_check: true,
        shared: false,
        max_sessions: 1024,
        idle_timeout: 600,
        session_in_flight: 64,
        in_flight: 1024,
        call_timeout: 300,
        max_message: None,
        shutdown_deadline: 10,
        metrics: None,
        tls: tls::TlsOptions::default(),
        auth: authorize::AuthOptions::default(),
        protect: protect::ProtectOptions::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        if parsed.tls.take(&arg, &mut value)?
            || parsed.auth.take(&arg, &mut value)?
            || parsed.protect.take(&arg, &mut value)?
        {
            continue;
        }
        let number = |name: &str, text: String| {
            text.parse::<u64>()
                .map_err(|_| format!("{name}: not a number: {text}"))
        };
        match arg.as_str() {
            "--stdio" => parsed.stdio.push(value("--stdio")?),
            "--connect" => parsed.connect = Some(value("--connect")?),
            "--header" => parsed.headers.push(value("--header")?),
            "--header-file" => {
                let path = value("--header-file")?;
                let text = std::fs::read_to_string(&path)
                    .map_err(|error| format!("--header-file {path}: {error}"))?;
                parsed.headers.extend(
                    text.lines()
                        .filter(|line| !line.trim().is_empty())
                        .map(str::to_owned),
                );
            }
            "--listen" => parsed.listen = value("--listen")?,
            "--token" => parsed.token = Some(value("--token")?),
            "--token-file" => {
                let path = value("--token-file")?;
                let text = std::fs::read_to_string(&path)
                    .map_err(|error| format!("--token-file {path}: {error}"))?;
                parsed.token = Some(text.trim().to_owned());
            }
            "--allow-host" => parsed.allowed_hosts.push(value("--allow-host")?),
            "--no-host-check" => parsed.host_check = false,
            "--shared" => parsed.shared = true,
            "--max-sessions" => parsed.max_sessions = number(&arg, value(&arg)?)? as usize,
            "--idle-timeout" => parsed.idle_timeout = number(&arg, value(&arg)?)?,
            "--session-in-flight" => parsed.session_in_flight = number(&arg, value(&arg)?)? as usize,
            "--in-flight" => parsed.in_flight = number(&arg, value(&arg)?)? as usize,
            "--call-timeout" => parsed.call_timeout = number(&arg, value(&arg)?)?,
            "--max-message" => parsed.max_message = Some(number(&arg, value(&arg)?)? as usize),
            "--shutdown-deadline" => parsed.shutdown_deadline = number(&arg, value(&arg)?)?,
            "--metrics" => parsed.metrics = Some(value("--metrics")?),
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    match (&parsed.connect, parsed.stdio.is_empty()) {
        (Some(_), false) => return Err("--connect and --stdio go apart".to_owned()),
        (None, true) => return Err("--stdio or --connect is needed".to_owned()),
        _ => {}
    }
    if parsed.connect.is_none() && !parsed.headers.is_empty() {
        return Err("--header goes with --connect".to_owned());
    }
    if parsed.token.as_deref() == Some("") {
        return Err("the token is empty".to_owned());
    }
    Ok(parsed)
}

/// A `NAME: VALUE` header line (the value is not shown in errors: it may be a secret).
fn header(line: &str) -> Result<(http::HeaderName, http::HeaderValue), String> {
    let (name, value) = line
        .split_once(':')
        .ok_or_else(|| "expected NAME: VALUE".to_owned())?;
    let name = http::HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("{:?} is not a header name", name.trim()))?;
    let mut value = http::HeaderValue::from_str(value.trim())
        .map_err(|_| format!("the value of {name} is not a valid header value"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// Completes on SIGINT or SIGTERM.
async fn stop_signal() {
    let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(terminate) => terminate,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let arguments = match parse_arguments() {
        Ok(arguments) => arguments,
        Err(error) => {
            if !error.is_empty() {
                eprintln!("mcp_gateway: {error}");
            }
            eprintln!(
                "{USAGE}\n  AUTH: {}\n  OAUTH: {}",
                protect::PROTECT_USAGE,
                authorize::AUTH_USAGE
            );
            return ExitCode::from(2);
        }
    };
    if let Some(url) = &arguments.connect {
        let url: http::Uri = match url.parse() {
            Ok(url) => url,
            Err(error) => {
                eprintln!("mcp_gateway: --connect {url}: {error}");
                return ExitCode::from(2);
            }
        };
        let mut remote = match rpcwire::mcp::http::StreamableHttpClient::new(url) {
            Ok(remote) => remote,
            Err(error) => {
                eprintln!("mcp_gateway: --connect: {error}");
                return ExitCode::from(2);
            }
        };
        let client_tls = match arguments.tls.client() {
            Ok(tls) => tls,
            Err(problem) => {
                eprintln!("mcp_gateway: {problem}");
                return ExitCode::from(2);
            }
        };
        if let Some(tls) = client_tls.clone() {
            remote = remote.with_tls(tls);
        }
        #[cfg(feature = "auth")]
        {
            // A remote server that answers 401 is authorized (OAuth), as mcp_client does.
            let mut authorizer = match arguments.auth.authorizer("rpcwire-mcp-gateway") {
                Ok(authorizer) => authorizer,
                Err(problem) => {
                    eprintln!("mcp_gateway: {problem}");
                    return ExitCode::from(2);
                }
            };
            if let Some(tls) = client_tls {
                authorizer = authorizer.with_tls(tls);
            }
            remote = match remote.with_authorizer(authorizer) {
                Ok(remote) => remote,
                Err(error) => {
                    eprintln!("mcp_gateway: --connect: {error}");
                    return ExitCode::from(2);
                }
            };
        }
        #[cfg(not(feature = "auth"))]
        let _ = client_tls;
        for line in &arguments.headers {
            match header(line) {
                Ok((name, value)) => remote = remote.with_header(name, value),
                Err(error) => {
                    eprintln!("mcp_gateway: --header: {error}");
                    return ExitCode::from(2);
                }
            }
        }
        return match rpcwire::mcp::gateway::connect_stdio_with(remote).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("mcp_gateway: {error}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(address) = &arguments.metrics {
        #[cfg(feature = "metrics")]
        if let Err(error) = prometheus::serve_metrics(address).await {
            eprintln!("mcp_gateway: cannot serve metrics on {address}: {error}");
            return ExitCode::FAILURE;
        }
        #[cfg(not(feature = "metrics"))]
        {
            eprintln!("mcp_gateway: --metrics {address} needs the `metrics` feature");
            return ExitCode::from(2);
        }
    }
    let gateway = match &arguments.stdio[..] {
        [one] => McpGateway::new(StdioCommand::shell(one)),
        several => {
            let mut named = Vec::new();
            for server in several {
                let Some((name, command)) = server.split_once('=').filter(|(name, _)| {
                    !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                        && !name.contains("__")
                }) else {
                    eprintln!("mcp_gateway: with several --stdio each is NAME=\"CMD ARGS\" (NAME of letters, digits, - and _): {server}");
                    return ExitCode::from(2);
                };
                named.push((name.to_owned(), StdioCommand::shell(command)));
            }
            McpGateway::several(named)
        }
    };
    let mut gateway = gateway
        .with_sessions(
            arguments.max_sessions,
            Duration::from_secs(arguments.idle_timeout),
        )
        .with_in_flight(arguments.session_in_flight, arguments.in_flight)
        .with_timeouts(
            Duration::from_secs(arguments.call_timeout),
            Duration::from_secs(30),
        );
    if arguments.shared {
        gateway = gateway.with_shared_child();
    }
    if let Some(bytes) = arguments.max_message {
        gateway = gateway.with_max_message(bytes);
    }
    if let Some(token) = &arguments.token {
        gateway = gateway.with_token(token);
    }
    if !arguments.host_check {
        gateway = gateway.without_host_check();
    } else if !arguments.allowed_hosts.is_empty() {
        let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "[::1]".to_owned()];
        hosts.extend(arguments.allowed_hosts.iter().cloned());
        gateway = gateway.with_allowed_hosts(hosts);
    }
    let scheme = match arguments.tls.server() {
        Ok(Some(tls)) => {
            gateway = gateway.with_tls(tls);
            "https"
        }
        Ok(None) => "http",
        Err(problem) => {
            eprintln!("mcp_gateway: {problem}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(&arguments.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("mcp_gateway: cannot listen on {}: {error}", arguments.listen);
            return ExitCode::FAILURE;
        }
    };
    let endpoint = match listener.local_addr() {
        Ok(address) => format!("{scheme}://{address}/mcp"),
        Err(error) => {
            eprintln!("mcp_gateway: {error}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(feature = "auth")]
    match arguments.protect.protection(&endpoint).await {
        Ok(Some(protected)) => gateway = gateway.with_protection(protected),
        Ok(None) => {}
        Err(problem) => {
            eprintln!("mcp_gateway: {problem}");
            return ExitCode::from(2);
        }
    }
    #[cfg(not(feature = "auth"))]
    if arguments.protect.issuer.is_some() || arguments.auth.client_id.is_some() {
        eprintln!("mcp_gateway: OAuth (--auth-issuer, --client-id) needs the auth feature");
        return ExitCode::from(2);
    }
    println!("listening on {endpoint}");
    let deadline = Duration::from_secs(arguments.shutdown_deadline);
    match gateway.serve_until(listener, stop_signal(), deadline).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp_gateway: {error}");
            ExitCode::FAILURE
        }
    }
}
