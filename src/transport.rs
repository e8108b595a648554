//! Transports and the bidirectional [`Peer`] (`tokio` feature): rpcwire-core's
//! [`Transport`] traits, stream and stdio transports and `Peer`; with the `http` feature,
//! rpcwire-http's [`http`], [`tls`] and [`websocket`]; and [`AnyTransport`], the transport a program
//! picks at run time from an address.
//!
//! A [`Transport`] carries frames — whole JSON-RPC messages or batches — in both directions.
//! It splits into a [`FrameReceiver`] (the read half: bytes in, frames out, through the
//! crate's own [`FrameDecoder`](crate::frame::FrameDecoder)) and a [`FrameSender`] (the
//! write half: frames in, framed bytes out), so that reading never waits for writing.
//! [`StreamTransport`] works over any `AsyncRead` + `AsyncWrite` pair — TCP sockets, pipes,
//! a child process's stdin and stdout, `tokio::io::duplex` — in either
//! [`Framing`](crate::frame::Framing); [`stdio`] is the one over this process's stdin and
//! stdout.
//!
//! A [`Peer`] runs one connection that both serves (incoming requests go to a
//! [`Router`](crate::dispatch::Router)) and calls (`peer.call(..).await`, `peer.notify(..)`).
//!
//! ```
//! use rpcwire::dispatch::Router;
//! use rpcwire::frame::Framing;
//! use rpcwire::transport::{Peer, StreamTransport};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), rpcwire::transport::PeerError> {
//! let (a, b) = tokio::io::duplex(64 * 1024);
//! let mut router = Router::new();
//! router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
//! let server = Peer::new(StreamTransport::from_io(a, Framing::ContentLength), router);
//! let client = Peer::new(StreamTransport::from_io(b, Framing::ContentLength), Router::new());
//! let difference: i64 = client.call("subtract", (42, 23)).await?;
//! assert_eq!(difference, 19);
//! client.close().await;
//! server.closed().await;
//! # Ok(())
//! # }
//! ```

#[doc(inline)]
pub use rpcwire_proxy::{AnyReceiver, AnySender, AnyTransport};
#[doc(inline)]
pub use rpcwire_core::transport::*;
cfg_http! {
    #[doc(inline)]
    pub use rpcwire_http::{http, tls, websocket};
}
