//! The MCP section (`mcp` and `http` features): CPU per `tools/call` of `add` (the server
//! process's CPU time ÷ calls) and latency, over stdio and Streamable HTTP, at 1 and 64 calls
//! in flight, one load generator for all (`load`): rpcwire's `McpServer`, rmcp 3.11 (the
//! Rust SDK), the official TypeScript SDK, and a floor (the least any server must do: read
//! the request, copy its id into a fixed answer, write it), each a child process (`servers`,
//! `run`); and the memory each HTTP server holds per idle session.

#[cfg(all(feature = "mcp", feature = "http"))]
mod load;
#[cfg(all(feature = "mcp", feature = "http"))]
mod pipes;
#[cfg(all(feature = "mcp", feature = "http"))]
mod run;
#[cfg(all(feature = "mcp", feature = "http"))]
pub(crate) mod servers;

#[cfg(all(feature = "mcp", feature = "http"))]
pub(crate) use run::measure_mcp;

use serde::Serialize;

/// One server × transport × calls in flight.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct McpRun {
    /// `stdio` or `http`.
    pub(crate) transport: &'static str,
    /// `rpcwire`, `rmcp` or `typescript`.
    pub(crate) server: &'static str,
    pub(crate) in_flight: usize,
    pub(crate) calls_per_s: f64,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) server_cpu_us_per_call: f64,
    pub(crate) implementation: &'static str,
    pub(crate) calls: u64,
    pub(crate) seconds: f64,
    pub(crate) server_cpu_seconds: f64,
    /// The CPU per call of every round, lowest first (the figures above are the median
    /// round's).
    pub(crate) rounds: Vec<f64>,
}

/// What an HTTP server holds per idle session.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SessionMemory {
    pub(crate) server: &'static str,
    pub(crate) sessions: usize,
    pub(crate) rss_before_kib: u64,
    pub(crate) rss_after_kib: u64,
    pub(crate) kib_per_session: f64,
}

/// Without the features there is nothing to measure.
#[cfg(not(all(feature = "mcp", feature = "http")))]
pub(crate) fn measure_mcp(_config: &crate::config::Config) -> (Vec<McpRun>, Vec<SessionMemory>) {
    println!("mcp: skipped (run with --features http,mcp)");
    (Vec::new(), Vec::new())
}

/// The MCP issue's aims, per transport and calls in flight: rpcwire's CPU per call at most
/// half of rmcp's and a twentieth of the TypeScript SDK's; sequential calls answered with a
/// p50 under 1 ms.
pub(crate) fn mcp_targets(runs: &[McpRun]) -> Vec<crate::targets::Target> {
    let mut out = Vec::new();
    let cpu_of = |server: &str, transport: &str, in_flight: usize| {
        runs.iter()
            .find(|r| r.server == server && r.transport == transport && r.in_flight == in_flight)
            .map(|r| r.server_cpu_us_per_call)
    };
    for r in runs.iter().filter(|r| r.server == "rpcwire") {
        let place = format!("MCP {} at {} in flight", r.transport, r.in_flight);
        let floor = cpu_of("floor", r.transport, r.in_flight);
        for (peer, factor) in [("rmcp", 0.5), ("typescript", 0.05)] {
            if let Some(theirs) = cpu_of(peer, r.transport, r.in_flight) {
                // Where the aim asks for less than the floor (reading the request and writing a
                // fixed answer) costs, no server can meet it: said beside the figures.
                let below_floor = match floor {
                    Some(floor) if factor * theirs < floor => format!(
                        "; the aim, {:.2} µs, is below the floor's {floor:.2} µs",
                        factor * theirs
                    ),
                    Some(floor) => format!("; floor {floor:.2} µs"),
                    None => String::new(),
                };
                out.push(crate::targets::Target {
                    target: format!("{place}: CPU per call ≤ {factor}× {peer}'s"),
                    measured: format!(
                        "{:.2} µs vs {peer} {:.2} µs ({:.3}×){below_floor}",
                        r.server_cpu_us_per_call,
                        theirs,
                        r.server_cpu_us_per_call / theirs
                    ),
                    met: Some(r.server_cpu_us_per_call <= factor * theirs),
                });
            }
        }
        if r.in_flight == 1 {
            out.push(crate::targets::Target {
                target: format!("{place}: sequential calls answered with p50 < 1 ms"),
                measured: format!("p50 {:.1} µs", r.p50_us),
                met: Some(r.p50_us < 1000.0),
            });
        }
    }
    // The authorization issue's aim: a verified JWT (its keys cached) costs at most 10 µs of
    // CPU per call over the same server unprotected, at 64 in flight.
    for protected in runs
        .iter()
        .filter(|r| r.server == "rpcwire-jwt" && r.in_flight == 64)
    {
        let Some(open) = cpu_of("rpcwire", protected.transport, protected.in_flight) else {
            continue;
        };
        let extra = protected.server_cpu_us_per_call - open;
        out.push(crate::targets::Target {
            target: format!(
                "MCP {} at {} in flight, every call with a verified JWT: CPU per call ≤ unprotected + 10 µs",
                protected.transport, protected.in_flight
            ),
            measured: format!(
                "{:.2} µs vs {open:.2} µs unprotected ({extra:+.2} µs)",
                protected.server_cpu_us_per_call
            ),
            met: Some(extra <= 10.0),
        });
    }
    out
}

/// The MCP gateway issue's aims: rpcwire's gateway (a child per session, and one shared
/// child) spends at most 1/30 of the CPU per forwarded call of the better of supergateway and
/// mcp-proxy, answers with a p99 under 1 ms at 64 in flight (the child's time included), and
/// holds under 64 KiB per idle session; and (the MCP-core issue) at most 1.3× the floors of the
/// same run: a gateway can spend no less than an HTTP server and a stdio side that do nothing
/// but copy an id (`floor-http`, and `floor-stdio` for one shared child or `floor-pipes` for
/// a child per session).
pub(crate) fn gateway_targets(runs: &[McpRun], memory: &[SessionMemory]) -> Vec<crate::targets::Target> {
    let mut out = Vec::new();
    let floor = |transport: &str, in_flight: usize| {
        runs.iter()
            .find(|f| f.server == "floor" && f.transport == transport && f.in_flight == in_flight)
    };
    for r in runs.iter().filter(|r| r.server.starts_with("rpcwire-gateway")) {
        let place = match r.server {
            "rpcwire-gateway" => format!("MCP gateway at {} in flight", r.in_flight),
            _ => format!("MCP gateway, one shared child, at {} in flight", r.in_flight),
        };
        let better = runs
            .iter()
            .filter(|b| {
                b.transport == "gateway" && !b.server.starts_with("rpcwire") && b.in_flight == r.in_flight
            })
            .min_by(|a, b| a.server_cpu_us_per_call.total_cmp(&b.server_cpu_us_per_call));
        // The least such a gateway must spend: an HTTP server's (`floor-http`) and, on its stdio
        // side, one pipe for every session (`floor-stdio`) with one shared child, or a pipe pair
        // per session (`floor-pipes`) with a child per session.
        let stdio_floor = match r.server {
            "rpcwire-gateway" => runs
                .iter()
                .find(|f| f.server == "floor-pipes" && f.in_flight == r.in_flight),
            _ => floor("stdio", r.in_flight),
        };
        let floors = match (floor("http", r.in_flight), stdio_floor) {
            (Some(http), Some(stdio)) => {
                let sum = http.server_cpu_us_per_call + stdio.server_cpu_us_per_call;
                out.push(crate::targets::Target {
                    target: format!("{place}: CPU per forwarded call ≤ 1.3× the floors'"),
                    measured: format!(
                        "{:.2} µs vs {} {:.2} + {} {:.2} = {sum:.2} µs ({:.2}×)",
                        r.server_cpu_us_per_call,
                        "floor-http",
                        http.server_cpu_us_per_call,
                        if stdio.server == "floor" {
                            "floor-stdio"
                        } else {
                            "floor-pipes"
                        },
                        stdio.server_cpu_us_per_call,
                        r.server_cpu_us_per_call / sum.max(1e-9)
                    ),
                    met: Some(r.server_cpu_us_per_call <= 1.3 * sum),
                });
                format!("; floors of the same run: {sum:.2} µs")
            }
            _ => String::new(),
        };
        if let Some(better) = better {
            out.push(crate::targets::Target {
                target: format!("{place}: CPU per forwarded call ≤ 1/30 of the better bridge's"),
                measured: format!(
                    "{:.2} µs vs {} {:.2} µs (1/{:.1}; the aim {:.2} µs){floors}",
                    r.server_cpu_us_per_call,
                    better.server,
                    better.server_cpu_us_per_call,
                    better.server_cpu_us_per_call / r.server_cpu_us_per_call.max(1e-9),
                    better.server_cpu_us_per_call / 30.0
                ),
                met: Some(r.server_cpu_us_per_call * 30.0 <= better.server_cpu_us_per_call),
            });
        }
        if r.in_flight == 64 {
            out.push(crate::targets::Target {
                target: format!("{place}: p99 < 1 ms (the child's time included)"),
                measured: match floor("http", 64) {
                    Some(http) => format!(
                        "p99 {:.1} µs; the HTTP floor's at 64 in flight {:.1} µs",
                        r.p99_us, http.p99_us
                    ),
                    None => format!("p99 {:.1} µs", r.p99_us),
                },
                met: Some(r.p99_us < 1000.0),
            });
        }
    }
    if let Some(m) = memory.iter().find(|m| m.server == "rpcwire-gateway") {
        out.push(crate::targets::Target {
            target: "MCP gateway: idle session < 64 KiB (its child apart)".to_owned(),
            measured: format!("{:.1} KiB", m.kib_per_session),
            met: Some(m.kib_per_session < 64.0),
        });
    }
    out
}

/// The MCP table: one row per server × transport × calls in flight.
pub(crate) fn mcp_table(runs: &[McpRun], memory: &[SessionMemory]) -> String {
    let mut s = String::from(
        "| transport | server | in flight | calls/s | p50 µs | p99 µs | server CPU µs/call | what serves | CPU µs/call, each round |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for r in runs {
        let rounds: Vec<String> = r.rounds.iter().map(|v| format!("{v:.2}")).collect();
        s.push_str(&format!(
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.2} | {} | {} |\n",
            r.transport,
            r.server,
            r.in_flight,
            r.calls_per_s,
            r.p50_us,
            r.p99_us,
            r.server_cpu_us_per_call,
            r.implementation,
            rounds.join(", ")
        ));
    }
    if !memory.is_empty() {
        s.push_str("\n| server (Streamable HTTP) | idle sessions | RSS before KiB | RSS after KiB | KiB per idle session |\n| --- | ---: | ---: | ---: | ---: |\n");
        for m in memory {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {:.1} |\n",
                m.server, m.sessions, m.rss_before_kib, m.rss_after_kib, m.kib_per_session
            ));
        }
    }
    s
}
