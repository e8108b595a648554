//! Framing: cutting a byte stream into messages, and writing messages into one.
//!
//! Two framings are spoken by JSON-RPC peers:
//!
//! - [`Framing::Ndjson`]: one message per line (`\n`, or `\r\n`), as over TCP sockets and by
//!   MCP's stdio transport — [`NdjsonDecoder`], [`encode_ndjson`];
//! - [`Framing::ContentLength`]: a `Content-Length: N` header, an empty line, then `N` bytes,
//!   as in the Language Server Protocol — [`ContentLengthDecoder`],
//!   [`encode_content_length`].
//!
//! The decoders work over partial reads: bytes are appended to a [`BytesMut`] as they
//! arrive, and `decode` hands out each complete frame as a [`Bytes`] split off the buffer,
//! without copying. They follow `tokio_util::codec::Decoder`'s contract (and implement it,
//! through the codecs, with the `tokio` feature). Any split of the input into reads gives
//! the same frames and errors. In steady state — a reused buffer, frames dropped before the
//! next read — decoding and encoding allocate nothing.
//!
//! ```
//! use bytes::BytesMut;
//! use rpcwire_wire::frame::{FrameDecoder, Framing};
//!
//! let framing: Framing = "content-length".parse()?;
//! let mut wire = BytesMut::new();
//! framing.encode(br#"{"jsonrpc":"2.0","method":"initialized"}"#, &mut wire);
//!
//! let mut decoder = FrameDecoder::new(framing);
//! let frame = decoder.decode(&mut wire)?.expect("a whole frame");
//! assert_eq!(&frame[..], br#"{"jsonrpc":"2.0","method":"initialized"}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`BytesMut`]: bytes::BytesMut
//! [`Bytes`]: bytes::Bytes

mod content_length;
mod decoder;
mod error;
mod framing;
mod line_scan;
mod ndjson;
mod write;

#[cfg(feature = "tokio")]
mod codec;

#[cfg(feature = "tokio")]
pub use codec::{ContentLengthCodec, FrameCodec, NdjsonCodec};
pub use content_length::ContentLengthDecoder;
pub use decoder::FrameDecoder;
pub use error::{FrameError, HeaderError};
pub use framing::{FrameMark, Framing, ParseFramingError};
pub use ndjson::NdjsonDecoder;
pub use write::{encode_content_length, encode_ndjson};

/// The default maximum frame: 1 MiB.
///
/// ```
/// assert_eq!(rpcwire_wire::frame::DEFAULT_MAX_FRAME, 1 << 20);
/// ```
pub const DEFAULT_MAX_FRAME: usize = 1 << 20;

/// The default maximum Content-Length header: 8 KiB.
///
/// ```
/// assert_eq!(rpcwire_wire::frame::DEFAULT_MAX_HEADER, 8 << 10);
/// ```
pub const DEFAULT_MAX_HEADER: usize = 8 << 10;
