//! `AnyTransport`: the transport a program picks at run time from its configuration (stdio,
//! TCP, and with the `http` feature HTTP or WebSocket, with or without TLS), as one type a
//! [`Peer`] takes.
//!
//! [`Peer`]: rpcwire_core::transport::Peer

use std::fmt;
use std::io;
use std::pin::Pin;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::frame::Framing;
use crate::transport::{
    FrameReceiver, FrameSender, StreamReceiver, StreamSender, StreamTransport, Transport, TransportError,
};

/// `match $value` with one arm per transport the features give (stream; HTTP and WebSocket
/// with `http`), each binding the transport's half as `$half` for `$body`: the one place
/// that lists the variants' features.
macro_rules! each_transport {
    ($value:expr, $kind:ident, $half:ident => $body:expr) => {
        match $value {
            $kind::Stream($half) => $body,
            #[cfg(feature = "http")]
            $kind::Http($half) => $body,
            #[cfg(feature = "http")]
            $kind::WebSocket($half) => $body,
        }
    };
}

/// Any reader, boxed.
type BoxReader = Pin<Box<dyn AsyncRead + Send>>;
/// Any writer, boxed.
type BoxWriter = Pin<Box<dyn AsyncWrite + Send>>;

/// One of the transports, chosen at run time:
///
/// | address | transport |
/// | --- | --- |
/// | `stdio` | this process's stdin and stdout, in the given framing |
/// | `tcp://HOST:PORT` | a TCP connection, in the given framing |
/// | `http://…`, `https://…` (`http` feature) | [`HttpClientTransport`](rpcwire_http::http::HttpClientTransport): a POST per frame |
/// | `ws://…`, `wss://…` (`http` feature) | [`WebSocketTransport`](rpcwire_http::websocket::WebSocketTransport) |
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::frame::Framing;
/// use rpcwire::transport::{AnyTransport, Peer, StreamTransport};
///
/// // A server on TCP, and a client that found "tcp://…" in its configuration.
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let address = format!("tcp://{}", listener.local_addr().unwrap());
/// tokio::spawn(async move {
///     let (socket, _) = listener.accept().await.unwrap();
///     let mut router = rpcwire::dispatch::Router::new();
///     router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
///     Peer::new(StreamTransport::from_io(socket, Framing::Ndjson), router).closed().await;
/// });
/// let transport = AnyTransport::open(&address, Framing::Ndjson).await.unwrap();
/// let client = Peer::new(transport, rpcwire::dispatch::Router::new());
/// assert_eq!(client.call::<_, i64>("subtract", (42, 23)).await.unwrap(), 19);
/// # });
/// ```
pub enum AnyTransport {
    /// A byte stream (stdio, TCP, a pipe) in a framing.
    Stream(StreamTransport<BoxReader, BoxWriter>),
    /// HTTP: a POST per frame.
    #[cfg(feature = "http")]
    Http(Box<rpcwire_http::http::HttpClientTransport>),
    /// WebSocket: a text message per frame.
    #[cfg(feature = "http")]
    WebSocket(rpcwire_http::websocket::WebSocketTransport),
}

impl fmt::Debug for AnyTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            AnyTransport::Stream(_) => "Stream",
            #[cfg(feature = "http")]
            AnyTransport::Http(_) => "Http",
            #[cfg(feature = "http")]
            AnyTransport::WebSocket(_) => "WebSocket",
        };
        f.debug_tuple("AnyTransport").field(&kind).finish()
    }
}

impl AnyTransport {
    /// A stream transport over any reader and writer, boxed.
    ///
    /// ```
    /// use rpcwire::frame::Framing;
    /// let (a, _b) = tokio::io::duplex(64);
    /// let (read, write) = tokio::io::split(a);
    /// let transport = rpcwire::transport::AnyTransport::stream(read, write, Framing::Ndjson);
    /// # let _ = transport;
    /// ```
    pub fn stream(
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
        framing: Framing,
    ) -> AnyTransport {
        AnyTransport::Stream(StreamTransport::new(Box::pin(reader), Box::pin(writer), framing))
    }

    /// Opens the transport `address` names (see the table above); `framing` applies to
    /// `stdio` and `tcp://`. An address this build cannot open is refused
    /// (`InvalidInput`, with [`check_address`](crate::check_address)'s reason) before
    /// anything is opened.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::transport::AnyTransport;
    /// let error = AnyTransport::open("carrier-pigeon://home", rpcwire::frame::Framing::Ndjson).await.unwrap_err();
    /// assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    /// # });
    /// ```
    pub async fn open(address: &str, framing: Framing) -> io::Result<AnyTransport> {
        AnyTransport::dial(address, framing, &crate::Dial::new()).await
    }

    /// Opens the transport `address` names as `dial` says: its largest answer, and for
    /// `https://` and `wss://` its TLS.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::{proxy::Dial, transport::AnyTransport};
    /// let dial = Dial::new().with_max_response(1 << 20);
    /// let error = AnyTransport::dial("tcp://127.0.0.1", rpcwire::frame::Framing::Ndjson, &dial).await.unwrap_err();
    /// assert!(error.to_string().contains("HOST:PORT"), "{error}");
    /// # });
    /// ```
    pub async fn dial(address: &str, framing: Framing, dial: &crate::Dial) -> io::Result<AnyTransport> {
        crate::check_address(address)?;
        let transport = if address == "stdio" {
            AnyTransport::stream(
                crate::transport::Stdin::new(),
                crate::transport::Stdout::new(),
                framing,
            )
        } else if let Some(host) = address.strip_prefix("tcp://") {
            let socket = tokio::net::TcpStream::connect(host).await?;
            socket.set_nodelay(true)?;
            let (read, write) = socket.into_split();
            AnyTransport::stream(read, write, framing)
        } else {
            AnyTransport::dial_http(address, dial).await?
        };
        Ok(transport.with_max_frame(dial.max_response()))
    }

    /// An HTTP or WebSocket address, checked already.
    #[cfg(feature = "http")]
    async fn dial_http(address: &str, dial: &crate::Dial) -> io::Result<AnyTransport> {
        let scheme = address
            .split_once("://")
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        if matches!(scheme.as_deref(), Some("ws" | "wss")) {
            let tls = dial.tls().cloned();
            return Ok(AnyTransport::WebSocket(
                rpcwire_http::websocket::WebSocketTransport::connect_with(address, tls).await?,
            ));
        }
        Ok(AnyTransport::Http(Box::new(dial.http_client(address)?)))
    }

    /// No HTTP without the `http` feature ([`check_address`](crate::check_address) has said so).
    #[cfg(not(feature = "http"))]
    async fn dial_http(address: &str, _dial: &crate::Dial) -> io::Result<AnyTransport> {
        Err(crate::transport::AddressError::new(address, "needs the http feature").into())
    }

    /// Sets the largest frame received, whatever the transport: a byte stream's frame limit,
    /// an HTTP answer body's, a WebSocket message's — the response limit of a gateway's
    /// upstream, which may need to be larger than its request limit.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let transport = rpcwire::transport::AnyTransport::stream(tokio::io::empty(), tokio::io::sink(), rpcwire::frame::Framing::Ndjson)
    ///     .with_max_frame(32 << 20);
    /// # let _ = transport;
    /// # });
    /// ```
    pub fn with_max_frame(self, bytes: usize) -> AnyTransport {
        match self {
            AnyTransport::Stream(stream) => AnyTransport::Stream(stream.with_max_frame(bytes)),
            #[cfg(feature = "http")]
            AnyTransport::Http(http) => AnyTransport::Http(Box::new(http.with_max_response(bytes))),
            #[cfg(feature = "http")]
            AnyTransport::WebSocket(socket) => AnyTransport::WebSocket(socket.with_max_message(bytes)),
        }
    }
}

/// The read half of an [`AnyTransport`].
#[allow(missing_debug_implementations)]
pub enum AnyReceiver {
    /// A byte stream's.
    Stream(StreamReceiver<BoxReader>),
    /// HTTP's.
    #[cfg(feature = "http")]
    Http(rpcwire_http::http::HttpReceiver),
    /// WebSocket's.
    #[cfg(feature = "http")]
    WebSocket(rpcwire_http::websocket::WebSocketReceiver<rpcwire_http::websocket::UpgradedIo>),
}

/// The write half of an [`AnyTransport`].
#[allow(missing_debug_implementations)]
pub enum AnySender {
    /// A byte stream's.
    Stream(StreamSender<BoxWriter>),
    /// HTTP's.
    #[cfg(feature = "http")]
    Http(Box<rpcwire_http::http::HttpSender>),
    /// WebSocket's.
    #[cfg(feature = "http")]
    WebSocket(rpcwire_http::websocket::WebSocketSender<rpcwire_http::websocket::UpgradedIo>),
}

impl Transport for AnyTransport {
    type Receiver = AnyReceiver;
    type Sender = AnySender;

    fn split(self) -> (AnyReceiver, AnySender) {
        match self {
            AnyTransport::Stream(transport) => {
                let (receiver, sender) = transport.split();
                (AnyReceiver::Stream(receiver), AnySender::Stream(sender))
            }
            #[cfg(feature = "http")]
            AnyTransport::Http(transport) => {
                let (receiver, sender) = (*transport).split();
                (AnyReceiver::Http(receiver), AnySender::Http(Box::new(sender)))
            }
            #[cfg(feature = "http")]
            AnyTransport::WebSocket(transport) => {
                let (receiver, sender) = transport.split();
                (AnyReceiver::WebSocket(receiver), AnySender::WebSocket(sender))
            }
        }
    }
}

impl FrameReceiver for AnyReceiver {
    async fn receive(&mut self) -> Result<Option<Bytes>, TransportError> {
        each_transport!(self, AnyReceiver, receiver => receiver.receive().await)
    }
}

impl FrameSender for AnySender {
    async fn send(&mut self, body: Bytes) -> Result<(), TransportError> {
        each_transport!(self, AnySender, sender => sender.send(body).await)
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        each_transport!(self, AnySender, sender => sender.flush().await)
    }

    async fn send_flushed(&mut self, body: Bytes) -> Result<(), TransportError> {
        each_transport!(self, AnySender, sender => sender.send_flushed(body).await)
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        each_transport!(self, AnySender, sender => sender.close().await)
    }
}
