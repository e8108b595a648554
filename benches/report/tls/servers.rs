//! The TLS section's servers, each in a child process on one tokio thread (this bench binary
//! with `--transport-server tls-KIND ARGS`): rpcwire's `HttpServer` serving TLS and its floor
//! (bare hyper + tokio-rustls), the TLS upstream of the gateways, and the gateways — rpcwire's
//! to a plain or an https upstream over HTTP/1.1 or HTTP/2, and the floors (hyper's pooled
//! client with hyper-rustls forwarding the bodies as they are).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::transports::server::{announce, bind, run_child_server, ANSWER};

/// Runs the server `kind` until stdin closes; prints `listening on ADDR` first.
pub(crate) fn serve(kind: &str, args: &[String]) {
    let args = args.to_vec();
    run_child_server(async move {
        let arg = |at: usize| args.get(at).cloned().unwrap_or_default();
        match kind {
            "server-rpcwire" => server_rpcwire(&arg(0), &arg(1)).await,
            "server-floor" => server_floor(&arg(0), &arg(1)).await,
            "upstream" => crate::gateway::servers::upstream(Some(server_tls(&arg(0), &arg(1)))).await,
            "gw-rpcwire-plain" => gateway(&arg(0), None, rpcwire::transport::http::HttpVersion::Http1).await,
            "gw-rpcwire-h1" => {
                gateway(
                    &arg(0),
                    Some(&arg(1)),
                    rpcwire::transport::http::HttpVersion::Http1,
                )
                .await
            }
            "gw-rpcwire-h2" => {
                gateway(
                    &arg(0),
                    Some(&arg(1)),
                    rpcwire::transport::http::HttpVersion::Http2,
                )
                .await
            }
            "gw-floor-h1" => floor_gateway(&arg(0), &arg(1), false).await,
            "gw-floor-h2" => floor_gateway(&arg(0), &arg(1), true).await,
            other => panic!("unknown TLS server {other:?}"),
        }
    });
}

fn server_tls(cert: &str, key: &str) -> rpcwire::transport::tls::ServerTls {
    rpcwire::transport::tls::ServerTls::from_pem_files(cert, key).expect("the bench's certificate")
}

/// rpcwire's server as a user starts it with TLS: a Router with `subtract`,
/// `HttpServer::with_tls`.
async fn server_rpcwire(cert: &str, key: &str) {
    let listener = bind().await;
    let mut router = rpcwire::dispatch::Router::new();
    router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
    announce(listener.local_addr().expect("local address"));
    rpcwire::transport::http::HttpServer::new(router)
        .with_tls(server_tls(cert, key))
        .serve(listener)
        .await
        .expect("rpcwire serves");
}

/// The floor: tokio-rustls's acceptor (the same certificate, ALPN `h2` and `http/1.1`), then
/// hyper's HTTP/1 connection reading each request body and answering a fixed body.
async fn server_floor(cert: &str, key: &str) {
    use rustls::pki_types::pem::PemObject;
    let chain = rustls::pki_types::CertificateDer::pem_file_iter(cert)
        .expect("the certificate file")
        .collect::<Result<Vec<_>, _>>()
        .expect("certificates");
    let key = rustls::pki_types::PrivateKeyDer::from_pem_file(key).expect("the key");
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("a server configuration");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = bind().await;
    announce(listener.local_addr().expect("local address"));
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let _ = socket.set_nodelay(true);
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(socket).await else {
                return;
            };
            let service = service_fn(|request: Request<Incoming>| async move {
                // Every JSON-RPC server reads the request: so does the floor.
                let _ = http_body_util::BodyExt::collect(request.into_body()).await;
                let mut response = Response::new(Full::new(Bytes::from_static(ANSWER.as_bytes())));
                response.headers_mut().insert(
                    hyper::header::CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static("application/json"),
                );
                Ok::<_, Infallible>(response)
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// rpcwire's gateway as a user builds it (`proxy::Gateway` behind `HttpServer`) to the
/// upstream at `url`, trusting the authority in the PEM file `ca` for `https://`, in HTTP
/// `version`.
async fn gateway(url: &str, ca: Option<&str>, version: rpcwire::transport::http::HttpVersion) {
    use rpcwire::proxy::{Dial, Upstream};
    let mut dial = Dial::new().with_max_response(64 << 20).with_http_version(version);
    if let Some(ca) = ca {
        let tls = rpcwire::transport::tls::ClientTls::builder()
            .without_system_roots()
            .add_ca_file(ca)
            .expect("the bench's authority")
            .build()
            .expect("a client configuration");
        dial = dial.with_tls(tls);
    }
    crate::gateway::servers::serve_gateway(Upstream::dial(url, &dial).expect("an upstream address")).await;
}

/// The floor of a gateway to an https upstream: hyper's pooled client with hyper-rustls
/// (HTTP/1.1, or HTTP/2 only), forwarding the bodies as they are.
async fn floor_gateway(url: &str, ca: &str, http2: bool) {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca).expect("the authority's file") {
        roots.add(cert.expect("a certificate")).expect("a root");
    }
    let config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
    // TCP_NODELAY, as rpcwire's connections have it (without it, HTTP/2's small frames wait
    // for delayed acknowledgements: 40 ms a request).
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.set_nodelay(true);
    http.enforce_http(false);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only();
    let client: Client<_, Full<Bytes>> = if http2 {
        Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build(connector.enable_http2().wrap_connector(http))
    } else {
        Client::builder(TokioExecutor::new()).build(connector.enable_http1().wrap_connector(http))
    };
    crate::gateway::servers::forward_with(client, url, false).await;
}
