//! What the MCP gateway reports through the `metrics` facade (`metrics` feature; without it
//! these do nothing).
//!
//! | name | kind | labels |
//! | --- | --- | --- |
//! | `rpcwire_mcp_gateway_sessions` | gauge | |
//! | `rpcwire_mcp_gateway_children` | gauge | |
//! | `rpcwire_mcp_gateway_calls_total` | counter | `outcome` (`ok`, `server_error`, `gateway_error`, `cancelled`) |
//! | `rpcwire_mcp_gateway_call_seconds` | histogram | |
//! | `rpcwire_mcp_gateway_refused_total` | counter | `reason` (`spawn`, `busy`, `unauthorized`, `forbidden`, `sessions`) |

pub(crate) use crate::trace::Stopwatch;

/// A session began.
#[inline]
pub(crate) fn session_started() {
    #[cfg(feature = "metrics")]
    metrics::gauge!("rpcwire_mcp_gateway_sessions").increment(1.0);
}

/// A session ended.
#[inline]
pub(crate) fn session_ended() {
    #[cfg(feature = "metrics")]
    metrics::gauge!("rpcwire_mcp_gateway_sessions").decrement(1.0);
}

/// A server child was started.
#[inline]
pub(crate) fn child_started() {
    #[cfg(feature = "metrics")]
    metrics::gauge!("rpcwire_mcp_gateway_children").increment(1.0);
}

/// A server child was reaped.
#[inline]
pub(crate) fn child_reaped() {
    #[cfg(feature = "metrics")]
    metrics::gauge!("rpcwire_mcp_gateway_children").decrement(1.0);
}

/// A forwarded request ended with `outcome`.
#[inline]
pub(crate) fn call_ended(outcome: &'static str, stopwatch: Stopwatch) {
    #[cfg(feature = "metrics")]
    {
        metrics::counter!("rpcwire_mcp_gateway_calls_total", "outcome" => outcome).increment(1);
        metrics::histogram!("rpcwire_mcp_gateway_call_seconds").record(stopwatch.elapsed_secs());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (outcome, stopwatch);
}

/// A request was refused for `reason`.
#[inline]
pub(crate) fn refused(reason: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("rpcwire_mcp_gateway_refused_total", "reason" => reason).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = reason;
}
