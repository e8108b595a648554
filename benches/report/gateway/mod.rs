//! The gateway section (`http` feature): the same load generator as the transports section
//! sends W1 and the Ethereum corpus's requests over HTTP at 1 and 64 in flight (and BATCH, a
//! batch of 1,000 of the corpus's small calls, at 1: straight, rpcwire and the floor), straight to
//! an upstream (rpcwire's `HttpServer` replaying the corpus's answers), and through gateways
//! in front of it, each in a child process on one thread: rpcwire's (`proxy::Gateway`: params
//! and results passed on as bytes), the usual way (serde_json `Value` in, id set, serialized;
//! the answer parsed, the id put back, serialized), and the floor (a bare hyper forwarder
//! copying the bodies without reading them); on ETH also `chain`, rpcwire's gateway with a
//! `HeadTracker` and a `FinalityCache` (the corpus replayed as a chain final up to its head:
//! the share of requests answered from the cache, and the upstream's CPU it spares). With the
//! `redis` feature, two more, measured in
//! the same rounds on a `redis-server` the section starts (and stops) itself: `fleet`,
//! rpcwire's gateway behind `proxy::fleet::FleetLayer` (API key, rate limit shared in Redis,
//! cache lookup of a method no workload sends: every request forwarded), and `fleet-cached`,
//! the same with every method of the workloads cached (answers from Redis after the first).
//! Every request carries the API key (`X-Api-Key`; the other subjects ignore it). For each:
//! requests/s, latency added over going straight, and the gateway process's CPU per request;
//! for the fleet's, Redis's CPU, round trips (its reads) and commands per request too.

#[cfg(feature = "http")]
mod hedge;
#[cfg(feature = "redis")]
mod redis;
pub(crate) mod render;
#[cfg(feature = "http")]
mod run;
#[cfg(feature = "http")]
pub(crate) mod servers;
#[cfg(feature = "http")]
mod subscribe;

#[cfg(feature = "http")]
pub(crate) use run::measure_gateway;

use serde::Serialize;

/// One workload × implementation × requests in flight.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct GatewayRun {
    /// `W1`, `ETH` or `BATCH`.
    pub(crate) workload: &'static str,
    /// `straight`, `rpcwire`, `value`, `floor`, `fleet` or `fleet-cached`.
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
    /// The fleet subjects: the `redis-server` process's CPU per request, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) redis_cpu_us_per_req: Option<f64>,
    /// The fleet subjects: Redis's round trips per request (`total_reads_processed`: its reads
    /// of what clients sent; calls pipelined on the gateway's connection share one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) redis_round_trips_per_req: Option<f64>,
    /// The fleet subjects: scripts run per request (`EVALSHA` and `EVAL` calls, commandstats).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) redis_scripts_per_req: Option<f64>,
    /// The fleet subjects: Redis commands per request (`total_commands_processed`, which counts
    /// the commands a script runs inside Redis too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) redis_commands_per_req: Option<f64>,
    /// The fleet and chain subjects: the upstream process's CPU per request, µs (what the
    /// cache spares).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) upstream_cpu_us_per_req: Option<f64>,
    /// The chain subject: the share of requests answered from its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cache_hit_rate: Option<f64>,
}

/// Without the `http` feature there is nothing to measure.
#[cfg(not(feature = "http"))]
pub(crate) fn measure_gateway(_config: &crate::config::Config) -> Vec<GatewayRun> {
    println!("gateway: skipped (run with --features http)");
    Vec::new()
}

/// The gateway issue's aims, per workload and in-flight count: rpcwire's gateway within 15%
/// of the floor's CPU per request, and at least 3× less than the usual way on the corpus;
/// the fleet issue's: the fleet's gateway at most 1.25× rpcwire's CPU per request, and at
/// most one Redis round trip per request (each fleet subject).
pub(crate) fn gateway_targets(runs: &[GatewayRun]) -> Vec<crate::targets::Target> {
    let cpu = |implementation: &str, workload: &str, in_flight: usize| {
        runs.iter()
            .find(|r| {
                r.implementation == implementation && r.workload == workload && r.in_flight == in_flight
            })
            .map(|r| r.cpu_us_per_req)
    };
    let mut out = Vec::new();
    // BATCH's aim is its latency (below); the CPU aims are the single requests'.
    for r in runs
        .iter()
        .filter(|r| r.implementation == "rpcwire" && r.workload != "BATCH")
    {
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
    for r in runs
        .iter()
        .filter(|r| r.implementation == "rpcwire" && r.workload == "BATCH")
    {
        let straight = runs
            .iter()
            .find(|s| s.implementation == "straight" && s.workload == "BATCH" && s.in_flight == r.in_flight);
        if let Some(straight) = straight {
            out.push(crate::targets::Target {
                target: "gateway, a batch of 1,000: latency at most 1.2× going direct (p50)".to_owned(),
                measured: format!(
                    "{:.0} µs vs direct {:.0} µs ({:.2}×)",
                    r.p50_us,
                    straight.p50_us,
                    r.p50_us / straight.p50_us
                ),
                met: Some(r.p50_us <= straight.p50_us * 1.2),
            });
        }
    }
    for r in runs
        .iter()
        .filter(|r| r.workload == "HEDGE" && !["fast-only", "no-hedge"].contains(&r.implementation))
    {
        let fast = runs
            .iter()
            .find(|o| o.workload == "HEDGE" && o.implementation == "fast-only" && o.in_flight == r.in_flight);
        if let Some(fast) = fast {
            out.push(crate::targets::Target {
                target: format!(
                    "gateway, hedging ({}) at {} in flight, one of two upstreams 20% 200 ms late: p99 at \
                     most 1.2× the fast upstream's alone",
                    r.implementation, r.in_flight
                ),
                measured: format!(
                    "{:.0} µs vs {:.0} µs ({:.2}×)",
                    r.p99_us,
                    fast.p99_us,
                    r.p99_us / fast.p99_us
                ),
                met: Some(r.p99_us <= fast.p99_us * 1.2),
            });
        }
    }
    for r in runs.iter().filter(|r| r.implementation == "fleet") {
        let place = format!("gateway, {} at {} in flight", r.workload, r.in_flight);
        if let Some(rpcwire) = cpu("rpcwire", r.workload, r.in_flight) {
            out.push(crate::targets::Target {
                target: format!("{place}: fleet's CPU per request ≤ 1.25× rpcwire's"),
                measured: format!(
                    "{:.2} µs vs rpcwire {rpcwire:.2} µs ({:.2}×)",
                    r.cpu_us_per_req,
                    r.cpu_us_per_req / rpcwire
                ),
                met: Some(r.cpu_us_per_req <= rpcwire * 1.25),
            });
        }
    }
    for r in runs.iter().filter(|r| r.redis_round_trips_per_req.is_some()) {
        let place = format!("gateway, {} at {} in flight", r.workload, r.in_flight);
        let trips = r.redis_round_trips_per_req.unwrap_or_default();
        let scripts = r.redis_scripts_per_req.unwrap_or_default();
        out.push(crate::targets::Target {
            target: format!(
                "{place}: {}: at most one Redis round trip per request",
                r.implementation
            ),
            measured: format!(
                "{trips:.3} round trips (Redis's reads), {scripts:.3} scripts, {:.2} commands (with \
                 those the script runs inside Redis) per request",
                r.redis_commands_per_req.unwrap_or_default()
            ),
            // Both: the reads say no request waits on two (in flight together, calls share a
            // read), the scripts that each makes one call. The fleet's heartbeats (a script a
            // second per gateway) ride on top.
            met: Some(trips <= 1.01 && scripts <= 1.01),
        });
    }
    out
}
