//! The servers of the transports section, each run in a child process of its own (this
//! bench binary started again with `--transport-server KIND`) on one tokio thread, so that
//! its CPU time is its own: rpcwire's `HttpServer`, jsonrpsee's server, and the floors — a
//! bare hyper server reading the request body and answering a fixed body, and bare WebSocket servers (tokio-tungstenite,
//! fastwebsockets) answering a fixed text.

use std::convert::Infallible;
use std::io::{BufRead, Write};
use std::net::SocketAddr;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use http_body_util::{Empty, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;

/// The floors' fixed answer (what rpcwire answers to [`super::REQUEST`]).
pub(crate) const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":19}"#;

/// The server kinds, as passed after `--transport-server`.
pub(crate) const RPCWIRE: &str = "rpcwire";
pub(crate) const JSONRPSEE: &str = "jsonrpsee";
pub(crate) const FLOOR_HYPER: &str = "floor-hyper";
pub(crate) const FLOOR_TUNGSTENITE: &str = "floor-tungstenite";
pub(crate) const FLOOR_FASTWEBSOCKETS: &str = "floor-fastwebsockets";

/// Runs the server `kind` on 127.0.0.1 until stdin closes; prints `listening on ADDR` first.
pub(crate) fn serve(kind: &str) {
    run_child_server(async {
        match kind {
            RPCWIRE => rpcwire().await,
            JSONRPSEE => jsonrpsee().await,
            FLOOR_HYPER | FLOOR_TUNGSTENITE | FLOOR_FASTWEBSOCKETS => floor(kind).await,
            other => panic!("unknown transport server {other:?}"),
        }
    });
}

/// Runs `server` on one tokio thread until the process's stdin closes (the parent closes it
/// to stop us, or dies, which closes it too).
pub(crate) fn run_child_server(server: impl std::future::Future<Output = ()>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    std::thread::spawn(|| {
        let mut line = String::new();
        while std::io::stdin().lock().read_line(&mut line).is_ok_and(|n| n > 0) {}
        std::process::exit(0);
    });
    runtime.block_on(server);
}

pub(crate) async fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1")
}

pub(crate) fn announce(address: SocketAddr) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on {address}").expect("stdout");
    out.flush().expect("stdout");
}

/// rpcwire's server as a user starts it: a Router with `subtract`, `HttpServer::serve`.
async fn rpcwire() {
    let listener = bind().await;
    let mut router = rpcwire::dispatch::Router::new();
    router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
    announce(listener.local_addr().expect("local address"));
    rpcwire::transport::http::HttpServer::new(router)
        .serve(listener)
        .await
        .expect("rpcwire serves");
}

/// jsonrpsee's server (HTTP and WebSocket on one port, its defaults) with the same handler.
async fn jsonrpsee() {
    let server = jsonrpsee::server::Server::builder()
        .build("127.0.0.1:0")
        .await
        .expect("jsonrpsee binds");
    let mut module = jsonrpsee::RpcModule::new(());
    module
        .register_method("subtract", |params, _, _| {
            let (a, b): (i64, i64) = params.parse()?;
            Ok::<i64, jsonrpsee::types::ErrorObjectOwned>(a - b)
        })
        .expect("register subtract");
    announce(server.local_addr().expect("local address"));
    let handle = server.start(module);
    handle.stopped().await;
}

/// The floors: hyper's HTTP/1 connection serving each request with a fixed answer, or
/// upgrading it to a WebSocket that answers every text message with a fixed text.
async fn floor(kind: &str) {
    let listener = bind().await;
    announce(listener.local_addr().expect("local address"));
    let kind: &'static str = match kind {
        FLOOR_HYPER => FLOOR_HYPER,
        FLOOR_TUNGSTENITE => FLOOR_TUNGSTENITE,
        _ => FLOOR_FASTWEBSOCKETS,
    };
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let _ = socket.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| async move {
                Ok::<_, Infallible>(match kind {
                    FLOOR_HYPER => {
                        // Every JSON-RPC server reads the request: so does the floor.
                        let _ = http_body_util::BodyExt::collect(request.into_body()).await;
                        fixed_body()
                    }
                    FLOOR_TUNGSTENITE => tungstenite_upgrade(request),
                    _ => fastwebsockets_upgrade(request),
                })
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service)
                .with_upgrades()
                .await;
        });
    }
}

type Body = http_body_util::Either<Full<Bytes>, Empty<Bytes>>;

fn fixed_body() -> Response<Body> {
    let mut response = Response::new(http_body_util::Either::Left(Full::new(Bytes::from_static(
        ANSWER.as_bytes(),
    ))));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn tungstenite_upgrade(mut request: Request<Incoming>) -> Response<Body> {
    let key = request
        .headers()
        .get(hyper::header::SEC_WEBSOCKET_KEY)
        .expect("a WebSocket key")
        .clone();
    let upgrading = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let upgraded = upgrading.await.expect("upgraded");
        let mut socket = tokio_tungstenite::WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            Some(tungstenite_config()),
        )
        .await;
        while let Some(Ok(message)) = socket.next().await {
            if message.is_text() && socket.send(Message::text(ANSWER)).await.is_err() {
                break;
            }
        }
    });
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    Response::builder()
        .status(hyper::StatusCode::SWITCHING_PROTOCOLS)
        .header(hyper::header::CONNECTION, "upgrade")
        .header(hyper::header::UPGRADE, "websocket")
        .header(hyper::header::SEC_WEBSOCKET_ACCEPT, accept)
        .body(http_body_util::Either::Right(Empty::new()))
        .expect("a response")
}

fn fastwebsockets_upgrade(mut request: Request<Incoming>) -> Response<Body> {
    let (response, upgrading) = fastwebsockets::upgrade::upgrade(&mut request).expect("an upgrade request");
    tokio::spawn(async move {
        let socket = upgrading.await.expect("upgraded");
        let mut socket = fastwebsockets::FragmentCollector::new(socket);
        while let Ok(frame) = socket.read_frame().await {
            match frame.opcode {
                fastwebsockets::OpCode::Text => {
                    let answer =
                        fastwebsockets::Frame::text(fastwebsockets::Payload::Borrowed(ANSWER.as_bytes()));
                    if socket.write_frame(answer).await.is_err() {
                        break;
                    }
                }
                fastwebsockets::OpCode::Close => break,
                _ => {}
            }
        }
    });
    response.map(http_body_util::Either::Right)
}

/// tokio-tungstenite with its read buffer cut from 128 KiB (zero-filled before every read)
/// to the size rpcwire uses.
fn tungstenite_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(8 << 10)
}
