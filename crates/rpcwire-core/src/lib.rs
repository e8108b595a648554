//! # rpcwire-core
//!
//! The core of [rpcwire](https://crates.io/crates/rpcwire), above its wire layer
//! ([`rpcwire_wire`], re-exported here under the same paths): the [`Router`](dispatch::Router)
//! and the one serving core every transport answers frames with ([`dispatch`]), the lock-free
//! correlation table for outgoing calls ([`correlate`]), the zero-allocation blocking loop
//! ([`serve`]), and with the `tokio` feature the transports and the bidirectional `Peer`
//! (`transport`). HTTP and WebSocket are in `rpcwire-http`, above this crate.
//!
//! Most programs use these through the `rpcwire` facade, under the same paths
//! (`rpcwire_core::dispatch::Router`, `rpcwire_core::transport::Peer`, …).
//!
//! ```
//! use rpcwire_core::dispatch::{NoParams, Router};
//! use rpcwire_core::frame::Framing;
//!
//! let mut router = Router::new();
//! router
//!     .method("subtract", |(a, b): (i64, i64)| Ok(a - b))
//!     .method("get_data", |_: NoParams| Ok(("hello", 5)));
//! let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n";
//! let mut output = Vec::new();
//! rpcwire_core::serve::serve(&router, Framing::Ndjson, &input[..], &mut output)?;
//! assert_eq!(output, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":19}\n");
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! ## Features
//!
//! - `tokio`: async handlers, the stream and stdio transports, `Peer`.
//! - `tracing`: a span per request and events for what goes wrong, under the target `rpcwire`.

#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod cfg;

// The wire layer, under the paths the modules here (and users) know it by.
#[doc(no_inline)]
pub use rpcwire_wire::{codes, encode, frame, json, message, parse, pool};
#[doc(no_inline)]
pub use rpcwire_wire::{
    Batch, BatchIter, BatchScratch, Limits, ParseError, ParseErrorKind, Parsed, ParsedFrame, Parser,
};
#[doc(no_inline)]
pub use rpcwire_wire::{
    BuildError, ErrorCode, ErrorObject, Id, IdKind, JsonBytes, Message, Notification, Params, ParamsIter,
    RawJson, Request, Response, ResponsePayload,
};

pub mod correlate;
pub mod dispatch;
pub mod middleware;
pub mod serve;
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub mod sync;
#[doc(hidden)] // for rpcwire's own crates; not covered by semver
pub mod trace;
cfg_tokio! {
    pub mod transport;
}

/// The `tracing` crate, for the [`trace`] macros' expansions in rpcwire's other crates.
#[cfg(feature = "tracing")]
#[doc(hidden)]
pub use tracing as __tracing;
