//! TLS against peers no one here wrote, on 127.0.0.1, with certificates made by the test:
//!
//! - nginx (Debian's, HTTP/2 and HTTP/1.1 by ALPN, WebSocket upgrades) terminating TLS in
//!   front of `examples/http_server` and `examples/mcp_server --http`: rpcwire's HTTP client
//!   over HTTP/2 (one connection for 50 calls at once) and HTTP/1.1, the WebSocket client over
//!   wss, `examples/gateway` forwarding to it over https and wss, `examples/mcp_client` and
//!   the Python MCP SDK client through `examples/mcp_gateway --connect` to it;
//! - rpcwire's own TLS servers (`--tls-cert`/`--tls-key`) called by Python's `requests` and
//!   `websockets` (the interop scripts, unchanged) and by the official MCP SDK clients
//!   (Python over httpx, TypeScript over Node's fetch), each trusting the test's authority
//!   the way its users do (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`); the MCP server's Host check
//!   (DNS rebinding) the same over TLS.
#![cfg(all(unix, feature = "mcp", feature = "http"))]

#[path = "support/certs.rs"]
mod certs;
#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/listening_child.rs"]
mod listening_child;
#[path = "support/mcp_peers.rs"]
mod mcp_peers;
#[path = "support/nginx_server.rs"]
mod nginx_server;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use certs::{Authority, LOCAL};
use example_binary::example_binary;
use listening_child::start_listening;
use mcp_peers::assert_report;
use nginx_server::Nginx;
use python_peer::{run, CHILD_TIMEOUT};
use rpcwire::dispatch::Router;
use rpcwire::transport::http::{HttpClientTransport, HttpVersion};
use rpcwire::transport::tls::ClientTls;
use rpcwire::transport::websocket::WebSocketTransport;
use rpcwire::transport::Peer;

/// A directory of this test's with the authority's certificate (`ca.pem`) and a server
/// certificate and key it signed (`cert.pem`, `key.pem`), removed when dropped.
struct Files {
    directory: PathBuf,
    authority: Authority,
}

impl Files {
    fn new(name: &str) -> Files {
        let directory = std::env::temp_dir().join(format!("rpcwire-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let authority = Authority::new("rpcwire test CA");
        let server = authority.server(LOCAL);
        std::fs::write(directory.join("ca.pem"), &authority.pem.cert).unwrap();
        std::fs::write(directory.join("cert.pem"), &server.cert).unwrap();
        std::fs::write(directory.join("key.pem"), &server.key).unwrap();
        Files { directory, authority }
    }

    fn path(&self, name: &str) -> String {
        self.directory.join(name).to_str().unwrap().to_owned()
    }

    fn client_tls(&self) -> ClientTls {
        ClientTls::builder()
            .without_system_roots()
            .add_ca_pem(self.authority.pem.cert.as_bytes())
            .unwrap()
            .build()
            .unwrap()
    }

    /// nginx in front of `backend` with this directory's certificate.
    fn nginx(&self, backend: &str) -> Option<Nginx> {
        let cert = std::fs::read_to_string(self.directory.join("cert.pem")).unwrap();
        let key = std::fs::read_to_string(self.directory.join("key.pem")).unwrap();
        Nginx::start(&cert, &key, backend)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// `host:port` of a listening child's address (`127.0.0.1:PORT` or `http://…/mcp`).
fn host_port(address: &str) -> String {
    let rest = address.split_once("://").map_or(address, |(_, rest)| rest);
    rest.split('/').next().unwrap().to_owned()
}

/// `subtract(a, b)` through `peer`.
async fn subtract(peer: &Peer, a: i64, b: i64) -> i64 {
    tokio::time::timeout(Duration::from_secs(10), peer.call("subtract", (a, b)))
        .await
        .expect("answered in time")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpcwire_clients_and_the_gateway_through_nginx() {
    let files = Files::new("nginx-http");
    let backend = start_listening(&example_binary("http_server"), &["--listen", "127.0.0.1:0"]);
    let Some(nginx) = files.nginx(&host_port(&backend.address)) else {
        return;
    };
    // HTTP/2, as nginx offers it: one connection for 50 calls at once.
    let transport = HttpClientTransport::new(nginx.url("https", "/").parse().unwrap())
        .unwrap()
        .with_tls(files.client_tls());
    let peer = Peer::new(transport.clone(), Router::new());
    let calls: Vec<_> = (0..50).map(|i| subtract(&peer, i, 1)).collect();
    let answers = futures::future::join_all(calls).await;
    assert_eq!(answers, (0..50).map(|i| i - 1).collect::<Vec<_>>());
    let stats = transport.stats();
    assert_eq!((stats.connections, stats.http2), (1, 1), "{stats:?}");
    // HTTP/1.1 when asked.
    let transport = HttpClientTransport::new(nginx.url("https", "/").parse().unwrap())
        .unwrap()
        .with_tls(files.client_tls())
        .with_http_version(HttpVersion::Http1);
    let peer = Peer::new(transport.clone(), Router::new());
    assert_eq!(subtract(&peer, 42, 23).await, 19);
    assert_eq!(transport.stats().http2, 0);
    // WebSocket over TLS, upgraded through nginx.
    let socket = WebSocketTransport::connect_with(&nginx.url("wss", "/"), Some(files.client_tls()))
        .await
        .unwrap();
    let peer = Peer::new(socket, Router::new());
    assert_eq!(subtract(&peer, 7, 2).await, 5);
    // The gateway example forwarding to nginx over https and over wss.
    for scheme in ["https", "wss"] {
        let gateway = start_listening(
            &example_binary("gateway"),
            &[
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                &nginx.url(scheme, "/"),
                "--ca",
                &files.path("ca.pem"),
            ],
        );
        let front =
            HttpClientTransport::new(format!("http://{}/", gateway.address).parse().unwrap()).unwrap();
        let peer = Peer::new(front, Router::new());
        assert_eq!(
            subtract(&peer, 100, 1).await,
            99,
            "through the gateway over {scheme}"
        );
    }
    // The gateway serving TLS itself, in front of nginx.
    let gateway = start_listening(
        &example_binary("gateway"),
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &nginx.url("https", "/"),
            "--ca",
            &files.path("ca.pem"),
            "--tls-cert",
            &files.path("cert.pem"),
            "--tls-key",
            &files.path("key.pem"),
        ],
    );
    let port = gateway.address.rsplit_once(':').unwrap().1;
    let front = HttpClientTransport::new(format!("https://localhost:{port}/").parse().unwrap())
        .unwrap()
        .with_tls(files.client_tls());
    let peer = Peer::new(front.clone(), Router::new());
    assert_eq!(
        subtract(&peer, 10, 4).await,
        6,
        "https to the gateway, https behind it"
    );
    assert_eq!(front.stats().http2, 1, "the gateway offers HTTP/2 in ALPN");
    // A gateway given an upstream it cannot use stops at start-up with the reason.
    let refused = run(
        Command::new(example_binary("gateway")).args(["--upstream", "ftp://localhost/"]),
        CHILD_TIMEOUT,
    )
    .unwrap();
    assert!(!refused.success());
    assert!(
        refused.stderr.contains("cannot use address"),
        "{}",
        refused.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_clients_through_nginx() {
    let files = Files::new("nginx-mcp");
    let server = start_listening(&example_binary("mcp_server"), &["--http", "127.0.0.1:0"]);
    let Some(nginx) = files.nginx(&host_port(&server.address)) else {
        return;
    };
    let url = nginx.url("https", "/mcp");
    // examples/mcp_client, trusting the authority with --ca.
    let called = run(
        Command::new(example_binary("mcp_client")).args([
            "--ca",
            &files.path("ca.pem"),
            "--call",
            "add",
            r#"{"a":5,"b":3}"#,
            &url,
        ]),
        CHILD_TIMEOUT,
    )
    .unwrap();
    assert!(called.success(), "{}", called.describe("mcp_client over https"));
    assert!(called.stdout.contains(r#""text":"8""#), "{}", called.stdout);
    // Without it: refused, saying why.
    let refused = run(
        Command::new(example_binary("mcp_client")).arg(&url),
        CHILD_TIMEOUT,
    )
    .unwrap();
    assert!(!refused.success());
    assert!(
        refused
            .stderr
            .contains("not issued by an authority this client trusts"),
        "{}",
        refused.stderr
    );
    // The Python SDK's stdio client through mcp_gateway --connect, over https to nginx.
    if let Some(python) = mcp_peers::python() {
        let gateway = example_binary("mcp_gateway");
        let ca = files.path("ca.pem");
        let mut command = Command::new(&python);
        command.arg(mcp_peers::mcp_dir().join("py_client.py")).args([
            "stdio",
            gateway.to_str().unwrap(),
            "--connect",
            &url,
            "--ca",
            &ca,
        ]);
        assert_report(
            &mut command,
            "py_client.py through mcp_gateway --connect over https",
            30,
        );
    }
}

#[test]
fn python_clients_against_rpcwire_tls_servers() {
    let Some(python) = python_peer::python() else {
        return;
    };
    let files = Files::new("python");
    let server = start_listening(
        &example_binary("http_server"),
        &[
            "--listen",
            "127.0.0.1:0",
            "--max-body",
            "65536",
            "--tls-cert",
            &files.path("cert.pem"),
            "--tls-key",
            &files.path("key.pem"),
        ],
    );
    let port = host_port(&server.address).rsplit_once(':').unwrap().1.to_owned();
    for (script, scheme, expected) in [
        ("py_http_client.py", "https", "http_client: checks="),
        ("py_ws_client.py", "wss", "ws_client: checks="),
    ] {
        let finished = run(
            Command::new(&python)
                .env("SSL_CERT_FILE", files.path("ca.pem"))
                .env("REQUESTS_CA_BUNDLE", files.path("ca.pem"))
                .arg(python_peer::interop_dir().join(script))
                .arg(format!("{scheme}://localhost:{port}/"))
                .arg("65536"),
            CHILD_TIMEOUT,
        )
        .unwrap();
        assert!(finished.success(), "{}", finished.describe(script));
        assert!(finished.stdout.contains(expected), "{}", finished.stdout);
    }
}

#[test]
fn mcp_sdk_clients_against_rpcwire_tls_servers() {
    let files = Files::new("mcp-sdk");
    let server = start_listening(
        &example_binary("mcp_server"),
        &[
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &files.path("cert.pem"),
            "--tls-key",
            &files.path("key.pem"),
        ],
    );
    assert!(server.address.starts_with("https://"), "{}", server.address);
    let url = server.address.replace("127.0.0.1", "localhost");
    // The DNS-rebinding check is the same over TLS: a foreign Host is refused.
    let port = host_port(&server.address).rsplit_once(':').unwrap().1.to_owned();
    for (host, status) in [("localhost", "HTTP/1.1 200"), ("evil.example", "HTTP/1.1 403")] {
        let answer = raw_https_post(&files, &port, host);
        assert!(answer.starts_with(status), "Host {host}: {answer}");
    }
    if let Some(python) = mcp_peers::python() {
        let mut command = Command::new(&python);
        command
            .env("SSL_CERT_FILE", files.path("ca.pem"))
            .arg(mcp_peers::mcp_dir().join("py_client.py"))
            .args(["http", &url]);
        assert_report(&mut command, "py_client.py over https", 32);
    }
    if let Some(modules) = mcp_peers::node_modules() {
        let mut command = Command::new(mcp_peers::node(&modules));
        command
            .env("NODE_PATH", &modules)
            .env("NODE_EXTRA_CA_CERTS", files.path("ca.pem"))
            .arg(mcp_peers::mcp_dir().join("ts_client.cjs"))
            .args(["http", &url]);
        assert_report(&mut command, "ts_client.cjs over https", 16);
        // The MCP gateway serving TLS (--listen with --tls-cert), mcp_server behind it.
        let server = example_binary("mcp_server");
        let gateway = start_listening(
            &example_binary("mcp_gateway"),
            &[
                "--stdio",
                &format!("exec '{}'", server.display()),
                "--listen",
                "127.0.0.1:0",
                "--tls-cert",
                &files.path("cert.pem"),
                "--tls-key",
                &files.path("key.pem"),
                // The client sends 100 calls at once: past the default of 64 under way per
                // session the gateway refuses the rest whenever the child answers slower than
                // the client sends (seen in CI under coverage); raised as in
                // tests/mcp_sdk_clients.rs, so that this checks TLS, not the limit.
                "--session-in-flight",
                "128",
            ],
        );
        assert!(gateway.address.starts_with("https://"), "{}", gateway.address);
        let mut command = Command::new(mcp_peers::node(&modules));
        command
            .env("NODE_PATH", &modules)
            .env("NODE_EXTRA_CA_CERTS", files.path("ca.pem"))
            .arg(mcp_peers::mcp_dir().join("ts_client.cjs"))
            .args(["http", &gateway.address.replace("127.0.0.1", "localhost")]);
        assert_report(&mut command, "ts_client.cjs over https to mcp_gateway", 16);
    }
}

/// One `initialize` POSTed over TLS to `/mcp` on `port` with `Host: host`, by hand (no
/// client library sets a foreign Host); the answer's head and body.
fn raw_https_post(files: &Files, port: &str, host: &str) -> String {
    use std::io::{Read, Write};
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates({
        let mut roots = rustls::RootCertStore::empty();
        use rustls::pki_types::pem::PemObject;
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(files.authority.pem.cert.as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
        roots
    })
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let connection = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let socket = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, socket);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    tls.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}
