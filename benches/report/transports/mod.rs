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
pub(crate) mod server;

use serde::Serialize;

use crate::config::Config;
#[cfg(feature = "http")]
use crate::render_json::round;
#[cfg(feature = "http")]
use child::ServerProcess;
#[cfg(feature = "http")]
use load::Protocol;
#[cfg(feature = "http")]
use server::{FLOOR_FASTWEBSOCKETS, FLOOR_HYPER, FLOOR_TUNGSTENITE, JSONRPSEE, RPCWIRE};
#[cfg(feature = "http")]
use std::time::Duration;

/// The request every server answers (for the report's text).
pub(crate) const REQUEST_TEXT: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;

/// How the servers' CPU time is read (for the report).
pub(crate) const CPU_METHOD: &str = "the sum over the server process's threads of the first field of \
    /proc/PID/task/TID/schedstat (nanoseconds on a CPU, user + system), falling back to utime + stime \
    of /proc/PID/stat (clock ticks)";

/// The connection counts measured.
#[cfg(feature = "http")]
const CONNECTIONS: [usize; 2] = [1, 64];

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
pub(crate) fn measure_transports(_config: &Config) -> Vec<TransportRun> {
    println!("transports: skipped (run with --features http)");
    Vec::new()
}

/// A server kind and what it is, per transport.
#[cfg(feature = "http")]
struct Subject {
    kind: &'static str,
    server: &'static str,
    http: Option<&'static str>,
    ws: Option<&'static str>,
}

#[cfg(feature = "http")]
const SUBJECTS: [Subject; 5] = [
    Subject {
        kind: RPCWIRE,
        server: "rpcwire",
        http: Some("rpcwire HttpServer (hyper 1, HTTP/1.1 + HTTP/2 auto)"),
        ws: Some("rpcwire HttpServer, Peer over tokio-tungstenite 0.30"),
    },
    Subject {
        kind: JSONRPSEE,
        server: "jsonrpsee",
        http: Some("jsonrpsee 0.26 Server (defaults)"),
        ws: Some("jsonrpsee 0.26 Server (defaults, soketto)"),
    },
    Subject {
        kind: FLOOR_HYPER,
        server: "floor",
        http: Some("hyper 1 http1, body read, fixed answer"),
        ws: None,
    },
    Subject {
        kind: FLOOR_TUNGSTENITE,
        server: "floor",
        http: None,
        ws: Some("tokio-tungstenite 0.30 after a hyper upgrade, fixed text"),
    },
    Subject {
        kind: FLOOR_FASTWEBSOCKETS,
        server: "floor",
        http: None,
        ws: Some("fastwebsockets 0.10 after a hyper upgrade, fixed text"),
    },
];

/// Runs every server × transport × connection count; prints each as it ends.
#[cfg(feature = "http")]
pub(crate) fn measure_transports(config: &Config) -> Vec<TransportRun> {
    let (warmup, duration) = if config.quick {
        (Duration::from_millis(200), Duration::from_millis(800))
    } else {
        (Duration::from_millis(500), Duration::from_millis(3000))
    };
    // For a look at some servers only: `TRANSPORT_SERVERS=rpcwire,floor-hyper`.
    let chosen = std::env::var("TRANSPORT_SERVERS").ok();
    let mut runs = Vec::new();
    for subject in &SUBJECTS {
        if chosen
            .as_deref()
            .is_some_and(|list| !list.split(',').any(|kind| kind == subject.kind))
        {
            continue;
        }
        let process = ServerProcess::start(subject.kind);
        for (transport, protocol, implementation) in [
            ("http", Protocol::Http, subject.http),
            ("ws", Protocol::WebSocket, subject.ws),
        ] {
            let Some(implementation) = implementation else {
                continue;
            };
            // And some transports only: `TRANSPORT_PROTOCOLS=ws`.
            if std::env::var("TRANSPORT_PROTOCOLS")
                .is_ok_and(|list| !list.split(',').any(|name| name == transport))
            {
                continue;
            }
            for connections in CONNECTIONS {
                let mut marks = Vec::with_capacity(2);
                let load = load::run(protocol, process.address, connections, warmup, duration, || {
                    marks.push(process.cpu())
                });
                let cpu = marks[1].saturating_sub(marks[0]).as_secs_f64();
                let requests = load.requests.max(1);
                let us = |q: f64| round(load.histogram.value_at_quantile(q) as f64 / 1e3, 1);
                let run = TransportRun {
                    transport,
                    server: subject.server,
                    connections,
                    req_per_s: round(load.requests as f64 / load.seconds, 0),
                    p50_us: us(0.5),
                    p99_us: us(0.99),
                    p999_us: us(0.999),
                    server_cpu_us_per_req: round(cpu * 1e6 / requests as f64, 2),
                    implementation,
                    requests: load.requests,
                    seconds: round(load.seconds, 3),
                    server_cpu_seconds: round(cpu, 3),
                };
                println!(
                    "transports: {:<4} {:<9} {:>2} conn: {:>7.0} req/s, p50 {:>6.1} p99 {:>6.1} p99.9 {:>6.1} µs, \
                     server CPU {:>5.2} µs/req  ({})",
                    run.transport,
                    run.server,
                    run.connections,
                    run.req_per_s,
                    run.p50_us,
                    run.p99_us,
                    run.p999_us,
                    run.server_cpu_us_per_req,
                    run.implementation
                );
                runs.push(run);
            }
        }
    }
    runs
}
