//! TLS end to end on 127.0.0.1, with certificates made by the test (rcgen): rpcwire's HTTPS
//! and WSS server and its clients — HTTP/2 chosen in ALPN and one connection carrying every
//! call, HTTP/1.1 when asked, sessions resumed, mutual TLS, the certificate read again when
//! its files change, the server name sent (SNI) — and every refusal said in words, within its timeout: an unknown
//! issuer, an expired certificate, a wrong name, plain HTTP to the TLS port, TLS to a plain
//! port, a client without the certificate the server requires, a handshake that never comes;
//! and a WebSocket message far over the limit, written whole over wss, still reads its 1009.
#![cfg(feature = "http")]

#[path = "support/certs.rs"]
mod certs;
#[path = "support/websocket_overflow.rs"]
mod websocket_overflow;

use std::time::Duration;

use certs::{Authority, LOCAL};
use rpcwire::dispatch::Router;
use rpcwire::proxy::{Dial, Upstream, UpstreamGroup};
use rpcwire::transport::http::{HttpClientTransport, HttpServer, HttpVersion};
use rpcwire::transport::tls::{ClientTls, ServerTls};
use rpcwire::transport::websocket::WebSocketTransport;
use rpcwire::transport::{Peer, PeerError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn router() -> Router {
    let mut router = Router::new();
    router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
    router
}

/// An HTTPS server of `router()` with `tls`; its address.
async fn serve(tls: ServerTls) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(HttpServer::new(router()).with_tls(tls).serve(listener));
    address
}

fn trusting(authority: &Authority) -> ClientTls {
    ClientTls::builder()
        .without_system_roots()
        .add_ca_pem(authority.pem.cert.as_bytes())
        .unwrap()
        .build()
        .unwrap()
}

/// A client trusting `authority` and showing `certificate`.
fn showing(authority: &Authority, certificate: &certs::Pem) -> ClientTls {
    ClientTls::builder()
        .without_system_roots()
        .add_ca_pem(authority.pem.cert.as_bytes())
        .unwrap()
        .with_client_certificate_pem(certificate.cert.as_bytes(), certificate.key.as_bytes())
        .unwrap()
        .build()
        .unwrap()
}

fn server_tls(pem: &certs::Pem) -> ServerTls {
    ServerTls::from_pem(pem.cert.as_bytes(), pem.key.as_bytes()).unwrap()
}

/// A client of `url` through `tls`, its calls bounded by a 5 s exchange timeout.
fn client(url: &str, tls: ClientTls, version: HttpVersion) -> (Peer, HttpClientTransport) {
    let transport = HttpClientTransport::new(url.parse().unwrap())
        .unwrap()
        .with_tls(tls)
        .with_http_version(version)
        .with_timeout(Duration::from_secs(5));
    (Peer::new(transport.clone(), Router::new()), transport)
}

/// The message of the error a call through `peer` ends with.
async fn refusal(peer: &Peer) -> String {
    let started = std::time::Instant::now();
    let error: PeerError = peer.call::<_, i64>("subtract", (1, 2)).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "refused within the timeout"
    );
    error.to_string()
}

#[tokio::test]
async fn https_calls_go_on_one_http2_connection_when_the_server_offers_it() {
    let authority = Authority::new("rpcwire test CA");
    let address = serve(server_tls(&authority.server(LOCAL))).await;
    for host in ["localhost", "127.0.0.1"] {
        let (peer, transport) = client(
            &format!("https://{host}:{}/", address.port()),
            trusting(&authority),
            HttpVersion::Auto,
        );
        let calls: Vec<_> = (0..50).map(|i| peer.call::<_, i64>("subtract", (i, 1))).collect();
        let answers = futures::future::join_all(calls).await;
        for (i, answer) in answers.into_iter().enumerate() {
            assert_eq!(answer.unwrap(), i as i64 - 1);
        }
        let stats = transport.stats();
        assert_eq!(
            (stats.connections, stats.tls_handshakes, stats.http2),
            (1, 1, 1),
            "{host}: {stats:?}"
        );
    }
}

#[tokio::test]
async fn http1_when_asked_and_sessions_resumed_on_new_connections() {
    let authority = Authority::new("rpcwire test CA");
    let address = serve(server_tls(&authority.server(LOCAL))).await;
    let url = format!("https://localhost:{}/", address.port());
    let tls = trusting(&authority);
    let (peer, transport) = client(&url, tls.clone(), HttpVersion::Http1);
    assert_eq!(peer.call::<_, i64>("subtract", (42, 23)).await.unwrap(), 19);
    let stats = transport.stats();
    assert_eq!(
        (stats.connections, stats.http2, stats.tls_resumed),
        (1, 0, 0),
        "{stats:?}"
    );
    // A new client with the same configuration resumes the session (TLS 1.3 tickets).
    let (again, transport) = client(&url, tls, HttpVersion::Http1);
    assert_eq!(again.call::<_, i64>("subtract", (2, 1)).await.unwrap(), 1);
    let stats = transport.stats();
    assert_eq!((stats.tls_handshakes, stats.tls_resumed), (1, 1), "{stats:?}");
}

#[tokio::test]
async fn an_http2_only_client_is_refused_by_a_server_without_http2_and_names_go_in_sni() {
    // A bare rustls server offering only HTTP/1.1 in ALPN.
    let authority = Authority::new("rpcwire test CA");
    let pem = authority.server(LOCAL);
    let chain = rustls::pki_types::CertificateDer::from_pem_slice(pem.cert.as_bytes()).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(pem.key.as_bytes()).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![chain], key)
    .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls_acceptor(config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // The names clients sent (SNI), as the server saw them.
    let (named, mut names) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (acceptor, named) = (acceptor.clone(), named.clone());
            tokio::spawn(async move {
                if let Ok(mut tls) = acceptor.accept(stream).await {
                    let _ = named.send(tls.get_ref().1.server_name().map(str::to_owned));
                    let _ = tls.read(&mut [0u8; 1024]).await;
                }
            });
        }
    });
    let (peer, _) = client(
        &format!("https://localhost:{port}/"),
        trusting(&authority),
        HttpVersion::Http2,
    );
    let message = refusal(&peer).await;
    assert!(
        message.contains("speaks none of the protocols asked for in ALPN"),
        "{message}"
    );
    // HTTP/1.1 is agreed; the name went in SNI.
    let (peer, _) = client(
        &format!("https://localhost:{port}/"),
        trusting(&authority),
        HttpVersion::Auto,
    );
    let _ = tokio::time::timeout(
        Duration::from_millis(500),
        peer.call::<_, i64>("subtract", (1, 2)),
    )
    .await;
    let name = tokio::time::timeout(Duration::from_secs(5), names.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        name.as_deref(),
        Some("localhost"),
        "the server name is sent (SNI)"
    );
}

fn tokio_rustls_acceptor(config: rustls::ServerConfig) -> tokio_rustls::TlsAcceptor {
    tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config))
}

use rustls::pki_types::pem::PemObject;

#[tokio::test]
async fn every_certificate_refusal_says_why() {
    let authority = Authority::new("rpcwire test CA");
    let stranger = Authority::new("someone else's CA");
    let cases = [
        (
            server_tls(&stranger.server(LOCAL)),
            "localhost",
            "not issued by an authority this client trusts",
        ),
        (
            server_tls(&authority.expired_server()),
            "localhost",
            "has expired",
        ),
        (
            server_tls(&authority.server(&["node.example"])),
            "localhost",
            "is not valid for the name localhost",
        ),
    ];
    for (tls, host, expected) in cases {
        let address = serve(tls).await;
        let url = format!("https://{host}:{}/", address.port());
        let (peer, transport) = client(&url, trusting(&authority), HttpVersion::Auto);
        let message = refusal(&peer).await;
        assert!(message.contains(expected), "{expected}: {message}");
        assert!(
            message.contains("TLS handshake with localhost failed"),
            "{message}"
        );
        assert_eq!(transport.stats().tls_handshakes, 0, "nothing accepted silently");
    }
    // With no roots at all, the message says so.
    let address = serve(server_tls(&authority.server(LOCAL))).await;
    let none = ClientTls::builder().without_system_roots().build().unwrap();
    let (peer, _) = client(
        &format!("https://localhost:{}/", address.port()),
        none,
        HttpVersion::Auto,
    );
    let message = refusal(&peer).await;
    assert!(message.contains("it trusts none"), "{message}");
}

#[tokio::test]
async fn plain_http_and_tls_to_the_wrong_port_are_told_apart() {
    let authority = Authority::new("rpcwire test CA");
    let tls_port = serve(server_tls(&authority.server(LOCAL))).await.port();
    // Plain HTTP to the TLS port: a 400 that says so, to any client.
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", tls_port))
        .await
        .unwrap();
    socket
        .write_all(b"POST / HTTP/1.1\r\nhost: localhost\r\ncontent-length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), socket.read_to_string(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.ends_with("This port speaks HTTPS: the request was sent in plain HTTP."),
        "{answer}"
    );
    let (peer, _) = client(
        &format!("http://localhost:{tls_port}/"),
        trusting(&authority),
        HttpVersion::Auto,
    );
    let message = refusal(&peer).await;
    assert!(message.contains("HTTP status 400"), "{message}");
    // TLS to a plain port.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_port = listener.local_addr().unwrap().port();
    tokio::spawn(HttpServer::new(router()).serve(listener));
    let (peer, _) = client(
        &format!("https://localhost:{plain_port}/"),
        trusting(&authority),
        HttpVersion::Auto,
    );
    let message = refusal(&peer).await;
    assert!(message.contains("did not answer in TLS"), "{message}");
}

#[tokio::test]
async fn mutual_tls_refuses_a_client_without_its_certificate() {
    let authority = Authority::new("rpcwire test CA");
    let clients = Authority::new("rpcwire clients CA");
    let tls = server_tls(&authority.server(LOCAL))
        .with_client_ca_pem(clients.pem.cert.as_bytes())
        .unwrap();
    let address = serve(tls).await;
    let url = format!("https://localhost:{}/", address.port());
    let (peer, _) = client(&url, trusting(&authority), HttpVersion::Auto);
    let message = refusal(&peer).await;
    assert!(message.contains("requires a client certificate"), "{message}");
    // A certificate from another authority: refused too.
    let other = authority.client("intruder");
    let wrong = showing(&authority, &other);
    let (peer, _) = client(&url, wrong, HttpVersion::Auto);
    let message = refusal(&peer).await;
    assert!(
        message.contains("did not accept the client certificate"),
        "{message}"
    );
    let mine = clients.client("gateway");
    let shown = showing(&authority, &mine);
    let (peer, _) = client(&url, shown, HttpVersion::Auto);
    assert_eq!(peer.call::<_, i64>("subtract", (42, 23)).await.unwrap(), 19);
}

#[tokio::test]
async fn a_renewed_certificate_is_served_without_a_restart() {
    let directory = std::env::temp_dir().join(format!("rpcwire-tls-reload-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let (cert, key) = (directory.join("cert.pem"), directory.join("key.pem"));
    let old = Authority::new("old CA");
    let new = Authority::new("new CA");
    let first = old.server(LOCAL);
    std::fs::write(&cert, &first.cert).unwrap();
    std::fs::write(&key, &first.key).unwrap();
    let address = serve(ServerTls::from_pem_files(&cert, &key).unwrap()).await;
    let url = format!("https://localhost:{}/", address.port());
    let (peer, _) = client(&url, trusting(&old), HttpVersion::Http1);
    assert_eq!(peer.call::<_, i64>("subtract", (3, 1)).await.unwrap(), 2);
    // Renewed by another authority: a client trusting only the new one gets in once the
    // files have been looked at again (at most a second later).
    let renewed = new.server(LOCAL);
    std::fs::write(&key, &renewed.key).unwrap();
    std::fs::write(&cert, &renewed.cert).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (peer, _) = client(&url, trusting(&new), HttpVersion::Http1);
        match peer.call::<_, i64>("subtract", (3, 1)).await {
            Ok(answer) => {
                assert_eq!(answer, 2);
                break;
            }
            Err(error) => {
                assert!(std::time::Instant::now() < deadline, "never reloaded: {error}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    // Half-written files keep the certificate served.
    std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\ntruncated").unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (peer, _) = client(&url, trusting(&new), HttpVersion::Http1);
    assert_eq!(peer.call::<_, i64>("subtract", (3, 1)).await.unwrap(), 2);
    std::fs::remove_dir_all(&directory).unwrap();
}

#[tokio::test]
async fn a_handshake_that_never_comes_is_cut_at_its_deadline() {
    let authority = Authority::new("rpcwire test CA");
    let tls = server_tls(&authority.server(LOCAL)).with_handshake_timeout(Duration::from_millis(300));
    let address = serve(tls).await;
    for first in [&b""[..], &[22u8, 3, 1][..]] {
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        socket.write_all(first).await.unwrap();
        let started = std::time::Instant::now();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "closed by the server");
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn wss_clients_call_over_tls() {
    let authority = Authority::new("rpcwire test CA");
    let address = serve(server_tls(&authority.server(LOCAL))).await;
    let url = format!("wss://localhost:{}/", address.port());
    let transport = WebSocketTransport::connect_with(&url, Some(trusting(&authority)))
        .await
        .unwrap();
    let peer = Peer::new(transport, Router::new());
    assert_eq!(peer.call::<_, i64>("subtract", (42, 23)).await.unwrap(), 19);
    // Without the authority: refused, saying why.
    let error = WebSocketTransport::connect_with(&url, Some(trusting(&Authority::new("x"))))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("not issued by an authority"),
        "{error}"
    );
    for address in ["https://localhost/", "not a URL", "wss://user@localhost/"] {
        let refused = WebSocketTransport::connect(address).await.unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput, "{refused}");
    }
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused = WebSocketTransport::connect(&format!("ws://127.0.0.1:{port}/"))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("cannot connect to 127.0.0.1"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_gateway_forwards_to_https_and_wss_upstreams() {
    let authority = Authority::new("rpcwire test CA");
    let address = serve(server_tls(&authority.server(LOCAL))).await;
    let dial = Dial::new().with_tls(trusting(&authority));
    for scheme in ["https", "wss"] {
        let upstream = Upstream::dial(&format!("{scheme}://localhost:{}/", address.port()), &dial).unwrap();
        let group = UpstreamGroup::new(vec![upstream]);
        let params = rpcwire::RawJson::new("[42,23]").unwrap();
        let answer = group.call("subtract", Some(&params)).await.unwrap();
        assert_eq!(answer.as_str(), "19", "{scheme}");
    }
    // An upstream address the gateway cannot serve stops it at start-up.
    let refused = Upstream::dial("ftps://localhost/", &dial).unwrap_err();
    assert!(refused.to_string().contains("expected stdio"), "{refused}");
}

#[tokio::test]
async fn h2c_when_told_over_plain_tcp() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(HttpServer::new(router()).serve(listener));
    let transport = HttpClientTransport::new(format!("http://{address}/").parse().unwrap())
        .unwrap()
        .with_http_version(HttpVersion::Http2)
        .with_max_streams(4);
    let peer = Peer::new(transport.clone(), Router::new());
    let calls: Vec<_> = (0..20).map(|i| peer.call::<_, i64>("subtract", (i, 1))).collect();
    for (i, answer) in futures::future::join_all(calls).await.into_iter().enumerate() {
        assert_eq!(answer.unwrap(), i as i64 - 1);
    }
    let stats = transport.stats();
    assert_eq!(
        (stats.connections, stats.http2, stats.tls_handshakes),
        (1, 1, 0),
        "{stats:?}"
    );
}

#[tokio::test]
async fn a_message_far_over_the_limit_written_whole_over_wss_still_reads_its_1009() {
    // As tests/transport_websocket.rs does over plain TCP, through TLS.
    use rustls::pki_types::pem::PemObject;
    let authority = Authority::new("rpcwire test CA");
    let address = serve(server_tls(&authority.server(LOCAL))).await;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_slice(authority.pem.cert.as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let socket = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, socket)
        .await
        .unwrap();
    websocket_overflow::a_message_far_over_the_limit_reads_its_1009(socket, "localhost").await;
}
