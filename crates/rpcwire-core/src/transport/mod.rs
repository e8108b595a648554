//! Transports and the bidirectional [`Peer`] (`tokio` feature).
//!
//! A [`Transport`] carries frames — whole JSON-RPC messages or batches — in both directions.
//! It splits into a [`FrameReceiver`] (the read half: bytes in, frames out, through the
//! crate's own [`FrameDecoder`](crate::frame::FrameDecoder)) and a [`FrameSender`] (the
//! write half: frames in, framed bytes out), so that reading never waits for writing.
//! [`StreamTransport`] works over any `AsyncRead` + `AsyncWrite` pair — TCP sockets, pipes,
//! a child process's stdin and stdout, [`tokio::io::duplex`] — in either
//! [`Framing`](crate::frame::Framing); [`stdio`] is the one over this process's stdin and
//! stdout.
//!
//! A [`Peer`] runs one connection that both serves (incoming requests go to a
//! [`Router`](crate::dispatch::Router)) and calls (`peer.call(..).await`, `peer.notify(..)`).
//!
//! ```
//! use rpcwire_core::dispatch::Router;
//! use rpcwire_core::frame::Framing;
//! use rpcwire_core::transport::{Peer, StreamTransport};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), rpcwire_core::transport::PeerError> {
//! let (a, b) = tokio::io::duplex(64 * 1024);
//!
//! // One side serves `subtract`...
//! let mut router = Router::new();
//! router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
//! let server = Peer::new(StreamTransport::from_io(a, Framing::ContentLength), router);
//!
//! // ...the other calls it.
//! let client = Peer::new(StreamTransport::from_io(b, Framing::ContentLength), Router::new());
//! let difference: i64 = client.call("subtract", (42, 23)).await?;
//! assert_eq!(difference, 19);
//!
//! client.close().await;
//! server.closed().await; // the server sees the end of its input
//! # Ok(())
//! # }
//! ```

mod address;
mod error;
mod peer;
mod stdio;
mod stream;

pub use address::{url_parts, AddressError};
pub use error::TransportError;
pub use peer::{
    BatchEntry, CancelProtocol, CloseReason, ConnectionState, Peer, PeerBuilder, PeerError, PeerErrorKind,
    PeerLink, PeerStats, OVERLOADED_CODE,
};
pub use stdio::{stdio, Stdin, Stdout};
pub use stream::{StreamReceiver, StreamSender, StreamTransport};

use std::future::Future;

use bytes::Bytes;

/// A two-way frame channel that splits into its read and write halves.
///
/// ```
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{FrameReceiver, FrameSender, StreamTransport, Transport};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), rpcwire_core::transport::TransportError> {
/// let (a, b) = tokio::io::duplex(1024);
/// let (_, mut send) = StreamTransport::from_io(a, Framing::Ndjson).split();
/// let (mut receive, _) = StreamTransport::from_io(b, Framing::Ndjson).split();
/// send.send(bytes::Bytes::from_static(b"[1]")).await?;
/// send.flush().await?;
/// assert_eq!(&receive.receive().await?.unwrap()[..], b"[1]");
/// # Ok(())
/// # }
/// ```
pub trait Transport: Send + 'static {
    /// The read half.
    type Receiver: FrameReceiver;
    /// The write half.
    type Sender: FrameSender;

    /// Splits the transport into its halves, which may be used from different tasks.
    fn split(self) -> (Self::Receiver, Self::Sender);
}

/// The read half of a [`Transport`]: yields one frame at a time.
///
/// ```
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{FrameReceiver, StreamReceiver};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), rpcwire_core::transport::TransportError> {
/// let mut receiver = StreamReceiver::new(&b"{\"a\":1}\n"[..], Framing::Ndjson);
/// assert_eq!(&receiver.receive().await?.unwrap()[..], b"{\"a\":1}");
/// assert!(receiver.receive().await?.is_none()); // end of input
/// # Ok(())
/// # }
/// ```
pub trait FrameReceiver: Send + 'static {
    /// The next frame's body (without framing); `Ok(None)` at a clean end of input.
    ///
    /// After an error for which [`TransportError::is_recoverable`] is `true` the receiver
    /// may be called again and goes on with the next frame; after any other error the
    /// stream is over. Implementations must be *cancel safe*: dropping the future before it
    /// completes loses no data (the [`Peer`] waits on it in a `select!`).
    fn receive(&mut self) -> impl Future<Output = Result<Option<Bytes>, TransportError>> + Send;
}

/// The write half of a [`Transport`]: frames message bodies and writes them.
///
/// ```
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{FrameSender, StreamSender};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), rpcwire_core::transport::TransportError> {
/// let mut sender = StreamSender::new(Vec::new(), Framing::ContentLength);
/// sender.send(bytes::Bytes::from_static(b"[]")).await?;
/// sender.flush().await?;
/// assert_eq!(sender.get_ref(), b"Content-Length: 2\r\n\r\n[]");
/// # Ok(())
/// # }
/// ```
pub trait FrameSender: Send + 'static {
    /// Queues one frame (a message body, without framing). It may be buffered until
    /// [`flush`](FrameSender::flush).
    ///
    /// The frame is handed over as [`Bytes`], so a transport that sends it as one unit (an
    /// HTTP body, a WebSocket message) keeps it without copying.
    fn send(&mut self, body: Bytes) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Writes out every queued frame.
    fn flush(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Queues one frame and writes it out with everything queued before it: what
    /// [`send`](FrameSender::send) then [`flush`](FrameSender::flush) do, which it is by
    /// default. A sender may do both in one step (a WebSocket takes its writer's lock once).
    ///
    /// ```
    /// use rpcwire_core::frame::Framing;
    /// use rpcwire_core::transport::{FrameSender, StreamSender};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), rpcwire_core::transport::TransportError> {
    /// let mut sender = StreamSender::new(Vec::new(), Framing::Ndjson);
    /// sender.send_flushed(bytes::Bytes::from_static(b"[]")).await?;
    /// assert_eq!(sender.get_ref(), b"[]\n");
    /// # Ok(())
    /// # }
    /// ```
    fn send_flushed(&mut self, body: Bytes) -> impl Future<Output = Result<(), TransportError>> + Send {
        async move {
            self.send(body).await?;
            self.flush().await
        }
    }

    /// Flushes, then closes the write direction (the other side reads end of input).
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send;
}
