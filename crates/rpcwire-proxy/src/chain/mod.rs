//! Chain awareness for Ethereum-style upstreams: each upstream's head polled
//! ([`HeadTracker`]), the group routing away from upstreams that lag
//! ([`UpstreamGroup::with_max_lag`](crate::UpstreamGroup::with_max_lag)), answers kept by
//! the finality of what they are about ([`FinalityCache`]), and `eth_getLogs` over a wide
//! range split into chunks ([`Gateway::with_log_chunks`](crate::Gateway::with_log_chunks)).

mod block;
mod cache;
mod head;
pub(crate) mod logs;

pub use cache::{CacheStats, FinalityCache, DEFAULT_CACHE_BYTES, DEFAULT_HEAD_TTL};
pub(crate) use head::{result_of, Head};
pub use head::{HeadTracker, Tracking, DEFAULT_FINALITY_DEPTH};
