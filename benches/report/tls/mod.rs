//! The TLS section (`http` feature), certificates made at the start (rcgen, a fresh authority;
//! nothing kept):
//!
//! - server side: rpcwire's `HttpServer` serving TLS beside its floor (bare hyper +
//!   tokio-rustls, the same certificate) at 1 and 64 connections, the load generator speaking
//!   HTTP/1.1 over TLS on connections kept open (their handshakes before the window);
//! - gateway side: W1 over plain HTTP to a gateway whose upstream is rpcwire's TLS server,
//!   at 1 and 64 in flight: rpcwire's gateway over HTTP/1.1 and over HTTP/2, its floors (hyper's
//!   pooled client with hyper-rustls, HTTP/1.1 and HTTP/2 only), and rpcwire's gateway to the
//!   same upstream over plain HTTP beside them. For each, the gateway process's CPU per
//!   request, the TCP connections opened during the window per 10,000 requests (each one a TLS
//!   handshake; 0 when connections are reused) and the connections held to the upstream at
//!   its end.

// The tests' certificate authority (rcgen), made anew for the run.
#[cfg(feature = "http")]
#[path = "../../../tests/support/certs.rs"]
mod certs;
#[cfg(feature = "http")]
mod run;
#[cfg(feature = "http")]
pub(crate) mod servers;

#[cfg(feature = "http")]
pub(crate) use run::measure_tls;

use serde::Serialize;

/// One side × subject × connections (or requests in flight).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct TlsRun {
    /// `server` or `gateway`.
    pub(crate) side: &'static str,
    /// `rpcwire`, `floor` (server side); `rpcwire-http`, `rpcwire-h1`, `rpcwire-h2`,
    /// `floor-h1`, `floor-h2` (gateway side).
    pub(crate) subject: &'static str,
    pub(crate) in_flight: usize,
    pub(crate) req_per_s: f64,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    /// The measured process's CPU per request, µs (the server's, or the gateway's).
    pub(crate) cpu_us_per_req: f64,
    /// TCP connections opened on the machine during the window, per 10,000 requests.
    pub(crate) opened_per_10k: f64,
    /// Gateway side: connections from the gateway to the upstream at the end of the window.
    pub(crate) upstream_connections: Option<usize>,
    pub(crate) requests: u64,
    /// What it is.
    pub(crate) what: &'static str,
    /// Every round's CPU per request, sorted (the figures above are the median round's).
    pub(crate) rounds: Vec<f64>,
}

/// Without the `http` feature there is nothing to measure.
#[cfg(not(feature = "http"))]
pub(crate) fn measure_tls(_config: &crate::config::Config) -> Vec<TlsRun> {
    println!("tls: skipped (run with --features http)");
    Vec::new()
}

/// The TLS issue's aims: rpcwire's TLS server within 10% of its floor at 64 connections;
/// rpcwire's gateway to an https upstream within 15% of the floor at 64 in flight (HTTP/1.1
/// and HTTP/2 each); HTTP/2 to the upstream with fewer connections and less CPU per request
/// than HTTP/1.1 at 64; at most one handshake per connection (none during the window).
pub(crate) fn tls_targets(runs: &[TlsRun]) -> Vec<crate::targets::Target> {
    let find = |side: &str, subject: &str, in_flight: usize| {
        runs.iter()
            .find(|r| r.side == side && r.subject == subject && r.in_flight == in_flight)
    };
    let mut out = Vec::new();
    let within = |what: String, ours: &TlsRun, floor: &TlsRun, bound: f64| crate::targets::Target {
        target: what,
        measured: format!(
            "{:.2} µs vs floor {:.2} µs ({:+.0}%)",
            ours.cpu_us_per_req,
            floor.cpu_us_per_req,
            (ours.cpu_us_per_req / floor.cpu_us_per_req - 1.0) * 100.0
        ),
        met: Some(ours.cpu_us_per_req <= floor.cpu_us_per_req * bound),
    };
    if let (Some(ours), Some(floor)) = (find("server", "rpcwire", 64), find("server", "floor", 64)) {
        out.push(within(
            "TLS: rpcwire's HTTPS server CPU per request within 10% of hyper + tokio-rustls at 64 connections"
                .to_owned(),
            ours,
            floor,
            1.10,
        ));
    }
    for version in ["h1", "h2"] {
        let (ours, floor) = (format!("rpcwire-{version}"), format!("floor-{version}"));
        if let (Some(ours), Some(floor)) = (find("gateway", &ours, 64), find("gateway", &floor, 64)) {
            out.push(within(
                format!(
                    "TLS: the gateway to an https upstream ({}) within 15% of hyper + hyper-rustls at 64 in flight",
                    if version == "h1" { "HTTP/1.1" } else { "HTTP/2" }
                ),
                ours,
                floor,
                1.15,
            ));
        }
    }
    if let (Some(h1), Some(h2)) = (
        find("gateway", "rpcwire-h1", 64),
        find("gateway", "rpcwire-h2", 64),
    ) {
        let (c1, c2) = (
            h1.upstream_connections.unwrap_or(0),
            h2.upstream_connections.unwrap_or(0),
        );
        out.push(crate::targets::Target {
            target: "TLS: HTTP/2 to the upstream at 64 in flight: fewer connections and less CPU per request than HTTP/1.1"
                .to_owned(),
            measured: format!(
                "{c2} connection(s), {:.2} µs vs {c1}, {:.2} µs",
                h2.cpu_us_per_req, h1.cpu_us_per_req
            ),
            met: Some(c2 < c1 && h2.cpu_us_per_req < h1.cpu_us_per_req),
        });
    }
    let opened: f64 = runs.iter().map(|r| r.opened_per_10k).fold(0.0, f64::max);
    if !runs.is_empty() {
        out.push(crate::targets::Target {
            target:
                "TLS: connections reused (at most one handshake per connection; none opened while measuring)"
                    .to_owned(),
            measured: format!("at most {opened:.2} connections opened per 10,000 requests"),
            met: Some(opened < 1.0),
        });
    }
    out
}
