//! WebSocket (`http` feature): `WebSocketTransport`, a [`Transport`] over a WebSocket (fastwebsockets), one JSON-RPC
//! message or batch per text message, so that a [`Peer`](crate::transport::Peer) serves and
//! calls over it in both directions, as over a stream.
//!
//! fastwebsockets was chosen by measuring: in the report's transports section its bare echo
//! server costs less CPU per message than tokio-tungstenite's at 1 and at 64 connections.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use fastwebsockets::{Frame, OpCode, Payload, Role, WebSocketError, WebSocketRead, WebSocketWrite};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, BufWriter};
use tokio::sync::Mutex;

use crate::endpoint::Endpoint;
use crate::frame::DEFAULT_MAX_FRAME;
use crate::halves::Half;
use crate::tls::{ClientTls, Offer};
use crate::transport::{AddressError, FrameReceiver, FrameSender, Transport, TransportError};

/// The I/O of an upgraded HTTP connection, which [`WebSocketTransport::connect`] and the
/// [`HttpService`](crate::http::HttpService) upgrade run over.
pub type UpgradedIo = TokioIo<Upgraded>;

/// A [`Transport`] over a WebSocket: each text message received is a frame, each frame sent
/// is a text message. A binary message closes the connection with 1003 (unsupported), a
/// message over the configured maximum with 1009 (too big) before it is buffered, text that
/// is not UTF-8 with 1007; pings are answered with pongs, a close with a close.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire_http::{http::HttpServer, websocket::WebSocketTransport};
/// use rpcwire_core::transport::Peer;
///
/// let mut router = rpcwire_core::dispatch::Router::new();
/// router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let url = format!("ws://{}/", listener.local_addr().unwrap());
/// tokio::spawn(HttpServer::new(router).serve(listener));
///
/// let transport = WebSocketTransport::connect(&url).await.unwrap();
/// let client = Peer::new(transport, rpcwire_core::dispatch::Router::new());
/// assert_eq!(client.call::<_, i64>("subtract", (42, 23)).await.unwrap(), 19);
/// # });
/// ```
pub struct WebSocketTransport<S = UpgradedIo> {
    io: S,
    role: Role,
    max_message: usize,
}

impl<S> std::fmt::Debug for WebSocketTransport<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketTransport")
            .field("server", &(self.role == Role::Server))
            .field("max_message", &self.max_message)
            .finish_non_exhaustive()
    }
}

impl<S> WebSocketTransport<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// The server side of a WebSocket whose opening handshake is done: it reads masked
    /// frames and writes unmasked ones (RFC 6455, section 5.1).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire_http::websocket::WebSocketTransport;
    /// let (a, b) = tokio::io::duplex(1024);
    /// let server = WebSocketTransport::server(a);
    /// let client = WebSocketTransport::client(b);
    /// # let _ = (server, client);
    /// # });
    /// ```
    pub fn server(io: S) -> WebSocketTransport<S> {
        WebSocketTransport {
            io,
            role: Role::Server,
            max_message: DEFAULT_MAX_FRAME,
        }
    }

    /// The client side of a WebSocket whose opening handshake is done: it masks the frames
    /// it writes.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let client = rpcwire_http::websocket::WebSocketTransport::client(a);
    /// # let _ = client;
    /// # });
    /// ```
    pub fn client(io: S) -> WebSocketTransport<S> {
        WebSocketTransport {
            role: Role::Client,
            ..WebSocketTransport::server(io)
        }
    }

    /// Sets the largest message received, in bytes (default: the frame limit,
    /// [`DEFAULT_MAX_FRAME`], as the HTTP body limit). A larger one closes the connection with 1009, decided from the
    /// frame header before its payload is read.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let server = rpcwire_http::websocket::WebSocketTransport::server(a).with_max_message(4096);
    /// assert_eq!(server.max_message(), 4096);
    /// # });
    /// ```
    pub fn with_max_message(mut self, bytes: usize) -> WebSocketTransport<S> {
        self.max_message = bytes;
        self
    }

    /// The largest message received, in bytes.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let server = rpcwire_http::websocket::WebSocketTransport::server(a);
    /// assert_eq!(server.max_message(), rpcwire_http::http::DEFAULT_MAX_BODY);
    /// # });
    /// ```
    pub fn max_message(&self) -> usize {
        self.max_message
    }
}

impl WebSocketTransport {
    /// Connects to a WebSocket server at `url` (`ws://host[:port]/path`, or `wss://…`
    /// trusting the system's roots): TCP, TLS for `wss://`, then the opening handshake on
    /// hyper's HTTP/1.1 client. An address it cannot serve is refused before connecting
    /// (`InvalidInput`); a refused TLS handshake says why.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// let transport = rpcwire_http::websocket::WebSocketTransport::connect("wss://node.example/ws").await?;
    /// # let _ = transport; Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> io::Result<WebSocketTransport> {
        WebSocketTransport::connect_with(url, None).await
    }

    /// As [`connect`](WebSocketTransport::connect), with `tls` for a `wss://` server
    /// (`None`: the system's roots).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use rpcwire_http::{tls::ClientTls, websocket::WebSocketTransport};
    /// let tls = ClientTls::builder().add_ca_file("/etc/rpc/ca.pem")?.build()?;
    /// let transport = WebSocketTransport::connect_with("wss://node.internal/ws", Some(tls)).await?;
    /// # let _ = transport; Ok(())
    /// # }
    /// ```
    pub async fn connect_with(url: &str, tls: Option<ClientTls>) -> io::Result<WebSocketTransport> {
        let uri: http::Uri = url
            .parse()
            .map_err(|_| io::Error::from(AddressError::new(url, "not a URL")))?;
        let endpoint = Endpoint::websocket(&uri)?;
        let stream = tokio::net::TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|error| {
                io::Error::new(
                    error.kind(),
                    format!("cannot connect to {}:{}: {error}", endpoint.host, endpoint.port),
                )
            })?;
        stream.set_nodelay(true)?;
        let request = http::Request::get(endpoint.target.clone())
            .header(http::header::HOST, endpoint.authority.clone())
            .header(http::header::UPGRADE, "websocket")
            .header(http::header::CONNECTION, "upgrade")
            .header(
                http::header::SEC_WEBSOCKET_KEY,
                fastwebsockets::handshake::generate_key(),
            )
            .header(http::header::SEC_WEBSOCKET_VERSION, "13")
            .body(http_body_util::Empty::<Bytes>::new())
            .map_err(io::Error::other)?;
        let socket = if endpoint.secure {
            // WebSocket upgrades an HTTP/1.1 connection: ALPN offers only that.
            let stream = tls
                .unwrap_or_default()
                .connect(&endpoint.host, stream, Offer::Http1)
                .await?;
            fastwebsockets::handshake::client(&SpawnExecutor, request, stream).await
        } else {
            fastwebsockets::handshake::client(&SpawnExecutor, request, stream).await
        };
        let (socket, _response) = socket.map_err(io_error)?;
        Ok(WebSocketTransport::client(socket.into_inner()))
    }
}

/// Runs the client connection's HTTP task (until the upgrade) on tokio.
struct SpawnExecutor;

impl<F> hyper::rt::Executor<F> for SpawnExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        tokio::spawn(future);
    }
}

/// The write half, shared with the read half, which answers pings and closes.
type Writer<S> = Arc<Mutex<WebSocketWrite<BufWriter<Half<S>>>>>;

impl<S> Transport for WebSocketTransport<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Receiver = WebSocketReceiver<S>;
    type Sender = WebSocketSender<S>;

    fn split(self) -> (WebSocketReceiver<S>, WebSocketSender<S>) {
        // One handle reads frames, one writes them, one reads past a refused message.
        let read = Half::new(self.io);
        let (drain, write) = (read.another(), read.another());
        let (mut read, write) = fastwebsockets::after_handshake_split(read, BufWriter::new(write), self.role);
        // One byte more: fastwebsockets refuses a frame of exactly its maximum.
        read.set_max_message_size(self.max_message.saturating_add(1));
        let writer = Arc::new(Mutex::new(write));
        let reading = Reading {
            read,
            drain,
            writer: writer.clone(),
            max_message: self.max_message,
            fragments: None,
        };
        (
            WebSocketReceiver {
                idle: Some(Box::new(reading)),
                busy: None,
            },
            WebSocketSender { writer },
        )
    }
}

/// A message being read, and what its reading gives back.
type Next<S> = Pin<Box<dyn Future<Output = (Box<Reading<S>>, Received)> + Send>>;
type Received = Result<Option<Bytes>, TransportError>;

/// The read half of a [`WebSocketTransport`].
///
/// Reading a frame is not cancel safe in fastwebsockets (a header half read is lost), so the
/// receiver keeps the reading of a message in a future of its own: a
/// [`receive`](FrameReceiver::receive) dropped midway leaves it to the next one.
pub struct WebSocketReceiver<S> {
    idle: Option<Box<Reading<S>>>,
    busy: Option<Next<S>>,
}

impl<S> std::fmt::Debug for WebSocketReceiver<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketReceiver")
            .field("reading", &self.busy.is_some())
            .finish_non_exhaustive()
    }
}

impl<S> FrameReceiver for WebSocketReceiver<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    async fn receive(&mut self) -> Result<Option<Bytes>, TransportError> {
        if self.busy.is_none() {
            let Some(reading) = self.idle.take() else {
                return Ok(None); // the stream ended or failed before
            };
            self.busy = Some(Box::pin(reading.next_message()));
        }
        let Some(next) = self.busy.as_mut() else {
            return Ok(None);
        };
        let (reading, received) = next.await;
        self.busy = None;
        if matches!(received, Ok(Some(_))) {
            self.idle = Some(reading);
        }
        received
    }
}

/// The reading side's state, moved into the future that reads a message.
struct Reading<S> {
    read: WebSocketRead<Half<S>>,
    /// The same stream, read past a refused message (the lingering close).
    drain: Half<S>,
    writer: Writer<S>,
    max_message: usize,
    /// The text of a fragmented message so far.
    fragments: Option<BytesMut>,
}

impl<S> Reading<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// Reads up to the next whole text message, answering pings and closes on the way.
    async fn next_message(mut self: Box<Self>) -> (Box<Self>, Received) {
        let received = self.message().await;
        (self, received)
    }

    async fn message(&mut self) -> Received {
        let writer = self.writer.clone();
        let mut obligation = move |frame: Frame<'static>| {
            let writer = writer.clone();
            async move { write_control(&writer, frame).await }
        };
        loop {
            let (opcode, fin, payload) = match self.read.read_frame(&mut obligation).await {
                Ok(frame) => (frame.opcode, frame.fin, into_bytes(frame.payload)),
                Err(error) => return self.failed(error).await,
            };
            match (opcode, self.fragments.as_mut()) {
                (OpCode::Text, None) if fin => return Ok(Some(payload)),
                (OpCode::Text, None) => self.fragments = Some(BytesMut::from(payload)),
                (OpCode::Continuation, Some(text)) => {
                    if text.len() + payload.len() > self.max_message {
                        return Err(self.refuse(CLOSE_TOO_BIG, "message too big").await);
                    }
                    text.extend_from_slice(&payload);
                    if fin {
                        let text = self.fragments.take().unwrap_or_default();
                        if std::str::from_utf8(&text).is_err() {
                            return Err(self.refuse(CLOSE_INVALID_DATA, "text that is not UTF-8").await);
                        }
                        return Ok(Some(text.freeze()));
                    }
                }
                (OpCode::Binary, _) => {
                    return Err(self
                        .refuse(CLOSE_UNSUPPORTED, "binary messages are not JSON-RPC text")
                        .await)
                }
                (OpCode::Close, _) => return Ok(None), // the close was echoed already
                (OpCode::Pong | OpCode::Ping, _) => {}
                (OpCode::Text | OpCode::Continuation, _) => {
                    return Err(self.refuse(CLOSE_PROTOCOL, "fragments out of order").await)
                }
            }
        }
    }

    /// What a read error means for the connection, closing it with the right code.
    async fn failed(&mut self, error: WebSocketError) -> Received {
        match error {
            WebSocketError::UnexpectedEOF | WebSocketError::ConnectionClosed => Ok(None),
            WebSocketError::IoError(error) => Err(TransportError::Io(error)),
            WebSocketError::SendError(error) => Err(TransportError::Io(io::Error::other(error))),
            WebSocketError::FrameTooLarge => Err(self.refuse(CLOSE_TOO_BIG, "message too big").await),
            WebSocketError::InvalidUTF8 => {
                Err(self.refuse(CLOSE_INVALID_DATA, "text that is not UTF-8").await)
            }
            _ => Err(self.refuse(CLOSE_PROTOCOL, "WebSocket protocol error").await),
        }
    }

    /// Closes the connection with `code`, and the error the receiver reports. What the
    /// client still sends is read and dropped a while (a lingering close), so that a client
    /// writing the rest of a message too big reads the close instead of a reset.
    async fn refuse(&mut self, code: u16, reason: &'static str) -> TransportError {
        if write_control(&self.writer, Frame::close(code, reason.as_bytes()))
            .await
            .is_ok()
        {
            crate::linger::drain(&mut self.drain, crate::linger::LINGER_DECLARED).await;
        }
        TransportError::Io(io::Error::new(io::ErrorKind::InvalidData, reason))
    }
}

/// 1002: protocol error (RFC 6455, section 7.4.1).
const CLOSE_PROTOCOL: u16 = 1002;
/// 1003: a kind of data the endpoint cannot accept.
const CLOSE_UNSUPPORTED: u16 = 1003;
/// 1007: data inconsistent with the message type (text that is not UTF-8).
const CLOSE_INVALID_DATA: u16 = 1007;
/// 1009: a message too big to process.
const CLOSE_TOO_BIG: u16 = 1009;

/// Writes a control frame (pong, close) and flushes it, unless a close went out already.
async fn write_control<S>(writer: &Writer<S>, frame: Frame<'_>) -> Result<(), WebSocketError>
where
    S: AsyncWrite + Unpin,
{
    let mut writer = lock(writer).await;
    if writer.is_closed() {
        return Ok(());
    }
    writer.write_frame(frame).await?;
    writer.flush().await
}

/// A text message's body is UTF-8: anything else is refused before it is framed.
fn utf8_only(body: &[u8]) -> Result<(), TransportError> {
    std::str::from_utf8(body)
        .map(drop)
        .map_err(|error| TransportError::Io(io::Error::new(io::ErrorKind::InvalidData, error)))
}

/// The writer, locked: at once when it is free (the usual case, without the future a wait
/// needs), else when its holder lets go.
async fn lock<S>(writer: &Writer<S>) -> tokio::sync::MutexGuard<'_, WebSocketWrite<BufWriter<Half<S>>>> {
    match writer.try_lock() {
        Ok(locked) => locked,
        Err(_) => writer.lock().await,
    }
}

/// A frame's payload as `Bytes`, without a copy when it is the read buffer's.
fn into_bytes(payload: Payload<'_>) -> Bytes {
    match payload {
        Payload::Bytes(bytes) => bytes.freeze(),
        Payload::Owned(vec) => Bytes::from(vec),
        other => Bytes::copy_from_slice(&other),
    }
}

/// The write half of a [`WebSocketTransport`]. Frames are written into a buffer and go out
/// together on [`flush`](FrameSender::flush).
pub struct WebSocketSender<S> {
    writer: Writer<S>,
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
        utf8_only(&body)?;
        let mut writer = lock(&self.writer).await;
        writer
            .write_frame(Frame::text(Payload::Borrowed(&body)))
            .await
            .map_err(|error| TransportError::Io(io_error(error)))
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        let mut writer = lock(&self.writer).await;
        writer
            .flush()
            .await
            .map_err(|error| TransportError::Io(io_error(error)))
    }

    async fn send_flushed(&mut self, body: Bytes) -> Result<(), TransportError> {
        utf8_only(&body)?;
        let mut writer = lock(&self.writer).await;
        let written = async {
            writer.write_frame(Frame::text(Payload::Borrowed(&body))).await?;
            writer.flush().await
        };
        written.await.map_err(|error| TransportError::Io(io_error(error)))
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        match write_control(&self.writer, Frame::close(1000, b"")).await {
            Ok(()) => Ok(()),
            Err(WebSocketError::IoError(error))
                if matches!(
                    error.kind(),
                    io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::NotConnected
                ) =>
            {
                Ok(()) // the other side is gone already
            }
            Err(error) => Err(TransportError::Io(io_error(error))),
        }
    }
}

/// A WebSocket error as an I/O error.
fn io_error(error: WebSocketError) -> io::Error {
    match error {
        WebSocketError::IoError(error) => error,
        other => io::Error::other(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_client_and_a_server_over_a_pipe_carry_frames_both_ways() {
        let (a, b) = tokio::io::duplex(64 << 10);
        let server = WebSocketTransport::server(a).with_max_message(64);
        assert_eq!(server.max_message(), 64);
        let shown = format!("{server:?}");
        assert!(
            shown.contains("server: true") && shown.contains("max_message: 64"),
            "{shown}"
        );
        let client = WebSocketTransport::client(b);
        assert!(format!("{client:?}").contains("server: false"));
        let (mut server_in, mut server_out) = server.split();
        let (mut client_in, mut client_out) = client.split();
        assert!(format!("{server_in:?}").starts_with("WebSocketReceiver"));
        assert!(format!("{client_out:?}").starts_with("WebSocketSender"));

        let request = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
        client_out.send(request.clone()).await.unwrap();
        client_out.flush().await.unwrap();
        assert_eq!(server_in.receive().await.unwrap(), Some(request));
        let answer = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":1}"#);
        server_out.send(answer.clone()).await.unwrap();
        server_out.flush().await.unwrap();
        assert_eq!(client_in.receive().await.unwrap(), Some(answer));

        // Over the server's limit: refused from the frame header, the connection closed.
        client_out.send(Bytes::from(vec![b' '; 65])).await.unwrap();
        client_out.flush().await.unwrap();
        assert!(server_in.receive().await.is_err());
    }
}
