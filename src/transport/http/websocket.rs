//! `WebSocketTransport`: a [`Transport`] over a WebSocket (tokio-tungstenite), one JSON-RPC
//! message or batch per text message, so that a [`Peer`](crate::transport::Peer) serves and
//! calls over it in both directions, as over a stream.

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::transport::{FrameReceiver, FrameSender, Transport, TransportError};

/// A [`Transport`] over a WebSocket: each text message received is a frame, each frame sent
/// is a text message. A binary message closes the connection with 1003 (unsupported), a
/// message over the configured maximum with 1009 (too big) before it is buffered; pings are
/// answered by the WebSocket layer.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::transport::http::{HttpServer, WebSocketTransport};
/// use rpcwire::transport::Peer;
///
/// let mut router = rpcwire::dispatch::Router::new();
/// router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let url = format!("ws://{}/", listener.local_addr().unwrap());
/// tokio::spawn(HttpServer::new(router).serve(listener));
///
/// let transport = WebSocketTransport::connect(&url).await.unwrap();
/// let client = Peer::new(transport, rpcwire::dispatch::Router::new());
/// assert_eq!(client.call::<_, i64>("subtract", (42, 23)).await.unwrap(), 19);
/// # });
/// ```
pub struct WebSocketTransport<S> {
    socket: WebSocketStream<S>,
}

impl<S> std::fmt::Debug for WebSocketTransport<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketTransport").finish_non_exhaustive()
    }
}

impl<S> WebSocketTransport<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// A transport over an established WebSocket.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use tokio_tungstenite::tungstenite::protocol::Role;
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let socket = tokio_tungstenite::WebSocketStream::from_raw_socket(a, Role::Server, None).await;
    /// let transport = rpcwire::transport::http::WebSocketTransport::new(socket);
    /// # let _ = transport;
    /// # });
    /// ```
    pub fn new(socket: WebSocketStream<S>) -> WebSocketTransport<S> {
        WebSocketTransport { socket }
    }
}

impl WebSocketTransport<MaybeTlsStream<tokio::net::TcpStream>> {
    /// Connects to a WebSocket server at `url` (`ws://host:port/path`).
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// let transport = rpcwire::transport::http::WebSocketTransport::connect("ws://127.0.0.1:8545/").await?;
    /// # let _ = transport; Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> io::Result<Self> {
        let (socket, _response) = tokio_tungstenite::connect_async(url).await.map_err(io_error)?;
        Ok(WebSocketTransport::new(socket))
    }
}

/// The write half, shared with the read half so that it can close the connection with the
/// right code.
type Shared<S> = Arc<Mutex<SplitSink<WebSocketStream<S>, Message>>>;

impl<S> Transport for WebSocketTransport<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Receiver = WebSocketReceiver<S>;
    type Sender = WebSocketSender<S>;

    fn split(self) -> (WebSocketReceiver<S>, WebSocketSender<S>) {
        let (sink, stream) = self.socket.split();
        let sink = Arc::new(Mutex::new(sink));
        (
            WebSocketReceiver {
                stream,
                sink: sink.clone(),
            },
            WebSocketSender { sink },
        )
    }
}

/// The read half of a [`WebSocketTransport`].
pub struct WebSocketReceiver<S> {
    stream: SplitStream<WebSocketStream<S>>,
    sink: Shared<S>,
}

impl<S> std::fmt::Debug for WebSocketReceiver<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketReceiver").finish_non_exhaustive()
    }
}

impl<S> WebSocketReceiver<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// Closes the connection with `code`, and the error the receiver reports.
    async fn refuse(&mut self, code: CloseCode, reason: &'static str) -> TransportError {
        let close = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let _ = self.sink.lock().await.send(Message::Close(Some(close))).await;
        TransportError::Io(io::Error::new(io::ErrorKind::InvalidData, reason))
    }
}

impl<S> FrameReceiver for WebSocketReceiver<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    async fn receive(&mut self) -> Result<Option<Bytes>, TransportError> {
        loop {
            match self.stream.next().await {
                Some(Ok(Message::Text(text))) => return Ok(Some(Bytes::from(text))),
                Some(Ok(Message::Binary(_))) => {
                    return Err(self
                        .refuse(CloseCode::Unsupported, "binary messages are not JSON-RPC text")
                        .await)
                }
                Some(Ok(Message::Close(_))) | None => return Ok(None),
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Err(WsError::Capacity(_))) => {
                    return Err(self.refuse(CloseCode::Size, "message too big").await)
                }
                Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => return Ok(None),
                Some(Err(error)) => return Err(TransportError::Io(io_error(error))),
            }
        }
    }
}

/// The write half of a [`WebSocketTransport`].
pub struct WebSocketSender<S> {
    sink: Shared<S>,
}

impl<S> std::fmt::Debug for WebSocketSender<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketSender").finish_non_exhaustive()
    }
}

impl<S> FrameSender for WebSocketSender<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    async fn send(&mut self, body: Bytes) -> Result<(), TransportError> {
        let text = Utf8Bytes::try_from(body)
            .map_err(|error| TransportError::Io(io::Error::new(io::ErrorKind::InvalidData, error)))?;
        let mut sink = self.sink.lock().await;
        sink.feed(Message::Text(text))
            .await
            .map_err(|error| TransportError::Io(io_error(error)))
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        let mut sink = self.sink.lock().await;
        sink.flush()
            .await
            .map_err(|error| TransportError::Io(io_error(error)))
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        let mut sink = self.sink.lock().await;
        match sink.close().await {
            Ok(()) | Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => Ok(()),
            Err(error) => Err(TransportError::Io(io_error(error))),
        }
    }
}

/// How many bytes tungstenite reads at most per read. Its default (128 KiB) zero-fills that
/// much before every read, whether the read brings a 60-byte message or nothing: that fill
/// was the largest single cost of a small message (perf: 13% of the server's time at 64
/// connections).
const READ_BUFFER: usize = 8 << 10;

/// The WebSocket configuration for at most `max_message` bytes per message (and frame).
pub(super) fn config(max_message: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message))
}

/// A WebSocket error as an I/O error.
fn io_error(error: WsError) -> io::Error {
    match error {
        WsError::Io(error) => error,
        other => io::Error::other(other),
    }
}
