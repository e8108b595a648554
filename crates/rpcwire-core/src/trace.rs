//! Tracing (`tracing` feature): a span per request and events for what goes wrong, all under
//! the target `rpcwire`; without the feature every call here compiles to nothing. And the
//! `Stopwatch` the latency histograms of the `metrics` feature read.
//!
//! Spans: `rpc.request` with `method`, `id`, and when it ends `outcome` (`ok`, `error`,
//! `cancelled`) with the error `code` and `duration_us`. Events: handler timeouts, requests
//! cancelled by the other side, calls timed out, responses that match no call (late after
//! a timeout, duplicated, forged), notifications dropped because their params did not
//! decode, handler panics (with their text), frame errors.

#[cfg(feature = "tracing")]
use std::time::Instant;

use crate::message::Id;

/// An event at `level` (`error`, `warn`, `info`, `debug`, `trace`) with `tracing`'s field
/// syntax, under the target `rpcwire`; nothing (its arguments not even evaluated) without
/// the feature.
#[cfg(feature = "tracing")]
#[macro_export]
#[doc(hidden)] // for rpcwire's own crates; `rpcwire_core::trace::event`
macro_rules! __event {
    ($level:ident, $($arg:tt)+) => {
        $crate::__tracing::$level!(target: "rpcwire", $($arg)+)
    };
}

#[cfg(not(feature = "tracing"))]
#[macro_export]
#[doc(hidden)] // for rpcwire's own crates; `rpcwire_core::trace::event`
macro_rules! __event {
    ($level:ident, $($arg:tt)+) => {
        ()
    };
}

pub use crate::__event as event;

/// The span of one request from its start to its answer.
pub struct RequestSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
    #[cfg(feature = "tracing")]
    started: Instant,
}

impl RequestSpan {
    /// Opens the span of a request (`id` `None`: a notification).
    #[inline]
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub fn start(method: &str, id: Option<&Id<'_>>) -> RequestSpan {
        RequestSpan {
            #[cfg(feature = "tracing")]
            span: tracing::info_span!(
                target: "rpcwire",
                "rpc.request",
                method,
                id = %IdText(id),
                outcome = tracing::field::Empty,
                code = tracing::field::Empty,
                duration_us = tracing::field::Empty,
            ),
            #[cfg(feature = "tracing")]
            started: Instant::now(),
        }
    }

    /// Runs `future` inside the span (events of the handler belong to the request).
    #[cfg(feature = "tokio")]
    #[inline]
    pub fn instrument<F: std::future::Future>(
        &self,
        future: F,
    ) -> impl std::future::Future<Output = F::Output> {
        #[cfg(feature = "tracing")]
        {
            tracing::Instrument::instrument(future, self.span.clone())
        }
        #[cfg(not(feature = "tracing"))]
        {
            future
        }
    }

    /// Runs `f` inside the span.
    #[inline]
    pub fn in_scope<T>(&self, f: impl FnOnce() -> T) -> T {
        #[cfg(feature = "tracing")]
        {
            self.span.in_scope(f)
        }
        #[cfg(not(feature = "tracing"))]
        {
            f()
        }
    }

    /// Closes the span with the request's outcome: `None` for a result, the error code for
    /// an error; `cancelled` when it got no answer because the other side cancelled it.
    #[inline]
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub fn finish(self, error_code: Option<i64>, cancelled: bool) {
        #[cfg(feature = "tracing")]
        {
            let outcome = match (cancelled, error_code) {
                (true, _) => "cancelled",
                (false, None) => "ok",
                (false, Some(_)) => "error",
            };
            self.span.record("outcome", outcome);
            if let Some(code) = error_code {
                self.span.record("code", code);
            }
            let micros = u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.span.record("duration_us", micros);
        }
    }
}

#[cfg_attr(not(feature = "tokio"), allow(dead_code))] // used by the proxy and the MCP gateway
/// When something measured began, for a latency histogram of the `metrics` facade; without
/// the `metrics` feature it holds nothing and the clock is not read.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch {
    #[cfg(feature = "metrics")]
    started: std::time::Instant,
}

#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
impl Stopwatch {
    /// Starts timing (reads the clock only with the `metrics` feature).
    #[inline]
    pub fn start() -> Stopwatch {
        Stopwatch {
            #[cfg(feature = "metrics")]
            started: std::time::Instant::now(),
        }
    }

    /// Seconds since the start.
    #[cfg(feature = "metrics")]
    pub fn elapsed_secs(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

/// An id as its JSON text, `-` for none (a notification).
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub struct IdText<'a>(pub Option<&'a Id<'a>>);

impl std::fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(id) => id.json_parts().iter().try_for_each(|piece| f.write_str(piece)),
            None => f.write_str("-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_written_as_their_json_text() {
        assert_eq!(IdText(Some(&Id::from("a"))).to_string(), r#""a""#);
        assert_eq!(IdText(Some(&Id::from(7u64))).to_string(), "7");
        assert_eq!(IdText(None).to_string(), "-");
    }

    #[test]
    fn a_span_runs_what_it_scopes() {
        let span = RequestSpan::start("m", Some(&Id::from(1u64)));
        assert_eq!(span.in_scope(|| 41 + 1), 42);
        span.finish(Some(-32601), false);
    }
}
