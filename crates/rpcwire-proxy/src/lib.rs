//! Building blocks for forwarding JSON-RPC without re-encoding it: what a gateway or a proxy
//! needs between the client's bytes and the upstream's.
//!
//! - [`IdSlot`]: where a message's id lies in its bytes, so that a request goes upstream with
//!   the gateway's own id and the answer comes back with the client's id, byte for byte
//!   (`1.50`, `-0`, `18446744073709551616`, `"\u00e9"` stay exactly that), everything else
//!   (method, params, result, error) passed on as it came.
//! - [`batch_elements`] and [`join_batch`]: the elements of a batch as slices of its bytes,
//!   and a batch put together again from such slices, so that a client's batch can be split
//!   between upstreams and their answers gathered in the client's order.
//! - [`UpstreamGroup`]: upstreams over any transport, each with an
//!   in-flight limit, a breaker and a pause for its rate limit (an HTTP 429 or a -32005
//!   answer leaves it alone for its `Retry-After`), a timeout per attempt, and retries on the
//!   next upstream as a [`RetryPolicy`] allows — each a middleware layer
//!   ([`rpcwire::middleware`](crate::middleware)) around the upstream's link, composed from
//!   outside: retry → (next upstream) → pause → breaker → timeout → in-flight limit → link; every
//!   call ends with the upstream's answer as it came or a [`ForwardError`] that becomes the
//!   client's error object.
//! - [`Gateway`]: the upstream groups behind a `Router`'s fallback — method allow
//!   and deny lists, methods routed to their own group, identical calls under way coalesced.
//!
//! ```
//! use bytes::Bytes;
//! use rpcwire::proxy::IdSlot;
//!
//! // The client's request goes upstream with the gateway's id 7…
//! let request = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1.50,"method":"eth_call","params":[{"to":"0x1"}]}"#);
//! let message = rpcwire::parse(&request).unwrap().single().unwrap();
//! let client_id = IdSlot::find(&request, &message).unwrap();
//! let upstream = client_id.replace(b"7");
//! assert_eq!(&upstream[..], br#"{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{"to":"0x1"}]}"#);
//!
//! // …and its answer comes back with the client's id, exactly as the client wrote it.
//! let answer = Bytes::from_static(br#"{"jsonrpc":"2.0","id":7,"result":"0x00"}"#);
//! let message = rpcwire::parse(&answer).unwrap().single().unwrap();
//! let restored = IdSlot::find(&answer, &message).unwrap().replace(client_id.id_text());
//! assert_eq!(&restored[..], br#"{"jsonrpc":"2.0","id":1.50,"result":"0x00"}"#);
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers below, under the paths the modules here know them by.
use rpcwire_core::{codes, dispatch, encode, frame, json, message, middleware, parse, sync, trace};

/// The transports: the core's, and with `http` the HTTP crate's.
mod transport {
    pub(crate) use crate::any::AnyTransport;
    pub(crate) use rpcwire_core::transport::*;
    #[cfg(feature = "http")]
    pub(crate) use rpcwire_http::http;
}

mod any;
pub use any::{AnyReceiver, AnySender, AnyTransport};

mod attempt;

#[cfg(feature = "redis")]
pub mod fleet;

mod batch_split;
mod breaker;
mod chain;
mod dial;
mod forward_error;
mod gateway;
mod group;
mod hedge;
mod id_slot;
mod label;
mod limit;
mod link;
mod metrics;
mod retry;
mod subscribe;
mod upstream;

pub use batch_split::{batch_elements, join_batch};
pub use chain::{
    CacheStats, FinalityCache, HeadTracker, Tracking, DEFAULT_CACHE_BYTES, DEFAULT_FINALITY_DEPTH,
    DEFAULT_HEAD_TTL,
};
pub use dial::{check_address, Dial};
pub use forward_error::ForwardError;
pub use gateway::{Gateway, GatewayStats, NonConformingPolicy, DEFAULT_MAX_LOG_CHUNKS};
pub use group::{UpstreamGroup, DEFAULT_ATTEMPT_TIMEOUT};
pub use hedge::{Hedge, HedgeStats};
pub use id_slot::IdSlot;
pub use label::upstream_label;
pub use limit::{DEFAULT_LIMIT_PAUSE, DEFAULT_MAX_LIMIT_PAUSE};
pub use link::{LinkAnswer, LinkBatch, LinkBatchFuture, LinkError, LinkErrorKind, LinkFuture, UpstreamLink};
pub use retry::RetryPolicy;
pub use subscribe::{
    Connector, SubscriptionStats, Subscriptions, DEFAULT_MAX_QUEUED, DEFAULT_MAX_SUBSCRIPTIONS,
};
pub use upstream::{Upstream, UpstreamStats, DEFAULT_MAX_BATCH, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_RESPONSE};
