//! Runs every server × transport × connection count (`http` feature).

use std::time::Duration;

use super::child::ServerProcess;
use super::load::{self, Protocol};
use super::server::{FLOOR_FASTWEBSOCKETS, FLOOR_HYPER, FLOOR_TUNGSTENITE, JSONRPSEE, RPCWIRE};
use super::TransportRun;
use crate::config::Config;
use crate::render_json::round;

/// The connection counts measured.
const CONNECTIONS: [usize; 2] = [1, 64];

/// A server kind and what it is, per transport.
struct Subject {
    kind: &'static str,
    server: &'static str,
    http: Option<&'static str>,
    ws: Option<&'static str>,
}

const SUBJECTS: [Subject; 5] = [
    Subject {
        kind: RPCWIRE,
        server: "rpcwire",
        http: Some("rpcwire HttpServer (hyper 1, HTTP/1.1 + HTTP/2 auto)"),
        ws: Some("rpcwire HttpServer, Peer over fastwebsockets 0.10"),
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
        ws: Some("tokio-tungstenite 0.30 after a hyper upgrade, 8 KiB reads, fixed text"),
    },
    Subject {
        kind: FLOOR_FASTWEBSOCKETS,
        server: "floor",
        http: None,
        ws: Some("fastwebsockets 0.10 after a hyper upgrade, fixed text"),
    },
];

/// How many times each server × transport × connection count is measured, the rounds
/// interleaved (every configuration once, then again), in a full run: the report keeps the
/// round with the median CPU per request, so that a slow second of a shared machine does
/// not decide a comparison.
const ROUNDS: usize = 3;

/// Runs every server × transport × connection count, `ROUNDS` times interleaved; prints each
/// measurement as it ends and returns, per configuration, its median round.
pub(crate) fn measure_transports(config: &Config) -> Vec<TransportRun> {
    let (warmup, duration, rounds) = if config.quick {
        (Duration::from_millis(200), Duration::from_millis(800), 1)
    } else {
        (Duration::from_millis(500), Duration::from_millis(2000), ROUNDS)
    };
    // For a look at some servers only: `TRANSPORT_SERVERS=rpcwire,floor-hyper`.
    let chosen = std::env::var("TRANSPORT_SERVERS").ok();
    // And some transports only: `TRANSPORT_PROTOCOLS=ws`.
    let protocols = std::env::var("TRANSPORT_PROTOCOLS").ok();
    // And one connection count only: `TRANSPORT_CONNECTIONS=64`.
    let connection_counts: Vec<usize> = match std::env::var("TRANSPORT_CONNECTIONS") {
        Ok(list) => list.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
        Err(_) => CONNECTIONS.to_vec(),
    };
    let mut plan = Vec::new();
    for subject in &SUBJECTS {
        if chosen
            .as_deref()
            .is_some_and(|list| !list.split(',').any(|kind| kind == subject.kind))
        {
            continue;
        }
        let process = std::rc::Rc::new(ServerProcess::start(subject.kind));
        for (transport, protocol, implementation) in [
            ("http", Protocol::Http, subject.http),
            ("ws", Protocol::WebSocket, subject.ws),
        ] {
            let Some(implementation) = implementation else {
                continue;
            };
            if protocols
                .as_deref()
                .is_some_and(|list| !list.split(',').any(|name| name == transport))
            {
                continue;
            }
            for &connections in &connection_counts {
                plan.push((
                    subject,
                    process.clone(),
                    transport,
                    protocol,
                    implementation,
                    connections,
                ));
            }
        }
    }
    let mut samples: Vec<Vec<TransportRun>> = vec![Vec::with_capacity(rounds); plan.len()];
    for round_number in 1..=rounds {
        for ((subject, process, transport, protocol, implementation, connections), samples) in
            plan.iter().zip(&mut samples)
        {
            let mut marks = Vec::with_capacity(2);
            let exchanges = std::sync::Arc::new(vec![load::Exchange::new(
                *protocol,
                super::REQUEST.as_bytes(),
                br#""result":19"#,
            )]);
            let load = load::run(
                *protocol,
                process.address,
                *connections,
                &exchanges,
                warmup,
                duration,
                || marks.push(process.cpu()),
            );
            let cpu = marks[1].saturating_sub(marks[0]).as_secs_f64();
            let requests = load.requests.max(1);
            let us = |q: f64| round(load.histogram.value_at_quantile(q) as f64 / 1e3, 1);
            let run = TransportRun {
                transport,
                server: subject.server,
                connections: *connections,
                req_per_s: round(load.requests as f64 / load.seconds, 0),
                p50_us: us(0.5),
                p99_us: us(0.99),
                p999_us: us(0.999),
                server_cpu_us_per_req: round(cpu * 1e6 / requests as f64, 2),
                implementation,
                requests: load.requests,
                seconds: round(load.seconds, 3),
                server_cpu_seconds: round(cpu, 3),
                rounds: Vec::new(),
            };
            println!(
                "transports: round {round_number}/{rounds} {:<4} {:<9} {:>2} conn: {:>7.0} req/s, p50 {:>6.1} p99 {:>6.1} \
                 p99.9 {:>6.1} µs, server CPU {:>5.2} µs/req  ({})",
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
            samples.push(run);
        }
    }
    samples.into_iter().map(median_round).collect()
}

/// The round with the median CPU per request, with every round's figure beside it.
fn median_round(mut samples: Vec<TransportRun>) -> TransportRun {
    samples.sort_by(|a, b| a.server_cpu_us_per_req.total_cmp(&b.server_cpu_us_per_req));
    let all: Vec<f64> = samples.iter().map(|run| run.server_cpu_us_per_req).collect();
    let mut median = samples.swap_remove(samples.len() / 2);
    median.rounds = all;
    median
}
