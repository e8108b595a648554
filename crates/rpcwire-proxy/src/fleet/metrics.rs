//! What the fleet's layer reports through the `metrics` facade (`metrics` feature; without
//! it these do nothing), by the key's label (never the key):
//!
//! | name | kind | labels |
//! | --- | --- | --- |
//! | `rpcwire_fleet_requests_total` | counter | `key`, `outcome` (`allowed`, `cached`, `coalesced`, `limited`, `unavailable`, `unauthorized`) |
//! | `rpcwire_fleet_local_decisions_total` | counter | `key` (decided without Redis) |
//! | `rpcwire_fleet_redis_errors_total` | counter | — |

/// A request of the key labelled `key` ended with `outcome` at the layer (`unauthorized`: no
/// known key, labelled `-`).
#[inline]
pub(crate) fn request(key: &str, outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("rpcwire_fleet_requests_total", "key" => key.to_owned(), "outcome" => outcome)
        .increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (key, outcome);
}

/// A request of the key labelled `key` was decided without Redis.
#[inline]
pub(crate) fn local_decision(key: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("rpcwire_fleet_local_decisions_total", "key" => key.to_owned()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = key;
}

/// A Redis call failed or did not answer in time.
#[inline]
pub(crate) fn redis_error() {
    #[cfg(feature = "metrics")]
    metrics::counter!("rpcwire_fleet_redis_errors_total").increment(1);
}
