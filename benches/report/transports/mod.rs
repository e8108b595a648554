//! The transports section (`http` feature): HTTP and WebSocket at 1 and 64 connections,
//! driven by one load generator (`load`) in this process, against servers each in a child
//! process of its own (`server`, `child`) on one thread: rpcwire's `HttpServer`, jsonrpsee's
//! server with the same `subtract` handler, and the floors (a bare hyper server answering a
//! fixed body; bare WebSocket servers answering a fixed text, on tokio-tungstenite — the
//! crate rpcwire uses — and on fastwebsockets). For each: requests/s, latency percentiles,
//! and the server process's CPU time per request.

#[cfg(feature = "http")]
mod child;
#[cfg(feature = "http")]
mod load;
#[cfg(feature = "http")]
mod run;
#[cfg(feature = "http")]
pub(crate) mod server;

#[cfg(feature = "http")]
pub(crate) use run::measure_transports;

use serde::Serialize;

/// The request every server answers.
pub(crate) const REQUEST: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;

/// How the servers' CPU time is read (for the report).
pub(crate) const CPU_METHOD: &str = "the sum over the server process's threads of the first field of \
    /proc/PID/task/TID/schedstat (nanoseconds on a CPU, user + system), falling back to utime + stime \
    of /proc/PID/stat (clock ticks)";

/// One server × transport × connection count.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct TransportRun {
    /// `http` or `ws`.
    pub(crate) transport: &'static str,
    /// `rpcwire`, `jsonrpsee` or `floor`.
    pub(crate) server: &'static str,
    pub(crate) connections: usize,
    pub(crate) req_per_s: f64,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) p999_us: f64,
    pub(crate) server_cpu_us_per_req: f64,
    // Extra fields beyond the issue's shape.
    /// What serves: the crate and how.
    pub(crate) implementation: &'static str,
    pub(crate) requests: u64,
    pub(crate) seconds: f64,
    pub(crate) server_cpu_seconds: f64,
}

/// Without the `http` feature there is nothing to measure.
#[cfg(not(feature = "http"))]
pub(crate) fn measure_transports(_config: &crate::config::Config) -> Vec<TransportRun> {
    println!("transports: skipped (run with --features http)");
    Vec::new()
}
