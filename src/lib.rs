//! # rpcwire
//!
//! Fast, strict, zero-copy JSON-RPC 2.0 decoding.
//!
//! [`parse`](fn@parse) turns bytes into borrowed views ([`Message`], [`Request`], [`Response`], …) in a
//! single pass: method names and ids borrow from the input, params and results stay raw,
//! validated JSON ([`RawJson`], [`Params`]) until a handler decodes them with serde. Ids keep
//! their exact text. Everything is validated — malformed JSON anywhere is a parse error
//! (-32700), valid JSON that breaks a JSON-RPC rule is an invalid request (-32600) — and each
//! error says what was wrong and at which byte.
//!
//! ```
//! use rpcwire::{ErrorObject, Message, Parsed, Response};
//!
//! #[derive(serde::Deserialize)]
//! struct Subtract { minuend: i64, subtrahend: i64 }
//!
//! let input = br#"{"jsonrpc":"2.0","id":3,"method":"subtract","params":{"minuend":42,"subtrahend":23}}"#;
//! let Parsed::Single(Message::Request(request)) = rpcwire::parse(input)? else {
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
//! Batches come back as a [`Batch`] whose elements are each a message or the
//! [`ParseError`] that says why not; [`ParsedFrame`] owns its bytes and can cross threads; [`Parser`] takes
//! [`Limits`] on size, nesting depth and batch length.

#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
extern crate rpcwire_core;

// The core (rpcwire-core) under its old paths.
#[doc(inline)]
pub use rpcwire_core::{correlate, dispatch, middleware, serve};
cfg_tokio! {
    pub mod transport;
    #[doc(inline)]
    pub use rpcwire_proxy as proxy;
}
cfg_mcp! {
    #[doc(inline)]
    pub use rpcwire_mcp as mcp;
}

// The wire layer (rpcwire-wire) under its old paths: `rpcwire::parse` is both the module and
// the function, as before.
#[doc(inline)]
pub use rpcwire_wire::{codes, encode, frame, json, message, parse, pool};

pub use message::{
    BuildError, ErrorCode, ErrorObject, Id, IdKind, JsonBytes, Message, Notification, Params, ParamsIter,
    RawJson, Request, Response, ResponsePayload,
};
pub use parse::{
    Batch, BatchIter, BatchScratch, Limits, ParseError, ParseErrorKind, Parsed, ParsedFrame, Parser,
};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
