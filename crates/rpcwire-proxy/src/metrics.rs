//! What the gateway pieces report through the `metrics` facade (`metrics` feature; without
//! it these do nothing): per upstream and method, attempts and their outcomes, latency and
//! requests in flight; per method, retries, coalesced calls and refusals.
//!
//! | name | kind | labels |
//! | --- | --- | --- |
//! | `rpcwire_upstream_requests_total` | counter | `upstream`, `method`, `outcome` (`answered`, `upstream_error`, `not_reached`, `no_answer`, `limited`) |
//! | `rpcwire_upstream_latency_seconds` | histogram | `upstream`, `method` |
//! | `rpcwire_upstream_in_flight` | gauge | `upstream` |
//! | `rpcwire_upstream_retries_total` | counter | `method` |
//! | `rpcwire_upstream_hedges_total` | counter | `method`, `outcome` (`sent`, `won`) |
//! | `rpcwire_gateway_coalesced_total` | counter | `method` |
//! | `rpcwire_gateway_denied_total` | counter | `method` |

pub(crate) use crate::trace::Stopwatch;

/// An attempt on `upstream` began.
#[inline]
pub(crate) fn attempt_started(upstream: &str) {
    #[cfg(feature = "metrics")]
    metrics::gauge!("rpcwire_upstream_in_flight", "upstream" => upstream.to_owned()).increment(1.0);
    #[cfg(not(feature = "metrics"))]
    let _ = upstream;
}

/// An attempt on `upstream` ended with `outcome` after `elapsed`.
#[inline]
pub(crate) fn attempt_ended(upstream: &str, method: &str, outcome: &'static str, stopwatch: Stopwatch) {
    #[cfg(feature = "metrics")]
    {
        let labels = [("upstream", upstream.to_owned()), ("method", method.to_owned())];
        metrics::gauge!("rpcwire_upstream_in_flight", "upstream" => upstream.to_owned()).decrement(1.0);
        metrics::histogram!("rpcwire_upstream_latency_seconds", &labels).record(stopwatch.elapsed_secs());
        let [upstream, method] = labels;
        metrics::counter!(
            "rpcwire_upstream_requests_total",
            &[upstream, method, ("outcome", outcome.to_owned())]
        )
        .increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (upstream, method, outcome, stopwatch);
}

/// A call of `method` was hedged (`won`: the second attempt's answer was the one passed on).
#[inline]
pub(crate) fn hedged(method: &str, won: bool) {
    #[cfg(feature = "metrics")]
    {
        let outcome = if won { "won" } else { "sent" };
        metrics::counter!("rpcwire_upstream_hedges_total", "method" => method.to_owned(), "outcome" => outcome)
            .increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (method, won);
}

/// A call of `method` is sent again.
#[inline]
pub(crate) fn retried(method: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("rpcwire_upstream_retries_total", "method" => method.to_owned()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = method;
}

/// A call of `method` got another identical call's answer.
#[inline]
pub(crate) fn coalesced(method: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("rpcwire_gateway_coalesced_total", "method" => method.to_owned()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = method;
}

/// A request or notification of `method` was refused by the method policy.
#[inline]
pub(crate) fn denied(method: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("rpcwire_gateway_denied_total", "method" => method.to_owned()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = method;
}
