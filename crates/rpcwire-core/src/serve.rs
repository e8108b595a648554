//! The zero-allocation serving loop: read a chunk into a pooled buffer → split frames →
//! parse → route → encode → frame → write.
//!
//! [`Connection`] holds one stream's state (its decoder, pooled input and output buffers,
//! batch storage). After warm-up, when every buffer has grown to its working size, handling
//! an escape-free message allocates nothing: frames are `Bytes` split off the input buffer
//! without copying, parsing borrows from them, the router writes its answer straight into
//! the output buffer inside a frame, and the input buffer's memory is reclaimed once the
//! frames are dropped. [`serve`] runs the loop over any `std::io::Read` / `Write` pair.
//!
//! ```
//! use rpcwire_core::dispatch::Router;
//! use rpcwire_core::frame::Framing;
//!
//! let mut router = Router::new();
//! router.method("sum", |p: Vec<i64>| Ok(p.iter().sum::<i64>()));
//!
//! let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[1,2],\"id\":1}\n\
//!               {\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[3]}\n";
//! let mut output = Vec::new();
//! let stats = rpcwire_core::serve::serve(&router, Framing::Ndjson, &input[..], &mut output)?;
//! assert_eq!(output, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":3}\n");
//! assert_eq!((stats.frames, stats.answers), (2, 1));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Read, Write};

use bytes::BytesMut;

use crate::dispatch::{Answer, Responder, Router};
use crate::frame::{FrameDecoder, FrameError, Framing};
use crate::pool::{BufferPool, PooledBuf};

/// Bytes asked of the reader per read.
pub const READ_CHUNK: usize = 64 * 1024;

/// What a connection has handled so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Frames decoded (each one message or batch).
    pub frames: u64,
    /// Answers written (responses, batch arrays, error objects).
    pub answers: u64,
    /// Frames rejected by the framing layer (too large, bad header, truncated).
    pub frame_errors: u64,
    /// Input bytes read.
    pub bytes_in: u64,
}

/// One stream's state for the serving loop: the frame decoder, pooled input and output
/// buffers, and the [`Responder`] that turns frames into answers.
///
/// ```
/// use rpcwire_core::dispatch::Router;
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::pool::BufferPool;
/// use rpcwire_core::serve::Connection;
///
/// let mut router = Router::new();
/// router.method("ping", |_: rpcwire_core::dispatch::NoParams| Ok("pong"));
/// let pool = BufferPool::new(4, 4096, 1 << 20);
/// let mut connection = Connection::new(Framing::ContentLength, &pool);
///
/// let wire = b"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":7}";
/// // The bytes may arrive in any pieces.
/// for piece in wire.chunks(9) {
///     connection.input().extend_from_slice(piece);
///     connection.process(&router).unwrap();
/// }
/// assert_eq!(
///     &connection.output()[..],
///     &b"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"pong\"}"[..]
/// );
/// ```
#[derive(Debug)]
pub struct Connection {
    framing: Framing,
    decoder: FrameDecoder,
    input: PooledBuf,
    output: PooledBuf,
    responder: Responder,
    stats: ConnectionStats,
}

impl Connection {
    /// A connection speaking `framing`, with input and output buffers from `pool` and the
    /// default maximum frame size.
    ///
    /// ```
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::Ndjson, &pool);
    /// assert_eq!(connection.stats().frames, 0);
    /// ```
    pub fn new(framing: Framing, pool: &BufferPool) -> Connection {
        Connection {
            framing,
            decoder: FrameDecoder::new(framing),
            input: pool.get(),
            output: pool.get(),
            responder: Responder::new(),
            stats: ConnectionStats::default(),
        }
    }

    /// Sets the maximum frame size (a larger frame is answered with an error and skipped).
    ///
    /// ```
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::Ndjson, &pool)
    ///     .with_max_frame(4096);
    /// # let _ = connection;
    /// ```
    pub fn with_max_frame(mut self, max_frame: usize) -> Connection {
        self.decoder = self.decoder.with_max_frame(max_frame);
        self
    }

    /// What the connection has handled so far.
    ///
    /// ```
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::Ndjson, &pool);
    /// assert_eq!(connection.stats().answers, 0);
    /// ```
    pub fn stats(&self) -> ConnectionStats {
        self.stats
    }

    /// The input buffer: append bytes read from the peer here, then call
    /// [`process`](Connection::process).
    ///
    /// ```
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let mut connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::Ndjson, &pool);
    /// connection.input().extend_from_slice(b"[");
    /// assert_eq!(connection.input().len(), 1);
    /// ```
    pub fn input(&mut self) -> &mut BytesMut {
        &mut self.input
    }

    /// The answers written so far, framed: write them to the peer, then clear the buffer.
    ///
    /// ```
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let mut connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::Ndjson, &pool);
    /// assert!(connection.output().is_empty());
    /// ```
    pub fn output(&mut self) -> &mut BytesMut {
        &mut self.output
    }

    /// Reads once from `reader` into the input buffer (up to [`READ_CHUNK`] bytes); the
    /// number of bytes read, 0 at end of input. Allocates only while the buffer grows.
    ///
    /// ```
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let mut connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::Ndjson, &pool);
    /// let mut reader = &b"[1]\n"[..];
    /// assert_eq!(connection.read_from(&mut reader).unwrap(), 4);
    /// assert_eq!(connection.read_from(&mut reader).unwrap(), 0);
    /// ```
    pub fn read_from(&mut self, reader: &mut impl Read) -> io::Result<usize> {
        let filled = self.input.len();
        // Frames from the previous read are dropped by now: this reclaims the buffer's
        // memory instead of allocating (see `BytesMut::reserve`).
        self.input.resize(filled + READ_CHUNK, 0);
        let result = loop {
            match reader.read(&mut self.input[filled..]) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        let read = *result.as_ref().unwrap_or(&0);
        self.input.truncate(filled + read);
        self.stats.bytes_in += read as u64;
        result
    }

    /// Decodes every complete frame in the input buffer and appends the framed answers to
    /// the output buffer. A frame over the size limit is answered with an error (id `null`)
    /// and skipped; the next frames are still served. A fatal framing error (a garbage
    /// Content-Length header) is answered, then returned: the stream cannot be resynchronized.
    ///
    /// ```
    /// let router = rpcwire_core::dispatch::Router::new();
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let mut connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::Ndjson, &pool)
    ///     .with_max_frame(8);
    /// connection.input().extend_from_slice(b"[1,2,3,4,5,6,7]\n[]\n");
    /// connection.process(&router).unwrap();
    /// let text = std::str::from_utf8(connection.output()).unwrap();
    /// assert_eq!(text.lines().count(), 2); // the too-large frame, then `[]`: both -32600
    /// assert!(text.lines().all(|line| line.contains("-32600")));
    /// ```
    pub fn process(&mut self, router: &Router) -> Result<(), FrameError> {
        loop {
            match self.decoder.decode(&mut self.input) {
                Ok(Some(frame)) => self.answer(router, &frame),
                Ok(None) => return Ok(()),
                Err(error) => {
                    self.answer_frame_error(&error);
                    if !error.is_recoverable() {
                        return Err(error);
                    }
                }
            }
        }
    }

    /// At end of input: serves what is left (an NDJSON line without its newline) and
    /// answers a frame cut off by the end of input with a parse error (-32700, id `null`).
    /// Returns an error only for a fatal framing error.
    ///
    /// ```
    /// let router = rpcwire_core::dispatch::Router::new();
    /// let pool = rpcwire_core::pool::BufferPool::new(2, 1024, 1 << 20);
    /// let mut connection = rpcwire_core::serve::Connection::new(rpcwire_core::frame::Framing::ContentLength, &pool);
    /// connection.input().extend_from_slice(b"Content-Length: 10\r\n\r\n[1,");
    /// connection.process(&router).unwrap();
    /// connection.finish(&router).unwrap();
    /// assert!(std::str::from_utf8(connection.output()).unwrap().contains("-32700"));
    /// ```
    pub fn finish(&mut self, router: &Router) -> Result<(), FrameError> {
        self.process(router)?;
        loop {
            match self.decoder.decode_eof(&mut self.input) {
                Ok(Some(frame)) => self.answer(router, &frame),
                Ok(None) => return Ok(()),
                Err(error) => {
                    self.answer_frame_error(&error);
                    // A frame cut off by the end of input is answered; the stream is over.
                    if let FrameError::Truncated { .. } = error {
                        return Ok(());
                    }
                    if !error.is_recoverable() {
                        return Err(error);
                    }
                }
            }
        }
    }

    /// Routes one frame, framing the answer in place (or writing nothing).
    fn answer(&mut self, router: &Router, frame: &[u8]) {
        self.stats.frames += 1;
        let output: &mut BytesMut = &mut self.output;
        let start = output.len();
        let mark = self.framing.begin(output);
        // The blocking loop cannot await: async handlers are refused (-32603) here.
        if let Answer::Written =
            self.responder
                .respond_from(router, frame, None, false, output, |_| {}, |_| {})
        {
            self.framing.finish(output, mark);
            self.stats.answers += 1;
        } else {
            output.truncate(start);
        }
    }

    /// Answers a framing error with id `null`: -32600 for a frame over the limit, -32700
    /// for a header or frame that cannot be read.
    fn answer_frame_error(&mut self, error: &FrameError) {
        self.stats.frame_errors += 1;
        crate::trace::event!(warn, error = %error, "frame error");
        let output: &mut BytesMut = &mut self.output;
        let mark = self.framing.begin(output);
        self.responder.answer_frame_error(error, output);
        self.framing.finish(output, mark);
        self.stats.answers += 1;
    }
}

/// Serves one stream: reads `reader` to its end in chunks, answers every message through
/// `router` in `framing`, writes the answers to `writer` after each read, and returns the
/// connection's statistics. A frame over the size limit is answered and skipped; a fatal
/// framing error is answered and ends the stream (with an `InvalidData` error).
///
/// ```
/// let router = rpcwire_core::dispatch::Router::new();
/// let mut output = Vec::new();
/// let input = &b"{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":1}\n"[..];
/// rpcwire_core::serve::serve(&router, rpcwire_core::frame::Framing::Ndjson, input, &mut output)?;
/// assert!(std::str::from_utf8(&output).unwrap().contains("-32601"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn serve<R: Read, W: Write>(
    router: &Router,
    framing: Framing,
    mut reader: R,
    mut writer: W,
) -> io::Result<ConnectionStats> {
    let pool = BufferPool::new(2, READ_CHUNK, 4 << 20);
    let mut connection = Connection::new(framing, &pool).with_max_frame(router.parser().limits().max_size());
    loop {
        let read = connection.read_from(&mut reader)?;
        let outcome = if read == 0 {
            connection.finish(router)
        } else {
            connection.process(router)
        };
        if !connection.output().is_empty() {
            writer.write_all(connection.output())?;
            writer.flush()?;
            connection.output().clear();
        }
        if let Err(error) = outcome {
            return Err(io::Error::new(io::ErrorKind::InvalidData, error));
        }
        if read == 0 {
            return Ok(connection.stats());
        }
    }
}
