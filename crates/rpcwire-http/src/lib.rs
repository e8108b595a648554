//! # rpcwire-http
//!
//! [rpcwire](https://crates.io/crates/rpcwire) over HTTP and WebSocket, on hyper 1 and
//! above `rpcwire-core`: [`http::HttpService`] (a tower `Service`, so it mounts in axum),
//! [`http::HttpServer`] (the one accept loop, with its header-read timeout, its detection
//! deadline and its per-connection error handling), [`http::HttpClientTransport`] (a POST
//! per frame) and [`websocket::WebSocketTransport`].
//!
//! Most programs use these through the `rpcwire` facade with its `http` feature, under
//! `rpcwire_core::transport::http` and `rpcwire_core::transport::websocket`.
//!
//! ```no_run
//! use rpcwire_core::dispatch::Router;
//! use rpcwire_http::http::HttpServer;
//!
//! # async fn run() -> std::io::Result<()> {
//! let mut router = Router::new();
//! router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8545").await?;
//! HttpServer::new(router).serve(listener).await
//! # }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers below, under the paths the modules here know them by.
use rpcwire_core::{codes, dispatch, encode, frame, message, parse, pool, sync, transport};

#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub mod endpoint;
mod halves;
pub mod http;
mod linger;
pub mod tls;
pub mod websocket;
