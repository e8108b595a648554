//! # rpcwire-wire
//!
//! The wire layer of [rpcwire](https://crates.io/crates/rpcwire): JSON-RPC 2.0 bytes in and
//! out, with no runtime. The zero-copy parser ([`parse`](fn@parse), [`Parser`], [`Limits`]),
//! the message types it hands out ([`Message`], [`Request`], [`Response`], [`Id`], [`RawJson`],
//! …), the JSON scanner under it ([`json`]), NDJSON and Content-Length framing ([`frame`]),
//! writing messages into buffers ([`encode`]) and the buffer pool ([`pool`]).
//!
//! Most programs use these through the `rpcwire` facade, under the same paths
//! (`rpcwire_wire::parse`, `rpcwire_wire::message::Id`, …); a crate that only reads and writes
//! JSON-RPC messages can depend on this one alone. Nothing here depends on the crates above it
//! (dispatch, transports, proxy, MCP): the compiler holds that layering.
//!
//! ```
//! use rpcwire_wire::{ErrorObject, Message, Parsed, Response};
//!
//! #[derive(serde::Deserialize)]
//! struct Subtract { minuend: i64, subtrahend: i64 }
//!
//! let input = br#"{"jsonrpc":"2.0","id":3,"method":"subtract","params":{"minuend":42,"subtrahend":23}}"#;
//! let Parsed::Single(Message::Request(request)) = rpcwire_wire::parse(input)? else {
//!     unreachable!("a single request")
//! };
//! let response = match request.params().map(|p| p.decode::<Subtract>()) {
//!     Some(Ok(p)) => Response::success(request.id().borrowed(), &(p.minuend - p.subtrahend))?,
//!     Some(Err(e)) => Response::error(request.id().borrowed(), ErrorObject::invalid_params(e)),
//!     None => Response::error(request.id().borrowed(), ErrorObject::invalid_params("missing params")),
//! };
//! assert_eq!(serde_json::to_string(&response)?, r#"{"jsonrpc":"2.0","id":3,"result":19}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Features
//!
//! - `tokio`: `tokio_util::codec` decoders and encoders for both framings
//!   ([`frame::FrameCodec`], …).

#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod codes;
pub mod encode;
pub mod error_answer;
pub mod frame;
pub mod json;
pub mod message;
pub mod parse;
pub mod pool;

pub use message::{
    BuildError, ErrorCode, ErrorObject, Id, IdKind, JsonBytes, Message, Notification, Params, ParamsIter,
    RawJson, Request, Response, ResponsePayload,
};
pub use parse::{
    parse, Batch, BatchIter, BatchScratch, Limits, ParseError, ParseErrorKind, Parsed, ParsedFrame, Parser,
};
