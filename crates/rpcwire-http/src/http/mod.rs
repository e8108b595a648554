//! JSON-RPC over HTTP and WebSocket (`http` feature), on hyper 1, tower and fastwebsockets.
//!
//! [`HttpService`] is a `tower::Service` for `http::Request`s that answers through a
//! [`Router`](crate::dispatch::Router) with the same serving core as every other transport
//! (it mounts in axum with `Router::route_service`); [`HttpServer`] serves it on a TCP
//! listener with hyper, HTTP/1.1 and HTTP/2 on one port, and WebSocket on the same port (a
//! `GET` upgrade, served by a [`Peer`](crate::transport::Peer) per connection over a
//! [`WebSocketTransport`](crate::websocket::WebSocketTransport)). The clients go the other way: [`HttpClientTransport`] (frames
//! are POSTs) and [`WebSocketTransport::connect`](crate::websocket::WebSocketTransport::connect), so that a `Peer` calls HTTP and
//! WebSocket servers.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use rpcwire_http::http::HttpServer;
//!
//! let mut router = rpcwire_core::dispatch::Router::new();
//! router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! let address = listener.local_addr().unwrap();
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let server = tokio::spawn(HttpServer::new(router).serve_until(listener, async move {
//!     let _ = stopped.await;
//! }));
//!
//! // Any HTTP client will do; here a plain socket.
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
//! let body = r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#;
//! let request = format!(
//!     "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
//!     body.len()
//! );
//! socket.write_all(request.as_bytes()).await.unwrap();
//! let mut response = String::new();
//! socket.read_to_string(&mut response).await.unwrap();
//! assert!(response.starts_with("HTTP/1.1 200 OK"));
//! assert!(response.ends_with(r#"{"jsonrpc":"2.0","id":1,"result":19}"#));
//!
//! stop.send(()).unwrap();
//! server.await.unwrap().unwrap();
//! # });
//! ```

mod acceptor;
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub mod body;
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub mod client;
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub mod connections;
mod idle;
mod parsed_body;
mod server;
mod service;

pub use acceptor::{Acceptor, DEFAULT_HEADER_TIMEOUT};
pub use client::{
    HttpClientTransport, HttpReceiver, HttpSender, DEFAULT_MAX_RESPONSE, DEFAULT_REQUEST_TIMEOUT,
    HTTP_FAILURE_CODE,
};
pub use connections::{ConnectionStats, HttpVersion, DEFAULT_MAX_STREAMS};
pub use parsed_body::ParsedBody;
pub use server::HttpServer;
pub use service::{HttpService, DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY};
