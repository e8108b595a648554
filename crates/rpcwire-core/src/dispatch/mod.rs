//! Router: method name → handler, and the JSON-RPC 2.0 rules for what to answer; the
//! [`Responder`], the one serving core every transport answers frames with.
//!
//! Inside, one way: `handler` (the type-erased handlers), `reply`, `target` (where answers
//! go) and `error_answer` (parse and frame errors as error objects) are leaves; `deferred`
//! (async handlers) builds on them, `router` on those, `responder` on the router.
//!
//! [`Router`] turns one input (a message or a batch) into the exact answer bytes, written
//! into a caller-provided `BytesMut`, or into nothing. Handlers are typed (params decoded
//! with serde, result serialized with serde straight into the output), raw (the lazy
//! [`Params`](crate::Params) view in, a [`Reply`] out), notification handlers, and — with
//! the `tokio` feature — async.
//!
//! ```
//! use rpcwire_core::dispatch::{NoParams, Router};
//! use rpcwire_core::ErrorObject;
//!
//! let mut router = Router::new();
//! router
//!     .method("sum", |p: Vec<i64>| Ok(p.iter().sum::<i64>()))
//!     .method("get_data", |_: NoParams| Ok(("hello", 5)))
//!     .method("fail", |_: NoParams| -> Result<(), _> {
//!         Err(ErrorObject::new(-32000, "out of coffee").with_data(&"try later").unwrap())
//!     });
//!
//! let mut out = bytes::BytesMut::new();
//! router.handle(
//!     br#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},
//!          {"jsonrpc":"2.0","method":"notify_hello","params":[7]},
//!          {"jsonrpc":"2.0","method":"fail","id":"2"}]"#,
//!     &mut out,
//! );
//! assert_eq!(
//!     std::str::from_utf8(&out).unwrap(),
//!     r#"[{"jsonrpc":"2.0","id":"1","result":7},{"jsonrpc":"2.0","id":"2","error":{"code":-32000,"message":"out of coffee","data":"try later"}}]"#
//! );
//! ```

mod handler;
mod methods;
mod no_params;
mod reply;
mod responder;
mod router;
mod target;

pub use no_params::NoParams;
pub use reply::{Reply, Written};
pub use responder::{Answer, PendingAnswer, Responder, WholeAnswer};
pub use router::Router;
pub use rpcwire_wire::error_answer::{write_frame_error, write_parse_error};

// The async side: handlers that are awaited, the fallback, request contexts.
cfg_tokio! {
    mod context;
    mod deferred;
    mod fallback;
    mod fallback_batch;
    mod raw_call;
    mod remote;

    pub use context::{RemoteLink, RequestContext};
    pub use context::{Cancellations, OnCancel, Supervision};
    pub use fallback::{Fallback, FallbackAnswer, FallbackBatchAnswer, FallbackBatchFuture, FallbackCall, FallbackFuture};
    pub use raw_call::RawCall;
    pub use remote::{Remote, RemoteError, RemoteFuture};
}
