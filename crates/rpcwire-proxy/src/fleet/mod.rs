//! A fleet of gateways (`redis` feature): several identical instances behind a load
//! balancer that agree, through a real Redis, on what each client may still send.
//!
//! - [`ApiKeys`]: the clients' keys and their rates (from a file of `KEY RATE` lines), found
//!   in a request by `Authorization: Bearer`, `x-api-key` or the path (`/KEY`), kept and
//!   compared as SHA-256 digests, never logged (a key is shown by its label).
//! - [`SharedLimiter`]: a rate limit per key shared by every instance — one atomic Redis
//!   script per request (GCRA: a burst of one second's worth, then the rate), within a
//!   timeout, or for keys of high rates, the requests let through charged after the fact
//!   every 5 ms in one script for all keys (over-admission bounded: 1% of a second's worth); when Redis does not answer in time, a local limiter at the key's rate divided
//!   by the instances takes over ([`OnRedisDown::Open`]) or requests are refused
//!   ([`OnRedisDown::Closed`]), and Redis is used again as soon as it answers.
//! - [`RateLimitLayer`] and [`CacheLayer`]: JSON-RPC layers ([`RpcService`](crate::middleware::RpcService)s
//!   around any other): each call counted against the rate of the [`ApiKey`] among its
//!   extensions and refused past it ([`Refused`]; a batch decided in one round trip), and the
//!   answers of chosen methods kept in a cache shared by the fleet, identical calls under way
//!   coalesced.
//! - [`FleetLayer`]: all of it as a tower layer in front of a JSON-RPC HTTP service: `401`
//!   without a known key (before the body is read), then the body parsed once and its calls
//!   through the two layers around the service behind; `429` with `Retry-After` and a -32005
//!   error per request over the rate (each element of a batch decided on its own); counted
//!   by key label (`metrics` feature: `rpcwire_fleet_*`) and traced with the label in a span
//!   (`tracing` feature), never the key.
//! - [`SharedHealth`]: the upstreams' breakers agree across the fleet: an upstream benched by
//!   one instance is benched by all, and probed back by one.
//!
//! ```
//! use rpcwire::proxy::fleet::ApiKeys;
//! let keys = ApiKeys::parse("# key            rate per second\nk3y-alpha 100\nk3y-beta 2.5\n").unwrap();
//! let key = keys.find("k3y-beta").unwrap();
//! assert_eq!((key.label(), key.rate()), ("line 3", 2.5));
//! assert!(keys.find("k3y-gamma").is_none());
//! ```

mod behind;
mod cached;
mod config;
mod gcra;
mod health;
mod keys;
mod layer;
mod limit;
mod metrics;
mod rate;
mod scripts;
mod target;

/// A map whose keys only configuration inserts (methods, API keys' digests), looked up per
/// request: hashed with foldhash, a fraction of SipHash's cost on short keys. Safe without a
/// keyed hash: a client's input only probes such a map, it never adds to it.
type ConfigMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

pub(crate) use cached::cache_name;
pub use cached::{CacheLayer, Cached, CachedAnswer};
pub use gcra::LocalLimiter;
pub use health::{HealthConfig, HealthStats, SharedHealth};
pub use keys::{key_in, ApiKey, ApiKeys, KeysError};
pub use layer::{FleetLayer, FleetService, LIMITER_UNAVAILABLE, LIMIT_EXCEEDED, UNAUTHORIZED};
pub use limit::{Decision, LimitConfig, LimitStats, OnRedisDown, SharedLimiter};
pub use rate::{RateLimitLayer, RateLimited, Refused};
pub use target::RedisTarget;
