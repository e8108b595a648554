//! The transports section (`http` feature): HTTP and WebSocket at 1 and 64 connections,
//! driven by one load generator (`load`) in this process, against servers each in a child
//! process of its own (`server`, `child`) on one thread: rpcwire's `HttpServer`, jsonrpsee's
//! server with the same `subtract` handler, and the floors (a bare hyper server answering a
//! fixed body; bare WebSocket servers answering a fixed text, on fastwebsockets — the
//! crate rpcwire uses — and on tokio-tungstenite). For each: requests/s, latency percentiles,
//! and the server process's CPU time per request.

#[cfg(feature = "http")]
pub(crate) mod child;
#[cfg(feature = "http")]
pub(crate) mod load;
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
    /// The CPU per request of every round, lowest first (the figures above are the median
    /// round's).
    pub(crate) rounds: Vec<f64>,
}

/// Without the `http` feature there is nothing to measure.
#[cfg(not(feature = "http"))]
pub(crate) fn measure_transports(_config: &crate::config::Config) -> Vec<TransportRun> {
    println!("transports: skipped (run with --features http)");
    Vec::new()
}

/// The transports issue's comparisons, per transport and connection count: rpcwire's server
/// costs less CPU per request than jsonrpsee's, and stays within 10% of the floor (the lower
/// floor, for WebSocket).
pub(crate) fn transport_targets(runs: &[TransportRun]) -> Vec<crate::targets::Target> {
    let mut out = Vec::new();
    let cpu_of = |server: &str, transport: &str, connections: usize| {
        runs.iter()
            .filter(|r| r.server == server && r.transport == transport && r.connections == connections)
            .map(|r| r.server_cpu_us_per_req)
            .min_by(f64::total_cmp)
    };
    for r in runs.iter().filter(|r| r.server == "rpcwire") {
        let place = format!(
            "{} at {} connection{}",
            r.transport,
            r.connections,
            if r.connections == 1 { "" } else { "s" }
        );
        if let Some(jsonrpsee) = cpu_of("jsonrpsee", r.transport, r.connections) {
            out.push(crate::targets::Target {
                target: format!("transports, {place}: rpcwire's server CPU per request below jsonrpsee's"),
                measured: format!("{:.2} µs vs jsonrpsee {jsonrpsee:.2} µs", r.server_cpu_us_per_req),
                met: Some(r.server_cpu_us_per_req < jsonrpsee),
            });
        }
        if let Some(floor) = cpu_of("floor", r.transport, r.connections) {
            out.push(crate::targets::Target {
                target: format!(
                    "transports, {place}: rpcwire's server CPU per request within 10% of the floor"
                ),
                measured: format!(
                    "{:.2} µs vs floor {floor:.2} µs (+{:.0}%)",
                    r.server_cpu_us_per_req,
                    (r.server_cpu_us_per_req / floor - 1.0) * 100.0
                ),
                met: Some(r.server_cpu_us_per_req <= floor * 1.1),
            });
        }
    }
    out
}
