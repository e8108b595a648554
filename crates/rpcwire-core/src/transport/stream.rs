//! The transport over any `AsyncRead` / `AsyncWrite` pair, and over stdio.

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};

use super::{FrameReceiver, FrameSender, Transport, TransportError};
use crate::frame::{FrameDecoder, Framing};

/// Bytes reserved in the read buffer before each read.
const READ_RESERVE: usize = 64 * 1024;

/// Below this much free space the read buffer is topped up to [`READ_RESERVE`].
const READ_MIN_FREE: usize = 4 * 1024;

/// Queued output is written out once it reaches this size, even before `flush`.
const WRITE_HIGH_WATER: usize = 64 * 1024;

/// A [`Transport`] over a reader and a writer in one [`Framing`].
///
/// ```
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::StreamTransport;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// // Over a TCP connection's halves:
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// # let address = listener.local_addr()?;
/// let stream = tokio::net::TcpStream::connect(address).await?;
/// let (read, write) = stream.into_split();
/// let transport = StreamTransport::new(read, write, Framing::Ndjson).with_max_frame(1 << 16);
/// # let _ = transport;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct StreamTransport<R, W> {
    receiver: StreamReceiver<R>,
    sender: StreamSender<W>,
}

impl<R, W> StreamTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading frames from `reader` and writing them to `writer`, both in
    /// `framing`, with the default maximum frame size ([`DEFAULT_MAX_FRAME`]).
    ///
    /// [`DEFAULT_MAX_FRAME`]: crate::frame::DEFAULT_MAX_FRAME
    ///
    /// ```
    /// use rpcwire_core::frame::Framing;
    /// let (a, b) = tokio::io::simplex(1024);
    /// let transport = rpcwire_core::transport::StreamTransport::new(a, b, Framing::ContentLength);
    /// # let _ = transport;
    /// ```
    pub fn new(reader: R, writer: W, framing: Framing) -> StreamTransport<R, W> {
        StreamTransport {
            receiver: StreamReceiver::new(reader, framing),
            sender: StreamSender::new(writer, framing),
        }
    }

    /// Sets the largest frame the receiver accepts; a larger one is skipped with a
    /// recoverable [`TransportError::Frame`].
    ///
    /// ```
    /// use rpcwire_core::frame::Framing;
    /// let (a, b) = tokio::io::simplex(1024);
    /// let transport = rpcwire_core::transport::StreamTransport::new(a, b, Framing::Ndjson).with_max_frame(4096);
    /// # let _ = transport;
    /// ```
    pub fn with_max_frame(mut self, max_frame: usize) -> StreamTransport<R, W> {
        self.receiver = self.receiver.with_max_frame(max_frame);
        self
    }
}

impl<T> StreamTransport<ReadHalf<T>, WriteHalf<T>>
where
    T: AsyncRead + AsyncWrite + Send + 'static,
{
    /// A transport over one bidirectional stream (split with [`tokio::io::split`]).
    ///
    /// ```
    /// use rpcwire_core::frame::Framing;
    /// let (a, _b) = tokio::io::duplex(1024);
    /// let transport = rpcwire_core::transport::StreamTransport::from_io(a, Framing::Ndjson);
    /// # let _ = transport;
    /// ```
    pub fn from_io(io: T, framing: Framing) -> StreamTransport<ReadHalf<T>, WriteHalf<T>> {
        let (reader, writer) = tokio::io::split(io);
        StreamTransport::new(reader, writer, framing)
    }
}

impl<R, W> Transport for StreamTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Receiver = StreamReceiver<R>;
    type Sender = StreamSender<W>;

    fn split(self) -> (StreamReceiver<R>, StreamSender<W>) {
        (self.receiver, self.sender)
    }
}

/// The read half of a [`StreamTransport`]: reads into its own buffer and cuts frames out of
/// it with a [`FrameDecoder`] (frames are split off the buffer without copying).
///
/// ```
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{FrameReceiver, StreamReceiver};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), rpcwire_core::transport::TransportError> {
/// let wire = &b"Content-Length: 2\r\n\r\n[]"[..];
/// let mut receiver = StreamReceiver::new(wire, Framing::ContentLength);
/// assert_eq!(&receiver.receive().await?.unwrap()[..], b"[]");
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct StreamReceiver<R> {
    reader: R,
    decoder: FrameDecoder,
    buffer: BytesMut,
    at_eof: bool,
}

impl<R: AsyncRead + Unpin + Send + 'static> StreamReceiver<R> {
    /// A receiver reading `framing` from `reader`.
    ///
    /// ```
    /// let receiver = rpcwire_core::transport::StreamReceiver::new(&b""[..], rpcwire_core::frame::Framing::Ndjson);
    /// # let _ = receiver;
    /// ```
    pub fn new(reader: R, framing: Framing) -> StreamReceiver<R> {
        StreamReceiver {
            reader,
            decoder: FrameDecoder::new(framing),
            buffer: BytesMut::new(),
            at_eof: false,
        }
    }

    /// Sets the largest frame accepted.
    ///
    /// ```
    /// let receiver = rpcwire_core::transport::StreamReceiver::new(&b""[..], rpcwire_core::frame::Framing::Ndjson)
    ///     .with_max_frame(1024);
    /// # let _ = receiver;
    /// ```
    pub fn with_max_frame(mut self, max_frame: usize) -> StreamReceiver<R> {
        self.decoder = self.decoder.with_max_frame(max_frame);
        self
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> FrameReceiver for StreamReceiver<R> {
    async fn receive(&mut self) -> Result<Option<Bytes>, TransportError> {
        loop {
            if self.at_eof {
                return Ok(self.decoder.decode_eof(&mut self.buffer)?);
            }
            if let Some(frame) = self.decoder.decode(&mut self.buffer)? {
                return Ok(Some(frame));
            }
            if self.buffer.capacity() - self.buffer.len() < READ_MIN_FREE {
                // Reclaims the buffer's memory once the frames split off it are dropped.
                self.buffer.reserve(READ_RESERVE);
            }
            // `read_buf` is cancel safe: if this future is dropped here, nothing was read.
            if self.reader.read_buf(&mut self.buffer).await? == 0 {
                self.at_eof = true;
            }
        }
    }
}

/// The write half of a [`StreamTransport`]: frames bodies into a buffer and writes it out
/// on [`flush`](FrameSender::flush) (or when it grows large).
///
/// ```
/// use bytes::Bytes;
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{FrameSender, StreamSender};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), rpcwire_core::transport::TransportError> {
/// let mut sender = StreamSender::new(Vec::new(), Framing::Ndjson);
/// sender.send(Bytes::from_static(b"[1]")).await?;
/// sender.send(Bytes::from_static(b"[2]")).await?;
/// sender.close().await?;
/// assert_eq!(sender.get_ref(), b"[1]\n[2]\n");
/// assert!(sender.send(Bytes::from_static(b"[3]")).await.is_err()); // closed
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct StreamSender<W> {
    writer: W,
    framing: Framing,
    buffer: BytesMut,
    closed: bool,
}

impl<W: AsyncWrite + Unpin + Send + 'static> StreamSender<W> {
    /// A sender writing `framing` to `writer`.
    ///
    /// ```
    /// let sender = rpcwire_core::transport::StreamSender::new(Vec::new(), rpcwire_core::frame::Framing::Ndjson);
    /// assert!(sender.get_ref().is_empty());
    /// ```
    pub fn new(writer: W, framing: Framing) -> StreamSender<W> {
        StreamSender {
            writer,
            framing,
            buffer: BytesMut::new(),
            closed: false,
        }
    }

    /// The underlying writer.
    ///
    /// ```
    /// let sender = rpcwire_core::transport::StreamSender::new(Vec::<u8>::new(), rpcwire_core::frame::Framing::Ndjson);
    /// assert_eq!(sender.get_ref().len(), 0);
    /// ```
    pub fn get_ref(&self) -> &W {
        &self.writer
    }

    async fn write_out(&mut self) -> Result<(), TransportError> {
        if !self.buffer.is_empty() {
            let result = self.writer.write_all(&self.buffer).await;
            self.buffer.clear();
            // Grown past twice the high-water mark by one large answer: not kept at that size.
            if self.buffer.capacity() > 2 * WRITE_HIGH_WATER {
                self.buffer = BytesMut::new();
            }
            result?;
        }
        Ok(())
    }

    fn check_open(&self) -> Result<(), TransportError> {
        if self.closed {
            Err(TransportError::Closed)
        } else {
            Ok(())
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> FrameSender for StreamSender<W> {
    async fn send(&mut self, body: Bytes) -> Result<(), TransportError> {
        self.check_open()?;
        self.framing.encode(&body, &mut self.buffer);
        if self.buffer.len() >= WRITE_HIGH_WATER {
            self.write_out().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        self.check_open()?;
        self.write_out().await?;
        self.writer.flush().await?;
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.check_open()?;
        self.closed = true;
        self.write_out().await?;
        self.writer.shutdown().await?;
        Ok(())
    }
}
