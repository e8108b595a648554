//! The gateway section (`http` feature): the same load generator as the transports section
//! sends W1 and the Ethereum corpus's requests over HTTP at 1 and 64 in flight, straight to
//! an upstream (rpcwire's `HttpServer` replaying the corpus's answers), and through three
//! gateways in front of it, each in a child process on one thread: rpcwire's
//! (`proxy::Gateway`: params and results passed on as bytes), the usual way (serde_json `Value` in, id set, serialized; the answer parsed, the
//! id put back, serialized), and the floor (a bare hyper forwarder copying the bodies without
//! reading them). For each: requests/s, latency added over going straight, and the gateway
//! process's CPU per request.

#[cfg(feature = "http")]
mod run;
#[cfg(feature = "http")]
pub(crate) mod servers;

#[cfg(feature = "http")]
pub(crate) use run::measure_gateway;

use serde::Serialize;

/// One workload × implementation × requests in flight.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct GatewayRun {
    /// `W1` or `ETH`.
    pub(crate) workload: &'static str,
    /// `straight`, `rpcwire`, `value` or `floor`.
    pub(crate) implementation: &'static str,
    pub(crate) in_flight: usize,
    pub(crate) req_per_s: f64,
    /// p50 latency minus going straight's, µs (0 for straight itself).
    pub(crate) added_p50_us: f64,
    pub(crate) added_p99_us: f64,
    /// The gateway process's CPU per request, µs (the upstream's for straight).
    pub(crate) cpu_us_per_req: f64,
    // Extra fields beyond the shape.
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) requests: u64,
    /// What forwards.
    pub(crate) what: &'static str,
    /// Every round's CPU per request, sorted (the run kept is the median round).
    pub(crate) rounds: Vec<f64>,
}

/// Without the `http` feature there is nothing to measure.
#[cfg(not(feature = "http"))]
pub(crate) fn measure_gateway(_config: &crate::config::Config) -> Vec<GatewayRun> {
    println!("gateway: skipped (run with --features http)");
    Vec::new()
}

/// The gateway issue's aims, per workload and in-flight count: rpcwire's gateway within 15%
/// of the floor's CPU per request, and at least 3× less than the usual way on the corpus.
pub(crate) fn gateway_targets(runs: &[GatewayRun]) -> Vec<crate::targets::Target> {
    let cpu = |implementation: &str, workload: &str, in_flight: usize| {
        runs.iter()
            .find(|r| {
                r.implementation == implementation && r.workload == workload && r.in_flight == in_flight
            })
            .map(|r| r.cpu_us_per_req)
    };
    let mut out = Vec::new();
    for r in runs.iter().filter(|r| r.implementation == "rpcwire") {
        let place = format!("gateway, {} at {} in flight", r.workload, r.in_flight);
        if let Some(floor) = cpu("floor", r.workload, r.in_flight) {
            out.push(crate::targets::Target {
                target: format!("{place}: rpcwire's CPU per request within 15% of the floor's"),
                measured: format!(
                    "{:.2} µs vs floor {floor:.2} µs (+{:.0}%)",
                    r.cpu_us_per_req,
                    (r.cpu_us_per_req / floor - 1.0) * 100.0
                ),
                met: Some(r.cpu_us_per_req <= floor * 1.15),
            });
        }
        if r.workload == "ETH" {
            if let Some(value) = cpu("value", r.workload, r.in_flight) {
                out.push(crate::targets::Target {
                    target: format!("{place}: rpcwire's CPU per request ≥ 3× less than the usual way"),
                    measured: format!(
                        "{:.2} µs vs serde_json Value {value:.2} µs ({:.2}×)",
                        r.cpu_us_per_req,
                        value / r.cpu_us_per_req
                    ),
                    met: Some(value >= 3.0 * r.cpu_us_per_req),
                });
            }
        }
    }
    out
}
