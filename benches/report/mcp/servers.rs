//! The MCP servers of the MCP section, each a child process with the same `add` tool: this
//! bench binary started again with `--mcp-server KIND` (rpcwire's `McpServer` and rmcp's, on
//! one tokio thread), or the official TypeScript SDK's server under Node
//! (`tests/mcp/ts_add_server.cjs`). Over stdio the child serves on its stdin and stdout; over
//! Streamable HTTP it prints `listening on ADDR` and exits when its stdin closes.

use std::io::Write as _;

use rpcwire::mcp::{CallToolResult, McpContext, McpServer};

/// The server kinds run by this binary, as passed after `--mcp-server`.
pub(crate) const RPCWIRE_STDIO: &str = "rpcwire-stdio";
pub(crate) const RPCWIRE_HTTP: &str = "rpcwire-http";
pub(crate) const RMCP_STDIO: &str = "rmcp-stdio";
pub(crate) const RMCP_HTTP: &str = "rmcp-http";
pub(crate) const FLOOR_STDIO: &str = "floor-stdio";
pub(crate) const FLOOR_HTTP: &str = "floor-http";
/// The stdio floor of a gateway with a child per session: N `rpcwire-stdio` children (the
/// gateway's), one call in flight on each, no JSON parsed (`pipes`).
pub(crate) const FLOOR_PIPES: &str = "floor-pipes";
/// rpcwire's MCP gateway (`McpGateway`, one tokio thread) in front of `rpcwire-stdio`
/// children, one per session.
pub(crate) const RPCWIRE_GATEWAY: &str = "rpcwire-gateway";
/// The same gateway with one `rpcwire-stdio` child for every session (`with_shared_child`).
pub(crate) const RPCWIRE_GATEWAY_SHARED: &str = "rpcwire-gateway-shared";
/// `rpcwire-http` as an OAuth protected resource (`auth` feature): every request's bearer
/// token a JWT verified by `JwtVerifier` (ES256, the JWKS fetched once from a server in the
/// same process).
pub(crate) const RPCWIRE_HTTP_JWT: &str = "rpcwire-http-jwt";

/// The floors' answer, around the request's id.
const FLOOR_ANSWER: (&str, &str) = (
    r#"{"jsonrpc":"2.0","id":"#,
    r#","result":{"content":[{"type":"text","text":"3"}]}}"#,
);
const FLOOR_INITIALIZED: &str = r#"{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}}"#;

/// The id's JSON text in a request (what follows `"id":` up to the next `,` or `}`).
fn id_of(request: &[u8]) -> &[u8] {
    let Some(at) = memchr::memmem::find(request, br#""id":"#).map(|at| at + 5) else {
        return b"null";
    };
    let end = request[at..]
        .iter()
        .position(|&b| b == b',' || b == b'}')
        .map_or(request.len(), |n| at + n);
    &request[at..end]
}

/// The floors' answer to one request line: what a server must at least do — read the
/// request, find its id, write an answer — and nothing else (no JSON parsed, no MCP).
fn floor_answer(request: &[u8], out: &mut Vec<u8>) {
    if memchr::memmem::find(request, br#""method":"initialize""#).is_some() {
        out.extend_from_slice(FLOOR_INITIALIZED.as_bytes());
    } else {
        out.extend_from_slice(FLOOR_ANSWER.0.as_bytes());
        out.extend_from_slice(id_of(request));
        out.extend_from_slice(FLOOR_ANSWER.1.as_bytes());
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

fn rpcwire_server() -> McpServer {
    McpServer::new("rpcwire-add", "1").tool(
        "add",
        "Adds two integers",
        |args: Add, _: McpContext| async move {
            Ok(CallToolResult::text(args.a.wrapping_add(args.b).to_string()))
        },
    )
}

/// rmcp's side: the same tool with rmcp's macros, as its README shows.
mod rmcp_add {
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::{schemars, tool, tool_router};

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    pub(crate) struct AddRequest {
        pub(crate) a: i64,
        pub(crate) b: i64,
    }

    #[derive(Debug, Clone)]
    pub(crate) struct Adder;

    #[tool_router(server_handler)]
    impl Adder {
        #[tool(description = "Adds two integers")]
        fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
            a.wrapping_add(b).to_string()
        }
    }
}

/// Runs the server `kind` until its stdin closes.
pub(crate) fn serve(kind: &str) {
    if kind == FLOOR_STDIO {
        floor_stdio();
        return;
    }
    if kind == FLOOR_PIPES {
        super::pipes::floor_pipes();
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        match kind {
            RPCWIRE_STDIO => {
                rpcwire_server().serve_stdio().await;
            }
            RMCP_STDIO => {
                use rmcp::ServiceExt;
                let running = rmcp_add::Adder
                    .serve(rmcp::transport::stdio())
                    .await
                    .expect("rmcp serves");
                let _ = running.waiting().await;
            }
            RPCWIRE_HTTP
            | RMCP_HTTP
            | FLOOR_HTTP
            | RPCWIRE_GATEWAY
            | RPCWIRE_GATEWAY_SHARED
            | RPCWIRE_HTTP_JWT => {
                exit_when_stdin_closes();
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                #[cfg(feature = "auth")]
                let protected = (kind == RPCWIRE_HTTP_JWT).then(|| protected_resource(&listener));
                println!("listening on {}", listener.local_addr().expect("address"));
                let _ = std::io::stdout().flush();
                match kind {
                    RPCWIRE_HTTP => {
                        let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire_server());
                        let _ = service.serve(listener).await;
                    }
                    #[cfg(feature = "auth")]
                    RPCWIRE_HTTP_JWT => {
                        let protected = protected.expect("made above").await;
                        let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire_server())
                            .with_protection(protected);
                        let _ = service.serve(listener).await;
                    }
                    RMCP_HTTP => rmcp_http(listener).await,
                    RPCWIRE_GATEWAY | RPCWIRE_GATEWAY_SHARED => {
                        let exe = std::env::current_exe().expect("the bench binary");
                        let child = rpcwire::mcp::gateway::StdioCommand::new(exe)
                            .args(["--mcp-server", RPCWIRE_STDIO]);
                        let mut gateway = rpcwire::mcp::gateway::McpGateway::new(child);
                        if kind == RPCWIRE_GATEWAY_SHARED {
                            gateway = gateway.with_shared_child();
                        }
                        let _ = gateway.serve(listener).await;
                    }
                    _ => floor_http(listener).await,
                }
            }
            other => panic!("unknown MCP server {other:?}"),
        }
    });
}

/// The protection of `rpcwire-http-jwt`: a P-256 key made now, its JWKS served on another
/// port of the loopback, a token for the endpoint at `listener` signed with it and printed
/// (`bearer TOKEN`, before `listening on`) for the load generator to send.
#[cfg(feature = "auth")]
fn protected_resource(
    listener: &tokio::net::TcpListener,
) -> impl std::future::Future<Output = rpcwire::mcp::auth::ProtectedResource> {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("a key");
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).expect("the key");
    let point = pair.public_key().as_ref();
    let jwks = serde_json::json!({"keys": [{
        "kty": "EC", "crv": "P-256", "kid": "bench", "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    }]})
    .to_string();
    let resource = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let issuer = "https://issuer.bench.invalid";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let part = |value: serde_json::Value| URL_SAFE_NO_PAD.encode(value.to_string());
    let signed = format!(
        "{}.{}",
        part(serde_json::json!({"alg": "ES256", "typ": "at+jwt", "kid": "bench"})),
        part(
            serde_json::json!({"iss": issuer, "aud": resource, "sub": "bench", "scope": "mcp:tools", "iat": now, "exp": now + 86_400})
        ),
    );
    let signature = pair.sign(&rng, signed.as_bytes()).expect("signed");
    println!("bearer {signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()));
    async move {
        let keys = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let jwks_uri = format!("http://{}/jwks", keys.local_addr().expect("address"));
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            while let Ok((mut stream, _)) = keys.accept().await {
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{jwks}",
                    jwks.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        let verifier =
            rpcwire::mcp::auth::JwtVerifier::new(issuer, &resource, jwks_uri.parse().expect("a URL"));
        rpcwire::mcp::auth::ProtectedResource::new(&resource, issuer, verifier).require_scope("mcp:tools")
    }
}

async fn rmcp_http(listener: tokio::net::TcpListener) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::StreamableHttpService;
    let service = hyper_util::service::TowerToHyperService::new(StreamableHttpService::new(
        || Ok(rmcp_add::Adder),
        LocalSessionManager::default().into(),
        Default::default(),
    ));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The stdio floor: blocking reads of lines, an answer for each request (notifications get
/// none), written when no more input is buffered.
fn floor_stdio() {
    use std::io::BufRead;
    let mut input = std::io::BufReader::with_capacity(64 << 10, std::io::stdin().lock());
    let mut output = std::io::stdout().lock();
    let mut line = Vec::with_capacity(512);
    let mut out = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
            return;
        }
        if memchr::memmem::find(&line, br#""id":"#).is_some() {
            floor_answer(&line, &mut out);
            out.push(b'\n');
        }
        if input.buffer().is_empty() && !out.is_empty() {
            if output.write_all(&out).and_then(|()| output.flush()).is_err() {
                return;
            }
            out.clear();
        }
    }
}

/// The HTTP floor: hyper's HTTP/1 connection, each body read whole and answered with JSON by
/// [`floor_answer`] (a session id header on `initialize`, 202 for notifications).
async fn floor_http(listener: tokio::net::TcpListener) {
    use http_body_util::{BodyExt, Full};
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(|request: hyper::Request<hyper::body::Incoming>| async move {
                    let body = request
                        .into_body()
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let mut out = Vec::with_capacity(160);
                    let mut response = hyper::Response::builder().header("content-type", "application/json");
                    if memchr::memmem::find(&body, br#""id":"#).is_none() {
                        response = response.status(202);
                    } else {
                        floor_answer(&body, &mut out);
                        if memchr::memmem::find(&body, br#""method":"initialize""#).is_some() {
                            response = response.header("mcp-session-id", "floor");
                        }
                    }
                    Ok::<_, std::convert::Infallible>(
                        response
                            .body(Full::new(bytes::Bytes::from(out)))
                            .expect("a response"),
                    )
                });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Exits the process once its stdin closes (the parent closes it to stop us, or dies).
fn exit_when_stdin_closes() {
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        std::process::exit(0);
    });
}
