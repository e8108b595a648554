//! MCP authorization against a real OpenID provider: npm `oidc-provider` (a certified
//! implementation, tests/mcp/oidc_provider.mjs) issuing JWT access tokens for resource
//! indicators. rpcwire's client gets them through dynamic registration and the
//! authorization code flow with PKCE, done headlessly (redirects followed, cookies kept);
//! rpcwire's server verifies them through the provider's JWKS, and refuses tokens that are
//! expired, for another audience, of another issuer, or short of a scope, with the status
//! and challenge the specifications give. The examples are run as users run them; the MCP
//! gateway is checked on both sides (a protected front, and `--connect` to a protected
//! server).
#![cfg(all(unix, feature = "auth"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/listening_child.rs"]
mod listening_child;
#[cfg(feature = "tracing")]
#[path = "support/log_capture.rs"]
mod log_capture;
#[path = "support/mcp_peers.rs"]
mod mcp_peers;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rpcwire::mcp::auth::{Authorizer, Headless, IntrospectionVerifier, JwtVerifier, ProtectedResource};
use rpcwire::mcp::http::StreamableHttpService;
use rpcwire::mcp::{CallToolResult, McpClient, McpContext, McpServer, Tool};
use serde_json::{json, Value};

use example_binary::example_binary;
use listening_child::start_listening;
use python_peer::run;

/// The two providers of tests/mcp/oidc_provider.mjs, stopped (stdin closed, killed, reaped)
/// when dropped.
struct Providers {
    child: Child,
    issuer: String,
    other: String,
}

impl Drop for Providers {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn providers() -> Option<Providers> {
    let modules = mcp_peers::node_modules()?;
    let mut child = Command::new(mcp_peers::node(&modules))
        .arg(mcp_peers::mcp_dir().join("oidc_provider.mjs"))
        .arg(&modules)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the OpenID provider");
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    stdout
        .read_line(&mut line)
        .expect("the provider says where it listens");
    // Read to the end, so that the provider never writes to a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let said: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    Some(Providers {
        issuer: said["issuer"].as_str().expect("issuer").to_owned(),
        other: said["other"].as_str().expect("other").to_owned(),
        child,
    })
}

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

fn http_client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// A token of `issuer` by client credentials (`client`: `robot`, or `short` whose tokens
/// live one second) for `resource` with `scope`.
async fn client_credentials(
    http: &HttpClient,
    issuer: &str,
    client: &str,
    resource: &str,
    scope: &str,
) -> String {
    let form = format!(
        "grant_type=client_credentials&client_id={client}&client_secret={client}-secret&resource={}&scope={}",
        url_encoded(resource),
        url_encoded(scope)
    );
    let request = http::Request::post(format!("{issuer}/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(form)))
        .unwrap();
    let response = http.request(request).await.expect("the token endpoint answers");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let answer: Value = serde_json::from_slice(&body).unwrap();
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned()
}

fn url_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// POSTs `body` to `url` with `token` (if any): the status, the challenge, the body.
async fn post(http: &HttpClient, url: &str, token: Option<&str>, body: Value) -> (u16, String, Value) {
    post_in(http, url, token, None, body).await.0
}

/// `initialize` with `token`: the session id the server gave.
async fn session(http: &HttpClient, url: &str, token: &str) -> String {
    let ((status, _, body), session) = post_in(http, url, Some(token), None, initialize()).await;
    assert_eq!(status, 200, "{body}");
    session.expect("a session")
}

/// POSTs `body` in `session` (if any): the status, the challenge, the body; the session id
/// the answer gave.
async fn post_in(
    http: &HttpClient,
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> ((u16, String, Value), Option<String>) {
    let mut request = http::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = http
        .request(request.body(Full::new(Bytes::from(body.to_string()))).unwrap())
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let given = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&body).unwrap_or_else(|_| {
        // An SSE answer: its last data line.
        let text = String::from_utf8_lossy(&body);
        text.lines()
            .rev()
            .filter_map(|line| line.strip_prefix("data: "))
            .find_map(|data| serde_json::from_str(data).ok())
            .unwrap_or(Value::Null)
    });
    ((status, challenge, body), given)
}

/// A server whose `whoami` tool answers with the token's subject and scopes (it needs
/// `mcp:whoami`), protected with tokens of `issuer` for its own URL, checked as JWTs; that
/// URL.
async fn protected_server(issuer: &str) -> String {
    protected_server_checking(issuer, false).await
}

/// The same, its tokens checked by the provider's introspection endpoint when `introspect`.
async fn protected_server_checking(issuer: &str, introspect: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    // The provider issues opaque tokens (which it introspects) for resources under /opaque/.
    let path = if introspect { "/opaque/mcp" } else { "/mcp" };
    let url = format!("http://{}{path}", listener.local_addr().unwrap());
    let protected = if introspect {
        let endpoint = format!("{issuer}/token/introspection").parse().unwrap();
        let verifier =
            IntrospectionVerifier::new(endpoint, "resource-server", "resource-server-secret", &url);
        ProtectedResource::new(&url, issuer, verifier)
    } else {
        let verifier = JwtVerifier::discover(issuer, &url)
            .await
            .expect("the provider's metadata names its keys")
            .with_leeway(Duration::ZERO);
        ProtectedResource::new(&url, issuer, verifier)
    };
    let protected = protected
        .with_scopes_supported(["mcp:tools", "mcp:whoami"])
        .require_scope_for_tool("whoami", "mcp:whoami");
    let server = McpServer::new("protected", "1")
        .raw_tool(
            Tool::new("whoami", "Who calls", r#"{"type":"object"}"#).unwrap(),
            |_, cx: McpContext| async move {
                let claims = cx.claims().expect("a verified token's claims");
                let agent = cx
                    .http_headers()
                    .and_then(|h| h.get("x-test"))
                    .map(|v| v.to_str().unwrap().to_owned());
                Ok(CallToolResult::text(
                    json!({"subject": claims.subject, "scopes": claims.scopes, "x_test": agent}).to_string(),
                ))
            },
        )
        .raw_tool(
            Tool::new("echo", "Echoes", r#"{"type":"object"}"#).unwrap(),
            |arguments, _| async move {
                Ok(CallToolResult::text(
                    arguments.map_or(String::new(), |a| a.get().to_owned()),
                ))
            },
        );
    let service = StreamableHttpService::new(server).with_protection(protected);
    tokio::spawn(service.serve(listener));
    url
}

fn whoami_call() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}})
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_takes_the_providers_tokens_and_refuses_the_wrong_ones() {
    let Some(providers) = providers() else {
        return;
    };
    let url = protected_server(&providers.issuer).await;
    let http = http_client();
    let metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

    // The metadata, to anyone.
    let response = http.get(metadata_url.parse().unwrap()).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let metadata: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(metadata["resource"], url);
    assert_eq!(metadata["authorization_servers"], json!([providers.issuer]));
    let (status, _, _) = post(&http, &metadata_url, None, initialize()).await;
    assert_eq!(status, 405, "the metadata is read, not posted to");

    // No token: 401, the challenge names the metadata and the scopes.
    let (status, challenge, body) = post(&http, &url, None, initialize()).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        challenge,
        format!(r#"Bearer scope="mcp:tools mcp:whoami", resource_metadata="{metadata_url}""#)
    );
    assert_eq!(body["error"]["code"], -32001);

    // A good token without the tool's scope: in, but not to whoami (403 naming it).
    let tools_only = client_credentials(&http, &providers.issuer, "robot", &url, "mcp:tools").await;
    let (status, _, body) = post(&http, &url, Some(&tools_only), initialize()).await;
    assert_eq!(status, 200, "{body}");
    let (status, challenge, _) = post(&http, &url, Some(&tools_only), whoami_call()).await;
    assert_eq!(status, 403);
    assert!(challenge.contains(r#"error="insufficient_scope""#), "{challenge}");
    assert!(challenge.contains(r#"scope="mcp:whoami""#), "{challenge}");

    // Refused tokens: 401 invalid_token.
    let elsewhere = client_credentials(
        &http,
        &providers.issuer,
        "robot",
        "http://127.0.0.1:9/mcp",
        "mcp:whoami",
    )
    .await;
    let other_issuer = client_credentials(&http, &providers.other, "robot", &url, "mcp:whoami").await;
    let short = client_credentials(&http, &providers.issuer, "short", &url, "mcp:whoami").await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    for (what, token) in [
        ("another audience", elsewhere.as_str()),
        ("another issuer", other_issuer.as_str()),
        ("expired", short.as_str()),
        ("not a JWT", "garbage"),
    ] {
        let (status, challenge, _) = post(&http, &url, Some(token), initialize()).await;
        assert_eq!(status, 401, "{what}");
        assert!(
            challenge.starts_with(r#"Bearer error="invalid_token""#),
            "{what}: {challenge}"
        );
        assert!(challenge.contains("resource_metadata="), "{what}: {challenge}");
        assert!(!challenge.contains(token), "{what}: the token is not repeated");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_checks_tokens_by_introspection() {
    let Some(providers) = providers() else {
        return;
    };
    let url = protected_server_checking(&providers.issuer, true).await;
    let http = http_client();
    let good = client_credentials(&http, &providers.issuer, "robot", &url, "mcp:whoami").await;
    let session = session(&http, &url, &good).await;
    let ((status, _, body), _) = post_in(&http, &url, Some(&good), Some(&session), whoami_call()).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.to_string().contains("mcp:whoami"),
        "the handler sees the introspected claims: {body}"
    );
    let tools_only = client_credentials(&http, &providers.issuer, "robot", &url, "mcp:tools").await;
    let (status, challenge, _) = post(&http, &url, Some(&tools_only), whoami_call()).await;
    assert_eq!(status, 403, "{challenge}");
    let elsewhere = client_credentials(
        &http,
        &providers.issuer,
        "robot",
        "http://127.0.0.1:9/opaque/mcp",
        "mcp:whoami",
    )
    .await;
    for (what, token) in [
        ("another audience", elsewhere.as_str()),
        ("unknown", "never-issued"),
    ] {
        let (status, challenge, _) = post(&http, &url, Some(token), initialize()).await;
        assert_eq!(status, 401, "{what}");
        assert!(
            challenge.starts_with(r#"Bearer error="invalid_token""#),
            "{what}: {challenge}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_authorizes_with_the_provider_and_handlers_see_the_claims() {
    let Some(providers) = providers() else {
        return;
    };
    let url = protected_server(&providers.issuer).await;
    // Registered dynamically, a user's code through PKCE (done headlessly), the resource
    // indicator and the scope the challenge named.
    let client = McpClient::builder("oauth-test", "1")
        .with_authorizer(Authorizer::new("oauth-test").with_step(Headless::default()))
        .connect_http(url.parse().unwrap())
        .await
        .expect("authorized and initialized");
    let result = client.call_tool("whoami", json!({})).await.expect("whoami");
    let text = serde_json::to_value(&result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let said: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(said["subject"], "alice");
    assert!(
        said["scopes"].as_array().unwrap().contains(&json!("mcp:whoami")),
        "{said}"
    );
    client.close().await;
}

/// `examples/mcp_server --http` as a protected resource of `issuer`, `whoami` needing
/// `mcp:whoami`.
fn protected_server_example(issuer: &str) -> listening_child::Listening {
    let args = [
        "--http",
        "127.0.0.1:0",
        "--auth-issuer",
        issuer,
        "--auth-scope",
        "whoami=mcp:whoami",
    ];
    start_listening(&example_binary("mcp_server"), &args)
}

/// `examples/mcp_gateway` in front of `mcp_server` over stdio, its front a protected resource
/// of `issuer` whose every request needs `mcp:tools`.
fn protected_gateway_example(issuer: &str) -> listening_child::Listening {
    let server = example_binary("mcp_server").display().to_string();
    let args = [
        "--stdio",
        &server,
        "--listen",
        "127.0.0.1:0",
        "--auth-issuer",
        issuer,
        "--auth-scope",
        "*=mcp:tools",
    ];
    start_listening(&example_binary("mcp_gateway"), &args)
}

#[test]
fn the_examples_authorize_and_protect_as_users_run_them() {
    let Some(providers) = providers() else {
        return;
    };
    let server = protected_server_example(&providers.issuer);
    let client = example_binary("mcp_client");
    let called = run(
        Command::new(&client).args(["--oauth-headless", "--call", "whoami", "{}", &server.address]),
        Duration::from_secs(60),
    )
    .unwrap();
    assert!(
        called.success(),
        "{}",
        called.describe("mcp_client --oauth-headless")
    );
    assert!(
        called.stdout.contains(r#"\"subject\":\"alice\""#),
        "{}",
        called.stdout
    );

    // The gateway in front of a stdio server, as a protected resource that every request
    // needs `mcp:tools` of.
    let gateway = protected_gateway_example(&providers.issuer);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (status, challenge, _) = runtime.block_on(post(&http_client(), &gateway.address, None, initialize()));
    assert_eq!(status, 401, "without a token the gateway refuses");
    assert!(challenge.contains(r#"scope="mcp:tools""#), "{challenge}");
    let listed = run(
        Command::new(&client).args(["--oauth-headless", &gateway.address]),
        Duration::from_secs(60),
    )
    .unwrap();
    assert!(
        listed.success(),
        "{}",
        listed.describe("mcp_client through the protected gateway")
    );
    assert!(listed.stdout.contains("whoami:"), "{}", listed.stdout);

    // The gateway's --connect to the protected server: a stdio host's requests authorized.
    let bridge = run(
        Command::new(&client).args([
            "--call",
            "whoami",
            "{}",
            "--",
            &example_binary("mcp_gateway").display().to_string(),
            "--connect",
            &server.address,
            "--oauth-headless",
        ]),
        Duration::from_secs(60),
    )
    .unwrap();
    assert!(
        bridge.success(),
        "{}",
        bridge.describe("mcp_gateway --connect a protected server")
    );
    assert!(
        bridge.stdout.contains(r#"\"subject\":\"alice\""#),
        "{}",
        bridge.stdout
    );
}

/// Every credential the client was given or got: tokens (as kept), codes (as the step saw
/// them).
#[derive(Clone, Debug, Default)]
struct Seen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Seen {
    fn add(&self, secret: &str) {
        if !secret.is_empty() {
            self.0.lock().unwrap().push(secret.to_owned());
        }
    }
    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A memory store that records what it keeps.
#[derive(Debug)]
struct RecordingStore(rpcwire::mcp::auth::MemoryStore, Seen);

impl rpcwire::mcp::auth::TokenStore for RecordingStore {
    fn load(&self, resource: &str) -> rpcwire::mcp::auth::Kept {
        self.0.load(resource)
    }
    fn save(&self, resource: &str, kept: &rpcwire::mcp::auth::Kept) {
        if let Some(tokens) = &kept.tokens {
            self.1.add(&tokens.access_token);
            self.1.add(tokens.refresh_token.as_deref().unwrap_or_default());
        }
        if let Some(client) = &kept.client {
            self.1.add(client.client_secret.as_deref().unwrap_or_default());
        }
        self.0.save(resource, kept);
    }
}

/// The headless step, recording the codes it brings back.
#[derive(Debug)]
struct RecordingStep(Headless, Seen);

impl rpcwire::mcp::auth::AuthorizationStep for RecordingStep {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a rpcwire::mcp::auth::Url,
        redirect_uri: &'a rpcwire::mcp::auth::Url,
    ) -> rpcwire::mcp::auth::StepFuture<'a> {
        Box::pin(async move {
            let back = self.0.authorize(authorization_url, redirect_uri).await?;
            for (name, value) in back.query_pairs() {
                if name == "code" {
                    self.1.add(&value);
                }
            }
            Ok(back)
        })
    }
}

#[cfg(feature = "tracing")]
#[test]
fn no_token_secret_or_code_shows_in_logs_errors_or_debug_output() {
    let Some(providers) = providers() else {
        return;
    };
    let seen = Seen::default();
    let none = tracing_subscriber::fmt::format::FmtSpan::NONE;
    let (texts, logs) = log_capture::capture_logs(none, async {
        let mut texts = Vec::new();
        let url = protected_server(&providers.issuer).await;
        let authorizer = Authorizer::new("secrets-test")
            .with_store(RecordingStore(Default::default(), seen.clone()))
            .with_step(RecordingStep(Headless::default(), seen.clone()));
        texts.push(format!("{authorizer:?}"));
        let client = McpClient::builder("secrets-test", "1")
            .with_authorizer(authorizer.clone())
            .connect_http(url.parse().unwrap())
            .await
            .expect("authorized");
        let called = client.call_tool("whoami", json!({})).await;
        texts.push(format!("{called:?}"));
        texts.push(format!("{client:?}"));
        client.close().await;
        // A confidential client's secret, refused by the provider: the error says so
        // without it.
        let secret = "s3cret-never-shown";
        seen.add(secret);
        let refused = McpClient::builder("secrets-test", "1")
            .with_authorizer(Authorizer::new("secrets-test").with_client_credentials("robot", secret))
            .connect_http(url.parse().unwrap())
            .await;
        let error = refused.expect_err("a wrong secret is refused");
        texts.push(format!("{error}"));
        texts.push(format!("{error:?}"));
        // Tokens the server refuses: its challenge and error body.
        let http = http_client();
        let mut tokens = seen.all();
        tokens.push("not-a-jwt-secret".to_owned());
        seen.add("not-a-jwt-secret");
        for token in tokens {
            let (_, challenge, body) = post(&http, &url, Some(&token), initialize()).await;
            texts.push(challenge);
            texts.push(body.to_string());
        }
        let garbage = post(&http, &url, Some("not-a-jwt-secret"), initialize()).await;
        texts.push(format!("{garbage:?}"));
        texts
    });
    let secrets = seen.all();
    assert!(
        secrets.len() >= 3,
        "an access token, a code and a secret at least: {}",
        secrets.len()
    );
    for secret in &secrets {
        assert!(
            !logs.contains(secret.as_str()),
            "a credential in the logs:\n{logs}"
        );
        for text in &texts {
            assert!(!text.contains(secret.as_str()), "a credential in {text}");
        }
    }
    assert!(
        !texts.is_empty() && texts.iter().any(|t| t.contains("refused")),
        "{texts:?}"
    );
}

/// Runs an SDK client script: every check of its report passed; its stdout.
fn sdk_run(command: &mut Command, what: &str) -> String {
    let finished = run(command, Duration::from_secs(90)).expect("run the SDK client");
    assert!(finished.success(), "{}", finished.describe(what));
    let line = finished.stdout.lines().last().unwrap_or_default();
    let report: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{what} report {line:?}: {e}"));
    let checks = report["checks"].as_array().expect("checks");
    assert!(checks.len() >= 5, "{what}: {report}");
    assert!(
        checks.iter().all(|check| check[1] == true),
        "{}",
        finished.describe(what)
    );
    finished.stdout
}

#[test]
fn the_official_sdk_clients_authorize_with_the_server_and_the_gateway() {
    let (Some(providers), Some(modules), Some(python)) =
        (providers(), mcp_peers::node_modules(), mcp_peers::python())
    else {
        return;
    };
    let server = protected_server_example(&providers.issuer);
    let gateway = protected_gateway_example(&providers.issuer);
    let typescript = |args: &[&str]| {
        let mut command = Command::new(mcp_peers::node(&modules));
        command
            .env("NODE_PATH", &modules)
            .arg(mcp_peers::mcp_dir().join("ts_oauth_client.cjs"))
            .args(args);
        command
    };
    let python_client = |args: &[&str]| {
        let mut command = Command::new(&python);
        command
            .arg(mcp_peers::mcp_dir().join("py_oauth_client.py"))
            .args(args);
        command
    };
    for (what, mut command) in [
        ("TypeScript SDK, server", typescript(&[&server.address, "whoami"])),
        ("Python SDK, server", python_client(&[&server.address, "whoami"])),
    ] {
        let stdout = sdk_run(&mut command, what);
        assert!(stdout.contains(r#""subject":"alice""#), "{what}: {stdout}");
        assert!(stdout.contains("mcp:whoami"), "{what}: {stdout}");
    }
    for (what, mut command) in [
        ("TypeScript SDK, gateway", typescript(&[&gateway.address])),
        ("Python SDK, gateway", python_client(&[&gateway.address])),
    ] {
        let stdout = sdk_run(&mut command, what);
        assert!(
            stdout.contains("whoami"),
            "{what} lists the tools behind the gateway: {stdout}"
        );
    }
}

/// A memory store shared with the test, which may change what is kept.
#[derive(Debug, Clone, Default)]
struct SharedStore(std::sync::Arc<rpcwire::mcp::auth::MemoryStore>);

impl rpcwire::mcp::auth::TokenStore for SharedStore {
    fn load(&self, resource: &str) -> rpcwire::mcp::auth::Kept {
        self.0.load(resource)
    }
    fn save(&self, resource: &str, kept: &rpcwire::mcp::auth::Kept) {
        self.0.save(resource, kept)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_before_it_is_sent() {
    use rpcwire::mcp::auth::TokenStore;
    let Some(providers) = providers() else {
        return;
    };
    let url = protected_server(&providers.issuer).await;
    let store = SharedStore::default();
    let client = McpClient::builder("refresh-test", "1")
        .with_authorizer(Authorizer::new("refresh-test").with_store(store.clone()))
        .connect_http(url.parse().unwrap())
        .await
        .expect("authorized");
    let mut kept = store.load(&url);
    let first = kept.tokens.clone().expect("tokens");
    assert!(
        first.refresh_token.is_some(),
        "offline access asked for and granted: {first:?}"
    );
    // The access token's time is up: the next call refreshes it first.
    kept.tokens.as_mut().unwrap().expires_at = Some(1);
    store.save(&url, &kept);
    client
        .call_tool("whoami", json!({}))
        .await
        .expect("called with a refreshed token");
    let refreshed = store.load(&url).tokens.expect("tokens");
    assert_ne!(refreshed.access_token, first.access_token, "a new access token");
    assert!(!refreshed.is_expired());
    // A refresh token the provider no longer takes: the client authorizes again.
    let mut kept = store.load(&url);
    let tokens = kept.tokens.as_mut().unwrap();
    tokens.expires_at = Some(1);
    tokens.refresh_token = Some("revoked".to_owned());
    store.save(&url, &kept);
    client
        .call_tool("whoami", json!({}))
        .await
        .expect("authorized again");
    assert!(!store.load(&url).tokens.unwrap().is_expired());
    client.close().await;
}
